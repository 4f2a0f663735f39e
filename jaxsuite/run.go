package jaxsuite

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/metalplug/metalplug/plugin/pjrt/python"
	"github.com/metalplug/metalplug/plugin/version"
	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/setup/install"
	"github.com/metalplug/metalplug/setup/probe"
	"github.com/metalplug/metalplug/setup/venv"
)

// Options are what a run of the suite needs.
type Options struct {
	// Root is the source tree (holding go.mod and docs/).
	Root string
	// Checkout is a jax checkout at the installed release's tag; its
	// tests/ directory is the suite.
	Checkout string
	// Modules are the modules to run (api_test, tests/api_test.py, ...);
	// empty means every module without results for this jax release yet,
	// so that an interrupted run resumes.
	Modules []string
	// Workers is the number of pytest-xdist workers (the cores when 0).
	Workers int
	// TestTimeout bounds one test (pytest-timeout); ModuleTimeout one
	// module's pytest run as a whole.
	TestTimeout, ModuleTimeout time.Duration
	Log                        func(format string, args ...any)
}

// Requirements are what jax's tests need beside jax and jaxlib: the
// checkout's build/test-requirements.txt, without the packaging tools
// (auditwheel, scipy-stubs), and pytest-timeout so that one hung test
// cannot stop a module.
var Requirements = []string{"absl-py", "cloudpickle", "filelock", "flatbuffers", "hypothesis", "matplotlib",
	"mpmath", "pillow", "portpicker", "pytest", "pytest-timeout", "pytest-xdist", "rich"}

// minPython is the oldest Python jax 0.11 and later have wheels for.
const minPython = 12

// Platform names the two runs of a module.
const (
	OnDevice = "metalplug"
	OnCPU    = "cpu"
)

// Env is what a run on platform adds to the environment of the suite.
// On the device, JAX_PLATFORMS names it first, so it is jax's default
// backend and every test runs on it, and jax's CPU second, present beside
// it as on any GPU machine: jax.debug.callback, colocated Python and
// cross-platform device_put need a local CPU device by design. Off macOS
// the host reference driver must be asked for.
func Env(platform string) []string {
	if platform != OnDevice {
		return []string{"JAX_PLATFORMS=" + platform}
	}
	env := []string{"JAX_PLATFORMS=" + OnDevice + "," + OnCPU}
	if runtime.GOOS != "darwin" {
		env = append(env, "METALPLUG_HOST_DEVICE=1")
	}
	return env
}

// CheckoutVersion reads the jax release of a checkout (jax/version.py) and
// jax's default number of generated cases (jax/_src/test_util.py).
func CheckoutVersion(checkout string) (ver string, generated int, err error) {
	b, err := os.ReadFile(filepath.Join(checkout, "jax", "version.py"))
	if err != nil {
		return "", 0, fmt.Errorf("%s is not a jax checkout: %w", checkout, err)
	}
	m := regexp.MustCompile(`(?m)^_version\s*=\s*"([^"]+)"`).FindSubmatch(b)
	if m == nil {
		return "", 0, fmt.Errorf("%s: jax/version.py has no _version", checkout)
	}
	ver = string(m[1])
	b, err = os.ReadFile(filepath.Join(checkout, "jax", "_src", "test_util.py"))
	if err != nil {
		return "", 0, err
	}
	g := regexp.MustCompile(`JAX_NUM_GENERATED_CASES',\s*'(\d+)'`).FindSubmatch(b)
	if g == nil {
		return "", 0, fmt.Errorf("%s: jax/_src/test_util.py has no default for JAX_NUM_GENERATED_CASES", checkout)
	}
	generated, _ = strconv.Atoi(string(g[1]))
	// A git checkout must be at the release's tag: tests of another
	// commit test another jax.
	if out, err := exec.Command("git", "-C", checkout, "describe", "--tags", "--exact-match").Output(); err == nil {
		if tag := strings.TrimSpace(string(out)); tag != "jax-v"+ver {
			return "", 0, fmt.Errorf("%s is at %s, not at jax-v%s", checkout, tag, ver)
		}
	} else if _, serr := os.Stat(filepath.Join(checkout, ".git")); serr == nil {
		return "", 0, fmt.Errorf("%s is not at a release tag (git describe --exact-match: %v)", checkout, err)
	}
	return ver, generated, nil
}

// ModuleNames lists the checkout's test modules: tests/*_test.py.
func ModuleNames(checkout string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(checkout, "tests", "*_test.py"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s has no tests/*_test.py", checkout)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".py"))
	}
	sort.Strings(names)
	return names, nil
}

// moduleName accepts api_test, api_test.py and tests/api_test.py.
func moduleName(s string) string {
	return strings.TrimSuffix(filepath.Base(strings.TrimSpace(s)), ".py")
}

// Prepare makes the suite's venv (jax and jaxlib of the checkout's release
// and the test requirements), builds the JAX-only library pinned to that
// jaxlib's minor, installs it as `go tool mage install` does, and checks
// that jax lists the device. It returns the venv's probe.
func Prepare(o Options, ver string) (*probe.Report, error) {
	base, err := venv.FindPython(minPython)
	if err != nil {
		return nil, err
	}
	reqs := append([]string{"jax==" + ver, "jaxlib==" + ver}, Requirements...)
	dir, err := venv.Ensure("jaxsuite-"+ver, base, reqs, o.Log)
	if err != nil {
		return nil, err
	}
	rep, err := probe.Run(venv.Python(dir))
	if err != nil {
		return nil, err
	}
	if !rep.HasJax() || rep.Jax.Version != ver {
		return nil, fmt.Errorf("%s: jax %s is not what the venv has (%v)", venv.Python(dir), ver, rep.Jax)
	}
	if rep.HasTensorFlow() {
		return nil, fmt.Errorf("%s has TensorFlow: the suite's venv must have jax only", venv.Python(dir))
	}
	lib, err := filepath.Abs(filepath.Join(o.Root, "build", "jaxsuite", "jax-"+ver, build.LibraryName(rep.GOOS)))
	if err != nil {
		return nil, err
	}
	if _, err := build.Build(build.Options{Report: rep, Root: o.Root, Out: lib, Log: o.Log, JaxPin: version.Minor(rep.Jax.JaxlibVersion)}); err != nil {
		return nil, err
	}
	if _, err := install.Install(lib, rep); err != nil {
		return nil, err
	}
	cmd := exec.Command(venv.Python(dir), "-c", `import jax; d = jax.devices("metalplug"); print(d, d[0].device_kind)`)
	cmd.Env = append(python.CleanEnv(os.Environ()), Env(OnDevice)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("jax lists no metalplug device after the install: %v: %s", err, firstLine(lastLines(string(out), 3), 600))
	}
	o.Log("%s", strings.TrimSpace(lastLines(string(out), 1)))
	return rep, nil
}

// Measure runs the modules of o on the device and on CPU and merges what they
// measured into docs/jax_suite.json, then renders docs/jax_suite.md. Each
// module is saved as soon as it is done.
func Measure(o Options) error {
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	if o.Workers == 0 {
		o.Workers = runtime.NumCPU()
	}
	if o.TestTimeout == 0 {
		o.TestTimeout = 10 * time.Minute
	}
	if o.ModuleTimeout == 0 {
		o.ModuleTimeout = 30 * time.Minute
	}
	ver, generated, err := CheckoutVersion(o.Checkout)
	if err != nil {
		return err
	}
	names, err := ModuleNames(o.Checkout)
	if err != nil {
		return err
	}
	jsonPath := filepath.Join(o.Root, JSONPath)
	rep, err := Load(jsonPath)
	if err != nil {
		return err
	}
	rep.SetModules(names)
	todo, err := pick(rep, names, o.Modules, ver)
	if err != nil {
		return err
	}
	if len(todo) == 0 {
		o.Log("every module has results for jax %s; name modules to run them again", ver)
		return rep.write(o.Root)
	}
	commit := treeCommit(o.Root) // before the build, which builds this tree
	pr, err := Prepare(o, ver)
	if err != nil {
		return err
	}
	if rep.Jax != "" && rep.Jax != ver {
		o.Log("docs/jax_suite.json was of jax %s; its modules will say which release each ran with", rep.Jax)
	}
	rep.Jax, rep.Jaxlib, rep.Python = ver, pr.Jax.JaxlibVersion, pr.Interpreter.Version
	rep.Machine = fmt.Sprintf("%s/%s, %d cores", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	rep.Workers, rep.Generated = o.Workers, generated
	logs, err := filepath.Abs(filepath.Join(o.Root, "build", "jaxsuite", "logs"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	pytest := filepath.Join(filepath.Dir(pr.Interpreter.Path), "pytest")
	for i, name := range todo {
		o.Log("== %s (%d of %d)", name, i+1, len(todo))
		m := Module{Name: name, Jax: ver, Commit: commit, Date: time.Now().UTC().Format(time.RFC3339)}
		device, devRes := runModule(o, pytest, logs, name, OnDevice, nil)
		m.Metalplug = device
		o.Log("   %-9s %d passed, %d failed, %d skipped in %.0fs %s", OnDevice, device.Passed, device.Failed, device.Skipped, device.Seconds, device.Error)
		// The CPU is the reference for the device's failures only: what
		// passes on the device needs no second opinion, and jax's CPU
		// compiles each program with XLA, which is what made whole-module
		// reference runs take longer than the device's.
		var cpuRes []Result
		if failed := failedIDs(devRes); len(failed) > 0 || device.Error != "" {
			m.CPU, cpuRes = runModule(o, pytest, logs, name, OnCPU, failed)
		} else {
			m.CPU = &Run{}
		}
		m.CPU.Rerun = true
		o.Log("   %-9s %d passed, %d failed, %d skipped in %.0fs (the device's failures) %s", OnCPU, m.CPU.Passed, m.CPU.Failed, m.CPU.Skipped, m.CPU.Seconds, m.CPU.Error)
		m.Failures = classifyAll(devRes, cpuRes)
		*rep.Module(name) = m
		if err := rep.write(o.Root); err != nil {
			return err
		}
	}
	return nil
}

// Render classifies the failures of docs/jax_suite.json again with the
// current rules and renders docs/jax_suite.md, running nothing.
func Render(root string) error {
	r, err := Load(filepath.Join(root, JSONPath))
	if err != nil {
		return err
	}
	return r.write(root)
}

// write classifies the failures again with the current rules and writes
// docs/jax_suite.json and docs/jax_suite.md under root.
func (r *Report) write(root string) error {
	r.Reclassify()
	if err := r.Save(filepath.Join(root, JSONPath)); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, MarkdownPath), []byte(r.Markdown()), 0o644)
}

// pick is the modules to run: the named ones, else those with no results
// for jax ver.
func pick(rep *Report, names, asked []string, ver string) ([]string, error) {
	if len(asked) == 0 {
		var todo []string
		for _, m := range rep.Modules {
			if !m.Ran() || m.Jax != ver {
				todo = append(todo, m.Name)
			}
		}
		return todo, nil
	}
	var todo []string
	for _, a := range asked {
		n := moduleName(a)
		if n == "" {
			continue
		}
		if !slices.Contains(names, n) {
			return nil, fmt.Errorf("the checkout has no tests/%s.py", n)
		}
		if !slices.Contains(todo, n) {
			todo = append(todo, n)
		}
	}
	return todo, nil
}

// failedIDs are the node ids of the tests that failed.
func failedIDs(res []Result) []string {
	var ids []string
	for _, r := range res {
		if r.Outcome == Failed {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// runModule runs one module with pytest on platform, writing pytest's
// output to logs/<module>.<platform>.log and its JUnit XML beside it. With
// ids it runs only those tests (pytest node ids) of the module.
func runModule(o Options, pytest, logs, name, platform string, ids []string) (*Run, []Result) {
	xmlPath := filepath.Join(logs, name+"."+platform+".xml")
	logPath := filepath.Join(logs, name+"."+platform+".log")
	_ = os.Remove(xmlPath)
	targets := []string{filepath.Join("tests", name+".py")}
	if len(ids) > 0 {
		targets = ids
	}
	args := append(targets, "-q", "-p", "no:cacheprovider",
		"--junitxml="+xmlPath, "-o", "junit_logging=no", "-rN",
		fmt.Sprintf("--timeout=%d", int(o.TestTimeout.Seconds())))
	if o.Workers > 1 {
		args = append(args, "-n", strconv.Itoa(o.Workers))
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.ModuleTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, pytest, args...)
	cmd.Dir = o.Checkout
	cmd.Env = append(python.CleanEnv(os.Environ()), Env(platform)...)
	killGroup(cmd)
	run := &Run{}
	for _, kv := range Env(platform) {
		if v, ok := strings.CutPrefix(kv, "JAX_PLATFORMS="); ok {
			run.Platforms = v
		}
	}
	logf, err := os.Create(logPath)
	if err != nil {
		run.Error = err.Error()
		return run, nil
	}
	cmd.Stdout, cmd.Stderr = logf, logf // pytest's progress, to follow while it runs
	start := time.Now()
	runErr := cmd.Run()
	run.Seconds = time.Since(start).Round(time.Second).Seconds()
	logf.Close()
	f, err := os.Open(xmlPath)
	if err != nil {
		out, _ := os.ReadFile(logPath)
		switch {
		case ctx.Err() != nil:
			run.Error = fmt.Sprintf("the module did not finish in %s", o.ModuleTimeout)
		default:
			run.Error = fmt.Sprintf("pytest wrote no results (%v): %s", runErr, firstLine(lastLines(string(venv.RedactPaths(out, o.Checkout)), 1), 300))
		}
		return run, nil
	}
	defer f.Close()
	res, err := ReadJUnit(f, name+".py")
	if err != nil {
		run.Error = err.Error()
	}
	// What the report keeps names the checkout's files relative to it and
	// the home directory as ~, not this machine's paths.
	for i := range res {
		res[i].Message = string(venv.RedactPaths([]byte(res[i].Message), o.Checkout))
	}
	for _, r := range res {
		switch r.Outcome {
		case Passed:
			run.Passed++
		case Failed:
			run.Failed++
		case Skipped:
			run.Skipped++
		}
	}
	return run, res
}

// classifyAll classifies the device's failures against the CPU's results.
func classifyAll(device, cpu []Result) []Failure {
	cpuFailed := map[string]bool{}
	for _, r := range cpu {
		if r.Outcome == Failed {
			cpuFailed[r.ID] = true
		}
	}
	var out []Failure
	for _, r := range device {
		if r.Outcome != Failed {
			continue
		}
		line := ErrorLine(r.Message)
		rule := Classify(r.ID, line, cpuFailed[r.ID])
		out = append(out, Failure{ID: r.ID, Error: line, Class: rule.Class, Rule: rule.Name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// lastLines is the last n non-empty lines of s.
func lastLines(s string, n int) string {
	var keep []string
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0 && len(keep) < n; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			keep = append([]string{l}, keep...)
		}
	}
	return strings.Join(keep, "\n")
}

// treeCommit names the commit of the tree at root, with "+changes" when
// files other than the report differ from it; empty outside git.
func treeCommit(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(out))
	st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no", "--", ".",
		":!"+JSONPath, ":!"+MarkdownPath).Output()
	if err == nil && len(strings.TrimSpace(string(st))) > 0 {
		c += "+changes"
	}
	return c
}

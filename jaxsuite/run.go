package jaxsuite

import (
	"bytes"
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
	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/setup/install"
	"github.com/metalplug/metalplug/setup/probe"
	"github.com/metalplug/metalplug/setup/toolchain"
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
	// Driver is the driver the device runs on: DriverHost (the default,
	// when empty) or DriverModel.
	Driver string
	// Workers is the number of pytest-xdist workers (the cores when 0).
	Workers int
	// TestTimeout bounds one test (pytest-timeout); ModuleTimeout one
	// module's pytest run as a whole (30 minutes when 0, 90 on the model,
	// which is slower).
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

// The drivers the device can run on.
const (
	// DriverHost is the device as the library offers it by default: off
	// macOS the host reference driver (METALPLUG_HOST_DEVICE=1), on macOS
	// the Metal driver.
	DriverHost = "host"
	// DriverModel is the Metal driver's lowering over the model of MPSGraph
	// (METALPLUG_DRIVER=metal-model, macOS 15 unless
	// METALPLUG_MODEL_MACOS says otherwise), on the CPU on any OS, with a
	// part of a program allowed on the host only for the ops whose home is
	// the host (METALPLUG_NO_CPU_FALLBACK=unplanned).
	DriverModel = "metal-model"
)

// Drivers are the drivers in the order the report shows them.
var Drivers = []string{DriverHost, DriverModel}

// driver is o's driver, DriverHost when unset.
func (o Options) driver() string {
	if o.Driver == "" {
		return DriverHost
	}
	return o.Driver
}

// Env is what a run on platform adds to the environment of the suite, with
// the device on driver (DriverHost when empty). On the device, JAX_PLATFORMS
// names it first, so it is jax's default backend and every test runs on it,
// and jax's CPU second, present beside it as on any GPU machine:
// jax.debug.callback, colocated Python and cross-platform device_put need a
// local CPU device by design. Off macOS the host reference driver must be
// asked for; the model is asked for on any OS, and a program that would run
// a part on the host for any reason but an op whose home is the host
// (matrix decompositions, host callbacks) fails to compile instead, naming
// the op and why (see GapRule).
func Env(platform, driver string) []string {
	if platform != OnDevice {
		return []string{"JAX_PLATFORMS=" + platform}
	}
	env := []string{"JAX_PLATFORMS=" + OnDevice + "," + OnCPU}
	switch driver {
	case DriverModel:
		env = append(env, "METALPLUG_HOST_DEVICE=1", "METALPLUG_DRIVER="+DriverModel, "METALPLUG_NO_CPU_FALLBACK=unplanned")
	default:
		if runtime.GOOS != "darwin" {
			env = append(env, "METALPLUG_HOST_DEVICE=1")
		}
	}
	return env
}

// ParseModules splits a list of modules, comma or space separated.
func ParseModules(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
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
	// The venv first, unbuilt: the library is built only once the venv is
	// known to hold this jax and no TensorFlow.
	t, err := toolchain.Ensure(toolchain.Options{Venv: "jaxsuite-" + ver, Base: base, Requirements: reqs, Needs: toolchain.Jax, Log: o.Log})
	if err != nil {
		return nil, err
	}
	rep, dir := t.Report, t.Venv
	if rep.Jax.Version != ver {
		return nil, fmt.Errorf("%s: jax %s is not what the venv has (%v)", venv.Python(dir), ver, rep.Jax)
	}
	if rep.HasTensorFlow() {
		return nil, fmt.Errorf("%s has TensorFlow: the suite's venv must have jax only", venv.Python(dir))
	}
	lib, err := toolchain.Build(rep, toolchain.Options{Root: o.Root, Out: filepath.Join("build", "jaxsuite", "jax-"+ver, build.LibraryName(rep.GOOS)),
		JaxPinProbed: true, Log: o.Log})
	if err != nil {
		return nil, err
	}
	if _, err := install.Install(lib, rep); err != nil {
		return nil, err
	}
	cmd := exec.Command(venv.Python(dir), "-c", `import jax; d = jax.devices("metalplug"); print(d, d[0].device_kind)`)
	cmd.Env = append(python.CleanEnv(os.Environ()), Env(OnDevice, o.driver())...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("jax lists no metalplug device after the install: %v: %s", err, firstLine(lastLines(string(out), 3), 600))
	}
	o.Log("%s", strings.TrimSpace(lastLines(string(out), 1)))
	return rep, nil
}

// Measure runs the modules of o on the device, on o's driver, and the
// device's failures on CPU, and merges what they measured into
// docs/jax_suite.json, then renders docs/jax_suite.md. Each module is saved
// as soon as it is done; a run on one driver keeps the other's results.
func Measure(o Options) error {
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	driver := o.driver()
	if !slices.Contains(Drivers, driver) {
		return fmt.Errorf("%q is not a driver the suite runs on: use %s", o.Driver, strings.Join(Drivers, " or "))
	}
	if o.Workers == 0 {
		o.Workers = runtime.NumCPU()
	}
	if o.TestTimeout == 0 {
		o.TestTimeout = 10 * time.Minute
	}
	if o.ModuleTimeout == 0 {
		o.ModuleTimeout = 30 * time.Minute
		if driver == DriverModel {
			o.ModuleTimeout = 90 * time.Minute
		}
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
	todo, err := pick(rep, driver, names, o.Modules, ver)
	if err != nil {
		return err
	}
	if len(todo) == 0 {
		o.Log("every module has results on %s for jax %s; name modules to run them again", driver, ver)
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
		o.Log("== %s on %s (%d of %d)", name, driver, i+1, len(todo))
		run := func(platform string, ids ...string) (*Run, []Result) {
			return runModule(o, pytest, logs, name, platform, ids...)
		}
		measureModule(o, rep.Module(name), ver, commit, run)
		if err := rep.write(o.Root); err != nil {
			return err
		}
	}
	return nil
}

// measureModule runs module m on the device on o's driver and the device's
// failures on CPU (run runs the module, or the tests ids of it, on a
// platform), classifies the failures and puts the results in m, keeping
// the other driver's.
func measureModule(o Options, m *Module, ver, commit string, run func(platform string, ids ...string) (*Run, []Result)) {
	driver := o.driver()
	res := Results{Jax: ver, Commit: commit, Date: time.Now().UTC().Format(time.RFC3339)}
	device, devRes := run(OnDevice)
	res.Metalplug = device
	o.Log("   %-9s %d passed, %d failed, %d skipped in %.0fs %s", OnDevice, device.Passed, device.Failed, device.Skipped, device.Seconds, device.Error)
	// The CPU is the reference for the device's failures only: what
	// passes on the device needs no second opinion, and jax's CPU compiles
	// each program with XLA, which is what made whole-module reference
	// runs take longer than the device's. On the model, a test that failed
	// on the default driver too has had its CPU run.
	cpuFailed := map[string]bool{}
	if driver == DriverModel {
		cpuFailed = m.cpuKnown(ver)
	}
	var ask []string
	for _, id := range failedIDs(devRes) {
		if _, known := cpuFailed[id]; !known {
			ask = append(ask, id)
		}
	}
	// A device run without results has its module run whole on CPU on the
	// default driver; the model's reference is that run's.
	if len(ask) > 0 || (device.Error != "" && driver == DriverHost) {
		var cpuRes []Result
		res.CPU, cpuRes = run(OnCPU, ask...)
		for _, r := range cpuRes {
			cpuFailed[r.ID] = r.Outcome == Failed
		}
	} else {
		res.CPU = &Run{}
	}
	res.CPU.Rerun = true
	o.Log("   %-9s %d passed, %d failed, %d skipped in %.0fs (the device's failures) %s", OnCPU, res.CPU.Passed, res.CPU.Failed, res.CPU.Skipped, res.CPU.Seconds, res.CPU.Error)
	res.Failures = classifyAll(devRes, cpuFailed)
	if driver == DriverModel {
		m.Model = &res
	} else {
		m.Results = res
	}
}

// cpuKnown is what the module's run on the default driver with jax ver
// says of jax's CPU: for each test that failed on the device there,
// whether it failed on CPU too (its class says so).
func (m *Module) cpuKnown(ver string) map[string]bool {
	known := map[string]bool{}
	if !m.Results.Ran() || m.Results.Jax != ver || m.Results.CPU.Error != "" {
		return known
	}
	for _, f := range m.Results.Failures {
		known[f.ID] = f.Class == ClassCPU
	}
	return known
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

// pick is the modules to run on driver: the named ones, else those with no
// results on driver for jax ver.
func pick(rep *Report, driver string, names, asked []string, ver string) ([]string, error) {
	if len(asked) == 0 {
		var todo []string
		for i := range rep.Modules {
			m := &rep.Modules[i]
			if res := m.On(driver); !res.Ran() || res.Jax != ver {
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

// runModule runs one module with pytest on platform, on o's driver,
// writing pytest's output to logs/<module>.<platform>.log (.metal-model.
// before the platform on the model) and its JUnit XML beside it. With ids
// it runs only those tests (pytest node ids) of the module.
func runModule(o Options, pytest, logs, name, platform string, ids ...string) (*Run, []Result) {
	base := name + "."
	if o.driver() != DriverHost {
		base += o.driver() + "."
	}
	xmlPath := filepath.Join(logs, base+platform+".xml")
	logPath := filepath.Join(logs, base+platform+".log")
	_ = os.Remove(xmlPath)
	targets := []string{filepath.Join("tests", name+".py")}
	if len(ids) > 0 {
		targets = ids
	}
	// -v names each test in the log as it ends, so a module cut short by
	// its timeout still shows where it stood; --tb=native formats a
	// failure without repr() of the frames' arguments, which for a test
	// timed out mid-computation waits on the device's unfinished arrays
	// (random_lax_test on the model sat 35 minutes in that repr). The
	// timeout's thread method ends the worker of a test that overran: its
	// default, SIGALRM, is only seen once the test's thread is back in
	// Python, never for a test waiting in jaxlib on a long computation
	// (random_lax_test's multinomials on the model); xdist then reports
	// that test as a crashed worker's and starts another. Without workers
	// it would end pytest itself, so one process keeps the signal.
	args := append(targets, "-v", "--tb=native", "-p", "no:cacheprovider",
		"--junitxml="+xmlPath, "-o", "junit_logging=no", "-rN",
		fmt.Sprintf("--timeout=%d", int(o.TestTimeout.Seconds())))
	if o.Workers > 1 {
		args = append(args, "-n", strconv.Itoa(o.Workers), "--timeout-method=thread")
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.ModuleTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, pytest, args...)
	cmd.Dir = o.Checkout
	cmd.Env = append(python.CleanEnv(os.Environ()), Env(platform, o.driver())...)
	killGroup(cmd)
	run := &Run{}
	for _, kv := range Env(platform, o.driver()) {
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
	var res []Result
	if f, err := os.Open(xmlPath); err == nil {
		res, err = ReadJUnit(f, name+".py")
		f.Close()
		if err != nil {
			run.Error = err.Error()
		}
	} else {
		out, _ := os.ReadFile(logPath)
		if ctx.Err() == nil {
			run.Error = fmt.Sprintf("pytest wrote no results (%v): %s", runErr, firstLine(lastLines(string(venv.RedactPaths(out, o.Checkout)), 1), 300))
			return run, nil
		}
		// Cut short: what finished still counts, from pytest -v's lines,
		// and what was running fails as unfinished.
		res = ReadVerboseLog(bytes.NewReader(out))
		run.Error = fmt.Sprintf("the module did not finish in %s; %d results read from its log", o.ModuleTimeout, len(res))
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

// classifyAll classifies the device's failures; cpuFailed says which of
// them failed on jax's CPU too.
func classifyAll(device []Result, cpuFailed map[string]bool) []Failure {
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

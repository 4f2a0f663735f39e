// Package build compiles the c-shared plugin library against exactly the
// frameworks a probe found. For TensorFlow: its headers, its framework
// library (with an rpath), header-feature defines, and the built-against
// version and pin stamped into the binary. For jax: the jaxlib version and
// the StableHLO versions its serializer writes, stamped. A framework that is
// not installed is left out of the library (build tags notf, nojax). It
// skips the compile when neither the sources nor the targets changed.
package build

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/metalplug/metalplug/plugin/tf/capi"
	"github.com/metalplug/metalplug/plugin/version"
	"github.com/metalplug/metalplug/setup/probe"
)

// TestDistribution is the TensorFlow wheel the tests and the matrix install:
// tensorflow-cpu is the lighter one and has no CUDA kernels to collide with;
// macOS has only tensorflow (whose macOS wheels carry no GPU kernels).
var TestDistribution = map[bool]string{true: "tensorflow", false: "tensorflow-cpu"}[runtime.GOOS == "darwin"]

// Options say what to build and where.
type Options struct {
	Report *probe.Report
	// Root is the source tree (holding go.mod); Out the library to write.
	Root, Out string
	// Pin is TF_SUPPORTED_VERSION. The targeted TensorFlow must match it.
	Pin string
	// JaxPin, when set, is the jaxlib minor to build for instead of
	// JAX_SUPPORTED_VERSION's (the matrix builds each jaxlib cell for its
	// own, as it gives each TensorFlow cell its own Pin).
	JaxPin string
	// StampVersion, when set, is stamped as the built-against TensorFlow
	// version instead of the real one, and StampJaxlib as the jaxlib one;
	// the load tests use them to build a mismatched library.
	StampVersion, StampJaxlib string
	// Go is the go command; "go" on PATH when empty.
	Go string
	// Log receives progress lines; nil discards them.
	Log func(format string, args ...any)
}

// Releases are the TensorFlow releases the tree supports: the universal
// wheel carries a build for each, the matrix tests each, and an install from
// the sdist builds for any TensorFlow from the oldest on. They are the last
// 2.19 and the two releases that declare the resource-variable C API
// (kernels_experimental.h) without exporting it.
var Releases = []string{"2.19.1", "2.20.0", "2.21.0"}

// DarwinDeploymentTarget is the oldest macOS the library loads on: Go 1.26
// itself needs macOS 12. The Metal driver declines a release before its own
// floor (metal.MinimumMacOS, 13.0) in one line at open, so on macOS 12 the
// library loads and TensorFlow and jax keep their CPUs. APIs newer than
// that (reinterpretCast from 13.2, MPSNDArray at an offset from 15.0) are
// looked up at run time, with fallbacks.
const DarwinDeploymentTarget = "12.0"

// LibraryName is the file TensorFlow loads on the probed OS.
func LibraryName(goos string) string {
	if goos == "darwin" {
		return "libmetalplug.dylib"
	}
	return "libmetalplug.so"
}

// ReadPin reads TF_SUPPORTED_VERSION from the source root.
func ReadPin(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "TF_SUPPORTED_VERSION"))
	if err != nil {
		return "", fmt.Errorf("reading the pin: %w", err)
	}
	pin := strings.TrimSpace(string(b))
	if version.Minor(pin) == "" {
		return "", fmt.Errorf("TF_SUPPORTED_VERSION holds %q, not a TensorFlow version such as 2.21", pin)
	}
	return pin, nil
}

// PJRTVersion is the PJRT C API version the JAX frontend reports
// (MP_PJRT_MAJOR and MP_PJRT_MINOR of plugin/pjrt/abi.h, which a test holds
// this to).
const PJRTVersion = "0.114"

// checkPJRT refuses a jaxlib that would refuse the library: one whose PJRT
// API has another major version, or accepts only newer plugins.
func checkPJRT(j *probe.Jax) error {
	major := func(v string) string { m, _, _ := strings.Cut(v, "."); return m }
	minor := func(v string) int {
		_, m, _ := strings.Cut(v, ".")
		n := 0
		fmt.Sscan(m, &n)
		return n
	}
	if major(j.PJRTFramework) != major(PJRTVersion) || minor(j.PJRTMinimum) > minor(PJRTVersion) {
		return fmt.Errorf("jaxlib %s speaks PJRT API %s and accepts plugins from %s, but this library speaks %s: it would not load; install the jax release JAX_SUPPORTED_VERSION names",
			j.JaxlibVersion, j.PJRTFramework, j.PJRTMinimum, PJRTVersion)
	}
	return nil
}

// ReadJaxPin reads JAX_SUPPORTED_VERSION, the jaxlib minor the tree
// supports, from the source root.
func ReadJaxPin(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "JAX_SUPPORTED_VERSION"))
	if err != nil {
		return "", fmt.Errorf("reading the jax pin: %w", err)
	}
	pin := strings.TrimSpace(string(b))
	if version.Minor(pin) == "" {
		return "", fmt.Errorf("JAX_SUPPORTED_VERSION holds %q, not a jaxlib version such as 0.12", pin)
	}
	return pin, nil
}

// Build compiles the library unless it is current; built says whether it ran.
func Build(o Options) (built bool, err error) {
	r := o.Report
	if !r.HasTensorFlow() && !r.HasJax() {
		return false, &probe.NoFrameworkError{Python: r.Interpreter.Path}
	}
	if r.HasJax() {
		pin := o.JaxPin
		if pin == "" {
			if pin, err = ReadJaxPin(o.Root); err != nil {
				return false, err
			}
		}
		if !version.SameMinor(r.Jax.JaxlibVersion, pin) {
			return false, fmt.Errorf("jaxlib %s is installed for %s, but this tree supports jaxlib %s (JAX_SUPPORTED_VERSION): install it with `%s -m pip install 'jax==%s.*'`, or point PYTHON at an interpreter that has it",
				r.Jax.JaxlibVersion, r.Interpreter.Path, pin, r.Interpreter.Path, version.Minor(pin))
		}
		if err := checkPJRT(r.Jax); err != nil {
			return false, err
		}
	}
	if r.HasTensorFlow() {
		if err := checkTensorFlow(o); err != nil {
			return false, err
		}
	}
	logf := o.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	goCmd := o.Go
	if goCmd == "" {
		goCmd = "go"
	}
	env := buildEnv(r)
	args := []string{"build", "-buildmode=c-shared", "-trimpath", "-tags=" + strings.Join(Tags(r), ","),
		"-ldflags=-s -w " + strings.Join(stamps(o), " "), "-o", o.Out, "./plugin/libmetalplug"}

	key, err := fingerprint(o.Root, r, args, env)
	if err != nil {
		return false, err
	}
	stampFile := o.Out + ".stamp"
	if old, err := os.ReadFile(stampFile); err == nil && string(old) == key && fileExists(o.Out) {
		logf("%s is up to date (%s)", o.Out, targets(r))
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(o.Out), 0o755); err != nil {
		return false, err
	}
	logf("building %s against %s", o.Out, targets(r))
	cmd := exec.Command(goCmd, args...)
	cmd.Dir = o.Root
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	os.Remove(stampFile)
	if err := cmd.Run(); err != nil {
		return false, fmt.Errorf("go build failed (%v):\n%s", err, out.String())
	}
	os.Remove(strings.TrimSuffix(o.Out, filepath.Ext(o.Out)) + ".h") // cgo's export header; nobody includes it
	if err := CheckLibrary(o.Out, r); err != nil {
		return false, err
	}
	return true, os.WriteFile(stampFile, []byte(key), 0o644)
}

// Tags leave out of the library the frontends whose framework is not
// installed.
func Tags(r *probe.Report) []string {
	var tags []string
	if !r.HasTensorFlow() {
		tags = append(tags, "notf")
	}
	if !r.HasJax() {
		tags = append(tags, "nojax")
	}
	return tags
}

// targets names what a build is against, for its log lines.
func targets(r *probe.Report) string {
	var parts []string
	if r.HasTensorFlow() {
		parts = append(parts, r.TensorFlow.Distribution+" "+r.TensorFlow.Version)
	}
	if r.HasJax() {
		parts = append(parts, "jaxlib "+r.Jax.JaxlibVersion)
	}
	return strings.Join(parts, " and ")
}

// stamps are the -X flags recording what the library is built against.
func stamps(o Options) []string {
	r := o.Report
	var s []string
	if r.HasTensorFlow() {
		v := o.StampVersion
		if v == "" {
			v = r.TensorFlow.Version
		}
		s = append(s, "-X github.com/metalplug/metalplug/plugin/tf.BuiltAgainst="+v, "-X github.com/metalplug/metalplug/plugin/tf.Pin="+o.Pin)
	}
	if j := r.Jax; j != nil {
		v := o.StampJaxlib
		if v == "" {
			v = j.JaxlibVersion
		}
		s = append(s, "-X github.com/metalplug/metalplug/plugin/pjrt.BuiltAgainstJaxlib="+v,
			"-X github.com/metalplug/metalplug/plugin/pjrt.StablehloCurrentVersion="+j.StablehloCurrent,
			"-X github.com/metalplug/metalplug/plugin/pjrt.StablehloMinimumVersion="+j.StablehloMinimum)
	}
	return s
}

// checkTensorFlow refuses a TensorFlow outside the pin, or one whose
// framework library lacks entry points the plugin links.
func checkTensorFlow(o Options) error {
	r := o.Report
	if !version.MatchesPin(r.TensorFlow.Version, o.Pin) {
		return fmt.Errorf("%s %s is installed for %s, but this tree is pinned to TensorFlow %s (TF_SUPPORTED_VERSION): install it with `%s -m pip install '%s==%s.*'`, or point PYTHON at an interpreter that has it",
			r.TensorFlow.Distribution, r.TensorFlow.Version, r.Interpreter.Path, o.Pin, r.Interpreter.Path, r.TensorFlow.Distribution, version.Minor(o.Pin))
	}
	if m := r.Missing(); len(m) > 0 {
		return fmt.Errorf("%s does not export %s, which the plugin links: this TensorFlow release cannot load it", r.TensorFlow.FrameworkLibrary, strings.Join(m, ", "))
	}
	return nil
}

// Where TensorFlow's framework library is, relative to the library, in each
// place an install puts the library: site-packages/tensorflow-plugins (an
// install from the sdist, a per-release wheel) and
// site-packages/metalplug/builds/tf-X.Y (the universal wheel). Both are in
// every build's rpath, so that one build serves either place; the one that
// does not apply names a directory that does not exist.
const (
	TensorFlowFromPlugins = "../tensorflow"
	TensorFlowFromBuilds  = "../../../tensorflow"
)

// buildEnv holds the cgo flags that point the compile at this TensorFlow
// (the JAX frontend needs none: it declares the PJRT ABI itself).
func buildEnv(r *probe.Report) []string {
	if !r.HasTensorFlow() {
		var cflags, ldflags, extra []string
		if r.GOOS == "darwin" {
			cflags = append(cflags, "-mmacosx-version-min="+DarwinDeploymentTarget)
			ldflags = append(ldflags, "-mmacosx-version-min="+DarwinDeploymentTarget)
			extra = append(extra, "MACOSX_DEPLOYMENT_TARGET="+DarwinDeploymentTarget)
		}
		return append([]string{"CGO_ENABLED=1", "GOOS=" + r.GOOS, "GOARCH=" + r.GOARCH, "GOTOOLCHAIN=local",
			"CGO_CFLAGS=-O2 " + strings.Join(cflags, " "), "CGO_LDFLAGS=" + strings.Join(ldflags, " ")}, extra...)
	}
	cflags := []string{"-I" + r.TensorFlow.IncludeDir}
	if r.Has(probe.FeatureStreamOptions) {
		cflags = append(cflags, "-DMETALPLUG_HAVE_STREAM_OPTIONS")
	}
	if r.Has(probe.FeatureForceMemoryGrowth) {
		cflags = append(cflags, "-DMETALPLUG_HAVE_FORCE_MEMORY_GROWTH")
	}
	lib := r.TensorFlow.LibDir
	var ldflags, extra []string
	if r.GOOS == "darwin" {
		// The frameworks (Metal, MetalPerformanceShaders, MPSGraph,
		// Foundation) come from the #cgo lines of the Metal driver and darwinkit.
		cflags = append(cflags, "-mmacosx-version-min="+DarwinDeploymentTarget)
		extra = append(extra, "MACOSX_DEPLOYMENT_TARGET="+DarwinDeploymentTarget)
		ldflags = []string{"-L" + lib, "-ltensorflow_framework.2", "-Wl,-rpath,@loader_path/" + TensorFlowFromPlugins, "-Wl,-rpath,@loader_path/" + TensorFlowFromBuilds, "-Wl,-rpath," + lib,
			"-mmacosx-version-min=" + DarwinDeploymentTarget}
	} else {
		ldflags = []string{"-L" + lib, "-l:" + filepath.Base(r.TensorFlow.FrameworkLibrary), "-Wl,-rpath,$ORIGIN/" + TensorFlowFromPlugins, "-Wl,-rpath,$ORIGIN/" + TensorFlowFromBuilds, "-Wl,-rpath," + lib}
	}
	return append([]string{
		"CGO_ENABLED=1",
		"GOOS=" + r.GOOS,
		"GOARCH=" + r.GOARCH,
		"GOTOOLCHAIN=local",
		"CGO_CFLAGS=-O2 " + strings.Join(cflags, " "),
		"CGO_LDFLAGS=" + strings.Join(ldflags, " "),
	}, extra...)
}

// Env is the environment that compiles or vets plugin/tf against a probed
// TensorFlow, for tests and tools outside Build.
func Env(r *probe.Report) []string { return buildEnv(r) }

// fingerprint hashes everything the output depends on: the sources, the
// targeted TensorFlow (version, headers, library), the flags and the Go
// toolchain. A change to any of them means a rebuild.
func fingerprint(root string, r *probe.Report, args, env []string) (string, error) {
	h := sha256.New()
	tf, _ := json.Marshal(r.TensorFlow)
	jax, _ := json.Marshal(r.Jax)
	fmt.Fprintf(h, "tf %s\njax %s\nargs %q\nenv %q\ngo %s\n", tf, jax, args, env, runtime.Version())
	var deps []string
	if r.HasTensorFlow() {
		deps = []string{r.TensorFlow.FrameworkLibrary, r.Headers.StreamExecutor}
	}
	for _, p := range deps {
		st, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d %d\n", p, st.Size(), st.ModTime().UnixNano())
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel == "build" || rel == "dist" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".go", ".c", ".h", ".m", ".s", ".mod", ".sum":
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	for _, f := range files {
		st, err := os.Stat(filepath.Join(root, f))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d %d\n", f, st.Size(), st.ModTime().UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// CheckLibrary verifies a built library: it exports the entry points of
// the frontends it was built with (and only those), links only C API
// functions the framework library exports, and links none of the
// run-time-only ones (a missing one would make dlopen, and so
// `import tensorflow`, fail).
func CheckLibrary(lib string, r *probe.Report) error {
	exported, err := probe.ExportedSymbols(lib)
	if err != nil {
		return err
	}
	for _, e := range []struct {
		name string
		want bool
	}{{"SE_InitPlugin", r.HasTensorFlow()}, {"TF_InitKernel", r.HasTensorFlow()}, {"TF_InitGraph", r.HasTensorFlow()}, {"TF_InitProfiler", r.HasTensorFlow()}, {"GetPjrtApi", r.HasJax()}} {
		switch has := contains(exported, e.name); {
		case e.want && !has:
			return fmt.Errorf("%s does not export %s", lib, e.name)
		case !e.want && has:
			return fmt.Errorf("%s exports %s, but the framework it serves is not installed", lib, e.name)
		}
	}
	if !r.HasTensorFlow() {
		return nil
	}
	undefined, err := probe.UndefinedSymbols(lib)
	if err != nil {
		return err
	}
	linked := capi.Linked()
	var stray, runtimeOnly []string
	for _, s := range undefined {
		if !strings.HasPrefix(s, "TF_") {
			continue
		}
		switch {
		case contains(capi.KernelsExperimental, s) || contains(capi.RuntimeLookups, s):
			runtimeOnly = append(runtimeOnly, s)
		case !contains(linked, s):
			stray = append(stray, s)
		}
	}
	if len(runtimeOnly) > 0 {
		return fmt.Errorf("%s links %s directly; those must be looked up at run time", lib, strings.Join(runtimeOnly, ", "))
	}
	if len(stray) > 0 {
		return fmt.Errorf("%s links %s, which plugin/tf/capi does not list: add them there so the probe checks them", lib, strings.Join(stray, ", "))
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

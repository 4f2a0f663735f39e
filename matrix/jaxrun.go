package matrix

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/metalplug/metalplug/plugin/pjrt/python"
	"github.com/metalplug/metalplug/plugin/version"
	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/setup/install"
	"github.com/metalplug/metalplug/setup/probe"
	"github.com/metalplug/metalplug/setup/toolchain"
)

// JaxResult is what a jax cell found, beside what every cell records.
type JaxResult struct {
	// Supported is the jaxlib minor the tree supports (JAX_SUPPORTED_VERSION).
	Supported string `json:"supported"`
	// The probe of the venv: the jax and jaxlib there, the StableHLO
	// versions its serializer writes, and the PJRT C API versions measured
	// by loading a probe plugin into it (jaxlib's own, and the oldest
	// plugin version it accepts).
	Jax              string `json:"jax,omitempty"`
	Jaxlib           string `json:"jaxlib,omitempty"`
	StablehloCurrent string `json:"stablehlo_current,omitempty"`
	StablehloMinimum string `json:"stablehlo_minimum,omitempty"`
	PJRTFramework    string `json:"pjrt_framework,omitempty"`
	PJRTMinimum      string `json:"pjrt_minimum,omitempty"`
	// PJRTPlugin is the PJRT C API version the library reports.
	PJRTPlugin string `json:"pjrt_plugin"`
	// Declined says how the library turned this jaxlib down, where it did
	// what it promises for a jaxlib minor it does not support: the build's
	// refusal, or the jax_plugins module's line. A decline is recorded, not
	// counted as a failure.
	Declined string `json:"declined,omitempty"`
	// The metalplug devices jax listed, their kind (which driver) and the
	// platform version the library reported.
	Devices         []string `json:"devices,omitempty"`
	DeviceKind      string   `json:"device_kind,omitempty"`
	PlatformVersion string   `json:"platform_version,omitempty"`
	// Lines are the plugin's own lines on stderr ("metalplug: ..."), from
	// the device query and the smoke test, each once.
	Lines []string  `json:"lines,omitempty"`
	Smoke *JaxSmoke `json:"smoke,omitempty"`
}

// JaxLoad is what the device query saw: jax with the plugin installed,
// asked for its metalplug devices.
type JaxLoad struct {
	Jaxlib          string   `json:"jaxlib"` // as the running jaxlib says it
	Devices         []string `json:"devices"`
	DeviceKind      string   `json:"device_kind"`
	PlatformVersion string   `json:"platform_version"`
	// Error is what jax raised instead of listing devices.
	Error string   `json:"error"`
	Lines []string `json:"-"`
}

// JaxSmoke is the smoke test's outcome: tests/integration/py/jax_ops.py,
// jitted programs (matmul, grads, an MLP trained with Adam, ...) on the
// device and on jax's CPU.
type JaxSmoke struct {
	Cases    int      `json:"cases"`
	Failures []string `json:"failures"`
	Lines    []string `json:"-"`
}

// Passed is the smoke test's verdict in words: "27 of 27 agree".
func (s *JaxSmoke) Passed() string {
	if s == nil {
		return "-"
	}
	return fmt.Sprintf("%d of %d agree", s.Cases-len(s.Failures), s.Cases)
}

// jaxAsk is what the jax runs add to the environment: JAX_PLATFORMS puts the
// plugin first with the CPU beside it (the smoke test compares the two),
// and off macOS the host reference driver must be asked for.
var jaxAsk = func() []string {
	env := []string{"JAX_PLATFORMS=metalplug,cpu"}
	if runtime.GOOS != "darwin" {
		env = append(env, "METALPLUG_HOST_DEVICE=1")
	}
	return env
}()

// jaxDevicesScript lists the metalplug devices. With the plugin declined,
// jax raises on the first question; that is the answer too.
const jaxDevicesScript = `import json
out = {}
try:
    import jax, jaxlib
    out["jaxlib"] = jaxlib.__version__
    ds = jax.devices("metalplug")
    out["devices"] = [str(d) for d in ds]
    out["device_kind"] = ds[0].device_kind
    out["platform_version"] = ds[0].client.platform_version
except Exception as e:
    out["error"] = "%s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0][:400])
print("RESULT " + json.dumps(out))
`

// jaxEnv is the environment of the jax runs: this one without the
// settings that would change what jax or the plugin do, then jaxAsk.
func jaxEnv() []string { return append(python.CleanEnv(os.Environ()), jaxAsk...) }

// runResult runs python with args (what names them in errors) and decodes
// the RESULT line it prints into v; stderr comes back for the plugin's lines.
func runResult(what, python string, args []string, timeout time.Duration, v any) (stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, args...)
	cmd.Env = jaxEnv()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	runErr := cmd.Run()
	for _, line := range strings.Split(out.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "RESULT "); ok {
			if jerr := json.Unmarshal([]byte(rest), v); jerr != nil {
				return errb.String(), fmt.Errorf("%s printed a bad result %q: %v", what, rest, jerr)
			}
			return errb.String(), runErr
		}
	}
	if ctx.Err() != nil {
		runErr = fmt.Errorf("no answer in %s", timeout)
	}
	return errb.String(), fmt.Errorf("%s printed no result (%v): %s", what, runErr, tail(errb.String(), 1500))
}

// pluginLines are the lines the plugin and its jax_plugins module write to
// stderr, each once.
func pluginLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "metalplug: ") && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

func (realSteps) ProbeJax(python string) (*probe.Report, error) { return probe.Run(python) }

// BuildJax builds against the probed jaxlib, which is what the library is
// stamped with, pinned to that jaxlib's own minor (as each TensorFlow cell
// gets its own pin): the matrix measures whether the tree works with the
// release, not whether JAX_SUPPORTED_VERSION names it.
func (s realSteps) BuildJax(r *probe.Report, out string, log Logf) error {
	_, err := toolchain.Build(r, toolchain.Options{Root: s.root, Out: out, JaxPinProbed: true, Log: log})
	return err
}

// InstallJax installs as `go tool mage install` does: the library next to
// the jax_plugins.metalplug module in the venv's site-packages.
func (realSteps) InstallJax(lib string, r *probe.Report) error {
	_, err := install.Install(lib, r)
	return err
}

func (realSteps) JaxDevices(python string) (JaxLoad, error) {
	var l JaxLoad
	stderr, err := runResult("the device query", python, []string{"-I", "-c", jaxDevicesScript}, 5*time.Minute, &l)
	l.Lines = pluginLines(stderr)
	return l, err
}

// JaxSmoke runs tests/integration/py/jax_ops.py, which the install test
// TestInstallWithJax runs too, in a process of its own.
func (s realSteps) JaxSmoke(python string) (JaxSmoke, error) {
	var sm JaxSmoke
	stderr, err := runResult("jax_ops.py", python, []string{filepath.Join(s.root, "tests", "integration", "py", "jax_ops.py")}, 15*time.Minute, &sm)
	sm.Lines = pluginLines(stderr)
	if err != nil && len(sm.Failures) > 0 {
		err = nil // the failures say more than jax_ops.py's exit status
	}
	return sm, err
}

// stepFunc runs one named step of a cell and records it; false when it failed.
type stepFunc func(name string, f func() error) bool

// sameRelease compares two spellings of a jax or jaxlib release (0.12 and
// 0.12.0 are one); anything that is not a final release compares as text.
func sameRelease(a, b string) bool {
	pa, okA := releaseParts(a)
	pb, okB := releaseParts(b)
	if okA && okB {
		return compareParts(pa, pb) == 0
	}
	return a == b
}

// runJaxCell runs a jax cell's steps after its venv: the probe (jax only,
// the versions asked for), the build with the JAX frontend alone, the
// install, the device query and the smoke test, each only if the one
// before succeeded.
func runJaxCell(o Options, c Cell, r *CellResult, py string, step stepFunc) {
	j := &JaxResult{Supported: o.JaxPin, PJRTPlugin: build.PJRTVersion}
	r.Jax = j
	supported := c.Jaxlib != nil && version.SameMinor(c.Jaxlib.Version, o.JaxPin)
	var rep *probe.Report
	if !step("probe", func() (err error) {
		if rep, err = o.Steps.ProbeJax(py); err != nil {
			return err
		}
		if rep.HasTensorFlow() {
			return fmt.Errorf("the venv has %s %s: a jax cell's venv must have jax only, so that the library is built with the JAX frontend alone", rep.TensorFlow.Distribution, rep.TensorFlow.Version)
		}
		if !rep.HasJax() {
			return fmt.Errorf("jaxlib is not importable in the venv after installing %s", strings.Join(c.Requirements(), " "))
		}
		x := rep.Jax
		j.Jax, j.Jaxlib = x.Version, x.JaxlibVersion
		j.StablehloCurrent, j.StablehloMinimum = x.StablehloCurrent, x.StablehloMinimum
		j.PJRTFramework, j.PJRTMinimum = x.PJRTFramework, x.PJRTMinimum
		r.Installed = "jax " + x.Version + ", jaxlib " + x.JaxlibVersion
		if !sameRelease(x.Version, c.Release.Version) || c.Jaxlib == nil || !sameRelease(x.JaxlibVersion, c.Jaxlib.Version) {
			return fmt.Errorf("the venv has %s, not %s", r.Installed, strings.Join(c.Requirements(), " "))
		}
		return nil
	}) {
		return
	}
	lib := filepath.Join(o.Root, "build", "matrix", c.Name, build.LibraryName(rep.GOOS))
	if !step("build", func() error {
		err := o.Steps.BuildJax(rep, lib, o.Log)
		if err != nil && !supported && strings.Contains(err.Error(), "JAX_SUPPORTED_VERSION") {
			j.Declined = "the build refused it: " + err.Error()
			return nil
		}
		return err
	}) || j.Declined != "" {
		return
	}
	r.Compiled = true
	if !step("install", func() error { return o.Steps.InstallJax(lib, rep) }) {
		return
	}
	if !step("load", func() error {
		l, err := o.Steps.JaxDevices(py)
		j.Lines = appendNew(j.Lines, l.Lines...)
		j.Devices, j.DeviceKind, j.PlatformVersion = l.Devices, l.DeviceKind, l.PlatformVersion
		switch {
		case err != nil:
			return err
		case len(l.Devices) > 0:
			return nil
		case !supported && len(l.Lines) > 0:
			j.Declined = l.Lines[0]
			return nil
		}
		return fmt.Errorf("jax has no metalplug device (%s); the plugin said: %s", orDash(l.Error), orDash(strings.Join(l.Lines, " / ")))
	}) || j.Declined != "" {
		return
	}
	r.Loaded = true
	step("smoke", func() error {
		s, err := o.Steps.JaxSmoke(py)
		j.Lines = appendNew(j.Lines, s.Lines...)
		if s.Cases > 0 {
			j.Smoke = &s
		}
		switch {
		case err != nil:
			return err
		case len(s.Failures) > 0:
			return fmt.Errorf("%d of %d programs differ from jax's CPU: %s", len(s.Failures), s.Cases, strings.Join(s.Failures, "; "))
		case s.Cases == 0:
			return fmt.Errorf("jax_ops.py ran no programs")
		}
		return nil
	})
}

// appendNew appends the lines list does not have yet.
func appendNew(list []string, lines ...string) []string {
	for _, l := range lines {
		if !slices.Contains(list, l) {
			list = append(list, l)
		}
	}
	return list
}

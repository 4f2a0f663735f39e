package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/setup/venv"
)

// pathWithoutGo drops every PATH entry holding a go command, so an install
// must use the toolchain its build requirements bring.
func pathWithoutGo() string {
	var keep []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "go")); err == nil {
			continue
		}
		keep = append(keep, d)
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}

func pipInstall(t *testing.T, python, sdist string) (string, error) {
	t.Helper()
	cmd := exec.Command(python, "-m", "pip", "install", "--disable-pip-version-check", sdist)
	cmd.Env = append(os.Environ(), "PATH="+pathWithoutGo(), "GOPROXY=off", "GOFLAGS=")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestInstallFromSdist installs the sdist as a user would, with pip's default
// build isolation, no Go on PATH and no module proxy, into a venv that holds
// only TensorFlow; then TensorFlow must list the device with nothing loaded
// by hand.
func TestInstallFromSdist(t *testing.T) {
	v := need(t, "METALPLUG_TEST_SDIST", "METALPLUG_TEST_TF_REQUIREMENT")
	sdist, req := v[0], v[1]
	// Named after the requirement, so a new pin gets a new venv.
	dir, err := venv.Ensure("install-test-"+strings.NewReplacer("==", "-", ".*", "").Replace(req), "", []string{req}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	py := venv.Python(dir)
	uninstall := func() { exec.Command(py, "-m", "pip", "uninstall", "-y", "-q", "metalplug").Run() }
	uninstall()
	defer uninstall()
	if out, err := pipInstall(t, py, sdist); err != nil {
		t.Fatalf("pip install %s: %v\n%s", sdist, err, out)
	}
	site, err := exec.Command(py, "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])").Output()
	if err != nil {
		t.Fatal(err)
	}
	// The sdist's build names the library as the platform does (.dylib on macOS).
	lib := filepath.Join(strings.TrimSpace(string(site)), "tensorflow-plugins", build.LibraryName(runtime.GOOS))
	if _, err := os.Stat(lib); err != nil {
		t.Fatalf("the wheel did not install the library: %v", err)
	}
	show, _ := exec.Command(py, "-m", "pip", "show", "metalplug").Output()
	if !strings.Contains(string(show), "Requires: "+strings.SplitN(req, "==", 2)[0]) {
		t.Errorf("the installed package does not require %s:\n%s", req, show)
	}
	var r devicesResult
	if stderr, err := script(t, py, "devices.py", []string{ask, "METALPLUG_TEST_LIB="}, &r); err != nil {
		t.Fatalf("devices.py: %v\n%s", err, stderr)
	}
	if len(r.Devices) != 1 || r.MatmulError == nil || *r.MatmulError > 1e-5 {
		t.Fatalf("after install: devices %v, MatMul error %v", r.Devices, r.MatmulError)
	}
}

// TestInstallWithoutAFramework: the build stops with one message saying to
// install TensorFlow or jax first, and nothing is installed.
func TestInstallWithoutAFramework(t *testing.T) {
	v := need(t, "METALPLUG_TEST_SDIST")
	dir, err := venv.Ensure("install-test-bare", "", nil, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	py := venv.Python(dir)
	out, err := pipInstall(t, py, v[0])
	if err == nil {
		t.Fatalf("pip install succeeded without TensorFlow or jax:\n%s", out)
	}
	if !strings.Contains(out, "neither TensorFlow nor jax is installed") || !strings.Contains(out, "install one first") {
		t.Errorf("the failure does not say to install TensorFlow or jax first:\n%s", out)
	}
	if err := exec.Command(py, "-m", "pip", "show", "-q", "metalplug").Run(); err == nil {
		t.Errorf("metalplug is installed after a failed build")
	}
}

// TestInstallWithJax installs the sdist into a venv that holds only jax
// (Python 3.12 or newer, no TensorFlow): the build targets that jaxlib, the
// wheel holds the jax_plugins module with the library next to it, and
// JAX_PLATFORMS=metalplug,cpu then runs py/jax_ops.py with nothing loaded by
// hand: jitted programs (math in every float width, integers, matmul, conv,
// reductions, grad, vmap, scan and loops, cond and switch, threefry random
// numbers, sorts with NaN, indexing and .at updates, dynamic slices, an Adam
// step, and 30 steps of training whose loss must fall) on the device, each
// checked against jax's CPU.
func TestInstallWithJax(t *testing.T) {
	v := need(t, "METALPLUG_TEST_SDIST", "METALPLUG_TEST_JAX_REQUIREMENT", "METALPLUG_TEST_JAX_BASE")
	sdist, req, base := v[0], v[1], v[2]
	dir, err := venv.Ensure("install-test-"+strings.NewReplacer("==", "-", ".*", "").Replace(req), base, []string{req}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	py := venv.Python(dir)
	uninstall := func() { exec.Command(py, "-m", "pip", "uninstall", "-y", "-q", "metalplug").Run() }
	uninstall()
	defer uninstall()
	if out, err := pipInstall(t, py, sdist); err != nil {
		t.Fatalf("pip install %s: %v\n%s", sdist, err, out)
	}
	site, err := exec.Command(py, "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])").Output()
	if err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(strings.TrimSpace(string(site)), "jax_plugins", "metalplug")
	for _, f := range []string{"__init__.py", build.LibraryName(runtime.GOOS)} {
		if _, err := os.Stat(filepath.Join(mod, f)); err != nil {
			t.Fatalf("the wheel did not install %s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(strings.TrimSpace(string(site)), "tensorflow-plugins")); err == nil {
		t.Error("a jax-only install wrote tensorflow-plugins/")
	}
	show, _ := exec.Command(py, "-m", "pip", "show", "metalplug").Output()
	if !strings.Contains(string(show), "Requires: jaxlib") {
		t.Errorf("the installed package does not require jaxlib:\n%s", show)
	}
	var res struct {
		Cases    int      `json:"cases"`
		Failures []string `json:"failures"`
	}
	stderr, err := scriptEnv(t, py, "jax_ops.py", nil, append(os.Environ(), "JAX_PLATFORMS=metalplug,cpu", ask, "PYTHONPATH="), &res)
	if err != nil && len(res.Failures) == 0 {
		t.Fatalf("jax_ops.py after install: %v\n%s", err, stderr)
	}
	for _, f := range res.Failures {
		t.Errorf("jax program differs from jax's CPU: %s", f)
	}
	if res.Cases < 26 {
		t.Errorf("jax_ops.py ran %d cases, want at least 26", res.Cases)
	}
	t.Logf("%d jax programs agree with jax's CPU", res.Cases-len(res.Failures))
}

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
	lib := filepath.Join(strings.TrimSpace(string(site)), "tensorflow-plugins", "libmetalplug.so")
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

// TestInstallWithoutTensorFlow: the build stops with one message saying to
// install TensorFlow first, and nothing is installed.
func TestInstallWithoutTensorFlow(t *testing.T) {
	v := need(t, "METALPLUG_TEST_SDIST")
	dir, err := venv.Ensure("install-test-bare", "", nil, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	py := venv.Python(dir)
	out, err := pipInstall(t, py, v[0])
	if err == nil {
		t.Fatalf("pip install succeeded without TensorFlow:\n%s", out)
	}
	if !strings.Contains(out, "TensorFlow is not installed") || !strings.Contains(out, "install it first") {
		t.Errorf("the failure does not say to install TensorFlow first:\n%s", out)
	}
	if err := exec.Command(py, "-m", "pip", "show", "-q", "metalplug").Run(); err == nil {
		t.Errorf("metalplug is installed after a failed build")
	}
}

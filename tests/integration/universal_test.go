package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/wheels"
)

// TestUniversalWheel builds the universal wheel for the pinned TensorFlow
// (with the JAX-only build beside it), installs it with pip into the venv
// that has TensorFlow and jax, and runs both frameworks in one process as a
// user would:
//   - whichever is imported first, the loader and the jax_plugins module
//     load one build, the one for the running TensorFlow, and both
//     frameworks compute on their device as on their CPU;
//   - with no build for the running TensorFlow, the loader declines with one
//     line naming that TensorFlow, the builds there are and the sdist to
//     install, TensorFlow runs on the CPU, and jax loads the JAX-only build;
//   - when jax has loaded another build, the loader declines rather than
//     start a second Go runtime.
//
// The release's wheel carries a build per matrix release; the test of that
// one, from a package index into users' venvs, is TestUniversalWheelFromAnIndex
// (go tool mage disttest). With METALPLUG_TEST_WHEEL set, the test takes
// that wheel instead of building one (go tool mage wheeltest: the wheel
// `go tool mage wheel` built, on each platform a release publishes for).
func TestUniversalWheel(t *testing.T) {
	r := bothVenv(t)
	py := r.Interpreter.Path
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	wheel := os.Getenv("METALPLUG_TEST_WHEEL")
	if wheel == "" {
		out := t.TempDir()
		u, err := wheels.BuildUniversal(wheels.UniversalOptions{
			Root: root, Dir: out, Releases: []string{r.TensorFlow.Version}, Distribution: r.TensorFlow.Distribution,
			Python: func(string, string, func(string, ...any)) (string, error) { return py, nil },
			Jax:    r, LibDir: filepath.Join(root, "build", "universal-test"), Log: t.Logf,
		})
		if err != nil {
			t.Fatal(err)
		}
		wheel = filepath.Join(out, u.File)
	}
	pip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(py, append([]string{"-m", "pip", "--disable-pip-version-check"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("pip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	pip("uninstall", "-q", "-y", "metalplug") // a run cut short may have left it
	pip("install", "-q", "--no-deps", wheel)
	defer pip("uninstall", "-q", "-y", "metalplug")

	site := filepath.Dir(r.TensorFlow.PackageDir)
	lib := build.LibraryName(r.GOOS)
	tfBuild := filepath.Join(site, wheels.BuildsDir, wheels.TFBuild(r.TensorFlow.Version), lib)
	jaxBuild := filepath.Join(site, wheels.BuildsDir, wheels.JaxBuild, lib)
	loader := filepath.Join(site, "tensorflow-plugins", build.LoaderName(r.GOOS))
	for _, p := range []string{tfBuild, jaxBuild, loader} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("the wheel did not install %s: %v", p, err)
		}
	}
	base := []string{ask, "METALPLUG_TEST_LIB=", "PYTHONPATH=", "METALPLUG_LIBRARY=", "METALPLUG_HOST_STREAM_DELAY_US=1"}
	run := func(t *testing.T, order string, env ...string) (bothResult, string) {
		t.Helper()
		var res bothResult
		stderr, err := scriptArgs(t, py, "both.py", []string{order}, append(base, env...), &res)
		if err != nil {
			t.Fatalf("both.py: %v\n%s", err, stderr)
		}
		t.Logf("%+v", res)
		return res, stderr
	}
	mapped := func(t *testing.T, res bothResult, want string) {
		t.Helper()
		if runtime.GOOS != "linux" {
			return // the mapped files are read from /proc
		}
		if len(res.Libraries) != 1 || res.Libraries[0] != want {
			t.Errorf("builds mapped %v: want %s alone, one Go runtime", res.Libraries, want)
		}
	}

	for _, order := range []string{"tensorflow", "jax"} {
		t.Run(order+" first", func(t *testing.T) {
			res, stderr := run(t, order, "JAX_PLATFORMS=metalplug,cpu")
			if res.TFDevice == "" || res.TFError > 1e-5 {
				t.Errorf("TensorFlow: device %q, error %g\n%s", res.TFDevice, res.TFError, stderr)
			}
			if res.JaxDevice == "" || res.JaxError > 1e-5 {
				t.Errorf("jax: device %q (%s), error %g\n%s", res.JaxDevice, res.JaxKind, res.JaxError, stderr)
			}
			mapped(t, res, tfBuild)
			if runtime.GOOS == "linux" && (len(res.Loaders) != 1 || res.Loaders[0] != loader) {
				t.Errorf("loaders mapped %v: want %s", res.Loaders, loader)
			}
			if !strings.Contains(stderr, "built against TensorFlow "+r.TensorFlow.Version+",") {
				t.Errorf("the TensorFlow build did not say what it was built against:\n%s", stderr)
			}
			if n := strings.Count(stderr, "test hook: each host stream operation waits"); runtime.GOOS != "darwin" && n != 1 {
				t.Errorf("the host driver was made %d times: want one driver for both frameworks\n%s", n, stderr)
			}
		})
	}

	t.Run("no build for this TensorFlow", func(t *testing.T) {
		dir := filepath.Dir(tfBuild)
		elsewhere := filepath.Join(filepath.Dir(dir), "tf-1.0")
		if err := os.Rename(dir, elsewhere); err != nil {
			t.Fatal(err)
		}
		defer os.Rename(elsewhere, dir)
		res, stderr := run(t, "tensorflow", "JAX_PLATFORMS=metalplug,cpu")
		// A release's wheel carries the other releases' builds too.
		line := "metalplug: TensorFlow " + r.TensorFlow.Version + " is running, and this metalplug carries builds for TensorFlow "
		if res.TFDevice != "" || !strings.Contains(stderr, line) || !strings.Contains(stderr, "1.0") || !strings.Contains(stderr, "pip install --force-reinstall --no-deps --no-binary metalplug metalplug") {
			t.Errorf("TensorFlow device %q; want none, and the line %q naming the sdist:\n%s", res.TFDevice, line, stderr)
		}
		if res.JaxDevice == "" || res.JaxError > 1e-5 {
			t.Errorf("jax: device %q, error %g: the JAX-only build should serve it\n%s", res.JaxDevice, res.JaxError, stderr)
		}
		mapped(t, res, jaxBuild)
	})

	t.Run("jax loaded another build", func(t *testing.T) {
		res, stderr := run(t, "jax", "JAX_PLATFORMS=metalplug,cpu", "METALPLUG_LIBRARY="+jaxBuild)
		if res.TFDevice != "" || !strings.Contains(stderr, "jax already loaded "+jaxBuild) {
			t.Errorf("TensorFlow device %q; want none, and the loader saying jax loaded %s:\n%s", res.TFDevice, jaxBuild, stderr)
		}
		if res.JaxDevice == "" {
			t.Errorf("jax has no device\n%s", stderr)
		}
		mapped(t, res, jaxBuild)
	})
}

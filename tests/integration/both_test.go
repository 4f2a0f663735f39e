package integration

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/setup/install"
	"github.com/metalplug/metalplug/setup/probe"
	"github.com/metalplug/metalplug/setup/venv"
)

type bothResult struct {
	TFDevice  string   `json:"tf_device"`
	TFError   float64  `json:"tf_error"`
	JaxDevice string   `json:"jax_device"`
	JaxKind   string   `json:"jax_kind"`
	JaxError  float64  `json:"jax_error"`
	Libraries []string `json:"libraries"` // libmetalplug builds mapped into the process, each with a Go runtime
	Loaders   []string `json:"loaders"`   // the universal wheel's loader, when mapped
	Order     string   `json:"order"`
	// metalplug.stats(), read after both ran
	StatsDriver   string `json:"stats_driver"`
	TFExecutions  int64  `json:"tf_executions"`
	JaxExecutions int64  `json:"jax_executions"`
	JaxCompiles   int64  `json:"jax_compiles"`
}

// TestBothFrameworksInOneProcess builds the library against a venv that has
// TensorFlow and jax (on Python 3.12 or newer), installs it as a user's
// install would (the library once, in tensorflow-plugins/; the jax_plugins
// module finds it there), and in one process runs a TensorFlow op on the
// TensorFlow device and a jitted function on the JAX device, each checked
// against its own CPU, importing TensorFlow first and, in a second process,
// jax first. One library file is mapped, so one Go runtime serves both, and
// one host driver is made: it says so once, through its stream-delay test
// hook (a delay of 1 µs), whichever frontend asks first.
func TestBothFrameworksInOneProcess(t *testing.T) {
	r := bothVenv(t)
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	pin, err := build.ReadPin(root)
	if err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(root, "build", "both", build.LibraryName(r.GOOS))
	if _, err := build.Build(build.Options{Report: r, Root: root, Out: lib, Pin: pin, Log: t.Logf}); err != nil {
		t.Fatal(err)
	}
	wrote, err := install.Install(lib, r)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, p := range wrote {
			os.Remove(p)
		}
	}()
	for _, order := range []string{"tensorflow", "jax"} {
		t.Run(order+" first", func(t *testing.T) {
			var res bothResult
			stderr, err := scriptArgs(t, r.Interpreter.Path, "both.py", []string{order},
				[]string{ask, "METALPLUG_TEST_LIB=", "JAX_PLATFORMS=metalplug,cpu", "PYTHONPATH=", "METALPLUG_HOST_STREAM_DELAY_US=1"}, &res)
			if err != nil {
				t.Fatalf("both.py: %v\n%s", err, stderr)
			}
			if res.TFDevice == "" || res.TFError > 1e-5 {
				t.Errorf("TensorFlow: device %q, error %g", res.TFDevice, res.TFError)
			}
			if res.JaxDevice == "" || res.JaxError > 1e-5 {
				t.Errorf("jax: device %q (%s), error %g", res.JaxDevice, res.JaxKind, res.JaxError)
			}
			if len(res.Libraries) != 1 {
				t.Errorf("libmetalplug mapped from %v: want one file, one Go runtime", res.Libraries)
			}
			// The matmul and the jitted function (with the device_put's
			// copies, which are no programs) are each frontend's own.
			if res.StatsDriver == "" || res.TFExecutions < 1 || res.JaxExecutions < 1 || res.JaxCompiles < 1 {
				t.Errorf("metalplug.stats(): driver %q, TensorFlow %d executions, jax %d executions and %d compiles: want each counted as its own",
					res.StatsDriver, res.TFExecutions, res.JaxExecutions, res.JaxCompiles)
			}
			if n := strings.Count(stderr, "test hook: each host stream operation waits"); runtime.GOOS != "darwin" && n != 1 {
				t.Errorf("the host driver was made %d times: want one driver for both frameworks\n%s", n, stderr)
			}
			t.Logf("%+v", res)
		})
	}
}

// bothVenv makes (or reuses) the venv with the pinned TensorFlow and jax,
// on a Python new enough for jax, and probes it.
func bothVenv(t *testing.T) *probe.Report {
	t.Helper()
	v := need(t, "METALPLUG_TEST_TF_REQUIREMENT", "METALPLUG_TEST_JAX_REQUIREMENT", "METALPLUG_TEST_JAX_BASE")
	tfReq, jaxReq, base := v[0], v[1], v[2]
	dir, err := venv.Ensure("both-"+reqName(tfReq)+"-"+reqName(jaxReq), base, []string{tfReq, jaxReq}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	r, err := probe.Run(venv.Python(dir))
	if err != nil {
		t.Fatal(err)
	}
	if !r.HasTensorFlow() || !r.HasJax() {
		t.Fatalf("the venv has TensorFlow %v and jax %v; want both", r.HasTensorFlow(), r.HasJax())
	}
	return r
}

// reqName makes a venv name part of a requirement.
func reqName(req string) string {
	out := []rune{}
	for _, c := range req {
		switch c {
		case '=', '*', '<', '>', ',':
			if len(out) > 0 && out[len(out)-1] != '-' {
				out = append(out, '-')
			}
		default:
			out = append(out, c)
		}
	}
	for len(out) > 0 && (out[len(out)-1] == '-' || out[len(out)-1] == '.') {
		out = out[:len(out)-1]
	}
	return string(out)
}

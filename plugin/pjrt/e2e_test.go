package pjrt

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	pymodule "github.com/metalplug/metalplug/plugin/pjrt/python"
	statsmodule "github.com/metalplug/metalplug/plugin/python"
)

// PythonEnv names the Python interpreter (3.12 or later, with jax and
// jaxlib installed) the end-to-end test runs jax in. CI provides it; the
// test is skipped without it.
const PythonEnv = "METALPLUG_TEST_PYTHON"

// TestJaxEndToEnd builds the PJRT frontend into a c-shared library
// (internal/testlib: no TensorFlow) and runs testdata/jax_e2e.py in a real
// jax on the host reference driver: the device as jax.devices() shows it,
// device_put and np.asarray of every dtype and of strided views, deletion,
// memory stats, jax.jit through compile and execute, and an op nothing
// translates failing cleanly; then again registered through
// PJRT_NAMES_AND_LIBRARY_PATHS. It also checks
// that an installed plugin with no library, or with no device to offer,
// leaves jax working on CPU.
func TestJaxEndToEnd(t *testing.T) {
	python := os.Getenv(PythonEnv)
	if python == "" {
		t.Skipf("set %s to a Python 3.12+ interpreter with jax and jaxlib installed (for example /tmp/pjrtvenv/bin/python) to run the jax end-to-end test", PythonEnv)
	}
	if testing.Short() {
		t.Skip("builds a shared library and starts jax: not in -short")
	}
	if out, err := exec.Command(python, "-c", "import jax, jaxlib, ml_dtypes; print(jax.__version__, jaxlib.__version__)").CombinedOutput(); err != nil {
		t.Fatalf("%s=%s cannot import jax: %v\n%s", PythonEnv, python, err, out)
	} else {
		t.Logf("jax, jaxlib %s", strings.TrimSpace(string(out)))
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	lib := filepath.Join(dir, "libmetalplug.so")
	build := exec.Command(gobin, "build", "-buildmode=c-shared", "-o", lib, "./internal/testlib")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the test library: %v\n%s", err, out)
	}
	script, err := filepath.Abs("testdata/jax_e2e.py")
	if err != nil {
		t.Fatal(err)
	}

	// The plugin module as installed, with the library next to it.
	withLib := filepath.Join(dir, "with")
	installPlugin(t, withLib, lib)
	// The module alone: the library is nowhere to be found.
	withoutLib := filepath.Join(dir, "without")
	installPlugin(t, withoutLib, "")

	run := func(name string, env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command(python, args...)
		cmd.Env = append(pymodule.CleanEnv(os.Environ()), env...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", name, err, out)
		}
		return string(out)
	}

	t.Run("jax_plugins module", func(t *testing.T) {
		out := run("jax_e2e.py", []string{"PYTHONPATH=" + withLib, "JAX_PLATFORMS=metalplug,cpu", "METALPLUG_HOST_DEVICE=1"}, script)
		if !strings.Contains(out, "\nALL OK") {
			t.Errorf("jax_e2e.py did not pass:\n%s", out)
		}
	})
	t.Run("Python callbacks", func(t *testing.T) {
		callbacks, err := filepath.Abs("testdata/jax_callbacks.py")
		if err != nil {
			t.Fatal(err)
		}
		out := run("jax_callbacks.py", []string{"PYTHONPATH=" + withLib, "JAX_PLATFORMS=metalplug,cpu", "METALPLUG_HOST_DEVICE=1"}, callbacks)
		if !strings.Contains(out, "\nALL OK") {
			t.Errorf("jax_callbacks.py did not pass:\n%s", out)
		}
	})
	t.Run("PJRT_NAMES_AND_LIBRARY_PATHS", func(t *testing.T) {
		out := run("jax_e2e.py", []string{"PJRT_NAMES_AND_LIBRARY_PATHS=metalplug:" + lib, "JAX_PLATFORMS=metalplug,cpu",
			"METALPLUG_HOST_DEVICE=1"}, script)
		if !strings.Contains(out, "ok   jax.jit compiles and executes") || !strings.Contains(out, "\nALL OK") {
			t.Errorf("jax_e2e.py did not pass:\n%s", out)
		}
	})
	t.Run("on the MPSGraph model", func(t *testing.T) {
		model, err := filepath.Abs("testdata/jax_model.py")
		if err != nil {
			t.Fatal(err)
		}
		out := run("jax_model.py", []string{"PYTHONPATH=" + withLib, "JAX_PLATFORMS=metalplug,cpu", "METALPLUG_HOST_DEVICE=1",
			"METALPLUG_DRIVER=metal-model"}, model)
		if !strings.Contains(out, "\nALL OK") {
			t.Errorf("jax_model.py did not pass:\n%s", out)
		}
		if n := strings.Count(out, "runs on the CPU, not the GPU: float64"); n != 1 {
			t.Errorf("jax_model.py's float64 host parts were said %d times, want once:\n%s", n, out)
		}
	})
	t.Run("ordinary programs stay on the GPU (model)", func(t *testing.T) {
		programs, err := filepath.Abs("testdata/jax_gpu_programs.py")
		if err != nil {
			t.Fatal(err)
		}
		out := run("jax_gpu_programs.py", []string{"PYTHONPATH=" + withLib, "JAX_PLATFORMS=metalplug,cpu", "METALPLUG_HOST_DEVICE=1",
			"METALPLUG_DRIVER=metal-model"}, programs)
		if !strings.Contains(out, "\nALL OK") {
			t.Errorf("jax_gpu_programs.py did not pass:\n%s", out)
		}
	})
	// Memory pressure on a 64 MiB device, and a rank-17 array, on both
	// drivers: RESOURCE_EXHAUSTED naming sizes and what is free, and jax
	// goes on; on the model the rank-17 part runs on the CPU (said once),
	// or with METALPLUG_NO_CPU_FALLBACK=1 is an INTERNAL error.
	memory, err := filepath.Abs("testdata/jax_memory.py")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, driver, noCPU string }{
		{"memory pressure (host)", "host", ""},
		{"memory pressure (model)", "metal-model", ""},
		{"memory pressure (model, no CPU fallback)", "metal-model", "1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := run("jax_memory.py", []string{"PYTHONPATH=" + withLib, "JAX_PLATFORMS=metalplug,cpu", "METALPLUG_HOST_DEVICE=1",
				"METALPLUG_HOST_MEMORY_MB=64", "METALPLUG_DRIVER=" + c.driver, "METALPLUG_NO_CPU_FALLBACK=" + c.noCPU}, memory)
			if !strings.Contains(out, "\nALL OK") {
				t.Errorf("jax_memory.py did not pass:\n%s", out)
			}
			const limit = "has 17 dimensions; MPSGraph's tensors have at most 16"
			if n := strings.Count(out, limit); c.driver == "metal-model" && n != 1 {
				t.Errorf("the rank-17 host part was said %d times, want once:\n%s", n, out)
			}
		})
	}
	cpuOnly := "import jax; print([d.platform for d in jax.devices()])"
	t.Run("no library: jax runs on CPU", func(t *testing.T) {
		out := run("no library", []string{"PYTHONPATH=" + withoutLib, "METALPLUG_HOST_DEVICE=1"}, "-c", cpuOnly)
		if !strings.Contains(out, "['cpu']") {
			t.Errorf("with the module but no library:\n%s", out)
		}
	})
	t.Run("no device: jax runs on CPU", func(t *testing.T) {
		out := run("no device", []string{"PYTHONPATH=" + withLib}, "-c", cpuOnly)
		if !strings.Contains(out, "['cpu']") || strings.Contains(out, "metalplug") {
			t.Errorf("without METALPLUG_HOST_DEVICE, the plugin must not register:\n%s", out)
		}
	})
	t.Run("CPU stays the default", func(t *testing.T) {
		out := run("priority", []string{"PYTHONPATH=" + withLib, "METALPLUG_HOST_DEVICE=1"}, "-c",
			"import jax; print(jax.default_backend(), sorted({d.platform for d in jax.devices('metalplug')}))")
		if !strings.Contains(out, "cpu ['metalplug']") {
			t.Errorf("with JAX_PLATFORMS unset, CPU must stay the default and metalplug be reachable:\n%s", out)
		}
	})
}

// installPlugin lays out jax_plugins/metalplug under root as the installer
// does (no jax_plugins/__init__.py: a namespace package), with lib copied
// next to the module when given.
func installPlugin(t *testing.T, root, lib string) {
	t.Helper()
	pkg := filepath.Join(root, "jax_plugins", "metalplug")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("python", "jax_plugins", "metalplug", "__init__.py"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "__init__.py"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	// The metalplug module (metalplug.stats()), as every install has it.
	stats := filepath.Join(root, filepath.FromSlash(statsmodule.ModulePath))
	if err := os.MkdirAll(filepath.Dir(stats), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stats, statsmodule.Module, 0o644); err != nil {
		t.Fatal(err)
	}
	if lib == "" {
		return
	}
	data, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	name := "libmetalplug.so"
	if runtime.GOOS == "darwin" {
		name = "libmetalplug.dylib" // what the module looks for there
	}
	if err := os.WriteFile(filepath.Join(pkg, name), data, 0o755); err != nil {
		t.Fatal(err)
	}
}

package integration

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

// withoutVars is the test process's environment with every variable named
// removed, so that a script's setting can only come from the script.
func withoutVars(names ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, n := range names {
			drop = drop || n == name
		}
		if !drop {
			env = append(env, kv)
		}
	}
	return append(env, "TF_CPP_MIN_LOG_LEVEL=2")
}

// The variables that change how the plugin loads.
var loadVars = []string{"METALPLUG_HOST_DEVICE", "METALPLUG_DISABLE", "METALPLUG_SKIP_VERSION_CHECK", "METALPLUG_SYNCHRONOUS"}

// TestSettingsFromPython sets each load-time variable only with os.environ
// inside the script, as a notebook does, in a process whose own environment
// lacks it: the library reads the live C environment, so each takes effect.
func TestSettingsFromPython(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB", "METALPLUG_TEST_LIB_MISMATCH")
	py, lib, mismatch := v[0], v[1], v[2]
	hostAsk := []string{}
	if runtime.GOOS != "darwin" {
		hostAsk = []string{"METALPLUG_HOST_DEVICE=1"}
	}
	cases := []struct {
		name      string
		lib       string
		set       []string
		devices   int
		stderrHas string
	}{
		{"METALPLUG_HOST_DEVICE offers the host device", lib, []string{"METALPLUG_HOST_DEVICE=1"}, 1, "on the host driver"},
		{"METALPLUG_DISABLE declines", lib, append([]string{"METALPLUG_DISABLE=1"}, hostAsk...), 0, "METALPLUG_DISABLE=1 is set"},
		{"METALPLUG_SKIP_VERSION_CHECK loads a mismatched build", mismatch, append([]string{"METALPLUG_SKIP_VERSION_CHECK=1"}, hostAsk...), 1, "built against TensorFlow " + mismatchVersion},
		{"METALPLUG_SYNCHRONOUS=1 forces synchronous execution", lib, append([]string{"METALPLUG_SYNCHRONOUS=1"}, hostAsk...), 1, "synchronous execution, forced by METALPLUG_SYNCHRONOUS"},
		{"METALPLUG_SYNCHRONOUS=0 forces asynchronous execution", lib, append([]string{"METALPLUG_SYNCHRONOUS=0"}, hostAsk...), 1, "asynchronous execution, forced by METALPLUG_SYNCHRONOUS"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if runtime.GOOS == "darwin" && strings.HasPrefix(c.name, "METALPLUG_HOST_DEVICE") {
				t.Skip("on macOS the Metal device is offered without asking")
			}
			env := append(withoutVars(loadVars...), "METALPLUG_TEST_LIB="+c.lib)
			for _, kv := range env {
				for _, n := range loadVars {
					if strings.HasPrefix(kv, n+"=") {
						t.Fatalf("the script's environment already holds %s", kv)
					}
				}
			}
			var r devicesResult
			stderr, err := scriptEnv(t, py, "devices.py", c.set, env, &r)
			if err != nil {
				t.Fatalf("devices.py %v: %v\n%s", c.set, err, stderr)
			}
			if len(r.Devices) != c.devices {
				t.Errorf("set from Python %v: %d devices, want %d\n%s", c.set, len(r.Devices), c.devices, stderr)
			}
			if !strings.Contains(stderr, c.stderrHas) {
				t.Errorf("set from Python %v: the plugin did not say %q:\n%s", c.set, c.stderrHas, stderr)
			}
			if c.devices == 1 && !loadOnly && (r.MatmulError == nil || *r.MatmulError > 1e-5) {
				t.Errorf("MatMul error %v", r.MatmulError)
			}
		})
	}
}

type panicsResult struct {
	Devices []string `json:"devices"`
	Steps   map[string]struct {
		OK    bool   `json:"ok"`
		Type  string `json:"type"`
		Error string `json:"error"`
	} `json:"steps"`
	CPUAfter *float64 `json:"cpu_after"`
}

// TestPanicsStayInside forces a panic (METALPLUG_TEST_PANIC) in each
// exported function that TensorFlow calls in an ordinary workload, and runs
// that workload: the process must live, TensorFlow must still compute on
// the CPU, and the panic must reach the user, as a Python exception of the
// right class or, where TensorFlow gives the call no way to fail, as one
// line on stderr. plugin/tf's TestEveryExportSurvivesAPanic calls every
// export directly, these included; the others are never called by
// TensorFlow 2.21 in a workload like this one (it does not free BFC regions,
// destroy streams or events before exit, poll stream status, wait on
// events across streams, memset, or make host callbacks here), and the
// variable kernels exist only where TensorFlow exports their API.
func TestPanicsStayInside(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB")
	if loadOnly {
		t.Skip("needs a device that runs kernels")
	}
	// wantError: the steps whose Python exception must name the panic, and
	// its class.
	cases := []struct {
		export    string
		devices   int
		wantError map[string]string
		steps     []string // the workload's steps to run; all when empty
	}{
		{export: "SE_InitPlugin", devices: 0, wantError: nil},
		{export: "goDeviceCount", devices: 0, wantError: nil},
		{export: "TF_InitKernel", devices: 1, wantError: nil},
		{export: "TF_InitGraph", devices: 1, wantError: nil},
		{export: "goOptimize", devices: 1, wantError: nil},
		{export: "goKernelCreate", devices: 1, wantError: map[string]string{"matmul": "InternalError", "fill": "InternalError"}},
		{export: "goKernelCompute", devices: 1, wantError: map[string]string{"matmul": "InternalError", "function": "InternalError"}},
		{export: "goKernelDelete", devices: 1, wantError: nil},
		// An allocation that fails is one TensorFlow's allocator retries,
		// smaller, and (when every one fails) for ever: the first panics.
		{export: "goAllocate@1", devices: 1, wantError: nil},
		// A device of no memory: each allocation is retried for seconds.
		{export: "goAllocatorStats", devices: 1, wantError: map[string]string{"matmul": "InternalError"}, steps: []string{"matmul"}},
		{export: "goCreateStream", devices: 1, wantError: map[string]string{"matmul": "InternalError"}},
		{export: "goStreamDependency", devices: 1, wantError: map[string]string{"matmul": "InternalError"}},
		{export: "goMemcpy", devices: 1, wantError: map[string]string{"matmul": "InternalError"}},
		{export: "goSynchronizeAll", devices: 1, wantError: map[string]string{"matmul": "InternalError"}},
		{export: "goCreateEvent", devices: 1, wantError: nil},
		{export: "goEventStatus", devices: 1, wantError: nil},
		{export: "metalplug_op_counts", devices: 1, wantError: map[string]string{"op_counts": "RuntimeError"}},
	}
	for _, c := range cases {
		t.Run(c.export, func(t *testing.T) {
			var r panicsResult
			stderr, err := scriptArgs(t, v[0], "panics.py", c.steps, []string{ask, "METALPLUG_TEST_LIB=" + v[1], "METALPLUG_TEST_PANIC=" + c.export}, &r)
			if err != nil {
				t.Fatalf("the process did not survive a panic in %s: %v\n%s", c.export, err, tailOf(stderr))
			}
			name, _, _ := strings.Cut(c.export, "@")
			panicText := "forced panic in " + name
			if r.CPUAfter == nil || *r.CPUAfter != 6 {
				t.Errorf("TensorFlow no longer computes on the CPU after a panic in %s: %v", c.export, r.CPUAfter)
			}
			if len(r.Devices) != c.devices {
				t.Errorf("%d devices, want %d", len(r.Devices), c.devices)
			}
			seen := strings.Contains(stderr, panicText)
			for name, s := range r.Steps {
				if !s.OK && strings.Contains(s.Error, panicText) {
					seen = true
				}
				if want, ok := c.wantError[name]; ok {
					switch {
					case s.OK:
						t.Errorf("step %s succeeded despite the panic in %s", name, c.export)
					case want != "" && s.Type != want:
						t.Errorf("step %s raised %s (%s), want %s", name, s.Type, s.Error, want)
					}
				}
			}
			if !seen {
				t.Errorf("the panic in %s reached neither a Python exception nor stderr:\n%s", c.export, tailOf(stderr))
			}
		})
	}
}

func tailOf(s string) string {
	if len(s) > 3000 {
		return "..." + s[len(s)-3000:]
	}
	return s
}

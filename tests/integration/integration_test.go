// Package integration runs the plugin inside a real TensorFlow: each case is
// a Python script in a subprocess (TensorFlow holds a device for the whole
// process, and a declined load must be told apart from an aborted one).
// `go tool mage test` builds the libraries and sets the environment:
//
//	METALPLUG_TEST_PYTHON         an interpreter with the pinned TensorFlow
//	METALPLUG_TEST_LIB            the library built against it
//	METALPLUG_TEST_LIB_MISMATCH   the same library stamped with another version
//	METALPLUG_TEST_SDIST          the sdist, for the install test
package integration

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The device the tests expect: TensorFlow's GPU backed by the Metal driver on
// macOS, the host reference driver's own device type elsewhere (asked for by
// METALPLUG_HOST_DEVICE=1), on macOS too with METALPLUG_TEST_HOST_DEVICE=1
// (a hosted Mac runner may expose no usable GPU). The Python side reads it
// from the environment.
var deviceType, ask = func() (string, string) {
	if runtime.GOOS == "darwin" && os.Getenv("METALPLUG_TEST_HOST_DEVICE") != "1" {
		return "GPU", "METALPLUG_TEST_DEVICE_TYPE=GPU"
	}
	return "METALPLUG_HOST", "METALPLUG_HOST_DEVICE=1"
}()

// The version the mismatched library claims, and the minor of the TensorFlow
// the tests run (the pin, which the weekly job moves), as `go tool mage test`
// sets them.
var (
	mismatchVersion = envOr("METALPLUG_TEST_MISMATCH_VERSION", "2.20.0")
	runningMinor    = envOr("METALPLUG_TEST_TF_MINOR", "2.21")
)

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// loadOnly (METALPLUG_TEST_LOAD_ONLY=1) limits the load tests to loading and
// declining, for machines whose GPU cannot run kernels (hosted macOS runners).
var loadOnly = os.Getenv("METALPLUG_TEST_LOAD_ONLY") == "1"

// onDevice reports whether a tensor's device string names the plugin device.
func onDevice(device string) bool { return strings.HasSuffix(device, "device:"+deviceType+":0") }

func need(t *testing.T, names ...string) []string {
	t.Helper()
	var vals []string
	for _, n := range names {
		v := os.Getenv(n)
		if v == "" {
			if os.Getenv("METALPLUG_REQUIRE_INTEGRATION") == "1" {
				t.Fatalf("%s is not set", n)
			}
			t.Skipf("%s is not set: run `go tool mage test`", n)
		}
		vals = append(vals, v)
	}
	return vals
}

// script runs py/<name> with extra environment and returns its RESULT JSON,
// its stderr and its exit error.
func script(t *testing.T, python, name string, env []string, result any) (stderr string, err error) {
	t.Helper()
	return scriptArgs(t, python, name, nil, env, result)
}

// scriptArgs is script with command-line arguments for the script.
func scriptArgs(t *testing.T, python, name string, args, env []string, result any) (stderr string, err error) {
	t.Helper()
	return scriptEnv(t, python, name, args, append(append(os.Environ(), "TF_CPP_MIN_LOG_LEVEL=2"), env...), result)
}

// scriptEnv is scriptArgs with the script's whole environment given.
func scriptEnv(t *testing.T, python, name string, args, environ []string, result any) (stderr string, err error) {
	t.Helper()
	cmd := exec.Command(python, append([]string{filepath.Join("py", name)}, args...)...)
	cmd.Env = environ
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	for _, line := range strings.Split(out.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "RESULT "); ok && result != nil {
			if jerr := json.Unmarshal([]byte(rest), result); jerr != nil {
				t.Fatalf("%s: bad result %q: %v", name, rest, jerr)
			}
			return errb.String(), err
		}
	}
	if err == nil {
		err = &exec.ExitError{}
	}
	t.Logf("%s printed no result; stdout:\n%s\nstderr:\n%s", name, out.String(), errb.String())
	return errb.String(), err
}

type devicesResult struct {
	Devices      []string `json:"devices"`
	MatmulDevice string   `json:"matmul_device"`
	MatmulError  *float64 `json:"matmul_error"`
}

func TestDeviceAppearsAndRunsMatMul(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB")
	var r devicesResult
	stderr, err := script(t, v[0], "devices.py", []string{ask, "METALPLUG_TEST_LIB=" + v[1], "METALPLUG_DEBUG=1"}, &r)
	if err != nil {
		t.Fatalf("devices.py: %v\n%s", err, stderr)
	}
	// `go tool mage test` runs this a second time with the Metal driver on
	// the model of MPSGraph: the device must say so.
	if drv := os.Getenv("METALPLUG_DRIVER"); drv != "" && !strings.Contains(stderr, "on the "+drv+" driver") {
		t.Fatalf("METALPLUG_DRIVER=%s, but the plugin did not say it runs on that driver:\n%s", drv, stderr)
	}
	if len(r.Devices) != 1 || r.Devices[0] != "/physical_device:"+deviceType+":0" {
		t.Fatalf("devices = %v, want [/physical_device:%s:0]", r.Devices, deviceType)
	}
	if !onDevice(r.MatmulDevice) || r.MatmulError == nil || *r.MatmulError > 1e-5 {
		t.Fatalf("MatMul ran on %q with error %v", r.MatmulDevice, r.MatmulError)
	}
}

func TestOpsMatchCPU(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB")
	var r map[string]struct {
		Device string   `json:"device"`
		Error  string   `json:"error"`
		MaxAbs *float64 `json:"max_abs_error"`
		Shape  []int    `json:"shape"`
		DType  string   `json:"dtype"`
	}
	if stderr, err := script(t, v[0], "ops.py", []string{ask, "METALPLUG_TEST_LIB=" + v[1]}, &r); err != nil {
		t.Fatalf("ops.py: %v\n%s", err, stderr)
	}
	if len(r) < 31 {
		t.Fatalf("ops.py reported %d cases, want 31", len(r))
	}
	for name, c := range r {
		switch {
		case c.Error != "":
			t.Errorf("%s: %s", name, c.Error)
		case !onDevice(c.Device):
			t.Errorf("%s ran on %q, not the plugin device", name, c.Device)
		case c.MaxAbs == nil || *c.MaxAbs > 1e-4:
			t.Errorf("%s (%s%v): max abs error %v against the CPU", name, c.DType, c.Shape, c.MaxAbs)
		}
	}
}

func TestOpWithoutKernelRaises(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB")
	var r map[string]string
	if stderr, err := script(t, v[0], "unsupported.py", []string{ask, "METALPLUG_TEST_LIB=" + v[1]}, &r); err != nil {
		t.Fatalf("unsupported.py: %v\n%s", err, stderr)
	}
	for _, op := range []string{"Igamma", "MatMul_float64"} {
		if !strings.HasPrefix(r[op], "raised") {
			t.Errorf("%s with soft placement off: %q, want it to raise", op, r[op])
		}
	}
	if !strings.HasSuffix(r["soft_float64_device"], "device:CPU:0") {
		t.Errorf("float64 MatMul with soft placement on ran on %q, want the CPU", r["soft_float64_device"])
	}
}

// TestDeclinePaths: each way the plugin declines keeps TensorFlow alive with
// no device and says why in one line; the override loads it anyway.
func TestDeclinePaths(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB", "METALPLUG_TEST_LIB_MISMATCH")
	py, lib, mismatch := v[0], v[1], v[2]
	cases := []struct {
		name      string
		env       []string
		devices   int
		stderrHas []string
	}{
		{"version mismatch", []string{ask, "METALPLUG_TEST_LIB=" + mismatch}, 0,
			[]string{"built for TensorFlow " + mismatchVersion + " but TensorFlow " + runningMinor, "offering no device"}},
		{"disabled", []string{ask, "METALPLUG_DISABLE=1", "METALPLUG_TEST_LIB=" + lib}, 0,
			[]string{"METALPLUG_DISABLE=1"}},
		{"no host device asked", []string{"METALPLUG_TEST_LIB=" + lib}, 0,
			[]string{"METALPLUG_HOST_DEVICE=1"}},
		{"skip version check", []string{ask, "METALPLUG_SKIP_VERSION_CHECK=1", "METALPLUG_TEST_LIB=" + mismatch}, 1,
			[]string{"built against TensorFlow " + mismatchVersion}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "no host device asked" && runtime.GOOS == "darwin" {
				t.Skip("on macOS the Metal device is offered without asking")
			}
			var r devicesResult
			stderr, err := script(t, py, "devices.py", c.env, &r)
			if err != nil {
				t.Fatalf("the process did not survive: %v\n%s", err, stderr)
			}
			if loadOnly && c.devices == 1 && len(r.Devices) == 0 && strings.Contains(stderr, "no Metal device") {
				// A machine without a usable GPU (a hosted macOS runner): the
				// override got past the version check, and the plugin said why
				// it has no device.
				return
			}
			if len(r.Devices) != c.devices {
				t.Fatalf("%d devices, want %d (stderr: %s)", len(r.Devices), c.devices, stderr)
			}
			for _, s := range c.stderrHas {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr does not say %q:\n%s", s, stderr)
				}
			}
			if c.devices == 1 && !loadOnly && (r.MatmulError == nil || *r.MatmulError > 1e-5) {
				t.Errorf("MatMul error %v", r.MatmulError)
			}
		})
	}
}

// TestKerasTrainingMatchesCPU trains with Adam on the device and on the CPU
// from one seed: the loss must fall, nothing may be NaN, and the trained
// weights must agree within float32 tolerance.
func TestKerasTrainingMatchesCPU(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB")
	for _, model := range []string{"mlp", "cnn"} {
		t.Run(model, func(t *testing.T) {
			var r struct {
				DeviceLoss    []float64        `json:"device_loss"`
				CPULoss       []float64        `json:"cpu_loss"`
				ForwardDevice string           `json:"forward_device"`
				MaxWeightDiff float64          `json:"max_weight_diff"`
				NaN           bool             `json:"nan"`
				DeviceOps     map[string]int64 `json:"device_ops"`
			}
			cmd := []string{ask, "METALPLUG_TEST_LIB=" + v[1]}
			stderr, err := scriptArgs(t, v[0], "train.py", []string{model}, cmd, &r)
			if err != nil {
				t.Fatalf("train.py %s: %v\n%s", model, err, stderr)
			}
			t.Logf("%s: device loss %.4f -> %.4f, CPU loss %.4f -> %.4f, max weight difference %.2e",
				model, r.DeviceLoss[0], r.DeviceLoss[len(r.DeviceLoss)-1], r.CPULoss[0], r.CPULoss[len(r.CPULoss)-1], r.MaxWeightDiff)
			if r.NaN || r.DeviceLoss[len(r.DeviceLoss)-1] >= r.DeviceLoss[0] {
				t.Errorf("training on the device did not converge: loss %v, NaN %v", r.DeviceLoss, r.NaN)
			}
			if !onDevice(r.ForwardDevice) {
				t.Errorf("the forward pass ran on %q", r.ForwardDevice)
			}
			t.Logf("%s: kernels that ran on the device: %v", model, r.DeviceOps)
			for _, op := range []string{"MatMul", "BiasAdd"} {
				if r.DeviceOps[op] == 0 {
					t.Errorf("%s never ran on the device during training", op)
				}
			}
			if r.MaxWeightDiff > 1e-3 {
				t.Errorf("trained weights differ from the CPU run by %g", r.MaxWeightDiff)
			}
		})
	}
}

// TestTwoThreadsTrain trains two models on the device from two threads.
func TestTwoThreadsTrain(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB")
	var r map[string]struct {
		Loss []float64 `json:"loss"`
		NaN  bool      `json:"nan"`
	}
	stderr, err := script(t, v[0], "threads.py", []string{ask, "METALPLUG_TEST_LIB=" + v[1]}, &r)
	if err != nil {
		t.Fatalf("threads.py: %v\n%s", err, stderr)
	}
	if len(r) != 2 {
		t.Fatalf("%d models finished, want 2 (stderr: %s)", len(r), stderr)
	}
	for name, m := range r {
		if m.NaN || len(m.Loss) == 0 || m.Loss[len(m.Loss)-1] >= m.Loss[0] {
			t.Errorf("%s: loss %v, NaN %v", name, m.Loss, m.NaN)
		}
	}
}

// TestMemoryPressure, on a device of 128 MiB: an eager op whose output is
// larger than the device, and a Keras training step whose activations do
// not fit, each raise ResourceExhaustedError once, naming the size and
// what is free, in bounded time (TensorFlow's allocator waits up to 10 s
// for memory to be freed before it gives up on an output); after each,
// ordinary work on the device succeeds in the same process, and so does a
// small training step. On the host driver the step's intermediates count
// against the device's memory as on a GPU; on the model of MPSGraph its
// command buffer fails as Metal's does when memory runs out.
func TestMemoryPressure(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB")
	if loadOnly {
		t.Skip("needs a device that runs kernels")
	}
	type attempt struct {
		Raised  bool    `json:"raised"`
		Type    string  `json:"type"`
		Message string  `json:"message"`
		Seconds float64 `json:"seconds"`
		Result  struct {
			Value  [][]float64 `json:"value"`
			Device string      `json:"device"`
			Loss   []float64   `json:"loss"`
		} `json:"result"`
	}
	var r map[string]attempt
	stderr, err := script(t, v[0], "memory.py", []string{ask, "METALPLUG_HOST_MEMORY_MB=128", "METALPLUG_TEST_LIB=" + v[1]}, &r)
	if err != nil {
		t.Fatalf("memory.py did not carry on after running out of memory: %v\n%s", err, tailOf(stderr))
	}
	exhausted := func(name string, words ...string) {
		t.Helper()
		a, ok := r[name]
		switch {
		case !ok:
			t.Errorf("%s: not run", name)
		case !a.Raised:
			t.Errorf("%s: succeeded on a device too small for it", name)
		case a.Type != "ResourceExhaustedError":
			t.Errorf("%s: raised %s (%s), want ResourceExhaustedError", name, a.Type, a.Message)
		case a.Seconds > 60:
			t.Errorf("%s: took %.0f s to fail", name, a.Seconds)
		}
		for _, w := range words {
			if !strings.Contains(a.Message, w) {
				t.Errorf("%s: error %q does not say %q", name, a.Message, w)
			}
		}
	}
	works := func(name string) {
		t.Helper()
		a := r[name]
		if a.Raised || len(a.Result.Value) != 2 || a.Result.Value[1][1] != 50 || !onDevice(a.Result.Device) {
			t.Errorf("%s: ordinary work after running out of memory: %+v", name, a)
		}
	}
	works("matmul_before")
	exhausted("too_big", "Fill", "float32[64,1024,1024], 268435456 bytes", "of the device's 134217728 bytes free")
	works("matmul_after_too_big")
	// The step's op is a cluster of the graph pass (its program's
	// intermediates do not fit), or with clustering off one of the ops in
	// it (its output does not); either way with shapes and what is free.
	exhausted("fit_too_big", "metalplug: ", "bytes free", "float32[8192,")
	if os.Getenv("METALPLUG_DRIVER") == "metal-model" {
		exhausted("fit_too_big", "Insufficient Memory")
	}
	works("matmul_after_fit")
	if a := r["fit_small"]; a.Raised || len(a.Result.Loss) != 1 || math.IsNaN(a.Result.Loss[0]) {
		t.Errorf("a small training step after the one that did not fit: %+v", a)
	}
}

// TestMetalErrorsReachTensorFlow: an error of the Metal driver's, on the
// model of MPSGraph (here a program the GPU cannot run whole, under
// METALPLUG_NO_CPU_FALLBACK=1), reaches TensorFlow as an error of its class
// (INTERNAL: the plugin cannot do it, the caller did nothing wrong) naming
// the op, its inputs' shapes and dtypes and the instruction at fault, and
// the process goes on. TestMemoryPressure's run on the model covers the
// model's RESOURCE_EXHAUSTED.
func TestMetalErrorsReachTensorFlow(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB")
	if loadOnly {
		t.Skip("needs a device that runs kernels")
	}
	var r map[string]struct {
		Raised  bool        `json:"raised"`
		Type    string      `json:"type"`
		Message string      `json:"message"`
		Value   [][]float64 `json:"value"`
		Device  string      `json:"device"`
	}
	stderr, err := script(t, v[0], "metal_errors.py", []string{"METALPLUG_HOST_DEVICE=1", "METALPLUG_TEST_DEVICE_TYPE=METALPLUG_HOST",
		"METALPLUG_DRIVER=metal-model", "METALPLUG_NO_CPU_FALLBACK=1", "METALPLUG_TEST_LIB=" + v[1]}, &r)
	if err != nil {
		t.Fatalf("metal_errors.py crashed: %v\n%s", err, tailOf(stderr))
	}
	c := r["cholesky"]
	if !c.Raised || c.Type != "InternalError" {
		t.Errorf("Cholesky without the CPU: %+v, want InternalError", c)
	}
	for _, w := range []string{"Cholesky: compiling for the metal-model driver", "(inputs float32[3,3])", "METALPLUG_NO_CPU_FALLBACK=1", "cholesky: MPSGraph has no Cholesky"} {
		if !strings.Contains(c.Message, w) {
			t.Errorf("error %q does not say %q", c.Message, w)
		}
	}
	if m := r["matmul_after"]; len(m.Value) != 2 || m.Value[1][1] != 3 || !strings.HasSuffix(m.Device, "device:METALPLUG_HOST:0") {
		t.Errorf("a matmul after the error: %+v", m)
	}
}

// TestWrongInputIsATensorFlowError: bad shapes, attributes and sizes come back
// as errors naming the op, the shapes and the dtypes, and the process lives.
func TestWrongInputIsATensorFlowError(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB")
	type result struct {
		Raised      bool      `json:"raised"`
		Message     string    `json:"message"`
		Type        string    `json:"type"`
		MatmulShape []int     `json:"matmul_shape"`
		Sum         []float64 `json:"sum"`
		Device      string    `json:"device"`
	}
	var r map[string]result
	// A small device, so that "more than the device has" is quick to reach.
	stderr, err := script(t, v[0], "errors.py", []string{ask, "METALPLUG_HOST_MEMORY_MB=128", "METALPLUG_TEST_LIB=" + v[1]}, &r)
	if err != nil {
		t.Fatalf("errors.py crashed: %v\n%s", err, stderr)
	}
	want := map[string][]string{
		"matmul_shapes":     {"MatMul", "[2,3]", "[4,5]", "float32"},
		"add_broadcast":     {"AddV2", "[2,3]", "[4]", "float32"},
		"reshape_size":      {"Reshape", "[3,4]", "5"},
		"sum_axis":          {"Sum", "axis 2", "rank 2"},
		"conv_strides_attr": {"Conv2D", "strides"},
		"conv_padding_attr": {"Conv2D", "FULL"},
		"transpose_perm":    {"Transpose", "perm"},
		"too_big":           {"Fill"},
	}
	for name, words := range want {
		c, ok := r[name]
		if !ok || !c.Raised {
			t.Errorf("%s: no error raised (%+v)", name, c)
			continue
		}
		for _, w := range words {
			if !strings.Contains(c.Message, w) {
				t.Errorf("%s: error %q does not mention %q", name, c.Message, w)
			}
		}
	}
	if r["too_big"].Type != "ResourceExhaustedError" {
		t.Errorf("an output past the device's memory raised %s, want ResourceExhaustedError", r["too_big"].Type)
	}
	e := r["empty"]
	if len(e.MatmulShape) != 2 || e.MatmulShape[0] != 0 || e.MatmulShape[1] != 4 || len(e.Sum) != 4 || !onDevice(e.Device) {
		t.Errorf("empty tensors: %+v", e)
	}
}

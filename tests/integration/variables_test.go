package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/metalplug/metalplug/plugin/tf/lower"
	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/setup/probe"
	"github.com/metalplug/metalplug/setup/venv"
)

// The device's variable and optimizer kernels (plugin/tf/variables.go) exist
// only where TensorFlow exports tensorflow/c/kernels_experimental.h. The
// pinned release (2.21) does not, nor does 2.20.0 (TensorFlow issue 126374),
// nor, on Linux, the tensorflow-cpu 2.19.1 wheel; 2.18.1 does, on Linux too.
// So the kernels are tested against a venv of their own with 2.18.1 and a
// library built for it.
const apiPin = "2.18"

// apiRequirement is what the venv installs: tensorflow-cpu has no macOS
// wheels, where the tensorflow wheel is the CPU one.
func apiRequirement() (requirement, venvName string) {
	if runtime.GOOS == "darwin" {
		return "tensorflow==2.18.1", "tensorflow-2.18"
	}
	return "tensorflow-cpu==2.18.1", "tensorflow-cpu-2.18"
}

var apiBuild struct {
	once        sync.Once
	python, lib string
	version     string
	err         error
}

// apiLibrary makes (or reuses) the venv with a TensorFlow that exports the
// experimental kernel API, probes it, and builds the library against it into
// build/tf-2.18/. It runs with the other integration tests (`go tool mage
// test`), since the first run downloads TensorFlow (about 230 MB).
func apiLibrary(t *testing.T) (python, lib string) {
	t.Helper()
	need(t, "METALPLUG_TEST_PYTHON")
	apiBuild.once.Do(func() {
		root, err := filepath.Abs(filepath.Join("..", ".."))
		if err != nil {
			apiBuild.err = err
			return
		}
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
			apiBuild.err = fmt.Errorf("no source tree at %s: %v", root, err)
			return
		}
		req, name := apiRequirement()
		dir, err := venv.Ensure(name, "", []string{req}, t.Logf)
		if err != nil {
			apiBuild.err = err
			return
		}
		py := venv.Python(dir)
		r, err := probe.Run(py)
		if err != nil {
			apiBuild.err = err
			return
		}
		if !r.ResourceVariableAPI() {
			apiBuild.err = fmt.Errorf("%s %s does not export kernels_experimental.h after all", r.TensorFlow.Distribution, r.TensorFlow.Version)
			return
		}
		out := filepath.Join(root, "build", "tf-"+apiPin, build.LibraryName(r.GOOS))
		if _, err := build.Build(build.Options{Report: r, Root: root, Out: out, Pin: apiPin, Log: t.Logf}); err != nil {
			apiBuild.err = err
			return
		}
		apiBuild.python, apiBuild.lib, apiBuild.version = py, out, r.TensorFlow.Version
	})
	if apiBuild.err != nil {
		req, _ := apiRequirement()
		t.Fatalf("TensorFlow with the experimental kernel API (%s): %v", req, apiBuild.err)
	}
	return apiBuild.python, apiBuild.lib
}

type registryResult struct {
	Devices    []string            `json:"devices"`
	DeviceType string              `json:"device_type"`
	Kernels    map[string][]string `json:"kernels"`
}

func hasDevice(types []string) bool {
	for _, d := range types {
		if d == deviceType {
			return true
		}
	}
	return false
}

// TestVariableKernelsWithExperimentalAPI: against a TensorFlow that exports
// the API, the device registers its variable and optimizer kernels and runs
// asynchronously; each op matches the CPU and runs on the device.
func TestVariableKernelsWithExperimentalAPI(t *testing.T) {
	py, lib := apiLibrary(t)
	env := []string{ask, "METALPLUG_TEST_LIB=" + lib}

	t.Run("registered and asynchronous", func(t *testing.T) {
		var r registryResult
		stderr, err := scriptArgs(t, py, "variables.py", []string{"registry"}, env, &r)
		if err != nil {
			t.Fatalf("variables.py registry: %v\n%s", err, stderr)
		}
		want := "built against TensorFlow " + apiBuild.version + ", asynchronous execution)"
		if !strings.Contains(stderr, want) {
			t.Errorf("the load line does not say %q:\n%s", want, stderr)
		}
		if !hasDevice(r.Kernels["MatMul"]) {
			t.Fatalf("the kernel registry lists no %s MatMul (%v): it cannot tell what the device registered", deviceType, r.Kernels["MatMul"])
		}
		for _, op := range lower.VariableOps() {
			if !hasDevice(r.Kernels[op]) {
				t.Errorf("%s has no %s kernel: %v", op, deviceType, r.Kernels[op])
			}
		}
	})

	t.Run("ops match the CPU", func(t *testing.T) { opsMatchCPU(t, py, env) })
	// Every copy and program waits 5 ms on its stream: all the work of a
	// kernel (copies on write, the update, the copy back) completes long after
	// the kernel returned, and must still come out right.
	t.Run("ops match the CPU with delayed streams", func(t *testing.T) {
		opsMatchCPU(t, py, append(env, "METALPLUG_SYNCHRONOUS=0", "METALPLUG_HOST_STREAM_DELAY_US=5000"))
	})

	t.Run("wrong input is an error naming op, shapes and dtypes", func(t *testing.T) {
		var r map[string]struct {
			Raised  bool      `json:"raised"`
			Message string    `json:"message"`
			Value   []float64 `json:"value"`
		}
		stderr, err := scriptArgs(t, py, "variables.py", []string{"errors"}, env, &r)
		if err != nil {
			t.Fatalf("variables.py errors: %v\n%s", err, stderr)
		}
		want := map[string][]string{
			"assign_add_shape":       {"AssignAddVariableOp", "float32[3]", "float32[4]"},
			"adam_grad_shape":        {"ResourceApplyAdam", "grad", "float32[2,2]", "float32[3]"},
			"momentum_lr_not_scalar": {"ResourceApplyMomentum", "lr", "scalar", "float32[3]"},
			"scatter_updates_shape":  {"ResourceScatterUpdate", "updates", "float32[5]", "int32[2]"},
			// A variable that was never assigned: TensorFlow's own message
			// ("Invalid variable reference") comes first; the point is that
			// the process lives (TF_AssignUpdateVariable would abort it).
			"assign_add_missing":       {"AssignAddVariableOp"},
			"gradient_descent_missing": {"ResourceApplyGradientDescent"},
			"gather_missing":           {"ResourceGather"},
		}
		for name, words := range want {
			c := r[name]
			if !c.Raised {
				t.Errorf("%s: no error raised", name)
				continue
			}
			for _, w := range words {
				if !strings.Contains(c.Message, w) {
					t.Errorf("%s: error %q does not mention %q", name, c.Message, w)
				}
			}
		}
		if v := r["still_works"].Value; len(v) != 3 || v[0] != 1 {
			t.Errorf("after the errors, assign_add gave %v, want [1 1 1]", v)
		}
	})

	t.Run("keras adam matches the CPU", func(t *testing.T) {
		r := kerasRun(t, py, env)
		for _, op := range []string{"AssignAddVariableOp", "AssignSubVariableOp", "AssignVariableOp"} {
			if r.DeviceOps[op] == 0 {
				t.Errorf("%s never ran on the device during training: %v", op, r.DeviceOps)
			}
		}
	})

	// With every stream operation delayed, work completes long after the
	// kernel that enqueued it returned: the device's own variable kernels
	// order themselves on the stream, so asynchronous execution stays right.
	t.Run("asynchronous with delayed streams", func(t *testing.T) {
		r := raceRun(t, py, append(env, "METALPLUG_SYNCHRONOUS=0", "METALPLUG_HOST_STREAM_DELAY_US=20000"))
		if r.NaN || r.AccumulateMaxError > 0 || r.AdamMaxError > 1e-5 {
			t.Errorf("asynchronous updates with delayed streams are wrong: %+v", r)
		}
		if r.DeviceOps["AssignAddVariableOp"] == 0 {
			t.Errorf("the updates did not run on the device: %v", r.DeviceOps)
		}
	})
}

// opsMatchCPU runs variables.py ops: every case must run its op on the
// device and match the CPU within the dtype's tolerance, and every op must
// have a passing case.
func opsMatchCPU(t *testing.T, py string, env []string) {
	t.Helper()
	var r map[string]struct {
		Op        string   `json:"op"`
		DType     string   `json:"dtype"`
		Error     string   `json:"error"`
		Ran       int      `json:"ran_on_device"`
		MaxAbs    *float64 `json:"max_abs_error"`
		MaxRel    *float64 `json:"max_rel_error"`
		NaN       bool     `json:"nan"`
		Tolerance float64  `json:"tolerance"`
	}
	stderr, err := scriptArgs(t, py, "variables.py", []string{"ops"}, env, &r)
	if err != nil {
		t.Fatalf("variables.py ops: %v\n%s", err, stderr)
	}
	covered := map[string]bool{}
	names := make([]string, 0, len(r))
	for name := range r {
		names = append(names, name)
	}
	sort.Strings(names)
	worst, worstAbs := map[string]float64{}, map[string]float64{}
	for _, name := range names {
		c := r[name]
		switch {
		case c.Error != "":
			t.Errorf("%s: %s", name, c.Error)
		case c.Ran == 0:
			t.Errorf("%s: %s never ran on the device", name, c.Op)
		case c.NaN || c.MaxRel == nil || *c.MaxRel > c.Tolerance:
			t.Errorf("%s: max relative error %v (absolute %v, NaN %v) against the CPU, tolerance %g", name, deref(c.MaxRel), deref(c.MaxAbs), c.NaN, c.Tolerance)
		default:
			covered[c.Op] = true
			if w, ok := worst[c.DType]; !ok || *c.MaxRel > w {
				worst[c.DType] = *c.MaxRel
			}
			if c.MaxAbs != nil && *c.MaxAbs > worstAbs[c.DType] {
				worstAbs[c.DType] = *c.MaxAbs
			}
		}
	}
	t.Logf("%d cases; largest error against the CPU by dtype: relative %v, absolute %v", len(r), worst, worstAbs)
	for _, op := range lower.VariableOps() {
		if !covered[op] {
			t.Errorf("no passing case ran %s", op)
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

type kerasResult struct {
	DeviceLoss    []float64        `json:"device_loss"`
	CPULoss       []float64        `json:"cpu_loss"`
	MaxWeightDiff float64          `json:"max_weight_diff"`
	NaN           bool             `json:"nan"`
	DeviceOps     map[string]int64 `json:"device_ops"`
}

func kerasRun(t *testing.T, py string, env []string) kerasResult {
	t.Helper()
	var r kerasResult
	stderr, err := scriptArgs(t, py, "variables.py", []string{"keras"}, env, &r)
	if err != nil {
		t.Fatalf("variables.py keras: %v\n%s", err, stderr)
	}
	if len(r.DeviceLoss) == 0 || len(r.CPULoss) == 0 {
		t.Fatalf("no loss curve: %+v", r)
	}
	t.Logf("device loss %.4f -> %.4f, CPU loss %.4f -> %.4f, max weight difference %.2e; device ops %v",
		r.DeviceLoss[0], r.DeviceLoss[len(r.DeviceLoss)-1], r.CPULoss[0], r.CPULoss[len(r.CPULoss)-1], r.MaxWeightDiff, r.DeviceOps)
	if r.NaN || r.DeviceLoss[len(r.DeviceLoss)-1] >= r.DeviceLoss[0] {
		t.Errorf("training on the device did not converge: loss %v, NaN %v", r.DeviceLoss, r.NaN)
	}
	if r.MaxWeightDiff > 1e-4 {
		t.Errorf("trained weights differ from the CPU run by %g", r.MaxWeightDiff)
	}
	// The model's products ran on the device: alone, or in a cluster.
	if r.DeviceOps["MatMul"] == 0 && r.DeviceOps["_MetalplugCluster"] == 0 {
		t.Errorf("neither MatMul nor a cluster ran on the device: %v", r.DeviceOps)
	}
	return r
}

type raceResult struct {
	AccumulateMaxError float64          `json:"accumulate_max_error"`
	ExpectedFirst      float64          `json:"accumulate_expected_first"`
	GotFirst           float64          `json:"accumulate_got_first"`
	AdamMaxError       float64          `json:"adam_max_error"`
	NaN                bool             `json:"nan"`
	DeviceOps          map[string]int64 `json:"device_ops"`
}

func raceRun(t *testing.T, py string, env []string) raceResult {
	t.Helper()
	var r raceResult
	stderr, err := scriptArgs(t, py, "variables.py", []string{"race"}, env, &r)
	if err != nil {
		t.Fatalf("variables.py race: %v\n%s", err, stderr)
	}
	t.Logf("assign_add of a device product: max error %g (first element %g, want %g); Adam: max error %g; NaN %v; device ops %v",
		r.AccumulateMaxError, r.GotFirst, r.ExpectedFirst, r.AdamMaxError, r.NaN, r.DeviceOps)
	return r
}

// TestNoVariableKernelsWithoutExperimentalAPI: the pinned TensorFlow does not
// export the API, so the device registers none of those kernels, and runs
// synchronously, saying why.
func TestNoVariableKernelsWithoutExperimentalAPI(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB")
	var r registryResult
	stderr, err := scriptArgs(t, v[0], "variables.py", []string{"registry"}, []string{ask, "METALPLUG_TEST_LIB=" + v[1]}, &r)
	if err != nil {
		t.Fatalf("variables.py registry: %v\n%s", err, stderr)
	}
	if want := "synchronous execution, because this TensorFlow does not export the kernels_experimental.h resource-variable API"; !strings.Contains(stderr, want) {
		t.Errorf("the load line does not say %q:\n%s", want, stderr)
	}
	if !hasDevice(r.Kernels["MatMul"]) {
		t.Fatalf("the kernel registry lists no %s MatMul (%v): it cannot tell what the device registered", deviceType, r.Kernels["MatMul"])
	}
	for _, op := range lower.VariableOps() {
		if hasDevice(r.Kernels[op]) {
			t.Errorf("%s has a %s kernel, but this TensorFlow lacks the API it needs: %v", op, deviceType, r.Kernels[op])
		}
	}
}

// TestAsynchronousRaceWithoutExperimentalAPI shows the race that synchronous
// mode closes. Without the experimental API, TensorFlow's DEVICE_DEFAULT
// AssignAddVariableOp and AssignSubVariableOp update device variables on the
// host thread, straight from device memory, as soon as the executor runs
// them; nothing orders them behind the work our kernels enqueued. With
// METALPLUG_SYNCHRONOUS=0 an update then reads its value before the device
// has computed it. The host driver's stream-delay hook makes the device's
// work late every time, so the failure does not depend on luck; the same
// script with METALPLUG_SYNCHRONOUS=1 (the default there) is exactly right.
func TestAsynchronousRaceWithoutExperimentalAPI(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB")
	if runtime.GOOS == "darwin" {
		t.Skip("the stream-delay hook is in the host driver")
	}
	delay := "METALPLUG_HOST_STREAM_DELAY_US=20000"
	run := func(t *testing.T, sync string) raceResult {
		var r raceResult
		stderr, err := scriptArgs(t, v[0], "variables.py", []string{"race"}, []string{ask, "METALPLUG_TEST_LIB=" + v[1], delay, "METALPLUG_SYNCHRONOUS=" + sync}, &r)
		if err != nil {
			t.Fatalf("variables.py race: %v\n%s", err, stderr)
		}
		if !strings.Contains(stderr, "test hook: each host stream operation waits") {
			t.Fatalf("%s ignores METALPLUG_HOST_STREAM_DELAY_US: it predates the hook, rebuild it\n%s", v[1], stderr)
		}
		t.Logf("METALPLUG_SYNCHRONOUS=%s: assign_add of a device product: max error %g (first element %g, want %g); Adam: max error %g; NaN %v",
			sync, r.AccumulateMaxError, r.GotFirst, r.ExpectedFirst, r.AdamMaxError, r.NaN)
		for _, op := range lower.VariableOps() {
			if r.DeviceOps[op] != 0 {
				t.Errorf("%s ran on the device, but this TensorFlow has no API for it", op)
			}
		}
		return r
	}
	t.Run("asynchronous is wrong", func(t *testing.T) {
		r := run(t, "0")
		if r.AccumulateMaxError < 1 {
			t.Errorf("assign_add read the device's product after it was written (max error %g): the race did not show", r.AccumulateMaxError)
		}
		if r.AdamMaxError < 1e-3 && !r.NaN {
			t.Errorf("Adam steps matched the CPU (max error %g): the race did not show", r.AdamMaxError)
		}
	})
	t.Run("synchronous is right", func(t *testing.T) {
		r := run(t, "1")
		if r.NaN || r.AccumulateMaxError != 0 || r.AdamMaxError > 1e-5 {
			t.Errorf("synchronous updates are wrong: assign_add max error %g, Adam max error %g, NaN %v", r.AccumulateMaxError, r.AdamMaxError, r.NaN)
		}
	})
}

package integration

import "testing"

// realModels are the architectures TestRealModelsMatchFloat64 runs, as
// NAME:SIZE:BATCH: keras.applications with weights=None, small enough for
// the push run (about 5 s each on the host driver here).
var realModels = []string{"MobileNetV2:96:4", "DenseNet121:32:4"}

// TestRealModelsMatchFloat64: forward and gradients of real architectures
// in training mode (batch norm, depthwise and strided convolutions, ReLU6,
// concatenations), on the device and on TensorFlow's CPU in float32, each
// against the same model in float64: the device's error is at most ten
// times the CPU's, for the logits and for all gradients. The sweep verifies
// ops one at a time; this verifies that they compose. Measured here: with
// the per-channel sum that added its rows one after another, MobileNetV2
// was 2.9 times the CPU's error forward and 7.2 times in its gradients;
// with the pairwise sum 0.8 and 4.2 (its ReLU6 masks flip on both devices);
// DenseNet121 1.0 and 1.2.
func TestRealModelsMatchFloat64(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB")
	var r map[string]struct {
		ForwardDevice   float64 `json:"forward_device"`
		ForwardCPU      float64 `json:"forward_cpu"`
		GradientsDevice float64 `json:"gradients_device"`
		GradientsCPU    float64 `json:"gradients_cpu"`
		Error           string  `json:"error"`
	}
	if stderr, err := scriptArgs(t, v[0], "models.py", realModels, []string{ask, "METALPLUG_TEST_LIB=" + v[1]}, &r); err != nil {
		t.Fatalf("models.py: %v\n%s", err, stderr)
	}
	for _, m := range realModels {
		c, ok := r[m]
		switch {
		case !ok:
			t.Errorf("%s: no result", m)
		case c.Error != "":
			t.Errorf("%s: %s", m, c.Error)
		default:
			t.Logf("%s: forward %.2e (CPU %.2e), gradients %.2e (CPU %.2e) from float64", m, c.ForwardDevice, c.ForwardCPU, c.GradientsDevice, c.GradientsCPU)
			if c.ForwardCPU <= 0 || c.GradientsCPU <= 0 || c.ForwardDevice > 10*c.ForwardCPU || c.GradientsDevice > 10*c.GradientsCPU {
				t.Errorf("%s: the device's error is more than ten times the CPU's", m)
			}
		}
	}
}

// TestReductionsAndContractionsAsAccurateAsCPU: every reduction kind over
// every axis pattern models use (inner, outer, all but the channels,
// spatial, middle, all), the softmaxes and losses, batch norm's statistics,
// and the contractions (MatMul, BatchMatMul, Conv2D and both its gradients,
// the depthwise ones) at model sizes, on the device and on TensorFlow's CPU
// in float32, each against float64: the device's error is at most the
// CPU's plus two float32 roundings (2^-23 of the result's largest
// magnitude), the slack of two different summation orders that are each
// within a rounding or two of exact. Measured before the fix: a sum over a
// batch of 16 rows 1.7 times the CPU's error (a running sum over the rows)
// and Conv2D's input gradient 1.3 to 1.7 times (runs of 256 products where
// the CPU's are the 128 output channels). The largest gaps left, under
// 2^-23 over three seeds, are Softmax's and the full sums' (L2Loss and the
// norm over all), where both devices are within a rounding or so of exact.
func TestReductionsAndContractionsAsAccurateAsCPU(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB")
	var r struct {
		Cases []struct {
			Case   string  `json:"case"`
			Device float64 `json:"device"`
			CPU    float64 `json:"cpu"`
		} `json:"cases"`
	}
	if stderr, err := script(t, v[0], "accuracy.py", []string{ask, "METALPLUG_TEST_LIB=" + v[1]}, &r); err != nil {
		t.Fatalf("accuracy.py: %v\n%s", err, stderr)
	}
	if len(r.Cases) != 52 {
		t.Fatalf("accuracy.py ran %d cases, want every one of its 52", len(r.Cases))
	}
	for _, c := range r.Cases {
		if c.Device > c.CPU+0x1p-23 {
			t.Errorf("%s: the device's error %.3g exceeds the CPU's %.3g by more than two roundings", c.Case, c.Device, c.CPU)
		} else {
			t.Logf("%-45s device %.2e  CPU %.2e", c.Case, c.Device, c.CPU)
		}
	}
}

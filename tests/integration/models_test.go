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

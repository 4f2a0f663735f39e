package integration

import (
	"encoding/json"
	"testing"
)

// TestGraphPass runs each pattern of the graph pass in a
// tf.compat.v1.Session with full tracing (py/graph_pass.py): with the pass,
// the fused op and none of the ops it replaced ran on the device, and the
// result is the CPU's; where the convolution or product is itself fetched,
// the chain is left alone; with METALPLUG_GRAPH_PASS=0 nothing is fused.
// No Transpose runs anywhere (the layout optimizer is off for the device).
func TestGraphPass(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB")
	for _, pass := range []string{"on", "off"} {
		t.Run("pass "+pass, func(t *testing.T) {
			// The fusions themselves, not the clusters they would go into.
			env := []string{ask, "METALPLUG_TEST_LIB=" + v[1], "METALPLUG_CLUSTER=0"}
			if pass == "off" {
				env = append(env, "METALPLUG_GRAPH_PASS=0")
			}
			var r struct {
				PassOn   bool                       `json:"pass_on"`
				Cases    map[string]json.RawMessage `json:"cases"`
				Problems []string                   `json:"problems"`
			}
			if stderr, err := script(t, v[0], "graph_pass.py", env, &r); err != nil {
				t.Fatalf("graph_pass.py: %v\n%s", err, stderr)
			}
			if r.PassOn != (pass == "on") || len(r.Cases)+len(r.Problems) < 16 || (r.PassOn && r.Cases["keras"] == nil) {
				t.Fatalf("graph_pass.py: pass on %v, %d cases, problems %v; want 16 cases", r.PassOn, len(r.Cases), r.Problems)
			}
			for _, p := range r.Problems {
				t.Error(p)
			}
		})
	}
}

// TestKerasTrainsTheSameWithTheGraphPass trains the CNN of train.py with the
// pass on and off: both match the CPU, and only the first ran fused
// convolutions.
func TestKerasTrainsTheSameWithTheGraphPass(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB")
	type result struct {
		DeviceLoss    []float64        `json:"device_loss"`
		CPULoss       []float64        `json:"cpu_loss"`
		MaxWeightDiff float64          `json:"max_weight_diff"`
		NaN           bool             `json:"nan"`
		DeviceOps     map[string]int64 `json:"device_ops"`
	}
	losses := map[string][]float64{}
	for _, pass := range []string{"on", "off"} {
		env := []string{ask, "METALPLUG_TEST_LIB=" + v[1], "METALPLUG_CLUSTER=0"}
		if pass == "off" {
			env = append(env, "METALPLUG_GRAPH_PASS=0")
		}
		var r result
		if stderr, err := scriptArgs(t, v[0], "train.py", []string{"cnn"}, env, &r); err != nil {
			t.Fatalf("train.py cnn, pass %s: %v\n%s", pass, err, stderr)
		}
		fused := r.DeviceOps["_FusedConv2D"]
		t.Logf("pass %s: loss %.4f -> %.4f, max weight difference from the CPU %.2e, _FusedConv2D ran %d times, Conv2D %d",
			pass, r.DeviceLoss[0], r.DeviceLoss[len(r.DeviceLoss)-1], r.MaxWeightDiff, fused, r.DeviceOps["Conv2D"])
		if r.NaN || r.MaxWeightDiff > 1e-3 {
			t.Errorf("pass %s: NaN %v, weights %g from the CPU's", pass, r.NaN, r.MaxWeightDiff)
		}
		if (pass == "on") != (fused > 0) {
			t.Errorf("pass %s: _FusedConv2D ran %d times", pass, fused)
		}
		losses[pass] = r.DeviceLoss
	}
	on, off := losses["on"], losses["off"]
	for i := range min(len(on), len(off)) {
		if d := on[i] - off[i]; d > 1e-4 || d < -1e-4 {
			t.Errorf("epoch %d: loss %g with the pass, %g without", i, on[i], off[i])
		}
	}
}

// TestClusters runs py/cluster.py: tf.functions (a gradient, a reshape by a
// shape computed on the host, split outputs, a fetched intermediate, a
// while loop, a cond) and a Keras fit, each with clustering on and
// METALPLUG_CLUSTER=0 in one process: both match the CPU and each other,
// clusters ran only with it on, and fewer kernels ran per call with it on.
func TestClusters(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB")
	var r struct {
		Cases    map[string]json.RawMessage `json:"cases"`
		Problems []string                   `json:"problems"`
	}
	if stderr, err := script(t, v[0], "cluster.py", []string{ask, "METALPLUG_TEST_LIB=" + v[1]}, &r); err != nil {
		t.Fatalf("cluster.py: %v\n%s", err, stderr)
	}
	if len(r.Cases)+len(r.Problems) < 7 {
		t.Fatalf("cluster.py: %d cases, problems %v; want 7 cases", len(r.Cases), r.Problems)
	}
	for name, c := range r.Cases {
		t.Logf("%s: %s", name, c)
	}
	for _, p := range r.Problems {
		t.Error(p)
	}
}

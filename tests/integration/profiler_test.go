package integration

import (
	"os"
	"strings"
	"testing"
)

// TestProfilerTimeline runs a Keras fit and an eager MatMul under
// tf.profiler.experimental.start/stop (py/profiler.py) and reads the XSpace
// TensorFlow wrote with TensorFlow's own protobuf classes: the device has a
// plane; its events are the kernels by TensorFlow's "node name:op type"
// (a cluster's op type followed by its member ops, "_MetalplugCluster(
// MatMul*2+...)") and the copies by direction, none unnamed, in order and not overlapping
// within each stream's line.
func TestProfilerTimeline(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB")
	var r struct {
		Files  int      `json:"files"`
		Planes []string `json:"planes"`
		Lines  []struct {
			Name   string `json:"name"`
			Events []struct {
				Name     string `json:"name"`
				StartPs  int64  `json:"start_ps"`
				Duration int64  `json:"duration_ps"`
			} `json:"events"`
		} `json:"lines"`
	}
	if stderr, err := script(t, v[0], "profiler.py", []string{ask, "METALPLUG_TEST_LIB=" + v[1]}, &r); err != nil {
		t.Fatalf("profiler.py: %v\n%s", err, stderr)
	}
	if r.Files != 1 || len(r.Lines) == 0 {
		t.Fatalf("%d xplane files, planes %v, %d lines of the device", r.Files, r.Planes, len(r.Lines))
	}
	seen := map[string]bool{}
	total := 0
	for _, l := range r.Lines {
		var end int64
		for i, e := range l.Events {
			total++
			switch {
			case strings.HasPrefix(e.Name, "Memcpy"):
				seen[e.Name] = true
			case strings.Contains(e.Name, ":_MetalplugCluster("):
				// A cluster is one event, named by its member ops.
				seen["_MetalplugCluster"] = true
				seen["cluster with MatMul"] = seen["cluster with MatMul"] || strings.Contains(e.Name, "MatMul")
			case strings.Contains(e.Name, ":"):
				seen[e.Name[strings.LastIndexByte(e.Name, ':')+1:]] = true
			default:
				t.Errorf("%s: event %d is named %q, not by a TensorFlow op's name and type", l.Name, i, e.Name)
			}
			if e.Duration <= 0 || e.StartPs < end {
				t.Errorf("%s: event %d (%s) starts at %d ps, before the one before ends (%d), or lasts %d ps", l.Name, i, e.Name, e.StartPs, end, e.Duration)
			}
			end = e.StartPs + e.Duration
		}
	}
	wants := []string{"MatMul", "AddV2", "MemcpyHostToDevice", "MemcpyDeviceToHost"}
	if os.Getenv("METALPLUG_CLUSTER") != "0" {
		wants = append(wants, "_MetalplugCluster", "cluster with MatMul")
	} else if seen["_MetalplugCluster"] {
		t.Error("a cluster ran with METALPLUG_CLUSTER=0")
	}
	for _, want := range wants {
		if !seen[want] {
			t.Errorf("no %s event on the device's plane", want)
		}
	}
	t.Logf("%d events on %d lines of the device's plane; planes %v", total, len(r.Lines), r.Planes)
}

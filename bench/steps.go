package bench

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// The training-step section counts what decides a step's speed on a Mac:
// per step, the TensorFlow kernels called, the programs the driver ran (one
// MPSGraph dispatch each on Metal), the waits for the device, the programs
// compiled after warm-up, the parts run on the host, and the bytes of
// outputs TensorFlow allocated on the device. The host driver's rows come
// from the timed cases; the Metal driver's from RunModelSteps, where
// MPSGraph's work is done by the model, so only its counts are reported.

// Dispatch cost of one MPSGraph execution on Apple silicon, as published:
// PyTorch's MPS backend measured 19.2-20.7 µs of dispatch for a one-element
// MPSGraph op on an M1 Pro (pytorch/pytorch issue 148219) and about 15 µs
// to encode a compiled MPSGraphExecutable on an M1 Max (issue 82707).
const (
	macDispatchLow  = 15e-6
	macDispatchHigh = 20e-6
	macDispatchSrc  = "PyTorch's MPS backend: about 15 µs to encode a compiled MPSGraphExecutable on an M1 Max (pytorch/pytorch issue 82707), 19.2–20.7 µs of dispatch for a one-element MPSGraph op on an M1 Pro (issue 148219)"
)

// StepCount is one training step's counts on one driver, with clustering
// on or off.
type StepCount struct {
	ID, Title, Driver string
	Clustering        string // "on" or "off"
	PerStep           map[string]float64
}

// StepOptions say how to count the training steps on the model.
type StepOptions struct {
	Root, Python, Lib string
	Steps             int // counted steps per case; 0 means 1
	Log               func(format string, args ...any)
}

// stepLine is a --counts-only line of bench/py/bench_worker.py.
type stepLine struct {
	Kind       string             `json:"kind"`
	ID         string             `json:"id"`
	Title      string             `json:"title"`
	Driver     string             `json:"driver"`
	Clustering bool               `json:"clustering"`
	PerStep    map[string]float64 `json:"per_step"`
	Error      string             `json:"error"`
}

// RunModelSteps counts the training steps, clustering on and off, on the
// Metal driver's lowering over the model of MPSGraph: one process, the
// device alone, two warm-up steps, then o.Steps counted ones.
func RunModelSteps(o StepOptions) ([]StepCount, error) {
	if o.Steps <= 0 {
		o.Steps = 1
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	w := Options{Root: o.Root}.withDefaults().worker()
	cmd := exec.CommandContext(ctx, o.Python, w, "--counts-only", "--warmup", "2", "--steps", fmt.Sprint(o.Steps))
	cmd.Env = append(workerEnv(o.Lib, ""), "METALPLUG_DRIVER=metal-model")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	o.Log("bench: training steps on the model of MPSGraph")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("the model's training steps: %v\n%s", err, lastLines(stderr.String(), 15))
	}
	var counts []StepCount
	var werr string
	if err := workerLines(bytes.NewReader(out), func(_ string, l stepLine) error {
		switch l.Kind {
		case "steps":
			if l.Driver != "metal-model" {
				return fmt.Errorf("the model's training steps ran on %q", l.Driver)
			}
			counts = append(counts, StepCount{ID: l.ID, Title: l.Title, Driver: l.Driver, Clustering: onOff(l.Clustering), PerStep: l.PerStep})
		case "error":
			werr = l.Error
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if werr != "" || len(counts) == 0 {
		return nil, fmt.Errorf("the model's training steps: %s\n%s", orDash(werr), lastLines(stderr.String(), 15))
	}
	return counts, nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// steps are the report's training-step counts: the host driver's timed
// cases, then the model's.
func (r *Report) steps() []StepCount {
	var out []StepCount
	for _, c := range r.Cases {
		if c.PerStep != nil {
			out = append(out, StepCount{ID: c.ID, Title: c.Title, Driver: "host", Clustering: c.Clustering, PerStep: c.PerStep})
		}
	}
	return append(out, r.ModelSteps...)
}

// stepsMarkdown is the training-step section.
func (r *Report) stepsMarkdown(w func(string, ...any)) {
	steps := r.steps()
	if len(steps) == 0 {
		return
	}
	w("## Training steps: what a Mac pays per step\n\n")
	w("Per SGD step (`train_on_batch` in `tf.function`), from `metalplug.stats()` and the op counters, after %d warm-up steps: TensorFlow kernel calls on the device, programs the driver ran (one MPSGraph dispatch each on Metal), waits of the host for the device, programs compiled after warm-up (must be 0), program parts run on the host, and bytes of kernel outputs TensorFlow allocated on the device (a cluster keeps its intermediates inside its program). ", r.Opts.Warmup)
	w("Each step runs with clustering on (the default: the graph pass groups device subgraphs into `_MetalplugCluster` nodes, one program each) and off (`…_nocluster`, METALPLUG_CLUSTER=0). ")
	w("`host` is the reference driver, whose times are given beside TensorFlow's CPU for scale; `metal-model` is the Metal driver's lowering with MPSGraph's work done by the model on the CPU, counted and not timed. ")
	w("The Mac estimate is the dispatch cost alone, device executions × 15–20 µs (%s), before any arithmetic or wait.\n\n", macDispatchSrc)
	w("| Case | Clustering | Driver | Kernel calls | Executions | Waits | Compiles after warm-up | Host segments | Outputs | Mac dispatch estimate | Reference driver step | TensorFlow CPU step |\n|---|:---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range steps {
		p := s.PerStep
		dev, cpu := "–", "–"
		if c, ok := r.caseByID(s.ID); ok && s.Driver == "host" {
			dev, cpu = dur(c.Device.Median), dur(c.CPU.Median)
		}
		title := strings.TrimSuffix(s.Title, ", clustering off")
		w("| %s `%s` | %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.1f MB | %s–%s | %s | %s |\n", title, s.ID, s.Clustering, s.Driver,
			p["kernel_calls"], p["device_executions"], p["waits"], p["compiles"], p["host_segments"], p["output_bytes"]/1e6,
			dur(p["device_executions"]*macDispatchLow), dur(p["device_executions"]*macDispatchHigh), dev, cpu)
	}
	w("\nWhat bounds the clustered counts: nodes TensorFlow's own kernels run stay outside clusters (variable reads and updates on this TensorFlow, which has no resource-variable C API; TensorList ops in loops; loop counters, whose int32 additions have no device neighbour to join), and so do stateful ops, nodes TensorFlow must preserve, and a node whose host input another member computes. A while loop's body is one cluster per iteration.\n\n")
}

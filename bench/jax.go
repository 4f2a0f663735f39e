package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// JaxOptions say how to run the JAX cases: the jax venv's interpreter and
// the library built for its jaxlib.
type JaxOptions struct {
	Root, Python, Lib string
	Runs              int                              // whole runs (processes); 0 means 3
	Reps              int                              // timed calls per case, device and run; 0 means 20
	Log               func(format string, args ...any) `json:"-"`
}

// JaxReport is what the JAX cases measured: the device (the PJRT plugin on
// the host driver) against jax's own CPU backend, in one process.
type JaxReport struct {
	Jax, Jaxlib, Python string
	Cases               []Case
}

// RunJax runs the JAX cases: o.Runs processes of bench/py/jax_bench_worker.py,
// each alternating device and CPU call by call.
func RunJax(o JaxOptions) (*JaxReport, error) {
	if o.Runs == 0 {
		o.Runs = 3
	}
	if o.Reps == 0 {
		o.Reps = 20
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	rep := &JaxReport{}
	var runs [][]caseLine
	for i := range o.Runs {
		o.Log("bench: JAX run %d of %d", i+1, o.Runs)
		ready, lines, err := runJaxWorker(o)
		if err != nil {
			return nil, err
		}
		rep.Jax, rep.Jaxlib, rep.Python = ready.Jax, ready.Jaxlib, ready.Python
		runs = append(runs, lines)
	}
	rep.Cases = aggregate(runs, false)
	return rep, nil
}

func runJaxWorker(o JaxOptions) (ready struct{ Jax, Jaxlib, Python string }, lines []caseLine, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.Python, filepath.Join(o.Root, "bench", "py", "jax_bench_worker.py"), "--reps", fmt.Sprint(o.Reps))
	cmd.Env = append(os.Environ(), "PJRT_NAMES_AND_LIBRARY_PATHS=metalplug:"+o.Lib, "JAX_PLATFORMS=metalplug,cpu",
		"METALPLUG_HOST_DEVICE=1", "TF_CPP_MIN_LOG_LEVEL=2")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return ready, nil, fmt.Errorf("the JAX worker: %v\n%s", err, lastLines(stderr.String(), 15))
	}
	if err := workerLines(bytes.NewReader(out), func(l string, c caseLine) error {
		switch c.Kind {
		case "ready":
			var r struct{ Jax, Jaxlib, Python string }
			json.Unmarshal([]byte(l), &r)
			ready = r
		case "start":
			o.Log("bench:   %s", c.ID)
		case "case":
			lines = append(lines, c)
		}
		return nil
	}); err != nil {
		return ready, nil, fmt.Errorf("the JAX worker: %w", err)
	}
	if len(lines) == 0 {
		return ready, nil, fmt.Errorf("the JAX worker measured nothing:\n%s", lastLines(stderr.String(), 15))
	}
	return ready, lines, nil
}

// markdownJax is the JAX section of BENCHMARKS.md.
func (j *JaxReport) markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("## JAX\n\n")
	w("jax %s (jaxlib %s, Python %s): the PJRT plugin on the host driver against jax's own CPU backend (XLA), ", j.Jax, j.Jaxlib, j.Python)
	w("alternating call by call in one process; every call ends with its result ready (`block_until_ready`). ")
	w("`jax_compile` times lowering and compiling a function jax has not seen (on the device: reading the StableHLO artifact, translating it and compiling the IR; on the CPU: XLA's compiler). ")
	w("Times are the median over runs of each run's median; ratio = CPU time / device time.\n\n")
	w("| Case | Device (host driver) | jax CPU | CPU/device ratio (min–max) | Reps × runs | Max relative difference |\n|---|---:|---:|---:|---:|---:|\n")
	for _, c := range j.Cases {
		reps := 0
		if len(c.Runs) > 0 {
			reps = c.Runs[0].Reps
		}
		diff := "–"
		if c.ID != "jax_compile" {
			diff = fmt.Sprintf("%.2g", c.MaxRelDiff)
		}
		w("| %s `%s` | %s | %s | %s | %d × %d | %s |\n", c.Title, c.ID, dur(c.Device.Median), dur(c.CPU.Median), ratio(c.Ratio), reps, len(c.Runs), diff)
	}
	w("\n")
	return b.String()
}

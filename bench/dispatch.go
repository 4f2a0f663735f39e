package bench

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The dispatch section measures what every op pays besides its arithmetic,
// per frontend and per driver: on the host driver, and on the Metal
// driver's own Go code with MPSGraph's work done by the model
// (METALPLUG_DRIVER=metal-model), which is the code a Mac runs around each
// dispatch. Besides the time over the framework's own CPU in the same
// process it counts, per op, what the library did: Go allocations, calls
// into C, hand-offs to a stream's thread, the caller's waits
// (metalplug.stats()).

// DispatchDrivers are the drivers the dispatch section runs on.
var DispatchDrivers = []string{"host", "metal-model"}

// DispatchFrontend is one frontend's interpreter and library.
type DispatchFrontend struct {
	Name        string // "tensorflow" or "jax"
	Python, Lib string
}

// DispatchOptions say how to run the dispatch section.
type DispatchOptions struct {
	Root      string
	Frontends []DispatchFrontend
	Runs      int                              // processes per frontend and driver; 0 means 3
	Ops       int                              // ops per timed repetition; 0 means 2000
	Log       func(format string, args ...any) `json:"-"`
}

// DispatchRow is one case of one frontend on one driver.
type DispatchRow struct {
	Frontend, Version, Driver, ID, Title string
	Device, CPU                          Stat // seconds per op: median over runs of the run medians
	PerOp                                map[string]float64
}

// DispatchReport is the dispatch section's measurements.
type DispatchReport struct {
	Runs int
	Rows []DispatchRow
}

// dispatchLine is one line of bench/py/dispatch_worker.py.
type dispatchLine struct {
	Kind     string             `json:"kind"`
	ID       string             `json:"id"`
	Title    string             `json:"title"`
	Driver   string             `json:"driver"`
	Version  string             `json:"version"`
	Device   []float64          `json:"device"`
	CPU      []float64          `json:"cpu"`
	PerOp    map[string]float64 `json:"per_op"`
	Frontend string             `json:"frontend"`
}

// RunDispatch runs the dispatch section.
func RunDispatch(o DispatchOptions) (*DispatchReport, error) {
	if o.Runs <= 0 {
		o.Runs = 3
	}
	if o.Ops <= 0 {
		o.Ops = 2000
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	rep := &DispatchReport{Runs: o.Runs}
	for _, f := range o.Frontends {
		for _, drv := range DispatchDrivers {
			runs := map[string][]dispatchLine{}
			var order []string
			for i := range o.Runs {
				o.Log("bench: dispatch, %s on %s, run %d of %d", f.Name, drv, i+1, o.Runs)
				lines, err := runDispatchWorker(o, f, drv)
				if err != nil {
					return nil, fmt.Errorf("dispatch, %s on %s: %w", f.Name, drv, err)
				}
				for _, l := range lines {
					if l.Driver != drv {
						return nil, fmt.Errorf("dispatch, %s on %s: the library ran on %q", f.Name, drv, l.Driver)
					}
					if _, ok := runs[l.ID]; !ok {
						order = append(order, l.ID)
					}
					runs[l.ID] = append(runs[l.ID], l)
				}
			}
			for _, id := range order {
				rep.Rows = append(rep.Rows, dispatchRow(f.Name, drv, runs[id]))
			}
		}
	}
	return rep, nil
}

// dispatchRow folds one case's runs: times as the median over runs of each
// run's median, counts as the median over runs.
func dispatchRow(frontend, drv string, lines []dispatchLine) DispatchRow {
	row := DispatchRow{Frontend: frontend, Version: lines[0].Version, Driver: drv, ID: lines[0].ID, Title: lines[0].Title, PerOp: map[string]float64{}}
	var dev, cpu []float64
	counts := map[string][]float64{}
	for _, l := range lines {
		dev = append(dev, median(l.Device))
		cpu = append(cpu, median(l.CPU))
		for k, v := range l.PerOp {
			counts[k] = append(counts[k], v)
		}
	}
	row.Device, row.CPU = statOf(dev), statOf(cpu)
	for k, v := range counts {
		row.PerOp[k] = median(v)
	}
	return row
}

func median(v []float64) float64 { return statOf(v).Median }

func runDispatchWorker(o DispatchOptions, f DispatchFrontend, drv string) ([]dispatchLine, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args := []string{filepath.Join(o.Root, "bench", "py", "dispatch_worker.py"), "--frontend", f.Name, "--ops", fmt.Sprint(o.Ops)}
	env := workerEnv(f.Lib, "")
	env = append(env, "METALPLUG_DRIVER="+drv, "PYTHONPATH="+filepath.Join(o.Root, "plugin", "python"))
	if f.Name == "jax" {
		env = append(env, "PJRT_NAMES_AND_LIBRARY_PATHS=metalplug:"+f.Lib, "JAX_PLATFORMS=metalplug,cpu")
	} else {
		args = append(args, "--lib", f.Lib)
	}
	cmd := exec.CommandContext(ctx, f.Python, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("the dispatch worker: %v\n%s", err, lastLines(stderr.String(), 15))
	}
	var lines []dispatchLine
	version := ""
	if err := workerLines(bytes.NewReader(out), func(_ string, d dispatchLine) error {
		switch d.Kind {
		case "ready":
			version = d.Version
		case "dispatch":
			d.Version = version
			lines = append(lines, d)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("the dispatch worker: %w", err)
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("the dispatch worker measured nothing:\n%s", lastLines(stderr.String(), 15))
	}
	return lines, nil
}

// markdown is the dispatch section of BENCHMARKS.md.
func (d *DispatchReport) markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("## Dispatch: what every op pays besides its arithmetic\n\n")
	w("A scalar add (jitted, for jax) on the device and on the framework's own CPU, alternating in one process (%d processes per frontend and driver; times are the median over processes of each process's median). ", d.Runs)
	w("`metal-model` is the Metal driver (its lowering, binding, command buffers, streams and waits: the Go code a Mac runs around each dispatch) with MPSGraph's work done by the model on the CPU; on a Mac the model's arithmetic is replaced by a GPU dispatch, 15-20 µs each on published measurements, which these numbers do not include. ")
	w("Per op, from `metalplug.stats()`: Go heap allocations and calls from Go into C in the whole process (the model's arithmetic included), tasks handed to a stream's thread, and the caller's blocking waits for a stream or the device. TensorFlow runs synchronously here (this TensorFlow has no resource-variable C API), so every op waits; jax dispatches asynchronously.\n\n")
	w("| Frontend | Driver | Case | Device | CPU | Device − CPU | Go allocations | cgo calls | Hand-offs | Waits |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range d.Rows {
		p := r.PerOp
		w("| %s %s | %s | %s `%s` | %s | %s | %s | %.1f | %.1f | %.2f | %.2f |\n", r.Frontend, r.Version, r.Driver, r.Title, r.ID,
			dur(r.Device.Median), dur(r.CPU.Median), fmt.Sprintf("%+.1f µs", (r.Device.Median-r.CPU.Median)*1e6),
			p["go_allocations"], p["cgo_calls"], p["handoffs"], p["driver_waits"])
	}
	w("\n")
	return b.String()
}

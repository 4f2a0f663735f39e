// Package bench times the plugin's device (on Linux the pure-Go host
// reference driver, METALPLUG_HOST) against TensorFlow's own CPU kernels on
// a fixed set of cases, and writes the result as BENCHMARKS.md and a plot.
//
// Every case runs in one Python process on both devices, alternating
// (device, CPU, device, CPU, ...), after a warm-up; each whole run is a
// separate process, and the report gives the median of each run and the
// spread of those medians across runs. Runs are repeated with the plugin's
// synchronous mode on and off (METALPLUG_SYNCHRONOUS), which measures what
// synchronous execution costs. The CNN cases, which run in tf.function,
// are measured with the plugin's graph pass on and again, in the same
// processes, with it off (METALPLUG_GRAPH_PASS=0), which measures what the
// pass's fusions change.
package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/metalplug/metalplug/setup/venv"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Options say what to run. The zero value runs everything with defaults.
type Options struct {
	// Root is the source tree (holding bench/py); "" means ".".
	Root string
	// Python is the interpreter with TensorFlow: "" means $PYTHON, else the
	// active virtualenv's, else python3.
	Python string
	// Lib is the plugin library; "" means build/libmetalplug.so under Root.
	// It is copied first, so a rebuild during the run cannot swap it.
	Lib string
	// Runs is the number of whole runs (processes) per synchronous mode; 0
	// means 3.
	Runs int
	// Cases are the case ids to run; nil means all (see CaseIDs).
	Cases []string
	// Budget is the time the timed repetitions of one case may take on one
	// device within a run; 0 means 1s. Reps stay within [MinReps, MaxReps].
	Budget           time.Duration
	MinReps, MaxReps int // 0 means 3 and 30
	Warmup           int // untimed calls per case and device; 0 means 2
	// NoSyncComparison skips the runs in the other synchronous mode.
	NoSyncComparison bool
	// Timeout bounds one process; 0 means 15 minutes.
	Timeout time.Duration
	// Log receives progress lines; nil discards them.
	Log func(format string, args ...any) `json:"-"`
}

// Stat is a median with the spread (min and max) of the values it is the
// median of.
type Stat struct{ Median, Min, Max float64 }

func statOf(v []float64) Stat {
	if len(v) == 0 {
		return Stat{}
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Stat{Median: m, Min: s[0], Max: s[len(s)-1]}
}

// RunResult is one process's numbers for one case.
type RunResult struct {
	Sync   bool    // the plugin ran in synchronous mode
	Reps   int     // timed repetitions per device
	Device float64 // median seconds per op on the device
	CPU    float64 // median seconds per op on TensorFlow's CPU
}

// Case is one case across runs of one synchronous mode.
type Case struct {
	ID, Title string
	Runs      []RunResult
	// Device and CPU are the medians of the run medians, with their spread;
	// Ratio is CPU time / device time per run (>1: the device is faster).
	Device, CPU, Ratio Stat
	// DeviceOps counts the kernels that ran on the device in the case's
	// warm-up (both devices' calls; the CPU's put nothing there).
	DeviceOps map[string]int
	// MaxRelDiff is the largest |device - CPU| over the largest |CPU| of
	// the case's output in the first run.
	MaxRelDiff float64
	Check      string // a mismatch the worker found, if any
	// Clustering is "on" or "off" for the training steps (the worker
	// checked with the op counters that clusters ran, or that none did), ""
	// for the others; ClusterOffOf names the case a clustering-off case
	// repeats with it on.
	Clustering   string `json:",omitempty"`
	ClusterOffOf string `json:",omitempty"`
	// PerStep is what the plugin counted per training step (kernel calls,
	// executions, device executions, waits, compiles, host segments,
	// output bytes), the median over runs.
	PerStep map[string]float64 `json:",omitempty"`
}

// ClusterEffect compares a training step with clustering on (the default)
// with the same step with it off, run for run, on the host driver.
type ClusterEffect struct {
	ID, OffID, Title string
	On, Off          Stat // device seconds per step, clustering on and off
	CPU              Stat // the CPU's time in the clustering-on case, for scale
	// Effect is, per run (the two cases ran in the same process), the
	// device time with clustering on / with it off: below 1 clustering
	// makes the device faster.
	Effect            Stat
	OnRatio, OffRatio Stat // CPU/device with clustering on and off
}

// SyncCost compares the device's times in the two synchronous modes.
type SyncCost struct {
	ID, Title   string
	Sync, Async Stat // device seconds per op, synchronous and asynchronous
	CPUSync     Stat // the CPU's time in the synchronous runs, for scale
	Cost        Stat // per run pair: sync time / async time
	SyncRatio   Stat // CPU/device in the synchronous runs
	AsyncRatio  Stat // CPU/device in the asynchronous runs
}

// Report is everything a run measured.
type Report struct {
	Started time.Time
	Wall    time.Duration
	Machine Machine
	// Software in the worker processes.
	TensorFlow, Python, NumPy string
	// Library is the plugin as loaded: path, size and SHA-256 prefix.
	Library string
	// Tree is the source tree's commit, marked when it had changes.
	Tree string
	// DefaultSync is the mode the plugin picks on its own with this
	// TensorFlow; Cases are measured in it. DefaultModeLine is the plugin's
	// own line saying so, with its reason.
	DefaultSync     bool
	DefaultModeLine string
	Cases           []Case
	// Other are the same cases in the other mode (nil with NoSyncComparison).
	Other []Case
	Sync  []SyncCost
	// Clustering pairs the training steps of the default mode measured with
	// clustering on and off.
	Clustering []ClusterEffect `json:",omitempty"`
	// ModelSteps are the training steps counted on the Metal driver over
	// the model of MPSGraph (nil when not measured).
	ModelSteps []StepCount `json:",omitempty"`
	// Jax is the JAX cases (nil when not measured).
	Jax *JaxReport `json:",omitempty"`
	// Dispatch is the per-op cost on each driver, both frontends (nil when
	// not measured).
	Dispatch *DispatchReport `json:",omitempty"`
	// Load samples /proc/loadavg before, between and after the processes;
	// Busy lists other processes that used CPU when the run started.
	Load []string
	Busy []string
	Opts Options

	plotPath string // where Plot last wrote, for Markdown's link
}

// CaseIDs lists the cases the worker knows, in report order.
func CaseIDs(o Options) ([]string, error) {
	o = o.withDefaults()
	out, err := exec.Command(o.Python, o.worker(), "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("listing cases: %w", err)
	}
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if id, _, ok := strings.Cut(l, "\t"); ok {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func (o Options) withDefaults() Options {
	if o.Root == "" {
		o.Root = "."
	}
	if o.Python == "" {
		o.Python = os.Getenv("PYTHON")
	}
	if o.Python == "" {
		if v := os.Getenv("VIRTUAL_ENV"); v != "" {
			o.Python = filepath.Join(v, "bin", "python")
		}
	}
	if o.Python == "" {
		o.Python = "python3"
	}
	if o.Lib == "" {
		o.Lib = filepath.Join(o.Root, "build", "libmetalplug.so")
	}
	if o.Runs <= 0 {
		o.Runs = 3
	}
	if o.Budget <= 0 {
		o.Budget = time.Second
	}
	if o.MinReps <= 0 {
		o.MinReps = 3
	}
	if o.MaxReps <= 0 {
		o.MaxReps = 30
	}
	if o.Warmup <= 0 {
		o.Warmup = 2
	}
	if o.Timeout <= 0 {
		o.Timeout = 15 * time.Minute
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	return o
}

func (o Options) worker() string { return filepath.Join(o.Root, "bench", "py", "bench_worker.py") }

// Run runs the benchmark and returns its report.
func Run(opts Options) (*Report, error) {
	o := opts.withDefaults()
	start := time.Now()
	r := &Report{Started: start, Opts: o, Machine: readMachine()}
	r.Tree = treeState(o.Root)
	lib, cleanup, err := copyLib(o.Lib)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	r.Library = lib.desc
	r.Load = append(r.Load, "start "+loadavg())
	r.Busy = busyProcesses()

	// The first process runs in the plugin's default mode and says which it is.
	type proc struct {
		forced string // "" (default), "0" or "1"
		lines  []caseLine
		sync   bool
		mode   string
	}
	var procs []proc
	runOne := func(i int, forced string) (proc, error) {
		what := "default mode"
		if forced != "" {
			what = "METALPLUG_SYNCHRONOUS=" + forced
		}
		o.Log("bench: run %d/%d, %s", i+1, o.Runs, what)
		t := time.Now()
		ready, lines, sync, modeLine, err := runWorker(o, lib.path, forced)
		if err != nil {
			return proc{}, fmt.Errorf("run %d (%s): %w", i+1, what, err)
		}
		if r.TensorFlow == "" {
			r.TensorFlow, r.Python, r.NumPy = ready.TensorFlow, ready.Python, ready.NumPy
		}
		r.Load = append(r.Load, fmt.Sprintf("after run %d (%s, %.0fs) %s", i+1, what, time.Since(t).Seconds(), loadavg()))
		return proc{forced: forced, lines: lines, sync: sync, mode: modeLine}, nil
	}
	other := ""
	for i := range o.Runs {
		order := []string{""}
		if !o.NoSyncComparison && i > 0 {
			order = []string{"", other}
			if i%2 == 1 {
				order = []string{other, ""}
			}
		}
		for _, forced := range order {
			p, err := runOne(i, forced)
			if err != nil {
				return nil, err
			}
			procs = append(procs, p)
			if i == 0 && forced == "" {
				r.DefaultSync, r.DefaultModeLine = p.sync, p.mode
				other = "1"
				if p.sync {
					other = "0"
				}
			}
		}
		if i == 0 && !o.NoSyncComparison {
			p, err := runOne(i, other)
			if err != nil {
				return nil, err
			}
			procs = append(procs, p)
		}
	}
	var def, oth [][]caseLine
	for _, p := range procs {
		if p.forced == "" {
			def = append(def, p.lines)
		} else {
			oth = append(oth, p.lines)
		}
	}
	r.Cases = aggregate(def, r.DefaultSync)
	r.Clustering = clusterEffects(r.Cases)
	if len(oth) > 0 {
		r.Other = aggregate(oth, !r.DefaultSync)
		r.Sync = syncCosts(r.Cases, r.Other, r.DefaultSync)
	}
	r.Load = append(r.Load, "end "+loadavg())
	r.Wall = time.Since(start)
	return r, nil
}

// caseLine is one case's line from the worker.
type caseLine struct {
	Kind         string             `json:"kind"`
	ID           string             `json:"id"`
	Title        string             `json:"title"`
	Device       []float64          `json:"device"`
	CPU          []float64          `json:"cpu"`
	DeviceOps    map[string]int     `json:"device_ops"`
	MaxRelDiff   *float64           `json:"max_rel_diff"`
	Check        string             `json:"check"`
	Error        string             `json:"error"`
	Clustering   *bool              `json:"clustering"`
	ClusterOffOf string             `json:"cluster_off_of"`
	PerStep      map[string]float64 `json:"per_step"`
}

type readyLine struct {
	TensorFlow string   `json:"tensorflow"`
	Python     string   `json:"python"`
	NumPy      string   `json:"numpy"`
	Devices    []string `json:"devices"`
}

const prefix = "BENCH "

// workerLines calls fn with each of a worker's BENCH lines, decoded into a
// new T, in order; what workers print besides is passed over.
func workerLines[T any](r io.Reader, fn func(line string, v T) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		l, ok := strings.CutPrefix(sc.Text(), prefix)
		if !ok {
			continue
		}
		var v T
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			return fmt.Errorf("worker line %q: %w", l, err)
		}
		if err := fn(l, v); err != nil {
			return err
		}
	}
	return sc.Err()
}

// runWorker runs one worker process and collects its case lines. sync is
// the mode the plugin announced on stderr.
func runWorker(o Options, lib, forced string) (ready readyLine, lines []caseLine, sync bool, modeLine string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	args := []string{o.worker(),
		"--budget", fmt.Sprint(o.Budget.Seconds()),
		"--min-reps", fmt.Sprint(o.MinReps), "--max-reps", fmt.Sprint(o.MaxReps),
		"--warmup", fmt.Sprint(o.Warmup)}
	args = append(args, o.Cases...)
	cmd := exec.CommandContext(ctx, o.Python, args...)
	cmd.Env = workerEnv(lib, forced)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return ready, nil, false, "", err
	}
	if err := cmd.Start(); err != nil {
		return ready, nil, false, "", fmt.Errorf("starting %s: %w", o.Python, err)
	}
	var workerErr string
	if err := workerLines(out, func(l string, c caseLine) error {
		switch c.Kind {
		case "ready":
			json.Unmarshal([]byte(l), &ready)
		case "start":
			o.Log("bench:   %s", c.ID)
		case "case":
			lines = append(lines, c)
		case "error":
			workerErr = c.Error
		}
		return nil
	}); err != nil {
		return ready, nil, false, "", err
	}
	io.Copy(io.Discard, out)
	werr := cmd.Wait()
	tail := lastLines(stderr.String(), 15)
	if workerErr != "" {
		return ready, nil, false, "", fmt.Errorf("worker: %s\n%s", workerErr, tail)
	}
	if werr != nil {
		return ready, nil, false, "", fmt.Errorf("worker: %v\n%s", werr, tail)
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(l, "metalplug: ") && strings.Contains(l, " execution") {
			modeLine = strings.TrimSpace(l)
			break
		}
	}
	switch {
	case strings.Contains(modeLine, " synchronous execution"):
		sync = true
	case strings.Contains(modeLine, " asynchronous execution"):
	default:
		return ready, nil, false, "", errors.New("the plugin did not say which execution mode it runs in:\n" + tail)
	}
	return ready, lines, sync, modeLine, nil
}

func workerEnv(lib, forced string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "METALPLUG_SYNCHRONOUS", "METALPLUG_DEBUG", "METALPLUG_DISABLE", "METALPLUG_BENCH_LIB", "METALPLUG_HOST_DEVICE",
			"METALPLUG_CLUSTER": // the worker sets it around its clustering-off cases
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "METALPLUG_BENCH_LIB="+lib, "METALPLUG_HOST_DEVICE=1", "TF_CPP_MIN_LOG_LEVEL=2")
	if forced != "" {
		env = append(env, "METALPLUG_SYNCHRONOUS="+forced)
	}
	return env
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// aggregate folds the runs of one mode into cases, in the first run's order.
func aggregate(runs [][]caseLine, sync bool) []Case {
	var out []Case
	index := map[string]int{}
	perStep := map[string][]map[string]float64{}
	for _, lines := range runs {
		for _, l := range lines {
			i, ok := index[l.ID]
			if !ok {
				i = len(out)
				index[l.ID] = i
				out = append(out, Case{ID: l.ID, Title: l.Title, DeviceOps: l.DeviceOps, Check: l.Check, ClusterOffOf: l.ClusterOffOf})
				if l.MaxRelDiff != nil {
					out[i].MaxRelDiff = *l.MaxRelDiff
				}
				if l.Clustering != nil {
					out[i].Clustering = "off"
					if *l.Clustering {
						out[i].Clustering = "on"
					}
				}
			}
			if l.PerStep != nil {
				perStep[l.ID] = append(perStep[l.ID], l.PerStep)
			}
			d, c := statOf(l.Device), statOf(l.CPU)
			out[i].Runs = append(out[i].Runs, RunResult{Sync: sync, Reps: len(l.Device), Device: d.Median, CPU: c.Median})
		}
	}
	for i := range out {
		var d, c, r []float64
		for _, run := range out[i].Runs {
			d = append(d, run.Device)
			c = append(c, run.CPU)
			r = append(r, run.CPU/run.Device)
		}
		out[i].Device, out[i].CPU, out[i].Ratio = statOf(d), statOf(c), statOf(r)
		out[i].PerStep = medians(perStep[out[i].ID])
	}
	return out
}

// medians is, per key, the median of the maps' values; nil for none.
func medians(ms []map[string]float64) map[string]float64 {
	if len(ms) == 0 {
		return nil
	}
	vals := map[string][]float64{}
	for _, m := range ms {
		for k, v := range m {
			vals[k] = append(vals[k], v)
		}
	}
	out := map[string]float64{}
	for k, v := range vals {
		out[k] = median(v)
	}
	return out
}

// clusterEffects pairs each clustering-off case with the case it repeats
// with clustering on, in the order of the clustering-on cases.
func clusterEffects(cases []Case) []ClusterEffect {
	off := map[string]Case{}
	for _, c := range cases {
		if c.Clustering == "off" && c.ClusterOffOf != "" {
			off[c.ClusterOffOf] = c
		}
	}
	var out []ClusterEffect
	for _, on := range cases {
		o, ok := off[on.ID]
		if !ok || on.Clustering != "on" {
			continue
		}
		var effect []float64
		for i := range min(len(on.Runs), len(o.Runs)) {
			effect = append(effect, on.Runs[i].Device/o.Runs[i].Device)
		}
		out = append(out, ClusterEffect{ID: on.ID, OffID: o.ID, Title: on.Title, On: on.Device, Off: o.Device, CPU: on.CPU,
			Effect: statOf(effect), OnRatio: on.Ratio, OffRatio: o.Ratio})
	}
	return out
}

func syncCosts(def, oth []Case, defaultSync bool) []SyncCost {
	byID := map[string]Case{}
	for _, c := range oth {
		byID[c.ID] = c
	}
	var out []SyncCost
	for _, c := range def {
		o, ok := byID[c.ID]
		if !ok {
			continue
		}
		s, a := c, o
		if !defaultSync {
			s, a = o, c
		}
		var cost []float64
		for i := range min(len(s.Runs), len(a.Runs)) {
			cost = append(cost, s.Runs[i].Device/a.Runs[i].Device)
		}
		out = append(out, SyncCost{ID: c.ID, Title: c.Title, Sync: s.Device, Async: a.Device, CPUSync: s.CPU,
			Cost: statOf(cost), SyncRatio: s.Ratio, AsyncRatio: a.Ratio})
	}
	return out
}

// WriteJSON saves the report, so that it can be rendered again (ReadJSON).
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	root := r.Opts.Root
	if root == "" {
		root = "."
	}
	return os.WriteFile(path, venv.RedactPaths(b, root), 0o644)
}

// ReadJSON loads a report WriteJSON saved.
func ReadJSON(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

type libCopy struct{ path, desc string }

// copyLib copies the library into a temporary directory.
func copyLib(src string) (libCopy, func(), error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return libCopy{}, nil, fmt.Errorf("reading the plugin library (build it with `go tool mage build`): %w", err)
	}
	dir, err := os.MkdirTemp("", "metalplug-bench-")
	if err != nil {
		return libCopy{}, nil, err
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		os.RemoveAll(dir)
		return libCopy{}, nil, err
	}
	sum := sha256.Sum256(b)
	desc := fmt.Sprintf("%s (%d bytes, sha256 %s)", src, len(b), hex.EncodeToString(sum[:6]))
	return libCopy{path: dst, desc: desc}, func() { os.RemoveAll(dir) }, nil
}

func treeState(root string) string {
	head, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	s := strings.TrimSpace(string(head))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		s += " with uncommitted changes"
	}
	return s
}

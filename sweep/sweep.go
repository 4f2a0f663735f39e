// Package sweep is the gate behind "N ops on the device": it runs every
// (op, dtype combination) that the plugin registers with TensorFlow through
// TensorFlow's own dispatch (tf.raw_ops, or eager execution by name for
// internal ops such as _FusedConv2D; soft placement off) on the device and on
// the CPU with the same inputs, and reports which agree.
//
// The list of cases comes from TensorFlow's kernel registry after the library
// is loaded, never from a list kept by hand, so a kernel cannot be registered
// without being swept. Each case runs twice on the device: the two answers
// must be bit-identical, the inputs unchanged, and the plugin's op counter
// (metalplug_op_counts) must show that the device's kernel ran. Ops with no
// deterministic answer (stateful random numbers) are checked against a named
// property instead. The registrations themselves are audited too.
//
// The Python side lives in py/ and is embedded, so the package works from any
// working directory. Cases run in batches, each batch in its own Python
// process; a process that dies is not the end of the sweep: the cases it had
// not finished are run again until the one that kills the process is named
// (see runner.go).
//
// A Mage target uses it as:
//
//	r, err := sweep.Run(sweep.Options{Python: py, Library: lib, Out: os.Stdout})
//	if err != nil { return err }
//	os.WriteFile("docs/op_errors.md", []byte(r.OpErrorsMarkdown()), 0o644)
//	return r.Err()
package sweep

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/metalplug/metalplug/plugin/tf/graphpass"
)

//go:embed py/*.py
var scripts embed.FS

// Options say what to sweep and how.
type Options struct {
	// Python is an interpreter with the TensorFlow the library was built for.
	Python string
	// Library is the plugin's shared library; it is loaded with
	// load_pluggable_device_library once per worker process.
	Library string
	// DeviceType is the device type the library registers kernels for
	// (METALPLUG_HOST when empty). "CPU" sweeps the CPU against itself, with
	// no library: a way to check recipes for ops the device lacks yet.
	DeviceType string
	// Ops, when not empty, limits the sweep to these op names.
	Ops []string
	// DTypes, when not empty, limits it to cases whose dtype combination
	// equals one of these (as "T=float32") or has one of them as a value
	// ("float32" matches "SrcT=float32,DstT=int32").
	DTypes []string
	// Verbose prints each case's inputs, attrs and both outputs to Out, and
	// the workers' own output.
	Verbose bool
	// Out gets progress lines (and, when Verbose, the details); nil drops them.
	Out io.Writer
	// NeedsEntryPoint names ops whose kernels need functions from
	// tensorflow/c/kernels_experimental.h that this TensorFlow does not
	// export. Such ops are counted apart, and not run, if they appear
	// registered.
	NeedsEntryPoint []string
	// Jobs is how many worker processes run at once: 1 (the default) or 2.
	Jobs int
	// CaseTimeout is how long a worker may go without reporting progress
	// before it is killed as hung; 1 minute when zero (the slowest call
	// takes a few seconds, and a hang costs this twice: in its batch and
	// alone).
	CaseTimeout time.Duration
	// Env is more of the workers' environment: METALPLUG_DRIVER=metal-model
	// sweeps the Metal lowering on the model of MPSGraph.
	Env []string
	// About, when not empty, says in the report which driver Env chose.
	About string
}

// Status is a case's outcome. Verified and NeedsEntryPoint are accounted
// for; every other status is unaccounted and fails the sweep.
type Status string

// The statuses a case can have. Most come from the worker; Crash, Hang and
// CrashInBatch from the runner; NeedsEntryPoint from Run.
const (
	Verified         Status = "verified"
	NeedsEntryPoint  Status = "needs-entry-point"
	Mismatch         Status = "mismatch"
	DeviceError      Status = "device-error"
	NoRecipe         Status = "no-recipe"
	RecipeError      Status = "recipe-error"
	NoReference      Status = "no-reference"
	NotOnDevice      Status = "not-on-device"
	Nondeterministic Status = "nondeterministic"
	InputModified    Status = "input-modified"
	PropertyFailed   Status = "property-failed"
	Crash            Status = "crash"
	Hang             Status = "hang"
	// CrashInBatch: a worker died while running the case, but the case
	// alone did not kill one; what it needs from earlier cases is unknown.
	CrashInBatch Status = "crash-in-batch"
)

// NeedsCPU: the driver refused the program because it needs the CPU and
// no part may run on the CPU (METALPLUG_NO_CPU_FALLBACK=1, in a sweep of what
// the Metal lowering itself runs): an op or case its NotLowered or
// Fallbacks tables name.
const NeedsCPU Status = "needs-cpu"

// NeedsCPUMarker is what the refusal of a program with a host part says
// (backend/split).
const NeedsCPUMarker = "forbids the host these parts of the program: "

// Accounted says whether s counts as verified, needs-an-entry-point or
// needs-cpu.
func (s Status) Accounted() bool { return s == Verified || s == NeedsEntryPoint || s == NeedsCPU }

// Case is one (op, dtype combination) and what the sweep found.
type Case struct {
	ID     string // op:dtypes, unique
	Op     string
	DTypes string // constrained type attrs, "T=float32"; empty for none
	// Check is how it was judged: "vs CPU", "vs CPU in float32" (the CPU
	// lacks the dtype), "vs CPU via NHWC", or a property's name; several
	// variants may add up to several, joined by "; ".
	Check  string
	MaxAbs *float64 // largest |device - reference| over the variants; nil if nothing was compared
	MaxRel *float64 // largest |device - reference| / max(|reference|, 1e-6)
	Status Status
	// Detail says what went wrong (for a mismatch: the inputs and both
	// outputs, abbreviated); empty when verified.
	Detail   string
	Variants []Variant
}

// Variant is one call of the op within a case.
type Variant struct {
	Name   string   `json:"name"`
	Status Status   `json:"status"`
	Check  string   `json:"check"`
	Detail string   `json:"detail"`
	MaxAbs *float64 `json:"max_abs"`
	MaxRel *float64 `json:"max_rel"`
}

// Report is the sweep's outcome.
type Report struct {
	TFVersion  string
	DeviceType string
	// Kernels is how many kernel registrations TensorFlow holds for the
	// device (before filtering).
	Kernels int
	// Cases are sorted by op, then dtypes.
	Cases                                            []Case
	Verified, NeedsEntryPoint, NeedsCPU, Unaccounted int
	Wall                                             time.Duration
	// About says which driver ran the device, when it was not the host
	// driver (Options.About).
	About string
	// AuditProblems are registration errors: duplicates, constraints on
	// attributes the op lacks, and the like.
	AuditProblems []string
	// Problems are worker deaths the runner could not pin on a case.
	Problems []string
}

// Err is nil when every case is accounted for and neither the audit nor the
// runner found a problem.
func (r *Report) Err() error {
	var msgs []string
	if r.Unaccounted > 0 {
		var names []string
		for _, c := range r.Cases {
			if !c.Status.Accounted() {
				names = append(names, fmt.Sprintf("%s (%s)", c.ID, c.Status))
			}
		}
		msgs = append(msgs, fmt.Sprintf("%d unaccounted: %s", r.Unaccounted, strings.Join(names, ", ")))
	}
	if len(r.AuditProblems) > 0 {
		msgs = append(msgs, fmt.Sprintf("%d registration problems: %s", len(r.AuditProblems), strings.Join(r.AuditProblems, "; ")))
	}
	if len(r.Problems) > 0 {
		msgs = append(msgs, strings.Join(r.Problems, "; "))
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New("sweep: " + strings.Join(msgs, "; "))
}

// Summary is one line of counts and the wall time.
func (r *Report) Summary() string {
	cpu := ""
	if r.NeedsCPU > 0 {
		cpu = fmt.Sprintf(", %d need the CPU", r.NeedsCPU)
	}
	return fmt.Sprintf("%d cases: %d verified, %d need an entry point this TensorFlow lacks%s, %d unaccounted; %d audit problems; %s",
		len(r.Cases), r.Verified, r.NeedsEntryPoint, cpu, r.Unaccounted, len(r.AuditProblems), r.Wall.Round(100*time.Millisecond))
}

// plan is what the worker's --list prints.
type plan struct {
	TFVersion string `json:"tf_version"`
	Kernels   int    `json:"kernels"`
	Cases     []struct {
		ID     string `json:"id"`
		Op     string `json:"op"`
		DTypes string `json:"dtypes"`
	} `json:"cases"`
	Audit []string `json:"audit"`
}

// Run sweeps and returns the report. An error means the sweep itself could
// not run (no interpreter, a library that does not load, an op filter that
// names nothing); what it found about the kernels is in the report, and
// Report.Err turns that into an error.
func Run(opts Options) (*Report, error) {
	start := time.Now()
	if opts.Python == "" {
		return nil, errors.New("sweep: Options.Python is empty")
	}
	if opts.DeviceType == "" {
		opts.DeviceType = "METALPLUG_HOST"
	}
	if opts.Library == "" && opts.DeviceType != "CPU" {
		return nil, errors.New("sweep: Options.Library is empty")
	}
	if opts.Library != "" {
		abs, err := filepath.Abs(opts.Library)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(abs); err != nil {
			return nil, fmt.Errorf("sweep: library: %w", err)
		}
		opts.Library = abs
	}
	if opts.Jobs <= 0 {
		opts.Jobs = 1
	}
	// TensorFlow processes on a 2-core machine: more than two at once only
	// makes each slower.
	opts.Jobs = min(opts.Jobs, 2)
	if opts.CaseTimeout <= 0 {
		opts.CaseTimeout = time.Minute
	}
	out := opts.Out
	if out == nil {
		out = io.Discard
	}

	dir, err := os.MkdirTemp("", "metalplug-sweep-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := writeScripts(dir); err != nil {
		return nil, err
	}
	w := worker{python: opts.Python, script: filepath.Join(dir, "sweep_worker.py"), lib: opts.Library, device: opts.DeviceType, extra: opts.Env}

	p, err := w.list()
	if err != nil {
		return nil, err
	}
	rep := &Report{TFVersion: p.TFVersion, DeviceType: opts.DeviceType, Kernels: p.Kernels, AuditProblems: p.Audit, About: opts.About}

	want := map[string]bool{}
	for _, op := range opts.Ops {
		want[op] = true
	}
	needs := map[string]bool{}
	for _, op := range opts.NeedsEntryPoint {
		needs[op] = true
	}
	seen := map[string]bool{}
	var ids []string
	byID := map[string]*Case{}
	for _, pc := range p.Cases {
		if len(want) > 0 && !want[pc.Op] || !dtypeMatch(pc.DTypes, opts.DTypes) {
			continue
		}
		if pc.Op == graphpass.ClusterOp {
			// Only the graph pass makes it, from the ops swept here, and no
			// CPU kernel exists to compare with: tests/integration's
			// TestClusters checks it against the CPU running the members.
			continue
		}
		seen[pc.Op] = true
		c := &Case{ID: pc.ID, Op: pc.Op, DTypes: pc.DTypes}
		byID[c.ID] = c
		if needs[pc.Op] {
			c.Status, c.Check = NeedsEntryPoint, "-"
			c.Detail = "its kernel needs tensorflow/c/kernels_experimental.h functions this TensorFlow does not export"
			continue
		}
		ids = append(ids, c.ID)
	}
	for op := range want {
		if !seen[op] {
			return nil, fmt.Errorf("sweep: no %s kernel for %s matches the filter (dtypes %v)", opts.DeviceType, op, opts.DTypes)
		}
	}
	sort.Strings(ids)
	fmt.Fprintf(out, "sweep: TensorFlow %s, %d %s kernel registrations, %d cases to run\n", p.TFVersion, p.Kernels, opts.DeviceType, len(ids))

	r := &runner{
		start:   func(ctx context.Context) *exec.Cmd { return w.command(ctx, opts.Verbose) },
		timeout: opts.CaseTimeout,
		log:     out,
	}
	if opts.Verbose {
		r.echo = out
	}
	if err := r.runAll(ids, opts.Jobs); err != nil {
		return nil, err
	}
	for id, res := range r.results {
		c := byID[id]
		c.Status, c.Check, c.Detail, c.Variants = res.Status, res.Check, res.Detail, res.Variants
		c.MaxAbs, c.MaxRel = res.MaxAbs.ptr(), res.MaxRel.ptr()
		if c.Status == DeviceError && strings.Contains(c.Detail, NeedsCPUMarker) {
			c.Status = NeedsCPU
		}
	}
	for _, c := range byID {
		if c.Status == "" {
			// Cannot happen unless the runner lost a case; say so rather
			// than count it as anything.
			c.Status, c.Detail = Crash, "the runner has no result for this case"
		}
		rep.Cases = append(rep.Cases, *c)
	}
	sort.Slice(rep.Cases, func(i, j int) bool {
		a, b := rep.Cases[i], rep.Cases[j]
		if a.Op != b.Op {
			return a.Op < b.Op
		}
		return a.DTypes < b.DTypes
	})
	rep.Problems = r.problems
	rep.count()
	rep.Wall = time.Since(start)
	fmt.Fprintf(out, "sweep: %s\n", rep.Summary())
	return rep, nil
}

func (r *Report) count() {
	r.Verified, r.NeedsEntryPoint, r.NeedsCPU, r.Unaccounted = 0, 0, 0, 0
	for _, c := range r.Cases {
		switch c.Status {
		case Verified:
			r.Verified++
		case NeedsCPU:
			r.NeedsCPU++
		case NeedsEntryPoint:
			r.NeedsEntryPoint++
		default:
			r.Unaccounted++
		}
	}
}

// dtypeMatch reports whether a case's dtype combination passes the filter.
func dtypeMatch(combo string, filter []string) bool {
	if len(filter) == 0 {
		return true
	}
	for _, f := range filter {
		if f == combo {
			return true
		}
		for _, kv := range strings.Split(combo, ",") {
			if _, v, ok := strings.Cut(kv, "="); ok && v == f {
				return true
			}
		}
	}
	return false
}

func writeScripts(dir string) error {
	return fs.WalkDir(scripts, "py", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := scripts.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, filepath.Base(path)), b, 0o644)
	})
}

// worker starts the Python side.
type worker struct {
	python, script, lib, device string
	extra                       []string // Options.Env
}

func (w worker) args(mode string, verbose bool) []string {
	a := []string{"-u", w.script, mode, "--device-type", w.device}
	if w.lib != "" {
		a = append(a, "--lib", w.lib)
	}
	if verbose {
		a = append(a, "--verbose")
	}
	return a
}

// env is the worker's environment: the host device offered, TensorFlow's
// C++ logging down to warnings, and TensorFlow's own CPU kernels as the
// reference rather than its oneDNN ones, which it picks by the CPU's
// instruction set: on an AVX-512 machine TensorFlow 2.21's oneDNN Conv2D
// gives an empty batch the input's channel count ([0,9,10,3] with a
// [4,4,3,2] filter comes back [0,9,10,3], not [0,5,5,2]), and its rounding
// differs from one machine to the next.
func (w worker) env() []string {
	env := append(os.Environ(), "METALPLUG_HOST_DEVICE=1", "TF_CPP_MIN_LOG_LEVEL=2", "PYTHONDONTWRITEBYTECODE=1", "TF_ENABLE_ONEDNN_OPTS=0")
	return append(env, w.extra...)
}

func (w worker) command(ctx context.Context, verbose bool) *exec.Cmd {
	cmd := exec.CommandContext(ctx, w.python, w.args("--run", verbose)...)
	cmd.Env = w.env()
	return cmd
}

func (w worker) list() (*plan, error) {
	cmd := exec.Command(w.python, w.args("--list", false)...)
	cmd.Env = w.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	for _, line := range strings.Split(stdout.String(), "\n") {
		rest, ok := strings.CutPrefix(line, prefix)
		if !ok {
			continue
		}
		var p plan
		if jerr := json.Unmarshal([]byte(rest), &p); jerr != nil {
			return nil, fmt.Errorf("sweep: listing kernels: bad plan line: %v", jerr)
		}
		return &p, nil
	}
	return nil, fmt.Errorf("sweep: listing kernels with %s: %v\n%s", w.python, err, tail(stderr.String(), 4000))
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

package matrix

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/metalplug/metalplug/plugin/tf/capi"
	"github.com/metalplug/metalplug/plugin/tf/lower"
	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/setup/probe"
	"github.com/metalplug/metalplug/setup/toolchain"
	"github.com/metalplug/metalplug/setup/venv"
	"github.com/metalplug/metalplug/sweep"
)

// Logf prints progress.
type Logf func(format string, args ...any)

// Steps are what a cell does, behind an interface so that the run's
// bookkeeping (a failing cell does not stop the others, the sweep is told
// which ops lack an entry point, what is recorded) is tested without
// TensorFlow.
type Steps interface {
	// Venv makes or reuses the cell's venv and returns its directory.
	Venv(c Cell, log Logf) (string, error)
	Probe(python string) (*probe.Report, error)
	// Build compiles the library at out against r with the cell's pin.
	Build(r *probe.Report, pin, out string, log Logf) error
	// Load runs the load test with the library and reports what it saw.
	Load(python, lib string) (Load, error)
	Sweep(o sweep.Options) (*sweep.Report, error)
	// GraphPass runs the graph pass's test in a Session with the library
	// and reports what it found.
	GraphPass(python, lib string) (GraphPass, error)
	// DiskUsage is what dir takes on disk, in bytes.
	DiskUsage(dir string) (int64, error)

	// The steps of a jax cell after its venv (jaxrun.go).

	// ProbeJax probes the venv's jax (and finds whether TensorFlow is there).
	ProbeJax(python string) (*probe.Report, error)
	// BuildJax compiles the library at out against r's jaxlib.
	BuildJax(r *probe.Report, out string, log Logf) error
	// InstallJax puts the library and the jax_plugins module into r's venv.
	InstallJax(lib string, r *probe.Report) error
	// JaxDevices asks jax, with the plugin installed, for its metalplug devices.
	JaxDevices(python string) (JaxLoad, error)
	// JaxSmoke runs jitted programs on the device and on jax's CPU.
	JaxSmoke(python string) (JaxSmoke, error)
}

// Load is what the load test saw.
type Load struct {
	Devices      []string `json:"devices"`
	MatMulDevice string   `json:"matmul_device,omitempty"`
	MatMulError  *float64 `json:"matmul_error,omitempty"`
	// Line is the plugin's load line on stderr: the device it offers and in
	// which execution mode, and why, or why it offers none.
	Line string `json:"line"`
	// Mode is "synchronous" or "asynchronous", read from Line.
	Mode string `json:"mode,omitempty"`
}

// deviceType is the device the load test expects: the Metal GPU on macOS,
// the host reference driver's device elsewhere (which the plugin offers only
// when METALPLUG_HOST_DEVICE=1 asks for it).
var deviceType, askDevice = func() (string, []string) {
	if runtime.GOOS == "darwin" {
		return "GPU", []string{"METALPLUG_TEST_DEVICE_TYPE=GPU"}
	}
	return "METALPLUG_HOST", []string{"METALPLUG_HOST_DEVICE=1"}
}()

// ok says whether the device appeared and MatMul on it matched NumPy.
func (l Load) ok() (bool, string) {
	want := "/physical_device:" + deviceType + ":0"
	switch {
	case len(l.Devices) != 1 || l.Devices[0] != want:
		return false, fmt.Sprintf("devices %v, want [%s]: %s", l.Devices, want, orDash(l.Line))
	case !strings.HasSuffix(l.MatMulDevice, "device:"+deviceType+":0"):
		return false, fmt.Sprintf("MatMul ran on %q, not the device", l.MatMulDevice)
	case l.MatMulError == nil || *l.MatMulError > 1e-5:
		return false, fmt.Sprintf("MatMul differs from NumPy by %v", fmtPtr(l.MatMulError))
	}
	return true, ""
}

var modeRE = regexp.MustCompile(`\b(synchronous|asynchronous) execution\b`)

// parseLoadLine finds the plugin's load line among stderr's lines: the one
// naming an execution mode when a device was offered, else the first
// "metalplug:" line (the reason none was).
func parseLoadLine(stderr string) (line, mode string) {
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "metalplug: ") {
			continue
		}
		if m := modeRE.FindStringSubmatch(l); m != nil {
			return l, m[1]
		}
		if line == "" {
			line = l
		}
	}
	return line, ""
}

// realSteps run the real thing.
type realSteps struct{ root string }

func (s realSteps) Venv(c Cell, log Logf) (string, error) {
	// The interpreter's own path, not the PATH name: a pyenv shim would
	// pick the version by the directory it runs in.
	return venv.Ensure(c.VenvName(), c.Python.Path, c.Requirements(), log)
}

func (realSteps) Probe(python string) (*probe.Report, error) { return probe.RunTensorFlow(python) }

func (s realSteps) Build(r *probe.Report, pin, out string, log Logf) error {
	_, err := toolchain.Build(r, toolchain.Options{Root: s.root, Out: out, Pin: pin, Log: log})
	return err
}

// script runs tests/integration/py/<name> with the library, in a process
// of its own, and returns its RESULT line's JSON (nil when it printed none),
// its stderr and its exit error.
func (s realSteps) script(python, lib, name string) ([]byte, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, filepath.Join(s.root, "tests", "integration", "py", name))
	cmd.Env = append(append(os.Environ(), "TF_CPP_MIN_LOG_LEVEL=2", "METALPLUG_TEST_LIB="+lib), askDevice...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	for _, line := range strings.Split(stdout.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "RESULT "); ok {
			return []byte(rest), stderr.String(), err
		}
	}
	return nil, stderr.String(), err
}

// Load runs tests/integration/py/devices.py, as the integration test
// TestDeviceAppearsAndRunsMatMul does.
func (s realSteps) Load(python, lib string) (Load, error) {
	res, stderr, err := s.script(python, lib, "devices.py")
	var l Load
	l.Line, l.Mode = parseLoadLine(stderr)
	if res == nil {
		return l, fmt.Errorf("devices.py printed no result (%v): %s", err, tail(stderr, 1500))
	}
	if jerr := json.Unmarshal(res, &l); jerr != nil {
		return l, fmt.Errorf("devices.py printed a bad result %q: %v", res, jerr)
	}
	return l, err
}

func (realSteps) Sweep(o sweep.Options) (*sweep.Report, error) { return sweep.Run(o) }

// GraphPass runs tests/integration/py/graph_pass.py, as the integration
// test TestGraphPass does with the pass on: TensorFlow's remapper and
// Grappler's plugin interface change between releases, so each one runs it.
func (s realSteps) GraphPass(python, lib string) (GraphPass, error) {
	res, stderr, err := s.script(python, lib, "graph_pass.py")
	if res == nil {
		return GraphPass{}, fmt.Errorf("graph_pass.py printed no result (%v): %s", err, tail(stderr, 1500))
	}
	var r struct {
		Cases    map[string]json.RawMessage `json:"cases"`
		Problems []string                   `json:"problems"`
	}
	if jerr := json.Unmarshal(res, &r); jerr != nil {
		return GraphPass{}, fmt.Errorf("graph_pass.py printed a bad result: %v", jerr)
	}
	return GraphPass{Cases: len(r.Cases), Problems: r.Problems}, err
}

func (realSteps) DiskUsage(dir string) (int64, error) { return diskUsage(dir) }

// Run resolves the axes, runs the cells the filter selects one after
// another (each is a TensorFlow or jax install, a build and a sweep or a
// smoke test: two at once would only slow both on this machine) and returns
// what they found. A cell that fails is recorded and the next one runs; the
// error is only for a run that could not start.
func Run(o Options) (*Result, error) {
	o.defaults()
	start := o.Now()
	res := &Result{Generated: start.UTC(), Filter: o.Filter}
	if o.JaxPin == "" {
		pin, err := build.ReadJaxPin(o.Root)
		if err != nil {
			return nil, err
		}
		o.JaxPin = pin
	}
	pythons := o.Pythons
	if pythons == nil {
		res.Interpreters = FindPythons(os.Getenv("PATH"))
		pythons = Pythons(res.Interpreters)
		for _, in := range res.Interpreters {
			if in.Skipped != "" {
				o.Log("matrix: %s (%s) is not on the Python axis: %s", in.Command, in.Found, in.Skipped)
			}
		}
	} else {
		for _, p := range pythons {
			res.Interpreters = append(res.Interpreters, Interpreter{Command: p.Command, Found: p.Path, Python: &p})
		}
	}
	if len(pythons) == 0 {
		return nil, fmt.Errorf("no usable python3.X on PATH: the Python axis is empty")
	}
	plat := o.Platform
	if plat == nil {
		p := ThisPlatform(pythons[0].Glibc)
		plat = &p
	}
	res.Platform = fmt.Sprintf("%s/%s, wheels %s", plat.GOOS, plat.GOARCH, plat)
	rs := &Resolver{Index: &Index{URL: o.Index, Client: o.Client}, Platform: *plat}
	cells, resolutions := rs.Plan(pythons)
	jaxPythons, found, noJaxPython := o.jaxPythons(pythons)
	res.JaxInterpreters = found
	res.JaxSupported = o.JaxPin
	jaxCells, jaxResolutions := rs.PlanJax(jaxPythons, noJaxPython)
	cells, resolutions = append(cells, jaxCells...), append(resolutions, jaxResolutions...)
	res.Resolutions = resolutions
	res.Plan = cells
	for _, r := range resolutions {
		what := r.Axis
		if r.Frontend == FrontendJax {
			what = "jax " + r.Axis
		}
		switch {
		case r.Error != "":
			o.Log("matrix: %s (py%s): %s", what, orDash(r.Python), r.Error)
		case r.Jaxlib != nil:
			o.Log("matrix: %s (py%s) is %s %s with %s %s", what, r.Python, r.Release.Distribution, r.Release.Version, r.Jaxlib.Distribution, r.Jaxlib.Version)
		default:
			o.Log("matrix: %s (py%s) is %s %s", what, r.Python, r.Release.Distribution, r.Release.Version)
		}
	}
	selected, err := Select(cells, o.Filter)
	if err != nil {
		return nil, err
	}
	for i, c := range selected {
		o.Log("matrix: cell %d of %d: %s", i+1, len(selected), c.Name)
		cr := runCell(o, c)
		o.Log("matrix: %s: %s", c.Name, cr.Summary())
		res.Cells = append(res.Cells, cr)
	}
	res.WallSeconds = o.Now().Sub(start).Seconds()
	return res, nil
}

// Options say what to run.
type Options struct {
	// Root is the source tree; "." when empty.
	Root string
	// Filter selects cells (see Cell.Matches); empty runs them all.
	Filter string
	// Index is the package index's Simple API; DefaultIndex when empty.
	Index string
	// Client asks the index; a default client when nil.
	Client *http.Client
	// Pythons is the Python axis; nil finds the python3.X on PATH.
	Pythons []Python
	// JaxPythons are the interpreters of the jax cells. Nil takes those of
	// the Python axis that are 3.12 or newer, or, when it has none, the one
	// FindPython finds (pyenv's versions are not on PATH unless selected);
	// empty means there is none.
	JaxPythons []Python
	// FindPython finds a Python of at least 3.minor; setup/venv's
	// FindPython (which honours METALPLUG_JAX_PYTHON) when nil.
	FindPython func(minor int) (string, error)
	// JaxPin is the jaxlib minor the tree supports; read from
	// JAX_SUPPORTED_VERSION under Root when empty.
	JaxPin string
	// Platform is the machine wheels must fit; nil for this one.
	Platform *Platform
	// Steps run the cells; nil for the real ones.
	Steps Steps
	Log   Logf
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

func (o *Options) defaults() {
	if o.Root == "" {
		o.Root = "."
	}
	if abs, err := filepath.Abs(o.Root); err == nil {
		o.Root = abs
	}
	if o.Steps == nil {
		o.Steps = realSteps{root: o.Root}
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.FindPython == nil {
		o.FindPython = venv.FindPython
	}
}

// jaxPythons are the interpreters of the jax cells (see Options.JaxPythons),
// the ones found outside the axis, and why there are none, when there are
// none.
func (o Options) jaxPythons(axis []Python) (ps []Python, found []Interpreter, none string) {
	none = fmt.Sprintf("no Python 3.%d or newer here (jax 0.11 and later need it)", JaxMinPython)
	if o.JaxPythons != nil {
		if len(o.JaxPythons) == 0 {
			return nil, nil, none
		}
		return o.JaxPythons, nil, ""
	}
	for _, p := range axis {
		if pythonMinor(p) >= JaxMinPython {
			ps = append(ps, p)
		}
	}
	if len(ps) > 0 {
		return ps, nil, ""
	}
	path, err := o.FindPython(JaxMinPython)
	if err != nil {
		return nil, nil, fmt.Sprintf("the Python axis has no Python 3.%d or newer, and none was found elsewhere: %v", JaxMinPython, err)
	}
	in := DescribePython(path)
	if in.Python == nil {
		return nil, []Interpreter{in}, fmt.Sprintf("the Python axis has no Python 3.%d or newer, and %s, found elsewhere, cannot be used: %s", JaxMinPython, path, in.Skipped)
	}
	if pythonMinor(*in.Python) < JaxMinPython {
		return nil, []Interpreter{in}, fmt.Sprintf("%s is Python %s, older than 3.%d", path, in.Python.Version, JaxMinPython)
	}
	return []Python{*in.Python}, []Interpreter{in}, ""
}

// pythonMinor is 11 for Python 3.11; -1 when the version does not say.
func pythonMinor(p Python) int {
	_, m, ok := strings.Cut(p.Minor(), ".")
	n, err := strconv.Atoi(m)
	if !ok || err != nil {
		return -1
	}
	return n
}

// runCell runs one cell's steps, each only if the one before succeeded, and
// records how far it got: a TensorFlow cell's here, a jax cell's after its
// venv in runJaxCell.
func runCell(o Options, c Cell) (r CellResult) {
	r = CellResult{Cell: c, Measured: o.Now().UTC()}
	if c.Skip != "" {
		r.Skipped = c.Skip
		return r
	}
	start := o.Now()
	defer func() { r.WallSeconds = o.Now().Sub(start).Seconds() }()
	step := func(name string, f func() error) bool {
		t := o.Now()
		err := f()
		r.Steps = append(r.Steps, StepTime{Name: name, Seconds: o.Now().Sub(t).Seconds()})
		if err != nil {
			r.Error = name + ": " + err.Error()
			o.Log("matrix: %s: %s", c.Name, tail(r.Error, 2000))
			return false
		}
		return true
	}
	var dir string
	if !step("venv", func() (err error) { dir, err = o.Steps.Venv(c, o.Log); return }) {
		return r
	}
	// Measured after the rest, whatever happens there: the venv is on disk.
	defer func() {
		if n, err := o.Steps.DiskUsage(dir); err == nil {
			r.VenvBytes = n
		}
	}()
	py := venv.Python(dir)
	if c.IsJax() {
		runJaxCell(o, c, &r, py, step)
		return r
	}
	var rep *probe.Report
	if !step("probe", func() (err error) {
		if rep, err = o.Steps.Probe(py); err != nil {
			return err
		}
		r.Installed = rep.TensorFlow.Distribution + " " + rep.TensorFlow.Version
		if rep.TensorFlow.Version != c.Release.Version {
			return fmt.Errorf("the venv has %s, not %s", r.Installed, c.Release.Requirement())
		}
		return nil
	}) {
		return r
	}
	r.KernelsExperimentalHeader = rep.Has(probe.FeatureKernelsExperimental)
	for _, s := range rep.Symbols {
		if s.Header == "kernels_experimental.h" && s.Exported {
			r.EntryPointsExported++
		}
	}
	r.EntryPoints = len(capi.KernelsExperimental)
	r.ResourceVariableAPI = rep.ResourceVariableAPI()
	if exp, known := ExpectedResourceVariableAPI(c.Release.Version); known {
		r.ExpectedAPI = &exp
	}
	lib := filepath.Join(o.Root, "build", "matrix", c.Name, build.LibraryName(rep.GOOS))
	if !step("build", func() error { return o.Steps.Build(rep, c.Pin(), lib, o.Log) }) {
		return r
	}
	r.Compiled = true
	if !step("load", func() error {
		l, err := o.Steps.Load(py, lib)
		r.LoadLine, r.Mode = l.Line, l.Mode
		if err != nil {
			return err
		}
		if ok, why := l.ok(); !ok {
			return fmt.Errorf("%s", why)
		}
		return nil
	}) {
		return r
	}
	r.Loaded = true
	step("sweep", func() error {
		logPath := filepath.Join(filepath.Dir(lib), "sweep.log")
		if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
			return err
		}
		f, err := os.Create(logPath)
		if err != nil {
			return err
		}
		defer f.Close()
		// Errors name the log relative to the tree: they end up in docs/.
		if rel, err := filepath.Rel(o.Root, logPath); err == nil {
			logPath = rel
		}
		so := sweep.Options{Python: py, Library: lib, Out: f}
		if !rep.ResourceVariableAPI() {
			so.NeedsEntryPoint = lower.VariableOps()
		}
		sr, err := o.Steps.Sweep(so)
		if err != nil {
			return fmt.Errorf("%w (log: %s)", err, logPath)
		}
		r.Sweep = sweepCounts(sr)
		if sr.Err() != nil {
			return fmt.Errorf("%s (log: %s)", sweepProblems(sr), logPath)
		}
		return nil
	})
	step("graph pass", func() error {
		g, err := o.Steps.GraphPass(py, lib)
		r.GraphPass = &g
		if err != nil {
			return err
		}
		if len(g.Problems) > 0 {
			return fmt.Errorf("graph pass: %s", strings.Join(g.Problems, "; "))
		}
		return nil
	})
	return r
}

// sweepCounts keeps what the matrix reports of a sweep, and how the
// resource-variable ops fared: registered at all (the device's variable
// kernels) and verified.
func sweepCounts(sr *sweep.Report) *SweepCounts {
	s := &SweepCounts{
		Kernels: sr.Kernels, Cases: len(sr.Cases), Verified: sr.Verified, NeedsEntryPoint: sr.NeedsEntryPoint,
		Unaccounted: sr.Unaccounted, AuditProblems: len(sr.AuditProblems), Seconds: sr.Wall.Seconds(),
	}
	for _, c := range sr.Cases {
		if slices.Contains(lower.VariableOps(), c.Op) {
			s.VariableCases++
			if c.Status == sweep.Verified {
				s.VariableVerified++
			}
		}
	}
	return s
}

// sweepProblems says what failed a sweep in a few lines: sweep.Report.Err
// names every unaccounted case, hundreds of them when a whole family of ops
// lacks something, where the matrix wants the statuses and the ops.
func sweepProblems(sr *sweep.Report) string {
	type group struct {
		n   int
		ops []string
	}
	groups := map[sweep.Status]*group{}
	var statuses []sweep.Status
	for _, c := range sr.Cases {
		if c.Status.Accounted() {
			continue
		}
		g, ok := groups[c.Status]
		if !ok {
			g = &group{}
			groups[c.Status] = g
			statuses = append(statuses, c.Status)
		}
		g.n++
		if !slices.Contains(g.ops, c.Op) {
			g.ops = append(g.ops, c.Op)
		}
	}
	var parts []string
	if sr.Unaccounted > 0 {
		slices.Sort(statuses)
		var gs []string
		for _, st := range statuses {
			g := groups[st]
			gs = append(gs, fmt.Sprintf("%s: %d cases of %s", st, g.n, strings.Join(g.ops, ", ")))
		}
		parts = append(parts, fmt.Sprintf("%d cases unaccounted (%s)", sr.Unaccounted, strings.Join(gs, "; ")))
	}
	if n := len(sr.AuditProblems); n > 0 {
		parts = append(parts, fmt.Sprintf("%d registration problems, the first: %s", n, sr.AuditProblems[0]))
	}
	if n := len(sr.Problems); n > 0 {
		parts = append(parts, fmt.Sprintf("%d worker problems, the first: %s", n, sr.Problems[0]))
	}
	return strings.Join(parts, "; ")
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func fmtPtr(f *float64) string {
	if f == nil {
		return "nothing"
	}
	return fmt.Sprint(*f)
}

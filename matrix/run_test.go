package matrix

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metalplug/metalplug/plugin/tf/capi"
	"github.com/metalplug/metalplug/plugin/tf/lower"
	"github.com/metalplug/metalplug/plugin/version"
	"github.com/metalplug/metalplug/setup/probe"
	"github.com/metalplug/metalplug/sweep"
)

// fakeSteps plays each step from a table keyed by the cell's version, and
// records what it was asked.
type fakeSteps struct {
	// api says whether a version's framework exports kernels_experimental.h.
	api map[string]bool
	// fail names the step that fails for a version.
	fail map[string]string
	// installed overrides the version the probe finds.
	installed map[string]string
	// varKernels says whether the plugin registers its variable kernels.
	varKernels, varKernelsAlways bool
	// jaxBuildsAnyMinor plays a build that takes any jaxlib minor;
	// tfInJaxVenv a jax venv that has TensorFlow too.
	jaxBuildsAnyMinor, tfInJaxVenv bool

	calls      []string
	pins       map[string]string // version -> pin passed to Build
	needsEntry map[string][]string
	byVenv     map[string]string // venv dir -> version
	jaxBuilt   map[string]string // jax version -> library built
}

func newFake() *fakeSteps {
	return &fakeSteps{
		api:        map[string]bool{"2.19.1": true, "2.20.0": false, "2.21.0": false, "2.23.0.dev20261026": true},
		fail:       map[string]string{},
		installed:  map[string]string{},
		varKernels: true,
		pins:       map[string]string{},
		needsEntry: map[string][]string{},
		byVenv:     map[string]string{},
		jaxBuilt:   map[string]string{},
	}
}

func (f *fakeSteps) version(path string) string {
	for dir, v := range f.byVenv {
		if strings.HasPrefix(path, dir) {
			return v
		}
	}
	return "?"
}

func (f *fakeSteps) step(name, v string) error {
	f.calls = append(f.calls, name+" "+v)
	if f.fail[v] == name {
		return fmt.Errorf("%s broke for %s", name, v)
	}
	return nil
}

func (f *fakeSteps) Venv(c Cell, log Logf) (string, error) {
	dir := "/venvs/" + c.VenvName()
	f.byVenv[dir] = c.Release.Version
	return dir, f.step("venv", c.Release.Version)
}

func (f *fakeSteps) Probe(python string) (*probe.Report, error) {
	v := f.version(python)
	if err := f.step("probe", v); err != nil {
		return nil, err
	}
	r := &probe.Report{GOOS: "linux", GOARCH: "amd64"}
	r.TensorFlow.Distribution, r.TensorFlow.Version = "tensorflow-cpu", v
	if got, ok := f.installed[v]; ok {
		r.TensorFlow.Version = got
	}
	r.Headers.Features = map[string]bool{probe.FeatureKernelsExperimental: true}
	for i, n := range capi.KernelsExperimental {
		// Without the API, only some are exported: the count must show it.
		r.Symbols = append(r.Symbols, probe.Symbol{Name: n, Header: "kernels_experimental.h", Exported: f.api[v] || i < 3})
	}
	return r, nil
}

func (f *fakeSteps) Build(r *probe.Report, pin, out string, log Logf) error {
	f.pins[r.TensorFlow.Version] = pin
	return f.step("build", r.TensorFlow.Version)
}

func (f *fakeSteps) Load(python, lib string) (Load, error) {
	v := f.version(python)
	if err := f.step("load", v); err != nil {
		return Load{Line: "metalplug: built for TensorFlow x but y is running: offering no device"}, nil
	}
	mode := "synchronous"
	line := "metalplug: METALPLUG_HOST device METALPLUG_HOST:0 on the host driver (built against TensorFlow " + v + ", synchronous execution, because this TensorFlow does not export the kernels_experimental.h resource-variable API)"
	if f.api[v] {
		mode = "asynchronous"
		line = "metalplug: METALPLUG_HOST device METALPLUG_HOST:0 on the host driver (built against TensorFlow " + v + ", asynchronous execution)"
	}
	zero := 0.0
	return Load{Devices: []string{"/physical_device:" + deviceType + ":0"}, MatMulDevice: "/job:localhost/replica:0/task:0/device:" + deviceType + ":0",
		MatMulError: &zero, Line: line, Mode: mode}, nil
}

func (f *fakeSteps) Sweep(o sweep.Options) (*sweep.Report, error) {
	v := f.version(o.Python)
	f.needsEntry[v] = o.NeedsEntryPoint
	if err := f.step("sweep", v); err != nil {
		return nil, err
	}
	r := &sweep.Report{Kernels: 12, Wall: 90 * time.Second}
	r.Cases = append(r.Cases, sweep.Case{ID: "MatMul:T=float32", Op: "MatMul", Status: sweep.Verified})
	// The plugin registers its variable kernels only where the API is
	// exported; varKernelsAlways plays a plugin that registers them anyway.
	if f.varKernels && f.api[v] || f.varKernelsAlways {
		for _, op := range lower.VariableOps()[:2] {
			st := sweep.Verified
			if len(o.NeedsEntryPoint) > 0 {
				st = sweep.NeedsEntryPoint
			}
			r.Cases = append(r.Cases, sweep.Case{ID: op + ":dtype=float32", Op: op, Status: st})
		}
	}
	for _, c := range r.Cases {
		switch c.Status {
		case sweep.Verified:
			r.Verified++
		case sweep.NeedsEntryPoint:
			r.NeedsEntryPoint++
		}
	}
	return r, nil
}

func (f *fakeSteps) DiskUsage(dir string) (int64, error) { return 1500 << 20, nil }

func (f *fakeSteps) GraphPass(python, lib string) (GraphPass, error) {
	v := f.version(python)
	if err := f.step("graphpass", v); err != nil {
		return GraphPass{Cases: 16, Problems: []string{"conv_Relu: ran [Conv2D] on the device"}}, nil
	}
	return GraphPass{Cases: 16}, nil
}

// The jax steps, keyed by the cell's jax version as the others are.

func (f *fakeSteps) ProbeJax(python string) (*probe.Report, error) {
	v := f.version(python)
	if err := f.step("probe", v); err != nil {
		return nil, err
	}
	r := &probe.Report{GOOS: "linux", GOARCH: "amd64", Jax: &probe.Jax{Version: v, JaxlibVersion: v,
		StablehloCurrent: "1.13.5", StablehloMinimum: "1.0.0", PJRTFramework: "0.114", PJRTMinimum: "0.67"}}
	if got, ok := f.installed[v]; ok {
		r.Jax.JaxlibVersion = got
	}
	if f.tfInJaxVenv {
		r.TensorFlow.Distribution, r.TensorFlow.Version = "tensorflow-cpu", "2.21.0"
	}
	return r, nil
}

// BuildJax refuses a jaxlib of another minor than 0.12 as setup/build does,
// unless jaxBuildsAnyMinor plays a build that takes it.
func (f *fakeSteps) BuildJax(r *probe.Report, out string, log Logf) error {
	v := r.Jax.Version
	f.jaxBuilt[v] = out
	if err := f.step("build", v); err != nil {
		return err
	}
	if !f.jaxBuildsAnyMinor && version.Minor(r.Jax.JaxlibVersion) != "0.12" {
		return fmt.Errorf("jaxlib %s is installed for /venvs/x/bin/python, but this tree supports jaxlib 0.12 (JAX_SUPPORTED_VERSION): install it", r.Jax.JaxlibVersion)
	}
	return nil
}

func (f *fakeSteps) InstallJax(lib string, r *probe.Report) error {
	return f.step("install", r.Jax.Version)
}

// JaxDevices offers the device for jaxlib 0.12; for another minor the
// jax_plugins module declines, as it does for a library stamped for 0.12.
func (f *fakeSteps) JaxDevices(python string) (JaxLoad, error) {
	v := f.version(python)
	if err := f.step("load", v); err != nil {
		return JaxLoad{Jaxlib: v, Error: "RuntimeError: Unknown backend metalplug", Lines: []string{"metalplug: PJRT_Client_Create: no driver"}}, nil
	}
	if version.Minor(v) != "0.12" {
		return JaxLoad{Jaxlib: v, Error: "RuntimeError: Unknown backend metalplug",
			Lines: []string{"metalplug: /venvs/lib/libmetalplug.so was built for jaxlib 0.12.0.1 but jaxlib " + v + " is running: not registering"}}, nil
	}
	return JaxLoad{Jaxlib: v, Devices: []string{"METALPLUG_HOST_0"}, DeviceKind: "host reference driver", PlatformVersion: "metalplug 0.1.0"}, nil
}

func (f *fakeSteps) JaxSmoke(python string) (JaxSmoke, error) {
	v := f.version(python)
	s := JaxSmoke{Cases: 27, Lines: []string{"metalplug: PJRT call: PJRT_Client_Create (first)"}}
	if err := f.step("smoke", v); err != nil {
		s.Failures = []string{"matmul: Not equal to tolerance rtol=1e-05", "cumsum: shapes differ"}
	}
	return s, nil
}

// fakeClock advances a minute per reading, so every wall time is positive
// and deterministic.
func fakeClock() func() time.Time {
	t := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Minute); return t }
}

// runFake runs the matrix of nightlyIndex on the fake steps: TensorFlow
// with Python 3.11, jax with Python 3.12, and the tree supporting jaxlib 0.12.
func runFake(t *testing.T, f *fakeSteps, filter string) *Result {
	t.Helper()
	res, err := runFakeWith(t, f, Options{Filter: filter, JaxPythons: []Python{py312}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// runFakeWith is runFake with more options set.
func runFakeWith(t *testing.T, f *fakeSteps, o Options) (*Result, error) {
	t.Helper()
	rs, _ := nightlyIndex(t)
	o.Root, o.Index, o.Pythons, o.Platform, o.Steps, o.Now, o.JaxPin = t.TempDir(), rs.Index.URL, []Python{py311}, &linux, f, fakeClock(), "0.12"
	if o.FindPython == nil {
		o.FindPython = func(int) (string, error) { return "", errors.New("the test has no other Python") }
	}
	return Run(o)
}

// nightlyIndex is an index whose newest release is 2.21.0 and whose newest
// nightly is tf-nightly 2.23.0.dev20261026, as PyPI had them, and whose
// newest jax is 0.12.0.1 and the newest before it 0.11.2, each with its
// jaxlib.
func nightlyIndex(t *testing.T) (*Resolver, *int) {
	cpu := "tensorflow-cpu"
	files := map[string][]fakeFile{cpu: nil, "tf-nightly": {{name: linuxWheel("tf-nightly", "2.23.0.dev20261026", "cp311")}}}
	versions := map[string][]string{cpu: Releases, "tf-nightly": {"2.23.0.dev20261026"}}
	for _, v := range Releases {
		files[cpu] = append(files[cpu], fakeFile{name: linuxWheel(cpu, v, "cp311")})
	}
	for _, v := range []string{"0.11.2", "0.12.0.1"} {
		files["jax"] = append(files["jax"], fakeFile{name: jaxWheel(v), requires: ">=3.12"})
		files["jaxlib"] = append(files["jaxlib"], fakeFile{name: linuxWheel("jaxlib", v, "cp312"), requires: ">=3.12"})
	}
	versions["jax"], versions["jaxlib"] = []string{"0.11.2", "0.12.0.1"}, []string{"0.11.2", "0.12.0.1"}
	srv, n := fakePyPI(t, files, versions)
	return &Resolver{Index: &Index{URL: srv.URL + "/simple/"}, Platform: linux}, n
}

// tfCells are the TensorFlow cells of a result.
func tfCells(res *Result) []CellResult {
	var out []CellResult
	for _, c := range res.Cells {
		if !c.IsJax() {
			out = append(out, c)
		}
	}
	return out
}

func TestRunRecordsEveryCellAndAFailureStopsOnlyItsCell(t *testing.T) {
	f := newFake()
	f.fail["2.20.0"] = "build"
	res := runFake(t, f, "")
	if len(res.Cells) != 6 || len(tfCells(res)) != 4 {
		t.Fatalf("%d cells, want 4 of TensorFlow and 2 of jax: %+v", len(res.Cells), res.Cells)
	}
	by := map[string]CellResult{}
	for _, c := range res.Cells {
		by[c.Release.Version] = c
	}
	bad := by["2.20.0"]
	if !bad.Failed() || !strings.HasPrefix(bad.Error, "build: build broke") || bad.Compiled || bad.Loaded || bad.Sweep != nil {
		t.Errorf("the failing cell: %+v", bad)
	}
	if bad.VenvBytes == 0 {
		t.Error("a cell that failed after its venv was made does not report the venv's size")
	}
	if slices.Contains(f.calls, "load 2.20.0") {
		t.Error("the load test ran after the build failed")
	}
	// The cells after it ran in full.
	for _, v := range []string{"2.21.0", "2.23.0.dev20261026"} {
		if c := by[v]; !c.Loaded || c.Sweep == nil || c.Failed() {
			t.Errorf("%s after the failing cell: %+v", v, c)
		}
	}
	if err := res.Err(); err == nil || !strings.Contains(err.Error(), "tensorflow-cpu-2.20.0-py3.11") {
		t.Errorf("Err = %v", err)
	}
	// Cells run one after another, each in order venv, probe, build, load,
	// sweep, graph pass.
	want := []string{"venv 2.19.1", "probe 2.19.1", "build 2.19.1", "load 2.19.1", "sweep 2.19.1", "graphpass 2.19.1", "venv 2.20.0", "probe 2.20.0", "build 2.20.0", "venv 2.21.0"}
	if got := f.calls[:len(want)]; !slices.Equal(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
}

func TestRunPassesEachCellItsPinAndTheOpsThatNeedAnEntryPoint(t *testing.T) {
	f := newFake()
	res := runFake(t, f, "")
	for v, pin := range map[string]string{"2.19.1": "2.19", "2.20.0": "2.20", "2.21.0": "2.21", "2.23.0.dev20261026": "2.23"} {
		if f.pins[v] != pin {
			t.Errorf("%s built with pin %q, want %s", v, f.pins[v], pin)
		}
	}
	for v, api := range f.api {
		got := f.needsEntry[v]
		if api && got != nil || !api && !slices.Equal(got, lower.VariableOps()) {
			t.Errorf("%s (API %v): NeedsEntryPoint %v", v, api, got)
		}
	}
	for _, c := range tfCells(res) {
		if c.ResourceVariableAPI != f.api[c.Release.Version] {
			t.Errorf("%s: API %v", c.Name, c.ResourceVariableAPI)
		}
		wantExported := 3
		if f.api[c.Release.Version] {
			wantExported = len(capi.KernelsExperimental)
		}
		if c.EntryPointsExported != wantExported || c.EntryPoints != len(capi.KernelsExperimental) {
			t.Errorf("%s: %d of %d exported, want %d", c.Name, c.EntryPointsExported, c.EntryPoints, wantExported)
		}
		if text, ok := c.Behaviour(); !ok {
			t.Errorf("%s: %s", c.Name, text)
		}
		if c.ExpectedAPI == nil || *c.ExpectedAPI != f.api[c.Release.Version] {
			t.Errorf("%s: expected API %v", c.Name, c.ExpectedAPI)
		}
		if c.WallSeconds <= 0 || len(c.Steps) != 6 || c.GraphPass == nil || c.GraphPass.Cases != 16 {
			t.Errorf("%s: wall %v, steps %v", c.Name, c.WallSeconds, c.Steps)
		}
	}
	if res.Cells[2].Axes[1] != "newest release" || res.Cells[3].Channel != ChannelNightly {
		t.Errorf("axes: %+v / %+v", res.Cells[2].Cell, res.Cells[3].Cell)
	}
}

func TestRunFilterRunsOneCell(t *testing.T) {
	f := newFake()
	res := runFake(t, f, "2.19.1")
	if len(res.Cells) != 1 || res.Cells[0].Release.Version != "2.19.1" || len(res.Plan) != 6 {
		t.Fatalf("cells %+v, plan %d", res.Cells, len(res.Plan))
	}
	for _, c := range f.calls {
		if !strings.HasSuffix(c, " 2.19.1") {
			t.Errorf("the filtered run ran %s", c)
		}
	}
	f = newFake()
	if res := runFake(t, f, "nightly"); len(res.Cells) != 1 || res.Cells[0].Release.Distribution != "tf-nightly" {
		t.Errorf("nightly: %+v", res.Cells)
	}
	if _, err := runFakeWith(t, newFake(), Options{Filter: "2.18.0", JaxPythons: []Python{py312}}); err == nil {
		t.Error("a filter that selects nothing ran")
	}
}

func TestRunNoticesWhatTheCellDidWrong(t *testing.T) {
	// The venv holds another version than asked: the probe step fails.
	f := newFake()
	f.installed["2.19.1"] = "2.19.0"
	if c := runFake(t, f, "2.19.1").Cells[0]; !strings.Contains(c.Error, "probe: the venv has tensorflow-cpu 2.19.0") {
		t.Errorf("wrong version installed: %q", c.Error)
	}
	// The device does not appear: the load step fails and says why.
	f = newFake()
	f.fail["2.21.0"] = "load"
	c := runFake(t, f, "2.21.0").Cells[0]
	if c.Loaded || !strings.Contains(c.Error, "offering no device") || c.Sweep != nil {
		t.Errorf("no device: %+v", c)
	}
	// The API is exported but the plugin registers no variable kernels yet:
	// the cell passes, and the behaviour note says it is not as it should be.
	f = newFake()
	f.varKernels = false
	c = runFake(t, f, "2.19.1").Cells[0]
	if text, ok := c.Behaviour(); ok || !strings.Contains(text, "no device variable kernels") || c.Failed() {
		t.Errorf("no variable kernels: %q %v", text, c.Error)
	}
	// The API is not exported but the plugin registered variable kernels:
	// the sweep counts them apart, and the behaviour note flags it.
	f = newFake()
	f.varKernelsAlways = true
	c = runFake(t, f, "2.20.0").Cells[0]
	if text, ok := c.Behaviour(); ok || !strings.Contains(text, "API not exported, but 2 device variable kernel cases") || c.Sweep.NeedsEntryPoint != 2 {
		t.Errorf("variable kernels without the API: %q %+v", text, c.Sweep)
	}
	// The sweep cannot run.
	f = newFake()
	f.fail["2.20.0"] = "sweep"
	if c := runFake(t, f, "2.20.0").Cells[0]; !c.Loaded || !strings.HasPrefix(c.Error, "sweep: ") {
		t.Errorf("sweep failure: %+v", c)
	}
}

func TestParseLoadLine(t *testing.T) {
	stderr := strings.Join([]string{
		"2026-11-30 12:00:00.000 I tensorflow/core/...: something",
		"metalplug: METALPLUG_HOST device METALPLUG_HOST:0 on the host driver (built against TensorFlow 2.21.0, synchronous execution, because this TensorFlow does not export the kernels_experimental.h resource-variable API)",
	}, "\n")
	line, mode := parseLoadLine(stderr)
	if mode != "synchronous" || !strings.HasPrefix(line, "metalplug: METALPLUG_HOST device") {
		t.Errorf("%q %q", line, mode)
	}
	if _, mode := parseLoadLine("metalplug: X device X:0 on the host driver (built against TensorFlow 2.19.1, asynchronous execution)"); mode != "asynchronous" {
		t.Errorf("asynchronous read as %q", mode)
	}
	line, mode = parseLoadLine("noise\nmetalplug: METALPLUG_DISABLE=1 is set: offering no device\n")
	if mode != "" || line != "metalplug: METALPLUG_DISABLE=1 is set: offering no device" {
		t.Errorf("decline: %q %q", line, mode)
	}
}

func TestLoadOK(t *testing.T) {
	zero, big := 0.0, 1.0
	good := Load{Devices: []string{"/physical_device:" + deviceType + ":0"}, MatMulDevice: "/job:localhost/replica:0/task:0/device:" + deviceType + ":0", MatMulError: &zero}
	if ok, why := good.ok(); !ok {
		t.Error(why)
	}
	for name, l := range map[string]Load{
		"no device":  {Line: "metalplug: offering no device"},
		"on the CPU": {Devices: good.Devices, MatMulDevice: "/job:localhost/replica:0/task:0/device:CPU:0", MatMulError: &zero},
		"wrong":      {Devices: good.Devices, MatMulDevice: good.MatMulDevice, MatMulError: &big},
		"no answer":  {Devices: good.Devices, MatMulDevice: good.MatMulDevice},
	} {
		if ok, _ := l.ok(); ok {
			t.Errorf("%s passed", name)
		}
	}
}

func TestSweepProblems(t *testing.T) {
	r := &sweep.Report{Unaccounted: 4, AuditProblems: []string{"dup A", "dup B"}}
	for _, c := range []struct {
		op string
		st sweep.Status
	}{{"MatMul", sweep.Verified}, {"ResourceGather", sweep.NoRecipe}, {"ResourceGather", sweep.NoRecipe}, {"AssignVariableOp", sweep.NoRecipe}, {"Sqrt", sweep.Mismatch}} {
		r.Cases = append(r.Cases, sweep.Case{Op: c.op, Status: c.st})
	}
	got := sweepProblems(r)
	want := "4 cases unaccounted (mismatch: 1 cases of Sqrt; no-recipe: 3 cases of ResourceGather, AssignVariableOp); 2 registration problems, the first: dup A"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestGraphPassProblemsFailTheCell: a release whose Session test finds the
// pass not doing what it must fails its cell, with the problem in the error
// and the count in the table.
func TestGraphPassProblemsFailTheCell(t *testing.T) {
	f := newFake()
	f.fail["2.21.0"] = "graphpass"
	res := runFake(t, f, "2.21.0")
	c := res.Cells[0]
	if !c.Failed() || !strings.Contains(c.Error, "graph pass: conv_Relu") || c.GraphPass == nil || len(c.GraphPass.Problems) != 1 {
		t.Fatalf("cell %+v", c)
	}
	if got := graphPassText(c.GraphPass); got != "1 problems in 16" {
		t.Errorf("column %q", got)
	}
	if got := graphPassText(&GraphPass{Cases: 16}); got != "16 of 16" {
		t.Errorf("column %q", got)
	}
}

package matrix

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/setup/build"
)

// jaxCellsOf are a result's jax cells by jax version.
func jaxCellsOf(res *Result) map[string]CellResult {
	out := map[string]CellResult{}
	for _, c := range res.Cells {
		if c.IsJax() {
			out[c.Release.Version] = c
		}
	}
	return out
}

func stepNames(c CellResult) string {
	var n []string
	for _, s := range c.Steps {
		n = append(n, s.Name)
	}
	return strings.Join(n, " ")
}

func TestRunJaxCells(t *testing.T) {
	f := newFake()
	res := runFake(t, f, "")
	jc := jaxCellsOf(res)
	if len(jc) != 2 {
		t.Fatalf("jax cells %v", jc)
	}
	n := jc["0.12.0.1"]
	if n.Failed() || !n.Compiled || !n.Loaded || n.Jax == nil || n.Jax.Declined != "" {
		t.Fatalf("newest: %+v", n)
	}
	j := n.Jax
	if j.Supported != "0.12" || j.Jax != "0.12.0.1" || j.Jaxlib != "0.12.0.1" || j.PJRTFramework != "0.114" || j.PJRTMinimum != "0.67" ||
		j.PJRTPlugin != build.PJRTVersion || j.StablehloMinimum != "1.0.0" || j.StablehloCurrent != "1.13.5" {
		t.Errorf("newest's probe: %+v", j)
	}
	if j.Smoke == nil || j.Smoke.Cases != 27 || len(j.Smoke.Failures) != 0 || j.Smoke.Passed() != "27 of 27 agree" {
		t.Errorf("newest's smoke test: %+v", j.Smoke)
	}
	if strings.Join(j.Devices, ",") != "METALPLUG_HOST_0" || j.DeviceKind != "host reference driver" || j.PlatformVersion != "metalplug 0.1.0" {
		t.Errorf("newest's devices: %+v", j)
	}
	if strings.Join(j.Lines, "|") != "metalplug: PJRT call: PJRT_Client_Create (first)" {
		t.Errorf("newest's plugin lines: %q", j.Lines)
	}
	if n.Installed != "jax 0.12.0.1, jaxlib 0.12.0.1" || stepNames(n) != "venv probe build install load smoke" || n.VenvBytes != 1500<<20 || n.WallSeconds <= 0 {
		t.Errorf("newest: installed %q, steps %s, venv %d, wall %v", n.Installed, stepNames(n), n.VenvBytes, n.WallSeconds)
	}
	if got := f.jaxBuilt["0.12.0.1"]; !strings.HasSuffix(got, filepath.Join("build", "matrix", "jax-0.12.0.1-py3.12", build.LibraryName(runtime.GOOS))) {
		t.Errorf("built at %s", got)
	}
	if n.EntryPoints != 0 || n.Sweep != nil || n.Mode != "" {
		t.Errorf("a jax cell has TensorFlow results: %+v", n)
	}

	// The release before is jaxlib 0.11, which the tree does not support:
	// the build refuses it, and that is recorded as a decline, not a failure.
	b := jc["0.11.2"]
	if b.Failed() || b.Compiled || b.Loaded || b.Jax == nil || b.Jax.Smoke != nil {
		t.Fatalf("release before: %+v", b)
	}
	if want := "the build refused it: jaxlib 0.11.2 is installed for /venvs/x/bin/python, but this tree supports jaxlib 0.12 (JAX_SUPPORTED_VERSION): install it"; b.Jax.Declined != want {
		t.Errorf("decline %q\nwant     %q", b.Jax.Declined, want)
	}
	if stepNames(b) != "venv probe build" || b.Jax.PJRTFramework != "0.114" {
		t.Errorf("release before: steps %s, %+v", stepNames(b), b.Jax)
	}
	if slices.Contains(f.calls, "install 0.11.2") {
		t.Error("a declined build was installed")
	}
	if !strings.HasPrefix(b.Summary(), "declined (the build refused it: jaxlib 0.11.2") {
		t.Errorf("summary %q", b.Summary())
	}
	if !strings.HasPrefix(n.Summary(), "compiled, loaded (1 device(s), kind host reference driver), smoke test 27 of 27 agree, PJRT API 0.114 (accepts 0.67 and up; the plugin's "+build.PJRTVersion+"), StableHLO 1.0.0 to 1.13.5") {
		t.Errorf("summary %q", n.Summary())
	}
	if err := res.Err(); err != nil {
		t.Errorf("Err = %v: no cell failed (a decline is none)", err)
	}
}

func TestRunJaxDeclineByTheModule(t *testing.T) {
	// A build that takes jaxlib 0.11: the jax_plugins module declines it
	// at load, with its line, and the smoke test does not run.
	f := newFake()
	f.jaxBuildsAnyMinor = true
	res := runFake(t, f, "jax previous")
	if len(res.Cells) != 1 {
		t.Fatalf("cells %+v", res.Cells)
	}
	c := res.Cells[0]
	if c.Failed() || !c.Compiled || c.Loaded || c.Jax.Smoke != nil || stepNames(c) != "venv probe build install load" {
		t.Errorf("%+v, steps %s", c, stepNames(c))
	}
	if want := "metalplug: /venvs/lib/libmetalplug.so was built for jaxlib 0.12.0.1 but jaxlib 0.11.2 is running: not registering"; c.Jax.Declined != want {
		t.Errorf("decline %q", c.Jax.Declined)
	}
	md := res.Markdown()
	for _, want := range []string{
		"| 0.11.2 | 0.11.2 | 3.12 | release before | yes | declined | - |",
		"- jax-0.11.2-py3.12: installed jax 0.11.2, jaxlib 0.11.2; declined: `metalplug: /venvs/lib/libmetalplug.so was built for jaxlib 0.12.0.1 but jaxlib 0.11.2 is running: not registering`.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the markdown lacks %q:\n%s", want, md)
		}
	}
	if res.Err() != nil {
		t.Errorf("a decline is a failure: %v", res.Err())
	}
}

func TestRunJaxFailures(t *testing.T) {
	run := func(setup func(f *fakeSteps)) CellResult {
		t.Helper()
		f := newFake()
		setup(f)
		return runFake(t, f, "jax 0.12").Cells[0]
	}
	for name, c := range map[string]struct {
		setup func(f *fakeSteps)
		want  string
	}{
		"smoke": {func(f *fakeSteps) { f.fail["0.12.0.1"] = "smoke" },
			"smoke: 2 of 27 programs differ from jax's CPU: matmul: Not equal to tolerance rtol=1e-05; cumsum: shapes differ"},
		"no device": {func(f *fakeSteps) { f.fail["0.12.0.1"] = "load" },
			"load: jax has no metalplug device (RuntimeError: Unknown backend metalplug); the plugin said: metalplug: PJRT_Client_Create: no driver"},
		"TensorFlow in the venv": {func(f *fakeSteps) { f.tfInJaxVenv = true },
			"probe: the venv has tensorflow-cpu 2.21.0: a jax cell's venv must have jax only"},
		"another jaxlib": {func(f *fakeSteps) { f.installed["0.12.0.1"] = "0.12.0" },
			"probe: the venv has jax 0.12.0.1, jaxlib 0.12.0, not jax==0.12.0.1 jaxlib==0.12.0.1"},
		// The supported minor failing to build is a failure, never a decline.
		"build": {func(f *fakeSteps) { f.fail["0.12.0.1"] = "build" }, "build: build broke for 0.12.0.1"},
		"venv":  {func(f *fakeSteps) { f.fail["0.12.0.1"] = "venv" }, "venv: venv broke for 0.12.0.1"},
	} {
		got := run(c.setup)
		if !got.Failed() || !strings.HasPrefix(got.Error, c.want) || got.Jax != nil && got.Jax.Declined != "" {
			t.Errorf("%s: error %q, want %q (%+v)", name, got.Error, c.want, got.Jax)
		}
	}
	// The smoke test's failures are kept with its count.
	if c := run(func(f *fakeSteps) { f.fail["0.12.0.1"] = "smoke" }); c.Jax.Smoke == nil || c.Jax.Smoke.Passed() != "25 of 27 agree" || !c.Loaded {
		t.Errorf("smoke failures: %+v", c.Jax.Smoke)
	}
}

func TestRunJaxFilterMergesWithEarlierResults(t *testing.T) {
	full := runFake(t, newFake(), "")
	root := t.TempDir()
	if err := WriteFiles(root, full); err != nil {
		t.Fatal(err)
	}
	prev, err := ReadJSON(filepath.Join(root, JSONPath))
	if err != nil {
		t.Fatal(err)
	}
	f := newFake()
	f.fail["0.12.0.1"] = "smoke"
	one := runFake(t, f, "jax")
	for _, c := range f.calls {
		if !strings.HasSuffix(c, " 0.12.0.1") && !strings.HasSuffix(c, " 0.11.2") {
			t.Errorf("the jax run ran %s", c)
		}
	}
	if len(one.Cells) != 2 || one.Filter != "jax" {
		t.Fatalf("the jax run measured %d cells", len(one.Cells))
	}
	m := Merge(prev, one)
	if len(m.Cells) != 6 || len(tfCells(m)) != 4 {
		t.Fatalf("merged %d cells", len(m.Cells))
	}
	if tfCells(m)[0].Sweep == nil || tfCells(m)[0].Sweep.Verified != 3 {
		t.Errorf("the TensorFlow cells lost their earlier results: %+v", tfCells(m)[0])
	}
	if c := jaxCellsOf(m)["0.12.0.1"]; !c.Failed() || c.Jax.Smoke.Passed() != "25 of 27 agree" {
		t.Errorf("the jax cell is not this run's: %+v", c)
	}
	md := m.Markdown()
	for _, want := range []string{
		"only the cells matching \"jax\" (the others are from earlier runs)",
		"| tensorflow-cpu 2.19.1 | 3.11 | 2.19.1 | yes | yes | asynchronous |",
		"| 0.12.0.1 | 0.12.0.1 | 3.12 | newest release | yes | yes | 25 of 27 agree |",
		"- jax-0.12.0.1-py3.12 (measured 2026-11-30",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the merged markdown lacks %q:\n%s", want, md)
		}
	}
	// The merge survives the files: what is written reads back the same.
	if err := WriteFiles(root, m); err != nil {
		t.Fatal(err)
	}
	back, _ := ReadJSON(filepath.Join(root, JSONPath))
	if back.Markdown() != md || jaxCellsOf(back)["0.11.2"].Jax.Declined == "" {
		t.Error("the merged result does not read back as written")
	}
}

func TestRunJaxWithoutAPython(t *testing.T) {
	res, err := runFakeWith(t, newFake(), Options{Filter: "jax"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != 2 || res.Err() != nil {
		t.Fatalf("cells %+v, err %v", res.Cells, res.Err())
	}
	want := "the Python axis has no Python 3.12 or newer, and none was found elsewhere: the test has no other Python"
	for _, c := range res.Cells {
		if c.Skipped != want || len(c.Steps) != 0 {
			t.Errorf("%s: skipped %q", c.Name, c.Skipped)
		}
	}
	md := res.Markdown()
	for _, w := range []string{
		"| - | - | - | newest release | skipped |",
		"| - | - | - | release before | skipped |",
		"- jax-newest-release: skipped: " + want,
		"- jax newest release (no Python): " + want,
	} {
		if !strings.Contains(md, w) {
			t.Errorf("the markdown lacks %q:\n%s", w, md)
		}
	}
}

// TestJaxPythonFoundOffTheAxis: with no 3.12+ on the axis, the Python
// FindPython names is described and used (its version decides), and the
// report says where it came from.
func TestJaxPythonFoundOffTheAxis(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell scripts")
	}
	dir := t.TempDir()
	script := func(name, v string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(`#!/bin/sh
echo '{"path": "/opt/py/`+v+`/bin/python3", "version": "`+v+`", "implementation": "cpython", "glibc": "2.36", "error": ""}'
`), 0o755)
		return p
	}
	new, old := script("python-new", "3.13.0"), script("python-old", "3.11.9")
	o := Options{FindPython: func(minor int) (string, error) {
		if minor != JaxMinPython {
			t.Errorf("asked for 3.%d", minor)
		}
		return new, nil
	}}
	ps, found, none := o.jaxPythons([]Python{py311})
	if len(ps) != 1 || ps[0].Version != "3.13.0" || ps[0].Path != "/opt/py/3.13.0/bin/python3" || len(found) != 1 || found[0].Found != new || none != "" {
		t.Fatalf("%+v %+v %q", ps, found, none)
	}
	r := &Result{JaxInterpreters: found}
	if md := r.Markdown(); !strings.Contains(md, "- Python 3.13.0 for jax: /opt/py/3.13.0/bin/python3, found off the Python axis by setup/venv's FindPython") {
		t.Errorf("the markdown does not say where jax's Python came from:\n%s", md)
	}
	o.FindPython = func(int) (string, error) { return old, nil }
	if ps, _, none := o.jaxPythons(nil); ps != nil || !strings.HasSuffix(none, "is Python 3.11.9, older than 3.12") {
		t.Errorf("an old Python: %v %q", ps, none)
	}
}

func TestPluginLines(t *testing.T) {
	stderr := strings.Join([]string{
		"WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
		"metalplug: /x/libmetalplug.so was built for jaxlib 0.12.0.1 but jaxlib 0.11.2 is running: not registering",
		"  metalplug: PJRT call: PJRT_Client_Create (first)",
		"metalplug: PJRT call: PJRT_Client_Create (first)",
		"not metalplug: this",
	}, "\n")
	got := pluginLines(stderr)
	if len(got) != 2 || !strings.HasSuffix(got[0], "is running: not registering") || got[1] != "metalplug: PJRT call: PJRT_Client_Create (first)" {
		t.Errorf("%q", got)
	}
	if (*JaxSmoke)(nil).Passed() != "-" {
		t.Error("no smoke test renders as a dash")
	}
}

func TestMarkdownJaxSection(t *testing.T) {
	res := runFake(t, newFake(), "")
	md := res.Markdown()
	for _, want := range []string{
		"# Version matrix: TensorFlow and jaxlib\n",
		"\n## jaxlib\n",
		"The tree pins jaxlib 0.12 (`JAX_SUPPORTED_VERSION`",
		"| jax | jaxlib | Python | Axis | Compiled | Loaded | Smoke test | PJRT API (measured in jaxlib; the plugin's) | StableHLO (oldest to newest) | Wall | Venv disk |",
		"| 0.12.0.1 | 0.12.0.1 | 3.12 | newest release | yes | yes | 27 of 27 agree | 0.114 (accepts 0.67 and up); plugin " + build.PJRTVersion + " | 1.0.0 to 1.13.5 | 13m00s | 1.46 GiB |",
		"| 0.11.2 | 0.11.2 | 3.12 | release before | declined | - | - | 0.114 (accepts 0.67 and up); plugin " + build.PJRTVersion + " | 1.0.0 to 1.13.5 | 7m00s | 1.46 GiB |",
		"- jax-0.12.0.1-py3.12: installed jax 0.12.0.1, jaxlib 0.12.0.1; devices `METALPLUG_HOST_0` (kind `host reference driver`, platform version `metalplug 0.1.0`); smoke test: 27 of 27 agree with jax's CPU.\n  The plugin said: `metalplug: PJRT call: PJRT_Client_Create (first)`",
		"- jax-0.11.2-py3.12: installed jax 0.11.2, jaxlib 0.11.2; declined: `the build refused it: jaxlib 0.11.2 is installed",
		"- jax newest release (Python 3.12): jax 0.12.0.1 (`jax-0.12.0.1-py3-none-any.whl`) with jaxlib 0.12.0.1 (`jaxlib-0.12.0.1-cp312-cp312-manylinux_2_27_x86_64.whl`)",
		"- jax release before (Python 3.12): jax 0.11.2 (`jax-0.11.2-py3-none-any.whl`) with jaxlib 0.11.2",
		"- jax-0.12.0.1-py3.12 (measured 2026-11-30 13:02): venv 1m00s, probe 1m00s, build 1m00s, install 1m00s, load 1m00s, smoke 1m00s",
		"- jax-0.11.2-py3.12 (measured 2026-11-30 13:17): venv 1m00s, probe 1m00s, build 1m00s",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the markdown lacks %q:\n%s", want, md)
		}
	}
	// The TensorFlow notes leave the jax cells alone, and the title no
	// longer says TensorFlow only.
	if strings.Contains(md, "- jax-0.12.0.1-py3.12: not probed") || strings.Contains(md, "# TensorFlow matrix") {
		t.Errorf("TensorFlow-only text about jax cells:\n%s", md)
	}
	// A decline is no error; nothing of jax is in the errors section.
	if i := strings.Index(md, "## Errors and skipped cells"); i >= 0 && strings.Contains(md[i:strings.Index(md, "## Time per step")], "jax") {
		t.Errorf("a jax cell is listed among the errors:\n%s", md[i:])
	}
}

// TestMeasureFailsOnlyForTheCellsItRan: a filtered run writes both files
// with the earlier results merged in, and fails for its own cells only,
// not for an earlier run's failed nightly.
func TestMeasureFailsOnlyForTheCellsItRan(t *testing.T) {
	root := t.TempDir()
	rs, _ := nightlyIndex(t)
	opts := func(f *fakeSteps, filter string) Options {
		return Options{Root: root, Filter: filter, Index: rs.Index.URL, Pythons: []Python{py311}, JaxPythons: []Python{py312},
			Platform: &linux, Steps: f, Now: fakeClock(), JaxPin: "0.12"}
	}
	f := newFake()
	f.fail["2.23.0.dev20261026"] = "sweep"
	if err := measure(opts(f, "")); err == nil || !strings.Contains(err.Error(), "tf-nightly-2.23.0.dev20261026-py3.11") {
		t.Fatalf("the full run: %v", err)
	}
	if err := measure(opts(newFake(), "jax")); err != nil {
		t.Errorf("the jax run failed for a cell it did not run: %v", err)
	}
	back, err := ReadJSON(filepath.Join(root, JSONPath))
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Cells) != 6 || back.Filter != "jax" || !strings.HasPrefix(back.Cells[3].Error, "sweep: ") || back.Cells[4].Name != "jax-0.12.0.1-py3.12" {
		t.Errorf("merged: filter %q, %d cells, nightly %q", back.Filter, len(back.Cells), back.Cells[3].Error)
	}
	if md, _ := os.ReadFile(filepath.Join(root, MarkdownPath)); string(md) != back.Markdown() {
		t.Error("docs/matrix.md is not the merged result's")
	}
	f = newFake()
	f.fail["0.12.0.1"] = "smoke"
	if err := measure(opts(f, "jax")); err == nil || !strings.Contains(err.Error(), "jax-0.12.0.1-py3.12 (smoke: 2 of 27") || strings.Contains(err.Error(), "nightly") {
		t.Errorf("the jax run with a failing smoke test: %v", err)
	}
}

func TestCodeSpan(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                    "`plain`",
		"run `pip install x` here": "`` run `pip install x` here ``",
		"a ``b`` c":                "``` a ``b`` c ```",
	} {
		if got := code(in); got != want {
			t.Errorf("code(%q) = %s, want %s", in, got, want)
		}
	}
}

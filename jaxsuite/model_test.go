package jaxsuite

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The model run asks for the model with the unplanned host parts
// forbidden, on every OS; the default driver's run asks for neither.
func TestEnvOfTheModel(t *testing.T) {
	got := Env(OnDevice, DriverModel)
	want := []string{"JAX_PLATFORMS=metalplug,cpu", "METALPLUG_HOST_DEVICE=1", "METALPLUG_DRIVER=metal-model", "METALPLUG_NO_CPU_FALLBACK=unplanned"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the model run has %v, want %v", got, want)
	}
	for _, d := range []string{"", DriverHost} {
		for _, kv := range Env(OnDevice, d) {
			if strings.HasPrefix(kv, "METALPLUG_DRIVER=") || strings.HasPrefix(kv, "METALPLUG_NO_CPU_FALLBACK=") {
				t.Errorf("the run on %q has %s", d, kv)
			}
		}
	}
	if !reflect.DeepEqual(ParseModules("api_test, lax_test,,tests/x_test.py"), []string{"api_test", "lax_test", "tests/x_test.py"}) {
		t.Errorf("ParseModules: %v", ParseModules("api_test, lax_test,,tests/x_test.py"))
	}
}

// gapLine is a compile error of the model for a while loop, as jax shows
// it.
const gapLine = `jaxlib._jax.XlaRuntimeError: UNIMPLEMENTED: metal-model: compile: METALPLUG_NO_CPU_FALLBACK=1 forbids the host these parts of the program: while: a loop (...)`

func TestGapRule(t *testing.T) {
	for _, line := range []string{
		gapLine,
		strings.Replace(gapLine, "=1 ", "=unplanned ", 1),
		// after the plugin's own prefix, on a Mac's driver
		`jax.errors.JaxRuntimeError: UNIMPLEMENTED: metalplug: PJRT_Client_Compile: metal: compile: METALPLUG_NO_CPU_FALLBACK=unplanned forbids the host these parts of the program: bitcast_convert: not lowered yet`,
		// a reason that says what a later rule looks for
		`jax.errors.JaxRuntimeError: UNIMPLEMENTED: metalplug: PJRT_Client_Compile: metal-model: compile: METALPLUG_NO_CPU_FALLBACK=unplanned forbids the host these parts of the program: reduce: complex64 operands`,
	} {
		if got := Classify("tests/lax_test.py::T::testWhile", line, false); got.Name != GapRule.Name || got.Class != ClassOurs {
			t.Errorf("%s\nis classified %s by %q", line, got.Class, got.Name)
		}
		if got := Classify("tests/lax_test.py::T::testWhile", line, true); got.Name != CPURule.Name {
			t.Errorf("failing on CPU too, it is classified by %q", got.Name)
		}
	}
	if g := Gaps(gapLine); !reflect.DeepEqual(g, []Gap{{"while", "a loop (...)"}}) {
		t.Errorf("Gaps: %+v", g)
	}
	// Several parts, one of whose reasons holds "; " and a colon.
	line := `E: metal-model: compile: METALPLUG_NO_CPU_FALLBACK=unplanned forbids the host these parts of the program: ` +
		`reduce_region: a reduction by an arbitrary body is not lowered: the program runs on the CPU; the fixed monoids are reduce, which is; ` +
		`bitcast_convert: not lowered yet: inside a graph`
	want := []Gap{
		{"reduce_region", "a reduction by an arbitrary body is not lowered: the program runs on the CPU; the fixed monoids are reduce, which is"},
		{"bitcast_convert", "not lowered yet: inside a graph"},
	}
	if g := Gaps(line); !reflect.DeepEqual(g, want) {
		t.Errorf("Gaps: %+v", g)
	}
	if g := Gaps("AssertionError: Not equal to tolerance"); g != nil {
		t.Errorf("Gaps of another failure: %+v", g)
	}
	// The report keeps a gap's line whole, however long its reasons.
	long := strings.Replace(gapLine, "(...)", strings.Repeat("x", 400), 1)
	if got := ErrorLine(long + "\nsecond line"); got != long+" second line" {
		t.Errorf("ErrorLine cut a gap's line: %q", got)
	}
	if got := ErrorLine(strings.Repeat("y", 400)); len(got) != 303 {
		t.Errorf("ErrorLine keeps %d bytes of another line", len(got))
	}
}

// A module run on the model keeps the default driver's results, reuses the
// CPU's verdict on the tests that failed there too, runs the others on
// CPU, and classifies its failures by the same rules.
func TestMeasureModuleOnTheModel(t *testing.T) {
	r := sampleReport()
	m := r.Module("a_test")
	host := m.Results
	var asked []string
	run := func(platform string, ids ...string) (*Run, []Result) {
		switch platform {
		case OnDevice:
			return &Run{Passed: 6, Failed: 4, Skipped: 1, Seconds: 120, Platforms: "metalplug,cpu"}, []Result{
				{ID: "tests/a_test.py::T::testOne", Outcome: Failed, Message: complexExample},      // failed on the host too, passed on CPU
				{ID: "tests/a_test.py::T::testTwo", Outcome: Failed, Message: "AssertionError: x"}, // failed on CPU too
				{ID: "tests/a_test.py::T::testLoop", Outcome: Failed, Message: gapLine},
				{ID: "tests/a_test.py::T::testThree", Outcome: Failed, Message: "AssertionError: y"},
				{ID: "tests/a_test.py::T::testFour", Outcome: Passed},
			}
		default:
			asked = ids
			return &Run{Passed: 1, Failed: 1, Seconds: 9}, []Result{
				{ID: "tests/a_test.py::T::testLoop", Outcome: Passed},
				{ID: "tests/a_test.py::T::testThree", Outcome: Failed},
			}
		}
	}
	measureModule(Options{Driver: DriverModel, Log: t.Logf}, m, "0.11.0", "abc", run)
	if !reflect.DeepEqual(asked, []string{"tests/a_test.py::T::testLoop", "tests/a_test.py::T::testThree"}) {
		t.Errorf("the CPU was asked for %v", asked)
	}
	if !reflect.DeepEqual(m.Results, host) {
		t.Errorf("the host driver's results changed")
	}
	if !m.Model.Ran() || !m.Model.CPU.Rerun || m.Model.Commit != "abc" {
		t.Fatalf("the model's results: %+v", m.Model)
	}
	classes := map[string]string{}
	for _, f := range m.Model.Failures {
		classes[strings.TrimPrefix(f.ID, "tests/a_test.py::T::")] = f.Rule
	}
	want := map[string]string{"testOne": "complex operands", "testTwo": CPURule.Name, "testLoop": GapRule.Name, "testThree": CPURule.Name}
	if !reflect.DeepEqual(classes, want) {
		t.Errorf("classified %v, want %v", classes, want)
	}
	if c := m.Model.Counts(); c != (Counts{Passed: 6, Failed: 2, Gaps: 1, CPUToo: 2, Skipped: 1}) {
		t.Errorf("model counts %+v", c)
	}
	// Resuming on the model picks the modules without results there.
	got, err := pick(r, DriverModel, []string{"a_test", "b_test", "c_test"}, nil, "0.11.0")
	if err != nil || !reflect.DeepEqual(got, []string{"b_test", "c_test"}) {
		t.Errorf("resume on the model picks %v, %v", got, err)
	}
	if got, _ := pick(r, DriverHost, []string{"a_test", "b_test", "c_test"}, nil, "0.11.0"); !reflect.DeepEqual(got, []string{"c_test"}) {
		t.Errorf("resume on the host driver picks %v", got)
	}
	// Another release's host results say nothing of this one's CPU.
	if k := m.cpuKnown("0.12.0"); len(k) != 0 {
		t.Errorf("cpuKnown of another release: %v", k)
	}
	// A host run of the module afterwards keeps the model's.
	model := m.Model
	measureModule(Options{Log: t.Logf}, m, "0.11.0", "def", func(platform string, ids ...string) (*Run, []Result) {
		return &Run{Passed: 10}, nil
	})
	if m.Model != model || m.Commit != "def" || len(m.Failures) != 0 {
		t.Errorf("a host run lost the model's results or kept its own old ones")
	}
}

// modelReport is sampleReport with a_test run on the model too.
func modelReport() *Report {
	r := sampleReport()
	r.Module("a_test").Model = &Results{Jax: "0.11.0", Date: "2026-12-05T10:00:00Z", Commit: "abc",
		Metalplug: &Run{Passed: 5, Failed: 5, Skipped: 1, Seconds: 600, Platforms: "metalplug,cpu"},
		CPU:       &Run{Passed: 3, Seconds: 20, Rerun: true},
		Failures: []Failure{
			{ID: "tests/a_test.py::T::testOne", Error: complexExample},
			{ID: "tests/a_test.py::T::testTwo", Error: "AssertionError: x", Class: ClassCPU},
			{ID: "tests/a_test.py::T::testLoop", Error: gapLine},
			{ID: "tests/a_test.py::T::testLoop2", Error: gapLine},
			{ID: "tests/a_test.py::T::testBoth", Error: strings.Replace(gapLine, "while: a loop (...)",
				"while: a loop (...); bitcast_convert: not lowered yet", 1)},
		}}
	r.Reclassify()
	return r
}

func TestMarkdownShowsTheModel(t *testing.T) {
	r := modelReport()
	c, ran := r.TotalsOn(DriverModel)
	if ran != 1 || c != (Counts{Passed: 5, Failed: 4, Gaps: 3, CPUToo: 1, Skipped: 1}) {
		t.Fatalf("model totals %+v over %d modules", c, ran)
	}
	md := r.Markdown()
	for _, want := range []string{
		"| modules run | 2 of 3 | 1 of 3 |",
		"| passed | 13 | 5 |",
		"| of which not on the GPU yet | 0 | 3 |",
		"| pass rate of the tests that ran and were not skipped, leaving apart those failing on CPU too | **92.86%** | **55.56%** |",
		"| the same, over the modules both have run (1) | 88.89% | 55.56% |",
		"**92.86%** (13 passed, 1 failed)", // the host driver's figures as before
		"| ours | 1 | 4 |",
		"| not on the GPU yet | ours | 0 | 3 |",
		"| while | a loop (...) | 3 | 2 | a_test |",
		"| bitcast_convert | not lowered yet | 1 | 0 | a_test |",
		"| a_test | 2026-12-01 | - | 8 | 1 | 1 | 1 | 1m2s | 1 | 1 | 0 | 30s | 5 | 4 | 3 | 1 | 1 | 10m0s |",
		"| b_test *alone* *whole* | 2026-12-01 | - | 5 | 0 | 0 | 2 | 3s | 5 | 0 | 3 | 4s | | | | | | |",
		"Not run on the model yet (2): b_test, c_test.",
		"### a_test on the model (5)",
		"| T::testLoop | ours | not on the GPU yet |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	// Before the model has run, its cells are blank.
	md = sampleReport().Markdown()
	for _, want := range []string{"| modules run | 2 of 3 | 0 of 3 |", "| passed | 13 |  |", "No module has run yet.", "The model has not run yet."} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
}

// A report with the model's results goes through its JSON unchanged, and
// one from before the model (no "model") loads with none.
func TestModelRoundTrip(t *testing.T) {
	r := modelReport()
	p := filepath.Join(t.TempDir(), "s.json")
	if err := r.Save(p); err != nil {
		t.Fatal(err)
	}
	back, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r, back) {
		t.Errorf("round trip changed the report")
	}
	b, _ := os.ReadFile(p)
	if !bytes.Contains(b, []byte(`"model": {`)) {
		t.Errorf("the model's results are not under \"model\":\n%s", b)
	}
	old := []byte(`{"jax": "0.11.0", "modules": [{"name": "a_test", "jax": "0.11.0", "metalplug": {"passed": 1}, "cpu": {"rerun": true},
		"failures": [{"id": "tests/a_test.py::T::t", "error": "AssertionError: x", "class": "cpu-too", "rule": "fails on CPU too"}]}]}`)
	if err := os.WriteFile(p, old, 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	m := o.Modules[0]
	if m.Model != nil || !m.Ran() || m.Metalplug.Passed != 1 || len(m.Failures) != 1 || m.Jax != "0.11.0" {
		t.Errorf("an old report loads as %+v", m)
	}
}

// The committed report goes through Load and Save byte for byte: the
// host driver's results keep their shape.
func TestCommittedJSONKeepsItsShape(t *testing.T) {
	p := filepath.Join("..", JSONPath)
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "s.json")
	if err := r.Save(out); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	if !bytes.Equal(got, want) {
		t.Errorf("%s changes through Load and Save", JSONPath)
	}
}

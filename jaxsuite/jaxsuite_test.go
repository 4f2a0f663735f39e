package jaxsuite

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReadJUnit(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := ReadJUnit(f, "api_test.py")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id      string
		outcome Outcome
		line    string
	}{
		{"tests/api_test.py::APITest::testPasses", Passed, ""},
		{"tests/api_test.py::APITest::testFails", Failed, "AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06"},
		{"tests/api_test.py::APITest::testSkips", Skipped, "Test requires at least 2 devices"},
		{"tests/api_test.py::APITest::testXfail", Skipped, "known"},
		{"tests/api_test.py::test_function", Failed, `failed on setup with "RuntimeError: no device"`},
		{"tests/api_test.py::APITest::testNoMessage", Failed, "jax.errors.JaxRuntimeError: UNIMPLEMENTED: the last line"},
	}
	if len(got) != len(want) {
		t.Fatalf("read %d cases, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.ID != w.id || g.Outcome != w.outcome || ErrorLine(g.Message) != w.line {
			t.Errorf("case %d: got %s %d %q, want %s %d %q", i, g.ID, g.Outcome, ErrorLine(g.Message), w.id, w.outcome, w.line)
		}
	}
}

func TestCaseIDOfCollectionError(t *testing.T) {
	if got := caseID("lax_test.py", "", "tests.lax_test"); got != "tests/lax_test.py" {
		t.Errorf("got %q", got)
	}
}

// Each rule classifies the example it was written for, and a failure that
// matches no rule is a bug of ours, never unclassified.
func TestRulesClassifyTheirExamples(t *testing.T) {
	names := map[string]bool{}
	for _, r := range AllRules() {
		if names[r.Name] {
			t.Errorf("two rules are named %q", r.Name)
		}
		names[r.Name] = true
		if r.Why == "" {
			t.Errorf("rule %q says not why", r.Name)
		}
	}
	for _, r := range Rules {
		if r.Example == "" {
			t.Errorf("rule %q has no example", r.Name)
			continue
		}
		if r.Test != nil && r.ExampleID == "" {
			t.Errorf("rule %q has a test pattern but no example id", r.Name)
		}
		if got := Classify(r.ExampleID, r.Example, false); got.Name != r.Name {
			t.Errorf("the example of rule %q is classified by %q", r.Name, got.Name)
		}
		if got := Classify(r.ExampleID, r.Example, true); got.Name != CPURule.Name {
			t.Errorf("the example of rule %q failing on CPU too is classified by %q", r.Name, got.Name)
		}
	}
	if got := Classify("tests/x_test.py::T::testY", "ValueError: no rule says this", false); got.Class != ClassOurs || got.Name != DefaultRule.Name {
		t.Errorf("an unmatched failure is classified %s by %q", got.Class, got.Name)
	}
}

// complexExample is the example of the rule "complex operands".
var complexExample = ruleNamed("complex operands").Example

func ruleNamed(name string) Rule {
	for _, r := range Rules {
		if r.Name == name {
			return r
		}
	}
	panic("no rule " + name)
}

func sampleReport() *Report {
	r := &Report{Jax: "0.11.0", Jaxlib: "0.11.0", Python: "3.12.1", Machine: "linux/amd64, 2 cores", Workers: 2, Generated: 10}
	r.SetModules([]string{"b_test", "a_test", "c_test"})
	*r.Module("a_test") = Module{Name: "a_test", Results: Results{Jax: "0.11.0", Date: "2026-12-01T17:00:00Z",
		Metalplug: &Run{Passed: 8, Failed: 2, Skipped: 1, Seconds: 62, Platforms: "metalplug,cpu"},
		CPU:       &Run{Passed: 1, Failed: 1, Seconds: 30, Rerun: true}, // the device's two failures
		Failures: []Failure{
			{ID: "tests/a_test.py::T::testOne", Error: complexExample},
			{ID: "tests/a_test.py::T::testTwo", Error: "AssertionError: x", Class: ClassCPU},
		}}}
	*r.Module("b_test") = Module{Name: "b_test", Results: Results{Jax: "0.11.0", Date: "2026-12-01T17:10:00Z",
		Metalplug: &Run{Passed: 5, Skipped: 2, Seconds: 3}, CPU: &Run{Passed: 5, Skipped: 3, Seconds: 4}}}
	r.Reclassify()
	return r
}

func TestCountsAndRate(t *testing.T) {
	r := sampleReport()
	c, ran := r.Totals()
	if ran != 2 || c != (Counts{Passed: 13, Failed: 1, CPUToo: 1, Skipped: 3}) {
		t.Fatalf("totals %+v over %d modules", c, ran)
	}
	if got := c.Rate(); got < 92.85 || got > 92.86 {
		t.Errorf("rate %.3f, want 13/14", got)
	}
	if f := r.Module("a_test").Failures[0]; f.Class != ClassOurs || f.Rule != "complex operands" {
		t.Errorf("failure classified %s %q", f.Class, f.Rule)
	}
}

func TestMarkdownSaysWhatRan(t *testing.T) {
	md := sampleReport().Markdown()
	for _, want := range []string{
		"**2 of 3 modules have run**",
		"**92.86%** (13 passed, 1 failed)",
		"over what the plugin itself is asked to do: 92.86% (13 passed, 1 failed)",
		"| ours | 1 |",
		"Not run yet (1): c_test.",
		"| a_test | 2026-12-01 | - | 8 | 1 | 1 | 1 | 1m2s | 1 | 1 | 0 | 30s |",
		"| b_test *alone* *whole* | 2026-12-01 | - | 5 | 0 | 0 | 2 | 3s | 5 | 0 | 3 | 4s |",
		"Skipped on the device: 3 (", "on CPU, in the modules that ran whole there: 3.",
		"| T::testOne | ours | complex operands |",
		"Largest remaining classes: complex operands (ours, 1).",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	r := sampleReport()
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
}

// The committed docs/jax_suite.md is what docs/jax_suite.json renders to,
// and the json's classes are what the rules say now.
func TestCommittedReportRendersFromJSON(t *testing.T) {
	root := ".."
	r, err := Load(filepath.Join(root, JSONPath))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Modules) == 0 {
		t.Fatalf("%s has no modules", JSONPath)
	}
	md, err := os.ReadFile(filepath.Join(root, MarkdownPath))
	if err != nil {
		t.Fatal(err)
	}
	if string(md) != r.Markdown() {
		t.Errorf("%s is not what %s renders to: run go tool mage jaxsuiteReport", MarkdownPath, JSONPath)
	}
	for _, m := range r.Modules {
		for _, f := range m.Failures {
			if got := Classify(f.ID, f.Error, f.Class == ClassCPU); got.Name != f.Rule || got.Class != f.Class {
				t.Errorf("%s is recorded as %s (%s); the rules now say %s (%s)", f.ID, f.Class, f.Rule, got.Class, got.Name)
			}
		}
	}
}

func TestPick(t *testing.T) {
	r := sampleReport()
	names := []string{"a_test", "b_test", "c_test"}
	got, err := pick(r, DriverHost, names, nil, "0.11.0")
	if err != nil || !reflect.DeepEqual(got, []string{"c_test"}) {
		t.Errorf("resume picks %v, %v", got, err)
	}
	got, err = pick(r, DriverHost, names, nil, "0.11.1")
	if err != nil || len(got) != 3 {
		t.Errorf("another release picks %v, %v", got, err)
	}
	got, err = pick(r, DriverHost, names, []string{"tests/b_test.py", "a_test.py", "b_test"}, "0.11.0")
	if err != nil || !reflect.DeepEqual(got, []string{"b_test", "a_test"}) {
		t.Errorf("named modules pick %v, %v", got, err)
	}
	if _, err := pick(r, DriverHost, names, []string{"nope_test"}, "0.11.0"); err == nil {
		t.Error("an unknown module is accepted")
	}
}

func TestCheckoutVersion(t *testing.T) {
	dir := t.TempDir()
	must := func(path, text string) {
		p := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must("jax/version.py", "_version = \"0.11.0\"\n")
	must("jax/_src/test_util.py", "  int(os.getenv('JAX_NUM_GENERATED_CASES', '10')),\n")
	must("tests/b_test.py", "")
	must("tests/a_test.py", "")
	must("tests/helper.py", "")
	ver, gen, err := CheckoutVersion(dir)
	if err != nil || ver != "0.11.0" || gen != 10 {
		t.Errorf("got %q %d %v", ver, gen, err)
	}
	names, err := ModuleNames(dir)
	if err != nil || !reflect.DeepEqual(names, []string{"a_test", "b_test"}) {
		t.Errorf("modules %v %v", names, err)
	}
}

// TestDeviceFirstCPUBeside: on the device run, the device is jax's default
// backend (first in JAX_PLATFORMS) and jax's CPU is there beside it; the
// reference run is the CPU alone.
func TestDeviceFirstCPUBeside(t *testing.T) {
	for _, d := range []string{"", DriverHost, DriverModel} {
		if got := Env(OnDevice, d)[0]; got != "JAX_PLATFORMS=metalplug,cpu" {
			t.Errorf("the device run on %q has %s", d, got)
		}
		if got := Env(OnCPU, d); len(got) != 1 || got[0] != "JAX_PLATFORMS=cpu" {
			t.Errorf("the CPU run beside %q has %v", d, got)
		}
	}
	alone := Module{Results: Results{Metalplug: &Run{}}}
	beside := Module{Results: Results{Metalplug: &Run{Platforms: "metalplug,cpu"}}}
	if !alone.Alone() || beside.Alone() {
		t.Errorf("Alone: %v for a run before platforms were recorded, %v for metalplug,cpu", alone.Alone(), beside.Alone())
	}
}

package macreport

import (
	"strings"
	"testing"
	"time"
)

// TestCompareDifferencesFirst: the cases where the GPU and the model
// differ (another failure text, fail against pass, skip against pass, a case
// one run lacks) come first, then the rest, each group in the model's
// order with the GPU's own cases after. Parents failing because their
// subtests did are not differences of their own, and two identical
// failures are not a difference.
func TestCompareDifferencesFirst(t *testing.T) {
	rows := Compare(parseFixture(t, "gpu.json"), parseFixture(t, "model.json"))
	want := []struct {
		name    string
		differs bool
	}{
		{"TestConformance/Ops/fft", true}, {"TestConformance/Ops/sort", true}, {"TestTrace", true}, {"TestGPUOnly", true},
		{"TestConformance", false}, {"TestConformance/Ops", false}, {"TestConformance/Ops/add", false},
		{"TestConformance/Ops/rng", false}, {"TestOlderReleases", false},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, w := range want {
		if rows[i].Name != w.name || rows[i].Differs != w.differs {
			t.Errorf("row %d: %s (differs %v), want %s (differs %v)", i, rows[i].Name, rows[i].Differs, w.name, w.differs)
		}
	}
	if r := rows[8]; r.GPU == nil || r.Model == nil {
		t.Errorf("TestOlderReleases not paired: %+v", r)
	}
	if r := rows[3]; r.Model != nil || r.GPU == nil {
		t.Errorf("TestGPUOnly: GPU %v, model %v: want the GPU's case only", r.GPU, r.Model)
	}
	if !rows[4].InheritedGPU || !rows[4].InheritedModel {
		t.Errorf("TestConformance failed through its subtests on both sides: %+v", rows[4])
	}
}

// TestCompareOneRun: with one run (off a Mac, or a Mac with no usable GPU)
// nothing is a difference, and the order is the run's.
func TestCompareOneRun(t *testing.T) {
	model := parseFixture(t, "model.json")
	rows := Compare(nil, model)
	if len(rows) != len(model.Cases) {
		t.Fatalf("%d rows for %d cases", len(rows), len(model.Cases))
	}
	for i, r := range rows {
		if r.Differs || r.GPU != nil || r.Name != model.Cases[i].Name {
			t.Errorf("row %d = %+v, want %s alone, no difference", i, r, model.Cases[i].Name)
		}
	}
}

func fixtureReport(t *testing.T) *Report {
	return &Report{
		Generated: time.Date(2026, 12, 4, 0, 9, 0, 0, time.UTC),
		Machine:   Machine{OS: "macOS 15.3.1 (24D70)", Chip: "Apple M2 Pro", GPU: "Apple GPU Apple M2 Pro through Metal Performance Shaders Graph", Go: "go1.26.8 darwin/arm64", Commit: "0123abc"},
		GPU:       Section{Command: "METALPLUG_TEST_REQUIRE_GPU=1 go test ./backend/driver/metal/", Run: parseFixture(t, "gpu.json")},
		Model:     Section{Command: "METALPLUG_TEST_MODEL=1 go test ./backend/driver/metal/", Run: parseFixture(t, "model.json")},
		EndToEnd:  Section{Command: "go test ./tests/integration/", Run: parseFixture(t, "abort.json")},
		Sweep: SweepSection{Result: &Sweep{
			TensorFlow: "2.21.0", Kernels: 10, Cases: 9, Verified: 6, NeedsCPU: 2, Unaccounted: 1, ModelTable: "docs/op_errors_metal_model.md",
			Rows: []SweepRow{
				{Op: "Cholesky", DTypes: "T=float32", Status: "needs cpu", Model: "needs cpu", Detail: "cholesky: MPSGraph has no Cholesky"},
				{Op: "Sort", DTypes: "T=int64", Status: "mismatch", Model: "verified", Detail: "2 of 8 elements differ | inputs: ..."},
				{Op: "Qr", DTypes: "T=float32", Status: "needs cpu", Model: "needs cpu", Detail: "qr: neither MPSGraph nor MPS"},
			},
		}},
	}
}

// TestMarkdownSideBySide: both runs side by side, the differing cases
// first and in bold, each failure's text once per side (none for a parent
// that failed through its subtests), and every failure summed up at the
// top.
func TestMarkdownSideBySide(t *testing.T) {
	r := fixtureReport(t)
	md := r.Markdown()
	if strings.Contains(md, "No usable GPU") || strings.Contains(md, "Everything that ran passed") {
		t.Error("a report whose GPU ran and failed says it had none, or that all passed")
	}
	in := func(s string) int {
		i := strings.Index(md, s)
		if i < 0 {
			t.Errorf("the report lacks %q", s)
		}
		return i
	}
	in("| system | macOS 15.3.1 (24D70) |")
	in("| chip | Apple M2 Pro |")
	in("**4 cases differ**")
	in("| case | GPU | model |")
	order := []string{
		"| **`TestConformance/Ops/fft`** | **fail**: fx_test.go:20: fft float32 [8]: element 3 = 0.5, want 0.25 | **fail**: fx_test.go:22: fft float32 [8]: element 3 = 0.125, want 0.25 |",
		"| **`TestConformance/Ops/sort`** | **fail**: fx_test.go:28: sort: MPSGraph: sortWithTensor: unsupported data type int64 | pass |",
		"| **`TestTrace`** | skip | pass |",
		"| **`TestGPUOnly`** | pass | - |",
		"| `TestConformance` | **fail** (in its subtests) | **fail** (in its subtests) |",
		"| `TestConformance/Ops/rng` | **fail**: fx_test.go:25: rng: philox known answer 0 = 7, want 9 |",
		"| `TestOlderReleases` | pass | pass |",
	}
	last := -1
	for _, s := range order {
		if i := in(s); i >= 0 && i < last {
			t.Errorf("%q is out of order", s)
		} else if i >= 0 {
			last = i
		}
	}
	for _, s := range []string{"#### `TestConformance/Ops/fft` on the GPU", "#### `TestConformance/Ops/fft` on the model",
		"#### `TestConformance/Ops/sort` on the GPU", "#### `TestConformance/Ops/rng` on the model", "#### `TestAbort/inner`"} {
		if strings.Count(md, s) != 1 {
			t.Errorf("%q appears %d times, want once", s, strings.Count(md, s))
		}
	}
	if strings.Contains(md, "#### `TestConformance` on") {
		t.Error("a parent's log is shown as its failure")
	}
	for _, s := range []string{
		"- the conformance suite on the GPU: 5 of 9 cases failed, 0 without a result",
		"- the conformance suite on the model: 4 of 8 cases failed, 0 without a result",
		"- the end-to-end checks: 0 of 3 cases failed, 2 without a result",
		"- the sweep: 1 cases unaccounted",
		"| `TestAbort` | **no result** |", // one run: no differences marked
	} {
		in(s)
	}
	// The sweep's rows: the one whose verdict is not the model's first.
	if a, b := in("| **Sort** | T=int64 | mismatch | verified | 2 of 8 elements differ |"), in("| Cholesky | T=float32 | needs cpu | needs cpu |"); a > b {
		t.Error("the sweep's row that differs from the model is not first")
	}
	in("3 cases not verified; the 1 whose verdict is not the model's (`docs/op_errors_metal_model.md`) come first")
}

// TestMarkdownNoGPU: off a Mac (or on one whose GPU the driver cannot use)
// the report opens with the one line that says so, has the model's column
// alone, says why the rest did not run, and is not a failure.
func TestMarkdownNoGPU(t *testing.T) {
	model := parseFixture(t, "model.json")
	model.Cases = model.Cases[len(model.Cases)-2:] // TestOlderReleases and TestTrace, both passed
	model.Passed = true
	r := &Report{
		Generated: time.Date(2026, 12, 4, 0, 9, 0, 0, time.UTC),
		Machine:   Machine{OS: "linux 6.8 amd64", Go: "go1.26.8 linux/amd64", Commit: "0123abc"},
		NoGPU:     "No Mac: this is linux/amd64; only the model's conformance suite ran.",
		GPU:       Section{Skipped: "no Mac"},
		Model:     Section{Command: "METALPLUG_TEST_MODEL=1 go test ./backend/driver/metal/", Run: model},
		EndToEnd:  Section{Skipped: "no Mac"},
		Sweep:     SweepSection{Skipped: "no Mac"},
	}
	md := r.Markdown()
	lines := strings.Split(md, "\n")
	if lines[0] != "# metalplug on a Mac: report" || lines[2] != "**No Mac: this is linux/amd64; only the model's conformance suite ran.**" {
		t.Errorf("the report does not open with the no-GPU line:\n%s", strings.Join(lines[:4], "\n"))
	}
	if f := r.Failures(); len(f) != 0 {
		t.Errorf("no GPU counted as a failure: %v", f)
	}
	for _, s := range []string{"Everything that ran passed.", "| Metal device | none opened |", "- GPU: not run: no Mac",
		"| case | model |", "| `TestOlderReleases` | pass |", "platform, each checked against its own CPU.\n\nNot run: no Mac\n",
		"## Op sweep on the GPU\n\nNot run: no Mac\n"} {
		if !strings.Contains(md, s) {
			t.Errorf("the report lacks %q", s)
		}
	}
	if strings.Contains(md, "differ") {
		t.Error("a single run reports differences")
	}
}

// TestFailuresSetUpErrors: a section that could not run (a venv, a build)
// is a failure, and a run that failed outside any case says its reason.
func TestFailuresSetUpErrors(t *testing.T) {
	r := &Report{
		GPU:      Section{Run: parseFixture(t, "buildfail.json")},
		EndToEnd: Section{Err: "venv: pip install tensorflow==2.21.*: exit status 1"},
		Sweep:    SweepSection{Err: "sweep: library: no such file"},
	}
	want := []string{
		"the conformance suite on the GPU: go test failed outside any case: ./x_test.go:5:28: undefined: undefinedThing",
		"the end-to-end checks could not run: venv: pip install tensorflow==2.21.*: exit status 1",
		"the sweep could not run: sweep: library: no such file",
	}
	got := r.Failures()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Failures() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFencedTexts: a failure text with backticks keeps its fence closed,
// and a long one is cut.
func TestFencedTexts(t *testing.T) {
	f := fenced("a ``` b")
	if !strings.HasPrefix(f, "````text\n") || !strings.HasSuffix(f, "\n````\n") {
		t.Errorf("fenced = %q", f)
	}
	long := fenced(strings.Repeat("x\n", 100))
	if strings.Count(long, "x\n") != maxText || !strings.Contains(long, "... 41 more lines") {
		t.Errorf("a 101-line text was not cut at %d lines:\n%s", maxText, long)
	}
}

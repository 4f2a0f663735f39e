package sweep

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// These run the real sweep: a TensorFlow with the plugin loaded. They need
//
//	METALPLUG_SWEEP_PYTHON  an interpreter with the TensorFlow the library targets
//	METALPLUG_SWEEP_LIB     the library
//
// and are skipped without them.
func sweepEnv(t *testing.T) (python, lib string) {
	t.Helper()
	python, lib = os.Getenv("METALPLUG_SWEEP_PYTHON"), os.Getenv("METALPLUG_SWEEP_LIB")
	if python == "" || lib == "" {
		t.Skip("METALPLUG_SWEEP_PYTHON and METALPLUG_SWEEP_LIB are not both set")
	}
	return python, lib
}

// The engine's own failures: statuses that say the sweep, not a kernel, is
// wrong.
var engineStatuses = map[Status]bool{NoRecipe: true, RecipeError: true, NoReference: true, Crash: true, Hang: true, CrashInBatch: true}

func TestSweepSmallFilter(t *testing.T) {
	python, lib := sweepEnv(t)
	ops := []string{"MatMul", "Relu", "Sum", "Reshape"}
	var out bytes.Buffer
	r, err := Run(Options{Python: python, Library: lib, Ops: ops, Out: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Logf("%s", r.Summary())
	seen := map[string]int{}
	for _, c := range r.Cases {
		seen[c.Op]++
		if engineStatuses[c.Status] {
			t.Errorf("%s: %s: %s", c.ID, c.Status, c.Detail)
		}
		if !c.Status.Accounted() {
			// A kernel bug: the sweep's job is to report it, and it did.
			t.Logf("kernel finding: %s: %s: %.300s", c.ID, c.Status, c.Detail)
		}
		if c.Status == Verified && (c.MaxAbs == nil || c.Check != "vs CPU" || len(c.Variants) < 2) {
			t.Errorf("%s verified without a comparison: check %q, max abs %v, %d variants", c.ID, c.Check, c.MaxAbs, len(c.Variants))
		}
	}
	for _, op := range ops {
		if seen[op] == 0 {
			t.Errorf("no case for %s", op)
		}
	}
	if r.Verified+r.NeedsEntryPoint+r.Unaccounted != len(r.Cases) {
		t.Errorf("counts %d+%d+%d do not add up to %d cases", r.Verified, r.NeedsEntryPoint, r.Unaccounted, len(r.Cases))
	}
	for _, id := range []string{"MatMul:T=float32", "Relu:T=float16", "Sum:T=bfloat16"} {
		found := false
		for _, c := range r.Cases {
			if c.ID == id {
				found = true
				if c.Status != Verified {
					t.Errorf("%s: %s: %s", id, c.Status, c.Detail)
				}
			}
		}
		if !found {
			t.Errorf("no case %s", id)
		}
	}
	md := r.OpErrorsMarkdown()
	if !strings.Contains(md, "| MatMul | T=float32 | vs CPU |") {
		t.Errorf("markdown lacks the MatMul row:\n%s", md)
	}
	// The ops named but needing an entry point are counted apart, not run.
	r2, err := Run(Options{Python: python, Library: lib, Ops: []string{"Relu"}, NeedsEntryPoint: []string{"Relu"}})
	if err != nil {
		t.Fatal(err)
	}
	if r2.NeedsEntryPoint != len(r2.Cases) || r2.Verified != 0 || r2.Err() != nil {
		t.Errorf("NeedsEntryPoint: %s, err %v", r2.Summary(), r2.Err())
	}
}

// One op alone, verbosely: its inputs and both outputs are printed.
func TestSweepVerboseSingleOp(t *testing.T) {
	python, lib := sweepEnv(t)
	var out bytes.Buffer
	r, err := Run(Options{Python: python, Library: lib, Ops: []string{"MatMul"}, DTypes: []string{"float32"}, Verbose: true, Out: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(r.Cases) != 1 || r.Cases[0].ID != "MatMul:T=float32" || r.Cases[0].Status != Verified {
		t.Fatalf("cases %+v", r.Cases)
	}
	for _, want := range []string{"== MatMul T=float32: 5x7 by 7x3", "input a = float32[5, 7]", "device output product = float32[5, 3]",
		"cpu    output product = float32[5, 3]", "attrs {'transpose_a': True, 'transpose_b': True}"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("verbose output lacks %q", want)
		}
	}
	if _, err := Run(Options{Python: python, Library: lib, Ops: []string{"NoSuchOp"}}); err == nil {
		t.Error("a filter naming no registered op must be an error")
	}
}

// TestSweepAll is the whole sweep, for running the gate without Mage: set
// METALPLUG_SWEEP_ALL=1 (and METALPLUG_SWEEP_MARKDOWN to a path to write
// docs/op_errors.md there; METALPLUG_SWEEP_NEEDS_ENTRY_POINT to a
// comma-separated list of ops, METALPLUG_SWEEP_JOBS to 2 for two workers).
func TestSweepAll(t *testing.T) {
	if os.Getenv("METALPLUG_SWEEP_ALL") != "1" {
		t.Skip("METALPLUG_SWEEP_ALL is not 1")
	}
	python, lib := sweepEnv(t)
	opts := Options{Python: python, Library: lib, Out: testWriter{t}}
	if s := os.Getenv("METALPLUG_SWEEP_NEEDS_ENTRY_POINT"); s != "" {
		opts.NeedsEntryPoint = strings.Split(s, ",")
	}
	if os.Getenv("METALPLUG_SWEEP_JOBS") == "2" {
		opts.Jobs = 2
	}
	r, err := Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	if p := os.Getenv("METALPLUG_SWEEP_MARKDOWN"); p != "" {
		if err := os.WriteFile(p, []byte(r.OpErrorsMarkdown()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range r.Cases {
		if !c.Status.Accounted() {
			t.Logf("%s: %s: %s", c.ID, c.Status, c.Detail)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
}

// testWriter sends progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// A case that aborts its worker, with a real TensorFlow: it is named, and
// every other case still runs.
func TestSweepIsolatesAbort(t *testing.T) {
	python, lib := sweepEnv(t)
	t.Setenv("METALPLUG_SWEEP_TEST_ABORT", "Relu:T=float16")
	var out bytes.Buffer
	r, err := Run(Options{Python: python, Library: lib, Ops: []string{"Relu", "Tanh"}, Out: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, c := range r.Cases {
		want := Verified
		if c.ID == "Relu:T=float16" {
			want = Crash
		}
		if c.Status != want {
			t.Errorf("%s: %s (%s), want %s", c.ID, c.Status, c.Detail, want)
		}
	}
	if len(r.Cases) != 6 || r.Unaccounted != 1 || !strings.Contains(out.String(), "Relu:T=float16") {
		t.Errorf("%s\n%s", r.Summary(), out.String())
	}
	if !strings.Contains(r.OpErrorsMarkdown(), "- `Relu` T=float16: crash: the worker was killed by signal: aborted") {
		t.Errorf("markdown:\n%s", r.OpErrorsMarkdown())
	}
}

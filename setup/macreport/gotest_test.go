package macreport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fixtures (paths in them rewritten relative to this package, testdata/fx) are real `go test -json` output of testdata/fx, a package
// whose tests fail on purpose, run the way tasks runs the Metal
// driver's (SIDE picks the behaviour):
//
//	cd testdata/fx
//	SIDE=gpu go test -json -count=1 -run 'TestConformance|TestOlderReleases|TestTrace|TestGPUOnly' . > ../gpu.json
//	SIDE=model go test -json -count=1 -run 'TestConformance|TestOlderReleases|TestTrace' . > ../model.json
//	SIDE=abort go test -json -count=1 -run 'TestOlderReleases|TestAbort' . > ../abort.json
//
// (zz_abort_test.go sorts last, so that a case passes before the abort; the
// goroutine dump after SIGABRT is cut to its first lines.)
//
// buildfail.json is a package that does not compile, with a line that is
// not JSON after it.
func parseFixture(t *testing.T, name string) *Run {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ParseTestJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestParseResultsAndTexts(t *testing.T) {
	r := parseFixture(t, "gpu.json")
	want := map[string]Result{
		"TestConformance": Fail, "TestConformance/Ops": Fail, "TestConformance/Ops/add": Pass,
		"TestConformance/Ops/fft": Fail, "TestConformance/Ops/rng": Fail, "TestConformance/Ops/sort": Fail,
		"TestOlderReleases": Pass, "TestTrace": Skip, "TestGPUOnly": Pass,
	}
	if len(r.Cases) != len(want) {
		t.Errorf("%d cases, want %d: %+v", len(r.Cases), len(want), r.Cases)
	}
	for name, res := range want {
		if c, ok := r.Case(name); !ok || c.Result != res {
			t.Errorf("%s: %q (found %v), want %q", name, c.Result, ok, res)
		}
	}
	if r.Passed || !r.Failed() {
		t.Error("the package failed, the run says it passed")
	}
	// The text is the message alone: no framing, no depth's indentation,
	// a multi-line message's continuation kept under it.
	rng, _ := r.Case("TestConformance/Ops/rng")
	if rng.Output != "fx_test.go:25: rng: philox known answer 0 = 7, want 9\n    \tsecond line of the message" {
		t.Errorf("rng's text = %q", rng.Output)
	}
	if got := r.Logged("TestConformance", "on "); got != "Apple GPU Apple M2 Pro through Metal Performance Shaders Graph" {
		t.Errorf("Logged(TestConformance, on) = %q", got)
	}
	if r.Output != "" {
		t.Errorf("a run whose failures are all in cases has output outside them: %q", r.Output)
	}
	if got := r.Why("TestConformance"); got != "fx_test.go:20: fft float32 [8]: element 3 = 0.5, want 0.25" {
		t.Errorf("Why(TestConformance) = %q: want its first failing subtest's line, not its log", got)
	}
}

// TestParseAbortedRun: a test binary killed by a signal (what a failed
// MPSGraph assertion does) leaves the running cases without a result and
// the run failed; the first line of what the case printed says why.
func TestParseAbortedRun(t *testing.T) {
	r := parseFixture(t, "abort.json")
	for _, name := range []string{"TestAbort", "TestAbort/inner"} {
		if c, _ := r.Case(name); c.Result != NoResult {
			t.Errorf("%s: %q, want no result", name, c.Result)
		}
	}
	if c, _ := r.Case("TestOlderReleases"); c.Result != Pass {
		t.Errorf("TestOlderReleases, which ended before the abort: %q", c.Result)
	}
	if !r.Failed() {
		t.Error("an aborted run counts as passed")
	}
	if got := r.Why("TestAbort"); got != "-[MPSGraph foo]: failed assertion `bar'" {
		t.Errorf("Why(TestAbort) = %q", got)
	}
}

// TestParseBuildFailure: a package that does not build has no cases, and
// its errors (build-output events, lines that are not JSON) are the run's
// output; Why names the error, not the "# package" heading.
func TestParseBuildFailure(t *testing.T) {
	r := parseFixture(t, "buildfail.json")
	if len(r.Cases) != 0 || r.Passed {
		t.Fatalf("cases %v, passed %v: want none, failed", r.Cases, r.Passed)
	}
	if !strings.Contains(r.Output, "undefined: undefinedThing") || !strings.Contains(r.Output, "a line that is not JSON") {
		t.Errorf("run output = %q", r.Output)
	}
	if strings.Contains(r.Output, "[build failed]") {
		t.Errorf("go test's own FAIL line kept: %q", r.Output)
	}
	if got := r.Why("TestPointerKinds"); got != "./x_test.go:5:28: undefined: undefinedThing" {
		t.Errorf("Why = %q", got)
	}
}

// TestParseUnfinishedStream: a stream cut off before go test's verdict
// (go itself killed) is a failed run, not a passed one.
func TestParseUnfinishedStream(t *testing.T) {
	in := `{"Action":"run","Test":"TestA"}
{"Action":"pass","Test":"TestA","Elapsed":0.1}
`
	r, err := ParseTestJSON(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if r.Passed || !r.Failed() {
		t.Error("a run with no verdict counts as passed")
	}
}

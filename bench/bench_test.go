package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStatOf(t *testing.T) {
	s := statOf([]float64{3, 1, 2, 10})
	if s.Median != 2.5 || s.Min != 1 || s.Max != 10 {
		t.Errorf("statOf = %+v", s)
	}
	if s := statOf([]float64{5, 1, 3}); s.Median != 3 {
		t.Errorf("odd median = %v", s.Median)
	}
}

func fakeReport() *Report {
	runs := [][]caseLine{
		{{ID: "matmul_1024", Title: "MatMul", Device: []float64{2, 3, 4}, CPU: []float64{1, 1, 1}, DeviceOps: map[string]int{"MatMul": 2}},
			{ID: "tiny_add_scalar", Title: "tiny", Device: []float64{1e-5}, CPU: []float64{2e-5}}},
		{{ID: "matmul_1024", Title: "MatMul", Device: []float64{1, 1, 1}, CPU: []float64{1, 1, 1}},
			{ID: "tiny_add_scalar", Title: "tiny", Device: []float64{1e-5}, CPU: []float64{1e-5}}},
	}
	other := [][]caseLine{
		{{ID: "matmul_1024", Title: "MatMul", Device: []float64{1}, CPU: []float64{1}}},
		{{ID: "matmul_1024", Title: "MatMul", Device: []float64{0.5}, CPU: []float64{1}}},
	}
	r := &Report{Started: time.Unix(0, 0), Wall: time.Minute, DefaultSync: true, TensorFlow: "2.21.0",
		Opts: Options{}.withDefaults(), Machine: readMachine()}
	r.Cases = aggregate(runs, true)
	r.Other = aggregate(other, false)
	r.Sync = syncCosts(r.Cases, r.Other, true)
	return r
}

func TestAggregateAndMarkdown(t *testing.T) {
	r := fakeReport()
	c := r.Cases[0]
	// Run medians: device 3 and 1, CPU 1 and 1: ratios 1/3 and 1.
	if c.Device.Median != 2 || c.Ratio.Min != 1.0/3 || c.Ratio.Max != 1 || len(c.Runs) != 2 {
		t.Errorf("aggregate: %+v", c)
	}
	if s := r.Sync[0]; s.Cost.Min != 2 || s.Cost.Max != 3 {
		t.Errorf("sync cost: %+v", s.Cost)
	}
	md := r.Markdown()
	for _, want := range []string{"| MatMul `matmul_1024` | 2.00 s | 1.00 s | 0.667 (0.333–1) | 3 × 2 |", "not", "Metal", "MatMul×2", "## Cost of synchronous mode", "![", "| MatMul 1024 | `matmul_1024` |"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestPlot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.png")
	if err := fakeReport().Plot(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Fatalf("not a PNG: %v", err)
	}
}

// TestRun runs the benchmark for real when METALPLUG_BENCH_PYTHON names an
// interpreter with TensorFlow (and the library is built): a quick pass over
// a few cases, or with METALPLUG_BENCH_WRITE=1 the full default benchmark,
// written to BENCHMARKS.md and docs/bench.png at the root.
func TestRun(t *testing.T) {
	py := os.Getenv("METALPLUG_BENCH_PYTHON")
	if py == "" {
		t.Skip("METALPLUG_BENCH_PYTHON is not set")
	}
	o := Options{Root: "..", Python: py, Lib: os.Getenv("METALPLUG_BENCH_LIB"), Log: t.Logf}
	full := os.Getenv("METALPLUG_BENCH_WRITE") == "1"
	if !full {
		o.Runs, o.Budget, o.MinReps, o.MaxReps, o.Warmup = 2, 200*time.Millisecond, 2, 3, 1
		o.Cases = []string{"tiny_add_scalar", "matmul_512"}
	}
	if c := os.Getenv("METALPLUG_BENCH_CASES"); c != "" {
		o.Cases = strings.Split(c, ",")
	}
	r, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("bench.Run took %s", r.Wall)
	if p := os.Getenv("METALPLUG_BENCH_JSON"); p != "" {
		if err := r.WriteJSON(p); err != nil {
			t.Fatal(err)
		}
	}
	md := r.Markdown()
	if !full {
		t.Log(md)
		if len(r.Cases) != len(o.Cases) || len(r.Sync) != len(o.Cases) {
			t.Errorf("got %d cases and %d sync comparisons, want %d", len(r.Cases), len(r.Sync), len(o.Cases))
		}
		return
	}
	write(t, r)
}

func write(t *testing.T, r *Report) {
	if err := os.MkdirAll("../docs", 0o755); err != nil {
		t.Fatal(err)
	}
	r.Opts.Root = ".."
	if err := r.Plot("../docs/bench.png"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("../BENCHMARKS.md", []byte(r.Markdown()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRender writes BENCHMARKS.md and docs/bench.png again from a report
// saved with METALPLUG_BENCH_JSON, named by METALPLUG_BENCH_RENDER.
func TestRender(t *testing.T) {
	p := os.Getenv("METALPLUG_BENCH_RENDER")
	if p == "" {
		t.Skip("METALPLUG_BENCH_RENDER is not set")
	}
	r, err := ReadJSON(p)
	if err != nil {
		t.Fatal(err)
	}
	write(t, r)
}

func TestJSONRoundTrip(t *testing.T) {
	r := fakeReport()
	p := filepath.Join(t.TempDir(), "r.json")
	if err := r.WriteJSON(p); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(p)
	if err != nil {
		t.Fatal(err)
	}
	if back.Markdown() != r.Markdown() {
		t.Error("the report renders differently after a JSON round trip")
	}
}

// TestBenchmarksDocIsCurrent: BENCHMARKS.md is exactly what the committed
// measurement (docs/bench.json) renders to, so the table cannot be edited by
// hand or drift from the numbers; `go tool mage bench` rewrites both.
func TestBenchmarksDocIsCurrent(t *testing.T) {
	r, err := ReadJSON(filepath.Join("..", JSONPath))
	if err != nil {
		t.Fatalf("%v: run `go tool mage bench`", err)
	}
	got, err := os.ReadFile(filepath.Join("..", "BENCHMARKS.md"))
	if err != nil || string(got) != r.Markdown() {
		t.Fatalf("BENCHMARKS.md does not render from %s (%v): run `go tool mage bench` and commit both", JSONPath, err)
	}
}

package bench

import (
	"encoding/json"
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
	for _, want := range []string{"| MatMul `matmul_1024` | 2.00 s | 1.00 s | 0.667 (0.333–1) | 3 × 2 |", "not", "Metal", "MatMul×2", "## Cost of synchronous mode", "![", "| Tiny-op latency | `tiny_add_scalar` |"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
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

// clusterLines are two runs' worker lines for a training step with
// clustering on and its clustering-off twin, as bench_worker.py prints
// them, after one case clustering does not apply to. Device medians: on
// 0.125 and 0.1875 s, off 0.25 and 0.25 s; the CPU 0.0625 s throughout.
var clusterLines = [][]string{
	{`{"kind": "case", "id": "tiny_add_scalar", "title": "AddV2", "device": [1], "cpu": [1], "device_ops": {"AddV2": 2}, "max_rel_diff": 0, "check": ""}`,
		`{"kind": "case", "id": "cnn_train_b128", "title": "CNN SGD train step, batch 128", "device": [0.1, 0.125, 0.5], "cpu": [0.0625], "device_ops": {"_MetalplugCluster": 8, "AddV2": 4}, "max_rel_diff": 1e-7, "check": "", "clustering": true,
		  "per_step": {"kernel_calls": 6, "executions": 6, "device_executions": 6, "waits": 6, "compiles": 0, "host_segments": 0, "output_bytes": 29601596}}`,
		`{"kind": "case", "id": "cnn_train_b128_nocluster", "title": "CNN SGD train step, batch 128, clustering off", "device": [0.25], "cpu": [0.0625], "device_ops": {"Conv2DBackpropFilter": 4, "MatMul": 2}, "max_rel_diff": 1e-7, "check": "", "clustering": false, "cluster_off_of": "cnn_train_b128",
		  "per_step": {"kernel_calls": 41, "executions": 40, "device_executions": 40, "waits": 40, "compiles": 0, "host_segments": 0, "output_bytes": 92775792}}`},
	{`{"kind": "case", "id": "tiny_add_scalar", "title": "AddV2", "device": [1], "cpu": [1], "device_ops": {"AddV2": 2}, "max_rel_diff": 0, "check": ""}`,
		`{"kind": "case", "id": "cnn_train_b128", "title": "CNN SGD train step, batch 128", "device": [0.1875], "cpu": [0.0625], "clustering": true,
		  "per_step": {"kernel_calls": 6, "executions": 6, "device_executions": 8, "waits": 6, "compiles": 0, "host_segments": 0, "output_bytes": 29601596}}`,
		`{"kind": "case", "id": "cnn_train_b128_nocluster", "title": "CNN SGD train step, batch 128, clustering off", "device": [0.25, 0.25], "cpu": [0.0625, 0.0625], "clustering": false, "cluster_off_of": "cnn_train_b128",
		  "per_step": {"kernel_calls": 41, "executions": 40, "device_executions": 40, "waits": 40, "compiles": 0, "host_segments": 0, "output_bytes": 92775792}}`},
}

func clusterReport(t *testing.T) *Report {
	t.Helper()
	var runs [][]caseLine
	for _, run := range clusterLines {
		var lines []caseLine
		for _, l := range run {
			var c caseLine
			if err := json.Unmarshal([]byte(l), &c); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, c)
		}
		runs = append(runs, lines)
	}
	r := &Report{Started: time.Unix(0, 0), Wall: time.Minute, DefaultSync: true, TensorFlow: "2.21.0",
		Opts: Options{}.withDefaults(), Machine: readMachine()}
	r.Cases = aggregate(runs, true)
	r.Clustering = clusterEffects(r.Cases)
	r.ModelSteps = []StepCount{{ID: "cnn_train_b128", Title: "CNN SGD train step, batch 128", Driver: "metal-model", Clustering: "on",
		PerStep: map[string]float64{"kernel_calls": 6, "device_executions": 6, "waits": 6, "output_bytes": 29601596}}}
	return r
}

func TestClusterEffect(t *testing.T) {
	r := clusterReport(t)
	if g := []string{r.Cases[0].Clustering, r.Cases[1].Clustering, r.Cases[2].Clustering}; g[0] != "" || g[1] != "on" || g[2] != "off" {
		t.Errorf("Clustering of the cases = %q", g)
	}
	if r.Cases[2].ClusterOffOf != "cnn_train_b128" || r.Cases[1].ClusterOffOf != "" {
		t.Errorf("ClusterOffOf = %q, %q", r.Cases[1].ClusterOffOf, r.Cases[2].ClusterOffOf)
	}
	// Counts are the median over runs; a case without them has none.
	if r.Cases[1].PerStep["device_executions"] != 7 || r.Cases[2].PerStep["kernel_calls"] != 41 || r.Cases[0].PerStep != nil {
		t.Errorf("per step: %v, %v, %v", r.Cases[0].PerStep, r.Cases[1].PerStep, r.Cases[2].PerStep)
	}
	if len(r.Clustering) != 1 {
		t.Fatalf("Clustering = %+v, want one pair", r.Clustering)
	}
	p := r.Clustering[0]
	third := 1.0 / 3 // CPU/device in the second run; float arithmetic, as statOf's
	want := ClusterEffect{ID: "cnn_train_b128", OffID: "cnn_train_b128_nocluster", Title: "CNN SGD train step, batch 128",
		On: Stat{0.15625, 0.125, 0.1875}, Off: Stat{0.25, 0.25, 0.25}, CPU: Stat{0.0625, 0.0625, 0.0625},
		// Run by run: 0.125/0.25 and 0.1875/0.25.
		Effect: Stat{0.625, 0.5, 0.75}, OnRatio: Stat{(third + 0.5) / 2, third, 0.5}, OffRatio: Stat{0.25, 0.25, 0.25}}
	if p != want {
		t.Errorf("clustering effect\n got %+v\nwant %+v", p, want)
	}
	md := r.Markdown()
	for _, s := range []string{
		"## Training steps: what a Mac pays per step",
		"| CNN SGD train step, batch 128 `cnn_train_b128` | on | host | 6 | 7 | 6 | 0 | 0 | 29.6 MB | 105.0 µs–140.0 µs | 156.25 ms | 62.50 ms |",
		"| CNN SGD train step, batch 128 `cnn_train_b128_nocluster` | off | host | 41 | 40 | 40 | 0 | 0 | 92.8 MB | 600.0 µs–800.0 µs | 250.00 ms | 62.50 ms |",
		"| CNN SGD train step, batch 128 `cnn_train_b128` | on | metal-model | 6 | 6 | 6 | 0 | 0 | 29.6 MB | 90.0 µs–120.0 µs | – | – |",
		"pytorch/pytorch issue 82707",
		"## Effect of clustering on the host driver",
		"| CNN SGD train step, batch 128 `cnn_train_b128` vs `cnn_train_b128_nocluster` | 156.25 ms | 250.00 ms | 0.625 (0.5–0.75) | 62.50 ms | 0.417 (0.333–0.5) | 0.25 (0.25–0.25) |",
		"| `cnn_train_b128` | AddV2×4, _MetalplugCluster×8 | 1e-07 |",
		"each `…_nocluster` case is the one before it with clustering off",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("Markdown lacks %q:\n%s", s, md)
		}
	}
	// The steps come first; the effect follows the results and comes before the targets.
	if i, j, k, l := strings.Index(md, "## Training steps"), strings.Index(md, "## Results"), strings.Index(md, "## Effect of clustering"), strings.Index(md, "## Targets"); !(i < j && j < k && k < l) {
		t.Errorf("sections out of order: steps at %d, Results at %d, clustering at %d, Targets at %d", i, j, k, l)
	}

	// It survives the JSON the document is rendered from.
	path := filepath.Join(t.TempDir(), "r.json")
	if err := r.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Clustering) != 1 || back.Clustering[0] != want || back.Markdown() != md {
		t.Errorf("after a JSON round trip: %+v", back.Clustering)
	}
}

func TestClusterEffectNeedsBoth(t *testing.T) {
	r := clusterReport(t)
	// Without the clustering-on case (run alone, say) there is nothing to compare.
	if got := clusterEffects(r.Cases[2:]); len(got) != 0 {
		t.Errorf("a clustering-off case alone gave %+v", got)
	}
	if got := clusterEffects(r.Cases[:2]); len(got) != 0 {
		t.Errorf("a clustering-on case alone gave %+v", got)
	}
	// A report without such cases has no section on clustering.
	md := fakeReport().Markdown()
	for _, s := range []string{"## Effect of clustering", "case is the one before it with clustering off", "## Training steps"} {
		if strings.Contains(md, s) {
			t.Errorf("a report without training steps has %q", s)
		}
	}
}

// TestWorkerEnvDropsClustering: the default cases run with clustering on
// whatever the caller's environment says; the worker sets it itself.
func TestWorkerEnvDropsClustering(t *testing.T) {
	t.Setenv("METALPLUG_CLUSTER", "0")
	for _, kv := range workerEnv("/lib.so", "") {
		if strings.HasPrefix(kv, "METALPLUG_CLUSTER=") {
			t.Errorf("the worker's environment has %s", kv)
		}
	}
}

// The dispatch section folds its processes into medians and renders one
// row per frontend, driver and case, with the counts per op.
func TestDispatchRows(t *testing.T) {
	lines := []dispatchLine{
		{ID: "tiny_op", Title: "tiny", Driver: "metal-model", Version: "2.21.0", Device: []float64{30e-6, 20e-6, 25e-6}, CPU: []float64{10e-6}, PerOp: map[string]float64{"go_allocations": 25, "cgo_calls": 12, "handoffs": 0, "driver_waits": 1}},
		{ID: "tiny_op", Title: "tiny", Driver: "metal-model", Version: "2.21.0", Device: []float64{40e-6}, CPU: []float64{12e-6}, PerOp: map[string]float64{"go_allocations": 27, "cgo_calls": 12, "handoffs": 0, "driver_waits": 1}},
		{ID: "tiny_op", Title: "tiny", Driver: "metal-model", Version: "2.21.0", Device: []float64{35e-6}, CPU: []float64{11e-6}, PerOp: map[string]float64{"go_allocations": 26, "cgo_calls": 12, "handoffs": 0, "driver_waits": 1}},
	}
	row := dispatchRow("tensorflow", "metal-model", lines)
	if row.Device.Median != 35e-6 || row.Device.Min != 25e-6 || row.CPU.Median != 11e-6 || row.PerOp["go_allocations"] != 26 {
		t.Errorf("row %+v", row)
	}
	md := (&DispatchReport{Runs: 3, Rows: []DispatchRow{row}}).markdown()
	for _, want := range []string{"| tensorflow 2.21.0 | metal-model | tiny `tiny_op` | 35.0 µs | 11.0 µs | +24.0 µs | 26.0 | 12.0 | 0.00 | 1.00 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
}

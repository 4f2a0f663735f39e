package tasks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/sweep"
)

// testSources is the text of a package's test files.
func testSources(t *testing.T, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", dir, "*_test.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files in %s (%v)", dir, err)
	}
	var b strings.Builder
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(src)
	}
	return b.String()
}

// TestMacreportNamesTestsThatExist: the report selects tests by name with
// -run, which matches nothing, silently, once a test is renamed; so each
// name it uses must be a test of its package, and the conformance test
// must still log the driver's description where the report reads it.
func TestMacreportNamesTestsThatExist(t *testing.T) {
	integration := testSources(t, "tests/integration")
	for _, name := range MacEndToEndTests {
		if !strings.Contains(integration, "func "+name+"(t *testing.T)") {
			t.Errorf("MacEndToEndTests names %s, which tests/integration does not have", name)
		}
	}
	metal := testSources(t, "backend/driver/metal")
	for _, name := range []string{gpuProbeTest, describeTest} {
		if !strings.Contains(metal, "func "+name+"(t *testing.T)") {
			t.Errorf("the report runs %s, which backend/driver/metal does not have", name)
		}
	}
	if !strings.Contains(metal, `t.Logf("on %s", first.Description())`) {
		t.Errorf("%s no longer logs \"on <the driver's description>\": the report reads the Metal device's name there", describeTest)
	}
}

// TestSweepSummary: the report keeps a sweep's counts and, of its cases,
// the ones not verified, each with the model's verdict for the same op and
// dtypes (none where the model's table lacks the case), in op_errors.md's
// words.
func TestSweepSummary(t *testing.T) {
	res := &sweep.Report{
		TFVersion: "2.21.0", Kernels: 5, Verified: 2, NeedsCPU: 1, Unaccounted: 2,
		Cases: []sweep.Case{
			{Op: "Add", DTypes: "T=float32", Status: sweep.Verified},
			{Op: "Cholesky", DTypes: "T=float32", Status: sweep.NeedsCPU, Detail: "cholesky: no Cholesky in MPSGraph"},
			{Op: "Sort", DTypes: "T=int64", Status: sweep.Mismatch, Detail: "2 of 8 differ"},
			{Op: "Mul", DTypes: "T=float32", Status: sweep.Verified},
			{Op: "New", Status: sweep.DeviceError, Detail: "boom"},
		},
	}
	model := map[[2]string]sweep.Status{
		{"Add", "T=float32"}: sweep.Verified, {"Cholesky", "T=float32"}: sweep.NeedsCPU, {"Sort", "T=int64"}: sweep.Verified,
	}
	s := sweepSummary(res, model, "docs/op_errors_metal_model.md", "build/macreport/op_errors_gpu.md")
	if s.Cases != 5 || s.Verified != 2 || s.NeedsCPU != 1 || s.Unaccounted != 2 || s.TensorFlow != "2.21.0" || s.Kernels != 5 {
		t.Errorf("counts %+v", s)
	}
	want := []string{"Cholesky T=float32 needs cpu / needs cpu", "Sort T=int64 mismatch / verified", "New  device error / "}
	var got []string
	for _, r := range s.Rows {
		got = append(got, r.Op+" "+r.DTypes+" "+r.Status+" / "+r.Model)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

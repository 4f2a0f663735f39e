package sweep

import (
	"math"
	"strings"
	"testing"
	"time"
)

func f(v float64) *float64 { return &v }

func sampleReport() *Report {
	r := &Report{
		TFVersion: "2.21.0", DeviceType: "METALPLUG_HOST", Kernels: 5, Wall: 93 * time.Second,
		Cases: []Case{
			{ID: "AddV2:T=float32", Op: "AddV2", DTypes: "T=float32", Check: "vs CPU", MaxAbs: f(1.23456e-7), MaxRel: f(0.0345678), Status: Verified},
			{ID: "Erf:T=bfloat16", Op: "Erf", DTypes: "T=bfloat16", Check: "vs CPU in float32", MaxAbs: f(0), MaxRel: f(0), Status: Verified},
			{ID: "LogicalAnd:", Op: "LogicalAnd", Check: "vs CPU", MaxAbs: f(0), MaxRel: f(0), Status: Verified},
			{ID: "Pow:T=float16", Op: "Pow", DTypes: "T=float16", Check: "vs CPU", MaxAbs: f(math.Inf(1)), MaxRel: f(12345), Status: Mismatch,
				Detail: "3x4 with 3x4: output z: 1 of 12 elements outside rtol 0.04 | inputs: x=float16[3, 4] [...] | device: ..."},
			{ID: "RandomUniform:dtype=float32,T=int32", Op: "RandomUniform", DTypes: "dtype=float32,T=int32",
				Check: "uniform in [0, 1): range, mean, std", Status: Verified},
			{ID: "AssignVariableOp:dtype=float32", Op: "AssignVariableOp", DTypes: "dtype=float32", Check: "-", Status: NeedsEntryPoint},
			{ID: "Where:T=bool", Op: "Where", DTypes: "T=bool", Check: "-", Status: Crash, Detail: "the worker was killed by signal: aborted | stderr: F0000 0x7f3a..."},
		},
		AuditProblems: []string{"Foo: registered twice with the same constraints (T=float32 and T=float32)"},
	}
	r.count()
	return r
}

func TestCounts(t *testing.T) {
	r := sampleReport()
	if r.Verified != 4 || r.NeedsEntryPoint != 1 || r.Unaccounted != 2 {
		t.Fatalf("counts %d/%d/%d, want 4/1/2", r.Verified, r.NeedsEntryPoint, r.Unaccounted)
	}
	err := r.Err()
	if err == nil || !strings.Contains(err.Error(), "Pow:T=float16 (mismatch)") || !strings.Contains(err.Error(), "registered twice") {
		t.Fatalf("Err() = %v", err)
	}
	ok := &Report{Cases: []Case{{Status: Verified}, {Status: NeedsEntryPoint}}}
	ok.count()
	if ok.Err() != nil {
		t.Fatalf("all accounted, no audit problems: Err() = %v", ok.Err())
	}
	ok.Problems = []string{"a worker exited with status 1 after finishing all its cases"}
	if ok.Err() == nil {
		t.Fatal("a worker death the runner could not pin must fail the sweep")
	}
	if s := r.Summary(); !strings.Contains(s, "7 cases: 4 verified, 1 need an entry point this TensorFlow lacks, 2 unaccounted") || !strings.Contains(s, "1m33s") {
		t.Errorf("Summary() = %q", s)
	}
}

func TestOpErrorsMarkdown(t *testing.T) {
	md := sampleReport().OpErrorsMarkdown()
	for _, want := range []string{
		"TensorFlow 2.21.0, 5 kernel registrations: **7 cases, 4 verified, 1 need an entry point this TensorFlow lacks, 2 unaccounted.**",
		"| op | dtypes | check | max abs error | max rel error | status |",
		"| AddV2 | T=float32 | vs CPU | 1.2e-07 | 0.035 | verified |",
		"| Erf | T=bfloat16 | vs CPU in float32 | 0 | 0 | verified |",
		"| LogicalAnd | - | vs CPU | 0 | 0 | verified |",
		"| Pow | T=float16 | vs CPU | inf | 1.2e+04 | mismatch |",
		"| RandomUniform | dtype=float32,T=int32 | uniform in [0, 1): range, mean, std | - | - | verified |",
		"| AssignVariableOp | dtype=float32 | - | - | - | needs entry point |",
		"- Foo: registered twice with the same constraints",
		"- `Pow` T=float16: mismatch: 3x4 with 3x4: output z: 1 of 12 elements outside rtol 0.04\n",
		"- `Where` T=bool: crash: the worker was killed by signal: aborted\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// Nothing that changes from run to run: no wall time, no stderr (which
	// carries addresses), no dumped tensors.
	for _, bad := range []string{"1m33s", "93", "0x7f3a", "inputs:"} {
		if strings.Contains(md, bad) {
			t.Errorf("markdown contains %q, which is not stable between runs", bad)
		}
	}
	if md != sampleReport().OpErrorsMarkdown() {
		t.Error("two renderings of one report differ")
	}
}

func TestSig2(t *testing.T) {
	for _, c := range []struct {
		v    *float64
		want string
	}{
		{nil, "-"}, {f(0), "0"}, {f(1), "1"}, {f(0.000123456), "0.00012"}, {f(1.26e-7), "1.3e-07"},
		{f(1.24e-7), "1.2e-07"}, {f(123456), "1.2e+05"}, {f(math.Inf(1)), "inf"}, {f(math.NaN()), "nan"},
	} {
		if got := sig2(c.v); got != c.want {
			t.Errorf("sig2(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestCellEscapesPipes(t *testing.T) {
	if got := oneLine("a | b"); got != "a" {
		t.Errorf("oneLine cuts at the detail separator: %q", got)
	}
	if got := cell("x|y"); got != `x\|y` {
		t.Errorf("cell = %q", got)
	}
}

func TestDTypeMatch(t *testing.T) {
	for _, c := range []struct {
		combo  string
		filter []string
		want   bool
	}{
		{"T=float32", nil, true},
		{"T=float32", []string{"float32"}, true},
		{"T=float32", []string{"T=float32"}, true},
		{"SrcT=float32,DstT=int32", []string{"int32"}, true},
		{"SrcT=float32,DstT=int32", []string{"SrcT=float32,DstT=int32"}, true},
		{"T=float16", []string{"float32"}, false},
		{"", []string{"float32"}, false},
	} {
		if got := dtypeMatch(c.combo, c.filter); got != c.want {
			t.Errorf("dtypeMatch(%q, %v) = %v", c.combo, c.filter, got)
		}
	}
}

// TestSameVerdicts: the stale-docs check ignores the error figures, which
// follow the machine, and nothing else.
func TestSameVerdicts(t *testing.T) {
	base := sampleReport()
	doc := []byte(base.OpErrorsMarkdown())
	figures := sampleReport()
	figures.Cases[0].MaxAbs, figures.Cases[0].MaxRel = f(9.9e-6), f(0.5)
	if !SameVerdicts(doc, []byte(figures.OpErrorsMarkdown())) {
		t.Error("different error figures must not make the file stale")
	}
	for name, change := range map[string]func(r *Report){
		"status":   func(r *Report) { r.Cases[1].Status = Mismatch; r.Cases[1].Detail = "x" },
		"check":    func(r *Report) { r.Cases[0].Check = "vs CPU in float32" },
		"a case":   func(r *Report) { r.Cases = r.Cases[1:] },
		"escaped":  func(r *Report) { r.Cases[2].Check = "a | b" },
		"header":   func(r *Report) { r.TFVersion = "2.22.0" },
		"audit":    func(r *Report) { r.AuditProblems = nil },
		"a dtype":  func(r *Report) { r.Cases[0].DTypes = "T=float16" },
		"an op":    func(r *Report) { r.Cases[0].Op = "Sub" },
		"a detail": func(r *Report) { r.Cases[3].Detail = "another reason" },
	} {
		r := sampleReport()
		change(r)
		r.count()
		if SameVerdicts(doc, []byte(r.OpErrorsMarkdown())) {
			t.Errorf("a changed %s must make the file stale", name)
		}
	}
}

// TestVerdictsReadsTheTableBack: every case of a rendered table comes back
// with its status, dtypes "-" as none, and nothing from the other sections
// (the audit, the unaccounted list) is taken for a row.
func TestVerdictsReadsTheTableBack(t *testing.T) {
	r := sampleReport()
	r.Cases = append(r.Cases, Case{ID: "Odd:T=a|b", Op: "Odd", DTypes: "T=a|b", Check: "-", Status: NeedsCPU})
	r.count()
	got := Verdicts([]byte(r.OpErrorsMarkdown()))
	if len(got) != len(r.Cases) {
		t.Errorf("%d rows read back, want %d: %v", len(got), len(r.Cases), got)
	}
	for _, c := range r.Cases {
		if s := got[[2]string{c.Op, c.DTypes}]; s != c.Status {
			t.Errorf("%s: read back %q, want %q", c.ID, s, c.Status)
		}
	}
}

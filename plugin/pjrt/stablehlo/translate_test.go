package stablehlo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/status"
	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// mlirFixtures are plugin/pjrt/mlir's jax artifacts: what real jax hands a
// plugin, read golden-tested by that package.
const mlirFixtures = "../mlir/testdata"

func readModule(t *testing.T, path string) *mlir.Module {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := mlir.Read(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

func artifacts(t *testing.T) []string {
	t.Helper()
	a, _ := filepath.Glob(filepath.Join(mlirFixtures, "*.mlir.bc"))
	b, _ := filepath.Glob("testdata/*.mlir.bc")
	if len(a) < 20 || len(b) < 20 {
		t.Fatalf("found %d and %d artifacts", len(a), len(b))
	}
	return append(a, b...)
}

// expectedErrors are the artifacts the translation refuses, and what the
// error must say: the op, what about it, and where jax says it came from.
var expectedErrors = map[string][]string{
	"error_cholesky":  {"vhlo.custom_call_v2 at", `custom_call target "lapack_spotrf_ffi"`},
	"error_f64_atan2": {"vhlo.atan2_v1 at", "atan2 of float64"},
}

func TestEveryArtifactTranslates(t *testing.T) {
	seen := map[string]bool{}
	for _, path := range artifacts(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".mlir.bc")
		m := readModule(t, path)
		p, err := Translate(m)
		want, refused := expectedErrors[name]
		switch {
		case refused && err == nil:
			t.Errorf("%s: translated, want an error saying %q", name, want)
		case refused:
			seen[name] = true
			if !errors.Is(err, ErrUnsupported) {
				t.Errorf("%s: %v does not wrap ErrUnsupported", name, err)
			}
			for _, w := range want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: error %q does not say %q", name, err, w)
				}
			}
		case err != nil:
			t.Errorf("%s: %v", name, err)
		default:
			if err := ir.Verify(p); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			sig, err := MainSignature(m)
			if err != nil {
				t.Errorf("%s: signature: %v", name, err)
			} else if len(sig.Args) != len(p.Params) || len(sig.Results) != len(p.Results) {
				t.Errorf("%s: signature of %d args and %d results for a program of %d and %d", name, len(sig.Args), len(sig.Results), len(p.Params), len(p.Results))
			}
		}
	}
	for name := range expectedErrors {
		if !seen[name] {
			t.Errorf("expected error fixture %s is missing", name)
		}
	}
}

// TestOpsCoverTheFixtures: every op any fixture holds is in the table
// docs/jax.md is generated from.
func TestOpsCoverTheFixtures(t *testing.T) {
	table := map[string]bool{}
	for _, o := range Ops() {
		table[o.Name] = true
	}
	missing := map[string][]string{}
	for _, path := range artifacts(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".mlir.bc")
		readModule(t, path).Walk(func(op *mlir.Operation) bool {
			if !table[op.Name] && !slices.Contains(missing[op.Name], name) {
				missing[op.Name] = append(missing[op.Name], name)
			}
			return true
		})
	}
	for op, files := range missing {
		// The refused fixtures are there to hold what is not supported.
		files = slices.DeleteFunc(files, func(f string) bool { _, ok := expectedErrors[f]; return ok })
		if len(files) > 0 {
			t.Errorf("%s (in %v) is not in Ops()", op, files)
		}
	}
}

func TestOpsTable(t *testing.T) {
	ops := Ops()
	if len(ops) < 100 {
		t.Errorf("only %d ops", len(ops))
	}
	for i, o := range ops {
		if o.Note == "" {
			t.Errorf("%s has no note", o.Name)
		}
		if i > 0 && ops[i-1].Name >= o.Name {
			t.Errorf("Ops is not sorted at %s", o.Name)
		}
		if !strings.HasPrefix(o.Name, "vhlo.") && !strings.HasPrefix(o.Name, "sdy.") && !strings.HasPrefix(o.Name, "builtin.") {
			t.Errorf("%s is not an op name of the artifact", o.Name)
		}
	}
}

// TestGoldenFunctionsNeverPanic translates every function of StableHLO's
// own VHLO golden files (nearly every op and attribute VHLO has, at
// versions 0.9 to 1.20) as if it were main: each translates and verifies,
// or fails saying what is unsupported or malformed; none panics or fails
// inside the translation.
func TestGoldenFunctionsNeverPanic(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(mlirFixtures, "stablehlo", "*.mlir.bc"))
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	var ok, unsupportedN, invalidN int
	refused := map[string]int{}
	for _, path := range files {
		m := readModule(t, path)
		for _, op := range m.Body.Regions[0].Blocks[0].Ops {
			if op.Name != "vhlo.func_v1" {
				continue
			}
			name, _ := stringAttr(op, "sym_name")
			p, err := translate(m, name)
			switch {
			case err == nil && len(p.Results) == 0:
				ok++
				if len(p.Instrs) != 0 {
					t.Errorf("%s @%s: no results, yet %d instructions", filepath.Base(path), name, len(p.Instrs))
				}
			case err == nil:
				ok++
				if err := ir.Verify(p); err != nil {
					t.Errorf("%s @%s: %v", filepath.Base(path), name, err)
				}
			case errors.Is(err, ErrUnsupported):
				unsupportedN++
				refused[strings.SplitN(err.Error(), " ", 2)[0]]++
			case status.CodeOf(err) == status.InvalidArgument:
				invalidN++
			default:
				t.Errorf("%s @%s: an internal error: %v", filepath.Base(path), name, err)
			}
		}
	}
	t.Logf("golden functions: %d translate, %d unsupported, %d malformed; refused at %v", ok, unsupportedN, invalidN, refused)
	if ok < 100 {
		t.Errorf("only %d golden functions translate", ok)
	}
}

func firstOp(m *mlir.Module, name string) *mlir.Operation {
	var found *mlir.Operation
	m.Walk(func(op *mlir.Operation) bool {
		if op.Name == name {
			found = op
			return false
		}
		return true
	})
	return found
}

func TestMalformedModules(t *testing.T) {
	fixture := filepath.Join(mlirFixtures, "elementwise.mlir.bc")
	cases := []struct {
		name        string
		edit        func(m *mlir.Module)
		want        []string
		unsupported bool
	}{
		{"no main", func(m *mlir.Module) {
			main := firstOp(m, "vhlo.func_v1")
			for i, a := range main.Attrs {
				if a.Name == "sym_name" {
					main.Attrs[i].Value = &mlir.StringAttr{Value: "not_main"}
				}
			}
		}, []string{"builtin.module at", "the module has no function main", `"not_main"`}, false},
		{"unsupported op", func(m *mlir.Module) {
			firstOp(m, "vhlo.sine_v2").Name = "vhlo.batch_norm_inference_v1"
		}, []string{"vhlo.batch_norm_inference_v1 at jit(f)/sin at generate.py:", "the op vhlo.batch_norm_inference_v1", "not supported by metalplug"}, true},
		{"unsupported dtype", func(m *mlir.Module) {
			op := firstOp(m, "vhlo.sine_v2")
			op.Results[0].Type = &mlir.TensorType{Shape: []int64{4, 5}, Elem: &mlir.FloatType{Kind: mlir.TF32}}
		}, []string{"vhlo.sine_v2 at jit(f)/sin at generate.py:", "result 0 has element type tf32"}, true},
		{"dynamic shape", func(m *mlir.Module) {
			op := firstOp(m, "vhlo.sine_v2")
			op.Results[0].Type = &mlir.TensorType{Shape: []int64{mlir.Dynamic, 5}, Elem: &mlir.FloatType{Kind: mlir.F32}}
		}, []string{"vhlo.sine_v2 at", "tensor<?x5xf32>: dynamic shapes"}, true},
		{"declared type disagrees", func(m *mlir.Module) {
			op := firstOp(m, "vhlo.sine_v2")
			op.Results[0].Type = &mlir.TensorType{Shape: []int64{4, 5}, Elem: &mlir.FloatType{Kind: mlir.F16}}
		}, []string{"vhlo.sine_v2 at", "declared float16[4,5] but computes float32[4,5]"}, false},
		{"accuracy asked for", func(m *mlir.Module) {
			op := firstOp(m, "vhlo.sine_v2")
			for i, a := range op.Attrs {
				if a.Name == "result_accuracy" {
					op.Attrs[i].Value = &mlir.ResultAccuracyAttr{Ulps: 1, Mode: &mlir.EnumAttr{Kind: mlir.EnumResultAccuracyMode, Name: "TOLERANCE"}}
				}
			}
		}, []string{"vhlo.sine_v2 at", "result_accuracy", "TOLERANCE"}, true},
		{"several devices", func(m *mlir.Module) {
			for i, a := range m.Body.Attrs {
				if a.Name == "mhlo.num_partitions" {
					m.Body.Attrs[i].Value = &mlir.IntegerAttr{Type: &mlir.IntegerType{Width: 32}, Value: 2}
				}
			}
		}, []string{"builtin.module", "mhlo.num_partitions = 2", "one device"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := readModule(t, fixture)
			c.edit(m)
			_, err := Translate(m)
			if err == nil {
				t.Fatal("translated")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if got := errors.Is(err, ErrUnsupported); got != c.unsupported {
				t.Errorf("unsupported = %v for %v", got, err)
			}
			if !c.unsupported && status.CodeOf(err) != status.InvalidArgument {
				t.Errorf("%v is not InvalidArgument", err)
			}
		})
	}
	if _, _, err := Read([]byte("not bytecode")); err == nil || status.CodeOf(err) != status.InvalidArgument || !strings.Contains(err.Error(), "reading the StableHLO artifact") {
		t.Errorf("garbage: %v", err)
	}
}

// TestPanicBecomesAnError: a panic inside the translation of an op is an
// Internal error naming the op and its location, never a crash.
func TestPanicBecomesAnError(t *testing.T) {
	saved := handlers["vhlo.sine_v2"]
	handlers["vhlo.sine_v2"] = handler{fn: func(*env, *mlir.Operation) ([]ir.Value, error) { panic("boom") }, note: saved.note}
	defer func() { handlers["vhlo.sine_v2"] = saved }()
	_, err := Translate(readModule(t, filepath.Join(mlirFixtures, "elementwise.mlir.bc")))
	if err == nil || status.CodeOf(err) != status.Internal {
		t.Fatalf("got %v, want an Internal error", err)
	}
	for _, w := range []string{"panic while translating vhlo.sine_v2 at jit(f)/sin at generate.py:", "boom"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}

func TestSignature(t *testing.T) {
	m := readModule(t, "testdata/donation.mlir.bc")
	sig, err := MainSignature(m)
	if err != nil {
		t.Fatal(err)
	}
	if len(sig.Args) != 2 || len(sig.Results) != 2 {
		t.Fatalf("%+v", sig)
	}
	// x * 2 can reuse x's buffer; jax finds no result for y (a scalar sum).
	if a := sig.Args[0]; a.AliasOutput != 0 || !sig.Donated(0) || a.Type.String() != "float32[3]" {
		t.Errorf("arg 0: %+v", a)
	}
	if sig.Donated(1) {
		t.Errorf("arg 1: %+v", sig.Args[1])
	}
	if sig.Results[0].Info != "result[0]" || sig.Results[1].Info != "result[1]" || sig.Results[1].Type.String() != "float32[]" {
		t.Errorf("results: %+v", sig.Results)
	}
	sig, err = MainSignature(readModule(t, "testdata/mlp_adam.mlir.bc"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sig.Args) != 15 || sig.Donated(0) || sig.Results[1].Info != "result[1][0][0]" {
		t.Errorf("mlp_adam: %d args, results %+v", len(sig.Args), sig.Results[:2])
	}
}

// TestTranslatorSeam: what the seam hands the PJRT layer carries its class
// in backend/status's vocabulary: unsupported programs Unimplemented,
// malformed ones InvalidArgument.
func TestTranslatorSeam(t *testing.T) {
	tr := Translator()
	code, err := os.ReadFile("testdata/error_f64_atan2.mlir.bc")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr(code, "mlir"); !errors.Is(err, ErrUnsupported) || status.CodeOf(err) != status.Unimplemented {
		t.Errorf("unsupported op: %v", err)
	}
	if _, err := tr(code, "hlo"); status.CodeOf(err) != status.Unimplemented || !strings.Contains(err.Error(), `format "hlo"`) {
		t.Errorf("hlo: %v", err)
	}
	if _, err := tr([]byte("junk"), "mlir"); err == nil || errors.Is(err, ErrUnsupported) || status.CodeOf(err) != status.InvalidArgument {
		t.Errorf("junk: %v", err)
	}
	code, _ = os.ReadFile("testdata/matmul.mlir.bc")
	if p, err := tr(code, "mlir"); err != nil || len(p.Params) != 7 {
		t.Errorf("matmul: %v", err)
	}
}

// TestFunctionWithoutResults: a main that returns nothing (jax compiles
// them when differentiation or remat leaves a jitted function nothing to
// return, as in jax's api_test) is a program of its parameters alone, not
// an error.
func TestFunctionWithoutResults(t *testing.T) {
	m := readModule(t, filepath.Join(mlirFixtures, "stablehlo", "stablehlo_legalize_to_vhlo.1_20_0.mlir.bc"))
	p, err := translate(m, "type_none")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Results) != 0 || len(p.Instrs) != 0 || len(p.Params) != 0 {
		t.Errorf("params %v, %d instructions, results %v", p.Params, len(p.Instrs), p.Results)
	}
}

// TestUnsignedBoundary: ui16 and ui64 arguments and results are int16
// and int64 bits to the program, and the signature marks them, so that the
// PJRT layer gives their buffers the unsigned types (jax's lax_test and
// random_test take and return them).
func TestUnsignedBoundary(t *testing.T) {
	m := readModule(t, "testdata/unsigned_boundary.mlir.bc")
	sig, err := MainSignature(m)
	if err != nil {
		t.Fatal(err)
	}
	var args, results []string
	for _, a := range sig.Args {
		args = append(args, a.Held)
	}
	for _, r := range sig.Results {
		results = append(results, r.Held)
	}
	if fmt.Sprintf("%q", args) != `["u16" "u64"]` || fmt.Sprintf("%q", results) != `["u16" "u16" "" "u64" "" "u64" "u16"]` {
		t.Errorf("unsigned args %v, results %v", args, results)
	}
	if a := sig.Args[0].Type; a.DType != ir.I16 {
		t.Errorf("a ui16 argument is %v, not int16 bits", a)
	}
}

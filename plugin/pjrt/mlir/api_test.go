package mlir

import (
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

// These tests pin down what the translator to backend/ir will rely on,
// with literal expectations from the jax programs in testdata/generate.py.

func findOps(m *Module, name string) []*Operation {
	var ops []*Operation
	m.Walk(func(op *Operation) bool {
		if op.Name == name {
			ops = append(ops, op)
		}
		return true
	})
	return ops
}

func funcNamed(t *testing.T, m *Module, name string) *Operation {
	t.Helper()
	for _, f := range findOps(m, "vhlo.func_v1") {
		if a, _ := f.Attr("sym_name"); a.(*StringAttr).Value == name {
			return f
		}
	}
	t.Fatalf("no vhlo.func_v1 @%s", name)
	return nil
}

func TestMatmulTree(t *testing.T) {
	m := readFixture(t, "testdata/matmul.mlir.bc")
	if m.Producer != "StableHLO_v1.22.0" || m.Version != 6 || m.Body.Name != "builtin.module" {
		t.Fatalf("module: %q version %d body %s", m.Producer, m.Version, m.Body.Name)
	}
	if maj, min, patch, ok := m.VHLOVersion(); !ok || maj != 1 || min != 22 || patch != 0 {
		t.Errorf("VHLOVersion = %d.%d.%d, %v", maj, min, patch, ok)
	}
	main := funcNamed(t, m, "main")
	ft := main.Attrs[1].Value.(*TypeAttr).Type.(*FunctionType)
	if main.Attrs[1].Name != "function_type" || len(ft.Inputs) != 3 || ft.Results[0].String() != "tensor<8x4xf32>" {
		t.Errorf("function_type = %v", main.Attrs[1])
	}
	entry := main.Regions[0].Blocks[0]
	if len(entry.Args) != 3 || entry.Args[0].Block != entry || entry.Args[0].Loc.Name != "x" {
		t.Errorf("entry block arguments: %+v", entry.Args)
	}

	dot := findOps(m, "vhlo.dot_general_v2")[0]
	if dot.Operands[0] != entry.Args[0] || dot.Operands[1] != entry.Args[1] {
		t.Error("dot_general operands are not the function's arguments")
	}
	rt := dot.Results[0].Type.(*TensorType)
	if !slices.Equal(rt.Shape, []int64{8, 4}) || rt.Elem.(*FloatType).Kind != F32 {
		t.Errorf("dot_general result %s", rt)
	}
	contract, _ := dot.Attr("lhs_contracting_dimensions")
	dims, err := contract.(*DenseAttr).Int64s()
	if err != nil || !slices.Equal(dims, []int64{1}) {
		t.Errorf("lhs_contracting_dimensions = %v, %v", dims, err)
	}
	batch, _ := dot.Attr("lhs_batching_dimensions")
	if dims, _ := batch.(*DenseAttr).Int64s(); len(dims) != 0 {
		t.Errorf("lhs_batching_dimensions = %v", dims)
	}
	prec, _ := dot.Attr("precision_config")
	p0 := prec.(*ArrayAttr).Elems[0].(*EnumAttr)
	if p0.Kind != EnumPrecision || p0.Name != "DEFAULT" {
		t.Errorf("precision_config = %s", prec)
	}
	if acc, _ := dot.Attr("accumulation_type"); acc.(*TypeAttr).Type.String() != "none" {
		t.Errorf("accumulation_type = %s", acc)
	}
	if dot.Loc.File != "generate.py" || dot.Loc.Line == 0 || dot.Loc.Col == 0 || dot.Loc.Name != "jit(f)/dot_general" {
		t.Errorf("dot_general location = %+v", dot.Loc)
	}
	ret := findOps(m, "vhlo.return_v1")[0]
	if ret.Operands[0].Op.Name != "vhlo.tanh_v2" || ret.Block != entry {
		t.Errorf("return_v1 returns %s", ret.Operands[0].Op.Name)
	}
	if attrs, _ := m.Body.Attr("mhlo.num_partitions"); attrs.String() != "1 : i32" {
		t.Errorf("mhlo.num_partitions = %v", attrs)
	}
	err = dot.Errorf("unsupported precision %s", "HIGH")
	if !strings.Contains(err.Error(), "vhlo.dot_general_v2 at jit(f)/dot_general at generate.py:") {
		t.Errorf("Errorf = %q", err)
	}
}

func TestControlFlowTree(t *testing.T) {
	m := readFixture(t, "testdata/scan.mlir.bc")
	w := findOps(m, "vhlo.while_v1")
	if len(w) != 1 || len(w[0].Regions) != 2 || w[0].IsolatedFromAbove {
		t.Fatalf("while_v1: %d found", len(w))
	}
	cond, body := w[0].Regions[0].Blocks[0], w[0].Regions[1].Blocks[0]
	if len(cond.Args) != len(w[0].Operands) || len(body.Args) != len(w[0].Operands) {
		t.Errorf("while_v1 regions take %d and %d arguments for %d operands", len(cond.Args), len(body.Args), len(w[0].Operands))
	}
	if last := cond.Ops[len(cond.Ops)-1]; last.Name != "vhlo.return_v1" || last.Operands[0].Type.String() != "tensor<i1>" {
		t.Errorf("condition ends with %s", last)
	}
	calls := findOps(m, "vhlo.call_v1")
	if len(calls) == 0 {
		t.Fatal("no call_v1")
	}
	callee, _ := calls[0].Attr("callee")
	funcNamed(t, m, callee.(*StringAttr).Value)
	if !findOps(m, "vhlo.func_v1")[0].IsolatedFromAbove {
		t.Error("func_v1 is not isolated from above")
	}

	m = readFixture(t, "testdata/cond_switch.mlir.bc")
	cases := findOps(m, "vhlo.case_v1")
	if len(cases) != 2 || len(cases[0].Regions) != 2 || len(cases[1].Regions) != 3 {
		t.Errorf("case_v1: %d ops", len(cases))
	}
}

func TestReduceAndSort(t *testing.T) {
	m := readFixture(t, "testdata/reductions.mlir.bc")
	for _, r := range findOps(m, "vhlo.reduce_v1") {
		// inputs then init values, split in half (SameVariadicOperandSize)
		if len(r.Operands) != 2*len(r.Results) {
			t.Errorf("reduce_v1 with %d operands and %d results", len(r.Operands), len(r.Results))
		}
		if dims, _ := r.Attr("dimensions"); dims == nil {
			t.Error("reduce_v1 without dimensions")
		}
	}
	m = readFixture(t, "testdata/sort.mlir.bc")
	s := findOps(m, "vhlo.sort_v1")[0]
	if dim, _ := s.Attr("dimension"); dim.String() != "1 : i64" {
		t.Errorf("sort dimension = %s", dim)
	}
	if st, _ := s.Attr("is_stable"); st.(*BoolAttr) == nil {
		t.Errorf("sort is_stable = %s", st)
	}
	cmp := findOps(m, "vhlo.compare_v1")[0]
	dir, _ := cmp.Attr("comparison_direction")
	if e := dir.(*EnumAttr); e.Kind != EnumComparisonDirection {
		t.Errorf("comparison_direction = %s", dir)
	}
}

func denseConstants(m *Module) map[string]*DenseAttr {
	out := map[string]*DenseAttr{}
	for _, c := range findOps(m, "vhlo.constant_v1") {
		v, _ := c.Attr("value")
		d := v.(*DenseAttr)
		out[d.String()] = d
	}
	return out
}

func TestConstants(t *testing.T) {
	m := readFixture(t, "testdata/constants.mlir.bc")
	byType := map[string][]*DenseAttr{}
	for _, d := range denseConstants(m) {
		byType[d.Type.String()] = append(byType[d.Type.String()], d)
	}
	ints := func(typ string) []int64 {
		t.Helper()
		for _, d := range byType[typ] {
			if !d.Splat {
				v, err := d.Int64s()
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
		}
		t.Fatalf("no non-splat %s constant", typ)
		return nil
	}
	floats := func(typ string) []float64 {
		t.Helper()
		for _, d := range byType[typ] {
			if !d.Splat {
				v, err := d.Float64s()
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
		}
		t.Fatalf("no non-splat %s constant", typ)
		return nil
	}
	if v := ints("tensor<4xi8>"); !slices.Equal(v, []int64{-128, 0, 7, 127}) {
		t.Errorf("i8 = %v", v)
	}
	if v := ints("tensor<4xui8>"); !slices.Equal(v, []int64{0, 1, 200, 255}) {
		t.Errorf("ui8 = %v", v)
	}
	if v := ints("tensor<4xi16>"); !slices.Equal(v, []int64{-3, 30000, 5, 6}) {
		t.Errorf("i16 = %v", v)
	}
	if v := ints("tensor<4xui32>"); !slices.Equal(v, []int64{1, 2, 3, 4000000000}) {
		t.Errorf("ui32 = %v", v)
	}
	if v := ints("tensor<4xi1>"); !slices.Equal(v, []int64{1, 0, 1, 1}) {
		t.Errorf("bool = %v", v)
	}
	if v := floats("tensor<4xf16>"); !slices.Equal(v, []float64{0.5, 1.5, -2, 65504}) {
		t.Errorf("f16 = %v", v)
	}
	if v := floats("tensor<4xbf16>"); v[3] < 3.0e38 || v[3] > 3.01e38 || v[0] != 0.5 {
		t.Errorf("bf16 = %v", v)
	}
	big := firstFloats(t, byType["tensor<4x30xf32>"])
	if len(big) != 120 || big[7] != float64(float32(7)/7) || big[119] != float64(float32(119)/7) {
		t.Errorf("4x30 constant = %v", big)
	}
	for _, d := range byType["tensor<4xf32>"] {
		v, _ := d.Float64s()
		if !d.Splat && math.IsNaN(v[0]) {
			if !math.IsInf(v[1], 1) || !math.IsInf(v[2], -1) || !math.Signbit(v[3]) || v[3] != 0 {
				t.Errorf("special floats = %v", v)
			}
		}
	}
	c := byType["tensor<4xcomplex<f32>>"][0]
	if ElementBytes(c.Elem()) != 8 || len(c.Data) != 32 || leUint(c.Element(1)[4:]) != uint64(math.Float32bits(-4)) {
		t.Errorf("complex64 constant = %s", c)
	}

	m = readFixture(t, "testdata/constants_x64.mlir.bc")
	for _, d := range denseConstants(m) {
		switch d.Type.String() {
		case "tensor<4xf64>":
			if v, _ := d.Float64s(); !d.Splat && v[2] != math.Pi {
				t.Errorf("f64 = %v", v)
			}
		case "tensor<4xui64>":
			if v, _ := d.Int64s(); uint64(v[0]) != math.MaxUint64 {
				t.Errorf("ui64 = %v", v)
			}
		case "tensor<4xi64>":
			if v, _ := d.Int64s(); v[0] != -(1 << 62) {
				t.Errorf("i64 = %v", v)
			}
		}
	}
}

func firstFloats(t *testing.T, ds []*DenseAttr) []float64 {
	t.Helper()
	for _, d := range ds {
		if !d.Splat {
			v, err := d.Float64s()
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	return nil
}

func TestForeignDialects(t *testing.T) {
	m := readFixture(t, "testdata/random_typed_key.mlir.bc")
	mesh := findOps(m, "sdy.mesh")
	if len(mesh) != 1 {
		t.Fatalf("%d sdy.mesh ops", len(mesh))
	}
	if a, _ := mesh[0].Attr("mesh"); a.(*OpaqueAttr).Dialect != "sdy" {
		t.Errorf("sdy.mesh mesh = %s", a)
	}
	if a, _ := mesh[0].Attr("sym_name"); a.String() != `"empty_mesh"` {
		t.Errorf("sdy.mesh sym_name = %s", a)
	}
	for _, c := range findOps(m, "builtin.unrealized_conversion_cast") {
		// A builtin tensor and a vhlo tensor_v1 are the same Go type.
		if !Equal(c.Operands[0].Type, c.Results[0].Type) {
			t.Errorf("cast from %s to %s", c.Operands[0].Type, c.Results[0].Type)
		}
	}
	if len(findOps(m, "sdy.sharding_constraint")) == 0 {
		t.Error("no sdy.sharding_constraint")
	}
}

// TestErrorsNameTheOp breaks each op's properties in turn and checks that
// the error says which op, where jax put it, and at which offset.
func TestErrorsNameTheOp(t *testing.T) {
	data := mustRead(t, "testdata/matmul.mlir.bc")
	p := &parser{buf: data}
	if _, err := p.read(); err != nil {
		t.Fatal(err)
	}
	if len(p.attrs) >= 127 {
		t.Fatalf("%d attributes: 0xFF would not be out of range", len(p.attrs))
	}
	broken, located := 0, 0
	for _, blob := range p.props {
		if len(blob.data) == 0 {
			continue
		}
		bad := append([]byte(nil), data...)
		bad[blob.base] = 0xFF // attribute 127, past the table
		_, err := Read(bad)
		var e *Error
		if !errors.As(err, &e) || e.Offset != blob.base {
			t.Errorf("blob at %d: got %v", blob.base, err)
			continue
		}
		if !strings.Contains(e.Msg, "(in vhlo.") && !strings.Contains(e.Msg, "(in builtin.module") {
			t.Errorf("error does not name the op: %s", e)
		}
		// jax gives the module and functions no location; their ops have one.
		switch {
		case strings.Contains(e.Msg, "generate.py:"):
			located++
		case strings.Contains(e.Msg, "(in vhlo.func_v1 at unknown location)"),
			strings.Contains(e.Msg, "(in builtin.module at unknown location)"):
		default:
			t.Errorf("error does not give the op's location: %s", e)
		}
		broken++
	}
	if broken == 0 || located == 0 {
		t.Fatalf("broke %d properties, %d errors with a source location", broken, located)
	}
}

func TestLocationSummary(t *testing.T) {
	file := &LocAttr{Kind: LocFile, File: "f.py", Line: 3, Col: 7, HasCol: true}
	outer := &LocAttr{Kind: LocFile, File: "main.py", Line: 1, Col: 1, HasCol: true}
	loc := &LocAttr{Kind: LocName, Name: "jit(f)/add", Children: []*LocAttr{
		{Kind: LocCallSite, Children: []*LocAttr{{Kind: LocName, Name: "f", Children: []*LocAttr{file}}, outer}},
	}}
	s := summarize(loc)
	if s.File != "f.py" || s.Line != 3 || s.Col != 7 || s.Name != "jit(f)/add" {
		t.Errorf("summary = %+v", s)
	}
	if got := s.String(); got != "jit(f)/add at f.py:3:7" {
		t.Errorf("String = %q", got)
	}
	fused := &LocAttr{Kind: LocFused, Children: []*LocAttr{{Kind: LocUnknown}, file}}
	if s := summarize(fused); s.File != "f.py" {
		t.Errorf("fused summary = %+v", s)
	}
	if got := fused.String(); got != `loc(fused[unknown, "f.py":3:7])` {
		t.Errorf("fused = %s", got)
	}
}

func TestFloatFormatting(t *testing.T) {
	f32 := &FloatType{Kind: F32}
	for _, c := range []struct {
		t    Type
		bits uint64
		want string
	}{
		{f32, uint64(math.Float32bits(1)), "1.000000e+00"},
		{f32, uint64(math.Float32bits(0.9)), "0.899999976"},
		{f32, uint64(math.Float32bits(1e-8)), "9.99999993E-9"},
		{f32, uint64(math.Float32bits(0.1)), "1.000000e-01"},
		{f32, uint64(math.Float32bits(float32(math.Copysign(0, -1)))), "-0.000000e+00"},
		{f32, 0x7FC00000, "0x7FC00000"},
		{f32, uint64(math.Float32bits(123456789)), "0x4CEB79A3"},
		{&FloatType{Kind: F64}, math.Float64bits(math.Pi), "3.1415926535897931"},
		{&FloatType{Kind: F16}, 0x7BFF, "6.550400e+04"},
		{&FloatType{Kind: BF16}, 0x3F80, "1.000000e+00"},
	} {
		if got := formatFloatBits(c.t, c.bits); got != c.want {
			t.Errorf("format %s 0x%X = %s, want %s", c.t, c.bits, got, c.want)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	readFixture(t, path) // it must read as it is
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

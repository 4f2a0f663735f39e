package lower

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver/host"
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
	"github.com/metalplug/metalplug/backend/status"
)

// The fused ops against the unfused chain they stand for: Conv2D or MatMul,
// then BiasAdd, then the activation op, each lowered on its own.

// fusedActs are fused_ops' activations and the standalone op's attributes
// for each (LeakyRelu's alpha is the fused op's leakyrelu_alpha).
var fusedActs = []struct {
	name  string
	attrs func() attrs
}{
	{"", A},
	{"Relu", A},
	{"Relu6", A},
	{"Elu", A},
	{"LeakyRelu", func() attrs { return A().F("alpha", 0.3) }},
	{"Tanh", A},
	{"Sigmoid", A},
}

// fusedAttrs copies a and adds the fused op's attributes for activation act.
func fusedAttrs(a attrs, act string) attrs {
	out := A()
	for k, v := range a.Ints {
		out.Ints[k] = v
	}
	for k, v := range a.Strings {
		out.Strings[k] = v
	}
	for k, v := range a.Bools {
		out.Bools[k] = v
	}
	ops := []string{"BiasAdd"}
	if act != "" {
		ops = append(ops, act)
	}
	out = out.Ss("fused_ops", ops...).I("num_args", 1)
	if act == "LeakyRelu" {
		out = out.F("leakyrelu_alpha", 0.3)
	}
	return out
}

// runner evaluates one op on its inputs: the reference interpreter, or the
// host driver.
type runner func(t *testing.T, op string, a attrs, ins ...eval.Tensor) []eval.Tensor

// runHost lowers op and runs the program on the host driver.
func runHost(t *testing.T, op string, a attrs, ins ...eval.Tensor) []eval.Tensor {
	t.Helper()
	k, ok := Lookup(op)
	if !ok {
		t.Fatalf("%s is not registered", op)
	}
	types := make([]ir.TensorType, len(ins))
	for i, in := range ins {
		types[i] = in.Type
	}
	l, err := k.Build(a.Attrs, types, nil, nil)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	d := host.New(host.Options{})
	exe, err := d.Compile(l.Program)
	if err != nil {
		t.Fatalf("%s: compile: %v", op, err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var bufs []unsafe.Pointer
	alloc := func(n int) unsafe.Pointer {
		p, err := d.Allocate(max(n, 1))
		if err != nil {
			t.Fatal(err)
		}
		bufs = append(bufs, p)
		return p
	}
	defer func() {
		for _, p := range bufs {
			d.Free(p)
		}
	}()
	var args, results []unsafe.Pointer
	for _, in := range ins {
		b := in.Bytes()
		p := alloc(len(b))
		copy(unsafe.Slice((*byte)(p), len(b)), b)
		args = append(args, p)
	}
	rts := l.Program.ResultTypes()
	for _, rt := range rts {
		results = append(results, alloc(rt.Bytes()))
	}
	s.Execute(exe, args, results)
	if err := s.Synchronize(); err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	out := make([]eval.Tensor, len(rts))
	for i, rt := range rts {
		out[i] = eval.FromBytes(rt, slices.Clone(unsafe.Slice((*byte)(results[i]), rt.Bytes())))
	}
	return out
}

// normal is a value of standard normal floats, rounded to d.
func normal(r *rand.Rand, d ir.DType, s ir.Shape) eval.Tensor {
	xs := make([]float64, s.Size())
	for i := range xs {
		xs[i] = r.NormFloat64()
	}
	return val(d, s, xs...)
}

func TestFusedOpsMatchTheUnfusedChain(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	type product struct {
		name        string
		op, unfused string
		a           attrs
		x, y, bias  ir.Shape
		dtypes      []ir.DType
	}
	products := []product{
		{"conv SAME stride 2", "_FusedConv2D", "Conv2D", A().Is("strides", 1, 2, 2, 1).S("padding", "SAME"),
			ir.Shape{2, 5, 6, 3}, ir.Shape{3, 3, 3, 4}, ir.Shape{4}, []ir.DType{ir.F32, ir.F16}},
		{"conv NCHW VALID dilated", "_FusedConv2D", "Conv2D", A().Is("strides", 1, 1, 1, 1).Is("dilations", 1, 1, 2, 1).S("padding", "VALID").S("data_format", "NCHW"),
			ir.Shape{1, 2, 7, 5}, ir.Shape{2, 2, 2, 3}, ir.Shape{3}, []ir.DType{ir.F32}},
		{"conv EXPLICIT", "_FusedConv2D", "Conv2D", A().Is("strides", 1, 1, 2, 1).S("padding", "EXPLICIT").Is("explicit_paddings", 0, 0, 1, 2, 0, 1, 0, 0),
			ir.Shape{1, 4, 5, 2}, ir.Shape{2, 3, 2, 2}, ir.Shape{2}, []ir.DType{ir.F32}},
		{"matmul", "_FusedMatMul", "MatMul", A(), ir.Shape{4, 6}, ir.Shape{6, 3}, ir.Shape{3}, []ir.DType{ir.F32, ir.F16, ir.BF16}},
		{"matmul transposed", "_FusedMatMul", "MatMul", A().B("transpose_a", true).B("transpose_b", true),
			ir.Shape{6, 4}, ir.Shape{3, 6}, ir.Shape{3}, []ir.DType{ir.F32}},
	}
	for _, p := range products {
		for _, d := range p.dtypes {
			x, y, bias := normal(r, d, p.x), normal(r, d, p.y), normal(r, d, p.bias)
			for _, act := range fusedActs {
				for _, ex := range []struct {
					name string
					run  runner
					tol  float64
				}{{"eval", run, 0}, {"host", runHost, 1e-6}} {
					name := p.name + " " + d.String() + " BiasAdd," + act.name + " on " + ex.name
					got := ex.run(t, p.op, fusedAttrs(p.a, act.name), x, y, bias)[0]
					want := ex.run(t, p.unfused, p.a, x, y)[0]
					want = ex.run(t, "BiasAdd", A().S("data_format", p.a.String("data_format", "NHWC")), want, bias)[0]
					if act.name != "" {
						want = ex.run(t, act.name, act.attrs(), want)[0]
					}
					expectShape(t, name, got, want.Type)
					expectClose(t, name, got, want.Floats(), ex.tol)
				}
			}
		}
	}
}

func TestFusedOpsRejectOtherFusions(t *testing.T) {
	conv := func() attrs { return A().Is("strides", 1, 1, 1, 1).S("padding", "SAME") }
	x, w, b := f32(2, 5, 5, 3), f32(3, 3, 3, 4), f32(4)
	for _, c := range []struct {
		name string
		op   string
		a    attrs
		in   []ir.TensorType
		want []string
	}{
		{"no fused_ops", "_FusedConv2D", conv().I("num_args", 1), []ir.TensorType{x, w, b}, []string{"fused_ops []", "float32[2,5,5,3]", "float32[4]"}},
		{"Add", "_FusedConv2D", conv().Ss("fused_ops", "BiasAdd", "Add").I("num_args", 2), []ir.TensorType{x, w, b, f32(2, 5, 5, 4)},
			[]string{"fused_ops [BiasAdd, Add]", "float32[2,5,5,3]", "float32[2,5,5,4]"}},
		{"BiasAdd, Add, Relu", "_FusedConv2D", conv().Ss("fused_ops", "BiasAdd", "Add", "Relu").I("num_args", 2), []ir.TensorType{x, w, b, f32(2, 5, 5, 4)},
			[]string{"[BiasAdd, Add, Relu]"}},
		{"FusedBatchNorm", "_FusedConv2D", conv().Ss("fused_ops", "FusedBatchNorm", "Relu").I("num_args", 4), []ir.TensorType{x, w, b, b, b, b},
			[]string{"[FusedBatchNorm, Relu]", "float32[3,3,3,4]"}},
		{"activation alone", "_FusedMatMul", A().Ss("fused_ops", "Relu").I("num_args", 1), []ir.TensorType{f32(4, 6), f32(6, 3), f32(3)},
			[]string{"[Relu]", "float32[4,6]"}},
		{"GeluExact", "_FusedMatMul", A().Ss("fused_ops", "BiasAdd", "GeluExact").I("num_args", 1), []ir.TensorType{f32(4, 6), f32(6, 3), f32(3)},
			[]string{"[BiasAdd, GeluExact]", "Relu6", "float32[6,3]"}},
		{"two args", "_FusedMatMul", A().Ss("fused_ops", "BiasAdd", "Relu").I("num_args", 2), []ir.TensorType{f32(4, 6), f32(6, 3), f32(3), f32(3)},
			[]string{"num_args 2", "[BiasAdd, Relu]", "float32[4,6]"}},
		{"host args", "_FusedConv2D", conv().Ss("fused_ops", "BiasAdd").I("num_args", 1).I("num_host_args", 1), []ir.TensorType{x, w, b, f32()},
			[]string{"num_host_args 1", "[BiasAdd]"}},
		{"NCHW_VECT_C", "_FusedConv2D", conv().S("data_format", "NCHW_VECT_C").Ss("fused_ops", "BiasAdd", "Relu").I("num_args", 1), []ir.TensorType{x, w, b},
			[]string{"NCHW_VECT_C", "[BiasAdd, Relu]", "float32[2,5,5,3]"}},
		{"OIHW filter", "_FusedConv2D", conv().S("filter_format", "OIHW").Ss("fused_ops", "BiasAdd").I("num_args", 1), []ir.TensorType{x, w, b},
			[]string{"OIHW", "[BiasAdd]", "float32[3,3,3,4]"}},
		{"bias of the wrong size", "_FusedConv2D", conv().Ss("fused_ops", "BiasAdd", "Elu").I("num_args", 1), []ir.TensorType{x, w, f32(3)},
			[]string{"float32[3]", "float32[2,5,5,4]", "[BiasAdd, Elu]"}},
		{"bias of another dtype", "_FusedMatMul", A().Ss("fused_ops", "BiasAdd").I("num_args", 1), []ir.TensorType{f32(4, 6), f32(6, 3), tt(ir.F16, 3)},
			[]string{"float16[3]", "[BiasAdd]"}},
		{"inner dimensions", "_FusedMatMul", A().Ss("fused_ops", "BiasAdd", "Tanh").I("num_args", 1), []ir.TensorType{f32(4, 6), f32(5, 3), f32(3)},
			[]string{"float32[4,6]", "float32[5,3]", "[BiasAdd, Tanh]"}},
		{"missing bias", "_FusedMatMul", A().Ss("fused_ops", "BiasAdd").I("num_args", 1), []ir.TensorType{f32(4, 6), f32(6, 3)},
			[]string{"[BiasAdd]", "float32[4,6]"}},
	} {
		_, err := build(t, c.op, c.a.Attrs, c.in, nil)
		if err == nil {
			t.Errorf("%s %s: no error", c.op, c.name)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, c.op+": ") {
			t.Errorf("%s %s: error %q does not start with the op", c.op, c.name, msg)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s %s: error %q does not mention %q", c.op, c.name, msg, w)
			}
		}
		// The frontend classifies an unclassified lowering error as the
		// caller's: it must not be marked internal.
		if got := status.CodeOf(status.Or(err, status.InvalidArgument)); got != status.InvalidArgument {
			t.Errorf("%s %s: code %v, want InvalidArgument (%v)", c.op, c.name, got, err)
		}
	}
}

func TestFusedKernelsRegisterTheUnfusedDTypes(t *testing.T) {
	dtypes := func(op string) []ir.DType {
		k, ok := Lookup(op)
		if !ok || len(k.Constraints) != 1 || k.Constraints[0].Attr != "T" {
			t.Fatalf("%s: %+v", op, k)
		}
		return k.Constraints[0].DTypes
	}
	if got, want := dtypes("_FusedMatMul"), dtypes("MatMul"); !slices.Equal(got, want) {
		t.Errorf("_FusedMatMul registers %v, MatMul %v", got, want)
	}
	// TensorFlow's op definition of _FusedConv2D has no bfloat16.
	want := slices.DeleteFunc(slices.Clone(dtypes("Conv2D")), func(d ir.DType) bool { return d == ir.BF16 })
	if got := dtypes("_FusedConv2D"); !slices.Equal(got, want) {
		t.Errorf("_FusedConv2D registers %v, want %v", got, want)
	}
}

package eval

import (
	"slices"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

func f32(dims ...int) ir.TensorType { return ir.TensorType{DType: ir.F32, Shape: ir.Shape(dims)} }

// Fixtures with literal answers, worked by hand.
func TestFixtures(t *testing.T) {
	cases := []struct {
		name  string
		build func(b *ir.Builder, x, y ir.Value) ir.Value
		x, y  Tensor
		want  []float64
	}{
		{"dot", func(b *ir.Builder, x, y ir.Value) ir.Value {
			return b.DotGeneral(x, y, ir.DotDims{LhsContract: []int{1}, RhsContract: []int{0}})
		}, FromFloats(f32(2, 3), 1, 2, 3, 4, 5, 6), FromFloats(f32(3, 1), 1, 0, -1), []float64{-2, -2}},
		{"reduce max over rows", func(b *ir.Builder, x, y ir.Value) ir.Value {
			sum := b.BroadcastInDim(b.Reduce(y, ir.ReduceSum, []int{0, 1}), ir.Shape{2}, []int{})
			return b.Binary(ir.OpAdd, b.Reduce(x, ir.ReduceMax, []int{1}), sum)
		}, FromFloats(f32(2, 3), 1, 7, 3, -4, -5, -6), FromFloats(f32(3, 1), 1, 0, -1), []float64{7, -4}},
		{"transpose then slice", func(b *ir.Builder, x, _ ir.Value) ir.Value {
			return b.Slice(b.Transpose(x, []int{1, 0}), []int{1, 0}, []int{3, 2}, []int{1, 1})
		}, FromFloats(f32(2, 3), 1, 2, 3, 4, 5, 6), FromFloats(f32(3, 1), 0, 0, 0), []float64{2, 5, 3, 6}},
		{"rounding to float16 after each op", func(b *ir.Builder, x, _ ir.Value) ir.Value {
			h := b.Convert(x, ir.F16)
			return b.Convert(b.Binary(ir.OpAdd, h, h), ir.F32)
		}, FromFloats(f32(2), 1.0001, 2049), FromFloats(f32(3, 1), 0, 0, 0), []float64{2, 4096}},
	}
	for _, c := range cases {
		b := ir.NewBuilder()
		x, y := b.Parameter(c.x.Type), b.Parameter(c.y.Type)
		p, err := b.Build(c.build(b, x, y))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := Run(p, []Tensor{c.x, c.y})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(got[0].Floats(), c.want) {
			t.Errorf("%s = %v, want %v", c.name, got[0].Floats(), c.want)
		}
	}
}

func TestRunChecksArguments(t *testing.T) {
	b := ir.NewBuilder()
	p, _ := b.Build(b.Unary(ir.OpExp, b.Parameter(f32(2))))
	if _, err := Run(p, nil); err == nil {
		t.Error("a program ran without its argument")
	}
	if _, err := Run(p, []Tensor{New(f32(3))}); err == nil {
		t.Error("a program ran on an argument of the wrong shape")
	}
}

// TestControlFlow: a while that doubles a vector n times, a case on the
// branch index (out of range picks the last), and a call.
func TestControlFlow(t *testing.T) {
	i32 := ir.TensorType{DType: ir.I32}
	c := ir.NewBuilder()
	n := c.Parameter(i32)
	c.Parameter(f32(2))
	cond, _ := c.Build(c.Compare(ir.CmpGT, n, c.Scalar(ir.I32, 0)))
	bb := ir.NewBuilder()
	n, acc := bb.Parameter(i32), bb.Parameter(f32(2))
	body, _ := bb.Build(bb.Binary(ir.OpSub, n, bb.Scalar(ir.I32, 1)), bb.Binary(ir.OpAdd, acc, acc))
	neg := ir.NewBuilder()
	neg.Parameter(i32)
	negp, _ := neg.Build(neg.Unary(ir.OpNeg, neg.Parameter(f32(2))))
	id := ir.NewBuilder()
	id.Parameter(i32)
	idp, _ := id.Build(id.Parameter(f32(2)))

	b := ir.NewBuilder()
	times, x, which := b.Parameter(i32), b.Parameter(f32(2)), b.Parameter(i32)
	doubled := b.Results(b.While(cond, body, times, x))[1]
	picked := b.GetResult(b.Case(which, []*ir.Program{idp, negp}, times, doubled), 0)
	called := b.GetResult(b.Call(negp, times, picked), 0)
	p, err := b.Build(doubled, called)
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(p); err != nil {
		t.Fatal(err)
	}
	scalarI := func(v int64) Tensor { s := New(i32); s.I[0] = v; return s }
	for _, c := range []struct {
		which      int64
		wantCalled []float64
	}{
		{0, []float64{-24, 40}}, // as it is, then negated
		{1, []float64{24, -40}}, // negated, then negated back
		{7, []float64{24, -40}}, // out of range: the last branch
	} {
		got, err := Run(p, []Tensor{scalarI(3), FromFloats(f32(2), 3, -5), scalarI(c.which)})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got[0].Floats(), []float64{24, -40}) {
			t.Errorf("while: %v, want [24 -40]", got[0].Floats())
		}
		if !slices.Equal(got[1].Floats(), c.wantCalled) {
			t.Errorf("case %d then call: %v, want %v", c.which, got[1].Floats(), c.wantCalled)
		}
	}
	// Branch 0 is the loop body: its results are (n-1, 2x) and the case
	// takes result 0, an int32, which is not the float32 the call needs.
	bad := ir.NewBuilder()
	bt, bx, bw := bad.Parameter(i32), bad.Parameter(f32(2)), bad.Parameter(i32)
	bad.Case(bw, []*ir.Program{body, negp}, bt, bx)
	if bad.Err() == nil {
		t.Error("a case whose branches return different types was built")
	}
}

// TestBitsOps: xor, the shifts (amounts past the width included) and
// bitcasts, on hand-computed values.
func TestBitsOps(t *testing.T) {
	u32 := func(xs ...float64) Tensor {
		return FromFloats(ir.TensorType{DType: ir.U32, Shape: ir.Shape{len(xs)}}, xs...)
	}
	i8 := func(xs ...float64) Tensor {
		return FromFloats(ir.TensorType{DType: ir.I8, Shape: ir.Shape{len(xs)}}, xs...)
	}
	bin := func(op ir.Op, x, y Tensor) []int64 {
		b := ir.NewBuilder()
		p, err := b.Build(b.Binary(op, b.Parameter(x.Type), b.Parameter(y.Type)))
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(p, []Tensor{x, y})
		if err != nil {
			t.Fatal(err)
		}
		return r[0].I
	}
	for _, c := range []struct {
		op   ir.Op
		x, y Tensor
		want []int64
	}{
		{ir.OpXor, u32(0xffffffff, 5), u32(0x0f0f0f0f, 3), []int64{0xf0f0f0f0, 6}},
		{ir.OpShiftLeft, u32(1, 3, 1), u32(31, 30, 32), []int64{0x80000000, 0xc0000000, 0}},
		{ir.OpShiftRightLogical, u32(0x80000000, 7), u32(31, 40), []int64{1, 0}},
		{ir.OpShiftRightArithmetic, i8(-128, -3, 64), i8(7, 100, -1), []int64{-1, -1, 0}}, // -1 is 255 as an amount: past the width
		{ir.OpShiftRightLogical, i8(-128, -1), i8(7, 4), []int64{1, 15}},
	} {
		if got := bin(c.op, c.x, c.y); !slices.Equal(got, c.want) {
			t.Errorf("%v %v %v = %v, want %v", c.op, c.x.I, c.y.I, got, c.want)
		}
	}
	b := ir.NewBuilder()
	x := b.Parameter(ir.TensorType{DType: ir.U32, Shape: ir.Shape{2}})
	p, err := b.Build(b.BitcastConvert(x, ir.F32))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(p, []Tensor{u32(0x3f800000, 0xc0000000)})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r[0].F, []float64{1, -2}) {
		t.Errorf("bitcast of 0x3f800000, 0xc0000000 to float32: %v", r[0].F)
	}
}

// TestEveryOpHasSemantics: each IR op is a registered kernel, or one of
// what Run itself handles (parameters, a tuple's result, the ops that
// yield tuples or run regions, the decompositions); no op falls through.
func TestEveryOpHasSemantics(t *testing.T) {
	for _, op := range ir.Ops() {
		structural := op == ir.OpParameter || op == ir.OpGetResult || op == ir.OpHostCall || isLinalg(op) || op.HasRegions() || op.YieldsTuple()
		if _, ok := kernels[op]; ok == structural {
			t.Errorf("%v: registered kernel %v, handled by Run %v: want exactly one", op, ok, structural)
		}
	}
}

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

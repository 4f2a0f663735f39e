package drivertest

import (
	"fmt"
	"math"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

func testDotGeneral(t *testing.T, h *harness) {
	cases := []struct {
		name string
		x, y []int
		dims ir.DotDims
	}{
		{"matmul", []int{3, 4}, []int{4, 5}, ir.DotDims{LhsContract: []int{1}, RhsContract: []int{0}}},
		{"matvec", []int{3, 4}, []int{4}, ir.DotDims{LhsContract: []int{1}, RhsContract: []int{0}}},
		{"inner", []int{6}, []int{6}, ir.DotDims{LhsContract: []int{0}, RhsContract: []int{0}}},
		{"outer", []int{3}, []int{2}, ir.DotDims{}},
		{"transposed contracting", []int{4, 3}, []int{5, 4}, ir.DotDims{LhsContract: []int{0}, RhsContract: []int{1}}},
		{"batch", []int{2, 3, 4}, []int{2, 4, 5}, ir.DotDims{LhsBatch: []int{0}, RhsBatch: []int{0}, LhsContract: []int{2}, RhsContract: []int{1}}},
		{"batch in the middle, two contracting", []int{3, 2, 4, 2}, []int{4, 2, 2, 5},
			ir.DotDims{LhsBatch: []int{1}, RhsBatch: []int{2}, LhsContract: []int{2, 3}, RhsContract: []int{0, 1}}},
		{"large", []int{33, 70}, []int{70, 40}, ir.DotDims{LhsContract: []int{1}, RhsContract: []int{0}}},
		{"empty contracting", []int{3, 0}, []int{0, 2}, ir.DotDims{LhsContract: []int{1}, RhsContract: []int{0}}},
		{"empty rows", []int{0, 4}, []int{4, 2}, ir.DotDims{LhsContract: []int{1}, RhsContract: []int{0}}},
	}
	for _, d := range h.keep([]ir.DType{ir.F32, ir.F64, ir.F16, ir.BF16, ir.I32, ir.I8, ir.I64, ir.U8}) {
		for _, c := range cases {
			if c.name == "large" && d != ir.F32 && d != ir.BF16 {
				continue
			}
			x, y := h.gen(d, small, c.x...), h.gen(d, small, c.y...)
			h.checkEval(t, fmt.Sprintf("%s %v x %v", c.name, x.T, y.T), []tensor{x, y}, one(func(b *ir.Builder, xs []ir.Value) ir.Value {
				return b.DotGeneral(xs[0], xs[1], c.dims)
			}))
		}
	}
}

func testConvolution(t *testing.T, h *harness) {
	cases := []struct {
		name   string
		x, k   []int
		a      ir.ConvAttrs
		result []int
	}{
		{"valid 2d", []int{1, 5, 5, 2}, []int{3, 3, 2, 3}, ir.ConvAttrs{}, []int{1, 3, 3, 3}},
		{"same 2d", []int{2, 5, 4, 3}, []int{3, 3, 3, 4}, ir.ConvAttrs{Padding: [][2]int{{1, 1}, {1, 1}}}, []int{2, 5, 4, 4}},
		{"strided same", []int{1, 7, 6, 2}, []int{3, 3, 2, 2}, ir.ConvAttrs{Strides: []int{2, 2}, Padding: [][2]int{{1, 1}, {0, 1}}}, []int{1, 4, 3, 2}},
		{"rhs dilation", []int{1, 7, 7, 2}, []int{3, 2, 2, 2}, ir.ConvAttrs{RhsDilation: []int{2, 3}}, []int{1, 3, 4, 2}},
		{"lhs dilation (transposed)", []int{1, 3, 4, 2}, []int{3, 3, 2, 2},
			ir.ConvAttrs{LhsDilation: []int{2, 2}, Padding: [][2]int{{2, 2}, {2, 1}}}, []int{1, 7, 8, 2}},
		{"depthwise", []int{2, 5, 5, 4}, []int{3, 3, 1, 4}, ir.ConvAttrs{FeatureGroups: 4, Padding: [][2]int{{1, 1}, {1, 1}}}, []int{2, 5, 5, 4}},
		{"depthwise multiplier 2", []int{1, 4, 4, 3}, []int{2, 2, 1, 6}, ir.ConvAttrs{FeatureGroups: 3}, []int{1, 3, 3, 6}},
		{"grouped", []int{1, 4, 4, 4}, []int{3, 3, 2, 6}, ir.ConvAttrs{FeatureGroups: 2, Padding: [][2]int{{1, 1}, {1, 1}}}, []int{1, 4, 4, 6}},
		{"negative padding", []int{1, 6, 6, 1}, []int{2, 2, 1, 1}, ir.ConvAttrs{Padding: [][2]int{{-1, 0}, {0, -2}}}, []int{1, 4, 3, 1}},
		{"1d", []int{2, 9, 3}, []int{4, 3, 2}, ir.ConvAttrs{Strides: []int{2}, Padding: [][2]int{{1, 2}}}, []int{2, 5, 2}},
		{"3d", []int{1, 4, 3, 4, 2}, []int{2, 2, 2, 2, 3}, ir.ConvAttrs{Padding: [][2]int{{0, 1}, {1, 0}, {0, 0}}}, []int{1, 4, 3, 3, 3}},
		{"3d strided and dilated, two groups", []int{2, 7, 5, 6, 4}, []int{2, 3, 2, 2, 4},
			ir.ConvAttrs{Strides: []int{2, 1, 2}, RhsDilation: []int{3, 1, 2}, Padding: [][2]int{{1, 1}, {1, 1}, {0, 1}}, FeatureGroups: 2}, []int{2, 3, 5, 3, 4}},
		{"3d transposed", []int{1, 3, 2, 2, 1}, []int{2, 2, 2, 1, 2},
			ir.ConvAttrs{LhsDilation: []int{2, 2, 1}, Padding: [][2]int{{1, 1}, {1, 1}, {0, 0}}}, []int{1, 6, 4, 1, 2}},
		{"kernel larger than padded input", []int{1, 2, 2, 1}, []int{3, 3, 1, 1}, ir.ConvAttrs{}, []int{1, 0, 0, 1}},
		{"empty batch", []int{0, 4, 4, 2}, []int{3, 3, 2, 2}, ir.ConvAttrs{}, []int{0, 2, 2, 2}},
		{"empty input channels", []int{1, 3, 3, 0}, []int{2, 2, 0, 2}, ir.ConvAttrs{}, []int{1, 2, 2, 2}},
		{"only padding", []int{1, 0, 3, 1}, []int{1, 1, 1, 2}, ir.ConvAttrs{Padding: [][2]int{{1, 1}, {0, 0}}}, []int{1, 2, 3, 2}},
	}
	for _, d := range h.keep(floatTypes) {
		for _, c := range cases {
			x, k := h.gen(d, small, c.x...), h.gen(d, small, c.k...)
			h.checkEval(t, fmt.Sprintf("%s %v * %v", c.name, x.T, k.T), []tensor{x, k}, one(func(b *ir.Builder, xs []ir.Value) ir.Value {
				return resultShaped(t, b, b.Convolution(xs[0], xs[1], c.a), c.result)
			}))
		}
	}
}

func testReduce(t *testing.T, h *harness) {
	cases := []struct {
		shape, axes []int
	}{
		{[]int{2, 3, 4}, []int{1}},
		{[]int{2, 3, 4}, []int{0, 2}},
		{[]int{2, 3, 4}, []int{2}},
		{[]int{2, 3, 4}, []int{0}},
		{[]int{2, 3, 4}, []int{0, 1, 2}},
		{[]int{3, 4}, []int{}},
		{[]int{5}, []int{0}},
		{[]int{300, 7}, []int{0}},
		{[]int{0, 3}, []int{0}},
		{[]int{3, 0}, []int{1}},
		{[]int{0, 3}, []int{1}},
	}
	for _, d := range h.keep(allTypes) {
		kinds := []ir.ReduceKind{ir.ReduceSum, ir.ReduceProd, ir.ReduceMax, ir.ReduceMin}
		if d == ir.Bool {
			kinds = []ir.ReduceKind{ir.ReduceAnd, ir.ReduceOr}
		}
		for _, kind := range kinds {
			for _, c := range cases {
				if c.shape[0] == 300 && kind == ir.ReduceProd {
					continue // the product of 300 values is not a number worth comparing
				}
				vk := anyValue
				if kind == ir.ReduceProd {
					vk = small
				}
				x := h.gen(d, vk, c.shape...)
				if kind == ir.ReduceProd && d.IsFloat() {
					// Keep products of up to 24 factors within half range.
					x.V = mapf(x.V, func(v float64) float64 { return math.Max(-1.5, math.Min(1.5, v)) })
				}
				if kind == ir.ReduceSum && (d == ir.F16 || d == ir.BF16) && c.shape[0] == 300 {
					x.V = mapf(x.V, func(v float64) float64 { return v / 8 })
				}
				h.checkEval(t, fmt.Sprintf("%s %v axes %v", kind, x.T, c.axes), []tensor{x}, one(func(b *ir.Builder, xs []ir.Value) ir.Value {
					return b.Reduce(xs[0], kind, c.axes)
				}))
			}
		}
	}
	nan := math.NaN()
	x := tensor{T: tt(ir.F32, 2, 3), V: []float64{1, nan, 3, 4, 5, 6}}
	for _, kind := range []ir.ReduceKind{ir.ReduceMax, ir.ReduceMin, ir.ReduceSum} {
		h.checkEval(t, fmt.Sprintf("%s with NaN", kind), []tensor{x}, one(func(b *ir.Builder, xs []ir.Value) ir.Value {
			return b.Reduce(xs[0], kind, []int{1})
		}))
	}
}

func testReduceWindow(t *testing.T, h *harness) {
	cases := []struct {
		name   string
		shape  []int
		w      ir.WindowAttrs
		result []int
	}{
		{"pool 2x2 stride 2", []int{1, 4, 6, 2}, ir.WindowAttrs{Dims: []int{1, 2, 2, 1}, Strides: []int{1, 2, 2, 1}}, []int{1, 2, 3, 2}},
		{"3x3 same", []int{2, 5, 5, 1}, ir.WindowAttrs{Dims: []int{1, 3, 3, 1}, Padding: [][2]int{{0, 0}, {1, 1}, {1, 1}, {0, 0}}}, []int{2, 5, 5, 1}},
		{"3x3 stride 2 padded", []int{1, 6, 5, 3}, ir.WindowAttrs{Dims: []int{1, 3, 3, 1}, Strides: []int{1, 2, 2, 1},
			Padding: [][2]int{{0, 0}, {1, 1}, {0, 1}, {0, 0}}}, []int{1, 3, 2, 3}},
		{"1d", []int{7}, ir.WindowAttrs{Dims: []int{3}, Strides: []int{2}, Padding: [][2]int{{2, 2}}}, []int{5}},
		{"window past the input", []int{2, 2}, ir.WindowAttrs{Dims: []int{3, 3}, Padding: [][2]int{{2, 2}, {2, 2}}}, []int{4, 4}},
		{"empty", []int{0, 4}, ir.WindowAttrs{Dims: []int{1, 2}}, []int{0, 3}},
		{"empty operand, padding only", []int{0, 2}, ir.WindowAttrs{Dims: []int{1, 1}, Padding: [][2]int{{1, 1}, {0, 0}}}, []int{2, 2}},
		{"scalar", []int{}, ir.WindowAttrs{Dims: []int{}}, []int{}},
	}
	for _, d := range h.keep([]ir.DType{ir.F32, ir.F64, ir.F16, ir.BF16, ir.I32, ir.I8, ir.U8}) {
		for _, kind := range []ir.ReduceKind{ir.ReduceSum, ir.ReduceMax, ir.ReduceMin} {
			for _, c := range cases {
				x := h.gen(d, anyValue, c.shape...)
				h.checkEval(t, fmt.Sprintf("%s %s %v", kind, c.name, x.T), []tensor{x}, one(func(b *ir.Builder, xs []ir.Value) ir.Value {
					return resultShaped(t, b, b.ReduceWindow(xs[0], kind, c.w), c.result)
				}))
			}
		}
	}
	// jax's cumsum, cummax and cummin: the window is the whole axis,
	// padded at one end, and the axis may be longer than any pooling
	// window. The data have NaNs, and -0 (which a sum from 0 makes +0).
	for _, d := range h.keep([]ir.DType{ir.F32, ir.F16, ir.I32, ir.I8, ir.U32, ir.I64}) {
		for _, kind := range []ir.ReduceKind{ir.ReduceSum, ir.ReduceMax, ir.ReduceMin} {
			for _, shape := range [][]int{{3, 6}, {1, 1100}} {
				x := h.gen(d, anyValue, shape...)
				if d.IsFloat() {
					x.V[1], x.V[4], x.V[9] = math.NaN(), math.Copysign(0, -1), math.NaN()
				}
				if shape[0] == 1 && !(d == ir.F32 && kind == ir.ReduceSum) && !(d == ir.I32 && kind == ir.ReduceMax) {
					continue // the interpreter takes its time over long windows: two cases
				}
				for axis := range 2 {
					for _, reverse := range []bool{false, true} {
						if shape[axis] == 1 || (shape[0] == 1 && reverse) {
							continue
						}
						w := cumulativeWindow(shape, axis, reverse)
						h.checkEval(t, fmt.Sprintf("cumulative %s of %v along %d, reverse %v", kind, x.T, axis, reverse), []tensor{x}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
							return []ir.Value{b.ReduceWindow(xs[0], kind, w)}
						})
					}
				}
			}
		}
	}
}

func testSelectAndScatter(t *testing.T, h *harness) {
	cases := []struct {
		name   string
		shape  []int
		w      ir.WindowAttrs
		source []int
	}{
		{"pool 2x2 stride 2", []int{1, 4, 6, 2}, ir.WindowAttrs{Dims: []int{1, 2, 2, 1}, Strides: []int{1, 2, 2, 1}}, []int{1, 2, 3, 2}},
		// SAME padding with stride 1: windows overlap, positions collect
		// several sources.
		{"3x3 same, overlapping", []int{2, 5, 5, 1}, ir.WindowAttrs{Dims: []int{1, 3, 3, 1}, Padding: [][2]int{{0, 0}, {1, 1}, {1, 1}, {0, 0}}}, []int{2, 5, 5, 1}},
		// TensorFlow's SAME for 3x3 stride 2 on 6x5: pad 0/1 and 1/1.
		{"3x3 stride 2 same", []int{1, 6, 5, 3}, ir.WindowAttrs{Dims: []int{1, 3, 3, 1}, Strides: []int{1, 2, 2, 1},
			Padding: [][2]int{{0, 0}, {0, 1}, {1, 1}, {0, 0}}}, []int{1, 3, 3, 3}},
		{"1d overlapping", []int{7}, ir.WindowAttrs{Dims: []int{3}, Strides: []int{2}, Padding: [][2]int{{1, 1}}}, []int{4}},
		{"window past the input", []int{2, 2}, ir.WindowAttrs{Dims: []int{3, 3}, Padding: [][2]int{{2, 2}, {2, 2}}}, []int{4, 4}},
		{"empty", []int{0, 4}, ir.WindowAttrs{Dims: []int{1, 2}}, []int{0, 3}},
	}
	for _, d := range h.keep([]ir.DType{ir.F32, ir.F64, ir.F16, ir.BF16, ir.I32, ir.I8}) {
		for _, dir := range []ir.CompareDir{ir.CmpGE, ir.CmpLE} {
			for _, c := range cases {
				x := h.gen(d, small, c.shape...) // few values: ties decide by position
				src := h.gen(d, anyValue, c.source...)
				h.checkEval(t, fmt.Sprintf("%s %s %v", dir, c.name, x.T), []tensor{x, src}, one(func(b *ir.Builder, xs []ir.Value) ir.Value {
					return b.SelectAndScatter(xs[0], xs[1], dir, c.w)
				}))
			}
		}
	}
}

// resultShaped is v, after checking that its shape, as the builder infers
// it, is the one the case expects.
func resultShaped(t *testing.T, b *ir.Builder, v ir.Value, want []int) ir.Value {
	t.Helper()
	if got := b.Type(v).Shape; b.Err() == nil && !got.Equal(want) {
		t.Errorf("result shape %v, want %v", got, want)
	}
	return v
}

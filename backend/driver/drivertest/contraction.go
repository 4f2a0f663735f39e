package drivertest

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

func freeDimsOf(rank int, batch, contract []int) []int {
	var f []int
	for i := range rank {
		if !slices.Contains(batch, i) && !slices.Contains(contract, i) {
			f = append(f, i)
		}
	}
	return f
}

// dotRef sums, for every result index, the products over all contracting
// indices, placing batch, lhs free and rhs free dims as DotDims documents.
func dotRef(x, y tensor, dims ir.DotDims) tensor {
	xs, ys := x.T.Shape, y.T.Shape
	lf, rf := freeDimsOf(len(xs), dims.LhsBatch, dims.LhsContract), freeDimsOf(len(ys), dims.RhsBatch, dims.RhsContract)
	var out, cshape []int
	for _, d := range dims.LhsBatch {
		out = append(out, xs[d])
	}
	for _, d := range lf {
		out = append(out, xs[d])
	}
	for _, d := range rf {
		out = append(out, ys[d])
	}
	for _, d := range dims.LhsContract {
		cshape = append(cshape, xs[d])
	}
	res := tensor{T: tt(x.T.DType, out...), V: make([]float64, ir.Shape(out).Size())}
	forEachIndex(out, func(o []int) {
		xi, yi := make([]int, len(xs)), make([]int, len(ys))
		nb := len(dims.LhsBatch)
		for i := range dims.LhsBatch {
			xi[dims.LhsBatch[i]], yi[dims.RhsBatch[i]] = o[i], o[i]
		}
		for i, d := range lf {
			xi[d] = o[nb+i]
		}
		for i, d := range rf {
			yi[d] = o[nb+len(lf)+i]
		}
		sum := 0.0
		forEachIndex(cshape, func(c []int) {
			for i := range c {
				xi[dims.LhsContract[i]], yi[dims.RhsContract[i]] = c[i], c[i]
			}
			sum += x.V[offset(xs, xi)] * y.V[offset(ys, yi)]
		})
		res.V[offset(out, o)] = sum
	})
	return res
}

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
			want := dotRef(x, y, c.dims)
			if !d.IsFloat() {
				want.V = quantize(d, want.V)
			}
			h.check(t, fmt.Sprintf("%s %v x %v", c.name, x.T, y.T), []tensor{x, y}, func(b *ir.Builder, xs []ir.Value) ir.Value {
				return b.DotGeneral(xs[0], xs[1], c.dims)
			}, want)
		}
	}
}

// convRef is the textbook definition: every output element sums input times
// kernel over kernel positions and the group's input channels, where the
// input position (in the lhs-dilated, padded frame) must land on a real
// element.
func convRef(x, k tensor, a ir.ConvAttrs, out []int) tensor {
	xs, ks := x.T.Shape, k.T.Shape
	ns := len(xs) - 2
	c, o := xs[ns+1], ks[ns+1]
	g := max(a.FeatureGroups, 1)
	cg, og := c/g, o/g
	one := func(s []int, i int) int {
		if s == nil {
			return 1
		}
		return s[i]
	}
	res := tensor{T: tt(x.T.DType, out...), V: make([]float64, ir.Shape(out).Size())}
	forEachIndex(out, func(oi []int) {
		n, oc := oi[0], oi[ns+1]
		grp := oc / og
		sum := 0.0
		forEachIndex(ks[:ns], func(ki []int) {
			xi := make([]int, ns+2)
			xi[0] = n
			for d := range ns {
				lo := 0
				if a.Padding != nil {
					lo = a.Padding[d][0]
				}
				p := oi[1+d]*one(a.Strides, d) + ki[d]*one(a.RhsDilation, d) - lo
				ld := one(a.LhsDilation, d)
				if p < 0 || p%ld != 0 || p/ld >= xs[1+d] {
					return
				}
				xi[1+d] = p / ld
			}
			for ci := range cg {
				xi[ns+1] = grp*cg + ci
				kidx := append(slices.Clone(ki), ci, oc)
				sum += x.V[offset(xs, xi)] * k.V[offset(ks, kidx)]
			}
		})
		res.V[offset(out, oi)] = sum
	})
	return res
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
			want := convRef(x, k, c.a, c.result)
			h.check(t, fmt.Sprintf("%s %v * %v", c.name, x.T, k.T), []tensor{x, k}, func(b *ir.Builder, xs []ir.Value) ir.Value {
				return b.Convolution(xs[0], xs[1], c.a)
			}, want)
		}
	}
}

// reduceIdentity is what reducing no elements gives.
func reduceIdentity(kind ir.ReduceKind, d ir.DType) float64 {
	lo, hi := d.Range()
	switch kind {
	case ir.ReduceProd, ir.ReduceAnd:
		return 1
	case ir.ReduceMax:
		return lo
	case ir.ReduceMin:
		return hi
	}
	return 0
}

func reduceStep(kind ir.ReduceKind, acc, v float64) float64 {
	switch kind {
	case ir.ReduceSum:
		return acc + v
	case ir.ReduceProd:
		return acc * v
	case ir.ReduceMax:
		if math.IsNaN(acc) || math.IsNaN(v) {
			return math.NaN()
		}
		return math.Max(acc, v)
	case ir.ReduceMin:
		if math.IsNaN(acc) || math.IsNaN(v) {
			return math.NaN()
		}
		return math.Min(acc, v)
	case ir.ReduceAnd:
		return b2f(acc != 0 && v != 0)
	case ir.ReduceOr:
		return b2f(acc != 0 || v != 0)
	}
	panic("drivertest: unknown reduction")
}

func reduceRef(x tensor, kind ir.ReduceKind, axes []int) tensor {
	var out []int
	for i, n := range x.T.Shape {
		if !slices.Contains(axes, i) {
			out = append(out, n)
		}
	}
	res := tensor{T: tt(x.T.DType, out...), V: make([]float64, ir.Shape(out).Size())}
	for i := range res.V {
		res.V[i] = reduceIdentity(kind, x.T.DType)
	}
	forEachIndex(x.T.Shape, func(idx []int) {
		var o []int
		for i, v := range idx {
			if !slices.Contains(axes, i) {
				o = append(o, v)
			}
		}
		j := offset(out, o)
		res.V[j] = reduceStep(kind, res.V[j], x.V[offset(x.T.Shape, idx)])
	})
	return res
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
				want := reduceRef(x, kind, c.axes)
				if !d.IsFloat() {
					want.V = quantize(d, want.V)
				}
				h.check(t, fmt.Sprintf("%s %v axes %v", kind, x.T, c.axes), []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
					return b.Reduce(xs[0], kind, c.axes)
				}, want)
			}
		}
	}
	nan := math.NaN()
	x := tensor{T: tt(ir.F32, 2, 3), V: []float64{1, nan, 3, 4, 5, 6}}
	for _, kind := range []ir.ReduceKind{ir.ReduceMax, ir.ReduceMin, ir.ReduceSum} {
		h.check(t, fmt.Sprintf("%s with NaN", kind), []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
			return b.Reduce(xs[0], kind, []int{1})
		}, reduceRef(x, kind, []int{1}))
	}
}

func reduceWindowRef(x tensor, kind ir.ReduceKind, w ir.WindowAttrs, out []int) tensor {
	res := tensor{T: tt(x.T.DType, out...), V: make([]float64, ir.Shape(out).Size())}
	forEachIndex(out, func(o []int) {
		acc := reduceIdentity(kind, x.T.DType)
		forEachIndex(w.Dims, func(k []int) {
			i := make([]int, len(k))
			for d := range k {
				stride, lo := 1, 0
				if w.Strides != nil {
					stride = w.Strides[d]
				}
				if w.Padding != nil {
					lo = w.Padding[d][0]
				}
				i[d] = o[d]*stride + k[d] - lo
				if i[d] < 0 || i[d] >= x.T.Shape[d] {
					return // padding holds the identity
				}
			}
			acc = reduceStep(kind, acc, x.V[offset(x.T.Shape, i)])
		})
		res.V[offset(out, o)] = acc
	})
	return res
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
				want := reduceWindowRef(x, kind, c.w, c.result)
				if !d.IsFloat() {
					want.V = quantize(d, want.V)
				}
				h.check(t, fmt.Sprintf("%s %s %v", kind, c.name, x.T), []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
					return b.ReduceWindow(xs[0], kind, c.w)
				}, want)
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

// selectAndScatterRef walks each window of x in row-major order over its
// real (unpadded) positions, keeps the first as the choice and replaces it
// with a later element e unless select(choice, e) holds (GE: choice >= e),
// and adds the window's source element at the choice.
func selectAndScatterRef(x, src tensor, dir ir.CompareDir, w ir.WindowAttrs) tensor {
	res := tensor{T: x.T, V: make([]float64, len(x.V))}
	forEachIndex(src.T.Shape, func(o []int) {
		sel, sv := -1, 0.0
		forEachIndex(w.Dims, func(k []int) {
			i := make([]int, len(k))
			for d := range k {
				stride, lo := 1, 0
				if w.Strides != nil {
					stride = w.Strides[d]
				}
				if w.Padding != nil {
					lo = w.Padding[d][0]
				}
				i[d] = o[d]*stride + k[d] - lo
				if i[d] < 0 || i[d] >= x.T.Shape[d] {
					return // padding never wins
				}
			}
			off := offset(x.T.Shape, i)
			v := x.V[off]
			keep := sv >= v
			if dir == ir.CmpLE {
				keep = sv <= v
			}
			if sel < 0 || !keep {
				sel, sv = off, v
			}
		})
		if sel >= 0 {
			res.V[sel] += src.V[offset(src.T.Shape, o)]
		}
	})
	return res
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
				want := selectAndScatterRef(x, src, dir, c.w)
				if !d.IsFloat() {
					want.V = quantize(d, want.V)
				}
				h.check(t, fmt.Sprintf("%s %s %v", dir, c.name, x.T), []tensor{x, src}, func(b *ir.Builder, xs []ir.Value) ir.Value {
					return b.SelectAndScatter(xs[0], xs[1], dir, c.w)
				}, want)
			}
		}
	}
}

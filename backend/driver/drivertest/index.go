package drivertest

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

type gatherCase struct {
	name    string
	operand []int
	indices []int
	values  []float64 // the start indices, row-major
	g       ir.GatherDims
	out     []int
}

var gatherCases = []gatherCase{
	// TensorFlow's GatherV2(params [3,5,2], indices [2,2], axis=1).
	{"GatherV2 axis 1", []int{3, 5, 2}, []int{2, 2}, []float64{4, 0, 2, 2},
		ir.GatherDims{OffsetDims: []int{0, 3}, CollapsedSliceDims: []int{1}, StartIndexMap: []int{1}, IndexVectorDim: 2, SliceSizes: []int{3, 1, 2}},
		[]int{3, 2, 2, 2}},
	// TensorFlow's GatherNd(params [4,3,2], indices [5,2]): rows of params.
	{"GatherNd pairs", []int{4, 3, 2}, []int{5, 2}, []float64{0, 0, 3, 2, 1, 1, 3, 2, 2, 0},
		ir.GatherDims{OffsetDims: []int{1}, CollapsedSliceDims: []int{0, 1}, StartIndexMap: []int{0, 1}, IndexVectorDim: 1, SliceSizes: []int{1, 1, 2}},
		[]int{5, 2}},
	// Starts outside [0, size-slice] clamp, as in XLA.
	{"clamped windows", []int{6, 4}, []int{4, 1}, []float64{-2, 3, 10, 1},
		ir.GatherDims{OffsetDims: []int{1, 2}, StartIndexMap: []int{0}, IndexVectorDim: 1, SliceSizes: []int{3, 4}},
		[]int{4, 3, 4}},
	// The index vector in the middle of the indices, mapped to dims in reverse.
	{"index vector dim in the middle", []int{4, 5}, []int{2, 2, 3}, []float64{0, 1, 2, 4, 3, 0, 3, 2, 1, 0, 0, 4},
		ir.GatherDims{CollapsedSliceDims: []int{0, 1}, StartIndexMap: []int{1, 0}, IndexVectorDim: 1, SliceSizes: []int{1, 1}},
		[]int{2, 3}},
	// Index vectors of no components (indices [2, 0]): every start is the
	// origin, so each batch element is the slice there (jax's x[()] and
	// static indexing under grad).
	{"index vectors of no components", []int{4, 3}, []int{2, 0}, nil,
		ir.GatherDims{OffsetDims: []int{1}, CollapsedSliceDims: []int{0}, StartIndexMap: []int{}, IndexVectorDim: 1, SliceSizes: []int{1, 3}},
		[]int{2, 3}},
	{"no indices", []int{4, 3}, []int{0}, nil,
		ir.GatherDims{OffsetDims: []int{1}, CollapsedSliceDims: []int{0}, StartIndexMap: []int{0}, IndexVectorDim: 1, SliceSizes: []int{1, 3}},
		[]int{0, 3}},
}

func testGather(t *testing.T, h *harness) {
	for _, c := range gatherCases {
		for _, d := range h.keep(movementTypes) {
			for _, id := range []ir.DType{ir.I32, ir.I64} {
				if id == ir.I64 && d != ir.F32 {
					continue // index width is independent of the operand's
				}
				x := h.gen(d, anyValue, c.operand...)
				idx := tensor{T: tt(id, c.indices...), V: c.values}
				h.checkEval(t, fmt.Sprintf("%s %v[%v]", c.name, x.T, idx.T), []tensor{x, idx}, one(func(b *ir.Builder, xs []ir.Value) ir.Value {
					return resultShaped(t, b, b.Gather(xs[0], xs[1], c.g), c.out)
				}))
			}
		}
	}
}

type scatterCase struct {
	name             string
	operand, indices []int
	values           []float64
	updates          []int
	s                ir.ScatterDims
}

var scatterCases = []scatterCase{
	// TensorFlow's TensorScatterAdd on rows: index 1 repeats, 7 and -1 are
	// out of bounds and skipped.
	{"rows, repeated and out of bounds", []int{5, 3}, []int{5, 1}, []float64{1, 3, 1, 7, -1}, []int{5, 3},
		ir.ScatterDims{UpdateWindowDims: []int{1}, InsertedWindowDims: []int{0}, ScatterDimsToOperandDims: []int{0}, IndexVectorDim: 1}},
	// ScatterNd of single elements; (2,1) repeats, so the later update wins
	// for replace.
	{"elements", []int{4, 4}, []int{4, 2}, []float64{2, 1, 0, 3, 2, 1, 3, 3}, []int{4},
		ir.ScatterDims{InsertedWindowDims: []int{0, 1}, ScatterDimsToOperandDims: []int{0, 1}, IndexVectorDim: 1}},
	// 2x2 windows: the one at (3,0) would leave the operand and is skipped
	// whole, not clipped; the one at (2,2) fits exactly.
	{"windows partly outside", []int{4, 4}, []int{3, 2}, []float64{3, 0, 2, 2, 0, 1}, []int{3, 2, 2},
		ir.ScatterDims{UpdateWindowDims: []int{1, 2}, ScatterDimsToOperandDims: []int{0, 1}, IndexVectorDim: 1}},
	// Scalar indices (index_vector_dim = rank) into the second dim.
	{"scalar indices, second dim", []int{3, 5}, []int{2, 2}, []float64{4, 0, 4, 2}, []int{3, 2, 2},
		ir.ScatterDims{UpdateWindowDims: []int{0}, InsertedWindowDims: []int{1}, ScatterDimsToOperandDims: []int{1}, IndexVectorDim: 2}},
}

func testScatter(t *testing.T, h *harness) {
	kinds := []ir.ScatterKind{ir.ScatterReplace, ir.ScatterAdd, ir.ScatterMul, ir.ScatterMax, ir.ScatterMin}
	for _, c := range scatterCases {
		for _, kind := range kinds {
			types := append(slices.Clone(floatTypes), ir.I32, ir.I8, ir.U8, ir.Bool)
			if kind == ir.ScatterReplace {
				types = movementTypes
			}
			for _, d := range h.keep(types) {
				vk := anyValue
				if kind == ir.ScatterMul {
					vk = small
				}
				x, upd := h.gen(d, vk, c.operand...), h.gen(d, vk, c.updates...)
				for _, id := range []ir.DType{ir.I32, ir.I64} {
					if id == ir.I64 && d != ir.F32 {
						continue
					}
					s := c.s
					s.Kind = kind
					idx := tensor{T: tt(id, c.indices...), V: c.values}
					h.checkEval(t, fmt.Sprintf("%s %s %v", c.name, kind, x.T), []tensor{x, idx, upd}, one(func(b *ir.Builder, xs []ir.Value) ir.Value {
						return b.Scatter(xs[0], xs[1], xs[2], s)
					}))
				}
			}
		}
	}
	testScatterBits(t, h)
}

// rawInts is vals as the little-endian bytes of integer dtype d (wrapped to
// its width), for values float64 cannot hold.
func rawInts(d ir.DType, vals ...int64) []byte {
	var b []byte
	for _, v := range vals {
		for k := range d.Size() {
			b = append(b, byte(v>>(8*k)))
		}
	}
	return b
}

// testScatterBits: replacing wide integers whose values float32 cannot
// hold (a GPU's scatter may carry data as float32), and float max and min
// over NaNs and signed zeros (NaN wins, +0 is above -0), bit for bit
// against the reference interpreter.
func testScatterBits(t *testing.T, h *harness) {
	big := []int64{math.MaxInt32, math.MinInt32, 1<<24 + 1, -(1<<24 + 1), 123456789, -987654321, 0x7fffffff_ffffffff, -0x12345678_9abcdef1}
	for _, c := range scatterCases {
		for _, d := range h.keep([]ir.DType{ir.I32, ir.U32, ir.I64}) {
			xs, us := make([]int64, ir.Shape(c.operand).Size()), make([]int64, ir.Shape(c.updates).Size())
			for i := range xs {
				xs[i] = big[i%len(big)] ^ int64(i)
			}
			for i := range us {
				us[i] = big[(i+3)%len(big)] + int64(i)
			}
			x, upd := tensor{T: tt(d, c.operand...), Raw: rawInts(d, xs...)}, tensor{T: tt(d, c.updates...), Raw: rawInts(d, us...)}
			idx := tensor{T: tt(ir.I32, c.indices...), V: c.values}
			s := c.s
			s.Kind = ir.ScatterReplace
			h.checkEvalBits(t, fmt.Sprintf("%s replace %v", c.name, x.T), []tensor{x, idx, upd}, func(b *ir.Builder, vs []ir.Value) []ir.Value {
				return []ir.Value{b.Scatter(vs[0], vs[1], vs[2], s)}
			})
		}
	}
	nan, negz := math.NaN(), math.Copysign(0, -1)
	c := scatterCases[1] // single elements of a 4x4 operand; (2,1) twice
	for _, d := range h.keep([]ir.DType{ir.F32, ir.F16, ir.BF16}) {
		x := tensor{T: tt(d, 4, 4), V: []float64{nan, 0, negz, 1, negz, 2, 0, nan, negz, negz, 0, 3, 0, -1, negz, nan}}
		idx := tensor{T: tt(ir.I32, c.indices...), V: c.values}
		for _, u := range [][]float64{{0, negz, nan, 0}, {negz, 0, 1, negz}, {negz, negz, negz, nan}} {
			upd := tensor{T: tt(d, 4), V: u}
			for _, kind := range []ir.ScatterKind{ir.ScatterMax, ir.ScatterMin} {
				s := c.s
				s.Kind = kind
				h.checkEvalBits(t, fmt.Sprintf("%s %v of %v, NaNs and signed zeros", kind, u, x.T), []tensor{x, idx, upd}, func(b *ir.Builder, vs []ir.Value) []ir.Value {
					return []ir.Value{b.Scatter(vs[0], vs[1], vs[2], s)}
				})
			}
		}
	}
}

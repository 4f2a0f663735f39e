package drivertest

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

type sortCase struct {
	shape []int
	a     ir.SortAttrs
}

var sortCases = []sortCase{
	{[]int{3, 7}, ir.SortAttrs{Dim: 1}},
	{[]int{3, 7}, ir.SortAttrs{Dim: 1, Descending: true}},
	{[]int{6, 2}, ir.SortAttrs{Dim: 0}},
	{[]int{2, 5, 3}, ir.SortAttrs{Dim: 1, Descending: true}},
	{[]int{9}, ir.SortAttrs{Dim: 0}},
	{[]int{0, 4}, ir.SortAttrs{Dim: 1}},
	{[]int{3, 1}, ir.SortAttrs{Dim: 1}},
	// Rows long enough that a sort which is stable only for short runs
	// (insertion sort below a dozen elements) shows.
	{[]int{2, 50}, ir.SortAttrs{Dim: 1}},
	{[]int{50, 2}, ir.SortAttrs{Dim: 0, Descending: true}},
}

// sortInput draws values with many ties and, for floats, NaN and infinities.
func sortInput(h *harness, d ir.DType, shape []int) tensor {
	x := h.gen(d, small, shape...)
	if d.IsFloat() {
		special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.NaN()}
		for i := range x.V {
			if i%5 == 2 {
				x.V[i] = special[i/5%len(special)]
			}
		}
	}
	return x
}

func testSort(t *testing.T, h *harness) {
	for _, d := range h.keep(allTypes) {
		for _, c := range sortCases {
			x := sortInput(h, d, c.shape)
			h.checkEvalBits(t, fmt.Sprintf("%v %+v", x.T, c.a), []tensor{x}, one(func(b *ir.Builder, xs []ir.Value) ir.Value {
				return b.Sort(xs[0], c.a)
			}))
		}
	}
	testSortWide(t, h)
}

// wideInts are integers a sort must order exactly: the extremes, and
// neighbours above 2^24 (2^53 for int64), which float32 (float64) cannot
// tell apart, some repeated.
func wideInts(h *harness, d ir.DType) tensor {
	var vs []int64
	switch d {
	case ir.I32:
		vs = []int64{math.MaxInt32, math.MinInt32, 1 << 24, 1<<24 + 1, -(1 << 24) - 1, 1<<30 + 3, 1<<30 + 2, math.MaxInt32 - 1, 0, -1, math.MinInt32 + 1, 1<<24 + 1}
	case ir.U32:
		vs = []int64{math.MaxUint32, 1 << 31, 1<<31 - 1, 1<<31 + 1, 0, 1<<24 + 1, 1 << 24, math.MaxUint32 - 1, 5, 1 << 31, 3000000000, 1}
	case ir.I64:
		vs = []int64{math.MaxInt64, math.MinInt64, 1<<53 + 1, 1 << 53, -(1 << 53) - 1, 1<<62 + 7, 1 << 32, 1<<32 + 1, -1, 0, math.MinInt64 + 1, 1<<53 + 1}
	}
	x := tensor{T: tt(d, 2, len(vs))}
	for row := range 2 {
		for k := range vs {
			v := vs[(k+5*row)%len(vs)]
			if d == ir.I64 {
				x.Raw = binary.LittleEndian.AppendUint64(x.Raw, uint64(v))
			} else {
				x.Raw = binary.LittleEndian.AppendUint32(x.Raw, uint32(v))
			}
		}
	}
	x.V = decode(d, x.Raw)
	return x
}

// testSortWide sorts and argsorts wideInts, both ways, byte for byte: a
// sort whose keys or values pass through float32 (as MPSGraph's gathers
// move integers) fails it.
func testSortWide(t *testing.T, h *harness) {
	for _, d := range []ir.DType{ir.I32, ir.U32, ir.I64} {
		x := wideInts(h, d)
		val := func(k int) int64 {
			if d == ir.I64 {
				return int64Bits(x.Raw, k)
			}
			return int64(x.V[k])
		}
		for _, desc := range []bool{false, true} {
			perm := stablePerm(x.T.Shape, 1, func(a, b int) bool {
				if desc {
					return val(a) > val(b)
				}
				return val(a) < val(b)
			})
			attrs := ir.SortAttrs{Dim: 1, Descending: desc}
			h.checkExact(t, fmt.Sprintf("%v wide, descending %v", d, desc), []tensor{x}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
				return []ir.Value{b.Sort(xs[0], attrs), b.ArgSort(xs[0], attrs, ir.I32)}
			}, [][]byte{permuteLines(x.T, x.Raw, 1, perm), int32s(perm)})
		}
	}
}

func testArgSort(t *testing.T, h *harness) {
	for _, d := range h.keep(allTypes) {
		for _, id := range []ir.DType{ir.I32, ir.I64} {
			for _, c := range sortCases {
				x := sortInput(h, d, c.shape)
				h.checkEvalBits(t, fmt.Sprintf("%v %+v into %v", x.T, c.a, id), []tensor{x}, one(func(b *ir.Builder, xs []ir.Value) ir.Value {
					return b.ArgSort(xs[0], c.a, id)
				}))
			}
		}
	}
}

func testArgReduce(t *testing.T, h *harness) {
	cases := []struct {
		shape []int
		axis  int
	}{{[]int{3, 5}, 1}, {[]int{4, 3, 2}, 1}, {[]int{6}, 0}, {[]int{5, 4}, 0}, {[]int{0, 3}, 1}}
	for _, d := range h.keep(append(slices.Clone(floatTypes), intTypes...)) {
		for _, kind := range []ir.ReduceKind{ir.ReduceMax, ir.ReduceMin} {
			for _, id := range []ir.DType{ir.I32, ir.I64} {
				for _, c := range cases {
					x := h.gen(d, small, c.shape...) // few values: many ties
					h.checkEvalBits(t, fmt.Sprintf("%s %v axis %d into %v", kind, x.T, c.axis, id), []tensor{x}, one(func(b *ir.Builder, xs []ir.Value) ir.Value {
						return b.ArgReduce(xs[0], kind, c.axis, id)
					}))
				}
			}
		}
	}
	// NaN: the first NaN wins for max and min alike, ahead of infinities.
	nan, inf := math.NaN(), math.Inf(1)
	x := tensor{T: tt(ir.F32, 4, 4), V: []float64{
		1, nan, 3, nan,
		-inf, 2, 2, inf,
		5, 5, 1, 1,
		inf, -inf, nan, 0,
	}}
	for _, kind := range []ir.ReduceKind{ir.ReduceMax, ir.ReduceMin} {
		h.checkEvalBits(t, fmt.Sprintf("%s with NaN", kind), []tensor{x}, one(func(b *ir.Builder, xs []ir.Value) ir.Value {
			return b.ArgReduce(xs[0], kind, 1, ir.I32)
		}))
	}
}

package drivertest

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

// lessTotal is the IR's sort order: NaN after every number; -0 and +0 tie.
func lessTotal(a, b float64) bool {
	return a < b || (!math.IsNaN(a) && math.IsNaN(b))
}

// argSortRef is the stable permutation sorting each row along dim, by
// insertion sort, which is stable by construction. Descending is the
// reverse order with ties kept in their original order.
func argSortRef(x tensor, a ir.SortAttrs) []int {
	shape := x.T.Shape
	perm := make([]int, len(x.V))
	forEachIndex(shape, func(idx []int) {
		if idx[a.Dim] != 0 {
			return
		}
		n := shape[a.Dim]
		row := make([]int, 0, n)
		at := func(k int) float64 {
			i := slices.Clone(idx)
			i[a.Dim] = k
			return x.V[offset(shape, i)]
		}
		for k := range n {
			j := len(row)
			for j > 0 {
				p, q := at(row[j-1]), at(k)
				if a.Descending {
					p, q = q, p
				}
				if !lessTotal(q, p) {
					break
				}
				j--
			}
			row = slices.Insert(row, j, k)
		}
		for k, r := range row {
			i := slices.Clone(idx)
			i[a.Dim] = k
			perm[offset(shape, i)] = r
		}
	})
	return perm
}

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
			perm := argSortRef(x, c.a)
			want := tensor{T: x.T, V: make([]float64, len(x.V))}
			forEachIndex(c.shape, func(idx []int) {
				i := slices.Clone(idx)
				i[c.a.Dim] = perm[offset(c.shape, idx)]
				want.V[offset(c.shape, idx)] = x.V[offset(c.shape, i)]
			})
			h.check(t, fmt.Sprintf("%v %+v", x.T, c.a), []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
				return b.Sort(xs[0], c.a)
			}, want)
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
				perm := argSortRef(x, c.a)
				want := tensor{T: tt(id, c.shape...), V: make([]float64, len(perm))}
				for i, p := range perm {
					want.V[i] = float64(p)
				}
				h.check(t, fmt.Sprintf("%v %+v into %v", x.T, c.a, id), []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
					return b.ArgSort(xs[0], c.a, id)
				}, want)
			}
		}
	}
}

// argReduceRef scans each row for the first max (or min); a NaN beats any
// number and the first NaN stays.
func argReduceRef(x tensor, kind ir.ReduceKind, axis int, id ir.DType) tensor {
	shape := x.T.Shape
	var out []int
	for i, n := range shape {
		if i != axis {
			out = append(out, n)
		}
	}
	res := tensor{T: tt(id, out...), V: make([]float64, ir.Shape(out).Size())}
	forEachIndex(out, func(o []int) {
		idx := slices.Insert(slices.Clone(o), axis, 0)
		best, bv := 0, x.V[offset(shape, idx)]
		for k := 1; k < shape[axis]; k++ {
			idx[axis] = k
			v := x.V[offset(shape, idx)]
			if math.IsNaN(bv) {
				break
			}
			if math.IsNaN(v) || (kind == ir.ReduceMax && v > bv) || (kind == ir.ReduceMin && v < bv) {
				best, bv = k, v
			}
		}
		res.V[offset(out, o)] = float64(best)
	})
	return res
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
					want := argReduceRef(x, kind, c.axis, id)
					h.check(t, fmt.Sprintf("%s %v axis %d into %v", kind, x.T, c.axis, id), []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
						return b.ArgReduce(xs[0], kind, c.axis, id)
					}, want)
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
		want := argReduceRef(x, kind, 1, ir.I32)
		h.check(t, fmt.Sprintf("%s with NaN", kind), []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
			return b.ArgReduce(xs[0], kind, 1, ir.I32)
		}, want)
	}
}

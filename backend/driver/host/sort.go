package host

import (
	"fmt"
	"slices"

	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	register(opKernel{make: sortKernel, work: heavyWork}, ir.OpSort, ir.OpArgSort)
	register(opKernel{make: argReduceKernel}, ir.OpArgReduce)
}

// Sort, arg_sort and arg_reduce see a tensor as [outer, n, inner] around
// their dim: a row is the n elements at one (outer, inner) position, inner
// apart in memory.

type rowLayout struct{ outer, n, inner int }

func newRowLayout(s ir.Shape, dim int) rowLayout {
	return rowLayout{ir.Shape(s[:dim]).Size(), s[dim], ir.Shape(s[dim+1:]).Size()}
}

// start is the offset of row r's first element.
func (l rowLayout) start(r int) int { return r/l.inner*l.n*l.inner + r%l.inner }

// sortKeys holds one dtype's elements as comparable keys: floats (half types
// widened exactly) as float64, integers and bools as int64, so that one sort
// serves every dtype.
type sortKeys struct {
	f []float64
	i []int64
}

func keysOf(d ir.DType, b []byte) (sortKeys, error) {
	var k sortKeys
	switch d {
	case ir.F32:
		k.f = widenTo[float32, float64](view[float32](b))
	case ir.F64:
		k.f = view[float64](b)
	case ir.F16, ir.BF16:
		k.f = widenTo[float32, float64](widen(d, b))
	case ir.I8:
		k.i = widenTo[int8, int64](view[int8](b))
	case ir.I16:
		k.i = widenTo[int16, int64](view[int16](b))
	case ir.I32:
		k.i = widenTo[int32, int64](view[int32](b))
	case ir.I64:
		k.i = view[int64](b)
	case ir.U8:
		k.i = widenTo[uint8, int64](b)
	case ir.U32:
		k.i = widenTo[uint32, int64](view[uint32](b))
	case ir.Bool: // any nonzero byte is true, so a stray 0xff sorts as 1
		k.i = make([]int64, len(b))
		for j, v := range b {
			k.i[j] = int64(b2u(v != 0))
		}
	default:
		return k, fmt.Errorf("cannot order %v", d)
	}
	return k, nil
}

func widenTo[S, D numT](s []S) []D {
	out := make([]D, len(s))
	for i, v := range s {
		out[i] = D(v)
	}
	return out
}

// cmpTotal orders floats totally with NaN above everything, so that NaN
// sorts last ascending instead of poisoning the comparison; -0 and +0 tie.
func cmpTotal(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case a == b:
		return 0
	case a != a && b != b:
		return 0
	case a != a:
		return 1
	}
	return -1
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sortKernel computes, per row, the stable permutation that sorts it, then
// either moves the elements by width (sort) or writes the permutation
// (arg_sort). Descending reverses the order but not the ties, which keep
// their original order (stable), so NaN comes first.
func sortKernel(in ir.Instr, at []ir.TensorType) (kernel, error) {
	d := at[0].DType
	if _, err := keysOf(d, nil); err != nil {
		return nil, fmt.Errorf("op %s: %w", in.Op, err)
	}
	l := newRowLayout(at[0].Shape, in.Sort.Dim)
	desc := in.Sort.Descending
	var write func(out, x []byte, perm []int, start, inner int)
	if in.Op == ir.OpArgSort {
		switch in.Type.DType {
		case ir.I32:
			write = func(out, _ []byte, perm []int, start, inner int) {
				z := view[int32](out)
				for k, p := range perm {
					z[start+k*inner] = int32(p)
				}
			}
		case ir.I64:
			write = func(out, _ []byte, perm []int, start, inner int) {
				z := view[int64](out)
				for k, p := range perm {
					z[start+k*inner] = int64(p)
				}
			}
		default:
			return nil, errUnsupported(in, at)
		}
	} else {
		switch d.Size() {
		case 1:
			write = permuteRow[uint8]
		case 2:
			write = permuteRow[uint16]
		case 4:
			write = permuteRow[uint32]
		case 8:
			write = permuteRow[uint64]
		default:
			return nil, errUnsupported(in, at)
		}
	}
	return func(out []byte, ins [][]byte) {
		keys, _ := keysOf(d, ins[0])
		rows := l.outer * l.inner
		parallelFor(rows, max(1, grainCheap/(8*max(l.n, 1))), func(lo, hi int) {
			perm := make([]int, l.n)
			for r := lo; r < hi; r++ {
				start := l.start(r)
				for k := range perm {
					perm[k] = k
				}
				// Ties break on position, which makes the unstable pdqsort
				// stable and O(n log n).
				if keys.f != nil {
					slices.SortFunc(perm, func(a, b int) int {
						c := cmpTotal(keys.f[start+a*l.inner], keys.f[start+b*l.inner])
						if desc {
							c = -c
						}
						if c == 0 {
							c = a - b
						}
						return c
					})
				} else {
					slices.SortFunc(perm, func(a, b int) int {
						c := cmpInt(keys.i[start+a*l.inner], keys.i[start+b*l.inner])
						if desc {
							c = -c
						}
						if c == 0 {
							c = a - b
						}
						return c
					})
				}
				write(out, ins[0], perm, start, l.inner)
			}
		})
	}, nil
}

func permuteRow[T any](out, x []byte, perm []int, start, inner int) {
	z, v := view[T](out), view[T](x)
	for k, p := range perm {
		z[start+k*inner] = v[start+p*inner]
	}
}

// argReduceKernel finds, per row, the first index of the max (or min). A NaN
// beats every number and the first NaN stays (the IR's rule, TensorFlow's
// ArgMax on CPU), so the answer points at the NaN a max would return.
func argReduceKernel(in ir.Instr, at []ir.TensorType) (kernel, error) {
	d := at[0].DType
	if !d.IsNumeric() {
		return nil, errUnsupported(in, at)
	}
	if in.Type.DType != ir.I32 && in.Type.DType != ir.I64 {
		return nil, fmt.Errorf("op %s: index dtype %v must be int32 or int64", in.Op, in.Type.DType)
	}
	l := newRowLayout(at[0].Shape, in.Axes[0])
	isMax := in.Reduce == ir.ReduceMax
	idx64 := in.Type.DType == ir.I64
	return func(out []byte, ins [][]byte) {
		keys, _ := keysOf(d, ins[0])
		z32, z64 := view[int32](out), view[int64](out)
		rows := l.outer * l.inner
		parallelFor(rows, max(1, grainCheap/max(l.n, 1)), func(lo, hi int) {
			for r := lo; r < hi; r++ {
				start, best := l.start(r), 0
				if keys.f != nil {
					best = argBestFloat(keys.f, start, l.n, l.inner, isMax)
				} else {
					best = argBestInt(keys.i, start, l.n, l.inner, isMax)
				}
				if idx64 {
					z64[r] = int64(best)
				} else {
					z32[r] = int32(best)
				}
			}
		})
	}, nil
}

func argBestFloat(x []float64, start, n, stride int, isMax bool) int {
	best, bv := 0, x[start]
	for k := 1; k < n && bv == bv; k++ { // a NaN, once found, stays
		v := x[start+k*stride]
		if v != v || (isMax && v > bv) || (!isMax && v < bv) {
			best, bv = k, v
		}
	}
	return best
}

func argBestInt(x []int64, start, n, stride int, isMax bool) int {
	best, bv := 0, x[start]
	for k := 1; k < n; k++ {
		v := x[start+k*stride]
		if (isMax && v > bv) || (!isMax && v < bv) {
			best, bv = k, v
		}
	}
	return best
}

package model

import (
	"math"
	"slices"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
)

// Reductions keep the reduced axes with size 1. Each output accumulates its
// inputs in row-major order: floats in float32 (rounded at every step, and
// to float16 once at the end), integers wrapping.

func evalReduce(n *gpu.Node, x *value) (*value, error) {
	out := newValue(n.Out.Shape, n.Out.DType)
	// The reduced shape broadcast back onto x's maps each input element to
	// its output; visiting inputs in order is row-major accumulation.
	to := broadcastMap(out.shape, x.shape)
	seen := make([]bool, out.size())
	if x.dt.IsFloat() {
		step := floatReduce[n.Op]
		if step == nil {
			return nil, opError(n.Op, "not modelled")
		}
		acc := make([]float32, out.size())
		for j, o := range to {
			v := float32(x.f[j])
			if !seen[o] {
				acc[o], seen[o] = v, true
			} else {
				acc[o] = step(acc[o], v)
			}
		}
		for o, a := range acc {
			out.f[o] = arith(out.dt, float64(a))
		}
		return out, nil
	}
	step := intReduce(n.Op, x.dt)
	if step == nil {
		return nil, opError(n.Op, "%v operands are outside the contract", x.dt)
	}
	for j, o := range to {
		if !seen[o] {
			out.i[o], seen[o] = x.i[j], true
		} else {
			out.i[o] = wrap(x.dt, step(out.i[o], x.i[j]))
		}
	}
	return out, nil
}

func isNaN32(x float32) bool { return x != x }

// floatReduce combines the accumulator with the next input.
var floatReduce = map[gpu.Op]func(acc, v float32) float32{
	gpu.OpReductionSum:     func(acc, v float32) float32 { return float32(acc + v) },
	gpu.OpReductionProduct: func(acc, v float32) float32 { return float32(acc * v) },
	// The plain maximum and minimum skip NaN (a NaN accumulator is
	// replaced), so only an all-NaN input gives NaN; ties keep the first.
	gpu.OpReductionMaximum: func(acc, v float32) float32 {
		if isNaN32(acc) || (!isNaN32(v) && v > acc) {
			return v
		}
		return acc
	},
	gpu.OpReductionMinimum: func(acc, v float32) float32 {
		if isNaN32(acc) || (!isNaN32(v) && v < acc) {
			return v
		}
		return acc
	},
	gpu.OpReductionMaximumNaN: func(acc, v float32) float32 {
		if isNaN32(acc) || isNaN32(v) {
			return float32(math.NaN())
		}
		if v > acc {
			return v
		}
		return acc
	},
	gpu.OpReductionMinimumNaN: func(acc, v float32) float32 {
		if isNaN32(acc) || isNaN32(v) {
			return float32(math.NaN())
		}
		if v < acc {
			return v
		}
		return acc
	},
}

func intReduce(op gpu.Op, dt gpu.DataType) func(acc, v int64) int64 {
	switch op {
	case gpu.OpReductionSum:
		return func(acc, v int64) int64 { return acc + v }
	case gpu.OpReductionProduct:
		return func(acc, v int64) int64 { return acc * v }
	case gpu.OpReductionMaximum:
		return intMaximum(dt)
	case gpu.OpReductionMinimum:
		return intMinimum(dt)
	}
	return nil
}

// evalArgSort gives the int32 positions that sort each line along Axis
// ascending. MPSGraph's sort is not stable and does not place NaN; the model
// orders ties by descending position (against a lowering that expects a
// stable sort) and puts NaNs first (against one that expects them last).
func evalArgSort(n *gpu.Node, x *value) *value {
	out := newValue(n.Out.Shape, gpu.Int32)
	outer, l, inner := lines(x.shape, n.Axis)
	pos := make([]int, l)
	for o := range outer {
		for in := range inner {
			at := func(p int) int { return o*l*inner + p*inner + in }
			for p := range pos {
				pos[p] = p
			}
			slices.SortFunc(pos, func(p, q int) int {
				if c := compareElems(x, at(p), at(q)); c != 0 {
					return c
				}
				return q - p // ties: the later position first
			})
			for r, p := range pos {
				out.i[at(r)] = int64(p)
			}
		}
	}
	return out
}

// compareElems orders elements j and k of x for argSort: NaN before
// everything, -0 equal to +0.
func compareElems(x *value, j, k int) int {
	if x.f != nil {
		a, b := x.f[j], x.f[k]
		switch {
		case a != a && b != b:
			return 0
		case a != a:
			return -1
		case b != b:
			return 1
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	}
	a, b := x.i[j], x.i[k]
	switch {
	case intLess(x.dt, a, b):
		return -1
	case intLess(x.dt, b, a):
		return 1
	}
	return 0
}

// evalCumSum is the inclusive running sum along Axis, accumulated in the
// type itself (rounded or wrapped at every step).
func evalCumSum(n *gpu.Node, x *value) *value {
	out := newValue(x.shape, x.dt)
	outer, l, inner := lines(x.shape, n.Axis)
	for o := range outer {
		for in := range inner {
			for p := range l {
				k := o*l*inner + p*inner + in
				switch {
				case p == 0:
					out.set(k, x, k)
				case x.f != nil:
					out.f[k] = arith(x.dt, out.f[k-inner]+x.f[k])
				default:
					out.i[k] = wrap(x.dt, out.i[k-inner]+x.i[k])
				}
			}
		}
	}
	return out
}

package metal

import (
	"math"
	"slices"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
	"github.com/metalplug/metalplug/backend/ir"
)

func init() { registerLowering(lowerReduce, ir.OpReduce) }

// lowerReduce folds the axes away. Float max and min propagate NaN, as the
// host driver's builtins do; and/or on 0/1 bytes are max/min. MPSGraph's
// reductions take float32, float16 and int32 (and int64 from macOS 13.3):
// narrow integers sum and multiply in int32 and wrap back, and uint32 sums
// and products reduce its bits as int32 (the same bits modulo 2^32).
func lowerReduce(l *lowering, in ir.Instr, args []val) (tensor, error) {
	x := args[0].t
	d := args[0].typ.DType
	if d == ir.C64 {
		return tensor{}, fallback(in.Op, "reductions of complex64")
	}
	axes := in.Axes
	if len(axes) == 0 {
		return l.identity(x), nil
	}
	switch in.Reduce {
	case ir.ReduceMax, ir.ReduceOr, ir.ReduceMin, ir.ReduceAnd:
		r, err := l.extreme(x, d, axes, in.Reduce == ir.ReduceMax || in.Reduce == ir.ReduceOr)
		return l.toShape(r, in.Type), err
	case ir.ReduceSum, ir.ReduceProd:
	default:
		return tensor{}, fallback(in.Op, "reduction %v", in.Reduce)
	}
	back := func(r tensor) tensor { return r }
	switch {
	case isNarrow(d):
		x = l.cast(x, i32)
		back = func(r tensor) tensor { return l.narrow(r, d) }
	case d == ir.U32:
		if !l.g.Has(gpu.OpReinterpretCast) {
			return tensor{}, fallback(in.Op, "uint32 sums reduce its bits as int32, which needs reinterpretCast (macOS 13.2)")
		}
		x = l.reinterpret(x, i32)
		back = func(r tensor) tensor { return l.reinterpret(r, gpu.UInt32) }
	case d == ir.I64 && !l.g.Accepts(gpu.OpReductionSum, gpu.Int64):
		return tensor{}, fallback(in.Op, "int64 reductions need macOS 13.3")
	}
	var r tensor
	switch {
	case d.IsFloat() && in.Reduce == ir.ReduceSum:
		r = l.blockedSum(x, axes)
	case in.Reduce == ir.ReduceSum:
		r = l.reduceSum(x, axes)
	default:
		// A product rounds once per factor whatever the order, and
		// blocks of factors near 1 round worse (measured: 2M factors in
		// [0.999, 1.001], 6e-5 in order, 1.3e-3 in blocks of 16, 64, 64
		// and 33), so products are not blocked.
		r = l.reduceProd(x, axes)
	}
	return l.toShape(back(r), in.Type), nil
}

// blockSplit is the longest axis a float sum folds in one reduction; a
// longer one is split in two, each about its square root.
const blockSplit = 1024

// blockedSum is a float sum of x over axes that bounds how many
// terms any one reduction folds. MPSGraph does not say in what order a
// reduction adds its inputs, and one that adds them one after another lets
// float32 rounding error grow with their number: over the 2 million
// elements of a loss, or the N*H*W rows of a bias gradient, that is
// thousands of roundings (the model of MPSGraph, which adds in order, was
// 0.17% off for L2Loss over 33x64x64x16). So the axes are reduced one at a
// time, and an axis longer than blockSplit is reshaped into blocks (padded
// with the identity) that are reduced first, then their partials: each
// reduction then folds at most about blockSplit terms. Every reduction keeps
// its axes with size 1, so the axis numbers stay valid throughout.
func (l *lowering) blockedSum(x tensor, axes []int) tensor {
	sorted := append([]int(nil), axes...)
	slices.Sort(sorted)
	for i := len(sorted) - 1; i >= 0; i-- {
		a := sorted[i]
		n := x.Shape[a]
		if n <= blockSplit {
			x = l.reduceSum(x, []int{a})
			continue
		}
		c := int(math.Ceil(math.Sqrt(float64(n))))
		m := (n + c - 1) / c
		if pad := m*c - n; pad > 0 {
			low, high := make([]int, x.Rank()), make([]int, x.Rank())
			high[a] = pad
			x = l.padConst(x, low, high, 0)
		}
		split := append(append(append([]int(nil), x.Shape[:a]...), m, c), x.Shape[a+1:]...)
		x = l.reduceSum(l.reduceSum(l.reshape(x, split), []int{a + 1}), []int{a})
		x = l.reshape(x, append(append(append([]int(nil), x.Shape[:a]...), 1), x.Shape[a+2:]...))
	}
	return x
}

// extreme is the maximum (or minimum) of x over axes, kept with size 1, in
// x's own type: NaN-propagating for floats; narrow integers reduce in int32
// and uint32 in int64 (exact widenings, and the extreme is an element, so
// the cast back is exact); int64 needs macOS 13.3.
func (l *lowering) extreme(x tensor, d ir.DType, axes []int, max bool) (tensor, error) {
	pick := func(x tensor) tensor {
		switch {
		case d.IsFloat() && max:
			return l.reduceMaxNaN(x, axes)
		case d.IsFloat():
			return l.reduceMinNaN(x, axes)
		case max:
			return l.reduceMax(x, axes)
		}
		return l.reduceMin(x, axes)
	}
	switch {
	case isNarrow(d):
		return l.cast(pick(l.cast(x, i32)), mustPhys(d)), nil
	case d == ir.U32 || d == ir.I64:
		if !l.g.Accepts(gpu.OpReductionMaximum, gpu.Int64) {
			return tensor{}, fallback(ir.OpReduce, "max and min of %v reduce in int64, which MPSGraph reduces from macOS 13.3", d)
		}
		return l.cast(pick(l.cast(x, i64)), mustPhys(d)), nil
	}
	return pick(x), nil
}

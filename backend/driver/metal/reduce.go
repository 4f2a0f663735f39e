package metal

import (
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
	if in.Reduce == ir.ReduceSum {
		r = l.reduceSum(x, axes)
	} else {
		r = l.reduceProd(x, axes)
	}
	return l.toShape(back(r), in.Type), nil
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

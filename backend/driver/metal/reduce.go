//go:build darwin

package metal

import (
	"github.com/metalplug/metalplug/backend/ir"
)

func init() { registerLowering(lowerReduce, ir.OpReduce) }

// lowerReduce folds the axes away. Float max and min propagate NaN, as the
// host driver's builtins do; and/or on 0/1 bytes are min/max.
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
	var r tensor
	switch in.Reduce {
	case ir.ReduceSum:
		r = l.reduceSum(x, axes)
	case ir.ReduceProd:
		r = l.reduceProd(x, axes)
	case ir.ReduceMax:
		if d.IsFloat() {
			r = l.reduceMaxNaN(x, axes)
		} else {
			r = l.reduceMax(x, axes)
		}
	case ir.ReduceMin:
		if d.IsFloat() {
			r = l.reduceMinNaN(x, axes)
		} else {
			r = l.reduceMin(x, axes)
		}
	case ir.ReduceAnd:
		r = l.reduceMin(x, axes)
	case ir.ReduceOr:
		r = l.reduceMax(x, axes)
	default:
		return tensor{}, fallback(in.Op, "reduction %v", in.Reduce)
	}
	return l.toShape(r, in.Type), nil
}

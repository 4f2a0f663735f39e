package metal

import (
	"fmt"

	"github.com/metalplug/metalplug/backend/ir"
)

// Region instructions (scatter_region, reduce_window_region) yield a tuple
// of results, which get_result takes apart: their value holds the parts
// (val.parts), each an ordinary value, and get_result picks one. A tuple has
// no tensor of its own, so these instructions bypass lowerInstr's handling
// of empty operands and half types: their lowerings see every operand,
// empty or not, and round half-typed results themselves.

func init() {
	registerLowering(lowerGetResult, ir.OpGetResult)
	// get_result passes a part on as it is: the part is already a value
	// of its type, rounded where it was made.
	exactOnHalves[ir.OpGetResult] = true
}

// tupleFunc lowers a region instruction to its parts, one per entry of
// in.Tuple, empty ones included.
type tupleFunc func(l *lowering, in ir.Instr, args []val) ([]val, error)

// tupleLowerings are the lowerings of instructions that yield tuples;
// lowerInstr calls them directly.
var tupleLowerings = map[ir.Op]tupleFunc{}

// registerTupleLowering adds f as the lowering of ops, which yield tuples;
// it runs from init functions only.
func registerTupleLowering(f tupleFunc, ops ...ir.Op) {
	for _, op := range ops {
		// The entry in lowerings lists op as lowered (and catches a second
		// registration); lowerInstr never calls it.
		registerLowering(func(*lowering, ir.Instr, []val) (tensor, error) {
			return tensor{}, fmt.Errorf("%v yields a tuple, lowered through tupleLowerings", op)
		}, op)
		tupleLowerings[op] = f
	}
}

// lowerGetResult is the part of the tuple; the tuples of while, case and
// call have no parts (they are not lowered, so a program with them never
// gets here).
func lowerGetResult(l *lowering, in ir.Instr, args []val) (tensor, error) {
	parts := args[0].parts
	if in.Param >= len(parts) {
		return tensor{}, fallback(in.Op, "result %d of %v, which yields no lowered tuple", in.Param, l.p.Instrs[in.Args[0]].Op)
	}
	return parts[in.Param].t, nil
}

// tensorTupleFunc lowers an instruction of several results to one tensor
// per result; the tensors of empty results are ignored. It is called
// whenever some result has elements, also when an operand has none (the
// lowering handles that case itself).
type tensorTupleFunc func(l *lowering, in ir.Instr, args []val) ([]tensor, error)

// registerTensorTuple registers f, whose results are rounded to their half
// type as lowerInstr rounds a single result (unless exactOnHalves).
func registerTensorTuple(f tensorTupleFunc, ops ...ir.Op) {
	registerTupleLowering(func(l *lowering, in ir.Instr, args []val) ([]val, error) {
		parts := resultParts(in)
		someElements := false
		for _, p := range parts {
			someElements = someElements || !p.empty
		}
		if !someElements {
			return parts, nil
		}
		ts, err := f(l, in, args)
		if err != nil {
			return parts, err
		}
		for i := range parts {
			r := &parts[i]
			if r.empty {
				continue
			}
			r.t = ts[i]
			if d := r.typ.DType; !exactOnHalves[in.Op] && (d == ir.F16 || d == ir.BF16) {
				if r.t, err = l.roundHalf(r.t, d); err != nil {
					return parts, err
				}
			}
		}
		return parts, nil
	}, ops...)
}

// resultParts are the values of an instruction's results, each of its type
// and marked empty where it has no elements, their tensors yet to be made.
func resultParts(in ir.Instr) []val {
	parts := make([]val, len(in.Tuple))
	for i, t := range in.Tuple {
		parts[i] = val{typ: t, empty: t.Shape.Size() == 0}
	}
	return parts
}

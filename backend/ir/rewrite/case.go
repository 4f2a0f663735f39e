package rewrite

import (
	"fmt"
	"slices"

	"github.com/metalplug/metalplug/backend/ir"
)

// CaseToSelect replaces each case whose branches all satisfy ok (nil
// accepts every branch) by all its branches computed on the case's
// operands, each result then chosen by select on the branch index: the
// branch of index b where index == b, the last branch for any other
// index, out of range included (StableHLO's rule). Cases in regions are
// rewritten too, inner first, and ok sees a branch as rewritten so.
//
// Computing a branch that was not taken must change nothing but time, so
// a case stays as it is, whatever ok says, when a branch holds anywhere
// (its regions included):
//   - a host_call, whose callback would run for the branch not taken;
//   - a while loop whose trip count is not known (TripCount), which the
//     branch's own condition may be what keeps from running long or for
//     ever.
//
// A program with no case to rewrite comes back as the same pointer.
func CaseToSelect(p *ir.Program, ok func(branch *ir.Program) bool) (*ir.Program, error) {
	return run("turning cases into selects", &rewriter{instr: func(r *rewriter, e *emitter, s *scope, i int, in ir.Instr) error {
		return caseToSelect(r, e, s, i, in, ok)
	}}, p)
}

func caseToSelect(r *rewriter, e *emitter, s *scope, i int, in ir.Instr, ok func(*ir.Program) bool) error {
	if in.Op != ir.OpCase || !selectable(in, ok) {
		e.copyInstr(s, i, in)
		return nil
	}
	args := s.values(in.Args)
	index, operands := args[0], args[1:]
	results := make([][]ir.Value, len(in.Regions))
	for b, branch := range in.Regions {
		rs, err := r.inline(e, branch, operands)
		if err != nil {
			return fmt.Errorf("branch %d: %w", b, err)
		}
		if len(rs) != len(in.Tuple) {
			return fmt.Errorf("branch %d gives %d results, the case %d", b, len(rs), len(in.Tuple))
		}
		results[b] = rs
	}
	// chosen[j] starts as the last branch's result j, and each earlier
	// branch b, from the last but one down, takes over where index == b:
	// so b wins exactly at its own index and the last branch everywhere
	// else.
	last := len(in.Regions) - 1
	chosen := slices.Clone(results[last])
	for b := last - 1; b >= 0; b-- {
		lit, err := ir.EncodeScalar(ir.I32, float64(b))
		if err != nil {
			return err
		}
		c := e.emit(ir.Instr{Op: ir.OpConstant, Type: ir.TensorType{DType: ir.I32}, Literal: lit})
		is := e.emit(ir.Instr{Op: ir.OpCompare, Args: []ir.Value{index, c}, Type: ir.TensorType{DType: ir.Bool}, Compare: ir.CmpEQ})
		preds := map[string]ir.Value{} // the predicate broadcast to each result shape, once
		for j, t := range in.Tuple {
			pred := is
			if t.Shape.Rank() > 0 {
				key := t.Shape.String()
				if v, seen := preds[key]; seen {
					pred = v
				} else {
					pred = e.emit(ir.Instr{Op: ir.OpBroadcastInDim, Args: []ir.Value{is},
						Type: ir.TensorType{DType: ir.Bool, Shape: t.Shape.Clone()}, Axes: []int{}})
					preds[key] = pred
				}
			}
			chosen[j] = e.emit(ir.Instr{Op: ir.OpSelect, Args: []ir.Value{pred, results[b][j], chosen[j]},
				Type: ir.TensorType{DType: t.DType, Shape: t.Shape.Clone()}})
		}
	}
	s.refs[i] = ref{elems: chosen}
	e.changed = true
	return nil
}

// selectable reports whether every branch of the case in may run whether
// taken or not, and satisfies ok.
func selectable(in ir.Instr, ok func(*ir.Program) bool) bool {
	if len(in.Regions) == 0 || len(in.Args) == 0 {
		return false
	}
	for _, branch := range in.Regions {
		if branch == nil || hasHostCall(branch) || mayNotTerminate(branch) {
			return false
		}
		if ok != nil && !ok(branch) {
			return false
		}
	}
	return true
}

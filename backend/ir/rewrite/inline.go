package rewrite

import (
	"fmt"

	"github.com/metalplug/metalplug/backend/ir"
)

// InlineCalls replaces every call, in p and in every region of it (loop
// bodies, branches, callees), by the callee's instructions on the call's
// operands; the call's get_results become the callee's results. A callee
// that calls is inlined with its own calls inlined. A call only passes
// values, so this changes nothing a program computes; effects (host_call)
// stay in order, in the caller's order, where the call was. A program with
// no call comes back as the same pointer.
func InlineCalls(p *ir.Program) (*ir.Program, error) {
	return run("inlining calls", &rewriter{instr: inlineCall}, p)
}

func inlineCall(r *rewriter, e *emitter, s *scope, i int, in ir.Instr) error {
	if in.Op != ir.OpCall {
		e.copyInstr(s, i, in)
		return nil
	}
	if len(in.Regions) != 1 || in.Regions[0] == nil {
		return fmt.Errorf("a call of %d regions, want the callee", len(in.Regions))
	}
	// The callee is already rewritten (regions first), so it has no call
	// left, and inline copies it as it is.
	rs, err := r.inline(e, in.Regions[0], s.values(in.Args))
	if err != nil {
		return err
	}
	s.refs[i] = ref{elems: rs}
	e.changed = true
	return nil
}

package rewrite

import (
	"fmt"
	"math"

	"github.com/metalplug/metalplug/backend/ir"
)

// Unroll replaces each while loop whose trip count n is known (TripCount)
// by n copies of its body, each taking the values the one before gave (the
// first the loop's operands), and the loop's results by the last copy's.
// The condition is not computed: it is known to hold exactly n times (a
// loop whose condition calls a host function, which must run n+1 times,
// stays a loop).
//
// Loops nested in regions are unrolled inner first; a loop left in a body
// because its trip count depends on the outer loop (jax's
// fori_loop(0, i, ...) inside fori_loop over i) is tried again in each
// copy of that body, where the outer counter has become a constant that
// folds.
//
// maxInstrs bounds the result: a loop is unrolled only if the whole
// program, counted by Size (regions included), stays within maxInstrs
// afterwards, the loop and its get_results replaced by n times its body's
// instructions (parameters aside); a loop whose replacement is no larger
// than the loop itself (n of 0 or 1) is unrolled whatever the bound.
// Loops are taken in program order, inner first, while the budget lasts;
// those that do not qualify stay as they are. The budget holds after each
// loop, so where the copies of a loop hold loops that unroll smaller than
// they were (jax's fori_loop(0, i, ...) for small i), the whole may need a
// budget above its final size.
//
// The copies leave behind values no one uses (a body's constants, the
// results of the last copy the program drops) and counters that are
// constant chains: Simplify removes and folds them. A program with no
// loop to unroll comes back as the same pointer.
func Unroll(p *ir.Program, maxInstrs int) (*ir.Program, error) {
	if p == nil {
		return nil, fmt.Errorf("rewrite: unrolling: nil program")
	}
	u := &unroller{total: Size(p), max: maxInstrs}
	return run("unrolling", &rewriter{instr: u.instr}, p)
}

// unroller keeps the budget: total is the size of the program as it
// stands, with the unrolling decided so far.
type unroller struct {
	total, max int
}

func (u *unroller) instr(r *rewriter, e *emitter, s *scope, i int, in ir.Instr) error {
	if in.Op != ir.OpWhile || len(in.Regions) != 2 {
		e.copyInstr(s, i, in)
		return nil
	}
	args := s.values(in.Args)
	loop := in
	loop.Args = args
	n, ok := tripCount(e.fold, loop)
	// A condition that calls a host function runs it n+1 times: dropping
	// it would drop the calls.
	if !ok || hasHostCall(in.Regions[0]) || !u.afford(in, n, s.getResults(i)) {
		e.copyInstr(s, i, in)
		return nil
	}
	body := in.Regions[1]
	vals := args
	for range n {
		var err error
		if vals, err = r.inline(e, body, vals); err != nil {
			return err
		}
	}
	s.refs[i] = ref{elems: vals}
	e.changed = true
	return nil
}

// afford reports whether unrolling the loop in n times keeps the program
// within the budget, and if so counts it: the loop, its regions and its
// get_results (gets) go, n copies of its body's instructions come.
func (u *unroller) afford(in ir.Instr, n, gets int) bool {
	cond, body := in.Regions[0], in.Regions[1]
	per := Size(body)
	for _, b := range body.Instrs {
		if b.Op == ir.OpParameter {
			per-- // a copy's parameters are the values handed to it
		}
	}
	loop := 1 + Size(cond) + Size(body) + gets
	if per > 0 && n > math.MaxInt/per {
		return false
	}
	delta := n*per - loop
	if delta > 0 && u.total+delta > u.max {
		return false
	}
	u.total += delta
	return true
}

package split

import (
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/rewrite"
)

// tripCount is the trip count of the while at instruction i of p, when it
// is known before the loop runs.
func tripCount(p *ir.Program, i int) (int, bool) { return rewrite.TripCount(p, i) }

// UnrollBudget bounds the instructions a program may grow to when its
// loops of known trip count are unrolled into one graph: beyond it a loop
// is replayed instead, its body enqueued once per trip. A graph of a few
// thousand nodes compiles once and dispatches once; a replay pays a
// dispatch per trip.
const UnrollBudget = 8192

// straighten rewrites p for a device that runs no control flow (MPSGraph
// here): calls inlined, loops of known trip count unrolled within
// UnrollBudget, cases whose every branch the device runs turned into all
// branches and a select, and what that leaves unused removed. The result
// computes exactly what p does, with the same parameters and results; p
// itself comes back when nothing changed.
func (d *Driver) straighten(p *ir.Program) (*ir.Program, error) {
	if !hasControlFlow(p) {
		return p, nil
	}
	q, err := rewrite.InlineCalls(p)
	if err != nil {
		return nil, err
	}
	if q, err = rewrite.Unroll(q, max(UnrollBudget, rewrite.Size(q))); err != nil {
		return nil, err
	}
	if q, err = rewrite.CaseToSelect(q, d.runsWhole); err != nil {
		return nil, err
	}
	if q == p {
		return p, nil
	}
	return rewrite.Simplify(q)
}

// runsWhole says whether the device runs every instruction of p.
func (d *Driver) runsWhole(p *ir.Program) bool {
	places, err := d.placer.Place(p)
	if err != nil {
		return false
	}
	for _, u := range places {
		if u != nil {
			return false
		}
	}
	return true
}

// hasControlFlow says whether p (or a region in it) has a while, case or
// call, which is when straighten has anything to do.
func hasControlFlow(p *ir.Program) bool {
	for _, in := range p.Instrs {
		switch in.Op {
		case ir.OpWhile, ir.OpCase, ir.OpCall:
			return true
		}
		for _, r := range in.Regions {
			if hasControlFlow(r) {
				return true
			}
		}
	}
	return false
}

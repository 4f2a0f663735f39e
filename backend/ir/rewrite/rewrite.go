package rewrite

import (
	"fmt"
	"slices"

	"github.com/metalplug/metalplug/backend/ir"
)

// ref is where a value of a source program went in the program being
// built: a value, or, for a tuple the rewrite took apart (an inlined call,
// an unrolled loop, a case become selects), the values of its elements,
// which its get_results then name directly.
type ref struct {
	v     ir.Value
	elems []ir.Value
}

// scope maps one source program's values (the program being rebuilt, or
// a region being inlined into it) to the program being built.
type scope struct {
	src  *ir.Program
	refs []ref
}

func newScope(p *ir.Program) *scope { return &scope{src: p, refs: make([]ref, len(p.Instrs))} }

// getResults is how many get_results of the source take the tuple v
// apart: instructions that go when the tuple is replaced.
func (s *scope) getResults(v int) int {
	n := 0
	for _, in := range s.src.Instrs[v+1:] {
		if in.Op == ir.OpGetResult && int(in.Args[0]) == v {
			n++
		}
	}
	return n
}

func (s *scope) values(vs []ir.Value) []ir.Value {
	out := make([]ir.Value, len(vs))
	for i, v := range vs {
		out[i] = s.refs[v].v
	}
	return out
}

// emitter appends instructions to the program being built.
type emitter struct {
	out *ir.Program
	// changed is set by anything that makes out differ from its source:
	// while it stays false the caller hands back the source itself.
	changed bool
	// fold caches the constant folding of out's values (out only grows,
	// so what is folded stays true).
	fold *folder
}

func newEmitter(p *ir.Program) *emitter {
	out := &ir.Program{Params: slices.Clone(p.Params)}
	return &emitter{out: out, fold: newFolder(nil)}
}

func (e *emitter) emit(in ir.Instr) ir.Value {
	e.out.Instrs = append(e.out.Instrs, in)
	e.fold.instrs = e.out.Instrs
	return ir.Value(len(e.out.Instrs) - 1)
}

// copyInstr emits in (instruction i of the source of s) with its operands
// mapped; a get_result of a tuple taken apart becomes the element itself.
func (e *emitter) copyInstr(s *scope, i int, in ir.Instr) {
	if in.Op == ir.OpGetResult {
		if r := s.refs[in.Args[0]]; r.elems != nil {
			s.refs[i] = ref{v: r.elems[in.Param]}
			return
		}
	}
	in.Args = s.values(in.Args)
	s.refs[i] = ref{v: e.emit(in)}
}

// rewriter is one rewrite: instr handles an instruction whose regions have
// already been rewritten (inner first), by copying it or by emitting
// something else in its place.
type rewriter struct {
	instr func(r *rewriter, e *emitter, s *scope, i int, in ir.Instr) error
}

// program rewrites p, its regions first; it returns p itself when nothing
// changed.
func (r *rewriter) program(p *ir.Program) (*ir.Program, error) {
	e := newEmitter(p)
	s := newScope(p)
	for i, in := range p.Instrs {
		if in.Op == ir.OpParameter {
			s.refs[i] = ref{v: e.emit(in)}
			continue
		}
		if len(in.Regions) > 0 {
			regions, changed, err := r.regions(in.Regions)
			if err != nil {
				return nil, fmt.Errorf("instruction %%%d (%s): %w", i, in.Op, err)
			}
			if changed {
				in.Regions = regions
				e.changed = true
			}
		}
		if err := r.instr(r, e, s, i, in); err != nil {
			return nil, fmt.Errorf("instruction %%%d (%s): %w", i, in.Op, err)
		}
	}
	if !e.changed {
		return p, nil
	}
	e.out.Results = s.values(p.Results)
	return e.out, nil
}

// regions rewrites each region; the slice is new only when one changed.
func (r *rewriter) regions(regions []*ir.Program) ([]*ir.Program, bool, error) {
	out := make([]*ir.Program, len(regions))
	changed := false
	for j, region := range regions {
		q, err := r.program(region)
		if err != nil {
			return nil, false, fmt.Errorf("region %d: %w", j, err)
		}
		out[j] = q
		changed = changed || q != region
	}
	return out, changed, nil
}

// inline emits region (already rewritten: its own regions are final) on
// args into e, through r's instruction handler, and returns its results.
func (r *rewriter) inline(e *emitter, region *ir.Program, args []ir.Value) ([]ir.Value, error) {
	s := newScope(region)
	for i, in := range region.Instrs {
		if in.Op == ir.OpParameter {
			s.refs[i] = ref{v: args[in.Param]}
			continue
		}
		if err := r.instr(r, e, s, i, in); err != nil {
			return nil, fmt.Errorf("inlined instruction %%%d (%s): %w", i, in.Op, err)
		}
	}
	return s.values(region.Results), nil
}

// run applies r to p and verifies what it made. p must verify (every
// program a driver accepts does); a malformed one may make the rewrite
// fail, and a panic on the way is returned as an error, never thrown at
// the process that loaded the library.
func run(what string, r *rewriter, p *ir.Program) (q *ir.Program, err error) {
	if p == nil {
		return nil, fmt.Errorf("rewrite: %s: nil program", what)
	}
	defer func() {
		if x := recover(); x != nil {
			q, err = nil, fmt.Errorf("rewrite: %s: panic (is the program verified?): %v", what, x)
		}
	}()
	q, err = r.program(p)
	if err != nil {
		return nil, fmt.Errorf("rewrite: %s: %w", what, err)
	}
	if q == p {
		return p, nil
	}
	if err := ir.Verify(q); err != nil {
		// A rewrite that breaks a program is a bug here, not in the
		// caller's program: say so rather than hand it on.
		return nil, fmt.Errorf("rewrite: %s made a program that does not verify: %w", what, err)
	}
	return q, nil
}

// Size is the number of instructions of p, those of its regions (and
// theirs) included: the measure Unroll's budget is in.
func Size(p *ir.Program) int {
	n := len(p.Instrs)
	for _, in := range p.Instrs {
		for _, r := range in.Regions {
			n += Size(r)
		}
	}
	return n
}

// contains reports whether p or any region in it holds an instruction
// for which pred is true; pred sees each instruction with its program.
func contains(p *ir.Program, pred func(p *ir.Program, i int) bool) bool {
	for i, in := range p.Instrs {
		if pred(p, i) {
			return true
		}
		for _, r := range in.Regions {
			if contains(r, pred) {
				return true
			}
		}
	}
	return false
}

// hasHostCall reports whether p calls a host function anywhere: such a
// program has an effect, which must happen exactly as often as before.
func hasHostCall(p *ir.Program) bool {
	return contains(p, func(p *ir.Program, i int) bool { return p.Instrs[i].Op == ir.OpHostCall })
}

// mayNotTerminate reports whether p holds, anywhere, a loop whose trip
// count is not known: one that may run for as long as its data says, or
// for ever. A rewrite must not make such a loop run where it did not.
func mayNotTerminate(p *ir.Program) bool {
	return contains(p, func(p *ir.Program, i int) bool {
		if p.Instrs[i].Op != ir.OpWhile {
			return false
		}
		_, ok := TripCount(p, i)
		return !ok
	})
}

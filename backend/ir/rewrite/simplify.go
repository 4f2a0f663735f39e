package rewrite

import (
	"fmt"

	"github.com/metalplug/metalplug/backend/ir"
)

// Simplify removes what computes nothing the program gives, in p and in
// its regions: instructions whose values no result depends on, and
// constants that repeat one before them (an unrolled loop copies its
// body's constants into every copy), which become that one. It also
// folds integer scalars computed from constants (an unrolled loop's
// counter, k0 + t*step in copy t, and the indices made of it) into
// constants, with the IR's integer arithmetic (TripCount's folding). The
// rewrites leave all three behind; a driver would otherwise compile them.
//
// Kept whatever uses them: parameters (a program's and a region's
// parameter lists never change), host_calls and anything holding one
// (their callbacks run whether or not their results are used), and loops
// whose trip count is not known and anything holding one (removing a loop
// that might never end would change what the program does). A program
// with nothing to remove comes back as the same pointer.
func Simplify(p *ir.Program) (*ir.Program, error) { return simplifyVerified(p) }

// simplifyVerified is Simplify: simplify, verified, its panics returned.
func simplifyVerified(p *ir.Program) (q *ir.Program, err error) {
	if p == nil {
		return nil, fmt.Errorf("rewrite: simplifying: nil program")
	}
	defer func() {
		if x := recover(); x != nil {
			q, err = nil, fmt.Errorf("rewrite: simplifying: panic (is the program verified?): %v", x)
		}
	}()
	q = simplify(p)
	if q == p {
		return p, nil
	}
	if err := ir.Verify(q); err != nil {
		return nil, fmt.Errorf("rewrite: simplifying made a program that does not verify: %w", err)
	}
	return q, nil
}

func simplify(p *ir.Program) *ir.Program {
	n := len(p.Instrs)
	instrs := p.Instrs // copied on the first change
	changed := false
	for i, in := range p.Instrs {
		if len(in.Regions) == 0 {
			continue
		}
		var regions []*ir.Program
		for j, r := range in.Regions {
			if q := simplify(r); q != r {
				if regions == nil {
					regions = append([]*ir.Program(nil), in.Regions...)
				}
				regions[j] = q
			}
		}
		if regions != nil {
			if !changed {
				instrs = append([]ir.Instr(nil), p.Instrs...)
				changed = true
			}
			instrs[i].Regions = regions
		}
	}

	// Integer scalars that fold become constants; what they were
	// computed from is then dead, unless something else uses it.
	fold := newFolder(p.Instrs)
	for i, in := range p.Instrs {
		if in.Op == ir.OpConstant || in.Tuple != nil || in.Type.Shape.Rank() != 0 {
			continue
		}
		if x, ok := fold.scalar(ir.Value(i)); ok {
			if !changed {
				instrs = append([]ir.Instr(nil), p.Instrs...)
				changed = true
			}
			instrs[i] = ir.Instr{Op: ir.OpConstant, Type: in.Type, Literal: littleEndian(in.Type.DType, x)}
		}
	}

	// same[i] is the first instruction computing what i does: itself, or
	// an earlier constant of the same type and literal.
	same := make([]ir.Value, n)
	first := map[string]ir.Value{}
	for i, in := range instrs {
		same[i] = ir.Value(i)
		if in.Op != ir.OpConstant {
			continue
		}
		key := in.Type.String() + ":" + string(in.Literal)
		if v, seen := first[key]; seen {
			same[i] = v
			changed = true
		} else {
			first[key] = ir.Value(i)
		}
	}

	live := make([]bool, n)
	for _, r := range p.Results {
		live[same[r]] = true
	}
	outer := newFolder(instrs)
	for i := n - 1; i >= 0; i-- {
		in := instrs[i]
		if !live[i] && !mustKeep(outer, in) {
			changed = true
			continue
		}
		live[i] = true
		for _, a := range in.Args {
			live[same[a]] = true
		}
	}
	if !changed {
		return p
	}

	q := &ir.Program{Params: append([]ir.TensorType(nil), p.Params...)}
	renum := make([]ir.Value, n)
	for i, in := range instrs {
		if !live[i] {
			continue
		}
		args := make([]ir.Value, len(in.Args))
		for j, a := range in.Args {
			args[j] = renum[same[a]]
		}
		in.Args = args
		renum[i] = ir.Value(len(q.Instrs))
		q.Instrs = append(q.Instrs, in)
	}
	q.Results = make([]ir.Value, len(p.Results))
	for j, r := range p.Results {
		q.Results[j] = renum[same[r]]
	}
	return q
}

// littleEndian is x as a scalar of the integer dtype d.
func littleEndian(d ir.DType, x int64) []byte {
	b := make([]byte, d.Size())
	for i := range b {
		b[i] = byte(uint64(x) >> (8 * i))
	}
	return b
}

// mustKeep reports whether in must stay though nothing uses it: see
// Simplify. outer folds the values of in's program, for a loop's trip
// count.
func mustKeep(outer *folder, in ir.Instr) bool {
	switch in.Op {
	case ir.OpParameter, ir.OpHostCall:
		return true
	case ir.OpWhile:
		if len(in.Regions) != 2 {
			return true
		}
		if _, ok := tripCount(outer, in); !ok {
			return true
		}
	}
	for _, r := range in.Regions {
		if hasHostCall(r) || mayNotTerminate(r) {
			return true
		}
	}
	return false
}

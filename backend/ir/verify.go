package ir

import (
	"fmt"
	"strings"
)

// Verify checks that p is a well-formed program: operands are earlier
// instructions (SSA order), every op has its operand count and the
// attributes it needs, every instruction's declared type is the one its
// operands give (inferred by the Builder, as a lowering's would be),
// parameters match the declared inputs, and the program has results that
// exist. Drivers and frontends call it on every program they accept; a
// hand-assembled program gets the same scrutiny as a built one, once: a
// program that passed is not checked again.
func Verify(p *Program) error {
	_, _, err := Normalize(p)
	return err
}

// Normalize is Verify that also returns p as the Builder rebuilds it
// (attribute defaults filled, parameters numbered in instruction order),
// and for each of its instructions the index of the instruction of p it
// came from (-1 for none), so that a driver can name p's instructions in
// its errors.
func Normalize(p *Program) (q *Program, origin []int, err error) {
	if p == nil {
		return nil, nil, fmt.Errorf("ir: nil program")
	}
	if n := p.verified.Load(); n != nil && n.of(p) {
		return n.q, n.origin, nil
	}
	q, origin, err = normalize(p)
	if err == nil {
		p.verified.Store(&normalForm{q: q, origin: origin, instrs: len(p.Instrs), params: len(p.Params), results: len(p.Results)})
	}
	return q, origin, err
}

// normalForm is Normalize's answer for a program that passed, kept on it.
type normalForm struct {
	q      *Program
	origin []int
	// The lengths p had: a program grown or cut after it passed is
	// checked again (one edited in place is not: Program says so).
	instrs, params, results int
}

func (n *normalForm) of(p *Program) bool {
	return n.instrs == len(p.Instrs) && n.params == len(p.Params) && n.results == len(p.Results)
}

func normalize(p *Program) (q *Program, origin []int, err error) {
	b := NewBuilder()
	remap := make([]Value, len(p.Instrs)) // p's value -> rebuilt value
	for i, in := range p.Instrs {
		info, err := checkInstr(p, i)
		if err != nil {
			return nil, nil, err
		}
		args := make([]Value, len(in.Args))
		for j, a := range in.Args {
			args[j] = remap[a]
		}
		v, err := info.infer(b, p, in, args)
		if err == nil {
			err = b.Err()
		}
		if err != nil {
			return nil, nil, fmt.Errorf("ir: instruction %%%d (%s %s): %w", i, in.Op, OperandTypes(p, in), err)
		}
		if in.Tuple != nil || b.TupleTypes(v) != nil {
			if got := b.TupleTypes(v); !sameTypes(got, in.Tuple) {
				return nil, nil, fmt.Errorf("ir: instruction %%%d (%s %s) declares results %v, but its regions give %v",
					i, in.Op, OperandTypes(p, in), in.Tuple, got)
			}
		} else if got := b.Type(v); got.DType != in.Type.DType || !got.Shape.Equal(in.Type.Shape) {
			return nil, nil, fmt.Errorf("ir: instruction %%%d (%s %s) declares result %v, but its operands give %v",
				i, in.Op, OperandTypes(p, in), in.Type, got)
		}
		remap[i] = v
	}
	if len(p.Results) == 0 {
		return nil, nil, fmt.Errorf("ir: program has no results")
	}
	results := make([]Value, len(p.Results))
	for i, r := range p.Results {
		if int(r) < 0 || int(r) >= len(p.Instrs) {
			return nil, nil, fmt.Errorf("ir: result %d names %%%d, which does not exist", i, r)
		}
		if p.Instrs[r].Tuple != nil {
			return nil, nil, fmt.Errorf("ir: result %d names the tuple %%%d: take it apart with get_result", i, r)
		}
		results[i] = remap[r]
	}
	if q, err = b.Build(results...); err != nil {
		return nil, nil, fmt.Errorf("ir: %w", err)
	}
	origin = make([]int, len(q.Instrs))
	for i := range origin {
		origin[i] = -1
	}
	for i := len(p.Instrs) - 1; i >= 0; i-- {
		origin[remap[i]] = i
	}
	return q, origin, nil
}

// checkInstr enforces SSA order and the op's arity, before the builder runs.
func checkInstr(p *Program, i int) (OpInfo, error) {
	in := p.Instrs[i]
	for _, a := range in.Args {
		if int(a) < 0 || int(a) >= i {
			return OpInfo{}, fmt.Errorf("ir: instruction %%%d (%s) uses %%%d, which is not an earlier instruction", i, in.Op, a)
		}
	}
	for j, a := range in.Args {
		if isTuple := p.Instrs[a].Tuple != nil; isTuple != (in.Op == OpGetResult) {
			if isTuple {
				return OpInfo{}, fmt.Errorf("ir: instruction %%%d (%s) takes the tuple %%%d as operand %d: take it apart with get_result", i, in.Op, a, j)
			}
			return OpInfo{}, fmt.Errorf("ir: instruction %%%d (get_result) takes %%%d, which is not a tuple", i, a)
		}
	}
	info, ok := in.Op.Info()
	if !ok {
		return OpInfo{}, fmt.Errorf("ir: instruction %%%d: %s is not an IR op", i, in.Op)
	}
	switch {
	case info.Arity == Variadic && len(in.Args) == 0:
		return OpInfo{}, fmt.Errorf("ir: instruction %%%d (%s) has no operands, wants at least one", i, in.Op)
	case info.Arity != Variadic && len(in.Args) != info.Arity:
		return OpInfo{}, fmt.Errorf("ir: instruction %%%d (%s) has %d operands, wants %d", i, in.Op, len(in.Args), info.Arity)
	}
	return info, nil
}

// OperandTypes prints in's operand types, for error messages.
func OperandTypes(p *Program, in Instr) string {
	parts := make([]string, len(in.Args))
	for j, a := range in.Args {
		if int(a) >= 0 && int(a) < len(p.Instrs) {
			parts[j] = p.Instrs[a].Type.String()
		} else {
			parts[j] = fmt.Sprintf("%%%d?", a)
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

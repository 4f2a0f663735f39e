package ir

import (
	"fmt"
	"slices"
)

// Control flow. Each op holds sub-programs in Instr.Regions, which see
// only their own parameters (a frontend passes what a region uses as
// operands), and yields a tuple of results (Instr.Tuple) that OpGetResult
// takes apart; a tuple is never an operand of anything else, nor a program
// result.

// controlOps loop, branch and call.
var controlOps = opDefs{
	{OpWhile, OpInfo{Name: "while", Arity: Variadic, Attrs: []string{"Regions", "Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if len(in.Regions) != 2 {
			return 0, fmt.Errorf("%d regions, want cond and body", len(in.Regions))
		}
		return b.While(in.Regions[0], in.Regions[1], a...), nil
	}}}, // Args the initial values; Regions cond (values -> bool[]) and body (values -> values)
	{OpCase, OpInfo{Name: "case", Arity: Variadic, Attrs: []string{"Regions", "Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		return b.Case(a[0], in.Regions, a[1:]...), nil
	}}}, // Args[0] the int32 branch index (out of range: the last branch), Args[1:] the branches' operands; Regions the branches
	{OpCall, OpInfo{Name: "call", Arity: Variadic, Attrs: []string{"Regions", "Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if len(in.Regions) != 1 {
			return 0, fmt.Errorf("%d regions, want the callee", len(in.Regions))
		}
		return b.Call(in.Regions[0], a...), nil
	}}}, // Args the operands of Regions[0], whose results it yields
	{OpGetResult, OpInfo{Name: "get_result", Arity: 1, Attrs: []string{"Param"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		return b.GetResult(a[0], in.Param), nil
	}}}, // result Param of the tuple Args[0]
}

// While yields the final values of a loop: values start as init, and while
// cond(values) (a program returning one bool scalar) is true, values become
// body(values) (a program returning values of the same types).
func (b *Builder) While(cond, body *Program, init ...Value) Value {
	types, ok := b.operandTypes(OpWhile, init)
	if !ok {
		return 0
	}
	if err := checkRegion("cond", cond, types, []TensorType{{DType: Bool}}); err != nil {
		return b.fail(OpWhile, "%v", err)
	}
	if err := checkRegion("body", body, types, types); err != nil {
		return b.fail(OpWhile, "%v", err)
	}
	return b.emitTuple(Instr{Op: OpWhile, Args: slices.Clone(init), Regions: []*Program{cond, body}, Tuple: cloneTypes(types)})
}

// Case yields the results of branch index (an int32 scalar; out of range
// means the last branch, as in StableHLO) applied to args. Every branch
// takes args and returns the same types.
func (b *Builder) Case(index Value, branches []*Program, args ...Value) Value {
	if b.err != nil {
		return 0
	}
	if t := b.Type(index); t.DType != I32 || t.Shape.Rank() != 0 || b.isTuple(index) {
		return b.fail(OpCase, "the branch index is %v, want an int32 scalar", t)
	}
	if len(branches) == 0 {
		return b.fail(OpCase, "no branches")
	}
	types, ok := b.operandTypes(OpCase, args)
	if !ok {
		return 0
	}
	var results []TensorType
	for i, br := range branches {
		if br == nil {
			return b.fail(OpCase, "branch %d is missing", i)
		}
		if i == 0 {
			results = br.ResultTypes()
		}
		if err := checkRegion(fmt.Sprintf("branch %d", i), br, types, results); err != nil {
			return b.fail(OpCase, "%v", err)
		}
	}
	return b.emitTuple(Instr{Op: OpCase, Args: append([]Value{index}, args...), Regions: slices.Clone(branches), Tuple: cloneTypes(results)})
}

// Call yields the results of fn applied to args.
func (b *Builder) Call(fn *Program, args ...Value) Value {
	types, ok := b.operandTypes(OpCall, args)
	if !ok {
		return 0
	}
	if fn == nil {
		return b.fail(OpCall, "no callee")
	}
	if err := checkRegion("callee", fn, types, fn.ResultTypes()); err != nil {
		return b.fail(OpCall, "%v", err)
	}
	return b.emitTuple(Instr{Op: OpCall, Args: slices.Clone(args), Regions: []*Program{fn}, Tuple: cloneTypes(fn.ResultTypes())})
}

// GetResult is result i of the tuple t.
func (b *Builder) GetResult(t Value, i int) Value {
	if b.err != nil {
		return 0
	}
	tuple := b.TupleTypes(t)
	if tuple == nil {
		return b.fail(OpGetResult, "%%%d is not the tuple of a region instruction", t)
	}
	if i < 0 || i >= len(tuple) {
		return b.fail(OpGetResult, "result %d of a tuple of %d", i, len(tuple))
	}
	return b.emit(Instr{Op: OpGetResult, Args: []Value{t}, Param: i, Type: cloneTypes(tuple[i : i+1])[0]})
}

// Results takes the tuple t apart.
func (b *Builder) Results(t Value) []Value {
	n := len(b.TupleTypes(t))
	if b.err != nil || n == 0 {
		b.GetResult(t, 0) // records the error
		return nil
	}
	vs := make([]Value, n)
	for i := range vs {
		vs[i] = b.GetResult(t, i)
	}
	return vs
}

// TupleTypes are the result types of the region instruction v, or nil when
// v is a plain value.
func (b *Builder) TupleTypes(v Value) []TensorType {
	if int(v) < 0 || int(v) >= len(b.prog.Instrs) {
		return nil
	}
	return b.prog.Instrs[v].Tuple
}

func (b *Builder) isTuple(v Value) bool { return b.TupleTypes(v) != nil }

// operandTypes are the types of plain operands; a tuple operand fails.
func (b *Builder) operandTypes(op Op, vs []Value) ([]TensorType, bool) {
	if b.err != nil {
		return nil, false
	}
	types := make([]TensorType, len(vs))
	for i, v := range vs {
		if int(v) < 0 || int(v) >= len(b.prog.Instrs) {
			b.fail(op, "operand %%%d does not exist", v)
			return nil, false
		}
		if b.isTuple(v) {
			b.fail(op, "operand %d is a tuple: take it apart with GetResult", i)
			return nil, false
		}
		types[i] = b.Type(v)
	}
	return types, true
}

func (b *Builder) emitTuple(in Instr) Value {
	if b.err != nil {
		return 0
	}
	for _, t := range in.Tuple {
		if err := t.validate(); err != nil {
			return b.fail(in.Op, "%v", err)
		}
	}
	if in.Loc == "" {
		in.Loc = b.loc
	}
	b.prog.Instrs = append(b.prog.Instrs, in)
	return Value(len(b.prog.Instrs) - 1)
}

// checkRegion verifies a region and its signature.
func checkRegion(what string, r *Program, params, results []TensorType) error {
	if r == nil {
		return fmt.Errorf("the %s region is missing", what)
	}
	if err := Verify(r); err != nil {
		return fmt.Errorf("the %s region: %w", what, err)
	}
	if !sameTypes(r.Params, params) {
		return fmt.Errorf("the %s region takes %v, but is given %v", what, r.Params, params)
	}
	if got := r.ResultTypes(); !sameTypes(got, results) {
		return fmt.Errorf("the %s region returns %v, want %v", what, got, results)
	}
	return nil
}

func sameTypes(a, b []TensorType) bool {
	return slices.EqualFunc(a, b, func(x, y TensorType) bool { return x.DType == y.DType && x.Shape.Equal(y.Shape) })
}

func cloneTypes(ts []TensorType) []TensorType {
	out := make([]TensorType, len(ts))
	for i, t := range ts {
		out[i] = TensorType{DType: t.DType, Shape: t.Shape.Clone()}
	}
	return out
}

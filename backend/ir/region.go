package ir

import (
	"fmt"
	"math"
	"slices"
)

// Control flow: instructions that hold sub-programs (regions). A region is
// a Program of its own; it sees only its parameters, so whatever it uses
// from outside is passed as an operand. Region instructions yield a tuple of
// results, which GetResult takes apart; a tuple is never an operand of
// anything else, nor a program result.

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

// ReduceRegion folds inputs (N operands of one shape) over axes with body,
// a program from N accumulator scalars and N element scalars to N
// accumulator scalars, starting from the N init scalars. It yields the N
// results, each of the operand shape without axes.
func (b *Builder) ReduceRegion(body *Program, inputs, inits []Value, axes []int) Value {
	if b.err != nil {
		return 0
	}
	n := len(inputs)
	if n == 0 || len(inits) != n {
		return b.fail(OpReduceRegion, "%d operands and %d inits: want one init per operand, at least one", n, len(inits))
	}
	in, ok := b.operandTypes(OpReduceRegion, inputs)
	if !ok {
		return 0
	}
	acc, ok := b.operandTypes(OpReduceRegion, inits)
	if !ok {
		return 0
	}
	shape := in[0].Shape
	elems := make([]TensorType, n)
	for i := range n {
		if !in[i].Shape.Equal(shape) {
			return b.fail(OpReduceRegion, "operand %d is %v, operand 0 %v: operands share one shape", i, in[i], in[0])
		}
		if acc[i].Shape.Rank() != 0 {
			return b.fail(OpReduceRegion, "init %d is %v, want a scalar", i, acc[i])
		}
		elems[i] = TensorType{DType: in[i].DType}
	}
	if err := checkRegion("body", body, append(slices.Clone(acc), elems...), acc); err != nil {
		return b.fail(OpReduceRegion, "%v", err)
	}
	seen := make([]bool, shape.Rank())
	for _, a := range axes {
		if a < 0 || a >= shape.Rank() || seen[a] {
			return b.fail(OpReduceRegion, "axes %v invalid for %v", axes, in[0])
		}
		seen[a] = true
	}
	var out Shape
	for i, d := range shape {
		if !seen[i] {
			out = append(out, d)
		}
	}
	results := make([]TensorType, n)
	for i := range results {
		results[i] = TensorType{DType: acc[i].DType, Shape: out.Clone()}
	}
	ax := slices.Clone(axes)
	slices.Sort(ax)
	return b.emitTuple(Instr{Op: OpReduceRegion, Args: append(slices.Clone(inputs), inits...), Regions: []*Program{body},
		Tuple: results, Axes: ax})
}

// ReduceWith is the reduction a frontend reading StableHLO asks for: the
// fixed monoids (a body that adds, multiplies, takes the max or min, or
// ands or ors its two scalars) become OpReduce, the fast form every driver
// has, with a non-identity init folded in after; anything else becomes
// OpReduceRegion. It returns one value per operand.
func (b *Builder) ReduceWith(body *Program, inputs, inits []Value, axes []int) []Value {
	if b.err != nil {
		return nil
	}
	if len(inputs) == 1 && len(inits) == 1 {
		if kind, op, ok := MonoidOf(body); ok && b.Type(inputs[0]).DType == b.Type(inits[0]).DType {
			r := b.Reduce(inputs[0], kind, axes)
			if isMonoidIdentity(b, inits[0], kind) {
				return []Value{r}
			}
			return []Value{b.Binary(op, r, b.BroadcastInDim(inits[0], b.Type(r).Shape, []int{}))}
		}
	}
	return b.Results(b.ReduceRegion(body, inputs, inits, axes))
}

// MonoidOf recognises a reduction body that applies one of the fixed
// monoids to its two parameters, in either order.
func MonoidOf(body *Program) (ReduceKind, Op, bool) {
	if body == nil || len(body.Params) != 2 || len(body.Results) != 1 {
		return 0, 0, false
	}
	r := body.Instrs[body.Results[0]]
	if len(r.Args) != 2 {
		return 0, 0, false
	}
	x, y := body.Instrs[r.Args[0]], body.Instrs[r.Args[1]]
	if x.Op != OpParameter || y.Op != OpParameter || x.Param == y.Param {
		return 0, 0, false
	}
	kinds := map[Op]ReduceKind{OpAdd: ReduceSum, OpMul: ReduceProd, OpMax: ReduceMax, OpMin: ReduceMin}
	if body.Params[0].DType == Bool {
		kinds = map[Op]ReduceKind{OpAnd: ReduceAnd, OpOr: ReduceOr}
	}
	kind, ok := kinds[r.Op]
	return kind, r.Op, ok
}

// isMonoidIdentity reports whether v is a constant holding kind's identity, so
// that the fold needs no extra step.
func isMonoidIdentity(b *Builder, v Value, kind ReduceKind) bool {
	in := b.prog.Instrs[v]
	if in.Op != OpConstant || in.Type.Shape.Rank() != 0 {
		return false
	}
	want, err := EncodeScalar(in.Type.DType, map[ReduceKind]float64{ReduceSum: 0, ReduceProd: 1, ReduceAnd: 1, ReduceOr: 0,
		ReduceMax: math.Inf(-1), ReduceMin: math.Inf(1)}[kind])
	return err == nil && slices.Equal(want, in.Literal)
}

// SortRegion sorts inputs (N operands of one shape) together along dim,
// stably, ordered by cmp: a program from (lhs_1, rhs_1, ..., lhs_N, rhs_N)
// scalars to a bool scalar that is true when lhs goes before rhs. It yields
// the N sorted operands.
func (b *Builder) SortRegion(cmp *Program, dim int, inputs ...Value) Value {
	types, ok := b.operandTypes(OpSortRegion, inputs)
	if !ok {
		return 0
	}
	if len(types) == 0 {
		return b.fail(OpSortRegion, "nothing to sort")
	}
	params := make([]TensorType, 0, 2*len(types))
	for i, t := range types {
		if !t.Shape.Equal(types[0].Shape) {
			return b.fail(OpSortRegion, "operand %d is %v, operand 0 %v: operands share one shape", i, t, types[0])
		}
		params = append(params, TensorType{DType: t.DType}, TensorType{DType: t.DType})
	}
	if dim < 0 || dim >= types[0].Shape.Rank() {
		return b.fail(OpSortRegion, "dimension %d of %v", dim, types[0])
	}
	if err := checkRegion("comparator", cmp, params, []TensorType{{DType: Bool}}); err != nil {
		return b.fail(OpSortRegion, "%v", err)
	}
	return b.emitTuple(Instr{Op: OpSortRegion, Args: slices.Clone(inputs), Regions: []*Program{cmp}, Tuple: cloneTypes(types),
		Sort: &SortAttrs{Dim: dim}})
}

// SortWith is the sort a frontend reading StableHLO asks for: one integer
// or bool operand compared with LT or GT is OpSort (ascending or
// descending), the fast form every driver has; anything else (several
// operands, floats, whose NaNs and signed zeros a comparator orders its own
// way) is OpSortRegion. It returns one value per operand.
func (b *Builder) SortWith(cmp *Program, dim int, inputs ...Value) []Value {
	if b.err != nil {
		return nil
	}
	if len(inputs) == 1 {
		if d := b.Type(inputs[0]).DType; d.IsInt() || d == Bool {
			if desc, ok := FixedOrderOf(cmp); ok {
				return []Value{b.Sort(inputs[0], SortAttrs{Dim: dim, Descending: desc})}
			}
		}
	}
	return b.Results(b.SortRegion(cmp, dim, inputs...))
}

// FixedOrderOf recognises a comparator of one operand that is lhs < rhs
// (ascending) or lhs > rhs (descending).
func FixedOrderOf(cmp *Program) (descending, ok bool) {
	if cmp == nil || len(cmp.Params) != 2 || len(cmp.Results) != 1 {
		return false, false
	}
	r := cmp.Instrs[cmp.Results[0]]
	if r.Op != OpCompare || len(r.Args) != 2 {
		return false, false
	}
	x, y := cmp.Instrs[r.Args[0]], cmp.Instrs[r.Args[1]]
	if x.Op != OpParameter || y.Op != OpParameter {
		return false, false
	}
	switch {
	case x.Param == 0 && y.Param == 1 && r.Compare == CmpLT, x.Param == 1 && y.Param == 0 && r.Compare == CmpGT:
		return false, true
	case x.Param == 0 && y.Param == 1 && r.Compare == CmpGT, x.Param == 1 && y.Param == 0 && r.Compare == CmpLT:
		return true, true
	}
	return false, false
}

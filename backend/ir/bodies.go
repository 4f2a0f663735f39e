package ir

import "slices"

// Bodies as StableHLO writes them. jax gives scatter, reduce_window and
// select_and_scatter a body region. The IR has both forms: the fixed ones
// (a scatter kind, a monoid, max or min pooling's gradient), which every
// driver runs fast, and the region ones, which run any body. The *With
// helpers recognise a body as a fixed form and fall back to the region form.

// ScatterWith is a scatter whose combiner is body, a program of two scalars
// (the operand's element, then the update) to one: returning the update is
// replace; adding, multiplying, or the max or min of the two are the other
// kinds.
func (b *Builder) ScatterWith(body *Program, operand, indices, updates Value, dims ScatterDims) Value {
	if b.err != nil {
		return 0
	}
	kind, ok := scatterKindOf(body)
	if !ok || (kind != ScatterReplace && !b.Type(operand).DType.IsNumeric()) {
		return b.GetResult(b.ScatterRegion(body, []Value{operand}, indices, []Value{updates}, dims), 0)
	}
	dims.Kind = kind
	return b.Scatter(operand, indices, updates, dims)
}

func scatterKindOf(body *Program) (ScatterKind, bool) {
	if body == nil || len(body.Params) != 2 || len(body.Results) != 1 {
		return 0, false
	}
	r := body.Instrs[body.Results[0]]
	if r.Op == OpParameter && r.Param == 1 {
		return ScatterReplace, true
	}
	kind, _, ok := MonoidOf(body)
	switch {
	case !ok:
		return 0, false
	case kind == ReduceSum:
		return ScatterAdd, true
	case kind == ReduceProd:
		return ScatterMul, true
	case kind == ReduceMax:
		return ScatterMax, true
	case kind == ReduceMin:
		return ScatterMin, true
	}
	return 0, false
}

// ReduceWindowWith is a reduce_window whose fold is body from init. A sum,
// max or min is OpReduceWindow, with an init other than the identity folded
// in after (a sum's only where no window reaches into the padding, whose
// positions each count the init once more); anything else is
// OpReduceWindowRegion.
func (b *Builder) ReduceWindowWith(body *Program, x, init Value, w WindowAttrs) Value {
	if b.err != nil {
		return 0
	}
	kind, op, ok := MonoidOf(body)
	fixed := ok && b.Type(x).DType.IsNumeric() && (kind == ReduceSum || kind == ReduceMax || kind == ReduceMin)
	if fixed && kind == ReduceSum && !isMonoidIdentity(b, init, kind) {
		for _, p := range w.Padding {
			fixed = fixed && p == [2]int{}
		}
	}
	if !fixed {
		return b.GetResult(b.ReduceWindowRegion(body, []Value{x}, []Value{init}, w), 0)
	}
	r := b.ReduceWindow(x, kind, w)
	if b.err != nil || isMonoidIdentity(b, init, kind) {
		return r
	}
	return b.Binary(op, r, b.BroadcastInDim(init, b.Type(r).Shape, []int{}))
}

// SelectAndScatterWith is a select_and_scatter whose select body compares
// its two scalars with GE (the max's gradient) or LE (the min's) and whose
// scatter body adds, from a zero init, as jax writes a max pool's gradient.
func (b *Builder) SelectAndScatterWith(sel, scatter *Program, operand, source, init Value, w WindowAttrs) Value {
	if b.err != nil {
		return 0
	}
	dir, ok := selectDirOf(sel)
	kind, _, isMonoid := MonoidOf(scatter)
	if !ok || !isMonoid || kind != ReduceSum || !isMonoidIdentity(b, init, ReduceSum) || !b.Type(operand).DType.IsNumeric() {
		return b.GetResult(b.SelectAndScatterRegion(sel, scatter, operand, source, init, w), 0)
	}
	return b.SelectAndScatter(operand, source, dir, w)
}

func selectDirOf(sel *Program) (CompareDir, bool) {
	if sel == nil || len(sel.Params) != 2 || len(sel.Results) != 1 {
		return 0, false
	}
	r := sel.Instrs[sel.Results[0]]
	if r.Op != OpCompare || len(r.Args) != 2 {
		return 0, false
	}
	x, y := sel.Instrs[r.Args[0]], sel.Instrs[r.Args[1]]
	if x.Op != OpParameter || y.Op != OpParameter || x.Param != 0 || y.Param != 1 {
		return 0, false
	}
	if r.Compare == CmpGE || r.Compare == CmpLE {
		return r.Compare, true
	}
	return 0, false
}

// ScatterRegion scatters N updates into N operands together (one indices
// tensor, one set of dimension numbers) by body, a program from the N
// operand scalars then the N update scalars to the N new operand scalars.
// Updates whose window leaves the operand are skipped, as OpScatter's are.
// It yields the N updated operands.
func (b *Builder) ScatterRegion(body *Program, operands []Value, indices Value, updates []Value, dims ScatterDims) Value {
	if b.err != nil {
		return 0
	}
	n := len(operands)
	if n == 0 || len(updates) != n {
		return b.fail(OpScatterRegion, "%d operands and %d updates: want one update per operand, at least one", n, len(updates))
	}
	ops, ok := b.operandTypes(OpScatterRegion, operands)
	if !ok {
		return 0
	}
	upd, ok := b.operandTypes(OpScatterRegion, updates)
	if !ok {
		return 0
	}
	idx, ok := b.operandTypes(OpScatterRegion, []Value{indices})
	if !ok {
		return 0
	}
	// The shapes follow OpScatter's rules, checked operand by operand.
	dims.Kind = ScatterReplace
	probe := NewBuilder()
	pi := probe.Parameter(idx[0])
	scalars := make([]TensorType, 0, 2*n)
	for i := range n {
		if !ops[i].Shape.Equal(ops[0].Shape) || !upd[i].Shape.Equal(upd[0].Shape) {
			return b.fail(OpScatterRegion, "operand %d %v and update %d %v differ in shape from operand 0 %v and update 0 %v", i, ops[i], i, upd[i], ops[0], upd[0])
		}
		probe.Scatter(probe.Parameter(ops[i]), pi, probe.Parameter(upd[i]), dims)
		if probe.err != nil {
			return b.fail(OpScatterRegion, "%v", probe.err)
		}
		scalars = append(scalars, TensorType{DType: ops[i].DType})
	}
	for i := range n {
		scalars = append(scalars, TensorType{DType: upd[i].DType})
	}
	if err := checkRegion("update", body, scalars, scalars[:n]); err != nil {
		return b.fail(OpScatterRegion, "%v", err)
	}
	sd := ScatterDims{slices.Clone(dims.UpdateWindowDims), slices.Clone(dims.InsertedWindowDims), slices.Clone(dims.ScatterDimsToOperandDims), dims.IndexVectorDim, 0, dims.Unique}
	args := append(append(slices.Clone(operands), indices), updates...)
	return b.emitTuple(Instr{Op: OpScatterRegion, Args: args, Regions: []*Program{body}, Tuple: cloneTypes(ops), Scatter: &sd})
}

// ReduceWindowRegion slides the window w over N operands of one shape
// together, folding each window with body (as ReduceRegion's) from the N
// init scalars; positions in the padding hold the inits. It yields the N
// windowed results.
func (b *Builder) ReduceWindowRegion(body *Program, inputs, inits []Value, w WindowAttrs) Value {
	if b.err != nil {
		return 0
	}
	n := len(inputs)
	if n == 0 || len(inits) != n {
		return b.fail(OpReduceWindowRegion, "%d operands and %d inits: want one init per operand, at least one", n, len(inits))
	}
	in, ok := b.operandTypes(OpReduceWindowRegion, inputs)
	if !ok {
		return 0
	}
	acc, ok := b.operandTypes(OpReduceWindowRegion, inits)
	if !ok {
		return 0
	}
	out, wa, err := windowed(in[0], w)
	if err != nil {
		return b.fail(OpReduceWindowRegion, "%v", err)
	}
	elems := make([]TensorType, n)
	results := make([]TensorType, n)
	for i := range n {
		if !in[i].Shape.Equal(in[0].Shape) {
			return b.fail(OpReduceWindowRegion, "operand %d is %v, operand 0 %v: operands share one shape", i, in[i], in[0])
		}
		if acc[i].Shape.Rank() != 0 || acc[i].DType != in[i].DType {
			return b.fail(OpReduceWindowRegion, "init %d is %v, want a %v scalar (the padding holds it)", i, acc[i], in[i].DType)
		}
		elems[i] = TensorType{DType: in[i].DType}
		results[i] = TensorType{DType: in[i].DType, Shape: out.Clone()}
	}
	if err := checkRegion("body", body, append(slices.Clone(elems), elems...), elems); err != nil {
		return b.fail(OpReduceWindowRegion, "%v", err)
	}
	return b.emitTuple(Instr{Op: OpReduceWindowRegion, Args: append(slices.Clone(inputs), inits...), Regions: []*Program{body},
		Tuple: results, Window: &wa})
}

// SelectAndScatterRegion picks one position of operand in each window (by
// sel: true keeps the current pick x over a later y) and folds the window's
// source value into the result there with scatter, from init everywhere.
// It yields the one result, of the operand's type.
func (b *Builder) SelectAndScatterRegion(sel, scatter *Program, operand, source, init Value, w WindowAttrs) Value {
	types, ok := b.operandTypes(OpSelectAndScatterRegion, []Value{operand, source, init})
	if !ok {
		return 0
	}
	to, ts, ti := types[0], types[1], types[2]
	out, wa, err := windowed(to, w)
	if err != nil {
		return b.fail(OpSelectAndScatterRegion, "%v", err)
	}
	if !ts.Shape.Equal(out) || ti.Shape.Rank() != 0 || ti.DType != ts.DType {
		return b.fail(OpSelectAndScatterRegion, "source %v must have the windowed shape %v of operand %v, and init %v be a scalar of its dtype", ts, out, to, ti)
	}
	x := TensorType{DType: to.DType}
	if err := checkRegion("select", sel, []TensorType{x, x}, []TensorType{{DType: Bool}}); err != nil {
		return b.fail(OpSelectAndScatterRegion, "%v", err)
	}
	s := TensorType{DType: ts.DType}
	if err := checkRegion("scatter", scatter, []TensorType{s, s}, []TensorType{s}); err != nil {
		return b.fail(OpSelectAndScatterRegion, "%v", err)
	}
	return b.emitTuple(Instr{Op: OpSelectAndScatterRegion, Args: []Value{operand, source, init}, Regions: []*Program{sel, scatter},
		Tuple: []TensorType{{DType: ts.DType, Shape: to.Shape.Clone()}}, Window: &wa})
}

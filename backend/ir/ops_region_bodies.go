package ir

import (
	"fmt"
	"math"
	"slices"
)

// The ops with a body: reduce, sort, scatter, reduce_window and
// select_and_scatter whose combining function is a region. Each *With
// method recognises the bodies of the fixed kinds and emits the op
// without a region instead.

// regionBodyOps combine, compare or select with a region.
var regionBodyOps = opDefs{
	// OpReduceRegion folds N operands of one shape over Axes with the body
	// Regions[0]: (acc_1..acc_N, x_1..x_N) scalars -> acc_1..acc_N, from the
	// N init scalars Args[N:]; it yields N results. Variadic reductions (an
	// argmax as jax writes it) need it; ReduceWith recognises the fixed
	// monoids and emits OpReduce instead.
	{OpReduceRegion, OpInfo{Name: "reduce_region", Arity: Variadic, Attrs: []string{"Regions", "Tuple", "Axes"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if len(in.Regions) != 1 || len(a)%2 != 0 {
			return 0, fmt.Errorf("%d operands and %d regions, want operands and inits in pairs and one body", len(a), len(in.Regions))
		}
		n := len(a) / 2
		return b.ReduceRegion(in.Regions[0], a[:n], a[n:], in.Axes), nil
	}}},
	// OpSortRegion sorts N operands of one shape together along Sort.Dim,
	// stably, by the comparator Regions[0]: (lhs_1, rhs_1, ..., lhs_N,
	// rhs_N) scalars -> bool, true when lhs goes first; it yields the N
	// sorted operands. SortWith recognises the fixed orders and emits OpSort.
	{OpSortRegion, OpInfo{Name: "sort_region", Arity: Variadic, Attrs: []string{"Regions", "Tuple", "Sort"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if len(in.Regions) != 1 || in.Sort == nil {
			return 0, missing("the comparator or the sort dimension")
		}
		return b.SortRegion(in.Regions[0], in.Sort.Dim, a...), nil
	}}},
	// OpScatterRegion is scatter with an update body: Args N operands, the
	// indices, N updates (Scatter's dimension numbers; Kind unused);
	// Regions[0]: (operand_1..operand_N, update_1..update_N) scalars ->
	// operand_1..operand_N; it yields the N updated operands. ScatterWith
	// recognises the fixed kinds and emits OpScatter instead.
	{OpScatterRegion, OpInfo{Name: "scatter_region", Arity: Variadic, Attrs: []string{"Regions", "Tuple", "Scatter"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if len(in.Regions) != 1 || len(a)%2 != 1 || in.Scatter == nil {
			return 0, fmt.Errorf("%d operands and %d regions, want N operands, the indices, N updates, the body and dimension numbers", len(a), len(in.Regions))
		}
		n := len(a) / 2
		return b.ScatterRegion(in.Regions[0], a[:n], a[n], a[n+1:], *in.Scatter), nil
	}}},
	// OpReduceWindowRegion is reduce_window with a body: Args N operands of
	// one shape then N init scalars, Window; Regions[0] as OpReduceRegion's;
	// padding positions hold the init values. ReduceWindowWith recognises
	// the fixed monoids and emits OpReduceWindow.
	{OpReduceWindowRegion, OpInfo{Name: "reduce_window_region", Arity: Variadic, Attrs: []string{"Regions", "Tuple", "Window"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if len(in.Regions) != 1 || len(a)%2 != 0 || in.Window == nil {
			return 0, fmt.Errorf("%d operands and %d regions, want operands and inits in pairs, one body and a window", len(a), len(in.Regions))
		}
		n := len(a) / 2
		return b.ReduceWindowRegion(in.Regions[0], a[:n], a[n:], *in.Window), nil
	}}},
	// OpSelectAndScatterRegion is select_and_scatter with bodies: Args the
	// operand, the source and the init scalar, Window; Regions[0] the
	// select (x, y scalars -> bool, true keeps x), Regions[1] the scatter
	// (acc, source scalars -> acc); it yields one result. Each window's
	// selection starts from its first position inside the operand and runs
	// in row-major order; padding positions are never selected.
	// SelectAndScatterWith recognises max and min pooling's gradients and
	// emits OpSelectAndScatter.
	{OpSelectAndScatterRegion, OpInfo{Name: "select_and_scatter_region", Arity: 3, Attrs: []string{"Regions", "Tuple", "Window"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if len(in.Regions) != 2 || in.Window == nil {
			return 0, fmt.Errorf("%d regions, want select and scatter, and a window", len(in.Regions))
		}
		return b.SelectAndScatterRegion(in.Regions[0], in.Regions[1], a[0], a[1], a[2], *in.Window), nil
	}}},
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

package ir

import "fmt"

// Bodies as StableHLO writes them. jax gives scatter, reduce_window and
// select_and_scatter a body region; the IR keeps their fixed forms, which
// every driver runs fast, and these helpers recognise a body as one of them.
// A body that is none of them is refused with an error naming the op, so a
// frontend reports it at compile time rather than computing something else.

// ScatterWith is a scatter whose combiner is body, a program of two scalars
// (the operand's element, then the update) to one: returning the update is
// replace; adding, multiplying, or the max or min of the two are the other
// kinds.
func (b *Builder) ScatterWith(body *Program, operand, indices, updates Value, dims ScatterDims) Value {
	if b.err != nil {
		return 0
	}
	kind, ok := scatterKindOf(body)
	if !ok {
		return b.fail(OpScatter, "the update body is not one of the forms this IR has (replace, add, multiply, max, min):\n%s", bodyText(body))
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

// ReduceWindowWith is a reduce_window whose fold is body (one of the fixed
// monoids) from init; an init other than the monoid's identity is folded
// in after.
func (b *Builder) ReduceWindowWith(body *Program, x, init Value, w WindowAttrs) Value {
	if b.err != nil {
		return 0
	}
	kind, op, ok := MonoidOf(body)
	if !ok {
		return b.fail(OpReduceWindow, "the fold body is not one of the monoids this IR has (add, multiply, max, min, and, or):\n%s", bodyText(body))
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
	if !ok {
		return b.fail(OpSelectAndScatter, "the select body is not x >= y or x <= y:\n%s", bodyText(sel))
	}
	if kind, _, ok := MonoidOf(scatter); !ok || kind != ReduceSum {
		return b.fail(OpSelectAndScatter, "the scatter body is not an add:\n%s", bodyText(scatter))
	}
	if !isMonoidIdentity(b, init, ReduceSum) {
		return b.fail(OpSelectAndScatter, "the init is not zero")
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

func bodyText(p *Program) string {
	if p == nil {
		return "(no body)"
	}
	return fmt.Sprint(p)
}

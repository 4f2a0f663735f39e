package metal

import (
	"math"
	"slices"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
	"github.com/metalplug/metalplug/backend/ir"
)

func init() { registerTupleLowering(lowerScatterRegion, ir.OpScatterRegion) }

// lowerScatterRegion is scatter with an update body, as jax writes
// scatters of several operands together (each with its own body), of bools
// (or, and), and bodies that choose between the operand and the update by
// a comparison. When each result of the body reads only its own operand
// and update, each operand is scattered on its own, by the fixed form its
// body is (scatterBodyOf): replace, keep, a monoid, or a choice. Updates
// apply in the IR's order; a replace keeps the last, a monoid's order does
// not matter (but for float rounding), and a choice's winner is found
// exactly (scatterChoice). Integer data pass through scatterND as float32
// (see scatterKind): only what is exact there runs on the GPU. Any other
// elementwise body runs on the GPU too: over whole tensors where the
// indices are unique (scatterRounds, one round), applied once per hit
// where it reads the operand alone (scatterRepeated), and for float data
// in rounds of distinct positions, for any data (scatterRounds): a position is hit at
// most once per index vector, so these unroll once per index vector, up to
// maxRepeats.
func lowerScatterRegion(l *lowering, in ir.Instr, args []val) ([]val, error) {
	n := (len(args) - 1) / 2
	ops, idx, upds := args[:n], args[n], args[n+1:]
	body := in.Regions[0]
	parts := resultParts(in)
	if parts[0].empty {
		return parts, nil
	}
	if upds[0].empty { // nothing to scatter
		for i := range parts {
			parts[i].t = l.identity(ops[i].t)
		}
		return parts, nil
	}
	forms := make([]scatterBody, n)
	var err error
	if !separable(body, n) {
		err = fallback(in.Op, "a body of %d operands whose results read each other's: only bodies that update each operand on its own are lowered", n)
	}
	for i := range n {
		if err != nil {
			break
		}
		forms[i], err = scatterBodyOf(body, i, n, ops[i].typ.DType, upds[0].typ.Shape.Size())
	}
	if err != nil {
		vectors := indexVectors(upds[0].typ, in.Scatter)
		_, elementwise := inlinable(body, allOf(n))
		switch {
		case elementwise && in.Scatter.Unique:
			return l.scatterRounds(in, ops, idx, upds, parts, 1) // each update meets its element once
		case applied(body, n) && vectors <= maxRepeats:
			return l.scatterRepeated(in, ops, idx, upds, parts, vectors)
		case elementwise && vectors <= maxRepeats && upds[0].typ.Shape.Size() <= maxRankedUpdates:
			return l.scatterRounds(in, ops, idx, upds, parts, vectors)
		}
		return nil, err
	}
	st, err := l.scatterSites(in.Op, ops[0].typ, idx.typ, upds[0].typ, idx.t, in.Scatter)
	if err != nil {
		return nil, err
	}
	var last tensor // the sites of the last writers, for replace
	for i, f := range forms {
		var r tensor
		switch {
		case f.keep:
			r = l.identity(ops[i].t)
		case f.choice != nil:
			r, err = l.scatterChoice(st, ops[i], l.flatUpdates(st, upds[i]), *f.choice)
		default:
			lin := st.lin
			if f.kind == ir.ScatterReplace {
				if !last.Valid() {
					if last, err = l.lastWriters(in.Op, st); err != nil {
						return nil, err
					}
				}
				lin = last
			}
			r, err = l.scatterKind(in.Op, st, lin, ops[i], l.flatUpdates(st, upds[i]), f.kind)
			if err == nil && (f.kind == ir.ScatterAdd || f.kind == ir.ScatterMul) {
				r, err = l.roundHalf(r, ops[i].typ.DType) // what lowerInstr does for scatter
			}
		}
		if err != nil {
			return nil, err
		}
		parts[i].t = r
	}
	return parts, nil
}

// maxRepeats bounds the index vectors of a scatter whose body is applied
// once per hit (scatterRepeated, scatterRounds), which unroll once per
// index vector: a position is hit at most once by each.
const maxRepeats = 256

// maxRankedUpdates bounds the update elements scatterRounds ranks, by a
// square comparison of their positions.
const maxRankedUpdates = 2048

// indexVectors is the number of index vectors of a scatter whose updates
// have type u: the elements of the updates' scatter (not window) dims.
func indexVectors(u ir.TensorType, s *ir.ScatterDims) int {
	n := 1
	for d, size := range u.Shape {
		if !slices.Contains(s.UpdateWindowDims, d) {
			n *= size
		}
	}
	return n
}

// applied says whether each result of a scatter body of 2n parameters is
// an elementwise function of its own operand alone, the update unread
// (jax's x.at[i].apply(f)).
func applied(body *ir.Program, n int) bool {
	for i := range n {
		if _, ok := inlinable(body, []int{i}); !ok {
			return false
		}
		need := bodyNeeds(body, []int{i})
		for k, in := range body.Instrs {
			if need[k] && in.Op == ir.OpParameter && in.Param != i {
				return false
			}
		}
	}
	return true
}

// scatterRepeated applies a body that is a function f of the operand
// alone (applied) where indices may repeat: a position hit k times is
// f applied k times, as the IR's updates in order make it. The hits are
// counted by a scatter-add of ones (exact in float32: at most one per
// index vector), then f is applied to the whole operand once per possible
// hit (vectors times), each time kept only where the position was hit that
// often.
func (l *lowering) scatterRepeated(in ir.Instr, ops []val, idx val, upds []val, parts []val, vectors int) ([]val, error) {
	n := len(ops)
	body := in.Regions[0]
	st, err := l.scatterSites(in.Op, ops[0].typ, idx.typ, upds[0].typ, idx.t, in.Scatter)
	if err != nil {
		return nil, err
	}
	shape := ops[0].typ.Shape
	ft := ir.TensorType{DType: ir.F32, Shape: shape}
	hits, err := l.scatterKind(in.Op, st, st.lin, val{t: l.zeros(ft), typ: ft}, l.full(1, []int{st.total}, gpu.Float32), ir.ScatterAdd)
	if err != nil {
		return nil, err
	}
	params := make([]val, 2*n)
	copy(params, ops)
	for i, x := range ops {
		if x.typ.DType == ir.C64 {
			return nil, fallback(in.Op, "a body applied to complex64 operands with repeated indices")
		}
		cur := x
		for k := 1; k <= vectors; k++ {
			params[i] = cur
			r, err := l.inlineBody(body, params, shape, []int{i})
			if err != nil {
				return nil, err
			}
			hit := l.ge(hits, l.scalar(float64(k), gpu.Float32))
			cur = val{t: l.sel(hit, r[0].t, cur.t), typ: x.typ}
		}
		params[i] = x
		parts[i].t = cur.t
	}
	return parts, nil
}

// allOf is 0, 1, ..., n-1.
func allOf(n int) []int {
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return all
}

// scatterRounds applies any elementwise body to float data in the IR's
// order, in rounds of updates that meet distinct positions, each over the
// operands as the earlier rounds left them: gathered, the body over whole
// tensors, set in place (integers cut into exact pieces to go through
// gather and scatterND, which carry data as float32). Where the indices are unique (unique_indices,
// which jax sets for .at[] updates with unique or static indices) that is
// one round; otherwise each update element's rank among the earlier ones
// to its position is counted (a T x T comparison of the T update elements'
// positions, T at most maxRankedUpdates) and round r takes the updates of
// rank r, one round per index vector (a position is hit at most once by
// each).
func (l *lowering) scatterRounds(in ir.Instr, ops []val, idx val, upds []val, parts []val, rounds int) ([]val, error) {
	n := len(ops)
	body := in.Regions[0]
	st, err := l.scatterSites(in.Op, ops[0].typ, idx.typ, upds[0].typ, idx.t, in.Scatter)
	if err != nil {
		return nil, err
	}
	total := st.total
	sites := l.reshape(st.lin, []int{total})
	f32 := gpu.Float32
	var rank tensor
	if rounds > 1 {
		same := l.eq(l.reshape(sites, []int{total, 1}), l.reshape(sites, []int{1, total}))
		sq := ir.Shape{total, total}
		earlier := l.lt(l.iotaAlong(sq, 1, i32, total), l.iotaAlong(sq, 0, i32, total))
		rank = l.reshape(l.reduceSum(l.cast(l.land(same, earlier), f32), []int{1}), []int{total}) // exact: below maxRepeats
	}
	shape := ir.Shape{total}
	cur := make([]val, n)
	copy(cur, ops)
	params := make([]val, 2*n)
	for i := range n {
		params[n+i] = val{t: l.flatUpdates(st, upds[i]), typ: ir.TensorType{DType: upds[i].typ.DType, Shape: shape}}
	}
	for r := range rounds {
		for i, x := range cur {
			data := l.concat([]tensor{l.flat(x.t, x.typ), l.zeros(ir.TensorType{DType: x.typ.DType, Shape: ir.Shape{1}})}, 0)
			params[i] = val{t: l.gatherSites(data, sites, x.typ.DType), typ: ir.TensorType{DType: x.typ.DType, Shape: shape}}
		}
		vals, err := l.inlineBody(body, params, shape, allOf(n))
		if err != nil {
			return nil, err
		}
		// This round's updates go to their positions; the rest to the
		// dummy past the operand's end, which is dropped.
		lin := st.lin
		if rounds > 1 {
			mine := l.eq(rank, l.scalar(float64(r), f32))
			lin = l.reshape(l.sel(mine, sites, l.scalar(float64(st.n), i32)), []int{total, 1})
		}
		for i := range cur {
			t, err := l.scatterKind(in.Op, st, lin, cur[i], vals[i].t, ir.ScatterReplace)
			if err != nil {
				return nil, err
			}
			cur[i] = val{t: t, typ: ops[i].typ}
		}
	}
	for i := range parts {
		parts[i].t = cur[i].t
	}
	return parts, nil
}

// gatherSites is flat data (its dummy element last) at the int32
// positions sites, bit for bit.
func (l *lowering) gatherSites(data, sites tensor, d ir.DType) tensor {
	gather := func(t tensor) tensor { return l.g.Gather(t, sites, 0) }
	switch d {
	case ir.I32, ir.U32, ir.I64:
		return l.wideGather(data, gather)
	}
	return gather(data)
}

// scatterBody is the fixed form of one operand's update body.
type scatterBody struct {
	keep   bool           // the operand is kept: the body returns it
	kind   ir.ScatterKind // else replace or a monoid, unless choice
	choice *choice
}

// choice is a body select(compare(...), x, u) that keeps the operand x or
// takes the update u by a comparison of the two: the greater or the lesser
// wins, and on a tie the update (the later) or the one there. A comparison
// that holds for the operand (x > u ? x : u) is negated for the update,
// so an unordered pair (a NaN on either side) hands over: a NaN update is
// taken, and the next update replaces a NaN. One that holds for the update
// (x < u ? u : x) never takes a NaN update and never replaces a NaN.
type choice struct {
	greater, ties, nanHandsOver bool
}

// scatterBodyOf recognises result i of a scatter body of 2n parameters
// (the operands, then the updates) as a fixed form for data of dtype d,
// scattered from total update elements, or says why it runs on the CPU.
func scatterBodyOf(body *ir.Program, i, n int, d ir.DType, total int) (scatterBody, error) {
	op := ir.OpScatterRegion
	r := body.Instrs[body.Results[i]]
	if r.Op == ir.OpParameter {
		if r.Param == i {
			return scatterBody{keep: true}, nil
		}
		return scatterBody{kind: ir.ScatterReplace}, nil
	}
	wide := d == ir.I32 || d == ir.U32 || d == ir.I64
	exactIn := func(what string) error {
		return fallback(op, "%s of %v: MPSGraph's scatterND carries integer data as float32, exact only below 2^24", what, d)
	}
	if kind, ok := monoidOf(body, i, n); ok {
		switch {
		case d == ir.Bool && (kind == ir.ReduceOr || kind == ir.ReduceMax):
			return scatterBody{kind: ir.ScatterMax}, nil
		case d == ir.Bool:
			return scatterBody{kind: ir.ScatterMin}, nil
		case d == ir.C64 && kind != ir.ReduceSum:
			return scatterBody{}, fallback(op, "%v of complex64", kind)
		case wide:
			return scatterBody{}, exactIn(kind.String())
		case isNarrow(d) && kind == ir.ReduceProd:
			return scatterBody{}, exactIn("products") // a product of a few grows past 2^24
		case isNarrow(d) && kind == ir.ReduceSum && (total+1)<<(8*d.Size()) > maxOrdinal:
			return scatterBody{}, exactIn("sums of so many updates")
		}
		return scatterBody{kind: map[ir.ReduceKind]ir.ScatterKind{ir.ReduceSum: ir.ScatterAdd, ir.ReduceProd: ir.ScatterMul,
			ir.ReduceMax: ir.ScatterMax, ir.ReduceMin: ir.ScatterMin}[kind]}, nil
	}
	c, ok := choiceOf(body, i, n)
	switch {
	case !ok:
		return scatterBody{}, fallback(op, "an update body that is not replace, a monoid, or a choice between the operand and the update by a comparison")
	case wide:
		return scatterBody{}, exactIn("max and min")
	case !d.IsFloat(): // no NaN, and equal values are the same bits: max or min
		if c.greater {
			return scatterBody{kind: ir.ScatterMax}, nil
		}
		return scatterBody{kind: ir.ScatterMin}, nil
	case total+1 >= maxOrdinal:
		return scatterBody{}, fallback(op, "%d update elements: the choice is resolved with ordinals, which scatterND carries as float32", total)
	}
	return scatterBody{choice: &c}, nil
}

// choiceOf recognises result i of a body of 2n parameters as
// select(p, a, b), where a and b are the operand x (parameter i) and the
// update u (parameter n+i), one each, and p compares them (LT, LE, GT or
// GE), possibly under a not.
func choiceOf(body *ir.Program, i, n int) (choice, bool) {
	r := body.Instrs[body.Results[i]]
	if r.Op != ir.OpSelect {
		return choice{}, false
	}
	param := func(v ir.Value) int {
		if in := body.Instrs[v]; in.Op == ir.OpParameter && (in.Param == i || in.Param == n+i) {
			return in.Param
		}
		return -1
	}
	a, b := param(r.Args[1]), param(r.Args[2])
	if a < 0 || b < 0 || a == b {
		return choice{}, false
	}
	p := body.Instrs[r.Args[0]]
	negated := false
	if p.Op == ir.OpNot {
		negated, p = true, body.Instrs[p.Args[0]]
	}
	if p.Op != ir.OpCompare {
		return choice{}, false
	}
	q, s := param(p.Args[0]), param(p.Args[1])
	if q < 0 || s < 0 || q == s {
		return choice{}, false
	}
	// The comparison as cmp(x, u), and whether it holds for taking u.
	dir := p.Compare
	if q != i {
		dir = map[ir.CompareDir]ir.CompareDir{ir.CmpLT: ir.CmpGT, ir.CmpLE: ir.CmpGE, ir.CmpGT: ir.CmpLT, ir.CmpGE: ir.CmpLE}[dir]
	}
	takesU := (a == n+i) != negated // u is taken when cmp(x, u) holds
	switch dir {
	case ir.CmpLT, ir.CmpLE, ir.CmpGT, ir.CmpGE:
	default:
		return choice{}, false
	}
	if takesU {
		// x < u: u if greater; x <= u: also on a tie; x > u, x >= u: the
		// lesser. A NaN makes the comparison false: no hand-over.
		return choice{greater: dir == ir.CmpLT || dir == ir.CmpLE, ties: dir == ir.CmpLE || dir == ir.CmpGE}, true
	}
	// u unless cmp(x, u): !(x > u) takes u if it is greater or equal, or
	// either is NaN; !(x >= u) if greater, or NaN.
	return choice{greater: dir == ir.CmpGT || dir == ir.CmpGE, ties: dir == ir.CmpGT || dir == ir.CmpLT, nanHandsOver: true}, true
}

// scatterChoice applies a choice body to float data in the IR's order,
// exactly: at each position the result is one element, the operand or an
// update, and its number (0 the operand, k+1 update k) is found with
// scatter-max and min of numbers, which scatterND carries exactly (below
// 2^24), and gathers; the winning updates, one per position, are then set.
// The elements that can win at a position are, when a NaN hands over, those
// after its last NaN (which wins if nothing follows it), else all but the
// NaN updates (and a NaN operand wins); among them the greatest (or least)
// wins, and of equal ones (-0 and +0) the latest or the earliest.
func (l *lowering) scatterChoice(st scatterSites, x val, upd tensor, c choice) (tensor, error) {
	f32 := gpu.Float32
	to := x.typ
	data := l.concat([]tensor{l.flat(x.t, to), l.full(0, []int{1}, f32)}, 0) // the dummy position last
	m1 := []int{st.n + 1}
	lin := l.reshape(st.lin, []int{st.total})
	seq := l.add(l.ordinals(st), l.scalar(1, i32)) // update k is element k+1
	none, ordMode := -1.0, gpu.ScatterMax          // the latest wins a tie
	if !c.ties {
		none, ordMode = float64(st.total+1), gpu.ScatterMin // the earliest
	}
	worst, valMode := math.Inf(-1), gpu.ScatterMax
	if !c.greater {
		worst, valMode = math.Inf(1), gpu.ScatterMin
	}
	at := func(x tensor) tensor { return l.g.Gather(x, lin, 0) } // each update's position's value
	iconst := func(v float64) tensor { return l.scalar(v, i32) }
	xNaN, uNaN := l.isNaN(data), l.isNaN(upd)

	var xIn, uIn, nanLast, z tensor // which elements can win; where a NaN is last, and which
	if c.nanHandsOver {
		z = l.g.ScatterND(l.sel(xNaN, l.full(0, m1, i32), l.full(-1, m1, i32)), l.sel(uNaN, seq, iconst(-1)), st.lin, gpu.ScatterMax)
		lastAll := l.g.ScatterND(l.full(0, m1, i32), seq, st.lin, gpu.ScatterMax)
		nanLast = l.land(l.ge(z, iconst(0)), l.eq(z, lastAll))
		xIn = l.lt(z, iconst(0))
		uIn = l.gt(seq, at(z))
	} else {
		xIn = l.lnot(xNaN)
		uIn = l.lnot(uNaN)
	}
	best := l.g.ScatterND(l.sel(xIn, data, l.scalar(worst, f32)), l.sel(uIn, upd, l.scalar(worst, f32)), st.lin, valMode)
	xWins := l.land(xIn, l.eq(data, best))
	uWins := l.land(uIn, l.eq(upd, at(best)))
	w := l.g.ScatterND(l.sel(xWins, l.full(0, m1, i32), l.full(none, m1, i32)), l.sel(uWins, seq, iconst(none)), st.lin, ordMode)
	if c.nanHandsOver {
		w = l.sel(nanLast, z, w)
	} else {
		w = l.sel(xNaN, l.full(0, m1, i32), w)
	}
	chosen := l.eq(at(w), seq)
	sites := l.sel(l.reshape(chosen, []int{st.total, 1}), st.lin, iconst(float64(st.n)))
	out := l.g.ScatterND(data, upd, sites, gpu.ScatterSet)
	return l.toShape(l.slice(out, []int{0}, []int{st.n}, []int{1}), to), nil
}

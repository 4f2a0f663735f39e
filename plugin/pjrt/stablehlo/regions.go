package stablehlo

// Ops with regions: calls (inlined), control flow (while, case, if) and
// the ops with a scalar body (reduce, reduce_window, select_and_scatter,
// sort; scatter's is in shape.go).

import (
	"fmt"
	"slices"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// rematLimit is the most elements a captured constant may have to be
// rebuilt inside a while or case region rather than passed in.
const rematLimit = 1 << 12

// freeValues are the values used inside the regions but defined outside
// them, in order of first use.
func freeValues(regions ...*mlir.Region) []*mlir.Value {
	defined := map[*mlir.Value]bool{}
	var free []*mlir.Value
	seen := map[*mlir.Value]bool{}
	var walkRegion func(r *mlir.Region)
	walkRegion = func(r *mlir.Region) {
		for _, blk := range r.Blocks {
			for _, a := range blk.Args {
				defined[a] = true
			}
			for _, op := range blk.Ops {
				for _, o := range op.Operands {
					if !defined[o] && !seen[o] {
						seen[o] = true
						free = append(free, o)
					}
				}
				for _, sub := range op.Regions {
					walkRegion(sub)
				}
				for _, r := range op.Results {
					defined[r] = true
				}
			}
		}
	}
	for _, r := range regions {
		walkRegion(r)
	}
	// A value used before its definition inside the regions is not free.
	out := free[:0]
	for _, v := range free {
		if !defined[v] {
			out = append(out, v)
		}
	}
	return out
}

// isRematConstant reports whether v is a constant small enough to rebuild
// in a region instead of passing it in (any size in a scalar body, which
// has no other way).
func isRematConstant(v *mlir.Value, anySize bool) bool {
	if v.Op == nil || v.Op.Name != "vhlo.constant_v1" || len(v.Op.Results) != 1 {
		return false
	}
	if anySize {
		return true
	}
	t, ok := v.Type.(*mlir.TensorType)
	return ok && t.NumElements() >= 0 && t.NumElements() <= rematLimit
}

// captures splits a region's free values into constants to rebuild inside
// and values to pass in.
func captures(regions ...*mlir.Region) (remat, passed []*mlir.Value) {
	for _, v := range freeValues(regions...) {
		if isRematConstant(v, false) {
			remat = append(remat, v)
		} else {
			passed = append(passed, v)
		}
	}
	return remat, passed
}

// region builds r's block as a program whose parameters are the block's
// arguments, then the passed captures; remat constants are rebuilt inside.
// body is set for the scalar bodies, where a capture of anything but a
// constant is an error. carry returns the passed captures, unchanged,
// after the block's own results (a while body).
func (e *env) region(owner *mlir.Operation, r *mlir.Region, remat, passed []*mlir.Value, body bool, carry bool) (*ir.Program, error) {
	if len(r.Blocks) != 1 {
		return nil, unsupported(owner, "a region of %d blocks", len(r.Blocks))
	}
	blk := r.Blocks[0]
	var sub *env
	if body {
		sub = newEnv(e.t, owner)
	} else {
		sub = newEnv(e.t, nil)
	}
	for i, a := range blk.Args {
		t, err := tensorType(owner, a.Type, fmt.Sprintf("region argument %d", i))
		if err != nil {
			return nil, err
		}
		sub.vals[a] = sub.b.Parameter(t)
	}
	var capParams []ir.Value
	for _, v := range passed {
		p := sub.b.Parameter(e.b.Type(e.vals[v]))
		sub.vals[v] = p
		capParams = append(capParams, p)
	}
	for _, v := range remat {
		if err := sub.op(v.Op); err != nil {
			return nil, err
		}
	}
	results, err := sub.block(owner, blk)
	if err != nil {
		return nil, err
	}
	if carry {
		results = append(results, capParams...)
	}
	if len(results) == 0 {
		if body {
			return nil, unsupported(owner, "a body that returns nothing")
		}
		// A branch that only has effects (a jax.debug.print under cond)
		// returns a token, as IR regions return something; branches
		// drops it.
		results = []ir.Value{sub.b.Constant(tokenType, nil)}
	}
	p, err := sub.b.Build(results...)
	if err != nil {
		return nil, invalid(owner, "%v", err)
	}
	return p, nil
}

// scalarBody builds region i of op, a body of scalars with a fixed
// signature: only constants may be captured, rebuilt inside.
func (e *env) scalarBody(op *mlir.Operation, i int) (*ir.Program, error) {
	if i >= len(op.Regions) {
		return nil, invalid(op, "has %d regions, want at least %d", len(op.Regions), i+1)
	}
	var remat []*mlir.Value
	for _, v := range freeValues(op.Regions[i]) {
		if !isRematConstant(v, true) {
			return nil, unsupported(op, "its body uses a value computed outside it (%s); only constants can be captured by the body of %s", describeValue(v), op.Name)
		}
		remat = append(remat, v)
	}
	return e.region(op, op.Regions[i], remat, nil, true, false)
}

// passedValues are the IR values of captures passed into a region.
func (e *env) passedValues(op *mlir.Operation, passed []*mlir.Value) ([]ir.Value, error) {
	vs := make([]ir.Value, len(passed))
	for i, v := range passed {
		x, err := e.value(op, v)
		if err != nil {
			return nil, err
		}
		vs[i] = x
	}
	return vs, nil
}

// while carries the values its regions capture through the loop
// unchanged, after the loop's own.
func while(e *env, op *mlir.Operation) ([]ir.Value, error) {
	if len(op.Regions) != 2 {
		return nil, invalid(op, "has %d regions, want cond and body", len(op.Regions))
	}
	init, err := e.operands(op)
	if err != nil {
		return nil, err
	}
	remat, passed := captures(op.Regions...)
	extra, err := e.passedValues(op, passed)
	if err != nil {
		return nil, err
	}
	cond, err := e.region(op, op.Regions[0], remat, passed, false, false)
	if err != nil {
		return nil, err
	}
	body, err := e.region(op, op.Regions[1], remat, passed, false, true)
	if err != nil {
		return nil, err
	}
	outs := e.b.Results(e.b.While(cond, body, append(init, extra...)...))
	if len(outs) < len(init) {
		return nil, nil // the builder's error says why
	}
	return outs[:len(init)], nil
}

// caseOp passes what its branches capture to each.
func caseOp(e *env, op *mlir.Operation) ([]ir.Value, error) {
	idx, err := oneOperand(e, op)
	if err != nil {
		return nil, err
	}
	b := e.b
	if t := b.Type(idx); t.DType != ir.I32 {
		if !t.DType.IsInt() {
			return nil, invalid(op, "the branch index is %v", t)
		}
		// Out of range means the last branch; a wider index that wraps
		// into range would not be, so it is clamped first.
		if t.DType == ir.I64 || t.DType == ir.U32 {
			idx = b.Binary(ir.OpMin, b.Binary(ir.OpMax, b.Convert(idx, ir.I64), intConst(b, ir.I64, nil, -1)), intConst(b, ir.I64, nil, int64(len(op.Regions))))
		}
		idx = b.Convert(idx, ir.I32)
	}
	return branches(e, op, idx, op.Regions)
}

// ifOp is a case on !pred: true runs region 0, false region 1.
func ifOp(e *env, op *mlir.Operation) ([]ir.Value, error) {
	pred, err := oneOperand(e, op)
	if err != nil {
		return nil, err
	}
	if len(op.Regions) != 2 {
		return nil, invalid(op, "has %d regions, want true and false branches", len(op.Regions))
	}
	idx := e.b.Convert(e.b.Unary(ir.OpNot, pred), ir.I32)
	return branches(e, op, idx, op.Regions)
}

func branches(e *env, op *mlir.Operation, idx ir.Value, regions []*mlir.Region) ([]ir.Value, error) {
	if len(regions) == 0 {
		return nil, invalid(op, "has no branches")
	}
	remat, passed := captures(regions...)
	args, err := e.passedValues(op, passed)
	if err != nil {
		return nil, err
	}
	progs := make([]*ir.Program, len(regions))
	for i, r := range regions {
		if len(r.Blocks) == 1 && len(r.Blocks[0].Args) > 0 {
			return nil, invalid(op, "branch %d takes arguments", i)
		}
		if progs[i], err = e.region(op, r, remat, passed, false, false); err != nil {
			return nil, err
		}
	}
	outs := e.b.Results(e.b.Case(idx, progs, args...))
	if len(op.Results) == 0 {
		return nil, nil // the branches' token (region)
	}
	return outs, nil
}

// call inlines the callee (see the package doc for why).
func call(e *env, op *mlir.Operation) ([]ir.Value, error) {
	name, err := stringAttr(op, "callee")
	if err != nil {
		return nil, err
	}
	return e.inline(op, name)
}

// composite calls its decomposition, the private function that says what
// the composite computes (jax writes chlo.cosh and chlo.top_k so).
func composite(e *env, op *mlir.Operation) ([]ir.Value, error) {
	name, err := stringAttr(op, "decomposition")
	if err != nil {
		return nil, err
	}
	return e.inline(op, name)
}

// maxInlineDepth bounds nested calls (recursion is refused by name first).
const maxInlineDepth = 256

func (e *env) inline(op *mlir.Operation, name string) ([]ir.Value, error) {
	fn, ok := e.t.funcs[name]
	if !ok {
		return nil, invalid(op, "calls %q, which the module does not define", name)
	}
	if slices.Contains(e.t.inlined, name) {
		return nil, unsupported(op, "a recursive call of %q", name)
	}
	if len(e.t.inlined) >= maxInlineDepth {
		return nil, unsupported(op, "calls nested more than %d deep", maxInlineDepth)
	}
	args, err := e.operands(op)
	if err != nil {
		return nil, err
	}
	blk, err := funcBlock(fn)
	if err != nil {
		return nil, err
	}
	if len(blk.Args) != len(args) {
		return nil, invalid(op, "passes %d arguments to %q, which takes %d", len(args), name, len(blk.Args))
	}
	for i, a := range blk.Args {
		want, err := tensorType(fn, a.Type, fmt.Sprintf("argument %d", i))
		if err != nil {
			return nil, err
		}
		if got := e.b.Type(args[i]); got.DType != want.DType || !got.Shape.Equal(want.Shape) {
			return nil, invalid(op, "passes %v as argument %d of %q, which takes %v", got, i, name, want)
		}
		e.vals[a] = args[i]
	}
	e.t.inlined = append(e.t.inlined, name)
	// The callee's ops are translated into this env: they are a function's,
	// isolated from above, so they only see its arguments.
	outer := e.body
	e.body = nil
	results, err := e.block(fn, blk)
	e.body = outer
	e.t.inlined = e.t.inlined[:len(e.t.inlined)-1]
	if err != nil {
		return nil, err
	}
	return results, nil
}

// promote converts each of the i-th values of lists to the element type
// of op's i-th result: StableHLO lets the bodies of reduce, reduce_window,
// scatter and select_and_scatter compute in a wider ("promotable") type
// than their inputs, and the result has that type.
func promote(e *env, op *mlir.Operation, lists ...[]ir.Value) error {
	for _, l := range lists {
		if len(l) > len(op.Results) {
			return invalid(op, "has %d results for %d operands", len(op.Results), len(l))
		}
		for i := range l {
			rt, err := resultType(op, i)
			if err != nil {
				return err
			}
			if d := e.b.Type(l[i]).DType; d != rt.DType {
				if d == ir.C64 || rt.DType == ir.C64 || heldUnsigned(op.Results[i].Type) {
					return unsupported(op, "a body computing in %v over %v", rt.DType, d)
				}
				l[i] = e.b.Convert(l[i], rt.DType)
			}
		}
	}
	return nil
}

// reduce is reduce_v1 by ReduceWith: the fixed monoids when the body is
// one, the region form otherwise (jax's argmax).
func reduce(e *env, op *mlir.Operation) ([]ir.Value, error) {
	vs, err := e.operands(op)
	if err != nil {
		return nil, err
	}
	if len(vs) == 0 || len(vs)%2 != 0 {
		return nil, invalid(op, "has %d operands, want N inputs then N inits", len(vs))
	}
	n := len(vs) / 2
	if err := promote(e, op, vs[:n], vs[n:]); err != nil {
		return nil, err
	}
	dims, err := ints(op, "dimensions")
	if err != nil {
		return nil, err
	}
	body, err := e.scalarBody(op, 0)
	if err != nil {
		return nil, err
	}
	return e.b.ReduceWith(body, vs[:n], vs[n:], dims), nil
}

// reduceWindow maps base dilation to interior padding with the init value
// (StableHLO defines reduce_window on the input padded so), and negative
// padding to a crop; window dilation has no IR form.
func reduceWindow(e *env, op *mlir.Operation) ([]ir.Value, error) {
	vs, err := e.operands(op)
	if err != nil {
		return nil, err
	}
	if len(vs) == 0 || len(vs)%2 != 0 {
		return nil, invalid(op, "has %d operands, want N inputs then N inits", len(vs))
	}
	n := len(vs) / 2
	inputs, inits := vs[:n], vs[n:]
	if err := promote(e, op, inputs, inits); err != nil {
		return nil, err
	}
	b := e.b
	r := b.Type(inputs[0]).Shape.Rank()
	var w ir.WindowAttrs
	if w.Dims, err = ints(op, "window_dimensions"); err != nil {
		return nil, err
	}
	if w.Strides, err = optInts(op, "window_strides", filled(r, 1)); err != nil {
		return nil, err
	}
	if w.Padding, err = pairs(op, "padding", r); err != nil {
		return nil, err
	}
	baseDil, err := optInts(op, "base_dilations", filled(r, 1))
	if err != nil {
		return nil, err
	}
	winDil, err := optInts(op, "window_dilations", filled(r, 1))
	if err != nil {
		return nil, err
	}
	if len(baseDil) != r || len(winDil) != r {
		return nil, invalid(op, "dilations %v and %v for rank %d", baseDil, winDil, r)
	}
	dilated := false
	for _, d := range winDil {
		dilated = dilated || d != 1
	}
	explicit := dilated
	for i := range r {
		explicit = explicit || baseDil[i] != 1 || w.Padding[i][0] < 0 || w.Padding[i][1] < 0
	}
	if explicit {
		low, high, interior := make([]int, r), make([]int, r), make([]int, r)
		for i := range r {
			low[i], high[i], interior[i] = w.Padding[i][0], w.Padding[i][1], baseDil[i]-1
		}
		for i := range inputs {
			inputs[i] = b.Pad(inputs[i], inits[i], low, high, interior)
		}
		w.Padding = make([][2]int, r)
	}
	body, err := e.scalarBody(op, 0)
	if err != nil {
		return nil, err
	}
	if dilated {
		return dilatedWindow(e, op, body, inputs, inits, w, winDil)
	}
	if n == 1 {
		return one(b.ReduceWindowWith(body, inputs[0], inits[0], w)), nil
	}
	return b.Results(b.ReduceWindowRegion(body, inputs, inits, w)), nil
}

// maxWindowTaps bounds the window a dilated reduce_window may have: each
// position of it is a slice of its own.
const maxWindowTaps = 256

// dilatedWindow is a reduce_window whose window is spread by winDil (the
// inputs already padded): the IR's windows are dense, so each position of
// the window (a tap) is a strided slice of the input, holding that tap of
// every output's window; the taps are stacked on a last axis and reduced
// over it with the body, in the window's row-major order.
func dilatedWindow(e *env, op *mlir.Operation, body *ir.Program, inputs, inits []ir.Value, w ir.WindowAttrs, winDil []int) ([]ir.Value, error) {
	b := e.b
	shape := b.Type(inputs[0]).Shape
	r := len(shape)
	out := make(ir.Shape, r)
	taps := 1
	for i := range r {
		span := (w.Dims[i]-1)*winDil[i] + 1
		if w.Dims[i] < 1 || w.Strides[i] < 1 || span > shape[i] {
			return nil, invalid(op, "window %v dilated by %v does not fit the padded input %v", w.Dims, winDil, shape)
		}
		out[i] = (shape[i]-span)/w.Strides[i] + 1
		taps *= w.Dims[i]
	}
	if taps > maxWindowTaps {
		return nil, unsupported(op, "window_dilations %v on a window of %d positions (composed of one slice per position, up to %d)", winDil, taps, maxWindowTaps)
	}
	col := append(slices.Clone(out), 1)
	stacked := make([]ir.Value, len(inputs))
	for k, x := range inputs {
		parts := make([]ir.Value, 0, taps)
		tap := make([]int, r)
		for range taps {
			start, limit := make([]int, r), make([]int, r)
			for i := range r {
				start[i] = tap[i] * winDil[i]
				limit[i] = start[i] + (out[i]-1)*w.Strides[i] + 1
			}
			parts = append(parts, b.Reshape(b.Slice(x, start, limit, w.Strides), col))
			for i := r - 1; i >= 0; i-- { // the next tap, row-major
				if tap[i]++; tap[i] < w.Dims[i] {
					break
				}
				tap[i] = 0
			}
		}
		stacked[k] = b.Concat(r, parts...)
	}
	return b.ReduceWith(body, stacked, inits, []int{r}), nil
}

func selectAndScatter(e *env, op *mlir.Operation) ([]ir.Value, error) {
	vs, err := nOperands(e, op, 3)
	if err != nil {
		return nil, err
	}
	r := e.b.Type(vs[0]).Shape.Rank()
	var w ir.WindowAttrs
	if w.Dims, err = optInts(op, "window_dimensions", filled(r, 1)); err != nil {
		return nil, err
	}
	if w.Strides, err = optInts(op, "window_strides", filled(r, 1)); err != nil {
		return nil, err
	}
	if w.Padding, err = pairs(op, "padding", r); err != nil {
		return nil, err
	}
	for _, p := range w.Padding {
		if p[0] < 0 || p[1] < 0 {
			return nil, unsupported(op, "negative padding %v", w.Padding)
		}
	}
	if err := promote(e, op, vs[1:2], vs[2:3]); err != nil {
		return nil, err
	}
	sel, err := e.scalarBody(op, 0)
	if err != nil {
		return nil, err
	}
	sc, err := e.scalarBody(op, 1)
	if err != nil {
		return nil, err
	}
	return one(e.b.SelectAndScatterWith(sel, sc, vs[0], vs[1], vs[2], w)), nil
}

// sort is SortWith: every IR sort is stable, which is a valid unstable
// sort too, so is_stable needs nothing.
func sortOp(e *env, op *mlir.Operation) ([]ir.Value, error) {
	vs, err := e.operands(op)
	if err != nil {
		return nil, err
	}
	if len(vs) == 0 {
		return nil, invalid(op, "has no operands")
	}
	dim, err := smallInt(op, "dimension")
	if err != nil {
		return nil, err
	}
	if r := e.b.Type(vs[0]).Shape.Rank(); dim < 0 {
		dim += r
	}
	cmp, err := e.scalarBody(op, 0)
	if err != nil {
		return nil, err
	}
	return e.b.SortWith(cmp, dim, vs...), nil
}

// identity passes every operand through as the result of the same index:
// optimization_barrier, and on one device the sharding annotations.
func identity(e *env, op *mlir.Operation) ([]ir.Value, error) {
	vs, err := e.operands(op)
	if err != nil {
		return nil, err
	}
	if len(vs) != len(op.Results) {
		return nil, invalid(op, "has %d operands and %d results", len(vs), len(op.Results))
	}
	return vs, nil
}

// oneParticipant is a collective on one device (the module holds one
// partition and one replica, so every group is that device alone): each
// result is its operand, whose type it must have (all_gather's and
// reduce_scatter's dims are multiplied and divided by the group's size, 1).
// The reduction region of all_reduce and reduce_scatter is never applied:
// a reduction of one value is that value.
func oneParticipant(e *env, op *mlir.Operation) ([]ir.Value, error) {
	vs, err := identity(e, op)
	if err != nil {
		return nil, err
	}
	for i, v := range vs {
		rt, err := resultType(op, i)
		if err != nil {
			return nil, err
		}
		if t := e.b.Type(v); t.DType != rt.DType || !t.Shape.Equal(rt.Shape) {
			return nil, invalid(op, "result %d is %v for operand %v: not a collective of one participant", i, rt, t)
		}
	}
	return vs, nil
}

// collectivePermute on one device (ppermute in a pmap or shard_map of
// one): the only pair there can be is (0, 0), the device sending to
// itself, and the result is the operand; with no pair into it the result
// is zeros, as StableHLO says for a process no one sends to.
func collectivePermute(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, err := oneOperand(e, op)
	if err != nil {
		return nil, err
	}
	pairs, err := ints(op, "source_target_pairs")
	if err != nil {
		return nil, err
	}
	if len(pairs)%2 != 0 {
		return nil, invalid(op, "source_target_pairs holds %d numbers, not pairs", len(pairs))
	}
	for i := 0; i < len(pairs); i += 2 {
		if pairs[i] != 0 || pairs[i+1] != 0 {
			return nil, invalid(op, "the pair (%d, %d) names a device other than the one this program runs on", pairs[i], pairs[i+1])
		}
	}
	if len(pairs) > 0 {
		return one(x), nil
	}
	t := e.b.Type(x)
	return one(e.b.Constant(t, make([]byte, t.Shape.Size()*t.DType.Size()))), nil
}

// zeroID is partition_id and replica_id on one device: 0.
func zeroID(e *env, op *mlir.Operation) ([]ir.Value, error) {
	rt, err := resultType(op, 0)
	if err != nil {
		return nil, err
	}
	return one(intConst(e.b, rt.DType, rt.Shape, 0)), nil
}

// nothing is an annotation without results (sdy.sharding_group): on one
// device it says nothing.
func nothing(*env, *mlir.Operation) ([]ir.Value, error) { return nil, nil }

// noOpCustomCalls are the custom_call targets that do nothing on one
// device: sharding annotations and memory-space moves (the host and the
// device share memory here).
var noOpCustomCalls = []string{"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "MoveToHost", "MoveToDevice",
	"annotate_device_placement", "LayoutConstraint"}

// dceSink is jax's lax.dce_sink with prevent_mlir_dce: a custom_call
// "dce_sink" with a side effect, operands and no results, which only keeps
// XLA from removing what computes its operands. The IR has no side
// effects to order and the sink's operands change no result, so it is
// nothing (its operands must still translate).
func dceSink(e *env, op *mlir.Operation) ([]ir.Value, error) {
	if len(op.Results) != 0 {
		return nil, invalid(op, "custom_call \"dce_sink\" has %d results, want none", len(op.Results))
	}
	_, err := e.operands(op)
	return nil, err
}

func customCall(e *env, op *mlir.Operation) ([]ir.Value, error) {
	target, err := stringAttr(op, "call_target_name")
	if err != nil {
		return nil, err
	}
	if translate, ok := customCalls[target]; ok {
		return translate(e, op)
	}
	if la, ok := linalgCustomCalls[target]; ok {
		return la.fn(e, op)
	}
	if !slices.Contains(noOpCustomCalls, target) {
		return nil, unsupported(op, "custom_call target %q (only the one-device no-ops %v, dce_sink, ApproxTopK and jax's linear algebra calls)", target, noOpCustomCalls)
	}
	if len(op.Operands) != 1 || len(op.Results) != 1 || !mlir.Equal(op.Operands[0].Type, op.Results[0].Type) {
		return nil, unsupported(op, "custom_call %q of %d operands to %d results of other types", target, len(op.Operands), len(op.Results))
	}
	return identity(e, op)
}

// tuple and getTupleElement keep tuples on the Go side: a tuple value is
// its elements, and only get_tuple_element may use one.
func tuple(e *env, op *mlir.Operation) ([]ir.Value, error) {
	if len(op.Results) != 1 {
		return nil, invalid(op, "has %d results", len(op.Results))
	}
	for _, o := range op.Operands {
		if _, isTuple := e.tuples[o]; !isTuple {
			if _, err := e.value(op, o); err != nil {
				return nil, err
			}
		}
	}
	e.tuples[op.Results[0]] = slices.Clone(op.Operands)
	return nil, nil
}

func getTupleElement(e *env, op *mlir.Operation) ([]ir.Value, error) {
	if len(op.Operands) != 1 || len(op.Results) != 1 {
		return nil, invalid(op, "has %d operands and %d results", len(op.Operands), len(op.Results))
	}
	elems, ok := e.tuples[op.Operands[0]]
	if !ok {
		return nil, unsupported(op, "a tuple that is not built by tuple_v1 in the same region")
	}
	i, err := smallInt(op, "index")
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= len(elems) {
		return nil, invalid(op, "index %d of a tuple of %d", i, len(elems))
	}
	el := elems[i]
	if inner, isTuple := e.tuples[el]; isTuple {
		e.tuples[op.Results[0]] = inner
		return nil, nil
	}
	v, err := e.value(op, el)
	if err != nil {
		return nil, err
	}
	e.vals[op.Results[0]] = v
	return nil, nil
}

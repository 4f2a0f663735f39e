package metal

import (
	"math"
	"slices"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	registerLowering(lowerReduce, ir.OpReduce)
	registerTensorTuple(lowerReduceRegion, ir.OpReduceRegion)
}

// lowerReduce folds the axes away. Float max and min propagate NaN, as the
// host driver's builtins do; and/or on 0/1 bytes are max/min. MPSGraph's
// reductions take float32, float16 and int32 (and int64 from macOS 13.3):
// narrow integers sum and multiply in int32 and wrap back, and uint32 sums
// and products reduce its bits as int32 (the same bits modulo 2^32).
func lowerReduce(l *lowering, in ir.Instr, args []val) (tensor, error) {
	x := args[0].t
	d := args[0].typ.DType
	if d == ir.C64 {
		return tensor{}, fallback(in.Op, "reductions of complex64")
	}
	axes := in.Axes
	if len(axes) == 0 {
		return l.identity(x), nil
	}
	switch in.Reduce {
	case ir.ReduceMax, ir.ReduceOr, ir.ReduceMin, ir.ReduceAnd:
		r, err := l.extreme(x, d, axes, in.Reduce == ir.ReduceMax || in.Reduce == ir.ReduceOr)
		return l.toShape(r, in.Type), err
	case ir.ReduceSum, ir.ReduceProd:
	default:
		return tensor{}, fallback(in.Op, "reduction %v", in.Reduce)
	}
	back := func(r tensor) tensor { return r }
	switch {
	case isNarrow(d):
		x = l.cast(x, i32)
		back = func(r tensor) tensor { return l.narrow(r, d) }
	case d == ir.U32:
		if !l.g.Has(gpu.OpReinterpretCast) {
			return tensor{}, fallback(in.Op, "uint32 sums reduce its bits as int32, which needs reinterpretCast (macOS 13.2)")
		}
		x = l.reinterpret(x, i32)
		back = func(r tensor) tensor { return l.reinterpret(r, gpu.UInt32) }
	case d == ir.I64 && !l.g.Accepts(gpu.OpReductionSum, gpu.Int64):
		return tensor{}, fallback(in.Op, "int64 reductions need macOS 13.3")
	}
	var r tensor
	switch {
	case d.IsFloat() && in.Reduce == ir.ReduceSum:
		r = l.blockedSum(x, axes)
	case in.Reduce == ir.ReduceSum:
		r = l.reduceSum(x, axes)
	default:
		// A product rounds once per factor whatever the order, and
		// blocks of factors near 1 round worse (measured: 2M factors in
		// [0.999, 1.001], 6e-5 in order, 1.3e-3 in blocks of 16, 64, 64
		// and 33), so products are not blocked.
		r = l.reduceProd(x, axes)
	}
	return l.toShape(back(r), in.Type), nil
}

// blockSplit is the longest axis a float sum folds in one reduction; a
// longer one is split in two, each about its square root.
const blockSplit = 1024

// blockedSum is a float sum of x over axes that bounds how many
// terms any one reduction folds. MPSGraph does not say in what order a
// reduction adds its inputs, and one that adds them one after another lets
// float32 rounding error grow with their number: over the 2 million
// elements of a loss, or the N*H*W rows of a bias gradient, that is
// thousands of roundings (the model of MPSGraph, which adds in order, was
// 0.17% off for L2Loss over 33x64x64x16). So the axes are reduced one at a
// time, and an axis longer than blockSplit is reshaped into blocks (padded
// with the identity) that are reduced first, then their partials: each
// reduction then folds at most about blockSplit terms. Every reduction keeps
// its axes with size 1, so the axis numbers stay valid throughout.
func (l *lowering) blockedSum(x tensor, axes []int) tensor {
	sorted := append([]int(nil), axes...)
	slices.Sort(sorted)
	for i := len(sorted) - 1; i >= 0; i-- {
		a := sorted[i]
		n := x.Shape[a]
		if n <= blockSplit {
			x = l.reduceSum(x, []int{a})
			continue
		}
		c := int(math.Ceil(math.Sqrt(float64(n))))
		m := (n + c - 1) / c
		if pad := m*c - n; pad > 0 {
			low, high := make([]int, x.Rank()), make([]int, x.Rank())
			high[a] = pad
			x = l.padConst(x, low, high, 0)
		}
		split := append(append(append([]int(nil), x.Shape[:a]...), m, c), x.Shape[a+1:]...)
		x = l.reduceSum(l.reduceSum(l.reshape(x, split), []int{a + 1}), []int{a})
		x = l.reshape(x, append(append(append([]int(nil), x.Shape[:a]...), 1), x.Shape[a+2:]...))
	}
	return x
}

// extreme is the maximum (or minimum) of x over axes, kept with size 1, in
// x's own type: NaN-propagating for floats; narrow integers reduce in int32
// and uint32 in int64 (exact widenings, and the extreme is an element, so
// the cast back is exact); int64 needs macOS 13.3.
func (l *lowering) extreme(x tensor, d ir.DType, axes []int, max bool) (tensor, error) {
	pick := func(x tensor) tensor {
		switch {
		case d.IsFloat() && max:
			return l.reduceMaxNaN(x, axes)
		case d.IsFloat():
			return l.reduceMinNaN(x, axes)
		case max:
			return l.reduceMax(x, axes)
		}
		return l.reduceMin(x, axes)
	}
	switch {
	case isNarrow(d):
		return l.cast(pick(l.cast(x, i32)), mustPhys(d)), nil
	case d == ir.U32 || d == ir.I64:
		if !l.g.Accepts(gpu.OpReductionMaximum, gpu.Int64) {
			return tensor{}, fallback(ir.OpReduce, "max and min of %v reduce in int64, which MPSGraph reduces from macOS 13.3", d)
		}
		return l.cast(pick(l.cast(x, i64)), mustPhys(d)), nil
	}
	return pick(x), nil
}

// lowerReduceRegion lowers the reduce_region bodies ir.ArgReduceOf and
// ir.MonoidsOf recognise: jax's argmax and argmin over (value, index), and
// bodies whose every result folds one operand by add, mul, max, min, and,
// or or xor. Any other body runs on the CPU. A fold over no elements is
// the inits.
func lowerReduceRegion(l *lowering, in ir.Instr, args []val) ([]tensor, error) {
	n := len(args) / 2
	xs, inits := args[:n], args[n:]
	if xs[0].empty {
		outs := make([]tensor, n)
		for i := range n {
			outs[i] = l.broadcastTo(inits[i].t, physShape(in.Tuple[i]))
		}
		return outs, nil
	}
	body := in.Regions[0]
	if form, ok := ir.ArgReduceOf(body); ok {
		if !form.Flipped {
			return l.argReduceRegion(in, xs, inits, form.Max)
		}
		// In the flipped order: flip, reduce, flip the value back.
		fx, fi, err := l.flipAll(xs[:1], inits[:1])
		if err != nil {
			return nil, err
		}
		outs, err := l.argReduceRegion(in, append(fx, xs[1]), append(fi, inits[1]), form.Max)
		if err != nil {
			return nil, err
		}
		outs[0] = l.flipTop(outs[0], xs[0].typ.DType)
		return outs, nil
	}
	if ms, ok := ir.MonoidsOf(body); ok {
		outs := make([]tensor, n)
		for i, m := range ms {
			x, init := xs[i], inits[i]
			if m.Flipped {
				fx, fi, err := l.flipAll([]val{x}, []val{init})
				if err != nil {
					return nil, err
				}
				x, init = fx[0], fi[0]
			}
			r, err := l.monoid(in, m.Op, x, init, in.Tuple[i])
			if err != nil {
				return nil, err
			}
			if m.Flipped {
				r = l.flipTop(r, x.typ.DType)
			}
			outs[i] = r
		}
		return outs, nil
	}
	if n == 1 && xs[0].typ.DType == ir.C64 && ir.ComplexSumOf(body) {
		r, err := l.complexSum(in, xs[0], inits[0])
		return []tensor{r}, err
	}
	if _, ok := inlinable(body, allOf(n)); ok {
		return l.foldRegion(in, xs, inits)
	}
	return nil, fallback(in.Op, "a body of no form the lowering knows (jax's argmax and argmin over (value, index); "+
		"results that each fold one operand by add, mul, max, min, and, or or xor; a complex64 sum), nor elementwise")
}

// foldRegion folds the operands along the reduced axes one element at a
// time by any elementwise body, inlined once per step, in the IR's order:
// the kept dims moved first and the reduced ones flattened last, each
// output folds its elements in row-major order, from the inits. Exact,
// whatever the body; up to maxWindowElements steps.
func (l *lowering) foldRegion(in ir.Instr, xs, inits []val) ([]tensor, error) {
	n := len(xs)
	t := xs[0].typ
	var kept, red []int
	steps := 1
	for d := range t.Shape.Rank() {
		if slices.Contains(in.Axes, d) {
			red = append(red, d)
			steps *= t.Shape[d]
		} else {
			kept = append(kept, d)
		}
	}
	if steps > maxWindowElements {
		return nil, fallback(in.Op, "an elementwise body of no fixed form over %d elements per result (folded one element at a time, up to %d)", steps, maxWindowElements)
	}
	out := in.Tuple[0].Shape
	lined := make([]tensor, n)
	params := make([]val, 2*n)
	for i, x := range xs {
		// complex64 keeps its trailing (real, imaginary) pair last.
		perm := withComplex(x.typ, append(slices.Clone(kept), red...), len(kept)+len(red))
		lined[i] = l.reshape(l.transpose(x.t, perm), withComplex(x.typ, append(slices.Clone([]int(out)), steps), 2))
		params[i] = val{t: l.broadcastTo(inits[i].t, physShape(in.Tuple[i])), typ: in.Tuple[i]}
	}
	r := len(out)
	for k := range steps {
		for i := range xs {
			x := xs[i].typ
			starts, ends := withComplex(x, make([]int, r+1), 0), withComplex(x, append(slices.Clone([]int(out)), k+1), 2)
			starts[r] = k
			step := l.reshape(l.slice(lined[i], starts, ends, ones(len(starts))), physShape(in.Tuple[i]))
			params[n+i] = val{t: step, typ: ir.TensorType{DType: xs[i].typ.DType, Shape: out}}
		}
		acc, err := l.inlineBody(in.Regions[0], params, out, allOf(n))
		if err != nil {
			return nil, err
		}
		copy(params, acc)
	}
	outs := make([]tensor, n)
	for i := range outs {
		outs[i] = params[i].t
	}
	return outs, nil
}

// complexSum is a sum of complex64 values from init: complex64 is held as
// float32 pairs on a trailing axis, so it is the float sum of that tensor
// over the same axes (the real parts with the real, the imaginary with the
// imaginary), plus init, pair by pair.
func (l *lowering) complexSum(in ir.Instr, x, init val) (tensor, error) {
	rt := in.Tuple[0]
	pairs := func(t ir.TensorType) ir.TensorType {
		return ir.TensorType{DType: ir.F32, Shape: append(t.Shape.Clone(), 2)}
	}
	r, err := lowerReduce(l, ir.Instr{Op: ir.OpReduce, Reduce: ir.ReduceSum, Axes: in.Axes, Type: pairs(rt)},
		[]val{{t: x.t, typ: pairs(x.typ)}})
	if err != nil {
		return tensor{}, err
	}
	return l.add(l.toShape(r, rt), l.broadcastTo(init.t, physShape(rt))), nil
}

// flipAll flips the top bit of integer operands and their inits, whose
// order is then the signed order of the flipped bits (for ui16 and ui64
// held as int16 and int64, their unsigned order).
func (l *lowering) flipAll(xs, inits []val) ([]val, []val, error) {
	fx, fi := slices.Clone(xs), slices.Clone(inits)
	for i := range fx {
		fx[i].t = l.flipTop(xs[i].t, xs[i].typ.DType)
		fi[i].t = l.flipTop(inits[i].t, inits[i].typ.DType)
	}
	return fx, fi, nil
}

// flipTop is x ^ the top bit of d.
func (l *lowering) flipTop(x tensor, d ir.DType) tensor {
	top := int64(-1) << (8*d.Size() - 1) // the top bit, sign-extended
	if d.IsUnsigned() {
		top = 1 << (8*d.Size() - 1)
	}
	return l.bxor(x, l.intConst(top, mustPhys(d)))
}

// monoid folds x over the instruction's axes by op, then folds the init
// in: the fixed reduction for sum, product, max and min (and and or of
// bools), as ir.ReduceWith makes of a single operand's body; bit planes for
// the bitwise ones of integers; a count's parity for xor of bools.
func (l *lowering) monoid(in ir.Instr, op ir.Op, x, init val, rt ir.TensorType) (tensor, error) {
	d := x.typ.DType
	var r tensor
	var err error
	switch {
	case d == ir.Bool && op == ir.OpXor:
		count := l.reduceSum(l.cast(x.t, i32), in.Axes)
		r = l.toShape(l.cast(l.floorMod(count, l.scalar(2, i32)), gpu.UInt8), rt)
	case d != ir.Bool && (op == ir.OpAnd || op == ir.OpOr || op == ir.OpXor):
		r, err = l.bitwiseReduce(op, x, in.Axes, rt)
	default:
		kind := map[ir.Op]ir.ReduceKind{ir.OpAdd: ir.ReduceSum, ir.OpMul: ir.ReduceProd, ir.OpMax: ir.ReduceMax,
			ir.OpMin: ir.ReduceMin, ir.OpAnd: ir.ReduceAnd, ir.OpOr: ir.ReduceOr}[op]
		r, err = lowerReduce(l, ir.Instr{Op: ir.OpReduce, Reduce: kind, Axes: in.Axes, Type: rt}, []val{x})
		if err == nil {
			r, err = l.roundHalf(r, d)
		}
	}
	if err != nil {
		return tensor{}, err
	}
	return lowerBinary(l, ir.Instr{Op: op, Type: rt}, []val{{t: r, typ: rt}, init})
}

// bitwiseReduce is the and, or or xor of integers over axes, bit by bit,
// MPSGraph having no bitwise reduction: every element's bits as 0/1 int32
// planes on a new last axis, reduced by min (and), max (or) or a sum's low
// bit (xor), and put together again.
func (l *lowering) bitwiseReduce(op ir.Op, x val, axes []int, rt ir.TensorType) (tensor, error) {
	if len(axes) == 0 {
		return l.identity(x.t), nil
	}
	d := x.typ.DType
	dt := mustPhys(d)
	w := 8 * d.Size()
	shape := physShape(x.typ)
	rank := len(shape)
	amounts := make([]float64, w)
	for b := range amounts {
		amounts[b] = float64(b)
	}
	lanes := append(slices.Repeat([]int{1}, rank), w)
	xs := l.reshape(x.t, append(slices.Clone(shape), 1))
	planes := l.cast(l.band(l.shr(xs, l.constBytes(encodePhys(dt, amounts), lanes, dt)), l.scalar(1, dt)), i32)
	switch op {
	case ir.OpAnd:
		planes = l.reduceMin(planes, axes)
	case ir.OpOr:
		planes = l.reduceMax(planes, axes)
	default:
		planes = l.band(l.reduceSum(planes, axes), l.scalar(1, i32))
	}
	// word is the bits from bit lo on (up to 32 of them) as an int32, each
	// plane times its power of two: distinct powers add without carries,
	// and bit 31's is int32's lowest value, so nothing overflows.
	word := func(lo, bits int) tensor {
		weights := make([]float64, bits)
		for b := range weights {
			weights[b] = float64(int32(uint32(1) << b))
		}
		starts, ends := make([]int, rank+1), append(slices.Clone(planes.Shape[:rank]), lo+bits)
		starts[rank] = lo
		part := l.slice(planes, starts, ends, ones(rank+1))
		wt := l.constBytes(encodePhys(i32, weights), append(slices.Repeat([]int{1}, rank), bits), i32)
		return l.toShape(l.reduceSum(l.mul(part, wt), []int{rank}), rt)
	}
	switch d {
	case ir.I32:
		return word(0, 32), nil
	case ir.U32: // bit 31 apart: uint32 takes no negative int32
		top := l.cast(word(31, 1), gpu.UInt32)
		return l.add(l.cast(word(0, 31), gpu.UInt32), l.mul(top, l.scalar(1<<31, gpu.UInt32))), nil
	case ir.I64:
		lo := l.band(l.cast(word(0, 32), i64), l.intConst(0xffffffff, i64))
		return l.add(l.mul(l.cast(word(32, 32), i64), l.intConst(1<<32, i64)), lo), nil
	}
	return l.narrow(word(0, w), d), nil // 8 and 16 bits, wrapped back into the type
}

// argReduceRegion is jax's argmax (max) or argmin over (value, index) by
// its body, which ir.ArgReduceOf has checked: folding from the init (v0,
// i0) in row-major order, the value is the extreme of the init and the
// elements (a NaN above every number, the first NaN staying once reached),
// and the index the least index of the elements holding it (the init's
// among them), or the first NaN's own. The value is the element itself,
// to the bit: for a zero extreme, the last zero reached (the body takes
// the element on ties), for a NaN the first. The index operand may be any
// integers; where it is an iota along the one reduced axis (jax's form),
// the first NaN's index is the least of the NaNs'.
func (l *lowering) argReduceRegion(in ir.Instr, xs, inits []val, max bool) ([]tensor, error) {
	vt, it := xs[0].typ.DType, xs[1].typ.DType
	x, idx := l.lines(xs[0], in.Axes), l.lines(xs[1], in.Axes)
	k, r := x.Shape[0], x.Shape[1]
	v0, i0 := inits[0].t, inits[1].t
	m, err := l.extreme(x, vt, []int{1}, max)
	if err != nil {
		return nil, err
	}
	pick := l.maximum
	if !max {
		pick = l.minimum
	}
	if vt.IsFloat() {
		pick = l.maxNaN
		if !max {
			pick = l.minNaN
		}
	}
	top := l.extremeConst(it, true) // no index: above every index
	least := func(where tensor) (tensor, error) {
		return l.extreme(l.sel(where, idx, top), it, []int{1}, false)
	}
	ext := pick(m, v0) // [k, 1]: the extreme, the init's included
	eq := l.eq(x, ext)
	lowest, err := least(eq)
	if err != nil {
		return nil, err
	}
	index := l.sel(l.eq(v0, ext), l.minimum(i0, lowest), lowest)
	value := ext
	if vt.IsFloat() {
		pos := l.iotaAlong(ir.Shape{k, r}, 1, i32, r)
		nan, extNaN, v0NaN := l.isNaN(x), l.isNaN(ext), l.isNaN(v0)
		firstNaN := l.reduceMin(l.sel(nan, pos, l.scalar(float64(r), i32)), []int{1})
		nanAt := nan // the first NaN's index, when it is the least of the NaNs'
		if !l.iotaAlongReduced(in) {
			nanAt = l.eq(pos, firstNaN)
		}
		nanIndex, err := least(nanAt)
		if err != nil {
			return nil, err
		}
		index = l.sel(extNaN, l.sel(v0NaN, l.broadcastTo(i0, index.Shape), nanIndex), index)
		lastEq := l.reduceMax(l.sel(eq, pos, l.scalar(-1, i32)), []int{1})
		at := l.sel(extNaN, firstNaN, lastEq)
		fromInit := l.sel(extNaN, v0NaN, l.lt(lastEq, l.scalar(0, i32)))
		got := l.gatherAlong(1, x, l.minimum(l.maximum(at, l.scalar(0, i32)), l.scalar(float64(r-1), i32)))
		value = l.sel(fromInit, l.broadcastTo(v0, got.Shape), got)
	}
	return []tensor{l.toShape(value, in.Tuple[0]), l.toShape(index, in.Tuple[1])}, nil
}

// lines lays v out as [kept, reduced]: its kept dimensions flattened into
// rows, its reduced ones (in order) into each row, so that a row runs
// through its elements in the row-major order a fold visits them.
func (l *lowering) lines(v val, axes []int) tensor {
	shape := v.typ.Shape
	var perm []int
	k, r := 1, 1
	for d := range shape {
		if !slices.Contains(axes, d) {
			perm = append(perm, d)
			k *= shape[d]
		}
	}
	for d := range shape {
		if slices.Contains(axes, d) {
			perm = append(perm, d)
			r *= shape[d]
		}
	}
	x := v.t
	if !slices.IsSorted(perm) {
		x = l.transpose(x, perm)
	}
	return l.reshape(x, []int{k, r})
}

// iotaAlongReduced reports whether a reduce_region's second operand is an
// iota along its one reduced axis (directly, or a broadcast of a 1-D one),
// in a type that counts that far: its indices then rise in fold order.
func (l *lowering) iotaAlongReduced(in ir.Instr) bool {
	if len(in.Axes) != 1 {
		return false
	}
	axis := in.Axes[0]
	src := l.p.Instrs[in.Args[1]]
	n := src.Type.Shape[axis]
	if _, hi, ok := src.Type.DType.IntRange(); !ok || int64(n-1) > hi {
		return false
	}
	switch src.Op {
	case ir.OpIota:
		return src.Axes[0] == axis
	case ir.OpBroadcastInDim:
		one := l.p.Instrs[src.Args[0]]
		return one.Op == ir.OpIota && one.Type.Shape.Rank() == 1 && len(src.Axes) == 1 && src.Axes[0] == axis
	}
	return false
}

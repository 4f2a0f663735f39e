package metal

import (
	"math"
	"slices"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"

	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	registerLowering(lowerGather, ir.OpGather)
	registerLowering(lowerScatter, ir.OpScatter)
}

// Gather and scatter are lowered to MPSGraph's one-dimensional gather and
// scatterND over the flattened operand, with the operand position of every
// element computed in the graph from the start indices: general StableHLO
// dimension numbers then need nothing MPSGraph lacks. Positions are int32,
// so operands are limited to 2^31 elements.

const maxLinear = 1<<31 - 1

// startIndices splits start indices into one tensor per entry of the index
// vector, each over the batch dims, in indices order and in the indices'
// dtype (callers clamp or test them before narrowing to int32).
func (l *lowering) startIndices(idx tensor, ti ir.TensorType, ivd int) (starts []tensor, batch []int) {
	r := ti.Shape.Rank()
	if ivd == r {
		batch = []int(ti.Shape.Clone())
		if len(batch) == 0 {
			return []tensor{l.reshape(idx, []int{1})}, batch
		}
		return []tensor{idx}, batch
	}
	perm := make([]int, 0, r)
	for d := range r {
		if d != ivd {
			perm = append(perm, d)
			batch = append(batch, ti.Shape[d])
		}
	}
	perm = append(perm, ivd)
	x := l.transpose(idx, perm)
	vec := ti.Shape[ivd]
	shape := append(slices.Clone(batch), vec)
	for j := range vec {
		starts0 := make([]int, len(shape))
		starts0[len(shape)-1] = j
		ends := slices.Clone(shape)
		ends[len(shape)-1] = j + 1
		s := l.slice(x, starts0, ends, ones(len(shape)))
		bs := batch
		if len(bs) == 0 {
			bs = []int{1}
		}
		starts = append(starts, l.reshape(s, bs))
	}
	return starts, batch
}

// linearPositions is sum_d (start_d + window offset_d) * stride_d over a
// [batch..., window...] grid, as int32. starts[d] is over the batch dims (nil
// for an operand dim no index addresses); window[d] is the window's size
// along operand dim d, or 0 for a dim without a window axis.
func (l *lowering) linearPositions(opShape ir.Shape, batch []int, starts []tensor, winDims []int) tensor {
	var wshape []int
	for _, w := range winDims {
		if w > 0 {
			wshape = append(wshape, w)
		}
	}
	grid := slices.Concat(batch, wshape)
	if len(grid) == 0 {
		grid = []int{1}
	}
	strides := opShape.Strides()
	lin := l.full(0, grid, i32)
	wi := 0
	for d := range opShape {
		st := l.scalar(float64(strides[d]), i32)
		if starts[d].Valid() {
			bshape := slices.Concat(batch, ones(len(wshape)))
			if len(bshape) == 0 {
				bshape = []int{1}
			}
			lin = l.add(lin, l.mul(l.reshape(starts[d], bshape), st))
		}
		if winDims[d] > 0 {
			shape := make([]int, len(grid))
			for i := range shape {
				shape[i] = 1
			}
			shape[len(batch)+wi] = winDims[d]
			offs := l.iotaAlong(ir.Shape(shape), len(batch)+wi, i32, winDims[d])
			lin = l.add(lin, l.mul(offs, st))
			wi++
		}
	}
	return lin
}

// flat is a value as a one-dimensional tensor of its elements (a complex64
// value keeps its trailing pair).
func (l *lowering) flat(x tensor, t ir.TensorType) tensor {
	if t.DType == ir.C64 {
		return l.reshape(x, []int{t.Shape.Size(), 2})
	}
	return l.reshape(x, []int{t.Shape.Size()})
}

func lowerGather(l *lowering, in ir.Instr, args []val) (tensor, error) {
	g := in.Gather
	to, ti := args[0].typ, args[1].typ
	if to.Shape.Size() > maxLinear {
		return tensor{}, fallback(in.Op, "operand %v has more than 2^31 elements", to)
	}
	idx := args[1].t
	vecStarts, batch := l.startIndices(idx, ti, g.IndexVectorDim)
	starts := make([]tensor, to.Shape.Rank())
	idt := mustPhys(ti.DType)
	for j, d := range g.StartIndexMap {
		// Clamp (in the indices' own type, so that huge int64 indices
		// clamp rather than wrap) so that the whole slice stays inside.
		hi := l.scalar(float64(to.Shape[d]-g.SliceSizes[d]), idt)
		starts[d] = l.cast(l.minimum(l.maximum(vecStarts[j], l.scalar(0, idt)), hi), i32)
	}
	win := make([]int, to.Shape.Rank())
	for d := range win {
		if !slices.Contains(g.CollapsedSliceDims, d) {
			win[d] = g.SliceSizes[d]
		}
	}
	lin := l.linearPositions(to.Shape, batch, starts, win)
	flat := l.flat(args[0].t, to)
	var got tensor
	switch to.DType {
	case ir.I32, ir.U32, ir.I64:
		// Exact: gather carries integers through float32.
		got = l.wideGather(flat, func(t tensor) tensor { return l.g.Gather(t, lin, 0) })
	default:
		got = l.g.Gather(flat, lin, 0)
	}
	// got is [batch..., window...]; the result interleaves them as
	// OffsetDims say.
	nb, nw := len(batch), len(g.OffsetDims)
	perm := make([]int, 0, nb+nw)
	bi, wi := 0, 0
	for i := range nb + nw {
		if slices.Contains(g.OffsetDims, i) {
			perm = append(perm, nb+wi)
			wi++
		} else {
			perm = append(perm, bi)
			bi++
		}
	}
	var wshape []int
	for _, w := range win {
		if w > 0 {
			wshape = append(wshape, w)
		}
	}
	grid := slices.Concat(batch, wshape)
	if in.Type.DType == ir.C64 {
		grid = append(grid, 2)
		perm = append(perm, len(perm))
	}
	if len(grid) > 0 {
		got = l.transpose(l.reshape(got, grid), perm)
	}
	return l.toShape(got, in.Type), nil
}

// lowerScatter combines updates into the operand (scatterSites,
// scatterKind).
func lowerScatter(l *lowering, in ir.Instr, args []val) (tensor, error) {
	st, err := l.scatterSites(in.Op, args[0].typ, args[1].typ, args[2].typ, args[1].t, in.Scatter)
	if err != nil {
		return tensor{}, err
	}
	lin := st.lin
	if in.Scatter.Kind == ir.ScatterReplace {
		if lin, err = l.lastWriters(in.Op, st); err != nil {
			return tensor{}, err
		}
	}
	return l.scatterKind(in.Op, st, lin, args[0], l.flatUpdates(st, args[2]), in.Scatter.Kind)
}

// scatterSites is where each element of a scatter's updates goes.
type scatterSites struct {
	// lin is, for each update element in [batch..., window...] order, its
	// position in the flattened operand as int32, shape [total, 1]; an
	// element whose update window would leave the operand goes, with its
	// whole window, to a dummy position n past the operand's end, which is
	// dropped afterwards.
	lin      tensor
	n, total int   // operand and update elements
	perm     []int // the updates' dims in [batch..., window...] order
}

// maxOrdinal bounds the update elements a scatter may number: the numbers
// pass through scatterND and gather as data, which MPSGraph carries as
// float32 (exact up to 2^24).
const maxOrdinal = 1 << 24

// scatterSites finds the operand position of every update element from the
// start indices and the dimension numbers.
func (l *lowering) scatterSites(op ir.Op, to, ti, tu ir.TensorType, idx tensor, s *ir.ScatterDims) (scatterSites, error) {
	n := to.Shape.Size()
	if n+1 > maxLinear || tu.Shape.Size() > maxLinear {
		return scatterSites{}, fallback(op, "operand %v or updates %v have more than 2^31 elements", to, tu)
	}
	vecStarts, batch := l.startIndices(idx, ti, s.IndexVectorDim)
	r := to.Shape.Rank()
	starts := make([]tensor, r)
	for j, d := range s.ScatterDimsToOperandDims {
		starts[d] = vecStarts[j]
	}
	// Window sizes per operand dim, from the updates' window dims.
	win := make([]int, r)
	sizes := make([]int, r)
	j := 0
	for d := range r {
		sizes[d] = 1
		if !slices.Contains(s.InsertedWindowDims, d) {
			win[d] = tu.Shape[s.UpdateWindowDims[j]]
			sizes[d] = win[d]
			j++
		}
	}
	bshape := batch
	if len(bshape) == 0 {
		bshape = []int{1}
	}
	// valid[b]: every start keeps its window inside the operand.
	valid := l.full(1, bshape, i32)
	for d := range r {
		if !starts[d].Valid() {
			if sizes[d] > to.Shape[d] {
				valid = l.full(0, bshape, i32)
			}
			continue
		}
		idt := mustPhys(ti.DType)
		ok := l.land(l.ge(starts[d], l.scalar(0, idt)), l.le(starts[d], l.scalar(float64(to.Shape[d]-sizes[d]), idt)))
		valid = l.mul(valid, l.cast(ok, i32))
		starts[d] = l.cast(starts[d], i32) // invalid ones are redirected below
	}
	lin := l.linearPositions(to.Shape, batch, starts, win)
	var wshape []int
	for _, w := range win {
		if w > 0 {
			wshape = append(wshape, w)
		}
	}
	vb := l.reshape(valid, slices.Concat(bshape, ones(len(wshape))))
	lin = l.sel(l.ne(vb, l.scalar(0, i32)), lin, l.scalar(float64(n), i32))
	total := tu.Shape.Size()
	var perm []int
	for d := range tu.Shape.Rank() {
		if !slices.Contains(s.UpdateWindowDims, d) {
			perm = append(perm, d)
		}
	}
	perm = append(perm, s.UpdateWindowDims...)
	return scatterSites{lin: l.reshape(lin, []int{total, 1}), n: n, total: total, perm: perm}, nil
}

// flatUpdates is an updates operand as a flat list in the sites' order
// (complex64 keeps its trailing pair).
func (l *lowering) flatUpdates(st scatterSites, u val) tensor {
	perm := st.perm
	if u.typ.DType == ir.C64 {
		perm = append(slices.Clone(perm), len(perm))
	}
	return l.flat(l.transpose(u.t, perm), u.typ)
}

// ordinals numbers the update elements 0, 1, ... in the IR's order, as
// int32 of shape [total].
func (l *lowering) ordinals(st scatterSites) tensor {
	return l.reshape(l.iotaAlong(ir.Shape{st.total}, 0, i32, st.total), []int{st.total})
}

// lastWriters redirects to the dummy every update element but the last of
// those to each position: scatterND's set mode keeps an unspecified one
// of several, and the IR's updates apply in order. A scatter-max of the
// ordinals finds each position's last writer.
func (l *lowering) lastWriters(op ir.Op, st scatterSites) (tensor, error) {
	if st.total >= maxOrdinal {
		return tensor{}, fallback(op, "%d update elements: their order is resolved with ordinals, which scatterND and gather carry as float32 (exact below 2^24)", st.total)
	}
	seq := l.ordinals(st)
	last := l.g.ScatterND(l.full(-1, []int{st.n + 1}, i32), seq, st.lin, gpu.ScatterMax)
	winner := l.eq(l.g.Gather(last, l.reshape(st.lin, []int{st.total}), 0), seq)
	return l.sel(l.reshape(winner, []int{st.total, 1}), st.lin, l.scalar(float64(st.n), i32)), nil
}

// scatterKind combines the flat updates upd into operand x by kind, at lin
// (the sites, with replace's resolved by lastWriters), and returns x's new
// value. MPSGraph's scatterND takes float32, float16 and int32 data and
// carries integers as float32: narrow integers (exact there) scatter in
// int32 and wrap back; the wider ones are replaced in 16-bit parts
// (scatterParts); uint32 adds and multiplies its bits as int32 (the same
// modulo 2^32; exact only below 2^24, like int32's); float max and min
// propagate NaN and order -0 below +0 (scatterExtreme), which scatterND
// leaves unspecified.
func (l *lowering) scatterKind(op ir.Op, st scatterSites, lin tensor, x val, upd tensor, kind ir.ScatterKind) (tensor, error) {
	to := x.typ
	n := st.n
	data := l.flat(x.t, to)
	pad := l.zeros(ir.TensorType{DType: to.DType, Shape: ir.Shape{1}})
	if to.DType == ir.C64 {
		pad = l.reshape(pad, []int{1, 2})
	}
	data = l.concat([]tensor{data, pad}, 0)

	mode := map[ir.ScatterKind]gpu.ScatterMode{ir.ScatterReplace: gpu.ScatterSet, ir.ScatterAdd: gpu.ScatterAdd,
		ir.ScatterMul: gpu.ScatterMul, ir.ScatterMax: gpu.ScatterMax, ir.ScatterMin: gpu.ScatterMin}[kind]
	if to.DType == ir.Bool { // or and and on 0/1 bytes
		switch kind {
		case ir.ScatterAdd:
			mode = gpu.ScatterMax
		case ir.ScatterMul:
			mode = gpu.ScatterMin
		}
	}
	var out tensor
	switch d := to.DType; {
	case d.IsFloat() && (mode == gpu.ScatterMax || mode == gpu.ScatterMin):
		out = l.scatterExtreme(data, upd, lin, mode == gpu.ScatterMax)
	case isNarrow(d):
		out = l.narrow(l.g.ScatterND(l.cast(data, i32), l.cast(upd, i32), lin, mode), d)
	case (d == ir.I32 || d == ir.U32 || d == ir.I64) && mode == gpu.ScatterSet:
		var err error
		if out, err = l.scatterParts(op, data, upd, lin, d); err != nil {
			return tensor{}, err
		}
	case d == ir.U32 && (mode == gpu.ScatterAdd || mode == gpu.ScatterMul) && l.g.Has(gpu.OpReinterpretCast):
		out = l.reinterpret(l.g.ScatterND(l.reinterpret(data, i32), l.reinterpret(upd, i32), lin, mode), gpu.UInt32)
	case d == ir.U32 || d == ir.I64:
		return tensor{}, fallback(op, "scatter of %v: MPSGraph's scatterND takes float32, float16 and int32 data", d)
	default:
		out = l.g.ScatterND(data, upd, lin, mode)
	}
	if to.DType == ir.C64 {
		out = l.slice(out, []int{0, 0}, []int{n, 2}, []int{1, 1})
	} else {
		out = l.slice(out, []int{0}, []int{n}, []int{1})
	}
	return l.toShape(out, to), nil
}

// scatterParts replaces int32, uint32 or int64 data exactly: scatterND
// carries integers as float32, so the values are cut into 16-bit parts
// (each exact in float32), each part is scattered on its own to the same
// sites, and the parts are put back together. int32 is cut with floor
// modulo and exact division, which every release has; uint32 (as int64)
// and int64 with shifts, which need bitwise ops (macOS 13).
func (l *lowering) scatterParts(op ir.Op, data, upd, lin tensor, d ir.DType) (tensor, error) {
	set := func(a, b tensor) tensor { return l.g.ScatterND(a, b, lin, gpu.ScatterSet) }
	if d == ir.I32 {
		k := l.scalar(65536, i32)
		cut := func(x tensor) (hi, lo tensor) {
			lo = l.floorMod(x, k)
			lo = l.sel(l.lt(lo, l.scalar(0, i32)), l.add(lo, k), lo) // in [0, 2^16) whichever sign floorMod gives
			return l.div(l.sub(x, lo), k), lo                        // an exact division: no rounding to care about
		}
		dh, dl := cut(data)
		uh, ul := cut(upd)
		return l.add(l.mul(set(dh, uh), k), set(dl, ul)), nil
	}
	parts := 4
	if d == ir.U32 {
		parts = 2
		data, upd = l.cast(data, i64), l.cast(upd, i64) // exact
	}
	var out tensor
	for p := range parts {
		shift := l.scalar(float64(16*p), i64)
		cut := func(x tensor) tensor {
			x = l.shr(x, shift) // arithmetic: the top part keeps the sign
			if p < parts-1 {
				x = l.band(x, l.scalar(0xffff, i64))
			}
			return l.cast(x, i32) // in int32's range: exact
		}
		v := l.shl(l.cast(set(cut(data), cut(upd)), i64), shift)
		if p == 0 {
			out = v
		} else {
			out = l.bor(out, v)
		}
	}
	if d == ir.U32 {
		out = l.cast(out, gpu.UInt32) // in range
	}
	return out, nil
}

// scatterExtreme is a float scatter-max (or min) as the IR's max is: NaN if
// the operand or any update to the position is NaN, and of -0 and +0 the
// greater +0. scatterND's max leaves both unspecified, so it combines the
// numbers only (NaNs as the worst number), and two more scatters flag the
// NaN updates and the zeros of the winning sign. An operand that is NaN
// stays as it is, bits and all.
func (l *lowering) scatterExtreme(data, upd, lin tensor, max bool) tensor {
	f32 := gpu.Float32
	mode, worst, zero := gpu.ScatterMax, math.Inf(-1), 0.0
	if !max {
		mode, worst, zero = gpu.ScatterMin, math.Inf(1), math.Copysign(0, -1)
	}
	numbers := func(x tensor) tensor { return l.sel(l.isNaN(x), l.scalar(worst, f32), x) }
	// A zero of the winning sign, told by the sign of 1/x (no sign-bit test
	// is on every release).
	winningZero := func(x tensor) tensor {
		inv := l.div(l.scalar(1, f32), x)
		sign := l.gt(inv, l.scalar(0, f32))
		if !max {
			sign = l.lt(inv, l.scalar(0, f32))
		}
		return l.cast(l.land(l.eq(x, l.scalar(0, f32)), sign), f32)
	}
	m := l.g.ScatterND(numbers(data), numbers(upd), lin, mode)
	zeros := l.g.ScatterND(winningZero(data), winningZero(upd), lin, gpu.ScatterMax)
	nans := l.g.ScatterND(l.full(0, data.Shape, f32), l.cast(l.isNaN(upd), f32), lin, gpu.ScatterMax)
	m = l.sel(l.land(l.eq(m, l.scalar(0, f32)), l.ne(zeros, l.scalar(0, f32))), l.scalar(zero, f32), m)
	m = l.sel(l.ne(nans, l.scalar(0, f32)), l.scalar(math.NaN(), f32), m)
	return l.sel(l.isNaN(data), data, m)
}

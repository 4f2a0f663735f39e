package metal

import (
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
	got := l.g.Gather(l.flat(args[0].t, to), lin, 0)
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

// lowerScatter combines updates into the operand. An update whose window
// would leave the operand is redirected, whole, to a dummy element past the
// operand's end, which is dropped afterwards. For replace, later updates win
// where positions repeat, which scatterND's set mode does not promise: a
// scatter-max of each update's ordinal finds the last writer of every
// position, and only last writers are scattered.
func lowerScatter(l *lowering, in ir.Instr, args []val) (tensor, error) {
	s := in.Scatter
	to, ti, tu := args[0].typ, args[1].typ, args[2].typ
	n := to.Shape.Size()
	if n+1 > maxLinear || tu.Shape.Size() > maxLinear {
		return tensor{}, fallback(in.Op, "operand %v or updates %v have more than 2^31 elements", to, tu)
	}
	vecStarts, batch := l.startIndices(args[1].t, ti, s.IndexVectorDim)
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
	dummy := l.scalar(float64(n), i32)
	lin = l.sel(l.ne(vb, l.scalar(0, i32)), lin, dummy)
	total := tu.Shape.Size()
	lin = l.reshape(lin, []int{total, 1})

	// Updates as [batch..., window...], flattened.
	var perm []int
	for d := range tu.Shape.Rank() {
		if !slices.Contains(s.UpdateWindowDims, d) {
			perm = append(perm, d)
		}
	}
	perm = append(perm, s.UpdateWindowDims...)
	upd := args[2].t
	if tu.DType == ir.C64 {
		perm = append(perm, len(perm))
	}
	upd = l.flat(l.transpose(upd, perm), tu)

	data := l.flat(args[0].t, to)
	pad := l.zeros(ir.TensorType{DType: to.DType, Shape: ir.Shape{1}})
	if to.DType == ir.C64 {
		pad = l.reshape(pad, []int{1, 2})
	}
	data = l.concat([]tensor{data, pad}, 0)

	mode := gpu.ScatterSet
	switch s.Kind {
	case ir.ScatterReplace:
		seq := l.reshape(l.iotaAlong(ir.Shape{total}, 0, i32, total), []int{total})
		last := l.g.ScatterND(l.full(-1, []int{n + 1}, i32), seq, lin, gpu.ScatterMax)
		winner := l.eq(l.g.Gather(last, l.reshape(lin, []int{total}), 0), seq)
		lin = l.sel(l.reshape(winner, []int{total, 1}), lin, dummy)
	case ir.ScatterAdd:
		mode = gpu.ScatterAdd
	case ir.ScatterMul:
		mode = gpu.ScatterMul
	case ir.ScatterMax:
		mode = gpu.ScatterMax
	case ir.ScatterMin:
		mode = gpu.ScatterMin
	}
	if to.DType == ir.Bool { // or and and on 0/1 bytes
		switch s.Kind {
		case ir.ScatterAdd:
			mode = gpu.ScatterMax
		case ir.ScatterMul:
			mode = gpu.ScatterMin
		}
	}
	// MPSGraph's scatterND takes float32, float16 and int32 data: narrow
	// integers scatter in int32 and wrap back; uint32's bits are int32's
	// for replace, add and multiply (equal modulo 2^32).
	back := func(t tensor) tensor { return t }
	switch d := to.DType; {
	case isNarrow(d):
		data, upd = l.cast(data, i32), l.cast(upd, i32)
		back = func(t tensor) tensor { return l.narrow(t, d) }
	case d == ir.U32 && (mode == gpu.ScatterSet || mode == gpu.ScatterAdd || mode == gpu.ScatterMul) && l.g.Has(gpu.OpReinterpretCast):
		data, upd = l.reinterpret(data, i32), l.reinterpret(upd, i32)
		back = func(t tensor) tensor { return l.reinterpret(t, gpu.UInt32) }
	case d == ir.U32 || d == ir.I64:
		return tensor{}, fallback(in.Op, "scatter of %v: MPSGraph's scatterND takes float32, float16 and int32 data", d)
	}
	out := back(l.g.ScatterND(data, upd, lin, mode))
	if to.DType == ir.C64 {
		out = l.slice(out, []int{0, 0}, []int{n, 2}, []int{1, 1})
	} else {
		out = l.slice(out, []int{0}, []int{n}, []int{1})
	}
	return l.toShape(out, in.Type), nil
}

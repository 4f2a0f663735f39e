package stablehlo

// Sources and data movement: constants, iota, broadcasts, reshapes,
// slices, pads, and the indexing ops (dynamic slices, gather, scatter).

import (
	"math"
	"slices"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// constant copies the dense data: MLIR keeps it row-major little-endian,
// a byte per i1, f16 and bf16 as their bits and complex as real then
// imaginary, which is the IR's literal layout; a splat is repeated.
func constant(e *env, op *mlir.Operation) ([]ir.Value, error) {
	rt, err := resultType(op, 0)
	if err != nil {
		return nil, err
	}
	a, err := attr(op, "value")
	if err != nil {
		return nil, err
	}
	d, ok := a.(*mlir.DenseAttr)
	if !ok {
		return nil, unsupported(op, "a constant held as %T (only dense elements)", a)
	}
	if n := d.NumElements(); n != int64(rt.Shape.Size()) {
		return nil, invalid(op, "its value has %d elements for %v", n, rt)
	}
	w := rt.DType.Size()
	if mlir.ElementBytes(d.Elem()) != w {
		return nil, invalid(op, "its value's elements (%s) are not %v", d.Elem(), rt.DType)
	}
	var data []byte
	switch {
	case d.Splat && len(d.Data) >= w:
		c := e.b.Constant(ir.TensorType{DType: rt.DType}, d.Data[:w])
		return one(e.b.BroadcastInDim(c, rt.Shape, []int{})), nil
	case len(d.Data) == rt.Bytes():
		data = d.Data
	default:
		return nil, invalid(op, "its value has %d bytes for %v", len(d.Data), rt)
	}
	return one(e.b.Constant(rt, data)), nil
}

func iota(e *env, op *mlir.Operation) ([]ir.Value, error) {
	rt, err := resultType(op, 0)
	if err != nil {
		return nil, err
	}
	dim, err := smallInt(op, "iota_dimension")
	if err != nil {
		return nil, err
	}
	if rt.DType == ir.C64 {
		// The real part counts; the imaginary part is 0.
		re := e.b.Iota(ir.TensorType{DType: ir.F32, Shape: rt.Shape}, dim)
		return one(e.b.Complex(re, floatConst(e.b, ir.F32, rt.Shape, 0))), nil
	}
	if rt.DType == ir.Bool {
		return nil, unsupported(op, "an iota of %v", rt.DType)
	}
	return one(e.b.Iota(rt, dim)), nil
}

// broadcastInDim allows dims in any order (StableHLO does; the IR wants
// them increasing): the operand is transposed into increasing order first.
func broadcastInDim(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, err := oneOperand(e, op)
	if err != nil {
		return nil, err
	}
	rt, err := resultType(op, 0)
	if err != nil {
		return nil, err
	}
	dims, err := ints(op, "broadcast_dimensions")
	if err != nil {
		return nil, err
	}
	return one(broadcast(e.b, x, rt.Shape, dims)), nil
}

func broadcast(b *ir.Builder, x ir.Value, shape ir.Shape, dims []int) ir.Value {
	if !slices.IsSorted(dims) {
		perm := make([]int, len(dims))
		for i := range perm {
			perm[i] = i
		}
		slices.SortFunc(perm, func(i, j int) int { return dims[i] - dims[j] })
		sorted := make([]int, len(dims))
		for i, p := range perm {
			sorted[i] = dims[p]
		}
		x, dims = b.Transpose(x, perm), sorted
	}
	if dims == nil {
		dims = []int{}
	}
	return b.BroadcastInDim(x, shape, dims)
}

func reshape(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, err := oneOperand(e, op)
	if err != nil {
		return nil, err
	}
	rt, err := resultType(op, 0)
	if err != nil {
		return nil, err
	}
	return one(e.b.Reshape(x, rt.Shape)), nil
}

func transpose(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, err := oneOperand(e, op)
	if err != nil {
		return nil, err
	}
	perm, err := ints(op, "permutation")
	if err != nil {
		return nil, err
	}
	return one(e.b.Transpose(x, perm)), nil
}

func slice(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, err := oneOperand(e, op)
	if err != nil {
		return nil, err
	}
	start, err := ints(op, "start_indices")
	if err != nil {
		return nil, err
	}
	limit, err := ints(op, "limit_indices")
	if err != nil {
		return nil, err
	}
	strides, err := optInts(op, "strides", filled(len(start), 1))
	if err != nil {
		return nil, err
	}
	return one(e.b.Slice(x, start, limit, strides)), nil
}

func concatenate(e *env, op *mlir.Operation) ([]ir.Value, error) {
	xs, err := e.operands(op)
	if err != nil {
		return nil, err
	}
	dim, err := smallInt(op, "dimension")
	if err != nil {
		return nil, err
	}
	return one(e.b.Concat(dim, xs...)), nil
}

func pad(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, v, err := twoOperands(e, op)
	if err != nil {
		return nil, err
	}
	low, err := ints(op, "edge_padding_low")
	if err != nil {
		return nil, err
	}
	high, err := ints(op, "edge_padding_high")
	if err != nil {
		return nil, err
	}
	interior, err := optInts(op, "interior_padding", make([]int, len(low)))
	if err != nil {
		return nil, err
	}
	return one(e.b.Pad(x, v, low, high, interior)), nil
}

func reverse(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, err := oneOperand(e, op)
	if err != nil {
		return nil, err
	}
	dims, err := ints(op, "dimensions")
	if err != nil {
		return nil, err
	}
	return one(e.b.Reverse(x, dims)), nil
}

func getDimensionSize(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, err := oneOperand(e, op)
	if err != nil {
		return nil, err
	}
	dim, err := smallInt(op, "dimension")
	if err != nil {
		return nil, err
	}
	s := e.b.Type(x).Shape
	if dim < 0 || dim >= s.Rank() {
		return nil, invalid(op, "dimension %d of a rank-%d operand", dim, s.Rank())
	}
	return one(intConst(e.b, ir.I32, nil, int64(s[dim]))), nil
}

// indexType converts indices to a dtype the IR's gather and scatter take
// (int32 or int64) without changing any value: narrower integers widen to
// int32, uint32 to int64.
// A ui64 index (held as int64 bits) from 2^63 on reads as negative, so it
// is taken as the largest int64 instead: clamped, it is past the end as it
// should be; a ui16 one is zero-extended.
func indexType(b *ir.Builder, x ir.Value, held bool) ir.Value {
	switch b.Type(x).DType {
	case ir.I16:
		if held {
			return zeroExtend16(b, x)
		}
	case ir.I64:
		if held {
			s := b.Type(x).Shape
			neg := b.Compare(ir.CmpLT, x, intConst(b, ir.I64, s, 0))
			return b.Select(neg, intConst(b, ir.I64, s, math.MaxInt64), x)
		}
		return x
	case ir.I32:
		return x
	case ir.U32:
		return b.Convert(x, ir.I64)
	}
	return b.Convert(x, ir.I32)
}

// startVector stacks scalar start indices into one rank-1 index tensor of
// one index dtype.
func startVector(e *env, op *mlir.Operation, starts []ir.Value, held bool) (ir.Value, error) {
	b := e.b
	d := ir.I32
	for i, s := range starts {
		if t := b.Type(s); t.Shape.Rank() != 0 || !t.DType.IsInt() {
			return 0, invalid(op, "a start index is %v, want an integer scalar", t)
		}
		starts[i] = indexType(b, s, held)
		if b.Type(starts[i]).DType == ir.I64 {
			d = ir.I64
		}
	}
	parts := make([]ir.Value, len(starts))
	for i, s := range starts {
		parts[i] = b.Reshape(b.Convert(s, d), ir.Shape{1})
	}
	return b.Concat(0, parts...), nil
}

// dynamicSlice is a gather of one slice: the IR's gather clamps each start
// to [0, dim - size] as StableHLO's dynamic_slice does.
func dynamicSlice(e *env, op *mlir.Operation) ([]ir.Value, error) {
	vs, err := e.operands(op)
	if err != nil {
		return nil, err
	}
	if len(vs) < 1 {
		return nil, invalid(op, "has no operand")
	}
	x, starts := vs[0], vs[1:]
	sizes, err := ints(op, "slice_sizes")
	if err != nil {
		return nil, err
	}
	r := e.b.Type(x).Shape.Rank()
	if len(starts) != r || len(sizes) != r {
		return nil, invalid(op, "%d start indices and %d slice sizes for a rank-%d operand", len(starts), len(sizes), r)
	}
	if r == 0 {
		return one(x), nil
	}
	idx, err := startVector(e, op, starts, heldUnsigned(op.Operands[1].Type))
	if err != nil {
		return nil, err
	}
	all := seq(r)
	return one(e.b.Gather(x, idx, ir.GatherDims{OffsetDims: all, StartIndexMap: all, IndexVectorDim: 0, SliceSizes: sizes})), nil
}

// dynamicUpdateSlice clamps each start to [0, dim - update dim] itself, as
// StableHLO says, so that the scatter it becomes never skips the window.
func dynamicUpdateSlice(e *env, op *mlir.Operation) ([]ir.Value, error) {
	vs, err := e.operands(op)
	if err != nil {
		return nil, err
	}
	if len(vs) < 2 {
		return nil, invalid(op, "has %d operands, want the operand, the update and the starts", len(vs))
	}
	b := e.b
	x, upd, starts := vs[0], vs[1], vs[2:]
	xs, us := b.Type(x).Shape, b.Type(upd).Shape
	r := xs.Rank()
	if len(starts) != r || us.Rank() != r {
		return nil, invalid(op, "%d start indices and an update of rank %d for a rank-%d operand", len(starts), us.Rank(), r)
	}
	if r == 0 {
		return one(upd), nil
	}
	clamped := make([]ir.Value, r)
	for i, s := range starts {
		if t := b.Type(s); t.Shape.Rank() != 0 || !t.DType.IsInt() {
			return nil, invalid(op, "start index %d is %v, want an integer scalar", i, t)
		}
		s = indexType(b, s, heldUnsigned(op.Operands[2+i].Type))
		d := b.Type(s).DType
		lo := intConst(b, d, nil, 0)
		hi := intConst(b, d, nil, int64(max(xs[i]-us[i], 0)))
		clamped[i] = b.Binary(ir.OpMin, b.Binary(ir.OpMax, s, lo), hi)
	}
	idx, err := startVector(e, op, clamped, false)
	if err != nil {
		return nil, err
	}
	all := seq(r)
	return one(b.Scatter(x, idx, upd, ir.ScatterDims{UpdateWindowDims: all, ScatterDimsToOperandDims: all,
		IndexVectorDim: 0, Kind: ir.ScatterReplace})), nil
}

// withBatching folds gather's and scatter's batching dims into ordinary
// ones: each pair (operand dim ob, indices dim ib) becomes one more
// component of every index vector, an iota along ib, addressing ob, which
// is then collapsed (gather) or inserted (scatter) with size 1. The
// result's dims are the same. It returns the new indices, index vector dim
// and the operand dims the new components address.
func withBatching(e *env, op *mlir.Operation, indices ir.Value, ivd int, operandBatch, indicesBatch []int) (ir.Value, int, []int, error) {
	b := e.b
	if len(operandBatch) != len(indicesBatch) {
		return 0, 0, nil, invalid(op, "%d operand batching dims but %d indices batching dims", len(operandBatch), len(indicesBatch))
	}
	if len(operandBatch) == 0 {
		return indices, ivd, nil, nil
	}
	t := b.Type(indices)
	if ivd == t.Shape.Rank() {
		indices = b.Reshape(indices, append(t.Shape.Clone(), 1))
		t = b.Type(indices)
	}
	if ivd < 0 || ivd >= t.Shape.Rank() {
		return 0, 0, nil, invalid(op, "index_vector_dim %d for indices %v", ivd, t)
	}
	ones := t.Shape.Clone()
	ones[ivd] = 1
	parts := []ir.Value{indices}
	for _, d := range indicesBatch {
		if d < 0 || d >= t.Shape.Rank() || d == ivd {
			return 0, 0, nil, invalid(op, "indices batching dim %d for indices %v with index_vector_dim %d", d, t, ivd)
		}
		parts = append(parts, b.Iota(ir.TensorType{DType: t.DType, Shape: ones}, d))
	}
	return b.Concat(ivd, parts...), ivd, operandBatch, nil
}

func gather(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, idx, err := twoOperands(e, op)
	if err != nil {
		return nil, err
	}
	var g ir.GatherDims
	if g.OffsetDims, err = ints(op, "offset_dims"); err != nil {
		return nil, err
	}
	if g.CollapsedSliceDims, err = ints(op, "collapsed_slice_dims"); err != nil {
		return nil, err
	}
	if g.StartIndexMap, err = ints(op, "start_index_map"); err != nil {
		return nil, err
	}
	if g.IndexVectorDim, err = smallInt(op, "index_vector_dim"); err != nil {
		return nil, err
	}
	if g.SliceSizes, err = ints(op, "slice_sizes"); err != nil {
		return nil, err
	}
	ob, err := optInts(op, "operand_batching_dims", nil)
	if err != nil {
		return nil, err
	}
	ib, err := optInts(op, "start_indices_batching_dims", nil)
	if err != nil {
		return nil, err
	}
	idx = indexType(e.b, idx, heldUnsigned(op.Operands[1].Type))
	idx, g.IndexVectorDim, ob, err = withBatching(e, op, idx, g.IndexVectorDim, ob, ib)
	if err != nil {
		return nil, err
	}
	g.StartIndexMap = append(g.StartIndexMap, ob...)
	g.CollapsedSliceDims = append(g.CollapsedSliceDims, ob...)
	slices.Sort(g.CollapsedSliceDims)
	return one(e.b.Gather(x, idx, g)), nil
}

// scatter is scatter_v2 with any number of operands: one by ScatterWith
// (the fixed kinds when the body is one), several by ScatterRegion. The IR
// skips an update whose window leaves the operand, as XLA does.
func scatter(e *env, op *mlir.Operation) ([]ir.Value, error) {
	vs, err := e.operands(op)
	if err != nil {
		return nil, err
	}
	if len(vs) < 3 || len(vs)%2 != 1 {
		return nil, invalid(op, "has %d operands, want N inputs, the indices and N updates", len(vs))
	}
	n := len(vs) / 2
	inputs, idx, updates := vs[:n], vs[n], vs[n+1:]
	if err := promote(e, op, inputs, updates); err != nil {
		return nil, err
	}
	var s ir.ScatterDims
	if s.UpdateWindowDims, err = ints(op, "update_window_dims"); err != nil {
		return nil, err
	}
	if s.InsertedWindowDims, err = ints(op, "inserted_window_dims"); err != nil {
		return nil, err
	}
	if s.ScatterDimsToOperandDims, err = ints(op, "scatter_dims_to_operand_dims"); err != nil {
		return nil, err
	}
	if s.IndexVectorDim, err = smallInt(op, "index_vector_dim"); err != nil {
		return nil, err
	}
	if s.Unique, err = optBoolAttr(op, "unique_indices"); err != nil {
		return nil, err
	}
	ob, err := optInts(op, "input_batching_dims", nil)
	if err != nil {
		return nil, err
	}
	ib, err := optInts(op, "scatter_indices_batching_dims", nil)
	if err != nil {
		return nil, err
	}
	idx = indexType(e.b, idx, heldUnsigned(op.Operands[n].Type))
	idx, s.IndexVectorDim, ob, err = withBatching(e, op, idx, s.IndexVectorDim, ob, ib)
	if err != nil {
		return nil, err
	}
	s.ScatterDimsToOperandDims = append(s.ScatterDimsToOperandDims, ob...)
	s.InsertedWindowDims = append(s.InsertedWindowDims, ob...)
	slices.Sort(s.InsertedWindowDims)
	body, err := e.scalarBody(op, 0)
	if err != nil {
		return nil, err
	}
	if n == 1 {
		return one(e.b.ScatterWith(body, inputs[0], idx, updates[0], s)), nil
	}
	return e.b.Results(e.b.ScatterRegion(body, inputs, idx, updates, s)), nil
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func filled(n, v int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// fft is the IR's FFT over the innermost len(fft_length) dims.
func fft(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, err := oneOperand(e, op)
	if err != nil {
		return nil, err
	}
	kindName, err := enumAttr(op, "fft_type")
	if err != nil {
		return nil, err
	}
	kind, ok := map[string]ir.FFTKind{"FFT": ir.FFTForward, "IFFT": ir.FFTInverse, "RFFT": ir.FFTReal, "IRFFT": ir.FFTInverseReal}[kindName]
	if !ok {
		return nil, unsupported(op, "fft_type %s", kindName)
	}
	length, err := ints(op, "fft_length")
	if err != nil {
		return nil, err
	}
	if slices.Contains(length, 0) || e.b.Type(x).Shape.Size() == 0 {
		// A transform of nothing (jnp.fft of an empty array): zeros of
		// the result's shape, as XLA gives; the IR's FFT takes positive
		// lengths only.
		rt, err := resultType(op, 0)
		if err != nil {
			return nil, err
		}
		return one(e.b.Constant(rt, make([]byte, rt.Shape.Size()*rt.DType.Size()))), nil
	}
	return one(e.b.FFT(x, kind, length)), nil
}

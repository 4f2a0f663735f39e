package ir

import (
	"slices"
)

// Reverse reverses x along dims.
func (b *Builder) Reverse(x Value, dims []int) Value {
	t := b.Type(x)
	if !distinctIn(t.Shape.Rank(), dims) {
		return b.fail(OpReverse, "dims %v invalid for %v", dims, t)
	}
	if len(dims) == 0 {
		return x
	}
	d := slices.Clone(dims)
	slices.Sort(d)
	return b.emit(Instr{Op: OpReverse, Args: []Value{x}, Type: TensorType{t.DType, t.Shape.Clone()}, Axes: d})
}

func isIndexType(d DType) bool { return d == I32 || d == I64 }

// indexBatch splits the start indices' shape into its batch dims and the
// length of its index vectors.
func indexBatch(ti TensorType, ivd int) (batch Shape, vec int, ok bool) {
	r := ti.Shape.Rank()
	if ivd < 0 || ivd > r {
		return nil, 0, false
	}
	if ivd == r {
		return ti.Shape.Clone(), 1, true
	}
	for i, d := range ti.Shape {
		if i != ivd {
			batch = append(batch, d)
		}
	}
	return batch, ti.Shape[ivd], true
}

// Gather slices operand at each start index; see GatherDims.
func (b *Builder) Gather(operand, indices Value, g GatherDims) Value {
	to, ti := b.Type(operand), b.Type(indices)
	r := to.Shape.Rank()
	if !isIndexType(ti.DType) {
		return b.fail(OpGather, "indices %v must be int32 or int64", ti)
	}
	batch, vec, ok := indexBatch(ti, g.IndexVectorDim)
	if !ok {
		return b.fail(OpGather, "index_vector_dim %d out of range for indices %v", g.IndexVectorDim, ti)
	}
	if len(g.SliceSizes) != r || len(g.StartIndexMap) != vec || !distinctIn(r, g.StartIndexMap) || !distinctIn(r, g.CollapsedSliceDims) {
		return b.fail(OpGather, "dimension numbers %+v do not fit operand %v and indices %v", g, to, ti)
	}
	for i, s := range g.SliceSizes {
		if s < 0 || s > to.Shape[i] || (slices.Contains(g.CollapsedSliceDims, i) && s != 1) {
			return b.fail(OpGather, "slice sizes %v do not fit operand %v (collapsed dims %v)", g.SliceSizes, to, g.CollapsedSliceDims)
		}
	}
	rank := len(batch) + r - len(g.CollapsedSliceDims)
	if len(g.OffsetDims) != r-len(g.CollapsedSliceDims) || !slices.IsSorted(g.OffsetDims) || !distinctIn(rank, g.OffsetDims) {
		return b.fail(OpGather, "offset dims %v invalid for a result of rank %d", g.OffsetDims, rank)
	}
	var window Shape
	for i, s := range g.SliceSizes {
		if !slices.Contains(g.CollapsedSliceDims, i) {
			window = append(window, s)
		}
	}
	out := make(Shape, rank)
	wi, bi := 0, 0
	for i := range out {
		if slices.Contains(g.OffsetDims, i) {
			out[i] = window[wi]
			wi++
		} else {
			out[i] = batch[bi]
			bi++
		}
	}
	gd := GatherDims{slices.Clone(g.OffsetDims), slices.Clone(g.CollapsedSliceDims), slices.Clone(g.StartIndexMap), g.IndexVectorDim, slices.Clone(g.SliceSizes)}
	return b.emit(Instr{Op: OpGather, Args: []Value{operand, indices}, Type: TensorType{to.DType, out}, Gather: &gd})
}

// Scatter combines updates into operand at each index; see ScatterDims.
func (b *Builder) Scatter(operand, indices, updates Value, s ScatterDims) Value {
	to, ti, tu := b.Type(operand), b.Type(indices), b.Type(updates)
	r := to.Shape.Rank()
	if !isIndexType(ti.DType) || tu.DType != to.DType {
		return b.fail(OpScatter, "operand %v, indices %v, updates %v: indices must be int32 or int64 and updates of the operand's dtype", to, ti, tu)
	}
	if s.Kind < ScatterReplace || s.Kind > ScatterMin || (s.Kind != ScatterReplace && !to.DType.IsNumeric() && to.DType != Bool) {
		return b.fail(OpScatter, "scatter kind %v does not apply to %v", s.Kind, to)
	}
	batch, vec, ok := indexBatch(ti, s.IndexVectorDim)
	if !ok {
		return b.fail(OpScatter, "index_vector_dim %d out of range for indices %v", s.IndexVectorDim, ti)
	}
	if len(s.ScatterDimsToOperandDims) != vec || !distinctIn(r, s.ScatterDimsToOperandDims) ||
		len(s.UpdateWindowDims)+len(s.InsertedWindowDims) != r || !distinctIn(r, s.InsertedWindowDims) ||
		!distinctIn(tu.Shape.Rank(), s.UpdateWindowDims) || !slices.IsSorted(s.UpdateWindowDims) ||
		tu.Shape.Rank() != len(batch)+len(s.UpdateWindowDims) {
		return b.fail(OpScatter, "dimension numbers %+v do not fit operand %v, indices %v, updates %v", s, to, ti, tu)
	}
	wi, bi := 0, 0
	var windowOperandDims []int
	for i := range r {
		if !slices.Contains(s.InsertedWindowDims, i) {
			windowOperandDims = append(windowOperandDims, i)
		}
	}
	for i, d := range tu.Shape {
		if slices.Contains(s.UpdateWindowDims, i) {
			if d > to.Shape[windowOperandDims[wi]] {
				return b.fail(OpScatter, "update window %v is larger than operand %v", tu, to)
			}
			wi++
		} else {
			if d != batch[bi] {
				return b.fail(OpScatter, "updates %v do not match the batch dims %v of indices %v", tu, batch, ti)
			}
			bi++
		}
	}
	sd := ScatterDims{slices.Clone(s.UpdateWindowDims), slices.Clone(s.InsertedWindowDims), slices.Clone(s.ScatterDimsToOperandDims), s.IndexVectorDim, s.Kind, s.Unique}
	return b.emit(Instr{Op: OpScatter, Args: []Value{operand, indices, updates}, Type: TensorType{to.DType, to.Shape.Clone()}, Scatter: &sd})
}

// Sort orders x along a.Dim.
func (b *Builder) Sort(x Value, a SortAttrs) Value {
	t := b.Type(x)
	if a.Dim < 0 || a.Dim >= t.Shape.Rank() || !(t.DType.IsNumeric() || t.DType == Bool) {
		return b.fail(OpSort, "cannot sort %v along dim %d", t, a.Dim)
	}
	return b.emit(Instr{Op: OpSort, Args: []Value{x}, Type: TensorType{t.DType, t.Shape.Clone()}, Sort: &a})
}

// ArgSort is the stable permutation, as indices of dtype index, that sorts x
// along a.Dim.
func (b *Builder) ArgSort(x Value, a SortAttrs, index DType) Value {
	t := b.Type(x)
	if a.Dim < 0 || a.Dim >= t.Shape.Rank() || !(t.DType.IsNumeric() || t.DType == Bool) || !isIndexType(index) {
		return b.fail(OpArgSort, "cannot sort %v along dim %d into %v indices", t, a.Dim, index)
	}
	return b.emit(Instr{Op: OpArgSort, Args: []Value{x}, Type: TensorType{index, t.Shape.Clone()}, Sort: &a})
}

// ArgReduce is the index (of dtype index) of the first max (kind ReduceMax) or
// min (ReduceMin) along axis; NaN counts as the max and the min.
func (b *Builder) ArgReduce(x Value, kind ReduceKind, axis int, index DType) Value {
	t := b.Type(x)
	if (kind != ReduceMax && kind != ReduceMin) || axis < 0 || axis >= t.Shape.Rank() || !t.DType.IsNumeric() || !isIndexType(index) {
		return b.fail(OpArgReduce, "arg %v over axis %d of %v into %v is not defined", kind, axis, t, index)
	}
	if t.Shape[axis] == 0 {
		return b.fail(OpArgReduce, "arg %v over an empty axis %d of %v", kind, axis, t)
	}
	var out Shape
	for i, d := range t.Shape {
		if i != axis {
			out = append(out, d)
		}
	}
	return b.emit(Instr{Op: OpArgReduce, Args: []Value{x}, Type: TensorType{index, out}, Axes: []int{axis}, Reduce: kind})
}

// SelectAndScatter adds each element of source at the first position of its
// window of operand that is the max (dir GE) or min (dir LE); the result has
// operand's type and is zero elsewhere. It is the gradient of max pooling.
func (b *Builder) SelectAndScatter(operand, source Value, dir CompareDir, w WindowAttrs) Value {
	to, ts := b.Type(operand), b.Type(source)
	if dir != CmpGE && dir != CmpLE {
		return b.fail(OpSelectAndScatter, "select must be GE or LE, got %v", dir)
	}
	probe := NewBuilder()
	pooled := probe.ReduceWindow(probe.Parameter(to), ReduceMax, w)
	if probe.err != nil {
		return b.fail(OpSelectAndScatter, "%v", probe.err)
	}
	want := probe.Type(pooled)
	if ts.DType != to.DType || !ts.Shape.Equal(want.Shape) {
		return b.fail(OpSelectAndScatter, "source %v must be %v, the windowed shape of operand %v", ts, want, to)
	}
	wa := probe.prog.Instrs[pooled].Window
	return b.emit(Instr{Op: OpSelectAndScatter, Args: []Value{operand, source}, Type: TensorType{to.DType, to.Shape.Clone()}, Compare: dir, Window: wa})
}

// Rng draws numbers of type t from Philox4x32-10 with the given key (I64[1])
// and counter (I64[2]), whose bits are TensorFlow's uint64 key and counter.
func (b *Builder) Rng(key, counter Value, dist RngDistribution, t TensorType) Value {
	tk, tc := b.Type(key), b.Type(counter)
	if tk.DType != I64 || !tk.Shape.Equal(Shape{1}) || tc.DType != I64 || !tc.Shape.Equal(Shape{2}) {
		return b.fail(OpRng, "key %v must be int64[1] and counter %v int64[2]", tk, tc)
	}
	switch {
	case dist == RngUniform && (t.DType.IsFloat() && t.DType != F64 || t.DType == I32 || t.DType == I64):
	case (dist == RngNormal || dist == RngTruncatedNormal) && t.DType.IsFloat() && t.DType != F64:
	default:
		return b.fail(OpRng, "%v numbers of type %v are not defined", dist, t)
	}
	return b.emit(Instr{Op: OpRng, Args: []Value{key, counter}, Type: TensorType{t.DType, t.Shape.Clone()}, Rng: &RngAttrs{dist}})
}

// FFT transforms the len(length) innermost dims of x.
func (b *Builder) FFT(x Value, kind FFTKind, length []int) Value {
	t := b.Type(x)
	r, n := t.Shape.Rank(), len(length)
	if n < 1 || n > 3 || n > r {
		return b.fail(OpFFT, "%v over %d dims of %v: 1 to 3 dims, at most the rank", kind, n, t)
	}
	inner := t.Shape[r-n:]
	out := t.Shape.Clone()
	want := slices.Clone(length)
	var in, res DType
	switch kind {
	case FFTForward, FFTInverse:
		in, res = C64, C64
	case FFTReal:
		in, res = F32, C64
		out[r-1] = length[n-1]/2 + 1
	case FFTInverseReal:
		in, res = C64, F32
		want[n-1] = length[n-1]/2 + 1
		copy(out[r-n:], length)
	default:
		return b.fail(OpFFT, "unknown kind %v", kind)
	}
	if t.DType != in || !Shape(want).Equal(inner) {
		return b.fail(OpFFT, "%v of length %v needs %v with inner dims %v, got %v", kind, length, in, Shape(want), t)
	}
	for _, l := range length {
		if l < 1 {
			return b.fail(OpFFT, "length %v must be positive", length)
		}
	}
	return b.emit(Instr{Op: OpFFT, Args: []Value{x}, Type: TensorType{res, out}, FFT: &FFTAttrs{kind, slices.Clone(length)}})
}

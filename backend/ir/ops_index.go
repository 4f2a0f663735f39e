package ir

import "slices"

// Indexing and sorting: gather, scatter and the sorts with a fixed order.

// indexOps read and write at computed positions, and sort.
var indexOps = opDefs{
	{OpGather, OpInfo{Name: "gather", Arity: 2, Attrs: []string{"Gather"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if in.Gather == nil {
			return 0, missing("gather dimension numbers")
		}
		return b.Gather(a[0], a[1], *in.Gather), nil
	}}}, // StableHLO gather: Args operand, start indices; Instr.Gather
	{OpScatter, OpInfo{Name: "scatter", Arity: 3, Attrs: []string{"Scatter"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if in.Scatter == nil {
			return 0, missing("scatter dimension numbers")
		}
		return b.Scatter(a[0], a[1], a[2], *in.Scatter), nil
	}}}, // StableHLO scatter: Args operand, indices, updates; Instr.Scatter
	{OpSort, OpInfo{Name: "sort", Arity: 1, Attrs: []string{"Sort"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if in.Sort == nil {
			return 0, missing("sort attributes")
		}
		return b.Sort(a[0], *in.Sort), nil
	}}}, // sort along Instr.Sort.Dim; NaN is the largest value (last ascending, first descending); ties keep their order
	{OpArgSort, OpInfo{Name: "arg_sort", Arity: 1, Attrs: []string{"Sort"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if in.Sort == nil {
			return 0, missing("sort attributes")
		}
		return b.ArgSort(a[0], *in.Sort, in.Type.DType), nil
	}}}, // the stable permutation (in the result dtype) that OpSort applies
}

// GatherDims are StableHLO's gather dimension numbers (without batching
// dims). Each index vector of the start indices (along IndexVectorDim, which
// may equal the indices' rank for scalar indices) addresses operand dims
// StartIndexMap; a slice of SliceSizes starts there (clamped to stay in
// bounds); CollapsedSliceDims (of size 1) are dropped; the remaining slice
// dims appear at result positions OffsetDims, the batch dims everywhere else.
type GatherDims struct {
	OffsetDims         []int
	CollapsedSliceDims []int
	StartIndexMap      []int
	IndexVectorDim     int
	SliceSizes         []int
}

// ScatterKind is how OpScatter combines an update with the operand.
type ScatterKind uint8

const (
	ScatterReplace ScatterKind = iota + 1 // later updates win where indices repeat
	ScatterAdd
	ScatterMul
	ScatterMax
	ScatterMin
)

func (k ScatterKind) String() string {
	return [...]string{"invalid", "replace", "add", "mul", "max", "min"}[min(int(k), 5)]
}

// ScatterDims are StableHLO's scatter dimension numbers (without batching
// dims): the mirror image of GatherDims. Updates whose window would leave the
// operand are skipped.
type ScatterDims struct {
	UpdateWindowDims         []int
	InsertedWindowDims       []int
	ScatterDimsToOperandDims []int
	IndexVectorDim           int
	Kind                     ScatterKind
	// Unique is StableHLO's unique_indices: the caller promises that no
	// two updates go to one element, so a driver may apply every update in
	// one step; what a broken promise gives is undefined, as in StableHLO.
	Unique bool
}

// SortAttrs say how OpSort and OpArgSort order a dimension.
type SortAttrs struct {
	Dim        int
	Descending bool
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

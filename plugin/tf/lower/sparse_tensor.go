package lower

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/metalplug/metalplug/backend/ir"
)

// Sparse tensors (sparse_*_op.cc): a SparseTensor is three plain tensors,
// int64 indices [nnz, rank], values [nnz] and an int64 dense_shape [rank].
//
// Where the layout of the result depends on the indices (SparseSlice,
// SparseSplit, SparseFillEmptyRows, RaggedFillEmptyRows) or TensorFlow
// raises on their values (an index out of bounds, a reverse index map out of
// range), the lowering reads them (Kernel.ReadInputs, as TensorFlow's GPU
// kernels copy them back too), checks them as the CPU kernel does, and
// builds the result's indices on the host; the values always move on the
// device, gathered at the positions the host worked out. SparseReshape,
// SparseReorder and SparseConcat, whose layout the (host) shapes alone fix,
// compute their indices on the device: by integer arithmetic, and the
// order by stable sorts of the index columns (last column first), so
// entries with equal indices keep their order, as the CPU's sort does at
// the sizes its insertion sort handles.
//
// The SparseMatrix* and CSR* ops are not here: a CSRSparseMatrix is a
// DT_VARIANT tensor, which the C API TensorFlow 2.21 exports gives a
// plugin no way to build or read.

// sparseTypes are the value dtypes of TensorFlow's GPU kernels that move
// sparse values (TF_CALL_POD_TYPES) that the device has.
var sparseTypes = All

func init() {
	register(Kernel{Op: "SparseTensorDenseMatMul", Constraints: []Constraint{{"T", []ir.DType{ir.F32, ir.F16}}, {"Tindices", Indices}},
		Inputs: []string{"a_indices", "a_values", "a_shape", "b"}, HostInputs: []string{"a_shape"},
		ReadInputs: []int{0}, Attrs: []AttrSpec{{Name: "adjoint_a", Kind: AttrBool, Optional: true}, {Name: "adjoint_b", Kind: AttrBool, Optional: true}},
		Lower: lowerSparseDenseMatMul})
	register(Kernel{Op: "SparseReshape", Inputs: []string{"input_indices", "input_shape", "new_shape"},
		HostInputs: []string{"input_shape", "new_shape"}, Lower: lowerSparseReshape})
	register(Kernel{Op: "SparseSlice", Constraints: T(sparseTypes), Inputs: []string{"indices", "values", "shape", "start", "size"},
		HostInputs: []string{"shape", "start", "size"}, ReadInputs: []int{0},
		Lower: lowerSparseSlice})
	register(Kernel{Op: "SparseSliceGrad", Constraints: T(Numeric), Inputs: []string{"backprop_val_grad", "input_indices", "input_start", "output_indices"},
		ReadInputs: []int{1, 2, 3}, Lower: lowerSparseSliceGrad})
	register(Kernel{Op: "SparseReorder", Constraints: T(sparseTypes), Inputs: []string{"input_indices", "input_values", "input_shape"},
		Lower: lowerSparseReorder})
	// shapes is a list of N host inputs, the last N of the 3N.
	register(Kernel{Op: "SparseConcat", Constraints: T(sparseTypes), Inputs: []string{"indices", "values", "shapes"},
		HostInputs: []string{"shapes"}, HostInputIndex: []int{-1}, HostInputsOf: func(_ *Attrs, n int) []int { return rangeInts(n-n/3, n) },
		Attrs: []AttrSpec{{Name: "concat_dim", Kind: AttrInt}}, Lower: lowerSparseConcat})
	register(Kernel{Op: "SparseSplit", Constraints: T(sparseTypes), Inputs: []string{"split_dim", "indices", "values", "shape"},
		HostInputs: []string{"split_dim", "shape"}, ReadInputs: []int{1},
		Attrs: []AttrSpec{{Name: "num_split", Kind: AttrInt}}, Lower: lowerSparseSplit})
	register(Kernel{Op: "SparseFillEmptyRows", Constraints: T(sparseTypes), Inputs: []string{"indices", "values", "dense_shape", "default_value"},
		HostInputs: []string{"dense_shape"}, ReadInputs: []int{0}, Lower: lowerFillEmptyRows(false)})
	register(Kernel{Op: "RaggedFillEmptyRows", Constraints: T(sparseTypes), Inputs: []string{"value_rowids", "values", "nrows", "default_value"},
		HostInputs: []string{"nrows"}, ReadInputs: []int{0}, Lower: lowerFillEmptyRows(true)})
	for _, op := range []string{"SparseFillEmptyRowsGrad", "RaggedFillEmptyRowsGrad"} {
		register(Kernel{Op: op, Constraints: T(Numeric), Inputs: []string{"reverse_index_map", "grad_values"}, ReadInputs: []int{0},
			Lower: lowerFillEmptyRowsGrad})
	}
}

// rawInts reads the contents of integer input i (Kernel.ReadInputs).
func (c *Call) rawInts(i int, name string) ([]int64, error) {
	t := c.Type(i)
	raw, ok := c.Raw[i]
	if !ok || len(raw) != t.Bytes() {
		return nil, c.Errorf("needs the contents of %s %v (%d bytes), got %d bytes", name, t, t.Bytes(), len(raw))
	}
	n := t.Shape.Size()
	v := make([]int64, n)
	switch t.DType {
	case ir.I64:
		for j := range v {
			v[j] = int64(binary.LittleEndian.Uint64(raw[8*j:]))
		}
	case ir.I32:
		for j := range v {
			v[j] = int64(int32(binary.LittleEndian.Uint32(raw[4*j:])))
		}
	default:
		return nil, c.Errorf("%s must be int32 or int64, got %v", name, t)
	}
	return v, nil
}

// sparseInput checks a SparseTensor's indices [nnz, rank], values [nnz]
// and, where the shape is an input, its rank, as sparse::SparseTensor::Create
// does. shape may be nil (the dense shape is a device input).
func (c *Call) sparseInput(ind, val int, rank int) (nnz int, err error) {
	ti, tv := c.Type(ind), c.Type(val)
	if ti.Shape.Rank() != 2 {
		return 0, c.Errorf("indices must be a matrix [nnz, rank], got %v (inputs %s)", ti, c.Inputs())
	}
	if tv.Shape.Rank() != 1 {
		return 0, c.Errorf("values must be a vector, got %v (inputs %s)", tv, c.Inputs())
	}
	if ti.Shape[0] != tv.Shape[0] {
		return 0, c.Errorf("number of elements in indices (%d) and values (%d) do not match (indices %v, values %v)", ti.Shape[0], tv.Shape[0], ti, tv)
	}
	if rank >= 0 && ti.Shape[1] != rank {
		return 0, c.Errorf("index rank (%d) and shape rank (%d) do not match (indices %v)", ti.Shape[1], rank, ti)
	}
	return ti.Shape[0], nil
}

// hostVector reads host input i as a vector of int64 values.
func (c *Call) hostVector(i int, name string) ([]int64, error) {
	v, err := c.hostInts(i, name)
	if err != nil {
		return nil, err
	}
	if c.Type(i).Shape.Rank() != 1 {
		return nil, c.Errorf("%s must be a vector, got %v (inputs %s)", name, c.Type(i), c.Inputs())
	}
	return v, nil
}

// denseShape checks a sparse tensor's dense shape: non-negative sizes.
func (c *Call) denseShape(shape []int64, name string) error {
	for _, d := range shape {
		if d < 0 {
			return c.Errorf("%s %v: expected shape dimensions to be non-negative, got %d", name, shape, d)
		}
	}
	return nil
}

// gatherRows takes rows pos (an integer vector) of x; positions are in range.
func gatherRows(b *ir.Builder, x, pos ir.Value) ir.Value {
	tx, tp := b.Type(x), b.Type(pos)
	n := tp.Shape[0]
	out := append(ir.Shape{n}, tx.Shape[1:]...)
	if n == 0 || tx.Shape[0] == 0 {
		return zeros(b, ir.TensorType{DType: tx.DType, Shape: out})
	}
	sizes := append([]int{1}, tx.Shape[1:]...)
	return b.Gather(x, b.Reshape(pos, ir.Shape{n, 1}), ir.GatherDims{OffsetDims: rangeInts(1, len(out)), CollapsedSliceDims: []int{0},
		StartIndexMap: []int{0}, IndexVectorDim: 1, SliceSizes: sizes})
}

// take is rows pos of x, with pos computed on the host and in range.
func take(b *ir.Builder, x ir.Value, pos []int64) ir.Value {
	return gatherRows(b, x, i64Constant(b, ir.Shape{len(pos)}, pos))
}

// takeOr is take, but a negative position takes fill (a scalar of x's
// dtype) instead.
func takeOr(b *ir.Builder, x ir.Value, pos []int64, fill ir.Value) ir.Value {
	n := len(pos)
	safe := make([]int64, n)
	mask := make([]int64, n)
	for i, p := range pos {
		if p >= 0 {
			safe[i], mask[i] = p, 1
		}
	}
	g := take(b, x, safe)
	if !slices.Contains(mask, 0) {
		return g
	}
	keep := b.Compare(ir.CmpNE, i64Constant(b, ir.Shape{n}, mask), b.Full(ir.TensorType{DType: ir.I64, Shape: ir.Shape{n}}, 0))
	return b.Select(keep, g, b.BroadcastInDim(fill, ir.Shape{n}, nil))
}

// indexMatrix is a constant int64 [n, rank] of rows.
func indexMatrix(b *ir.Builder, rows [][]int64, rank int) ir.Value {
	flat := make([]int64, 0, len(rows)*rank)
	for _, r := range rows {
		flat = append(flat, r...)
	}
	return i64Constant(b, ir.Shape{len(rows), rank}, flat)
}

// shapeVector is a constant int64 vector.
func shapeVector(b *ir.Builder, v []int64) ir.Value {
	return i64Constant(b, ir.Shape{len(v)}, slices.Clone(v))
}

func joinInts(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// lowerSparseDenseMatMul multiplies A (sparse, [M, K] or its adjoint) by
// the dense B: each entry's row of B (B^T's with adjoint_b) is scaled by its
// value and added into its output row. The 16-bit floats accumulate in
// float32. The indices are read only to raise on one out of bounds, as the
// CPU kernel does (k first, then m, entry by entry).
func lowerSparseDenseMatMul(c *Call) error {
	if err := c.arity(4); err != nil {
		return err
	}
	ti, tv, tb := c.Type(0), c.Type(1), c.Type(3)
	if tb.Shape.Rank() != 2 {
		return c.Errorf("tensor 'b' is not a matrix: %v", tb)
	}
	shape, err := c.hostVector(2, "a_shape")
	if err != nil {
		return err
	}
	if len(shape) != 2 {
		return c.Errorf("tensor 'a_shape' must have 2 elements, got %v", joinInts(shape))
	}
	if tv.Shape.Rank() != 1 || ti.Shape.Rank() != 2 {
		return c.Errorf("a_values must be a vector and a_indices a matrix: got %v and %v", tv, ti)
	}
	if ti.Shape[0] != tv.Shape[0] || ti.Shape[1] != 2 || tv.DType != tb.DType {
		return c.Errorf("a_indices %v must be [nnz, 2] for a_values %v, and b %v of the values' dtype", ti, tv, tb)
	}
	adjA, adjB := c.Attrs.Bool("adjoint_a"), c.Attrs.Bool("adjoint_b")
	outerL, innerL := shape[0], shape[1]
	if adjA {
		outerL, innerL = innerL, outerL
	}
	outerR, innerR := tb.Shape[1], tb.Shape[0]
	if adjB {
		outerR, innerR = innerR, outerR
	}
	if int64(innerR) != innerL {
		return c.Errorf("cannot multiply A and B because inner dimension does not match: %d vs. %d (A %v, adjoint_a %v; B %v, adjoint_b %v)",
			innerL, innerR, joinInts(shape), adjA, tb, adjB)
	}
	if outerL < 0 || innerL < 0 || outerL > 1<<31 || outerL*int64(outerR) > 1<<31 {
		return c.Errorf("a_shape %v is negative or too large", joinInts(shape))
	}
	idx, err := c.rawInts(0, "a_indices")
	if err != nil {
		return err
	}
	mCol, kCol := 0, 1
	if adjA {
		mCol, kCol = 1, 0
	}
	nnz := ti.Shape[0]
	for i := range nnz {
		if k := idx[2*i+kCol]; k < 0 || k >= innerL {
			return c.Errorf("k (%d) from index[%d,%d] out of bounds (>=%d)", k, i, kCol, innerL)
		}
		if m := idx[2*i+mCol]; m < 0 || m >= outerL {
			return c.Errorf("m (%d) from index[%d,%d] out of bounds (>=%d)", m, i, mCol, outerL)
		}
	}
	b := c.B
	out := ir.TensorType{DType: tv.DType, Shape: ir.Shape{int(outerL), outerR}}
	acc := accType(tv.DType)
	if nnz == 0 || out.Shape.Size() == 0 {
		c.Out = []ir.Value{b.Full(out, 0)}
		return nil
	}
	bt := c.In[3]
	if adjB {
		bt = b.Transpose(bt, []int{1, 0})
	}
	col := func(j int) ir.Value {
		return b.Reshape(b.Slice(c.In[0], []int{0, j}, []int{nnz, j + 1}, []int{1, 1}), ir.Shape{nnz})
	}
	rows := b.Convert(gatherRows(b, bt, col(kCol)), acc) // [nnz, N]
	vals := b.BroadcastInDim(b.Convert(c.In[1], acc), ir.Shape{nnz, outerR}, []int{0})
	y := b.Full(ir.TensorType{DType: acc, Shape: out.Shape}, 0)
	y = b.Scatter(y, b.Reshape(col(mCol), ir.Shape{nnz, 1}), b.Binary(ir.OpMul, rows, vals),
		ir.ScatterDims{UpdateWindowDims: []int{1}, InsertedWindowDims: []int{0}, ScatterDimsToOperandDims: []int{0}, IndexVectorDim: 1, Kind: ir.ScatterAdd})
	c.Out = []ir.Value{b.Convert(y, tv.DType)}
	return nil
}

// reshapeTarget resolves new_shape (one -1 at most) for a dense shape of
// the given size, with reshape_util.cc's errors.
func (c *Call) reshapeTarget(in, target []int64) ([]int64, error) {
	dense := int64(1)
	for _, d := range in {
		if d < 0 {
			return nil, c.Errorf("input_shape %v has a negative size", joinInts(in))
		}
		if d != 0 && dense > (1<<62)/d {
			return nil, c.Errorf("input_shape %v has too many elements", joinInts(in))
		}
		dense *= d
	}
	out := slices.Clone(target)
	unknown := -1
	product := int64(1)
	for j, d := range target {
		switch {
		case d == -1:
			if unknown != -1 {
				return nil, c.Errorf("only one output dimension may be -1, not both %d and %d (new_shape %v)", unknown, j, joinInts(target))
			}
			unknown = j
		case d < 0:
			return nil, c.Errorf("size %d must be non-negative, not %d (new_shape %v)", j, d, joinInts(target))
		default:
			if d != 0 && product > (1<<62)/d {
				return nil, c.Errorf("new_shape %v has too many elements", joinInts(target))
			}
			product *= d
		}
	}
	if unknown != -1 {
		if product == 0 {
			return nil, c.Errorf("reshape cannot infer the missing input size for an empty tensor unless all specified input sizes are non-zero (input_shape %v, new_shape %v)",
				joinInts(in), joinInts(target))
		}
		missing := dense / product
		if missing*product != dense {
			return nil, c.Errorf("input to reshape is a SparseTensor with %d dense values, but the requested shape requires a multiple of %d (input_shape %v, new_shape %v)",
				dense, product, joinInts(in), joinInts(target))
		}
		out[unknown] = missing
	} else if product != dense {
		return nil, c.Errorf("input to reshape is a tensor with %d dense values, but the requested shape has %d. input_shape=%v output_shape=%v",
			dense, product, joinInts(in), joinInts(target))
	}
	return out, nil
}

// strides are the row-major strides of shape.
func strides(shape []int64) []int64 {
	s := make([]int64, len(shape))
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= shape[i]
	}
	return s
}

// lowerSparseReshape maps each index to its row-major position in the old
// shape and back to an index in the new one, as reshape_util.cc does with
// C's truncating division (so indices out of bounds map as the CPU maps
// them).
func lowerSparseReshape(c *Call) error {
	if err := c.arity(3); err != nil {
		return err
	}
	ti := c.Type(0)
	in, err := c.hostVector(1, "input_shape")
	if err != nil {
		return err
	}
	target, err := c.hostVector(2, "new_shape")
	if err != nil {
		return err
	}
	if ti.Shape.Rank() != 2 || ti.DType != ir.I64 {
		return c.Errorf("input_indices must be an int64 matrix, got %v", ti)
	}
	if ti.Shape[1] != len(in) {
		return c.Errorf("input tensor rank must match input shape length: indices %v, input_shape %v", ti, joinInts(in))
	}
	out, err := c.reshapeTarget(in, target)
	if err != nil {
		return err
	}
	b := c.B
	nnz, r, ro := ti.Shape[0], len(in), len(out)
	res := ir.TensorType{DType: ir.I64, Shape: ir.Shape{nnz, ro}}
	if nnz == 0 || ro == 0 {
		c.Out = []ir.Value{b.Full(res, 0), shapeVector(b, out)}
		return nil
	}
	var id ir.Value
	if r == 0 {
		id = b.Full(ir.TensorType{DType: ir.I64, Shape: ir.Shape{nnz}}, 0)
	} else {
		sin := b.BroadcastInDim(i64Constant(b, ir.Shape{r}, strides(in)), ti.Shape, []int{1})
		id = b.Reduce(b.Binary(ir.OpMul, c.In[0], sin), ir.ReduceSum, []int{1})
	}
	cols := make([]ir.Value, ro)
	for j, s := range strides(out) {
		sv := b.Full(ir.TensorType{DType: ir.I64, Shape: ir.Shape{nnz}}, float64(s))
		cols[j] = b.Reshape(b.Binary(ir.OpDiv, id, sv), ir.Shape{nnz, 1})
		id = b.Binary(ir.OpRem, id, sv)
	}
	c.Out = []ir.Value{b.Concat(1, cols...), shapeVector(b, out)}
	return nil
}

// lexOrder is the stable permutation (int32 [nnz]) that sorts the rows of
// the int64 indices [nnz, rank] lexicographically: stable sorts by each
// column, the last first.
func lexOrder(b *ir.Builder, ind ir.Value) ir.Value {
	t := b.Type(ind)
	nnz, r := t.Shape[0], t.Shape[1]
	perm := b.Iota(ir.TensorType{DType: ir.I32, Shape: ir.Shape{nnz}}, 0)
	for d := r - 1; d >= 0; d-- {
		col := b.Reshape(b.Slice(ind, []int{0, d}, []int{nnz, d + 1}, []int{1, 1}), ir.Shape{nnz})
		key := gatherRows(b, col, perm)
		p := b.ArgSort(key, ir.SortAttrs{Dim: 0}, ir.I32)
		perm = gatherRows(b, perm, p)
	}
	return perm
}

// lowerSparseReorder sorts the entries into row-major order of their
// indices (SparseTensor::Reorder), which needs no shape: indices out of
// bounds sort by their values, as on the CPU.
func lowerSparseReorder(c *Call) error {
	if err := c.arity(3); err != nil {
		return err
	}
	ts := c.Type(2)
	if ts.Shape.Rank() != 1 {
		return c.Errorf("input_shape must be a vector, got %v (inputs %s)", ts, c.Inputs())
	}
	nnz, err := c.sparseInput(0, 1, ts.Shape[0])
	if err != nil {
		return err
	}
	if c.Type(0).DType != ir.I64 {
		return c.Errorf("input_indices must be int64, got %v", c.Type(0))
	}
	if nnz <= 1 || ts.Shape[0] == 0 {
		b := c.B
		c.Out = []ir.Value{b.Convert(c.In[0], ir.I64), c.In[1]}
		if nnz == 0 {
			c.Out = []ir.Value{zeros(b, c.Type(0)), zeros(b, c.Type(1))}
		}
		return nil
	}
	perm := lexOrder(c.B, c.In[0])
	c.Out = []ir.Value{gatherRows(c.B, c.In[0], perm), gatherRows(c.B, c.In[1], perm)}
	return nil
}

// lowerSparseSlice keeps the entries inside [start, start+size) in every
// dimension, in their order, shifted by start (SparseTensor::Slice); each
// output dimension is size, or what remains of the input past start.
func lowerSparseSlice(c *Call) error {
	if err := c.arity(5); err != nil {
		return err
	}
	shape, err := c.hostVector(2, "shape")
	if err != nil {
		return err
	}
	start, err := c.hostVector(3, "start")
	if err != nil {
		return err
	}
	size, err := c.hostVector(4, "size")
	if err != nil {
		return err
	}
	r := len(shape)
	if len(start) != r || len(size) != r {
		return c.Errorf("expected start %v and size %v to be vectors of length %d, the rank of shape %v", joinInts(start), joinInts(size), r, joinInts(shape))
	}
	if err := c.denseShape(shape, "shape"); err != nil {
		return err
	}
	for d := range r {
		if size[d] < 0 {
			return c.Errorf("expected a non-negative size, got %d (size %v)", size[d], joinInts(size))
		}
	}
	nnz, err := c.sparseInput(0, 1, r)
	if err != nil {
		return err
	}
	idx, err := c.rawInts(0, "indices")
	if err != nil {
		return err
	}
	outShape := make([]int64, r)
	for d := range r {
		if start[d]+size[d] < shape[d] {
			outShape[d] = size[d]
		} else {
			outShape[d] = max(shape[d]-start[d], 0)
		}
	}
	var rows [][]int64
	var pos []int64
	for i := range nnz {
		row := idx[i*r : (i+1)*r]
		hit := true
		for d := range r {
			if !(start[d] <= row[d] && row[d]-start[d] < size[d]) {
				hit = false
				break
			}
		}
		if !hit {
			continue
		}
		out := make([]int64, r)
		for d := range r {
			out[d] = row[d] - start[d]
		}
		rows = append(rows, out)
		pos = append(pos, int64(i))
	}
	b := c.B
	c.Out = []ir.Value{indexMatrix(b, rows, r), take(b, c.In[1], pos), shapeVector(b, outShape)}
	return nil
}

// lowerSparseSliceGrad routes each output entry's gradient back to the
// input entry it came from, matching them in order as the CPU kernel does
// (sparse_slice_grad_op.cc); input entries not in the slice get 0.
func lowerSparseSliceGrad(c *Call) error {
	if err := c.arity(4); err != nil {
		return err
	}
	tg, ti, ts, to := c.Type(0), c.Type(1), c.Type(2), c.Type(3)
	if ti.Shape.Rank() != 2 || to.Shape.Rank() != 2 {
		return c.Errorf("input and output indices should be matrices but received shapes: %v and %v", ti, to)
	}
	if tg.Shape.Rank() != 1 {
		return c.Errorf("input backprop_val_grad should be a vector but received shape: %v", tg)
	}
	if ti.Shape[1] != to.Shape[1] {
		return c.Errorf("the input and output should have the same ndims: got: %d and %d", ti.Shape[1], to.Shape[1])
	}
	if to.Shape[0] > ti.Shape[0] {
		return c.Errorf("# rows of output_indices should be not greater than of input_indices, got %d and %d", to.Shape[0], ti.Shape[0])
	}
	if tg.Shape[0] != to.Shape[0] {
		return c.Errorf("# elements of backprop_val_grad and # rows of output_indices should match (#nnz of sum): got %d and %d", tg.Shape[0], to.Shape[0])
	}
	if ts.Shape.Rank() != 1 || ts.Shape[0] != ti.Shape[1] {
		return c.Errorf("expected input_start to be a vector of length %d, got %v", ti.Shape[1], ts)
	}
	in, err := c.rawInts(1, "input_indices")
	if err != nil {
		return err
	}
	st, err := c.rawInts(2, "input_start")
	if err != nil {
		return err
	}
	out, err := c.rawInts(3, "output_indices")
	if err != nil {
		return err
	}
	nIn, nOut, r := ti.Shape[0], to.Shape[0], ti.Shape[1]
	pos := make([]int64, nIn)
	j := 0
	for i := range nIn {
		pos[i] = -1
		if j >= nOut {
			continue
		}
		same := true
		for d := range r {
			if in[i*r+d] != out[j*r+d]+st[d] {
				same = false
				break
			}
		}
		if same {
			pos[i] = int64(j)
			j++
		}
	}
	if j != nOut {
		return c.Errorf("elements of backprop_val_grad aren't all propagated. Num elements: %d, used: %d", nOut, j)
	}
	c.Out = []ir.Value{takeOr(c.B, c.In[0], pos, c.B.Scalar(tg.DType, 0))}
	return nil
}

// sliceIndex, dimInSlice and sliceSize place a coordinate along the split
// dimension in one of num_split slices, the first residual ones a size
// larger (SparseTensor::Split).
func sliceIndex(dim, size, residual int64) int64 {
	if residual == 0 {
		return dim / size
	}
	off := residual * (size + 1)
	if dim < off {
		return dim / (size + 1)
	}
	return residual + (dim-off)/size
}

func dimInSlice(dim, size, residual int64) int64 {
	if residual == 0 {
		return dim % size
	}
	off := residual * (size + 1)
	if dim < off {
		return dim % (size + 1)
	}
	return (dim - off) % size
}

// lowerSparseSplit splits along split_dim into num_split sparse tensors,
// each keeping its entries in their input order.
func lowerSparseSplit(c *Call) error {
	if err := c.arity(4); err != nil {
		return err
	}
	ax, err := c.hostScalar(0, "split_dim")
	if err != nil {
		return err
	}
	if c.Type(0).Shape.Rank() != 0 {
		return c.Errorf("input axis should be a scalar but received shape %v", c.Type(0))
	}
	shape, err := c.hostVector(3, "shape")
	if err != nil {
		return err
	}
	r := int64(len(shape))
	axis := ax
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis >= r {
		return c.Errorf("input axis should be in range [%d, %d), got %d (shape %v)", -r, r, ax, joinInts(shape))
	}
	n := c.Attrs.Int("num_split", 0)
	if n < 1 || n > shape[axis] {
		return c.Errorf("input num_split should be between 1 and the splitting dimension size (%d), got %d", shape[axis], n)
	}
	if err := c.denseShape(shape, "shape"); err != nil {
		return err
	}
	nnz, err := c.sparseInput(1, 2, int(r))
	if err != nil {
		return err
	}
	idx, err := c.rawInts(1, "indices")
	if err != nil {
		return err
	}
	for i := range nnz {
		row := idx[i*int(r) : (i+1)*int(r)]
		for d, v := range row {
			if v < 0 || v >= shape[d] {
				return c.Errorf("sparse index tuple indices[%d, :] = %v is out of bounds (shape %v)", i, joinInts(row), joinInts(shape))
			}
		}
	}
	size, residual := shape[axis]/n, shape[axis]%n
	rows := make([][][]int64, n)
	pos := make([][]int64, n)
	for i := range nnz {
		row := slices.Clone(idx[i*int(r) : (i+1)*int(r)])
		s := sliceIndex(row[axis], size, residual)
		row[axis] = dimInSlice(row[axis], size, residual)
		rows[s] = append(rows[s], row)
		pos[s] = append(pos[s], int64(i))
	}
	b := c.B
	outs := make([]ir.Value, 0, 3*n)
	for s := range n {
		outs = append(outs, indexMatrix(b, rows[s], int(r)))
	}
	for s := range n {
		outs = append(outs, take(b, c.In[2], pos[s]))
	}
	for s := range n {
		sh := slices.Clone(shape)
		sh[axis] = size
		if s < residual {
			sh[axis]++
		}
		outs = append(outs, shapeVector(b, sh))
	}
	c.Out = outs
	return nil
}

// lowerFillEmptyRows gives each empty row of the first dimension one entry,
// at column 0 with default_value, and places every row's entries together
// in row order, keeping their order within a row
// (sparse_fill_empty_rows_op.cc). ragged is RaggedFillEmptyRows, whose
// indices are a vector of row ids and whose row count is nrows.
func lowerFillEmptyRows(ragged bool) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(4); err != nil {
			return err
		}
		ti, tv, td := c.Type(0), c.Type(1), c.Type(3)
		name := "dense_shape"
		if ragged {
			name = "nrows"
		}
		var rows int64
		rank := 1
		if ragged {
			if c.Type(2).Shape.Rank() != 0 {
				return c.Errorf("nrows must be a scalar, saw: %v", c.Type(2))
			}
			v, err := c.hostScalar(2, name)
			if err != nil {
				return err
			}
			rows = v
			if ti.Shape.Rank() != 1 {
				return c.Errorf("indices must be a vector, saw: %v", ti)
			}
		} else {
			shape, err := c.hostVector(2, name)
			if err != nil {
				return err
			}
			if ti.Shape.Rank() != 2 {
				return c.Errorf("indices must be a matrix, saw: %v", ti)
			}
			if len(shape) == 0 {
				return c.Errorf("dense shape cannot be empty")
			}
			rows = shape[0]
			rank = ti.Shape[1]
			if len(shape) != rank {
				return c.Errorf("the length of `dense_shape` (%d) must match the second dimension of `indices` (%d)", len(shape), rank)
			}
		}
		if tv.Shape.Rank() != 1 {
			return c.Errorf("values must be a vector, saw: %v", tv)
		}
		if ti.Shape[0] != tv.Shape[0] {
			return c.Errorf("the length of `values` (%d) must match the first dimension of `indices` (%d)", tv.Shape[0], ti.Shape[0])
		}
		if td.Shape.Rank() != 0 || td.DType != tv.DType {
			return c.Errorf("default_value must be a scalar of the values' dtype, saw: %v (values %v)", td, tv)
		}
		if ti.DType != ir.I64 {
			return c.Errorf("indices must be int64, got %v", ti)
		}
		n := ti.Shape[0]
		if rows < 0 || rows > 1<<40 {
			return c.Errorf("%s has %d rows, which is negative or too many", name, rows)
		}
		if rows == 0 && n != 0 {
			return c.Errorf("received SparseTensor with dense_shape[0] = 0 but indices.shape[0] = %d", n)
		}
		idx, err := c.rawInts(0, "indices")
		if err != nil {
			return err
		}
		count := make([]int64, rows)
		for i := range n {
			row := idx[i*rank]
			if row < 0 || row >= rows {
				return c.Errorf("indices(%d, 0) is invalid: %d >= %d", i, row, rows)
			}
			count[row]++
		}
		// start[row] is where the row's entries begin in the output.
		start := make([]int64, rows+1)
		empty := make([]int64, rows)
		for row := range rows {
			k := count[row]
			if k == 0 {
				empty[row], k = 1, 1
			}
			start[row+1] = start[row] + k
		}
		full := start[rows]
		outIdx := make([]int64, full*int64(rank))
		pos := make([]int64, full)
		for j := range pos {
			pos[j] = -1
		}
		reverse := make([]int64, n)
		filled := make([]int64, rows)
		for i := range n {
			row := idx[i*rank]
			j := start[row] + filled[row]
			filled[row]++
			copy(outIdx[j*int64(rank):(j+1)*int64(rank)], idx[i*rank:(i+1)*rank])
			pos[j] = int64(i)
			reverse[i] = j
		}
		for row := range rows {
			if empty[row] == 1 {
				outIdx[start[row]*int64(rank)] = row
			}
		}
		b := c.B
		idxShape := ir.Shape{int(full), rank}
		if ragged && rows > 0 {
			// With no rows the CPU kernel gives row ids of shape [0, 1]
			// (its early exit allocates [0, rank] for both forms).
			idxShape = ir.Shape{int(full)}
		}
		indicator := b.Compare(ir.CmpNE, i64Constant(b, ir.Shape{int(rows)}, empty), b.Full(ir.TensorType{DType: ir.I64, Shape: ir.Shape{int(rows)}}, 0))
		c.Out = []ir.Value{i64Constant(b, idxShape, outIdx), takeOr(b, c.In[1], pos, c.In[3]), indicator, i64Constant(b, ir.Shape{int(n)}, reverse)}
		return nil
	}
}

// lowerFillEmptyRowsGrad gathers each input entry's gradient from where
// the forward op put it; the default value's gradient sums the gradients
// of the entries no input entry maps to (the filled ones). The 16-bit
// floats sum in float32.
func lowerFillEmptyRowsGrad(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	tr, tg := c.Type(0), c.Type(1)
	if tr.Shape.Rank() != 1 {
		return c.Errorf("reverse_index_map must be a vector, saw: %v", tr)
	}
	if tg.Shape.Rank() != 1 {
		return c.Errorf("grad_values must be a vector, saw: %v", tg)
	}
	rev, err := c.rawInts(0, "reverse_index_map")
	if err != nil {
		return err
	}
	full := tg.Shape[0]
	visited := make([]int64, full)
	for _, j := range rev {
		if j < 0 || j >= int64(full) {
			return c.Errorf("elements in reverse index must be in [0, %d) but got %d", full, j)
		}
		visited[j] = 1
	}
	b := c.B
	acc := accType(tg.DType)
	dv := take(b, c.In[1], rev)
	var dd ir.Value
	if full == 0 {
		dd = b.Scalar(tg.DType, 0)
	} else {
		g := b.Convert(c.In[1], acc)
		seen := b.Compare(ir.CmpNE, i64Constant(b, ir.Shape{full}, visited), b.Full(ir.TensorType{DType: ir.I64, Shape: ir.Shape{full}}, 0))
		dd = b.Convert(b.Reduce(b.Select(seen, like(b, g, 0), g), ir.ReduceSum, []int{0}), tg.DType)
	}
	c.Out = []ir.Value{dv, dd}
	return nil
}

// lowerSparseConcat concatenates N sparse tensors along concat_dim: each
// input's indices shifted by the sizes of the inputs before it along that
// dimension, then all entries sorted into row-major order on the device, as
// SparseTensor::Concat and Reorder leave them.
func lowerSparseConcat(c *Call) error {
	if len(c.In) == 0 || len(c.In)%3 != 0 {
		return c.Errorf("takes N indices, N values and N shapes, got %d inputs (%s)", len(c.In), c.Inputs())
	}
	n := len(c.In) / 3
	shapes := make([][]int64, n)
	for i := range n {
		s, err := c.hostVector(2*n+i, fmt.Sprintf("shapes[%d]", i))
		if err != nil {
			return err
		}
		shapes[i] = s
	}
	r := len(shapes[0])
	a := c.Attrs.Int("concat_dim", 0)
	cd := int(a)
	if cd < 0 {
		cd += r
	}
	if cd < 0 || cd >= r {
		return c.Errorf("concat dimension must be in range [%d, %d), got %d", -r, r, a)
	}
	outShape := slices.Clone(shapes[0])
	offsets := make([]int64, n)
	for i := range n {
		if err := c.denseShape(shapes[i], fmt.Sprintf("shapes[%d]", i)); err != nil {
			return err
		}
		if len(shapes[i]) != r {
			return c.Errorf("ranks of all input tensors must match: expected %d but got %d at position %d", r, len(shapes[i]), i)
		}
		for j := range r {
			if j != cd && shapes[i][j] != shapes[0][j] {
				return c.Errorf("input shapes must match: expected %d for dimension %d but got %d at position %d", shapes[0][j], j, shapes[i][j], i)
			}
		}
		if i > 0 {
			offsets[i] = offsets[i-1] + shapes[i-1][cd]
			outShape[cd] += shapes[i][cd]
		}
	}
	total := 0
	vt := c.Type(n).DType
	for i := range n {
		ti, tv := c.Type(i), c.Type(n+i)
		if ti.Shape.Rank() != 2 || ti.DType != ir.I64 {
			return c.Errorf("input indices should be an int64 matrix but received %v at position %d", ti, i)
		}
		if tv.Shape.Rank() != 1 || tv.DType != vt {
			return c.Errorf("input values should be a vector of %v but received %v at position %d", vt, tv, i)
		}
		if ti.Shape[0] != tv.Shape[0] {
			return c.Errorf("indices and values rows (indexing dimension) must match. (indices = %d, values = %d) at position %d", ti.Shape[0], tv.Shape[0], i)
		}
		if ti.Shape[1] != r {
			return c.Errorf("index rank (%d) and shape rank (%d) do not match at position %d", ti.Shape[1], r, i)
		}
		total += ti.Shape[0]
	}
	b := c.B
	if total == 0 {
		c.Out = []ir.Value{b.Full(ir.TensorType{DType: ir.I64, Shape: ir.Shape{0, r}}, 0), zeros(b, ir.TensorType{DType: vt, Shape: ir.Shape{0}}), shapeVector(b, outShape)}
		return nil
	}
	var inds, vals []ir.Value
	for i := range n {
		k := c.Type(i).Shape[0]
		if k == 0 {
			continue
		}
		shift := make([]int64, r)
		shift[cd] = offsets[i]
		inds = append(inds, b.Binary(ir.OpAdd, c.In[i], b.BroadcastInDim(i64Constant(b, ir.Shape{r}, shift), ir.Shape{k, r}, []int{1})))
		vals = append(vals, c.In[n+i])
	}
	ind, val := b.Concat(0, inds...), b.Concat(0, vals...)
	perm := lexOrder(b, ind)
	c.Out = []ir.Value{gatherRows(b, ind, perm), gatherRows(b, val, perm), shapeVector(b, outShape)}
	return nil
}

package lower

import (
	"slices"

	"github.com/metalplug/metalplug/backend/ir"
)

// Sparse segment reductions (segment_reduction_ops_impl.h): rows of data
// picked by indices are summed into the output row their segment id names;
// the mean divides by the segment's row count and SqrtN by its square root
// (an empty segment gives 0). Without num_segments the output has as many
// rows as the last (sorted) segment id plus one, read from the ids
// (Kernel.ReadInputs), as TensorFlow's GPU reads it back. The gradients
// scatter each segment's gradient row, so weighted, back to the data rows
// indices name: Grad into output_dim0 rows, GradV2 into one row per distinct
// index (read on the host), listed sorted beside. The 16-bit floats
// accumulate in float32. And SparseToDense.

// segKind is how a sparse segment reduction weighs a segment's rows.
type segKind int

const (
	segSum segKind = iota
	segMean
	segSqrtN
)

func init() {
	cons := []Constraint{{"T", Floats}, {"Tidx", Indices}, {"Tsegmentids", Indices}}
	family := func(k segKind, op, withNum, grad, gradV2 string) {
		register(Kernel{Op: op, Constraints: cons, Inputs: []string{"data", "indices", "segment_ids"},
			ReadInputs: []int{2}, Lower: lowerSparseSegment(k, false)})
		register(Kernel{Op: withNum, Constraints: cons,
			Inputs: []string{"data", "indices", "segment_ids", "num_segments"}, HostInputs: []string{"num_segments"},
			Lower: lowerSparseSegment(k, true)})
		register(Kernel{Op: grad, Constraints: cons, Inputs: []string{"grad", "indices", "segment_ids", "output_dim0"},
			HostInputs: []string{"output_dim0"}, Lower: lowerSparseSegmentGrad(k, false)})
		register(Kernel{Op: gradV2, Constraints: cons,
			Inputs: []string{"grad", "indices", "segment_ids", "dense_output_dim0"}, HostInputs: []string{"dense_output_dim0"},
			ReadInputs: []int{1}, Lower: lowerSparseSegmentGrad(k, true)})
	}
	family(segSum, "SparseSegmentSum", "SparseSegmentSumWithNumSegments", "SparseSegmentSumGrad", "SparseSegmentSumGradV2")
	family(segMean, "SparseSegmentMean", "SparseSegmentMeanWithNumSegments", "SparseSegmentMeanGrad", "SparseSegmentMeanGradV2")
	family(segSqrtN, "SparseSegmentSqrtN", "SparseSegmentSqrtNWithNumSegments", "SparseSegmentSqrtNGrad", "SparseSegmentSqrtNGradV2")
	register(Kernel{Op: "SparseToDense", Constraints: []Constraint{{"T", All}, {"Tindices", Indices}},
		Inputs: []string{"sparse_indices", "output_shape", "sparse_values", "default_value"}, HostInputs: []string{"output_shape"}, Attrs: []AttrSpec{{Name: "validate_indices", Kind: AttrBool, Optional: true}}, Lower: lowerSparseToDense})
}

// segmentCounts is how many of the ids [k] name each of rows segments, as
// a [rows] tensor of dtype d.
func segmentCounts(c *Call, ids ir.Value, k, rows int, d ir.DType) (ir.Value, error) {
	b := c.B
	return scatterInto(c, zeros(b, ir.TensorType{DType: d, Shape: ir.Shape{rows}}), b.Reshape(ids, ir.Shape{k, 1}),
		b.Full(ir.TensorType{DType: d, Shape: ir.Shape{k}}, 1), ir.ScatterAdd)
}

// segmentWeights is each segment's weight: 1 (sum), 1/count (mean) or
// 1/sqrt(count) (SqrtN), with an empty segment's count taken as 1.
func segmentWeights(c *Call, kind segKind, count ir.Value) ir.Value {
	b := c.B
	n := b.Binary(ir.OpMax, count, like(b, count, 1))
	if kind == segSqrtN {
		n = b.Unary(ir.OpSqrt, n)
	}
	return b.Binary(ir.OpDiv, like(b, n, 1), n)
}

// checkSparseSegment checks indices and segment_ids: vectors of one length,
// data of rank at least 1.
func checkSparseSegment(c *Call) (k int, err error) {
	td, ti, ts := c.Type(0), c.Type(1), c.Type(2)
	if td.Shape.Rank() < 1 || ti.Shape.Rank() != 1 || ts.Shape.Rank() != 1 || ti.Shape[0] != ts.Shape[0] {
		return 0, c.Errorf("data must have rank at least 1 and indices and segment_ids be vectors of one length: got %s", c.Inputs())
	}
	for _, t := range []ir.TensorType{ti, ts} {
		if t.DType != ir.I32 && t.DType != ir.I64 {
			return 0, c.Errorf("indices and segment_ids must be int32 or int64: got %s", c.Inputs())
		}
	}
	return ti.Shape[0], nil
}

// gatherRowsOrZero takes rows of x at the indices [k] (a device tensor),
// zeros where an index is out of range.
func gatherRowsOrZero(b *ir.Builder, x, idx ir.Value, k int) ir.Value {
	t := b.Type(x)
	g := gatherRows(b, x, b.Reshape(idx, ir.Shape{k}))
	it := b.Type(idx).DType
	ok := inRange(b, idx, b.Reshape(intVector(b, it, []int{t.Shape[0]}), nil), []int{})
	return b.Select(b.BroadcastInDim(ok, b.Type(g).Shape, []int{0}), g, zeros(b, b.Type(g)))
}

func lowerSparseSegment(kind segKind, withNum bool) func(c *Call) error {
	return func(c *Call) error {
		n := 3
		if withNum {
			n = 4
		}
		if err := c.arity(n); err != nil {
			return err
		}
		k, err := checkSparseSegment(c)
		if err != nil {
			return err
		}
		td, ts := c.Type(0), c.Type(2)
		var rows int64
		if withNum {
			if rows, err = c.hostScalar(3, "num_segments"); err != nil {
				return err
			}
		} else {
			raw, err := rawBytes(c, 2, "segment_ids")
			if err != nil {
				return err
			}
			rows = lastID(raw, ts.DType) + 1
		}
		if rows < 0 || rows > 1<<40 {
			return c.Errorf("the number of segments %d must be non-negative (segment_ids %v)", rows, ts)
		}
		b := c.B
		acc := accType(td.DType)
		rest := td.Shape[1:]
		out := append(ir.Shape{int(rows)}, rest...)
		if k == 0 || out.Size() == 0 || td.Shape.Size() == 0 {
			c.Out = []ir.Value{zeros(b, ir.TensorType{DType: td.DType, Shape: out})}
			return nil
		}
		g := b.Convert(gatherRowsOrZero(b, c.In[0], c.In[1], k), acc)
		y, err := scatterInto(c, zeros(b, ir.TensorType{DType: acc, Shape: out}), b.Reshape(c.In[2], ir.Shape{k, 1}), g, ir.ScatterAdd)
		if err != nil {
			return err
		}
		if kind != segSum {
			count, err := segmentCounts(c, c.In[2], k, int(rows), acc)
			if err != nil {
				return err
			}
			y = b.Binary(ir.OpMul, y, b.BroadcastInDim(segmentWeights(c, kind, count), out, []int{0}))
		}
		c.Out = []ir.Value{b.Convert(y, td.DType)}
		return nil
	}
}

// lowerSparseSegmentGrad sends grad[segment_ids[i]], weighted, to data row
// indices[i]: of output_dim0 rows (Grad), or of one row per distinct index
// in sorted order (GradV2, which lists those indices too).
func lowerSparseSegmentGrad(kind segKind, v2 bool) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(4); err != nil {
			return err
		}
		k, err := checkSparseSegment(c)
		if err != nil {
			return err
		}
		tg, ti := c.Type(0), c.Type(1)
		dim0, err := c.hostScalar(3, "output_dim0")
		if err != nil {
			return err
		}
		if dim0 < 0 || dim0 > 1<<40 {
			return c.Errorf("output_dim0 %d must be non-negative (grad %v)", dim0, tg)
		}
		b := c.B
		acc := accType(tg.DType)
		rest := tg.Shape[1:]
		segs := tg.Shape[0]
		// Where each i goes: indices[i] itself, or for V2 its position among
		// the sorted distinct indices.
		dest := c.In[1]
		rows := int(dim0)
		var unique []int64
		if v2 {
			raw, err := rawBytes(c, 1, "indices")
			if err != nil {
				return err
			}
			idx := rawInts(raw, ti.DType)
			unique = slices.Compact(slices.Sorted(slices.Values(idx)))
			pos := make([]int64, k)
			for i, x := range idx {
				if x < 0 || x >= dim0 {
					return c.Errorf("index %d (indices[%d]) is out of range [0, %d)", x, i, dim0)
				}
				j, _ := slices.BinarySearch(unique, x)
				pos[i] = int64(j)
			}
			rows = len(unique)
			dest = i64Constant(b, ir.Shape{k}, pos)
		}
		out := append(ir.Shape{rows}, rest...)
		y := zeros(b, ir.TensorType{DType: acc, Shape: out})
		if k > 0 && out.Size() > 0 && segs > 0 {
			g := b.Convert(gatherRowsOrZero(b, c.In[0], c.In[2], k), acc)
			if kind != segSum {
				count, err := segmentCounts(c, c.In[2], k, segs, acc)
				if err != nil {
					return err
				}
				w := gatherRowsOrZero(b, segmentWeights(c, kind, count), c.In[2], k)
				g = b.Binary(ir.OpMul, g, b.BroadcastInDim(w, b.Type(g).Shape, []int{0}))
			}
			if y, err = scatterInto(c, y, b.Reshape(dest, ir.Shape{k, 1}), g, ir.ScatterAdd); err != nil {
				return err
			}
		}
		c.Out = []ir.Value{b.Convert(y, tg.DType)}
		if v2 {
			c.Out = append(c.Out, indexConstant(b, ti.DType, ir.Shape{len(unique)}, unique))
		}
		return nil
	}
}

// lowerSparseToDense writes sparse_values (or one scalar value) at the
// index vectors of sparse_indices ([N, ndims], or [N] or a scalar for one
// dim) into default_value of output_shape.
func lowerSparseToDense(c *Call) error {
	if err := c.arity(4); err != nil {
		return err
	}
	ti, tv, td := c.Type(0), c.Type(2), c.Type(3)
	shape, err := c.hostShape(1, "output_shape")
	if err != nil {
		return err
	}
	if ti.Shape.Rank() > 2 || tv.Shape.Rank() > 1 || td.Shape.Rank() != 0 || tv.DType != td.DType {
		return c.Errorf("sparse_indices must have rank at most 2, sparse_values at most 1 and default_value be a scalar of their dtype: got %s", c.Inputs())
	}
	n, dims := 1, 1
	switch ti.Shape.Rank() {
	case 1:
		n = ti.Shape[0]
	case 2:
		n, dims = ti.Shape[0], ti.Shape[1]
	}
	if dims != len(shape) {
		return c.Errorf("sparse_indices %v index %d dims, but output_shape %v has %d", ti, dims, shape, len(shape))
	}
	if tv.Shape.Rank() == 1 && tv.Shape[0] != n {
		return c.Errorf("sparse_values %v must have one value per index (%d) or be a scalar", tv, n)
	}
	b := c.B
	out := b.BroadcastInDim(c.In[3], shape, nil)
	if n == 0 || shape.Size() == 0 {
		if shape.Size() > 0 {
			out = b.Select(b.Full(ir.TensorType{DType: ir.Bool, Shape: shape}, 1), out, out)
		}
		c.Out = []ir.Value{out}
		return nil
	}
	vals := c.In[2]
	if tv.Shape.Rank() == 0 {
		vals = b.BroadcastInDim(vals, ir.Shape{n}, nil)
	}
	y, err := scatterInto(c, out, b.Reshape(c.In[0], ir.Shape{n, dims}), vals, ir.ScatterReplace)
	if err != nil {
		return err
	}
	c.Out = []ir.Value{y}
	return nil
}

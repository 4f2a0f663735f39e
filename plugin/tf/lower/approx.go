package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

// ApproxTopK (XLA's approximate top-k, tpu_ops' ApproxTopK) answered
// exactly: the k largest (or, with is_max_k false, smallest) values along
// reduction_dimension and their int32 indices, in order, ties by index.
// An exact answer meets every recall_target; the other tuning attributes
// change only how an approximation would be computed.

func init() {
	register(Kernel{Op: "ApproxTopK", Constraints: T(Floats), Inputs: []string{"input"},
		Attrs: []AttrSpec{{Name: "k", Kind: AttrInt}, {Name: "reduction_dimension", Kind: AttrInt, Optional: true},
			{Name: "is_max_k", Kind: AttrBool, Optional: true}, {Name: "recall_target", Kind: AttrFloat, Optional: true},
			{Name: "reduction_input_size_override", Kind: AttrInt, Optional: true}, {Name: "aggregate_to_topk", Kind: AttrBool, Optional: true}},
		Lower: lowerApproxTopK})
}

func lowerApproxTopK(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	t := c.Type(0)
	r := t.Shape.Rank()
	if r < 1 {
		return c.Errorf("input must have rank at least 1, got %v", t)
	}
	dim, err := c.axis(c.Attrs.Int("reduction_dimension", -1), r, "reduction_dimension")
	if err != nil {
		return err
	}
	k := c.Attrs.Int("k", 1)
	n := t.Shape[dim]
	if k < 0 || k > int64(n) {
		return c.Errorf("k %d must be in [0, %d], the size of dimension %d of %v", k, n, dim, t)
	}
	b := c.B
	out := t.Shape.Clone()
	out[dim] = int(k)
	if out.Size() == 0 {
		c.Out = []ir.Value{b.Full(ir.TensorType{DType: t.DType, Shape: out}, 0), b.Full(ir.TensorType{DType: ir.I32, Shape: out}, 0)}
		return nil
	}
	// The reduced dim last, as rows; sorted, the first k of each row.
	perm := append(append(seq(dim), rangeInts(dim+1, r)...), dim)
	x := b.Transpose(c.In[0], perm)
	moved := b.Type(x).Shape
	order := b.ArgSort(x, ir.SortAttrs{Dim: r - 1, Descending: c.Attrs.BoolOr("is_max_k", true)}, ir.I32)
	kept := moved.Clone()
	kept[r-1] = int(k)
	idx := b.Slice(order, make([]int, r), kept, filled(r, 1))
	rows := kept.Size() / int(k)
	flat := b.Reshape(x, ir.Shape{rows, n})
	col := b.Reshape(idx, ir.Shape{rows, int(k), 1})
	row := b.Iota(ir.TensorType{DType: ir.I32, Shape: ir.Shape{rows, int(k), 1}}, 0)
	vals := b.Gather(flat, b.Concat(2, row, col), ir.GatherDims{CollapsedSliceDims: []int{0, 1}, StartIndexMap: []int{0, 1},
		IndexVectorDim: 2, SliceSizes: []int{1, 1}})
	back := make([]int, r)
	for i, p := range perm {
		back[p] = i
	}
	c.Out = []ir.Value{b.Transpose(b.Reshape(vals, kept), back), b.Transpose(idx, back)}
	return nil
}

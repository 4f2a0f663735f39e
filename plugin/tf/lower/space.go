package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

// Rearrangements of a tensor's elements between its dims: Roll
// (roll_op.cc), ReverseSequence (reverse_sequence_op.cc), DepthToSpace and
// SpaceToDepth (depthtospace_op.cc, spacetodepth_op.cc), SpaceToBatchND and
// BatchToSpaceND with their 4-D forms SpaceToBatch and BatchToSpace
// (spacetobatch_op.cc, batchtospace_op.cc). Shifts, axes, block shapes,
// paddings and crops are host inputs, as on TensorFlow's GPU; each op is
// slices, pads, reshapes and transposes, but ReverseSequence, whose lengths
// are device data: a gather.

func init() {
	register(Kernel{Op: "Roll", Constraints: []Constraint{{"T", FloatsInts}, {"Tshift", Indices}, {"Taxis", Indices}},
		Inputs: []string{"input", "shift", "axis"}, HostInputs: []string{"shift", "axis"},
		Lower: lowerRoll})
	register(Kernel{Op: "ReverseSequence", Constraints: []Constraint{{"T", []ir.DType{ir.F32, ir.F16, ir.BF16, ir.Bool}}, {"Tlen", Indices}},
		Inputs: []string{"input", "seq_lengths"}, Attrs: []AttrSpec{{Name: "seq_dim", Kind: AttrInt}, {Name: "batch_dim", Kind: AttrInt, Optional: true}},
		Lower: lowerReverseSequence})
	block := []AttrSpec{{Name: "block_size", Kind: AttrInt}, {Name: "data_format", Kind: AttrString, Optional: true}}
	register(Kernel{Op: "DepthToSpace", Constraints: T(Floats), Inputs: []string{"input"}, Attrs: block, Lower: lowerDepthSpace(true)})
	register(Kernel{Op: "SpaceToDepth", Constraints: T(Floats), Inputs: []string{"input"}, Attrs: block, Lower: lowerDepthSpace(false)})
	register(Kernel{Op: "SpaceToBatchND", Constraints: T(Floats), Inputs: []string{"input", "block_shape", "paddings"},
		HostInputs: []string{"block_shape", "paddings"}, Lower: lowerSpaceToBatch(true)})
	register(Kernel{Op: "BatchToSpaceND", Constraints: T(Floats), Inputs: []string{"input", "block_shape", "crops"},
		HostInputs: []string{"block_shape", "crops"}, Lower: lowerBatchToSpace(true)})
	size := []AttrSpec{{Name: "block_size", Kind: AttrInt}}
	register(Kernel{Op: "SpaceToBatch", Constraints: T(Floats), Inputs: []string{"input", "paddings"}, HostInputs: []string{"paddings"}, Attrs: size, Lower: lowerSpaceToBatch(false)})
	register(Kernel{Op: "BatchToSpace", Constraints: T(Floats), Inputs: []string{"input", "crops"}, HostInputs: []string{"crops"}, Attrs: size, Lower: lowerBatchToSpace(false)})
}

// lowerRoll shifts elements along each axis, those that leave at one end
// coming back at the other; shifts along a repeated axis add up.
func lowerRoll(c *Call) error {
	if err := c.arity(3); err != nil {
		return err
	}
	t := c.Type(0)
	shift, err := c.hostInts(1, "shift")
	if err != nil {
		return err
	}
	axes, err := c.hostInts(2, "axis")
	if err != nil {
		return err
	}
	if len(shift) != len(axes) || c.Type(1).Shape.Rank() > 1 || c.Type(2).Shape.Rank() > 1 {
		return c.Errorf("shift %v and axis %v must be scalars or vectors of one length (input %v)", shift, axes, t)
	}
	r := t.Shape.Rank()
	by := make([]int64, r)
	for i, a := range axes {
		ax, err := c.axis(a, r, "axis")
		if err != nil {
			return err
		}
		by[ax] += shift[i]
	}
	b := c.B
	x := c.In[0]
	for ax, s := range by {
		n := int64(t.Shape[ax])
		if n == 0 {
			continue
		}
		k := int((s%n + n) % n)
		if k == 0 {
			continue
		}
		parts := splitAt(b, x, ax, []int{int(n) - k, k})
		x = b.Concat(ax, parts[1], parts[0])
	}
	c.Out = []ir.Value{x}
	return nil
}

// lowerReverseSequence reverses the first seq_lengths[b] elements along
// seq_dim of each slice b along batch_dim, and keeps the rest: a gather of
// the tensor, batch and sequence dims moved first, at (b, L-1-t) for t < L
// and (b, t) beyond.
func lowerReverseSequence(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	t, tl := c.Type(0), c.Type(1)
	r := t.Shape.Rank()
	sd, err := c.axis(c.Attrs.Int("seq_dim", 0), r, "seq_dim")
	if err != nil {
		return err
	}
	bd, err := c.axis(c.Attrs.Int("batch_dim", 0), r, "batch_dim")
	if err != nil {
		return err
	}
	if sd == bd || tl.Shape.Rank() != 1 || tl.Shape[0] != t.Shape[bd] {
		return c.Errorf("seq_dim %d and batch_dim %d must differ, and seq_lengths %v be a vector of input %v's dim %d", sd, bd, tl, t, bd)
	}
	b := c.B
	if t.Shape.Size() == 0 {
		c.Out = []ir.Value{c.In[0]}
		return nil
	}
	perm := []int{bd, sd}
	for i := range r {
		if i != bd && i != sd {
			perm = append(perm, i)
		}
	}
	inv := make([]int, r)
	for i, p := range perm {
		inv[p] = i
	}
	x := b.Transpose(c.In[0], perm)
	xs := b.Type(x).Shape
	nb, nt := xs[0], xs[1]
	bt := ir.TensorType{DType: tl.DType, Shape: ir.Shape{nb, nt}}
	pos := b.Iota(bt, 1)
	n := b.BroadcastInDim(c.In[1], bt.Shape, []int{0})
	rev := b.Binary(ir.OpSub, b.Binary(ir.OpSub, n, like(b, n, 1)), pos)
	src := b.Select(b.Compare(ir.CmpLT, pos, n), rev, pos)
	col := ir.Shape{nb, nt, 1}
	ids := b.Concat(2, b.Iota(ir.TensorType{DType: tl.DType, Shape: col}, 0), b.Reshape(src, col))
	sizes := append([]int{1, 1}, xs[2:]...)
	g := b.Gather(x, ids, ir.GatherDims{OffsetDims: rangeInts(2, r), CollapsedSliceDims: []int{0, 1}, StartIndexMap: []int{0, 1},
		IndexVectorDim: 2, SliceSizes: sizes})
	c.Out = []ir.Value{b.Transpose(g, inv)}
	return nil
}

// lowerDepthSpace moves blocks of block_size x block_size spatial positions
// into the channels (SpaceToDepth) or back (DepthToSpace), channel index
// (i*block_size + j)*C + c for block position (i, j); NCHW goes through NHWC.
func lowerDepthSpace(toSpace bool) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(1); err != nil {
			return err
		}
		t := c.Type(0)
		bs := int(c.Attrs.Int("block_size", 0))
		format := c.Attrs.String("data_format", "NHWC")
		if t.Shape.Rank() != 4 || bs < 2 || format != "NHWC" && format != "NCHW" {
			return c.Errorf("input must be 4-D, block_size at least 2 and data_format NHWC or NCHW; got %v, block_size %d, %s", t, bs, format)
		}
		b := c.B
		x := c.In[0]
		if format == "NCHW" {
			x = b.Transpose(x, []int{0, 2, 3, 1})
		}
		s := b.Type(x).Shape
		n, h, w, ch := s[0], s[1], s[2], s[3]
		if toSpace {
			if ch%(bs*bs) != 0 {
				return c.Errorf("the depth %d of input %v must be a multiple of block_size^2 = %d", ch, t, bs*bs)
			}
			cd := ch / (bs * bs)
			x = b.Reshape(x, ir.Shape{n, h, w, bs, bs, cd})
			x = b.Transpose(x, []int{0, 1, 3, 2, 4, 5})
			x = b.Reshape(x, ir.Shape{n, h * bs, w * bs, cd})
		} else {
			if h%bs != 0 || w%bs != 0 {
				return c.Errorf("the height %d and width %d of input %v must be multiples of block_size %d", h, w, t, bs)
			}
			x = b.Reshape(x, ir.Shape{n, h / bs, bs, w / bs, bs, ch})
			x = b.Transpose(x, []int{0, 1, 3, 2, 4, 5})
			x = b.Reshape(x, ir.Shape{n, h / bs, w / bs, bs * bs * ch})
		}
		if format == "NCHW" {
			x = b.Transpose(x, []int{0, 3, 1, 2})
		}
		c.Out = []ir.Value{x}
		return nil
	}
}

// blockSpec checks the inputs (3 for the ND ops, 2 for the 4-D ones) and
// reads a space-to-batch op's block shape (host input 1, or the
// block_size attribute of the 4-D ops, two spatial dims) and its paddings
// or crops (the last host input), [M, 2] non-negative values.
func blockSpec(c *Call, nd bool, what string) (blocks []int, pads [][2]int, err error) {
	n := 2
	if nd {
		n = 3
	}
	if err := c.arity(n); err != nil {
		return nil, nil, err
	}
	t := c.Type(0)
	pi := 1
	if nd {
		v, err := c.hostInts(1, "block_shape")
		if err != nil {
			return nil, nil, err
		}
		for _, x := range v {
			blocks = append(blocks, int(x))
		}
		pi = 2
	} else {
		bs := int(c.Attrs.Int("block_size", 0))
		if bs < 2 {
			return nil, nil, c.Errorf("block_size %d must be greater than 1 (input %v)", bs, t)
		}
		if t.Shape.Rank() != 4 {
			return nil, nil, c.Errorf("input must be 4-D, got %v", t)
		}
		blocks = []int{bs, bs}
	}
	p, err := c.hostInts(pi, what)
	if err != nil {
		return nil, nil, err
	}
	m := len(blocks)
	if m == 0 || t.Shape.Rank() < m+1 || len(p) != 2*m || !c.Type(pi).Shape.Equal(ir.Shape{m, 2}) {
		return nil, nil, c.Errorf("block shape %v and %s %v must describe 1 to %d spatial dims of input %v as M and [M, 2] values",
			blocks, what, p, t.Shape.Rank()-1, t)
	}
	for i, bl := range blocks {
		if bl < 1 || p[2*i] < 0 || p[2*i+1] < 0 {
			return nil, nil, c.Errorf("block shape %v must be positive and %s %v non-negative (input %v)", blocks, what, p, t)
		}
		pads = append(pads, [2]int{int(p[2*i]), int(p[2*i+1])})
	}
	return blocks, pads, nil
}

// lowerSpaceToBatch pads the spatial dims, splits each into (size/block,
// block), and moves the block positions in front of the batch.
func lowerSpaceToBatch(nd bool) func(c *Call) error {
	return func(c *Call) error {
		blocks, pads, err := blockSpec(c, nd, "paddings")
		if err != nil {
			return err
		}
		t := c.Type(0)
		r, m := t.Shape.Rank(), len(blocks)
		b := c.B
		low, high := make([]int, r), make([]int, r)
		for i, p := range pads {
			low[i+1], high[i+1] = p[0], p[1]
		}
		x := b.Pad(c.In[0], b.Scalar(t.DType, 0), low, high, make([]int, r))
		ps := b.Type(x).Shape
		split := ir.Shape{ps[0]}
		out := ir.Shape{ps[0] * ir.Shape(blocks).Size()}
		for i, bl := range blocks {
			if ps[i+1]%bl != 0 {
				return c.Errorf("padded spatial dim %d (size %d) of input %v is not a multiple of block shape %v (paddings %v)", i+1, ps[i+1], t, blocks, pads)
			}
			split = append(split, ps[i+1]/bl, bl)
			out = append(out, ps[i+1]/bl)
		}
		split = append(split, ps[m+1:]...)
		out = append(out, ps[m+1:]...)
		// [B, s1, b1, ..., sM, bM, rest] -> [b1, ..., bM, B, s1, ..., sM, rest]
		var perm []int
		for i := range m {
			perm = append(perm, 2+2*i)
		}
		perm = append(perm, 0)
		for i := range m {
			perm = append(perm, 1+2*i)
		}
		perm = append(perm, rangeInts(1+2*m, len(split))...)
		x = b.Transpose(b.Reshape(x, split), perm)
		c.Out = []ir.Value{b.Reshape(x, out)}
		return nil
	}
}

// lowerBatchToSpace is lowerSpaceToBatch's inverse: the block positions
// leave the batch for the spatial dims, which are then cropped.
func lowerBatchToSpace(nd bool) func(c *Call) error {
	return func(c *Call) error {
		blocks, crops, err := blockSpec(c, nd, "crops")
		if err != nil {
			return err
		}
		t := c.Type(0)
		r, m := t.Shape.Rank(), len(blocks)
		nb := ir.Shape(blocks).Size()
		if t.Shape[0]%nb != 0 {
			return c.Errorf("the batch %d of input %v is not a multiple of the block shape %v's product %d", t.Shape[0], t, blocks, nb)
		}
		batch := t.Shape[0] / nb
		b := c.B
		split := append(append(ir.Shape{}, blocks...), batch)
		split = append(split, t.Shape[1:]...)
		// [b1, ..., bM, B, s1, ..., sM, rest] -> [B, s1, b1, ..., sM, bM, rest]
		perm := []int{m}
		full := ir.Shape{batch}
		for i := range m {
			perm = append(perm, m+1+i, i)
			full = append(full, t.Shape[1+i]*blocks[i])
		}
		perm = append(perm, rangeInts(2*m+1, len(split))...)
		full = append(full, t.Shape[m+1:]...)
		x := b.Reshape(b.Transpose(b.Reshape(c.In[0], split), perm), full)
		start, limit := make([]int, r), full.Clone()
		for i, cr := range crops {
			if cr[0]+cr[1] > full[i+1] {
				return c.Errorf("crops %v exceed spatial dim %d (size %d) of the result for input %v and block shape %v", crops, i+1, full[i+1], t, blocks)
			}
			start[i+1], limit[i+1] = cr[0], full[i+1]-cr[1]
		}
		c.Out = []ir.Value{b.Slice(x, start, limit, filled(r, 1))}
		return nil
	}
}

package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

// Max pooling with its argmax, the second-order max-pool gradients and
// MirrorPad's gradient (maxpooling_op.cc, pooling_ops_3d.cc,
// mirror_pad_op.cc). The window is folded tap by tap (patches.go) in
// TensorFlow's CPU order: a window's first element inside the input is its
// first candidate, and a later one replaces it only if strictly greater
// (MaxPoolWithArgmax), or the first element equal to the pooled maximum is
// the one chosen (MaxPoolGradGrad), so ties and NaN go where the CPU puts
// them.

func init() {
	poolAttrs := []AttrSpec{{Name: "ksize", Kind: AttrInts}, {Name: "strides", Kind: AttrInts},
		{Name: "padding", Kind: AttrString}, {Name: "include_batch_in_index", Kind: AttrBool, Optional: true}}
	argmax := []Constraint{{"T", Floats}, {"Targmax", []ir.DType{ir.I64}}}
	register(Kernel{Op: "MaxPoolWithArgmax", Constraints: argmax, Inputs: []string{"input"}, Attrs: poolAttrs,
		Lower: lowerMaxPoolWithArgmax})
	register(Kernel{Op: "MaxPoolGradWithArgmax", Constraints: argmax, Inputs: []string{"input", "grad", "argmax"}, Attrs: poolAttrs,
		Lower: lowerMaxPoolGradWithArgmax})
	register(Kernel{Op: "MaxPoolGradGradWithArgmax", Constraints: argmax, Inputs: []string{"input", "grad", "argmax"}, Attrs: poolAttrs,
		Lower: lowerMaxPoolGradGradWithArgmax})
	gg := []AttrSpec{{Name: "ksize", Kind: AttrInts}, {Name: "strides", Kind: AttrInts},
		{Name: "padding", Kind: AttrString}, {Name: "data_format", Kind: AttrString, Optional: true}}
	register(Kernel{Op: "MaxPoolGradGrad", Constraints: T(Floats), Inputs: []string{"orig_input", "orig_output", "grad"}, Attrs: gg,
		Lower: lowerMaxPoolGradGrad(2)})
	register(Kernel{Op: "MaxPool3DGradGrad", Constraints: T(Floats), Inputs: []string{"orig_input", "orig_output", "grad"}, Attrs: gg,
		Lower: lowerMaxPoolGradGrad(3)})
	register(Kernel{Op: "MaxPoolGradGradV2", Constraints: T(Floats), Inputs: []string{"orig_input", "orig_output", "grad", "ksize", "strides"},
		HostInputs: []string{"ksize", "strides"}, Attrs: gg[2:],
		Lower: windowFromHost(3, lowerMaxPoolGradGrad(2))})
	register(Kernel{Op: "MirrorPadGrad", Constraints: []Constraint{{"T", Floats}, {"Tpaddings", Indices}}, Inputs: []string{"input", "paddings"},
		HostInputs: []string{"paddings"}, Attrs: []AttrSpec{{Name: "mode", Kind: AttrString}},
		Lower: lowerMirrorPadGrad})
}

// maxPoolGeom reads ksize, strides and padding for a channels-last input
// of shape xs with ns spatial dims, in layout l.
func maxPoolGeom(c *Call, l layout, xs ir.Shape) (windowGeom, error) {
	ns := l.ns
	w, err := poolWindow(c, l, xs)
	if err != nil {
		return windowGeom{}, err
	}
	return newGeom(xs[1:ns+1], w.Dims[1:ns+1], w.Strides[1:ns+1], nil, w.Padding[1:ns+1]), nil
}

// argmaxFold is the max of each window and the row-major spatial index of
// the element chosen, as MaxPoolWithArgmax's CPU kernel chooses it, for a
// channels-last x.
func argmaxFold(b *ir.Builder, g windowGeom, x ir.Value) (best, idx ir.Value) {
	d := b.Type(x).DType
	var set ir.Value
	for i, t := range g.taps(b, x, b.Scalar(d, 0)) {
		full := b.Type(t.v).Shape
		at := g.flatIndex(b, t, full)
		valid, partial := g.validMask(b, t, full)
		if i == 0 {
			best, idx = t.v, at
			if partial {
				set = valid
			} else {
				set = b.Full(ir.TensorType{DType: ir.Bool, Shape: full}, 1)
			}
			continue
		}
		upd := b.Binary(ir.OpOr, b.Unary(ir.OpNot, set), b.Compare(ir.CmpLT, best, t.v))
		if partial {
			upd = b.Binary(ir.OpAnd, upd, valid)
			set = b.Binary(ir.OpOr, set, valid)
		} else {
			set = b.Full(ir.TensorType{DType: ir.Bool, Shape: full}, 1)
		}
		best = b.Select(upd, t.v, best)
		idx = b.Select(upd, at, idx)
	}
	return best, idx
}

// argmaxSpec checks the 4-D NHWC input (input 0) and reads the window.
func argmaxSpec(c *Call) (windowGeom, error) {
	t := c.Type(0)
	if t.Shape.Rank() != 4 {
		return windowGeom{}, c.Errorf("input must be 4-D NHWC, got %v", t)
	}
	l := layout{2, false, "NHWC"}
	return maxPoolGeom(c, l, t.Shape)
}

func lowerMaxPoolWithArgmax(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	g, err := argmaxSpec(c)
	if err != nil {
		return err
	}
	b := c.B
	t := c.Type(0)
	n, h, w, ch := t.Shape[0], t.Shape[1], t.Shape[2], t.Shape[3]
	out := ir.Shape{n, g.out[0], g.out[1], ch}
	if out.Size() == 0 {
		c.Out = []ir.Value{b.Full(ir.TensorType{DType: t.DType, Shape: out}, 0), b.Full(ir.TensorType{DType: ir.I64, Shape: out}, 0)}
		return nil
	}
	best, idx := argmaxFold(b, g, c.In[0])
	// (y*W + x)*C + c, and + b*H*W*C with the batch in the index.
	idx = b.Binary(ir.OpMul, idx, b.Full(ir.TensorType{DType: ir.I64, Shape: out}, float64(ch)))
	idx = b.Binary(ir.OpAdd, idx, b.Iota(ir.TensorType{DType: ir.I64, Shape: out}, 3))
	if c.Attrs.Bool("include_batch_in_index") {
		batch := b.Binary(ir.OpMul, b.Iota(ir.TensorType{DType: ir.I64, Shape: out}, 0), b.Full(ir.TensorType{DType: ir.I64, Shape: out}, float64(h*w*ch)))
		idx = b.Binary(ir.OpAdd, idx, batch)
	}
	c.Out = []ir.Value{best, idx}
	return nil
}

// globalArgmax checks grad (input 1) and argmax (input 2) against the
// pooled shape of input 0 and returns argmax as int32 indices of the
// flattened input, the batch added where the index leaves it out.
func globalArgmax(c *Call) (ir.Value, error) {
	g, err := argmaxSpec(c)
	if err != nil {
		return 0, err
	}
	t, ta := c.Type(0), c.Type(2)
	out := ir.Shape{t.Shape[0], g.out[0], g.out[1], t.Shape[3]}
	if !ta.Shape.Equal(out) || ta.DType != ir.I64 {
		return 0, c.Errorf("argmax %v must be int64 of the pooled shape %v of input %v", ta, out, t)
	}
	if t.Shape.Size() >= 1<<31 {
		return 0, c.Errorf("input %v has 2^31 elements or more", t)
	}
	b := c.B
	idx := c.In[2]
	if !c.Attrs.Bool("include_batch_in_index") {
		per := t.Shape[1] * t.Shape[2] * t.Shape[3]
		batch := b.Binary(ir.OpMul, b.Iota(ir.TensorType{DType: ir.I64, Shape: out}, 0), b.Full(ir.TensorType{DType: ir.I64, Shape: out}, float64(per)))
		idx = b.Binary(ir.OpAdd, idx, batch)
	}
	return b.Reshape(b.Convert(idx, ir.I32), ir.Shape{out.Size(), 1}), nil
}

// lowerMaxPoolGradWithArgmax adds each gradient into the input element
// its argmax names (in float32 for the 16-bit floats).
func lowerMaxPoolGradWithArgmax(c *Call) error {
	if err := c.arity(3); err != nil {
		return err
	}
	t, tg := c.Type(0), c.Type(1)
	if tg.DType != t.DType || !tg.Shape.Equal(c.Type(2).Shape) {
		return c.Errorf("grad %v must have the input's dtype and argmax's shape %v (input %v)", tg, c.Type(2), t)
	}
	idx, err := globalArgmax(c)
	if err != nil {
		return err
	}
	b := c.B
	acc := accType(t.DType)
	dx := b.Full(ir.TensorType{DType: acc, Shape: ir.Shape{t.Shape.Size()}}, 0)
	if tg.Shape.Size() > 0 {
		dx = b.Scatter(dx, idx, b.Reshape(b.Convert(c.In[1], acc), ir.Shape{tg.Shape.Size()}),
			ir.ScatterDims{InsertedWindowDims: []int{0}, ScatterDimsToOperandDims: []int{0}, IndexVectorDim: 1, Kind: ir.ScatterAdd})
	}
	c.Out = []ir.Value{b.Convert(b.Reshape(dx, t.Shape), t.DType)}
	return nil
}

// lowerMaxPoolGradGradWithArgmax reads, for each window, the gradient
// (of the input's shape) at the element its argmax names.
func lowerMaxPoolGradGradWithArgmax(c *Call) error {
	if err := c.arity(3); err != nil {
		return err
	}
	t, tg := c.Type(0), c.Type(1)
	if tg.DType != t.DType || !tg.Shape.Equal(t.Shape) {
		return c.Errorf("grad %v must have the input's type %v", tg, t)
	}
	idx, err := globalArgmax(c)
	if err != nil {
		return err
	}
	b := c.B
	ta := c.Type(2)
	if ta.Shape.Size() == 0 || t.Shape.Size() == 0 {
		c.Out = []ir.Value{b.Full(ir.TensorType{DType: t.DType, Shape: ta.Shape}, 0)}
		return nil
	}
	flat := b.Reshape(c.In[1], ir.Shape{t.Shape.Size()})
	y := b.Gather(flat, idx, ir.GatherDims{CollapsedSliceDims: []int{0}, StartIndexMap: []int{0}, IndexVectorDim: 1, SliceSizes: []int{1}})
	c.Out = []ir.Value{b.Reshape(y, ta.Shape)}
	return nil
}

// lowerMaxPoolGradGrad routes, for each window, the gradient at the
// window's first element equal to the pooled value (orig_output), or 0
// where none is (NaN).
func lowerMaxPoolGradGrad(ns int) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(3); err != nil {
			return err
		}
		tx, ty, tg := c.Type(0), c.Type(1), c.Type(2)
		if tx.Shape.Rank() != ns+2 || !tg.Shape.Equal(tx.Shape) || tx.DType != ty.DType || tg.DType != tx.DType {
			return c.Errorf("orig_input %v and grad %v must be of one type of rank %d, and orig_output %v of their dtype", tx, tg, ns+2, ty)
		}
		l, err := readLayout(c, ns)
		if err != nil {
			return err
		}
		b := c.B
		x, g := l.in(b, c.In[0]), l.in(b, c.In[2])
		xs := b.Type(x).Shape
		geom, err := maxPoolGeom(c, l, xs)
		if err != nil {
			return err
		}
		out := append(append(ir.Shape{xs[0]}, geom.out...), xs[ns+1])
		y := l.in(b, c.In[1])
		if ys := b.Type(y).Shape; !ys.Equal(out) {
			return c.Errorf("orig_output %v does not match the pooled shape %v (channels-last) of orig_input %v", ty, out, tx)
		}
		if out.Size() == 0 {
			c.Out = []ir.Value{l.out(b, b.Full(ir.TensorType{DType: tx.DType, Shape: out}, 0))}
			return nil
		}
		xt := geom.taps(b, x, b.Scalar(tx.DType, 0))
		gt := geom.taps(b, g, b.Scalar(tx.DType, 0))
		res := b.Full(ir.TensorType{DType: tx.DType, Shape: out}, 0)
		found := b.Full(ir.TensorType{DType: ir.Bool, Shape: out}, 0)
		for i, t := range xt {
			hit := b.Binary(ir.OpAnd, b.Compare(ir.CmpEQ, t.v, y), b.Unary(ir.OpNot, found))
			if valid, partial := geom.validMask(b, t, out); partial {
				hit = b.Binary(ir.OpAnd, hit, valid)
			}
			res = b.Select(hit, gt[i].v, res)
			found = b.Binary(ir.OpOr, found, hit)
		}
		c.Out = []ir.Value{l.out(b, res)}
		return nil
	}
}

// lowerMirrorPadGrad folds the mirrored edges of a padded gradient back
// onto the elements they copied, dimension by dimension: REFLECT's padding
// at -i copied element i, SYMMETRIC's element i-1 (and likewise at the far
// end).
func lowerMirrorPadGrad(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	t := c.Type(0)
	r := t.Shape.Rank()
	low, high, off, err := mirrorPaddings(c)
	if err != nil {
		return err
	}
	b := c.B
	x := c.In[0]
	zero := b.Scalar(t.DType, 0)
	for i := range r {
		n := t.Shape[i] - low[i] - high[i]
		if n < 0 || low[i] > n-off || high[i] > n-off {
			return c.Errorf("paddings %v/%v do not fit dimension %d of the padded gradient %v in mode %s", low, high, i, t, c.Attrs.String("mode", ""))
		}
		if low[i] == 0 && high[i] == 0 {
			continue
		}
		s := b.Type(x).Shape
		part := func(from, to int) ir.Value {
			start, limit := make([]int, r), s.Clone()
			start[i], limit[i] = from, to
			return b.Slice(x, start, limit, filled(r, 1))
		}
		// at places v (of extent e along i) at offset o of the n elements.
		at := func(v ir.Value, o, e int) ir.Value {
			lo, hi := make([]int, r), make([]int, r)
			lo[i], hi[i] = o, n-o-e
			return b.Pad(v, zero, lo, hi, make([]int, r))
		}
		y := part(low[i], low[i]+n)
		if low[i] > 0 {
			y = b.Binary(ir.OpAdd, y, at(b.Reverse(part(0, low[i]), []int{i}), off, low[i]))
		}
		if high[i] > 0 {
			y = b.Binary(ir.OpAdd, y, at(b.Reverse(part(low[i]+n, low[i]+n+high[i]), []int{i}), n-off-high[i], high[i]))
		}
		x = y
	}
	c.Out = []ir.Value{x}
	return nil
}

package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

// Pooling and its gradients (maxpooling_op.cc, avgpooling_op.cc,
// pooling_ops_3d.cc). Max pooling's gradient routes each gradient to the
// first maximum of its window (select_and_scatter); average pooling divides
// by the number of real, unpadded elements under each window, as TensorFlow
// counts them, and its gradient spreads each gradient evenly back over them.

func init() {
	attrs := func(explicit bool) []AttrSpec {
		a := []AttrSpec{{Name: "ksize", Kind: AttrInts}, {Name: "strides", Kind: AttrInts},
			{Name: "padding", Kind: AttrString}, {Name: "data_format", Kind: AttrString, Optional: true}}
		if explicit {
			a = append(a, AttrSpec{Name: "explicit_paddings", Kind: AttrInts, Optional: true})
		}
		return a
	}
	reg := func(name string, inputs []string, host bool, explicit bool, f func(c *Call) error) {
		k := Kernel{Op: name, Constraints: T(Floats), Inputs: inputs, Attrs: attrs(explicit), Lower: f}
		if host {
			k.HostInputs = []string{"orig_input_shape"}
		}
		register(k)
	}
	reg("MaxPool", []string{"input"}, false, true, lowerPool(2, ir.ReduceMax))
	reg("AvgPool", []string{"value"}, false, false, lowerPool(2, ir.ReduceSum))
	reg("MaxPool3D", []string{"input"}, false, false, lowerPool(3, ir.ReduceMax))
	reg("AvgPool3D", []string{"input"}, false, false, lowerPool(3, ir.ReduceSum))
	reg("MaxPoolGrad", []string{"orig_input", "orig_output", "grad"}, false, true, lowerMaxPoolGrad(2))
	// MaxPool3DGrad's orig_input and orig_output are of TInput, which
	// TensorFlow's GPU registers equal to T; the lowering converts if not.
	reg("MaxPool3DGrad", []string{"orig_input", "orig_output", "grad"}, false, false, lowerMaxPoolGrad(3))
	reg("AvgPoolGrad", []string{"orig_input_shape", "grad"}, true, false, lowerAvgPoolGrad(2))
	// MaxPoolV2 and MaxPoolGradV2 take ksize and strides as host inputs
	// after the data, not as attributes.
	v2 := []AttrSpec{{Name: "padding", Kind: AttrString}, {Name: "data_format", Kind: AttrString, Optional: true}}
	register(Kernel{Op: "MaxPoolV2", Constraints: T(Floats), Inputs: []string{"input", "ksize", "strides"},
		HostInputs: []string{"ksize", "strides"}, Attrs: v2,
		Lower: windowFromHost(1, lowerPool(2, ir.ReduceMax))})
	register(Kernel{Op: "MaxPoolGradV2", Constraints: T(Floats), Inputs: []string{"orig_input", "orig_output", "grad", "ksize", "strides"},
		HostInputs: []string{"ksize", "strides"}, Attrs: v2,
		Lower: windowFromHost(3, lowerMaxPoolGrad(2))})
	reg("AvgPool3DGrad", []string{"orig_input_shape", "grad"}, true, false, lowerAvgPoolGrad(3))
}

// windowFromHost runs f, a lowering of the first n inputs that reads ksize
// and strides as attributes, on those inputs, with ksize and strides taken
// from host inputs n and n+1.
func windowFromHost(n int, f func(c *Call) error) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(n + 2); err != nil {
			return err
		}
		ksize, err := c.hostInts(n, "ksize")
		if err != nil {
			return err
		}
		strides, err := c.hostInts(n+1, "strides")
		if err != nil {
			return err
		}
		a := *c.Attrs
		a.Ints = map[string][]int64{"ksize": ksize, "strides": strides}
		sub := *c
		sub.Attrs, sub.In, sub.types = &a, c.In[:n], c.types[:n]
		if err := f(&sub); err != nil {
			return err
		}
		c.Out = sub.Out
		return nil
	}
}

// poolWindow reads ksize, strides and padding into a channels-last window
// over an input of channels-last shape xs.
func poolWindow(c *Call, l layout, xs ir.Shape) (ir.WindowAttrs, error) {
	ns := l.ns
	ksize, err := l.spatial(c, "ksize", c.Attrs.IntList("ksize", nil))
	if err != nil {
		return ir.WindowAttrs{}, err
	}
	strides, err := l.spatial(c, "strides", c.Attrs.IntList("strides", nil))
	if err != nil {
		return ir.WindowAttrs{}, err
	}
	pad, err := l.padding(c, xs[1:ns+1], ksize, strides, filled(ns, 1))
	if err != nil {
		return ir.WindowAttrs{}, err
	}
	w := ir.WindowAttrs{Dims: []int{1}, Strides: []int{1}, Padding: [][2]int{{0, 0}}}
	w.Dims = append(append(w.Dims, ksize...), 1)
	w.Strides = append(append(w.Strides, strides...), 1)
	w.Padding = append(append(w.Padding, pad...), [2]int{0, 0})
	return w, nil
}

// windowedShape is the shape a window leaves of xs.
func windowedShape(xs ir.Shape, w ir.WindowAttrs) ir.Shape {
	out := make(ir.Shape, len(xs))
	for i := range xs {
		out[i] = windowOut(xs[i], w.Padding[i], w.Dims[i], w.Strides[i], 1)
	}
	return out
}

// windowCounts is how many real elements each window of w covers, shaped
// [1, S'..., 1] for channels-last spatial sizes xs.
func windowCounts(b *ir.Builder, d ir.DType, xs ir.Shape, w ir.WindowAttrs) ir.Value {
	s := xs.Clone()
	s[0], s[len(s)-1] = 1, 1
	return b.ReduceWindow(b.Full(ir.TensorType{DType: d, Shape: s}, 1), ir.ReduceSum, w)
}

func lowerPool(ns int, kind ir.ReduceKind) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(1); err != nil {
			return err
		}
		t := c.Type(0)
		if t.Shape.Rank() != ns+2 {
			return c.Errorf("input must have rank %d, got %v", ns+2, t)
		}
		l, err := readLayout(c, ns)
		if err != nil {
			return err
		}
		b := c.B
		x := l.in(b, c.In[0])
		xs := b.Type(x).Shape
		w, err := poolWindow(c, l, xs)
		if err != nil {
			return err
		}
		y := b.ReduceWindow(x, kind, w)
		if kind == ir.ReduceSum {
			count := windowCounts(b, t.DType, xs, w)
			y = b.Binary(ir.OpDiv, y, b.BroadcastInDim(count, b.Type(y).Shape, nil))
		}
		c.Out = []ir.Value{l.out(b, y)}
		return nil
	}
}

func lowerMaxPoolGrad(ns int) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(3); err != nil {
			return err
		}
		tx, tg := c.Type(0), c.Type(2)
		if tx.Shape.Rank() != ns+2 || tg.Shape.Rank() != ns+2 {
			return c.Errorf("orig_input %v and grad %v must have rank %d", tx, tg, ns+2)
		}
		l, err := readLayout(c, ns)
		if err != nil {
			return err
		}
		b := c.B
		x := l.in(b, b.Convert(c.In[0], tg.DType))
		g := l.in(b, c.In[2])
		xs := b.Type(x).Shape
		w, err := poolWindow(c, l, xs)
		if err != nil {
			return err
		}
		if ws := windowedShape(xs, w); !ws.Equal(b.Type(g).Shape) {
			return c.Errorf("grad %v does not match the pooled shape %v (channels-last) of orig_input %v", tg, ws, tx)
		}
		var dx ir.Value
		if xs.Size() == 0 || tg.Shape.Size() == 0 {
			dx = b.Full(ir.TensorType{DType: tg.DType, Shape: xs}, 0)
		} else {
			dx = b.SelectAndScatter(x, g, ir.CmpGE, w)
		}
		c.Out = []ir.Value{l.out(b, dx)}
		return nil
	}
}

func lowerAvgPoolGrad(ns int) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(2); err != nil {
			return err
		}
		tg := c.Type(1)
		if tg.Shape.Rank() != ns+2 {
			return c.Errorf("grad must have rank %d, got %v", ns+2, tg)
		}
		l, err := readLayout(c, ns)
		if err != nil {
			return err
		}
		shape, err := c.hostShape(0, "orig_input_shape")
		if err != nil {
			return err
		}
		if len(shape) != ns+2 {
			return c.Errorf("orig_input_shape %v must have %d entries (grad %v)", shape, ns+2, tg)
		}
		b := c.B
		xs := l.shapeToLast(shape)
		g := l.in(b, c.In[1])
		w, err := poolWindow(c, l, xs)
		if err != nil {
			return err
		}
		gs := b.Type(g).Shape
		if ws := windowedShape(xs, w); !ws.Equal(gs) {
			return c.Errorf("grad %v does not match the pooled shape %v (channels-last) of orig_input_shape %v", tg, ws, shape)
		}
		if xs.Size() == 0 || gs.Size() == 0 {
			c.Out = []ir.Value{l.out(b, b.Full(ir.TensorType{DType: tg.DType, Shape: xs}, 0))}
			return nil
		}
		// Each window's share, then every input element sums the shares of
		// the windows over it: a stride-1 sum window over the gradient
		// dilated by the strides and padded by window-1-pad_low.
		count := windowCounts(b, tg.DType, xs, w)
		share := b.Binary(ir.OpDiv, g, b.BroadcastInDim(count, gs, nil))
		r := len(xs)
		low, high, interior := make([]int, r), make([]int, r), make([]int, r)
		for i := range r {
			lo := w.Dims[i] - 1 - w.Padding[i][0]
			low[i] = lo
			high[i] = xs[i] + w.Dims[i] - 2 - lo - (gs[i]-1)*w.Strides[i]
			interior[i] = w.Strides[i] - 1
		}
		p := b.Pad(share, b.Scalar(tg.DType, 0), low, high, interior)
		dx := b.ReduceWindow(p, ir.ReduceSum, ir.WindowAttrs{Dims: w.Dims})
		c.Out = []ir.Value{l.out(b, dx)}
		return nil
	}
}

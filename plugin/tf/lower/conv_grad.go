package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

// Convolution gradients (conv_grad_input_ops.cc, conv_grad_filter_ops.cc,
// conv_grad_ops_3d.cc, depthwise_conv_grad_op.cc). input_sizes and
// filter_sizes are host inputs.
//
// The input gradient is a stride-1 convolution of out_backprop, dilated by
// the strides (interior padding) and padded by (window-1-pad_low) before and
// whatever makes the input size after, with the filter flipped spatially and
// its in/out channels swapped per group. The filter gradient for one group is
// a convolution of the padded input (channels as batch, batch as features)
// with out_backprop as the kernel, strided by the dilations and dilated by
// the strides; grouped and depthwise filters take one dot_general per window
// position instead, since the IR has no batch groups.

func init() {
	in := []string{"input_sizes", "filter", "out_backprop"}
	flt := []string{"input", "filter_sizes", "out_backprop"}
	reg := func(name string, inputs []string, host string, explicit bool, f func(c *Call) error) {
		register(Kernel{Op: name, Constraints: T(Floats), Inputs: inputs, HostInputs: []string{host},
			Attrs: convAttrs(explicit), Lower: f})
	}
	reg("Conv2DBackpropInput", in, "input_sizes", true, lowerConvBackpropInput(2, false))
	reg("Conv3DBackpropInputV2", in, "input_sizes", false, lowerConvBackpropInput(3, false))
	reg("DepthwiseConv2dNativeBackpropInput", in, "input_sizes", true, lowerConvBackpropInput(2, true))
	reg("Conv2DBackpropFilter", flt, "filter_sizes", true, lowerConvBackpropFilter(2, false))
	reg("Conv3DBackpropFilterV2", flt, "filter_sizes", false, lowerConvBackpropFilter(3, false))
	reg("DepthwiseConv2dNativeBackpropFilter", flt, "filter_sizes", true, lowerConvBackpropFilter(2, true))
}

// convGeometry checks out_backprop (channels-last) against the forward
// convolution of an input of channels-last shape xs with a filter of spatial
// size window and out channels, and returns the forward padding.
func convGeometry(c *Call, sp convSpec, xs, dys ir.Shape, window []int, outCh int) ([][2]int, error) {
	ns := sp.l.ns
	pad, err := sp.l.padding(c, xs[1:ns+1], window, sp.strides, sp.dilations)
	if err != nil {
		return nil, err
	}
	want := ir.Shape{xs[0]}
	for i := range ns {
		want = append(want, windowOut(xs[1+i], pad[i], window[i], sp.strides[i], sp.dilations[i]))
	}
	want = append(want, outCh)
	if !dys.Equal(want) {
		return nil, c.Errorf("out_backprop has shape %v (channels-last), but the convolution of an input %v with a %v window gives %v (inputs %s)",
			dys, xs, window, want, c.Inputs())
	}
	return pad, nil
}

// sizesToLast reads a host shape given in the layout's order (or, for 2-D
// input_sizes of length 2, just the spatial dims) as channels-last.
func sizesToLast(c *Call, l layout, s ir.Shape, batch, channels int) (ir.Shape, error) {
	switch len(s) {
	case l.ns + 2:
		return l.shapeToLast(s), nil
	case l.ns:
		// Conv2DBackpropInput accepts [H, W] and takes N and C from the other
		// inputs (conv_grad_shape_utils.cc).
		return append(append(ir.Shape{batch}, s...), channels), nil
	}
	return nil, c.Errorf("input_sizes %v must have %d entries (inputs %s)", s, l.ns+2, c.Inputs())
}

func lowerConvBackpropInput(ns int, depthwise bool) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(3); err != nil {
			return err
		}
		tk, tdy := c.Type(1), c.Type(2)
		if tk.Shape.Rank() != ns+2 || tdy.Shape.Rank() != ns+2 || tk.DType != tdy.DType {
			return c.Errorf("filter %v and out_backprop %v must have rank %d and one dtype", tk, tdy, ns+2)
		}
		sp, err := readConvSpec(c, ns)
		if err != nil {
			return err
		}
		sizes, err := c.hostShape(0, "input_sizes")
		if err != nil {
			return err
		}
		b := c.B
		dy := sp.l.in(b, c.In[2])
		dys := b.Type(dy).Shape
		// With spatial-only input_sizes, the depth is the filter's in-depth.
		xs, err := sizesToLast(c, sp.l, sizes, dys[0], tk.Shape[ns])
		if err != nil {
			return err
		}
		k := c.In[1]
		kin, kout := tk.Shape[ns], tk.Shape[ns+1]
		groups := 1
		if depthwise {
			if kin != xs[ns+1] {
				return c.Errorf("filter %v does not match an input of %v (channels-last)", tk, xs)
			}
			k = depthwiseFilter(b, k)
			groups, kout = kin, kin*kout
		} else {
			if kin == 0 || xs[ns+1] == 0 || xs[ns+1]%kin != 0 || kout%(xs[ns+1]/kin) != 0 {
				return c.Errorf("filter %v does not fit an input of %v (channels-last)", tk, xs)
			}
			groups = xs[ns+1] / kin
		}
		pad, err := convGeometry(c, sp, xs, dys, tk.Shape[:ns], kout)
		if err != nil {
			return err
		}
		dx := convGradInput(b, dy, k, xs, sp, pad, groups)
		if !b.Type(dx).Shape.Equal(xs) && b.Err() == nil {
			return c.Errorf("internal error: input gradient %v is not of the input shape %v", b.Type(dx), xs)
		}
		c.Out = []ir.Value{sp.l.out(b, dx)}
		return nil
	}
}

// convGradInput is the gradient with respect to a channels-last input of
// shape xs of the convolution with the IR-layout kernel k ([K..., C/G, O]).
func convGradInput(b *ir.Builder, dy, k ir.Value, xs ir.Shape, sp convSpec, pad [][2]int, groups int) ir.Value {
	ns := sp.l.ns
	tk, tdy := b.Type(k), b.Type(dy)
	if xs.Size() == 0 || tdy.Shape.Size() == 0 || tk.Shape.Size() == 0 {
		return b.Full(ir.TensorType{DType: tdy.DType, Shape: xs}, 0)
	}
	low, high, interior := make([]int, ns+2), make([]int, ns+2), make([]int, ns+2)
	for i := range ns {
		keff := (tk.Shape[i]-1)*sp.dilations[i] + 1
		lo := keff - 1 - pad[i][0]
		low[1+i] = lo
		high[1+i] = xs[1+i] + keff - 2 - lo - (tdy.Shape[1+i]-1)*sp.strides[i]
		interior[1+i] = sp.strides[i] - 1
	}
	p := b.Pad(dy, b.Scalar(tdy.DType, 0), low, high, interior)
	// Flip the window, and per group swap in and out channels:
	// [K..., Cg, G*Og] -> [K..., Cg, G, Og] -> [K..., Og, G, Cg] -> [K..., Og, G*Cg].
	cg, o := tk.Shape[ns], tk.Shape[ns+1]
	og := o / groups
	w := b.Reverse(k, seq(ns))
	w = b.Reshape(w, append(tk.Shape[:ns].Clone(), cg, groups, og))
	w = b.Transpose(w, append(seq(ns), ns+2, ns+1, ns))
	w = b.Reshape(w, append(tk.Shape[:ns].Clone(), og, groups*cg))
	return b.Convolution(p, w, ir.ConvAttrs{RhsDilation: sp.dilations, FeatureGroups: groups})
}

func lowerConvBackpropFilter(ns int, depthwise bool) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(3); err != nil {
			return err
		}
		tx, tdy := c.Type(0), c.Type(2)
		if tx.Shape.Rank() != ns+2 || tdy.Shape.Rank() != ns+2 || tx.DType != tdy.DType {
			return c.Errorf("input %v and out_backprop %v must have rank %d and one dtype", tx, tdy, ns+2)
		}
		sp, err := readConvSpec(c, ns)
		if err != nil {
			return err
		}
		fs, err := c.hostShape(1, "filter_sizes")
		if err != nil {
			return err
		}
		if len(fs) != ns+2 {
			return c.Errorf("filter_sizes %v must have %d entries (inputs %s)", fs, ns+2, c.Inputs())
		}
		b := c.B
		x, dy := sp.l.in(b, c.In[0]), sp.l.in(b, c.In[2])
		xs, dys := b.Type(x).Shape, b.Type(dy).Shape
		kin, kout := fs[ns], fs[ns+1]
		groups := 1
		if depthwise {
			if kin != xs[ns+1] {
				return c.Errorf("filter_sizes %v do not match the input %v", fs, tx)
			}
			groups, kin, kout = kin, 1, kin*kout
		} else {
			if kin == 0 || xs[ns+1] == 0 || xs[ns+1]%kin != 0 || kout%(xs[ns+1]/kin) != 0 {
				return c.Errorf("filter_sizes %v do not fit the input %v", fs, tx)
			}
			groups = xs[ns+1] / kin
		}
		pad, err := convGeometry(c, sp, xs, dys, fs[:ns], kout)
		if err != nil {
			return err
		}
		kshape := append(fs[:ns].Clone(), kin, kout)
		var dw ir.Value
		switch {
		case xs.Size() == 0 || dys.Size() == 0 || kshape.Size() == 0:
			dw = b.Full(ir.TensorType{DType: tx.DType, Shape: kshape}, 0)
		case groups == 1:
			dw = convGradFilter(b, x, dy, kshape, sp, pad)
		default:
			dw = groupedGradFilter(b, x, dy, kshape, sp, pad, groups)
		}
		if depthwise {
			dw = b.Reshape(dw, fs)
		}
		c.Out = []ir.Value{dw}
		return nil
	}
}

// padForFilterGrad pads (or crops) the input to exactly the extent the
// forward windows read: (out-1)*stride + effective window per spatial dim.
func padForFilterGrad(b *ir.Builder, x ir.Value, dys, kshape ir.Shape, sp convSpec, pad [][2]int) ir.Value {
	ns := sp.l.ns
	xs := b.Type(x).Shape
	low, high := make([]int, ns+2), make([]int, ns+2)
	for i := range ns {
		keff := (kshape[i]-1)*sp.dilations[i] + 1
		low[1+i] = pad[i][0]
		high[1+i] = (dys[1+i]-1)*sp.strides[i] + keff - xs[1+i] - pad[i][0]
	}
	return b.Pad(x, b.Scalar(b.Type(x).DType, 0), low, high, make([]int, ns+2))
}

// convGradFilter is the filter gradient of an ungrouped convolution.
func convGradFilter(b *ir.Builder, x, dy ir.Value, kshape ir.Shape, sp convSpec, pad [][2]int) ir.Value {
	ns := sp.l.ns
	dys := b.Type(dy).Shape
	xp := padForFilterGrad(b, x, dys, kshape, sp, pad)
	// Input [N, S..., C] -> [C, S..., N]: channels become the batch.
	lhs := b.Transpose(xp, append(append([]int{ns + 1}, rangeInts(1, ns+1)...), 0))
	// out_backprop [N, S'..., O] -> [S'..., N, O]: the kernel.
	rhs := b.Transpose(dy, append(rangeInts(1, ns+1), 0, ns+1))
	r := b.Convolution(lhs, rhs, ir.ConvAttrs{Strides: sp.dilations, RhsDilation: sp.strides})
	// [C, K..., O] -> [K..., C, O].
	return b.Transpose(r, append(rangeInts(1, ns+1), 0, ns+1))
}

// groupedGradFilter is the filter gradient of a grouped convolution, one
// window position at a time: the input seen at that position, [N, S'..., G,
// Cg], contracted with out_backprop, [N, S'..., G, Og], over batch and space.
func groupedGradFilter(b *ir.Builder, x, dy ir.Value, kshape ir.Shape, sp convSpec, pad [][2]int, groups int) ir.Value {
	ns := sp.l.ns
	dys := b.Type(dy).Shape
	xp := padForFilterGrad(b, x, dys, kshape, sp, pad)
	xs := b.Type(xp).Shape
	cg, o := kshape[ns], kshape[ns+1]
	og := o / groups
	dyr := b.Reshape(dy, append(dys[:ns+1].Clone(), groups, og))
	space := seq(ns + 1)
	var parts []ir.Value
	pos := make([]int, ns)
	for {
		start, limit, strides := make([]int, ns+2), make([]int, ns+2), make([]int, ns+2)
		start[0], limit[0], strides[0] = 0, xs[0], 1
		start[ns+1], limit[ns+1], strides[ns+1] = 0, xs[ns+1], 1
		for i := range ns {
			start[1+i] = pos[i] * sp.dilations[i]
			limit[1+i] = start[1+i] + (dys[1+i]-1)*sp.strides[i] + 1
			strides[1+i] = sp.strides[i]
		}
		seen := b.Slice(xp, start, limit, strides)
		seen = b.Reshape(seen, append(dys[:ns+1].Clone(), groups, cg))
		d := b.DotGeneral(seen, dyr, ir.DotDims{LhsBatch: []int{ns + 1}, RhsBatch: []int{ns + 1}, LhsContract: space, RhsContract: space})
		d = b.Transpose(d, []int{1, 0, 2}) // [G, Cg, Og] -> [Cg, G, Og]
		parts = append(parts, b.Reshape(d, ir.Shape{1, cg, o}))
		// Next window position, last dim fastest.
		i := ns - 1
		for ; i >= 0; i-- {
			pos[i]++
			if pos[i] < kshape[i] {
				break
			}
			pos[i] = 0
		}
		if i < 0 {
			break
		}
	}
	return b.Reshape(b.Concat(0, parts...), kshape)
}

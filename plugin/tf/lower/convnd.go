package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

// Conv, TensorFlow's generic N-d convolution (conv_ops_impl.h): batch_dims
// leading batch dims (folded into one), 2 or 3 spatial dims, the depth last
// (CHANNELS_LAST) or before the spatial dims (CHANNELS_FIRST), and
// feature groups. Its per-dim attributes have one entry for the batch,
// then the rest in the data format's order; the convolution is the IR's,
// as Conv2D's and Conv3D's.

func init() {
	// TensorFlow's GPU also registers int32, which the IR's convolution
	// (floating only) does not take.
	register(Kernel{Op: "Conv", Constraints: T(Floats), Inputs: []string{"input", "filter"},
		Attrs: []AttrSpec{{Name: "strides", Kind: AttrInts}, {Name: "padding", Kind: AttrString},
			{Name: "explicit_paddings", Kind: AttrInts, Optional: true}, {Name: "data_format", Kind: AttrString, Optional: true},
			{Name: "dilations", Kind: AttrInts, Optional: true}, {Name: "batch_dims", Kind: AttrInt, Optional: true},
			{Name: "groups", Kind: AttrInt, Optional: true}},
		Lower: lowerConvND})
}

func lowerConvND(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	tx, tk := c.Type(0), c.Type(1)
	r := tx.Shape.Rank()
	bd := int(c.Attrs.Int("batch_dims", 1))
	ns := r - bd - 1
	if bd < 1 || ns < 2 || ns > 3 || tk.Shape.Rank() != ns+2 || tk.DType != tx.DType {
		return c.Errorf("input %v with batch_dims %d must have 2 or 3 spatial dims, and filter %v rank %d and the input's dtype", tx, bd, tk, ns+2)
	}
	var first bool
	switch f := c.Attrs.String("data_format", "CHANNELS_LAST"); f {
	case "CHANNELS_LAST", "":
	case "CHANNELS_FIRST":
		first = true
	default:
		return c.Errorf("data_format %q is not supported; use CHANNELS_LAST or CHANNELS_FIRST (inputs %s)", f, c.Inputs())
	}
	// Positions of the spatial dims and the depth in the input, and in the
	// attributes, which have one entry for the batch dims together.
	sp := rangeInts(bd, bd+ns)
	ch := r - 1
	asp, ach := rangeInts(1, ns+1), ns+1
	if first {
		sp, ch = rangeInts(bd+1, r), bd
		asp, ach = rangeInts(2, ns+2), 1
	}
	per := func(name string, v []int) ([]int, error) {
		if len(v) == 0 {
			v = filled(ns+2, 1)
		}
		if len(v) != ns+2 {
			return nil, c.Errorf("attribute %s must have %d entries, got %v (inputs %s)", name, ns+2, v, c.Inputs())
		}
		for i, x := range v {
			if x < 1 {
				return nil, c.Errorf("attribute %s %v must be positive", name, v)
			}
			if (i == 0 || i == ach) && x != 1 {
				return nil, c.Errorf("attribute %s %v: batch and depth entries must be 1 (data_format %s)", name, v, c.Attrs.String("data_format", "CHANNELS_LAST"))
			}
		}
		out := make([]int, ns)
		for i, d := range asp {
			out[i] = v[d]
		}
		return out, nil
	}
	strides, err := per("strides", c.Attrs.IntList("strides", nil))
	if err != nil {
		return err
	}
	dil, err := per("dilations", c.Attrs.IntList("dilations", nil))
	if err != nil {
		return err
	}
	depth := tx.Shape[ch]
	groups := int(c.Attrs.Int("groups", 1))
	if groups < 1 || depth%groups != 0 || tk.Shape[ns]*groups != depth || tk.Shape[ns+1]%groups != 0 {
		return c.Errorf("input depth %d must be groups (%d) times the filter's in-depth, and the filter's out-depth a multiple of groups (input %v, filter %v)",
			depth, groups, tx, tk)
	}
	in := make([]int, ns)
	for i, d := range sp {
		in[i] = tx.Shape[d]
	}
	pad := make([][2]int, ns)
	switch p := c.Attrs.String("padding", ""); p {
	case "VALID":
	case "SAME":
		for i := range ns {
			pad[i] = samePadding(in[i], tk.Shape[i], strides[i], dil[i])
		}
	case "EXPLICIT":
		e := c.Attrs.IntList("explicit_paddings", nil)
		if len(e) != 2*(ns+2) {
			return c.Errorf("explicit_paddings must have %d entries, got %v", 2*(ns+2), e)
		}
		for i, d := range asp {
			pad[i] = [2]int{e[2*d], e[2*d+1]}
			if pad[i][0] < 0 || pad[i][1] < 0 {
				return c.Errorf("explicit_paddings %v must not be negative", e)
			}
		}
	default:
		return c.Errorf("padding %q is not supported; use SAME, VALID or EXPLICIT (inputs %s)", p, c.Inputs())
	}
	b := c.B
	// [batch..., spatial..., depth] with the batch dims folded into one.
	x := c.In[0]
	if first {
		x = b.Transpose(x, append(append(seq(bd), sp...), ch))
	}
	batch := tx.Shape[:bd].Clone()
	x = b.Reshape(x, append(append(ir.Shape{batch.Size()}, in...), depth))
	y := b.Convolution(x, c.In[1], ir.ConvAttrs{Strides: strides, Padding: pad, RhsDilation: dil, FeatureGroups: groups})
	ys := b.Type(y).Shape
	y = b.Reshape(y, append(batch, ys[1:]...))
	if first {
		// [batch..., spatial..., depth] back to [batch..., depth, spatial...].
		y = b.Transpose(y, append(append(seq(bd), bd+ns), rangeInts(bd, bd+ns)...))
	}
	c.Out = []ir.Value{y}
	return nil
}

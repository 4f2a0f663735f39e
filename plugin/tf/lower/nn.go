package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	convAttrs := []AttrSpec{{Name: "strides", Kind: AttrInts}, {Name: "padding", Kind: AttrString},
		{Name: "explicit_paddings", Kind: AttrInts, Optional: true}, {Name: "data_format", Kind: AttrString, Optional: true},
		{Name: "dilations", Kind: AttrInts, Optional: true}}
	register(Kernel{Op: "Conv2D", Constraints: T(Floats), Attrs: convAttrs, Lower: lowerConv2D, File: "plugin/tf/lower/nn.go"})
	poolAttrs := []AttrSpec{{Name: "ksize", Kind: AttrInts}, {Name: "strides", Kind: AttrInts},
		{Name: "padding", Kind: AttrString}, {Name: "data_format", Kind: AttrString, Optional: true}}
	register(Kernel{Op: "MaxPool", Constraints: T(Floats), Attrs: poolAttrs, Lower: lowerPool(ir.ReduceMax), File: "plugin/tf/lower/nn.go"})
	register(Kernel{Op: "AvgPool", Constraints: T(Floats), Attrs: poolAttrs, Lower: lowerPool(ir.ReduceSum), File: "plugin/tf/lower/nn.go"})
}

// layout reads data_format for a 4-D op and returns the permutation that takes
// the input to NHWC (nil when it already is).
func layout(c *Call) ([]int, error) {
	switch f := c.Attrs.String("data_format", "NHWC"); f {
	case "NHWC":
		return nil, nil
	case "NCHW":
		return []int{0, 2, 3, 1}, nil
	default:
		return nil, c.Errorf("data_format %q is not supported; use NHWC or NCHW", f)
	}
}

// spatial picks the H and W entries of a 4-entry attribute in data_format order.
func spatial(c *Call, name string, v []int, toNHWC []int) ([]int, error) {
	if len(v) != 4 {
		return nil, c.Errorf("attribute %s must have 4 entries, got %v", name, v)
	}
	if toNHWC != nil {
		v = []int{v[0], v[2], v[3], v[1]}
	}
	if v[0] != 1 || v[3] != 1 {
		return nil, c.Errorf("attribute %s %v: batch and channel entries must be 1", name, v)
	}
	return []int{v[1], v[2]}, nil
}

// samePadding is TensorFlow's SAME: the output has ceil(in/stride) positions
// and any odd padding goes at the end.
func samePadding(in, window, stride, dilation int) [2]int {
	eff := (window-1)*dilation + 1
	out := (in + stride - 1) / stride
	total := max((out-1)*stride+eff-in, 0)
	return [2]int{total / 2, total - total/2}
}

func padding(c *Call, in, window, strides, dilations []int) ([][2]int, error) {
	pad := make([][2]int, len(in))
	switch p := c.Attrs.String("padding", ""); p {
	case "VALID":
	case "SAME":
		for i := range in {
			pad[i] = samePadding(in[i], window[i], strides[i], dilations[i])
		}
	case "EXPLICIT":
		e := c.Attrs.IntList("explicit_paddings", nil)
		if len(e) != 8 {
			return nil, c.Errorf("explicit_paddings must have 8 entries, got %v", e)
		}
		perm, _ := layout(c)
		dims := []int{1, 2}
		if perm != nil {
			dims = []int{2, 3}
		}
		for i, d := range dims {
			pad[i] = [2]int{e[2*d], e[2*d+1]}
			if pad[i][0] < 0 || pad[i][1] < 0 {
				return nil, c.Errorf("explicit_paddings %v must not be negative", e)
			}
		}
	default:
		return nil, c.Errorf("padding %q is not supported; use SAME, VALID or EXPLICIT", p)
	}
	return pad, nil
}

func lowerConv2D(c *Call) error {
	x, k := c.In[0], c.In[1]
	tx, tk := c.Type(0), c.Type(1)
	if tx.Shape.Rank() != 4 || tk.Shape.Rank() != 4 {
		return c.Errorf("input %v and filter %v must both have rank 4", tx, tk)
	}
	perm, err := layout(c)
	if err != nil {
		return err
	}
	strides, err := spatial(c, "strides", c.Attrs.IntList("strides", nil), perm)
	if err != nil {
		return err
	}
	dil, err := spatial(c, "dilations", c.Attrs.IntList("dilations", []int{1, 1, 1, 1}), perm)
	if err != nil {
		return err
	}
	if perm != nil {
		x = c.B.Transpose(x, perm)
	}
	nhwc := c.B.Type(x).Shape
	if nhwc[3]%tk.Shape[2] != 0 {
		return c.Errorf("input depth %d is not a multiple of the filter's in-depth %d (input %v, filter %v)", nhwc[3], tk.Shape[2], tx, tk)
	}
	pad, err := padding(c, []int{nhwc[1], nhwc[2]}, []int{tk.Shape[0], tk.Shape[1]}, strides, dil)
	if err != nil {
		return err
	}
	groups := nhwc[3] / tk.Shape[2]
	if tk.Shape[3]%groups != 0 {
		return c.Errorf("filter %v: out-depth is not a multiple of the %d groups", tk, groups)
	}
	y := c.B.Convolution(x, k, ir.ConvAttrs{Strides: strides, Padding: pad, RhsDilation: dil, FeatureGroups: groups})
	if perm != nil {
		y = c.B.Transpose(y, []int{0, 3, 1, 2})
	}
	c.Out = []ir.Value{y}
	return nil
}

// lowerPool is MaxPool (kind max) or AvgPool (kind sum, divided by the number
// of real, unpadded elements under each window, as TensorFlow counts).
func lowerPool(kind ir.ReduceKind) func(c *Call) error {
	return func(c *Call) error {
		x := c.In[0]
		t := c.Type(0)
		if t.Shape.Rank() != 4 {
			return c.Errorf("input must have rank 4, got %v", t)
		}
		perm, err := layout(c)
		if err != nil {
			return err
		}
		ksize, err := spatial(c, "ksize", c.Attrs.IntList("ksize", nil), perm)
		if err != nil {
			return err
		}
		strides, err := spatial(c, "strides", c.Attrs.IntList("strides", nil), perm)
		if err != nil {
			return err
		}
		for i := range ksize {
			if ksize[i] < 1 || strides[i] < 1 {
				return c.Errorf("ksize %v and strides %v must be positive", ksize, strides)
			}
		}
		if perm != nil {
			x = c.B.Transpose(x, perm)
		}
		s := c.B.Type(x).Shape
		pad, err := padding(c, []int{s[1], s[2]}, ksize, strides, []int{1, 1})
		if err != nil {
			return err
		}
		w := ir.WindowAttrs{
			Dims:    []int{1, ksize[0], ksize[1], 1},
			Strides: []int{1, strides[0], strides[1], 1},
			Padding: [][2]int{{0, 0}, pad[0], pad[1], {0, 0}},
		}
		y := c.B.ReduceWindow(x, kind, w)
		if kind == ir.ReduceSum {
			ones := c.B.Full(ir.TensorType{DType: t.DType, Shape: ir.Shape{1, s[1], s[2], 1}}, 1)
			count := c.B.ReduceWindow(ones, ir.ReduceSum, w)
			y = c.B.Binary(ir.OpDiv, y, c.B.BroadcastInDim(count, c.B.Type(y).Shape, nil))
		}
		if perm != nil {
			y = c.B.Transpose(y, []int{0, 3, 1, 2})
		}
		c.Out = []ir.Value{y}
		return nil
	}
}

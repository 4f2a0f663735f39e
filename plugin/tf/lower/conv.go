package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

// Forward convolutions: Conv2D, Conv3D and DepthwiseConv2dNative
// (conv_ops.cc, conv_ops_3d.cc, depthwise_conv_op.cc), and the layout and
// padding helpers the convolution gradients and pools share. The IR computes
// channels-last; channels-first formats transpose around it.

func convAttrs(explicit bool) []AttrSpec {
	a := []AttrSpec{{Name: "strides", Kind: AttrInts}, {Name: "padding", Kind: AttrString},
		{Name: "data_format", Kind: AttrString, Optional: true}, {Name: "dilations", Kind: AttrInts, Optional: true}}
	if explicit {
		a = append(a, AttrSpec{Name: "explicit_paddings", Kind: AttrInts, Optional: true})
	}
	return a
}

func init() {
	register(Kernel{Op: "Conv2D", Constraints: T(Floats), Inputs: []string{"input", "filter"}, Attrs: convAttrs(true),
		Lower: lowerConv(2, false)})
	register(Kernel{Op: "Conv3D", Constraints: T(Floats), Inputs: []string{"input", "filter"}, Attrs: convAttrs(false),
		Lower: lowerConv(3, false)})
	register(Kernel{Op: "DepthwiseConv2dNative", Constraints: T(Floats), Inputs: []string{"input", "filter"}, Attrs: convAttrs(true),
		Lower: lowerConv(2, true)})
}

// layout is a data_format with ns spatial dims: channels last (NHWC, NDHWC)
// or first (NCHW, NCDHW).
type layout struct {
	ns    int
	first bool
	name  string
}

// readLayout parses data_format for ns spatial dims.
func readLayout(c *Call, ns int) (layout, error) {
	last, first := "NHWC", "NCHW"
	if ns == 3 {
		last, first = "NDHWC", "NCDHW"
	}
	switch f := c.Attrs.String("data_format", last); f {
	case last, "":
		return layout{ns, false, last}, nil
	case first:
		return layout{ns, true, first}, nil
	default:
		return layout{}, c.Errorf("data_format %q is not supported; use %s or %s (inputs %s)", f, last, first, c.Inputs())
	}
}

// toLast is the permutation from the format to channels-last, nil if none.
func (l layout) toLast() []int {
	if !l.first {
		return nil
	}
	p := []int{0}
	for i := range l.ns {
		p = append(p, 2+i)
	}
	return append(p, 1)
}

// fromLast is the inverse of toLast.
func (l layout) fromLast() []int {
	if !l.first {
		return nil
	}
	p := []int{0, l.ns + 1}
	for i := range l.ns {
		p = append(p, 1+i)
	}
	return p
}

// spatialIndex is the position of spatial dim i in the format.
func (l layout) spatialIndex(i int) int {
	if l.first {
		return 2 + i
	}
	return 1 + i
}

func (l layout) channelIndex() int {
	if l.first {
		return 1
	}
	return l.ns + 1
}

// in transposes x to channels-last; out transposes back.
func (l layout) in(b *ir.Builder, x ir.Value) ir.Value {
	if p := l.toLast(); p != nil {
		return b.Transpose(x, p)
	}
	return x
}

func (l layout) out(b *ir.Builder, y ir.Value) ir.Value {
	if p := l.fromLast(); p != nil {
		return b.Transpose(y, p)
	}
	return y
}

// shapeToLast reorders a shape given in the format to channels-last.
func (l layout) shapeToLast(s ir.Shape) ir.Shape {
	p := l.toLast()
	if p == nil {
		return s.Clone()
	}
	out := make(ir.Shape, len(s))
	for i, j := range p {
		out[i] = s[j]
	}
	return out
}

// spatial picks the spatial entries of an (ns+2)-entry attribute given in
// the format's order; batch and channel entries must be 1.
func (l layout) spatial(c *Call, name string, v []int) ([]int, error) {
	if len(v) != l.ns+2 {
		return nil, c.Errorf("attribute %s must have %d entries, got %v (inputs %s)", name, l.ns+2, v, c.Inputs())
	}
	if v[0] != 1 || v[l.channelIndex()] != 1 {
		return nil, c.Errorf("attribute %s %v: batch and channel entries must be 1 (data_format %s)", name, v, l.name)
	}
	out := make([]int, l.ns)
	for i := range out {
		out[i] = v[l.spatialIndex(i)]
		if out[i] < 1 {
			return nil, c.Errorf("attribute %s %v must be positive", name, v)
		}
	}
	return out, nil
}

// samePadding is TensorFlow's SAME: the output has ceil(in/stride) positions
// and any odd padding goes at the end (GetWindowedOutputSizeVerbose in
// tensorflow/core/framework/kernel_shape_util.cc).
func samePadding(in, window, stride, dilation int) [2]int {
	eff := (window-1)*dilation + 1
	out := (in + stride - 1) / stride
	total := max((out-1)*stride+eff-in, 0)
	return [2]int{total / 2, total - total/2}
}

// padding reads the padding attribute (SAME, VALID or EXPLICIT) for the
// spatial sizes in.
func (l layout) padding(c *Call, in, window, strides, dilations []int) ([][2]int, error) {
	pad := make([][2]int, len(in))
	switch p := c.Attrs.String("padding", ""); p {
	case "VALID":
	case "SAME":
		for i := range in {
			pad[i] = samePadding(in[i], window[i], strides[i], dilations[i])
		}
	case "EXPLICIT":
		e := c.Attrs.IntList("explicit_paddings", nil)
		if len(e) != 2*(l.ns+2) {
			return nil, c.Errorf("explicit_paddings must have %d entries, got %v", 2*(l.ns+2), e)
		}
		for i := range in {
			d := l.spatialIndex(i)
			pad[i] = [2]int{e[2*d], e[2*d+1]}
			if pad[i][0] < 0 || pad[i][1] < 0 {
				return nil, c.Errorf("explicit_paddings %v must not be negative", e)
			}
		}
	default:
		return nil, c.Errorf("padding %q is not supported; use SAME, VALID or EXPLICIT (inputs %s)", p, c.Inputs())
	}
	return pad, nil
}

// windowOut is the output size of a window over in with padding.
func windowOut(in int, pad [2]int, window, stride, dilation int) int {
	eff := (window-1)*dilation + 1
	n := in + pad[0] + pad[1]
	if n < eff {
		return 0
	}
	return (n-eff)/stride + 1
}

// convSpec is a convolution's geometry in channels-last terms.
type convSpec struct {
	l         layout
	strides   []int
	dilations []int
}

func readConvSpec(c *Call, ns int) (convSpec, error) {
	l, err := readLayout(c, ns)
	if err != nil {
		return convSpec{}, err
	}
	strides, err := l.spatial(c, "strides", c.Attrs.IntList("strides", nil))
	if err != nil {
		return convSpec{}, err
	}
	dil, err := l.spatial(c, "dilations", c.Attrs.IntList("dilations", filled(ns+2, 1)))
	if err != nil {
		return convSpec{}, err
	}
	return convSpec{l, strides, dil}, nil
}

// depthwiseFilter reshapes a [spatial..., C, M] depthwise filter to the IR's
// grouped layout [spatial..., 1, C*M] (output channel c*M+m, group c).
func depthwiseFilter(b *ir.Builder, k ir.Value) ir.Value {
	s := b.Type(k).Shape
	ns := s.Rank() - 2
	out := append(s[:ns].Clone(), 1, s[ns]*s[ns+1])
	return b.Reshape(k, out)
}

func lowerConv(ns int, depthwise bool) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(2); err != nil {
			return err
		}
		y, err := convolve(c, ns, depthwise, c.In[0], c.In[1])
		if err != nil {
			return err
		}
		c.Out = []ir.Value{y}
		return nil
	}
}

// convolve is the forward convolution of input x by filter k in the node's
// data_format, with its strides, padding and dilations: Conv2D, Conv3D and
// DepthwiseConv2dNative, and the convolution that _FusedConv2D starts with.
func convolve(c *Call, ns int, depthwise bool, x, k ir.Value) (ir.Value, error) {
	b := c.B
	tx, tk := b.Type(x), b.Type(k)
	if tx.Shape.Rank() != ns+2 || tk.Shape.Rank() != ns+2 || tx.DType != tk.DType {
		return 0, c.Errorf("input %v and filter %v must both have rank %d and one dtype", tx, tk, ns+2)
	}
	sp, err := readConvSpec(c, ns)
	if err != nil {
		return 0, err
	}
	x = sp.l.in(b, x)
	xs := b.Type(x).Shape
	ch := xs[ns+1]
	groups := 1
	if depthwise {
		if tk.Shape[ns] != ch {
			return 0, c.Errorf("filter %v: in-depth %d must equal the input depth %d (input %v)", tk, tk.Shape[ns], ch, tx)
		}
		groups = ch
		k = depthwiseFilter(b, k)
	} else {
		if ch == 0 {
			return 0, c.Errorf("the input has no channels (input %v, filter %v)", tx, tk)
		}
		if tk.Shape[ns] == 0 || ch%tk.Shape[ns] != 0 {
			return 0, c.Errorf("input depth %d is not a multiple of the filter's in-depth %d (input %v, filter %v)", ch, tk.Shape[ns], tx, tk)
		}
		groups = ch / tk.Shape[ns]
		if tk.Shape[ns+1]%groups != 0 {
			return 0, c.Errorf("filter %v: out-depth is not a multiple of the %d groups (input %v)", tk, groups, tx)
		}
	}
	pad, err := sp.l.padding(c, xs[1:ns+1], tk.Shape[:ns], sp.strides, sp.dilations)
	if err != nil {
		return 0, err
	}
	y := b.Convolution(x, k, ir.ConvAttrs{Strides: sp.strides, Padding: pad, RhsDilation: sp.dilations, FeatureGroups: groups})
	return sp.l.out(b, y), nil
}

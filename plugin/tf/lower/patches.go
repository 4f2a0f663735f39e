package lower

import (
	"math"

	"github.com/metalplug/metalplug/backend/ir"
)

// Sliding windows taken apart, one window position ("tap") at a time. Each
// tap is a strided slice of the padded operand holding, for every window,
// the element at that position of the window; which of those lie in the
// padding, and where in the operand the others are, follows from the
// geometry alone and is a constant. Ops whose window fold is not a monoid
// (an argmax with TensorFlow's tie-breaking, a morphological dilation, the
// gradients that route to a window's chosen element) fold the taps in
// row-major window order with elementwise ops; the patch extractions
// concatenate them.

// windowGeom is a window over the spatial dims of a channels-last operand
// [N, S..., C].
type windowGeom struct {
	in, win, strides, rates []int
	pad                     [][2]int
	out                     []int
}

// newGeom fills in the output sizes; rates nil means 1.
func newGeom(in, win, strides, rates []int, pad [][2]int) windowGeom {
	if rates == nil {
		rates = filled(len(in), 1)
	}
	g := windowGeom{in: in, win: win, strides: strides, rates: rates, pad: pad, out: make([]int, len(in))}
	for i := range in {
		g.out[i] = windowOut(in[i], pad[i], win[i], strides[i], rates[i])
	}
	return g
}

// tap is one window position: the operand's element at that position of
// every window ([N, O..., C]), which windows reach a real element there
// (nil if all do), and that element's row-major spatial index in the
// operand, per window (row-major over O).
type tap struct {
	v     ir.Value
	valid []bool
	flat  []int64
}

// taps slices x, [N, S..., C] with S = g.in, into the window's positions in
// row-major order, padding with the scalar fill.
func (g windowGeom) taps(b *ir.Builder, x, fill ir.Value) []tap {
	ns := len(g.in)
	xs := b.Type(x).Shape
	low, high := make([]int, ns+2), make([]int, ns+2)
	for i := range ns {
		low[1+i] = g.pad[i][0]
		need := 0
		if g.out[i] > 0 {
			need = (g.out[i]-1)*g.strides[i] + (g.win[i]-1)*g.rates[i] + 1
		}
		high[1+i] = max(0, need-g.in[i]-g.pad[i][0])
	}
	p := b.Pad(x, fill, low, high, make([]int, ns+2))
	nOut := 1
	for _, o := range g.out {
		nOut *= o
	}
	nTaps := 1
	for _, w := range g.win {
		nTaps *= w
	}
	var out []tap
	k := make([]int, ns)
	for range nTaps {
		start, limit, strides := make([]int, ns+2), xs.Clone(), make([]int, ns+2)
		strides[0], strides[ns+1] = 1, 1
		for i := range ns {
			start[1+i] = k[i] * g.rates[i]
			limit[1+i] = start[1+i] + max(0, (g.out[i]-1)*g.strides[i]+1)
			strides[1+i] = g.strides[i]
		}
		t := tap{v: b.Slice(p, start, limit, strides), flat: make([]int64, nOut)}
		valid := make([]bool, nOut)
		all := true
		o := make([]int, ns)
		for j := range nOut {
			in, flat := true, 0
			for i := range ns {
				y := o[i]*g.strides[i] + k[i]*g.rates[i] - g.pad[i][0]
				in = in && y >= 0 && y < g.in[i]
				flat = flat*g.in[i] + y
			}
			valid[j], t.flat[j] = in, int64(flat)
			all = all && in
			for i := ns - 1; i >= 0; i-- {
				if o[i]++; o[i] < g.out[i] {
					break
				}
				o[i] = 0
			}
		}
		if !all {
			t.valid = valid
		}
		out = append(out, t)
		for i := ns - 1; i >= 0; i-- {
			if k[i]++; k[i] < g.win[i] {
				break
			}
			k[i] = 0
		}
	}
	return out
}

// boolConstant is a bool tensor of the given shape.
func boolConstant(b *ir.Builder, shape ir.Shape, v []bool) ir.Value {
	buf := make([]byte, len(v))
	for i, x := range v {
		if x {
			buf[i] = 1
		}
	}
	return b.Constant(ir.TensorType{DType: ir.Bool, Shape: shape}, buf)
}

// spread broadcasts a constant over the windows ([O...]) to [N, O..., C].
func spread(b *ir.Builder, v ir.Value, full ir.Shape) ir.Value {
	return b.BroadcastInDim(v, full, rangeInts(1, full.Rank()-1))
}

// validMask is where tap t reaches a real element, shaped as full
// ([N, O..., C]); ok is false when it always does.
func (g windowGeom) validMask(b *ir.Builder, t tap, full ir.Shape) (ir.Value, bool) {
	if t.valid == nil {
		return 0, false
	}
	return spread(b, boolConstant(b, ir.Shape(g.out).Clone(), t.valid), full), true
}

// flatIndex is tap t's spatial index of the operand, as int64 shaped full.
func (g windowGeom) flatIndex(b *ir.Builder, t tap, full ir.Shape) ir.Value {
	return spread(b, i64Constant(b, ir.Shape(g.out).Clone(), t.flat), full)
}

func init() {
	win := func(rates bool) []AttrSpec {
		a := []AttrSpec{{Name: "ksizes", Kind: AttrInts}, {Name: "strides", Kind: AttrInts}, {Name: "padding", Kind: AttrString}}
		if rates {
			a = append(a, AttrSpec{Name: "rates", Kind: AttrInts})
		}
		return a
	}
	// TensorFlow's GPU also takes complex64, which the device keeps to
	// the FFT ops (TestEveryKernelRegistersSomeDType).
	patchTypes := append(append([]ir.DType{}, Floats...), ir.Bool)
	register(Kernel{Op: "ExtractImagePatches", Constraints: T(patchTypes), Inputs: []string{"images"}, Attrs: win(true),
		Lower: lowerExtractPatches(2)})
	register(Kernel{Op: "ExtractVolumePatches", Constraints: T(Floats), Inputs: []string{"input"}, Attrs: win(false),
		Lower: lowerExtractPatches(3)})
	dil := []AttrSpec{{Name: "strides", Kind: AttrInts}, {Name: "rates", Kind: AttrInts}, {Name: "padding", Kind: AttrString}}
	register(Kernel{Op: "Dilation2D", Constraints: T(Floats), Inputs: []string{"input", "filter"}, Attrs: dil,
		Lower: lowerDilation})
	register(Kernel{Op: "Dilation2DBackpropInput", Constraints: T(Floats), Inputs: []string{"input", "filter", "out_backprop"}, Attrs: dil,
		Lower: lowerDilationGrad(false)})
	register(Kernel{Op: "Dilation2DBackpropFilter", Constraints: T(Floats), Inputs: []string{"input", "filter", "out_backprop"}, Attrs: dil,
		Lower: lowerDilationGrad(true)})
}

// patchGeom reads a window's attributes (ksize, strides, rates: ns+2
// entries, batch and depth 1) and padding for a channels-last input.
func patchGeom(c *Call, ns int, xs ir.Shape, ksize []int, rates bool) (windowGeom, error) {
	l := layout{ns, false, "NHWC"}
	if ns == 3 {
		l.name = "NDHWC"
	}
	k, err := l.spatial(c, "ksizes", ksize)
	if err != nil {
		return windowGeom{}, err
	}
	s, err := l.spatial(c, "strides", c.Attrs.IntList("strides", nil))
	if err != nil {
		return windowGeom{}, err
	}
	r := filled(ns, 1)
	if rates {
		if r, err = l.spatial(c, "rates", c.Attrs.IntList("rates", nil)); err != nil {
			return windowGeom{}, err
		}
	}
	switch p := c.Attrs.String("padding", ""); p {
	case "SAME", "VALID":
	default:
		return windowGeom{}, c.Errorf("padding %q is not supported; use SAME or VALID (inputs %s)", p, c.Inputs())
	}
	pad, err := l.padding(c, xs[1:ns+1], k, s, r)
	if err != nil {
		return windowGeom{}, err
	}
	return newGeom(xs[1:ns+1], k, s, r, pad), nil
}

// lowerExtractPatches lays each window's elements along the depth, in
// window order then depth (extract_image_patches_op.cc), zero in the
// padding.
func lowerExtractPatches(ns int) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(1); err != nil {
			return err
		}
		t := c.Type(0)
		if t.Shape.Rank() != ns+2 {
			return c.Errorf("input must have rank %d, got %v", ns+2, t)
		}
		g, err := patchGeom(c, ns, t.Shape, c.Attrs.IntList("ksizes", nil), ns == 2)
		if err != nil {
			return err
		}
		b := c.B
		ts := g.taps(b, c.In[0], scalarZero(b, t.DType))
		vs := make([]ir.Value, len(ts))
		for i, tp := range ts {
			vs[i] = tp.v
		}
		c.Out = []ir.Value{b.Concat(ns+1, vs...)}
		return nil
	}
}

// lowest is the most negative finite value of the float dtype d
// (Eigen::NumTraits<T>::lowest()).
func lowest(d ir.DType) float64 {
	switch d {
	case ir.F16:
		return -65504
	case ir.BF16:
		return -3.3895313892515355e38
	}
	return -math.MaxFloat32
}

// dilationSpec checks input [N, H, W, D] and filter [fh, fw, D] and reads
// the window.
func dilationSpec(c *Call) (windowGeom, error) {
	tx, tf := c.Type(0), c.Type(1)
	if tx.Shape.Rank() != 4 || tf.Shape.Rank() != 3 || tf.Shape[2] != tx.Shape[3] || tx.DType != tf.DType {
		return windowGeom{}, c.Errorf("input %v must be [batch, rows, cols, depth] and filter %v [rows, cols, depth] of its depth and dtype", tx, tf)
	}
	return patchGeom(c, 2, tx.Shape, []int{1, tf.Shape[0], tf.Shape[1], 1}, true)
}

// dilationFold is the grayscale dilation of input by filter, and which
// window element (as a tap number) and input element (spatial index, and
// for the input's gradient its default where nothing wins) each output
// takes: dilation_ops.cc keeps the first strict maximum of input + filter,
// from the dtype's lowest value, over the window's real elements.
func dilationFold(c *Call, g windowGeom) (cur, tapIdx, inIdx ir.Value) {
	b := c.B
	tx := c.Type(0)
	d := tx.DType
	n, depth := tx.Shape[0], tx.Shape[3]
	full := ir.Shape{n, g.out[0], g.out[1], depth}
	cur = b.Full(ir.TensorType{DType: d, Shape: full}, lowest(d))
	tapIdx = b.Full(ir.TensorType{DType: ir.I64, Shape: full}, 0)
	// The input gradient's default: (max(h_beg, 0), max(w_beg, 0)), or
	// nowhere (past the end) when that is outside the input.
	def := make([]int64, g.out[0]*g.out[1])
	for i := range g.out[0] {
		y := max(i*g.strides[0]-g.pad[0][0], 0)
		for j := range g.out[1] {
			x := max(j*g.strides[1]-g.pad[1][0], 0)
			if y < g.in[0] && x < g.in[1] {
				def[i*g.out[1]+j] = int64(y*g.in[1] + x)
			} else {
				def[i*g.out[1]+j] = int64(g.in[0] * g.in[1])
			}
		}
	}
	inIdx = spread(b, i64Constant(b, ir.Shape{g.out[0], g.out[1]}, def), full)
	fw := g.win[1]
	for k, t := range g.taps(b, c.In[0], b.Scalar(d, 0)) {
		f := b.Slice(c.In[1], []int{k / fw, k % fw, 0}, []int{k/fw + 1, k%fw + 1, depth}, []int{1, 1, 1})
		val := b.Binary(ir.OpAdd, t.v, b.BroadcastInDim(b.Reshape(f, ir.Shape{depth}), full, []int{3}))
		upd := b.Compare(ir.CmpGT, val, cur)
		if valid, partial := g.validMask(b, t, full); partial {
			upd = b.Binary(ir.OpAnd, upd, valid)
		}
		cur = b.Select(upd, val, cur)
		tapIdx = b.Select(upd, b.Full(ir.TensorType{DType: ir.I64, Shape: full}, float64(k)), tapIdx)
		inIdx = b.Select(upd, g.flatIndex(b, t, full), inIdx)
	}
	return cur, tapIdx, inIdx
}

func lowerDilation(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	g, err := dilationSpec(c)
	if err != nil {
		return err
	}
	tx := c.Type(0)
	full := ir.Shape{tx.Shape[0], g.out[0], g.out[1], tx.Shape[3]}
	if full.Size() == 0 {
		c.Out = []ir.Value{c.B.Full(ir.TensorType{DType: tx.DType, Shape: full}, 0)}
		return nil
	}
	cur, _, _ := dilationFold(c, g)
	c.Out = []ir.Value{cur}
	return nil
}

// lowerDilationGrad adds each out_backprop element into the input element
// (filter false) or the filter tap (filter true) that won its window.
func lowerDilationGrad(filter bool) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(3); err != nil {
			return err
		}
		g, err := dilationSpec(c)
		if err != nil {
			return err
		}
		b := c.B
		tx, tf, tg := c.Type(0), c.Type(1), c.Type(2)
		n, depth := tx.Shape[0], tx.Shape[3]
		full := ir.Shape{n, g.out[0], g.out[1], depth}
		if tg.DType != tx.DType || !tg.Shape.Equal(full) {
			return c.Errorf("out_backprop %v must be %v, the dilation's shape for input %v and filter %v", tg, ir.TensorType{DType: tx.DType, Shape: full}, tx, tf)
		}
		into := tx
		if filter {
			into = tf
		}
		acc := accType(tx.DType)
		res := b.Full(ir.TensorType{DType: acc, Shape: ir.Shape{into.Shape.Size()}}, 0)
		if full.Size() == 0 || into.Shape.Size() == 0 {
			c.Out = []ir.Value{b.Convert(b.Reshape(res, into.Shape), tx.DType)}
			return nil
		}
		if into.Shape.Size() >= 1<<31 {
			return c.Errorf("the gradient %v has 2^31 elements or more", into)
		}
		_, tapIdx, inIdx := dilationFold(c, g)
		i64 := func(v float64) ir.Value { return b.Full(ir.TensorType{DType: ir.I64, Shape: full}, v) }
		ch := b.Iota(ir.TensorType{DType: ir.I64, Shape: full}, 3)
		var idx ir.Value
		if filter {
			idx = b.Binary(ir.OpAdd, b.Binary(ir.OpMul, tapIdx, i64(float64(depth))), ch)
		} else {
			// Past the end stays past the end: (b*H*W + i)*D + d with
			// i = H*W is at least the batch's end.
			per := float64(g.in[0] * g.in[1])
			idx = b.Binary(ir.OpAdd, b.Binary(ir.OpMul, b.Iota(ir.TensorType{DType: ir.I64, Shape: full}, 0), i64(per)), inIdx)
			idx = b.Binary(ir.OpAdd, b.Binary(ir.OpMul, idx, i64(float64(depth))), ch)
			past := b.Compare(ir.CmpEQ, inIdx, i64(per))
			idx = b.Select(past, i64(float64(into.Shape.Size())), idx)
		}
		idx = b.Reshape(b.Convert(idx, ir.I32), ir.Shape{full.Size(), 1})
		res = b.Scatter(res, idx, b.Reshape(b.Convert(c.In[2], acc), ir.Shape{full.Size()}),
			ir.ScatterDims{InsertedWindowDims: []int{0}, ScatterDimsToOperandDims: []int{0}, IndexVectorDim: 1, Kind: ir.ScatterAdd})
		c.Out = []ir.Value{b.Convert(b.Reshape(res, into.Shape), tx.DType)}
		return nil
	}
}

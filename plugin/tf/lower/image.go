package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

// Image ops (colorspace_op.h, adjust_contrast_op.cc, adjust_hue_op.cc,
// adjust_saturation_op.cc, crop_and_resize_op.cc). Each pixel's arithmetic
// is TensorFlow's CPU kernel's, in float32 and in the same order, with its
// branches as selects; the 16-bit floats TensorFlow's GPU takes are
// computed in float32, as its GPU kernels compute them.

func init() {
	f32only := []ir.DType{ir.F32}
	half := []ir.DType{ir.F32, ir.F16}
	register(Kernel{Op: "RGBToHSV", Constraints: T(f32only), Inputs: []string{"images"}, Lower: lowerColor(rgbToHSV)})
	register(Kernel{Op: "HSVToRGB", Constraints: T(f32only), Inputs: []string{"images"}, Lower: lowerColor(hsvToRGB)})
	register(Kernel{Op: "AdjustContrastv2", Constraints: T(half), Inputs: []string{"images", "contrast_factor"},
		Lower: lowerAdjustContrast})
	register(Kernel{Op: "AdjustHue", Constraints: T(half), Inputs: []string{"images", "delta"}, Lower: lowerAdjust(adjustHue)})
	register(Kernel{Op: "AdjustSaturation", Constraints: T(half), Inputs: []string{"images", "scale"}, Lower: lowerAdjust(adjustSaturation)})
	crop := []AttrSpec{{Name: "method", Kind: AttrString, Optional: true}, {Name: "extrapolation_value", Kind: AttrFloat, Optional: true}}
	register(Kernel{Op: "CropAndResize", Constraints: T(half), Inputs: []string{"image", "boxes", "box_ind", "crop_size"},
		HostInputs: []string{"crop_size"}, Attrs: crop, Lower: lowerCropAndResize})
	register(Kernel{Op: "CropAndResizeGradImage", Constraints: T(half), Inputs: []string{"grads", "boxes", "box_ind", "image_size"},
		HostInputs: []string{"image_size"}, Attrs: []AttrSpec{crop[0], {Name: "T", Kind: AttrType}}, Lower: lowerCropAndResizeGradImage})
	register(Kernel{Op: "CropAndResizeGradBoxes", Constraints: T(half), Inputs: []string{"grads", "image", "boxes", "box_ind"},
		Attrs: crop[:1], Lower: lowerCropAndResizeGradBoxes})
	proj := []ir.DType{ir.F32, ir.F16, ir.I32, ir.I64, ir.U8}
	projAttrs := []AttrSpec{{Name: "interpolation", Kind: AttrString}, {Name: "fill_mode", Kind: AttrString, Optional: true}}
	register(Kernel{Op: "ImageProjectiveTransformV2", Constraints: []Constraint{{"dtype", proj}}, Inputs: []string{"images", "transforms", "output_shape"},
		HostInputs: []string{"output_shape"}, Attrs: projAttrs, Lower: lowerProjective(false)})
	// V3's fill_value is a device input here (TensorFlow's GPU keeps it in
	// host memory): host inputs arrive as integers, and the program reads it.
	register(Kernel{Op: "ImageProjectiveTransformV3", Constraints: []Constraint{{"dtype", proj}},
		Inputs:     []string{"images", "transforms", "output_shape", "fill_value"},
		HostInputs: []string{"output_shape"}, Attrs: projAttrs, Lower: lowerProjective(true)})
}

// pix is one image's three channels, float32, each shaped as the image
// without its channel dim.
type pix struct{ r, g, b ir.Value }

// channels splits x [..., 3] into float32 channels.
func channels(b *ir.Builder, x ir.Value) pix {
	s := b.Type(x).Shape
	r := s.Rank()
	x = b.Convert(x, ir.F32)
	ch := func(i int) ir.Value {
		start, limit := make([]int, r), s.Clone()
		start[r-1], limit[r-1] = i, i+1
		return b.Reshape(b.Slice(x, start, limit, filled(r, 1)), s[:r-1].Clone())
	}
	return pix{ch(0), ch(1), ch(2)}
}

// join stacks the channels back as [..., 3] of dtype d.
func (p pix) join(b *ir.Builder, d ir.DType) ir.Value {
	s := b.Type(p.r).Shape
	e := append(s.Clone(), 1)
	return b.Convert(b.Concat(s.Rank(), b.Reshape(p.r, e), b.Reshape(p.g, e), b.Reshape(p.b, e)), d)
}

// fk is a float32 constant shaped like v.

func checkRGB(c *Call, i int, minRank int) error {
	t := c.Type(i)
	if t.Shape.Rank() < minRank || t.Shape[t.Shape.Rank()-1] != 3 {
		return c.Errorf("images must be at least %d-D with 3 channels last, got %v", minRank, t)
	}
	return nil
}

func lowerColor(f func(b *ir.Builder, p pix) pix) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(1); err != nil {
			return err
		}
		if err := checkRGB(c, 0, 1); err != nil {
			return err
		}
		b := c.B
		c.Out = []ir.Value{f(b, channels(b, c.In[0])).join(b, c.Type(0).DType)}
		return nil
	}
}

// rgbToHSV is colorspace_op.h's RGBToHSV.
func rgbToHSV(b *ir.Builder, p pix) pix {
	bin := func(op ir.Op, x, y ir.Value) ir.Value { return b.Binary(op, x, y) }
	v := bin(ir.OpMax, bin(ir.OpMax, p.r, p.g), p.b)
	rng := bin(ir.OpSub, v, bin(ir.OpMin, bin(ir.OpMin, p.r, p.g), p.b))
	zero := like(b, v, 0)
	s := b.Select(b.Compare(ir.CmpGT, v, zero), bin(ir.OpDiv, rng, v), zero)
	norm := bin(ir.OpMul, bin(ir.OpDiv, like(b, v, 1), rng), like(b, v, 1.0/6))
	h := b.Select(b.Compare(ir.CmpEQ, p.r, v), bin(ir.OpMul, norm, bin(ir.OpSub, p.g, p.b)),
		b.Select(b.Compare(ir.CmpEQ, p.g, v), bin(ir.OpAdd, bin(ir.OpMul, norm, bin(ir.OpSub, p.b, p.r)), like(b, v, 2.0/6)),
			bin(ir.OpAdd, bin(ir.OpMul, norm, bin(ir.OpSub, p.r, p.g)), like(b, v, 4.0/6))))
	h = b.Select(b.Compare(ir.CmpGT, rng, zero), h, zero)
	h = b.Select(b.Compare(ir.CmpLT, h, zero), bin(ir.OpAdd, h, like(b, v, 1)), h)
	return pix{h, s, v}
}

// hsvToRGB is colorspace_op.h's HSVToRGB.
func hsvToRGB(b *ir.Builder, p pix) pix {
	h, s, v := p.r, p.g, p.b
	bin := func(op ir.Op, x, y ir.Value) ir.Value { return b.Binary(op, x, y) }
	clamp := func(x ir.Value) ir.Value { return bin(ir.OpMin, bin(ir.OpMax, x, like(b, x, 0)), like(b, x, 1)) }
	dh := bin(ir.OpMul, h, like(b, h, 6))
	absOff := func(k float64) ir.Value { return b.Unary(ir.OpAbs, bin(ir.OpSub, dh, like(b, dh, k))) }
	dr := clamp(bin(ir.OpSub, absOff(3), like(b, dh, 1)))
	dg := clamp(bin(ir.OpAdd, b.Unary(ir.OpNeg, absOff(2)), like(b, dh, 2)))
	db := clamp(bin(ir.OpAdd, b.Unary(ir.OpNeg, absOff(4)), like(b, dh, 2)))
	oneS := bin(ir.OpAdd, b.Unary(ir.OpNeg, s), like(b, s, 1))
	out := func(d ir.Value) ir.Value { return bin(ir.OpMul, bin(ir.OpAdd, oneS, bin(ir.OpMul, s, d)), v) }
	return pix{out(dr), out(dg), out(db)}
}

// scalarArg checks that input i is a float32 scalar and broadcasts it to shape.
func scalarArg(c *Call, i int, name string, shape ir.Shape) (ir.Value, error) {
	t := c.Type(i)
	if t.DType != ir.F32 || t.Shape.Size() != 1 || t.Shape.Rank() > 1 {
		return 0, c.Errorf("%s must be a float32 scalar, got %v", name, t)
	}
	return c.B.BroadcastInDim(c.B.Reshape(c.In[i], nil), shape, []int{}), nil
}

// lowerAdjustContrast is (x - mean) * contrast_factor + mean, with the mean
// over each image's height and width, per channel, in float32.
func lowerAdjustContrast(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	t := c.Type(0)
	r := t.Shape.Rank()
	if r < 3 {
		return c.Errorf("images must be at least 3-D, got %v", t)
	}
	b := c.B
	x := b.Convert(c.In[0], ir.F32)
	s := t.Shape
	f, err := scalarArg(c, 1, "contrast_factor", s)
	if err != nil {
		return err
	}
	axes := []int{r - 3, r - 2}
	n := s[r-3] * s[r-2]
	if n == 0 {
		c.Out = []ir.Value{c.In[0]}
		return nil
	}
	mean := b.Binary(ir.OpDiv, b.Reduce(x, ir.ReduceSum, axes), b.Full(ir.TensorType{DType: ir.F32, Shape: without(s, axes...)}, float64(n)))
	mean = expandTo(b, mean, s, axes)
	y := b.Binary(ir.OpAdd, b.Binary(ir.OpMul, b.Binary(ir.OpSub, x, mean), f), mean)
	c.Out = []ir.Value{b.Convert(y, t.DType)}
	return nil
}

func lowerAdjust(f func(b *ir.Builder, p pix, k ir.Value) pix) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(2); err != nil {
			return err
		}
		if err := checkRGB(c, 0, 3); err != nil {
			return err
		}
		b := c.B
		t := c.Type(0)
		k, err := scalarArg(c, 1, "the adjustment", t.Shape[:t.Shape.Rank()-1])
		if err != nil {
			return err
		}
		c.Out = []ir.Value{f(b, channels(b, c.In[0]), k).join(b, t.DType)}
		return nil
	}
}

// sel3 picks among per-category values: cats[i] where cat == i, the last
// one elsewhere.
func sel3(b *ir.Builder, cat ir.Value, vals []ir.Value) ir.Value {
	out := vals[len(vals)-1]
	for i := len(vals) - 2; i >= 0; i-- {
		out = b.Select(b.Compare(ir.CmpEQ, cat, like(b, cat, float64(i))), vals[i], out)
	}
	return out
}

// adjustHue is adjust_hue_op.cc: the hue in [0, 6) from the ordering of
// the channels, shifted by delta*6 and wrapped, then the channels rebuilt
// from the hue and the value range.
func adjustHue(b *ir.Builder, p pix, delta ir.Value) pix {
	bin := func(op ir.Op, x, y ir.Value) ir.Value { return b.Binary(op, x, y) }
	lt := func(x, y ir.Value) ir.Value { return b.Compare(ir.CmpLT, x, y) }
	gt := func(x, y ir.Value) ir.Value { return b.Compare(ir.CmpGT, x, y) }
	// rgb_to_hv_range's six cases, as (max, mid, min, category).
	type order struct{ hi, mid, lo, cat ir.Value }
	mk := func(hi, mid, lo ir.Value, cat float64) order { return order{hi, mid, lo, like(b, p.r, cat)} }
	pick := func(c ir.Value, x, y order) order {
		return order{b.Select(c, x.hi, y.hi), b.Select(c, x.mid, y.mid), b.Select(c, x.lo, y.lo), b.Select(c, x.cat, y.cat)}
	}
	rltg := pick(lt(p.b, p.r), mk(p.g, p.r, p.b, 1), pick(gt(p.b, p.g), mk(p.b, p.g, p.r, 3), mk(p.g, p.b, p.r, 2)))
	rgeg := pick(lt(p.b, p.g), mk(p.r, p.g, p.b, 0), pick(gt(p.b, p.r), mk(p.b, p.r, p.g, 4), mk(p.r, p.b, p.g, 5)))
	o := pick(lt(p.r, p.g), rltg, rgeg)
	ratio := bin(ir.OpDiv, bin(ir.OpSub, o.mid, o.lo), bin(ir.OpSub, o.hi, o.lo))
	one := like(b, ratio, 1)
	two := like(b, ratio, 2)
	odd := b.Compare(ir.CmpEQ, bin(ir.OpRem, o.cat, two), one)
	h := bin(ir.OpAdd, o.cat, b.Select(odd, bin(ir.OpSub, one, ratio), ratio))
	zero := like(b, h, 0)
	h = b.Select(b.Compare(ir.CmpEQ, o.hi, o.lo), zero, h)
	six := like(b, h, 6)
	h = bin(ir.OpAdd, h, bin(ir.OpMul, delta, six))
	for range 2 {
		h = b.Select(lt(h, zero), bin(ir.OpAdd, h, six), h)
	}
	for range 2 {
		h = b.Select(b.Compare(ir.CmpGE, h, six), bin(ir.OpSub, h, six), h)
	}
	// hv_range_to_rgb.
	cat := b.Unary(ir.OpFloor, h)
	r := bin(ir.OpSub, h, cat)
	r = b.Select(b.Compare(ir.CmpEQ, bin(ir.OpRem, cat, two), one), bin(ir.OpSub, one, r), r)
	mid := bin(ir.OpAdd, o.lo, bin(ir.OpMul, r, bin(ir.OpSub, o.hi, o.lo)))
	hi, lo := o.hi, o.lo
	return pix{
		sel3(b, cat, []ir.Value{hi, mid, lo, lo, mid, hi}),
		sel3(b, cat, []ir.Value{mid, hi, hi, mid, lo, lo}),
		sel3(b, cat, []ir.Value{lo, lo, mid, hi, hi, mid}),
	}
}

// adjustSaturation is adjust_saturation_op.cc: rgb_to_hsv, the saturation
// scaled and clamped to [0, 1], hsv_to_rgb.
func adjustSaturation(b *ir.Builder, p pix, scale ir.Value) pix {
	bin := func(op ir.Op, x, y ir.Value) ir.Value { return b.Binary(op, x, y) }
	v := bin(ir.OpMax, p.r, bin(ir.OpMax, p.g, p.b))
	rng := bin(ir.OpSub, v, bin(ir.OpMin, p.r, bin(ir.OpMin, p.g, p.b)))
	zero, one := like(b, v, 0), like(b, v, 1)
	s := b.Select(b.Compare(ir.CmpGT, v, zero), bin(ir.OpDiv, rng, v), zero)
	norm := bin(ir.OpDiv, one, bin(ir.OpMul, like(b, v, 6), rng))
	h := b.Select(b.Compare(ir.CmpEQ, p.r, v), bin(ir.OpMul, norm, bin(ir.OpSub, p.g, p.b)),
		b.Select(b.Compare(ir.CmpEQ, p.g, v), bin(ir.OpAdd, bin(ir.OpMul, norm, bin(ir.OpSub, p.b, p.r)), like(b, v, 2.0/6)),
			bin(ir.OpAdd, bin(ir.OpMul, norm, bin(ir.OpSub, p.r, p.g)), like(b, v, 4.0/6))))
	h = b.Select(b.Compare(ir.CmpLE, rng, zero), zero, h)
	h = b.Select(b.Compare(ir.CmpLT, h, zero), bin(ir.OpAdd, h, one), h)
	s = bin(ir.OpMin, one, bin(ir.OpMax, zero, bin(ir.OpMul, s, scale)))
	// hsv_to_rgb.
	cc := bin(ir.OpMul, s, v)
	m := bin(ir.OpSub, v, cc)
	dh := bin(ir.OpMul, h, like(b, h, 6))
	cat := b.Unary(ir.OpFloor, dh)
	two := like(b, dh, 2)
	fmodu := bin(ir.OpSub, dh, bin(ir.OpMul, two, b.Unary(ir.OpFloor, bin(ir.OpMul, dh, like(b, dh, 0.5)))))
	x := bin(ir.OpMul, cc, bin(ir.OpSub, one, b.Unary(ir.OpAbs, bin(ir.OpSub, fmodu, one))))
	plus := func(v ir.Value) ir.Value { return bin(ir.OpAdd, v, m) }
	return pix{
		plus(sel3(b, cat, []ir.Value{cc, x, zero, zero, x, cc, zero})),
		plus(sel3(b, cat, []ir.Value{x, cc, cc, x, zero, zero, zero})),
		plus(sel3(b, cat, []ir.Value{zero, zero, x, cc, cc, x, zero})),
	}
}

// cropAxis is where each crop row (or column) samples one image axis of
// size n, per box: in = lo*(n-1) + i*scale, or the box's centre for a
// crop of size 1, in float32 as crop_and_resize_op.cc computes it, shaped
// [boxes, size].
func cropAxis(b *ir.Builder, lo, hi ir.Value, n, size int, ratio bool) ir.Value {
	nb := b.Type(lo).Shape[0]
	out := ir.Shape{nb, size}
	f := func(v float64) ir.Value { return b.Full(ir.TensorType{DType: ir.F32, Shape: ir.Shape{nb}}, v) }
	bin := func(op ir.Op, x, y ir.Value) ir.Value { return b.Binary(op, x, y) }
	if size == 1 {
		c := bin(ir.OpMul, bin(ir.OpMul, bin(ir.OpAdd, lo, hi), f(0.5)), f(float64(n-1)))
		return b.Reshape(c, out)
	}
	var scale ir.Value
	if ratio { // CropAndResizeGradBoxes: (hi - lo) * ((n-1) / (size-1))
		scale = bin(ir.OpMul, bin(ir.OpSub, hi, lo), f(float64(float32(n-1)/float32(size-1))))
	} else {
		scale = bin(ir.OpDiv, bin(ir.OpMul, bin(ir.OpSub, hi, lo), f(float64(n-1))), f(float64(size-1)))
	}
	i := b.Iota(ir.TensorType{DType: ir.F32, Shape: out}, 1)
	start := b.BroadcastInDim(bin(ir.OpMul, lo, f(float64(n-1))), out, []int{0})
	return bin(ir.OpAdd, start, bin(ir.OpMul, i, b.BroadcastInDim(scale, out, []int{0})))
}

// cropSamples are a crop's sampling positions: per box and crop row the
// image rows, per box and crop column the image columns, with which are
// inside the image, all [boxes, size].
type cropSamples struct {
	y, x           ir.Value // float32 positions
	validY, validX ir.Value
	nb, ch, cw     int
	h, w           int
}

func newCropSamples(c *Call, boxes ir.Value, h, w, ch, cw int, ratio bool) cropSamples {
	b := c.B
	nb := b.Type(boxes).Shape[0]
	col := func(i int) ir.Value {
		return b.Reshape(b.Slice(boxes, []int{0, i}, []int{nb, i + 1}, []int{1, 1}), ir.Shape{nb})
	}
	s := cropSamples{nb: nb, ch: ch, cw: cw, h: h, w: w}
	s.y = cropAxis(b, col(0), col(2), h, ch, ratio)
	s.x = cropAxis(b, col(1), col(3), w, cw, ratio)
	inside := func(v ir.Value, n int) ir.Value {
		return b.Binary(ir.OpAnd, b.Compare(ir.CmpGE, v, like(b, v, 0)), b.Compare(ir.CmpLE, v, like(b, v, float64(n-1))))
	}
	s.validY, s.validX = inside(s.y, h), inside(s.x, w)
	return s
}

// grid broadcasts a [boxes, ch] value (rows) or [boxes, cw] (columns) to
// [boxes, ch, cw, depth].
func (s cropSamples) grid(b *ir.Builder, v ir.Value, rows bool, depth int) ir.Value {
	full := ir.Shape{s.nb, s.ch, s.cw, depth}
	if rows {
		return b.BroadcastInDim(v, full, []int{0, 1})
	}
	return b.BroadcastInDim(v, full, []int{0, 2})
}

// valid is where a sample is inside the image, [boxes, ch, cw, depth].
func (s cropSamples) valid(b *ir.Builder, depth int) ir.Value {
	return b.Binary(ir.OpAnd, s.grid(b, s.validY, true, depth), s.grid(b, s.validX, false, depth))
}

// roundHalfAway is roundf for non-negative x: floor, plus one from a half up.
func roundHalfAway(b *ir.Builder, x ir.Value) ir.Value {
	f := b.Unary(ir.OpFloor, x)
	up := b.Compare(ir.CmpGE, b.Binary(ir.OpSub, x, f), like(b, x, 0.5))
	return b.Select(up, b.Binary(ir.OpAdd, f, like(b, x, 1)), f)
}

// index is int32 [boxes, ch, cw, 3] gather/scatter coordinates (box image,
// row, column) from box_ind and float rows [boxes, ch] and columns
// [boxes, cw], clamped into the image; batch replaces the box image where
// a position is invalid and valid is given (a scatter then skips it).
func (s cropSamples) index(b *ir.Builder, boxInd, rows, cols ir.Value, invalid ir.Value, batch int) ir.Value {
	sh := ir.Shape{s.nb, s.ch, s.cw, 1}
	clampI := func(v ir.Value, n int) ir.Value {
		i := b.Convert(v, ir.I32)
		return b.Binary(ir.OpMin, b.Binary(ir.OpMax, i, b.Full(b.Type(i), 0)), b.Full(b.Type(i), float64(n-1)))
	}
	bi := b.BroadcastInDim(boxInd, sh, []int{0})
	if invalid != 0 {
		bi = b.Select(b.Reshape(invalid, sh), b.Full(ir.TensorType{DType: ir.I32, Shape: sh}, float64(batch)), bi)
	}
	y := b.BroadcastInDim(clampI(rows, s.h), sh, []int{0, 1})
	x := b.BroadcastInDim(clampI(cols, s.w), sh, []int{0, 2})
	return b.Concat(3, bi, y, x)
}

// cropSpec checks boxes [n, 4] float32 (input bi) and box_ind [n] int32
// (input ii) and reads the method.
func cropSpec(c *Call, bi, ii int) (method string, n int, err error) {
	tb, ti := c.Type(bi), c.Type(ii)
	if tb.DType != ir.F32 || tb.Shape.Rank() != 2 || tb.Shape[1] != 4 || ti.DType != ir.I32 || !ti.Shape.Equal(ir.Shape{tb.Shape[0]}) {
		return "", 0, c.Errorf("boxes %v must be float32 [num_boxes, 4] and box_ind %v int32 [num_boxes]", tb, ti)
	}
	method = c.Attrs.String("method", "bilinear")
	if method != "bilinear" && method != "nearest" {
		return "", 0, c.Errorf("method must be 'bilinear' or 'nearest', got %q", method)
	}
	return method, tb.Shape[0], nil
}

// corners gathers image (float32 [B, H, W, D]) at the crop's four
// bilinear corners, with the lerp weights, all [boxes, ch, cw, D].
type corners struct{ tl, tr, bl, br, yl, xl ir.Value }

func (s cropSamples) corners(b *ir.Builder, img, boxInd ir.Value) corners {
	d := b.Type(img).Shape[3]
	top, bottom := b.Unary(ir.OpFloor, s.y), b.Unary(ir.OpCeil, s.y)
	left, right := b.Unary(ir.OpFloor, s.x), b.Unary(ir.OpCeil, s.x)
	at := func(rows, cols ir.Value) ir.Value { return s.gather(b, img, s.index(b, boxInd, rows, cols, 0, 0)) }
	return corners{
		tl: at(top, left), tr: at(top, right), bl: at(bottom, left), br: at(bottom, right),
		yl: s.grid(b, b.Binary(ir.OpSub, s.y, top), true, d),
		xl: s.grid(b, b.Binary(ir.OpSub, s.x, left), false, d),
	}
}

func (s cropSamples) gather(b *ir.Builder, img, idx ir.Value) ir.Value {
	d := b.Type(img).Shape[3]
	return b.Gather(img, idx, ir.GatherDims{OffsetDims: []int{3}, CollapsedSliceDims: []int{0, 1, 2}, StartIndexMap: []int{0, 1, 2},
		IndexVectorDim: 3, SliceSizes: []int{1, 1, 1, d}})
}

func lowerCropAndResize(c *Call) error {
	if err := c.arity(4); err != nil {
		return err
	}
	ti := c.Type(0)
	method, n, err := cropSpec(c, 1, 2)
	if err != nil {
		return err
	}
	size, err := c.hostInts(3, "crop_size")
	if err != nil {
		return err
	}
	if len(size) != 2 || size[0] <= 0 || size[1] <= 0 || size[0] > 1<<20 || size[1] > 1<<20 {
		return c.Errorf("crop_size must be 2 positive values, got %v", size)
	}
	if ti.Shape.Rank() != 4 || ti.Shape[1] <= 0 || ti.Shape[2] <= 0 {
		return c.Errorf("image must be 4-D with positive height and width, got %v", ti)
	}
	b := c.B
	ch, cw, d := int(size[0]), int(size[1]), ti.Shape[3]
	out := ir.TensorType{DType: ir.F32, Shape: ir.Shape{n, ch, cw, d}}
	if out.Shape.Size() == 0 {
		c.Out = []ir.Value{b.Full(out, 0)}
		return nil
	}
	if ti.Shape[0] == 0 {
		return c.Errorf("box_ind has values outside [0, 0): the image batch is empty (image %v, %d boxes)", ti, n)
	}
	s := newCropSamples(c, c.In[1], ti.Shape[1], ti.Shape[2], ch, cw, false)
	img := b.Convert(c.In[0], ir.F32)
	var y ir.Value
	if method == "bilinear" {
		k := s.corners(b, img, c.In[2])
		lerp := func(a, z, w ir.Value) ir.Value {
			return b.Binary(ir.OpAdd, a, b.Binary(ir.OpMul, b.Binary(ir.OpSub, z, a), w))
		}
		y = lerp(lerp(k.tl, k.tr, k.xl), lerp(k.bl, k.br, k.xl), k.yl)
	} else {
		y = s.gather(b, img, s.index(b, c.In[2], roundHalfAway(b, s.y), roundHalfAway(b, s.x), 0, 0))
	}
	ext := b.Full(out, float64(c.Attrs.Float("extrapolation_value", 0)))
	c.Out = []ir.Value{b.Select(s.valid(b, d), y, ext)}
	return nil
}

// lowerCropAndResizeGradImage scatters each crop gradient back onto the
// image pixels it was sampled from, with the bilinear weights.
func lowerCropAndResizeGradImage(c *Call) error {
	if err := c.arity(4); err != nil {
		return err
	}
	tg := c.Type(0)
	method, n, err := cropSpec(c, 1, 2)
	if err != nil {
		return err
	}
	shape, err := c.hostShape(3, "image_size")
	if err != nil {
		return err
	}
	if tg.DType != ir.F32 || tg.Shape.Rank() != 4 || tg.Shape[0] != n || tg.Shape[1] <= 0 || tg.Shape[2] <= 0 {
		return c.Errorf("grads must be float32 [num_boxes, crop_height, crop_width, depth] with positive crop sizes, got %v for %d boxes", tg, n)
	}
	if len(shape) != 4 || shape[1] <= 0 || shape[2] <= 0 || shape[3] != tg.Shape[3] {
		return c.Errorf("image_size %v must be [batch, height, width, depth] with positive sizes and the depth of grads %v", shape, tg)
	}
	b := c.B
	d := tg.DType
	dt := c.Attrs.Type("T", ir.F32)
	res := b.Full(ir.TensorType{DType: ir.F32, Shape: shape}, 0)
	if tg.Shape.Size() == 0 || shape.Size() == 0 {
		c.Out = []ir.Value{b.Convert(res, dt)}
		return nil
	}
	s := newCropSamples(c, c.In[1], shape[1], shape[2], tg.Shape[1], tg.Shape[2], false)
	invalid := b.Unary(ir.OpNot, s.valid(b, 1))
	add := func(rows, cols, upd ir.Value) {
		idx := s.index(b, c.In[2], rows, cols, invalid, shape[0])
		res = b.Scatter(res, idx, upd, ir.ScatterDims{UpdateWindowDims: []int{3}, InsertedWindowDims: []int{0, 1, 2},
			ScatterDimsToOperandDims: []int{0, 1, 2}, IndexVectorDim: 3, Kind: ir.ScatterAdd})
	}
	g := c.In[0]
	if method == "bilinear" {
		depth := tg.Shape[3]
		top, bottom := b.Unary(ir.OpFloor, s.y), b.Unary(ir.OpCeil, s.y)
		left, right := b.Unary(ir.OpFloor, s.x), b.Unary(ir.OpCeil, s.x)
		yl := s.grid(b, b.Binary(ir.OpSub, s.y, top), true, depth)
		xl := s.grid(b, b.Binary(ir.OpSub, s.x, left), false, depth)
		one := b.Full(ir.TensorType{DType: d, Shape: tg.Shape}, 1)
		mul := func(x, y ir.Value) ir.Value { return b.Binary(ir.OpMul, x, y) }
		dtop := mul(b.Binary(ir.OpSub, one, yl), g)
		dbottom := mul(yl, g)
		add(top, left, mul(b.Binary(ir.OpSub, one, xl), dtop))
		add(top, right, mul(xl, dtop))
		add(bottom, left, mul(b.Binary(ir.OpSub, one, xl), dbottom))
		add(bottom, right, mul(xl, dbottom))
	} else {
		add(roundHalfAway(b, s.y), roundHalfAway(b, s.x), g)
	}
	c.Out = []ir.Value{b.Convert(res, dt)}
	return nil
}

// lowerCropAndResizeGradBoxes sums, per box, the image's bilinear slope at
// each sample times its gradient, by how each box coordinate moves the
// sample.
func lowerCropAndResizeGradBoxes(c *Call) error {
	if err := c.arity(4); err != nil {
		return err
	}
	tg, ti := c.Type(0), c.Type(1)
	if _, _, err := cropSpec(c, 2, 3); err != nil {
		return err
	}
	n := c.Type(2).Shape[0]
	if tg.DType != ir.F32 || tg.Shape.Rank() != 4 || tg.Shape[0] != n || tg.Shape[1] <= 0 || tg.Shape[2] <= 0 ||
		ti.Shape.Rank() != 4 || ti.Shape[3] != tg.Shape[3] || ti.Shape[1] <= 0 || ti.Shape[2] <= 0 {
		return c.Errorf("grads %v must be float32 [num_boxes, crop_height, crop_width, depth] with positive crop sizes, and image %v [batch, height, width, depth] of its depth, for %d boxes", tg, ti, n)
	}
	b := c.B
	out := ir.TensorType{DType: ir.F32, Shape: ir.Shape{n, 4}}
	if tg.Shape.Size() == 0 {
		c.Out = []ir.Value{b.Full(out, 0)}
		return nil
	}
	if ti.Shape[0] == 0 {
		return c.Errorf("box_ind has values outside [0, 0): the image batch is empty (image %v, %d boxes)", ti, n)
	}
	h, w, ch, cw := ti.Shape[1], ti.Shape[2], tg.Shape[1], tg.Shape[2]
	s := newCropSamples(c, c.In[2], h, w, ch, cw, true)
	k := s.corners(b, b.Convert(c.In[1], ir.F32), c.In[3])
	bin := func(op ir.Op, x, y ir.Value) ir.Value { return b.Binary(op, x, y) }
	one := b.Full(ir.TensorType{DType: ir.F32, Shape: tg.Shape}, 1)
	gy := bin(ir.OpAdd, bin(ir.OpMul, bin(ir.OpSub, one, k.xl), bin(ir.OpSub, k.bl, k.tl)), bin(ir.OpMul, k.xl, bin(ir.OpSub, k.br, k.tr)))
	gx := bin(ir.OpAdd, bin(ir.OpMul, bin(ir.OpSub, one, k.yl), bin(ir.OpSub, k.tr, k.tl)), bin(ir.OpMul, k.yl, bin(ir.OpSub, k.br, k.bl)))
	gy, gx = bin(ir.OpMul, gy, c.In[0]), bin(ir.OpMul, gx, c.In[0])
	zero := b.Full(ir.TensorType{DType: ir.F32, Shape: tg.Shape}, 0)
	valid := s.valid(b, tg.Shape[3])
	// The factors by which the first and second coordinate move a sample
	// at crop row (column) i: n-1 - i*ratio and i*ratio, or half of n-1
	// each for a crop of size 1.
	factors := func(n, size int, rows bool) (lo, hi ir.Value) {
		var l, u []float64
		ratio := float32(0)
		if size > 1 {
			ratio = float32(n-1) / float32(size-1)
		}
		for i := range size {
			if size > 1 {
				l = append(l, float64(float32(n-1)-float32(i)*ratio))
				u = append(u, float64(float32(i)*ratio))
			} else {
				l, u = append(l, 0.5*float64(n-1)), append(u, 0.5*float64(n-1))
			}
		}
		full := tg.Shape
		axis := 2
		if rows {
			axis = 1
		}
		return b.BroadcastInDim(f32Constant(b, l), full, []int{axis}), b.BroadcastInDim(f32Constant(b, u), full, []int{axis})
	}
	sum := func(v, f ir.Value) ir.Value {
		return b.Reshape(b.Reduce(b.Select(valid, bin(ir.OpMul, v, f), zero), ir.ReduceSum, []int{1, 2, 3}), ir.Shape{n, 1})
	}
	ylo, yhi := factors(h, ch, true)
	xlo, xhi := factors(w, cw, false)
	c.Out = []ir.Value{b.Concat(1, sum(gy, ylo), sum(gx, xlo), sum(gy, yhi), sum(gx, xhi))}
	return nil
}

// mapCoord is image_ops.h's MapCoordinate: an input coordinate outside
// [0, n-1] brought inside by the fill mode (CONSTANT leaves it), float32.
func mapCoord(b *ir.Builder, v ir.Value, n int, mode string) ir.Value {
	f := func(x float64) ir.Value { return like(b, v, x) }
	bin := func(op ir.Op, x, y ir.Value) ir.Value { return b.Binary(op, x, y) }
	trunc := func(x ir.Value) ir.Value { return b.Convert(b.Convert(x, ir.I64), ir.F32) }
	clamp := func(x ir.Value) ir.Value { return bin(ir.OpMin, bin(ir.OpMax, x, f(0)), f(float64(n-1))) }
	below := b.Compare(ir.CmpLT, v, f(0))
	above := b.Compare(ir.CmpGT, v, f(float64(n-1)))
	switch mode {
	case "CONSTANT":
		return v
	case "NEAREST":
		return clamp(v)
	}
	if n <= 1 {
		return clamp(b.Select(b.Binary(ir.OpOr, below, above), f(0), v))
	}
	var lo, hi ir.Value
	if mode == "REFLECT" {
		sz2 := f(float64(2 * n))
		l := bin(ir.OpAdd, bin(ir.OpMul, sz2, trunc(bin(ir.OpDiv, b.Unary(ir.OpNeg, v), sz2))), v)
		lo = b.Select(b.Compare(ir.CmpLT, l, f(-float64(n))), bin(ir.OpAdd, l, sz2), bin(ir.OpSub, b.Unary(ir.OpNeg, l), f(1)))
		h := bin(ir.OpSub, v, bin(ir.OpMul, sz2, trunc(bin(ir.OpDiv, v, sz2))))
		hi = b.Select(b.Compare(ir.CmpGE, h, f(float64(n))), bin(ir.OpSub, bin(ir.OpSub, sz2, h), f(1)), h)
	} else { // WRAP
		sz, ln := f(float64(n-1)), f(float64(n))
		lo = bin(ir.OpAdd, v, bin(ir.OpMul, ln, bin(ir.OpAdd, trunc(bin(ir.OpDiv, b.Unary(ir.OpNeg, v), sz)), f(1))))
		hi = bin(ir.OpSub, v, bin(ir.OpMul, ln, trunc(bin(ir.OpDiv, v, sz))))
	}
	return clamp(b.Select(below, lo, b.Select(above, hi, v)))
}

// lowerProjective is ImageProjectiveTransformV2 and V3 (image_ops.h's
// ProjectiveGenerator): each output pixel's input position from its
// image's transform, mapped by the fill mode, read nearest or bilinearly,
// the fill value outside the image.
func lowerProjective(v3 bool) func(c *Call) error {
	return func(c *Call) error {
		n := 3
		if v3 {
			n = 4
		}
		if err := c.arity(n); err != nil {
			return err
		}
		ti, tt := c.Type(0), c.Type(1)
		if ti.Shape.Rank() != 4 || tt.DType != ir.F32 || tt.Shape.Rank() != 2 || tt.Shape[1] != 8 || (tt.Shape[0] != 1 && tt.Shape[0] != ti.Shape[0]) {
			return c.Errorf("images %v must be 4-D and transforms %v float32 [1 or batch, 8]", ti, tt)
		}
		size, err := c.hostInts(2, "output_shape")
		if err != nil {
			return err
		}
		if len(size) != 2 || size[0] <= 0 || size[1] <= 0 || size[0] > 1<<20 || size[1] > 1<<20 {
			return c.Errorf("output_shape must be 2 positive values, got %v", size)
		}
		interp := c.Attrs.String("interpolation", "")
		if interp != "NEAREST" && interp != "BILINEAR" {
			return c.Errorf("interpolation must be NEAREST or BILINEAR, got %q", interp)
		}
		mode := c.Attrs.String("fill_mode", "CONSTANT")
		switch mode {
		case "CONSTANT", "REFLECT", "WRAP", "NEAREST":
		default:
			return c.Errorf("fill_mode must be CONSTANT, REFLECT, WRAP or NEAREST, got %q", mode)
		}
		b := c.B
		batch, h, w, ch := ti.Shape[0], ti.Shape[1], ti.Shape[2], ti.Shape[3]
		oh, ow := int(size[0]), int(size[1])
		out := ir.TensorType{DType: ti.DType, Shape: ir.Shape{batch, oh, ow, ch}}
		fill := b.Full(out, 0)
		if v3 {
			fv, err := scalarArg(c, 3, "fill_value", out.Shape)
			if err != nil {
				return err
			}
			fill = b.Convert(fv, ti.DType)
		}
		if out.Shape.Size() == 0 || h == 0 || w == 0 {
			c.Out = []ir.Value{fill}
			return nil
		}
		grid := ir.TensorType{DType: ir.F32, Shape: ir.Shape{batch, oh, ow}}
		ox, oy := b.Iota(grid, 2), b.Iota(grid, 1)
		tr := c.In[1]
		if tt.Shape[0] == 1 {
			tr = b.BroadcastInDim(tr, ir.Shape{batch, 8}, []int{0, 1})
		}
		t := func(k int) ir.Value {
			return b.BroadcastInDim(b.Reshape(b.Slice(tr, []int{0, k}, []int{batch, k + 1}, []int{1, 1}), ir.Shape{batch}), grid.Shape, []int{0})
		}
		bin := func(op ir.Op, x, y ir.Value) ir.Value { return b.Binary(op, x, y) }
		lin := func(a, bb ir.Value, cst ir.Value) ir.Value {
			return bin(ir.OpAdd, bin(ir.OpAdd, bin(ir.OpMul, a, ox), bin(ir.OpMul, bb, oy)), cst)
		}
		proj := lin(t(6), t(7), like(b, ox, 1))
		x := mapCoord(b, bin(ir.OpDiv, lin(t(0), t(1), t(2)), proj), w, mode)
		y := mapCoord(b, bin(ir.OpDiv, lin(t(3), t(4), t(5)), proj), h, mode)
		// Only a zero projection is outside here: a coordinate past the
		// edge (CONSTANT) reads the fill value per pixel read.
		outside := b.Compare(ir.CmpEQ, proj, like(b, proj, 0))
		full := func(v ir.Value) ir.Value { return b.BroadcastInDim(v, out.Shape, []int{0, 1, 2}) }
		bidx := b.Iota(ir.TensorType{DType: ir.I32, Shape: ir.Shape{batch, oh, ow, 1}}, 0)
		// read is read_with_fill_value at float rows and columns that are
		// whole numbers.
		read := func(ry, rx ir.Value) ir.Value {
			in := b.Binary(ir.OpAnd, b.Binary(ir.OpAnd, b.Compare(ir.CmpGE, ry, like(b, ry, 0)), b.Compare(ir.CmpLE, ry, like(b, ry, float64(h-1)))),
				b.Binary(ir.OpAnd, b.Compare(ir.CmpGE, rx, like(b, rx, 0)), b.Compare(ir.CmpLE, rx, like(b, rx, float64(w-1)))))
			clampI := func(v ir.Value, n int) ir.Value {
				i := b.Convert(bin(ir.OpMin, bin(ir.OpMax, v, like(b, v, 0)), like(b, v, float64(n-1))), ir.I32)
				return b.Reshape(i, ir.Shape{batch, oh, ow, 1})
			}
			idx := b.Concat(3, bidx, clampI(ry, h), clampI(rx, w))
			g := b.Gather(c.In[0], idx, ir.GatherDims{OffsetDims: []int{3}, CollapsedSliceDims: []int{0, 1, 2}, StartIndexMap: []int{0, 1, 2},
				IndexVectorDim: 3, SliceSizes: []int{1, 1, 1, ch}})
			return b.Select(full(in), g, fill)
		}
		var res ir.Value
		if interp == "NEAREST" {
			res = read(roundHalfAway(b, y), roundHalfAway(b, x))
		} else {
			yf, xf := b.Unary(ir.OpFloor, y), b.Unary(ir.OpFloor, x)
			yc, xc := bin(ir.OpAdd, yf, like(b, yf, 1)), bin(ir.OpAdd, xf, like(b, xf, 1))
			rf := func(ry, rx ir.Value) ir.Value { return b.Convert(read(ry, rx), ir.F32) }
			wx0, wx1 := full(bin(ir.OpSub, xc, x)), full(bin(ir.OpSub, x, xf))
			wy0, wy1 := full(bin(ir.OpSub, yc, y)), full(bin(ir.OpSub, y, yf))
			vyf := bin(ir.OpAdd, bin(ir.OpMul, wx0, rf(yf, xf)), bin(ir.OpMul, wx1, rf(yf, xc)))
			vyc := bin(ir.OpAdd, bin(ir.OpMul, wx0, rf(yc, xf)), bin(ir.OpMul, wx1, rf(yc, xc)))
			res = b.Convert(bin(ir.OpAdd, bin(ir.OpMul, wy0, vyf), bin(ir.OpMul, wy1, vyc)), ti.DType)
		}
		c.Out = []ir.Value{b.Select(full(outside), fill, res)}
		return nil
	}
}

package lower

import (
	"math"

	"github.com/metalplug/metalplug/backend/ir"
)

// Image resizing of NHWC batches (resize_nearest_neighbor_op.cc,
// resize_bilinear_op.cc, image_resizer_state.h). Which input rows and
// columns each output row and column reads, and with what weights, follows
// from the sizes and the align_corners and half_pixel_centers attributes
// alone; they are computed here in float32, as TensorFlow computes them, so
// the resize is gathers of the image and its gradient a scatter (nearest
// neighbour) or two products with the weight matrices (bilinear).

func init() {
	attrs := []AttrSpec{{Name: "align_corners", Kind: AttrBool, Optional: true}, {Name: "half_pixel_centers", Kind: AttrBool, Optional: true}}
	register(Kernel{Op: "ResizeNearestNeighbor", Constraints: T(Floats), Inputs: []string{"images", "size"}, HostInputs: []string{"size"}, Attrs: attrs, Lower: lowerResize(false)})
	register(Kernel{Op: "ResizeBilinear", Constraints: T(Floats), Inputs: []string{"images", "size"}, HostInputs: []string{"size"}, Attrs: attrs, Lower: lowerResize(true)})
	register(Kernel{Op: "ResizeNearestNeighborGrad", Constraints: T(Floats), Inputs: []string{"grads", "size"}, HostInputs: []string{"size"}, Attrs: attrs, Lower: lowerResizeNearestGrad})
	register(Kernel{Op: "ResizeBilinearGrad", Constraints: T(Floats), Inputs: []string{"grads", "original_image"},
		Attrs: attrs, Lower: lowerResizeBilinearGrad})
}

// resizeScale is how many input pixels one output pixel spans
// (CalculateResizeScale).
func resizeScale(in, out int, alignCorners bool) float32 {
	if alignCorners && out > 1 {
		return float32(in-1) / float32(out-1)
	}
	return float32(in) / float32(out)
}

// nearestSources is the input index each of out positions reads.
func nearestSources(in, out int, alignCorners, halfPixel bool) []int {
	scale := resizeScale(in, out, alignCorners)
	src := make([]int, out)
	for i := range src {
		var p float32
		if halfPixel {
			p = (float32(i) + 0.5) * scale
		} else {
			p = float32(i) * scale
		}
		var k int
		if alignCorners {
			k = int(math.Round(float64(p))) // roundf: half away from zero
		} else {
			k = int(math.Floor(float64(p)))
		}
		k = min(k, in-1)
		if halfPixel {
			k = max(k, 0)
		}
		src[i] = k
	}
	return src
}

// bilinearSources are, for each of out positions, the two input indices it
// blends and the weight of the second (compute_interpolation_weights).
func bilinearSources(in, out int, alignCorners, halfPixel bool) (lo, hi []int, w []float32) {
	scale := resizeScale(in, out, alignCorners)
	lo, hi, w = make([]int, out), make([]int, out), make([]float32, out)
	for i := range out {
		var p float32
		if halfPixel {
			p = (float32(i)+0.5)*scale - 0.5
		} else {
			p = float32(i) * scale
		}
		f := float32(math.Floor(float64(p)))
		lo[i] = max(int(f), 0)
		hi[i] = min(int(math.Ceil(float64(p))), in-1)
		w[i] = p - f
	}
	return lo, hi, w
}

// resizeSpec reads the attributes and checks the image (input 0) and the
// size of the other side.
func resizeSpec(c *Call, h, w int) (alignCorners, halfPixel bool, err error) {
	t := c.Type(0)
	alignCorners, halfPixel = c.Attrs.Bool("align_corners"), c.Attrs.Bool("half_pixel_centers")
	if alignCorners && halfPixel {
		return false, false, c.Errorf("if half_pixel_centers is true, align_corners must be false (inputs %s)", c.Inputs())
	}
	if t.Shape.Rank() != 4 || h <= 0 || w <= 0 || t.Shape[1] <= 0 || t.Shape[2] <= 0 {
		return false, false, c.Errorf("needs a 4-D NHWC input and positive sizes: input %v, size [%d, %d]", t, h, w)
	}
	return alignCorners, halfPixel, nil
}

// hostSize checks the two inputs and reads the second, the host input
// size, as [height, width], and the attributes.
func hostSize(c *Call) (h, w int, alignCorners, halfPixel bool, err error) {
	if err := c.arity(2); err != nil {
		return 0, 0, false, false, err
	}
	s, err := c.hostInts(1, "size")
	if err != nil {
		return 0, 0, false, false, err
	}
	if len(s) != 2 || c.Type(1).Shape.Rank() != 1 {
		return 0, 0, false, false, c.Errorf("size must be a vector of 2 values, got %v (%v)", s, c.Type(1))
	}
	h, w = int(s[0]), int(s[1])
	alignCorners, halfPixel, err = resizeSpec(c, h, w)
	return h, w, alignCorners, halfPixel, err
}

// takeAlong gathers x's slices along axis at the given constant indices.
func takeAlong(b *ir.Builder, x ir.Value, axis int, idx []int) ir.Value {
	t := b.Type(x)
	r := t.Shape.Rank()
	src := make([]int64, len(idx))
	for i, v := range idx {
		src[i] = int64(v)
	}
	out := t.Shape.Clone()
	out[axis] = len(idx)
	if out.Size() == 0 {
		return b.Full(ir.TensorType{DType: t.DType, Shape: out}, 0)
	}
	sizes := t.Shape.Clone()
	sizes[axis] = 1
	offset := append(seq(axis), rangeInts(axis+1, r)...)
	ids := b.Convert(i64Constant(b, ir.Shape{len(idx), 1}, src), ir.I32)
	return b.Gather(x, ids, ir.GatherDims{OffsetDims: offset, CollapsedSliceDims: []int{axis}, StartIndexMap: []int{axis},
		IndexVectorDim: 1, SliceSizes: sizes})
}

// f32Along is a float32 tensor of shape s holding w[i] at index i of axis.
func f32Along(b *ir.Builder, w []float32, s ir.Shape, axis int) ir.Value {
	v := make([]float64, len(w))
	for i, x := range w {
		v[i] = float64(x)
	}
	return b.BroadcastInDim(f32Constant(b, v), s, []int{axis})
}

// lowerResize is ResizeNearestNeighbor (the image's dtype) or
// ResizeBilinear (float32: top-left + (top-right - top-left) * x-weight,
// the same below, then top + (bottom - top) * y-weight, in that order).
func lowerResize(bilinear bool) func(c *Call) error {
	return func(c *Call) error {
		oh, ow, align, half, err := hostSize(c)
		if err != nil {
			return err
		}
		t := c.Type(0)
		h, w := t.Shape[1], t.Shape[2]
		b := c.B
		if !bilinear {
			x := takeAlong(b, c.In[0], 1, nearestSources(h, oh, align, half))
			c.Out = []ir.Value{takeAlong(b, x, 2, nearestSources(w, ow, align, half))}
			return nil
		}
		top, bottom, wy := bilinearSources(h, oh, align, half)
		left, right, wx := bilinearSources(w, ow, align, half)
		x := b.Convert(c.In[0], ir.F32)
		rowsTop, rowsBottom := takeAlong(b, x, 1, top), takeAlong(b, x, 1, bottom)
		out := ir.Shape{t.Shape[0], oh, ow, t.Shape[3]}
		xw, yw := f32Along(b, wx, out, 2), f32Along(b, wy, out, 1)
		lerp := func(a, z, wt ir.Value) ir.Value {
			return b.Binary(ir.OpAdd, a, b.Binary(ir.OpMul, b.Binary(ir.OpSub, z, a), wt))
		}
		upper := lerp(takeAlong(b, rowsTop, 2, left), takeAlong(b, rowsTop, 2, right), xw)
		lower := lerp(takeAlong(b, rowsBottom, 2, left), takeAlong(b, rowsBottom, 2, right), xw)
		c.Out = []ir.Value{lerp(upper, lower, yw)}
		return nil
	}
}

// lowerResizeNearestGrad adds each gradient pixel into the input pixel the
// forward resize read it from.
func lowerResizeNearestGrad(c *Call) error {
	h, w, align, half, err := hostSize(c)
	if err != nil {
		return err
	}
	t := c.Type(0)
	gh, gw := t.Shape[1], t.Shape[2]
	ys, xs := nearestSources(h, gh, align, half), nearestSources(w, gw, align, half)
	idx := make([]int64, 0, 2*gh*gw)
	for _, y := range ys {
		for _, x := range xs {
			idx = append(idx, int64(y), int64(x))
		}
	}
	b := c.B
	acc := accType(t.DType)
	out := b.Full(ir.TensorType{DType: acc, Shape: ir.Shape{t.Shape[0], h, w, t.Shape[3]}}, 0)
	if t.Shape.Size() > 0 {
		ids := b.Convert(i64Constant(b, ir.Shape{gh, gw, 2}, idx), ir.I32)
		out = b.Scatter(out, ids, b.Convert(c.In[0], acc), ir.ScatterDims{UpdateWindowDims: []int{0, 3}, InsertedWindowDims: []int{1, 2},
			ScatterDimsToOperandDims: []int{1, 2}, IndexVectorDim: 2, Kind: ir.ScatterAdd})
	}
	c.Out = []ir.Value{b.Convert(out, t.DType)}
	return nil
}

// bilinearMatrix is the [out, in] float32 matrix of the forward resize's
// weights along one axis.
func bilinearMatrix(b *ir.Builder, in, out int, align, half bool) ir.Value {
	lo, hi, w := bilinearSources(in, out, align, half)
	m := make([]float64, out*in)
	for i := range out {
		m[i*in+lo[i]] += float64(1 - w[i])
		m[i*in+hi[i]] += float64(w[i])
	}
	return b.Reshape(f32Constant(b, m), ir.Shape{out, in})
}

// lowerResizeBilinearGrad spreads each float32 gradient pixel over the four
// input pixels it was blended from, with their weights: the transposed
// weight matrices of both axes, applied to the gradient.
func lowerResizeBilinearGrad(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	tg, to := c.Type(0), c.Type(1)
	if to.Shape.Rank() != 4 || tg.Shape.Rank() != 4 || tg.DType != ir.F32 || tg.Shape[0] != to.Shape[0] || tg.Shape[3] != to.Shape[3] {
		return c.Errorf("grads must be float32 NHWC and original_image NHWC of its batch and channels: grads %v, original_image %v", tg, to)
	}
	h, w := to.Shape[1], to.Shape[2]
	sub := *c
	sub.types = []ir.TensorType{tg}
	align, half, err := resizeSpec(&sub, h, w)
	if err != nil {
		return err
	}
	b := c.B
	my := bilinearMatrix(b, h, tg.Shape[1], align, half) // [gh, h]
	mx := bilinearMatrix(b, w, tg.Shape[2], align, half) // [gw, w]
	// [n, gh, gw, c] x [gh, h] over gh -> [n, gw, c, h]; x [gw, w] over gw -> [n, c, h, w]
	g := b.DotGeneral(c.In[0], my, ir.DotDims{LhsContract: []int{1}, RhsContract: []int{0}})
	g = b.DotGeneral(g, mx, ir.DotDims{LhsContract: []int{1}, RhsContract: []int{0}})
	c.Out = []ir.Value{b.Convert(b.Transpose(g, []int{0, 2, 3, 1}), to.DType)}
	return nil
}

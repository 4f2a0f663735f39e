package lower

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

// Gradient ops checked against their forward ops: for an op linear in an
// input, the gradient at position i is the forward op applied to the i-th
// one-hot input, dotted with the output gradient; for the others, finite
// differences.

// dot is sum(a*b).
func dot(a, b eval.Tensor) float64 {
	s := 0.0
	for k := range a.Type.Shape.Size() {
		s += a.At(k) * b.At(k)
	}
	return s
}

func oneHot(t ir.TensorType, i int) eval.Tensor {
	v := eval.New(t)
	v.Set(i, 1)
	return v
}

func shapeVal(s ir.Shape) eval.Tensor {
	f := make([]float64, len(s))
	for i, d := range s {
		f[i] = float64(d)
	}
	return val(ir.I32, ir.Shape{len(s)}, f...)
}

func TestConvolutionGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	type conv struct {
		name          string
		fwd, gin, gfl string
		a             attrs
		x, w          ir.Shape
	}
	cases := []conv{
		{"2D SAME stride 2", "Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter",
			A().Is("strides", 1, 2, 2, 1).S("padding", "SAME"), ir.Shape{2, 5, 6, 3}, ir.Shape{3, 3, 3, 4}},
		{"2D VALID strides 2,1 NCHW", "Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter",
			A().Is("strides", 1, 1, 2, 1).S("padding", "VALID").S("data_format", "NCHW"), ir.Shape{1, 2, 6, 5}, ir.Shape{2, 3, 2, 3}},
		{"2D dilated", "Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter",
			A().Is("strides", 1, 1, 1, 1).Is("dilations", 1, 2, 2, 1).S("padding", "SAME"), ir.Shape{1, 6, 5, 2}, ir.Shape{3, 2, 2, 3}},
		{"2D grouped explicit", "Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter",
			A().Is("strides", 1, 2, 1, 1).S("padding", "EXPLICIT").Is("explicit_paddings", 0, 0, 2, 1, 0, 3, 0, 0),
			ir.Shape{1, 5, 4, 4}, ir.Shape{2, 3, 2, 6}},
		{"2D VALID leftover rows", "Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter",
			A().Is("strides", 1, 3, 3, 1).S("padding", "VALID"), ir.Shape{1, 8, 7, 2}, ir.Shape{2, 2, 2, 2}},
		{"depthwise SAME stride 2", "DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter",
			A().Is("strides", 1, 2, 2, 1).S("padding", "SAME"), ir.Shape{2, 5, 5, 3}, ir.Shape{3, 3, 3, 2}},
		{"depthwise NCHW", "DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter",
			A().Is("strides", 1, 1, 1, 1).S("padding", "VALID").S("data_format", "NCHW"), ir.Shape{1, 2, 4, 5}, ir.Shape{2, 2, 2, 3}},
		{"3D SAME", "Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2",
			A().Is("strides", 1, 2, 1, 2, 1).S("padding", "SAME"), ir.Shape{1, 4, 3, 4, 2}, ir.Shape{2, 2, 3, 2, 3}},
		{"3D NCDHW VALID", "Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2",
			A().Is("strides", 1, 1, 1, 2, 1).S("padding", "VALID").S("data_format", "NCDHW"), ir.Shape{1, 2, 3, 5, 4}, ir.Shape{2, 2, 2, 2, 2}},
	}
	for _, c := range cases {
		x := randVal(r, ir.F32, c.x, 2)
		w := randVal(r, ir.F32, c.w, 2)
		y := run(t, c.fwd, c.a, x, w)[0]
		dy := randVal(r, ir.F32, y.Type.Shape, 2)
		dx := run(t, c.gin, c.a, shapeVal(c.x), w, dy)[0]
		expectShape(t, c.name+" input grad", dx, x.Type)
		want := make([]float64, c.x.Size())
		for i := range want {
			want[i] = dot(run(t, c.fwd, c.a, oneHot(x.Type, i), w)[0], dy)
		}
		expectClose(t, c.name+" input grad", dx, want, 0)
		dw := run(t, c.gfl, c.a, x, shapeVal(c.w), dy)[0]
		expectShape(t, c.name+" filter grad", dw, w.Type)
		want = make([]float64, c.w.Size())
		for i := range want {
			want[i] = dot(run(t, c.fwd, c.a, x, oneHot(w.Type, i))[0], dy)
		}
		expectClose(t, c.name+" filter grad", dw, want, 0)
	}
	// input_sizes may give just the spatial dims.
	a := A().Is("strides", 1, 1, 1, 1).S("padding", "SAME")
	w := randVal(r, ir.F32, ir.Shape{3, 3, 2, 4}, 2)
	dy := randVal(r, ir.F32, ir.Shape{2, 4, 5, 4}, 2)
	full := run(t, "Conv2DBackpropInput", a, shapeVal(ir.Shape{2, 4, 5, 2}), w, dy)[0]
	short := run(t, "Conv2DBackpropInput", a, shapeVal(ir.Shape{4, 5}), w, dy)[0]
	expectClose(t, "spatial input_sizes", short, full.Floats(), 0)
}

func TestPoolGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	type pool struct {
		name     string
		fwd, grd string
		a        attrs
		x        ir.Shape
	}
	pool2 := func(k0, k1, s0, s1 int64, pad string) attrs {
		return A().Is("ksize", 1, k0, k1, 1).Is("strides", 1, s0, s1, 1).S("padding", pad)
	}
	cases := []pool{
		{"max SAME", "MaxPool", "MaxPoolGrad", pool2(3, 3, 2, 2, "SAME"), ir.Shape{2, 5, 6, 2}},
		{"max VALID overlapping", "MaxPool", "MaxPoolGrad", pool2(3, 2, 1, 2, "VALID"), ir.Shape{1, 5, 5, 2}},
		{"max NCHW", "MaxPool", "MaxPoolGrad", A().Is("ksize", 1, 1, 2, 2).Is("strides", 1, 1, 2, 2).S("padding", "SAME").S("data_format", "NCHW"), ir.Shape{1, 2, 5, 3}},
		{"avg SAME", "AvgPool", "AvgPoolGrad", pool2(3, 3, 2, 2, "SAME"), ir.Shape{2, 5, 6, 2}},
		{"avg VALID leftover", "AvgPool", "AvgPoolGrad", pool2(2, 3, 3, 2, "VALID"), ir.Shape{1, 7, 6, 1}},
		{"max3d", "MaxPool3D", "MaxPool3DGrad", A().Is("ksize", 1, 2, 2, 2, 1).Is("strides", 1, 2, 1, 2, 1).S("padding", "SAME"), ir.Shape{1, 3, 3, 4, 2}},
		{"avg3d NCDHW", "AvgPool3D", "AvgPool3DGrad", A().Is("ksize", 1, 1, 2, 2, 2).Is("strides", 1, 1, 1, 2, 2).S("padding", "SAME").S("data_format", "NCDHW"), ir.Shape{1, 2, 3, 3, 4}},
	}
	for _, c := range cases {
		n := c.x.Size()
		// Distinct values, so every window has one maximum.
		perm := r.Perm(n)
		xs := make([]float64, n)
		for i, p := range perm {
			xs[i] = float64(p) - float64(n)/2
		}
		x := fv(c.x, xs...)
		y := run(t, c.fwd, c.a, x)[0]
		dy := randVal(r, ir.F32, y.Type.Shape, 3)
		var dx eval.Tensor
		if c.fwd == "MaxPool" || c.fwd == "MaxPool3D" {
			dx = run(t, c.grd, c.a, x, y, dy)[0]
		} else {
			dx = run(t, c.grd, c.a, shapeVal(c.x), dy)[0]
		}
		expectShape(t, c.name, dx, x.Type)
		want := make([]float64, n)
		base := dot(y, dy)
		for i := range want {
			if c.fwd == "AvgPool" || c.fwd == "AvgPool3D" {
				want[i] = dot(run(t, c.fwd, c.a, oneHot(x.Type, i))[0], dy)
				continue
			}
			xp := fv(c.x, xs...)
			xp.F[i] += 0.25
			want[i] = (dot(run(t, c.fwd, c.a, xp)[0], dy) - base) / 0.25
		}
		expectClose(t, c.name, dx, want, 1e-5)
	}
	// Average pooling divides by the real elements under each window.
	a := pool2(2, 2, 2, 2, "SAME")
	got := run(t, "AvgPool", a, fv(ir.Shape{1, 3, 3, 1}, 1, 2, 3, 4, 5, 6, 7, 8, 9))[0]
	expectClose(t, "AvgPool SAME counts", got, []float64{3, 4.5, 7.5, 9}, 0)
}

func TestFusedBatchNorm(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, format := range []string{"NHWC", "NCHW"} {
		shape, ch := ir.Shape{3, 2, 2, 2}, 3
		if format == "NCHW" {
			shape, ch = ir.Shape{3, 2, 2, 2}, 1
		}
		C := shape[ch]
		x := randVal(r, ir.F32, shape, 4)
		scale := fv(ir.Shape{C}, 1.5, -0.5)
		offset := fv(ir.Shape{C}, 0.25, 2)
		oldMean, oldVar := fv(ir.Shape{C}, 1, 2), fv(ir.Shape{C}, 3, 4)
		a := A().S("data_format", format).F("epsilon", 0.01).F("exponential_avg_factor", 0.25).B("is_training", true)
		out := run(t, "FusedBatchNormV3", a, x, scale, offset, oldMean, oldVar)
		// Direct computation.
		n := shape.Size() / C
		mean, variance := make([]float64, C), make([]float64, C)
		for k := range shape.Size() {
			mean[eval.Unravel(k, shape)[ch]] += x.At(k) / float64(n)
		}
		for k := range shape.Size() {
			c := eval.Unravel(k, shape)[ch]
			d := x.At(k) - mean[c]
			variance[c] += d * d / float64(n)
		}
		y := make([]float64, shape.Size())
		for k := range y {
			c := eval.Unravel(k, shape)[ch]
			y[k] = (x.At(k)-mean[c])/math.Sqrt(variance[c]+0.01)*scale.At(c) + offset.At(c)
		}
		runMean, runVar := make([]float64, C), make([]float64, C)
		for c := range C {
			runMean[c] = 0.75*oldMean.At(c) + 0.25*mean[c]
			runVar[c] = 0.75*oldVar.At(c) + 0.25*variance[c]*float64(n)/float64(n-1)
		}
		expectClose(t, format+" y", out[0], y, 1e-5)
		expectClose(t, format+" running mean", out[1], runMean, 1e-6)
		expectClose(t, format+" running variance", out[2], runVar, 1e-6)
		expectClose(t, format+" saved mean", out[3], mean, 1e-6)
		expectClose(t, format+" saved variance", out[4], variance, 1e-6)
		// exponential_avg_factor 1 accepts empty mean and variance.
		a1 := A().S("data_format", format).F("epsilon", 0.01).B("is_training", true)
		out1 := run(t, "FusedBatchNormV3", a1, x, scale, offset, fv(ir.Shape{0}), fv(ir.Shape{0}))
		bessel := make([]float64, C)
		for c := range C {
			bessel[c] = variance[c] * float64(n) / float64(n-1)
		}
		expectClose(t, format+" batch variance", out1[2], bessel, 1e-6)

		// The gradient against finite differences of sum(y * dy).
		dy := randVal(r, ir.F32, shape, 3)
		g := run(t, "FusedBatchNormGradV3", a1, dy, x, scale, out1[3], out1[4], out1[5])
		loss := func(xv, sv, ov eval.Tensor) float64 {
			return dot(run(t, "FusedBatchNormV3", a1, xv, sv, ov, fv(ir.Shape{0}), fv(ir.Shape{0}))[0], dy)
		}
		const eps = 1e-2
		fd := func(v eval.Tensor, i int, f func(eval.Tensor) float64) float64 {
			p, m := v, v
			p.F, m.F = append([]float64(nil), v.F...), append([]float64(nil), v.F...)
			p.F[i] += eps
			m.F[i] -= eps
			return (f(p) - f(m)) / (2 * eps)
		}
		wx := make([]float64, shape.Size())
		for i := range wx {
			wx[i] = fd(x, i, func(v eval.Tensor) float64 { return loss(v, scale, offset) })
		}
		expectClose(t, format+" x grad", g[0], wx, 2e-2)
		ws, wo := make([]float64, C), make([]float64, C)
		for i := range C {
			ws[i] = fd(scale, i, func(v eval.Tensor) float64 { return loss(x, v, offset) })
			wo[i] = fd(offset, i, func(v eval.Tensor) float64 { return loss(x, scale, v) })
		}
		expectClose(t, format+" scale grad", g[1], ws, 2e-2)
		expectClose(t, format+" offset grad", g[2], wo, 2e-2)
		expectShape(t, format+" reserve_space_4", g[3], f32(0))

		// Inference: normalise with the given statistics.
		ai := A().S("data_format", format).F("epsilon", 0.01).B("is_training", false)
		outi := run(t, "FusedBatchNormV3", ai, x, scale, offset, oldMean, oldVar)
		for k := range y {
			c := eval.Unravel(k, shape)[ch]
			y[k] = (x.At(k)-oldMean.At(c))/math.Sqrt(oldVar.At(c)+0.01)*scale.At(c) + offset.At(c)
		}
		expectClose(t, format+" inference y", outi[0], y, 1e-5)
		expectClose(t, format+" inference mean", outi[1], oldMean.Floats(), 0)
		gi := run(t, "FusedBatchNormGradV3", ai, dy, x, scale, oldMean, oldVar, fv(nil, 0))
		lossi := func(xv, sv eval.Tensor) float64 {
			return dot(run(t, "FusedBatchNormV3", ai, xv, sv, offset, oldMean, oldVar)[0], dy)
		}
		for i := range wx {
			wx[i] = fd(x, i, func(v eval.Tensor) float64 { return lossi(v, scale) })
		}
		expectClose(t, format+" inference x grad", gi[0], wx, 2e-2)
		for i := range C {
			ws[i] = fd(scale, i, func(v eval.Tensor) float64 { return lossi(x, v) })
		}
		expectClose(t, format+" inference scale grad", gi[1], ws, 2e-2)
	}
}

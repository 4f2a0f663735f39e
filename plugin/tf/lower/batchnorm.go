package lower

import (
	"math"

	"github.com/metalplug/metalplug/backend/ir"
)

// FusedBatchNormV3 and FusedBatchNormGradV3, following the CPU functors of
// tensorflow/core/kernels/fused_batch_norm_op.cc, computed in U (float32)
// whatever T is:
//
//   - training: y normalises with the batch mean and biased variance;
//     batch_mean and batch_variance are the running statistics (the batch
//     ones, Bessel-corrected for the variance, blended with the inputs when
//     exponential_avg_factor != 1, in which case mean and variance must be
//     [C]; otherwise they may be empty); reserve_space_1 and _2 are the batch
//     mean and biased variance, which the gradient reads back.
//   - inference: y normalises with the given mean and variance, which are
//     also batch_mean and batch_variance (and the reserve spaces).
//   - reserve_space_3 is a float32 scalar; the gradient's reserve_space_4
//     and _5 are empty.
//
// NHWC and NCHW (NDHWC and NCDHW for 5-D input) are supported.

func init() {
	cons := []Constraint{{"T", Floats}, {"U", []ir.DType{ir.F32}}}
	attrs := []AttrSpec{{Name: "epsilon", Kind: AttrFloat, Optional: true}, {Name: "data_format", Kind: AttrString, Optional: true},
		{Name: "is_training", Kind: AttrBool, Optional: true}}
	fwd := append(attrs[:len(attrs):len(attrs)], AttrSpec{Name: "exponential_avg_factor", Kind: AttrFloat, Optional: true})
	register(Kernel{Op: "FusedBatchNormV3", Constraints: cons, Inputs: []string{"x", "scale", "offset", "mean", "variance"},
		Attrs: fwd, Lower: lowerFusedBatchNorm})
	register(Kernel{Op: "FusedBatchNormGradV3", Constraints: cons,
		Inputs: []string{"y_backprop", "x", "scale", "reserve_space_1", "reserve_space_2", "reserve_space_3"},
		Attrs:  attrs, Lower: lowerFusedBatchNormGrad})
	// The older forms: V2 as V3 without reserve_space_3 (in or out) and for
	// 4-D input only (their data_format has no NDHWC); the first, float32
	// alone, without U.
	fourD := func(c *Call, x int) error {
		if r := c.Type(x).Shape.Rank(); r != 4 {
			return c.Errorf("x must be 4-D, got inputs %s", c.Inputs())
		}
		return nil
	}
	v2 := func(c *Call) error {
		if err := fourD(c, 0); err != nil {
			return err
		}
		if err := lowerFusedBatchNorm(c); err != nil {
			return err
		}
		c.Out = c.Out[:5]
		return nil
	}
	v2Grad := func(c *Call) error {
		if err := fourD(c, 1); err != nil {
			return err
		}
		return fusedBatchNormGrad(c, 5)
	}
	bn := []string{"x", "scale", "offset", "mean", "variance"}
	grad := []string{"y_backprop", "x", "scale", "reserve_space_1", "reserve_space_2"}
	register(Kernel{Op: "FusedBatchNormV2", Constraints: cons, Inputs: bn, Attrs: fwd, Lower: v2})
	register(Kernel{Op: "FusedBatchNormGradV2", Constraints: cons, Inputs: grad, Attrs: attrs, Lower: v2Grad})
	register(Kernel{Op: "FusedBatchNorm", Constraints: T([]ir.DType{ir.F32}), Inputs: bn, Attrs: fwd, Lower: v2})
	register(Kernel{Op: "FusedBatchNormGrad", Constraints: T([]ir.DType{ir.F32}), Inputs: grad, Attrs: attrs,
		Lower: v2Grad})
}

// bnAxes returns the channel axis and the axes reduced over for x of rank r.
func bnAxes(c *Call, r int) (int, []int, error) {
	if r != 4 && r != 5 {
		return 0, nil, c.Errorf("x must have rank 4 or 5, got inputs %s", c.Inputs())
	}
	ch := r - 1
	switch f := c.Attrs.String("data_format", "NHWC"); f {
	case "NHWC", "NDHWC", "":
	case "NCHW", "NCDHW":
		ch = 1
	default:
		return 0, nil, c.Errorf("data_format %q is not supported; use NHWC or NCHW (inputs %s)", f, c.Inputs())
	}
	var axes []int
	for i := range r {
		if i != ch {
			axes = append(axes, i)
		}
	}
	return ch, axes, nil
}

// vecOK reports whether input i is a float32 vector of n elements.
func vecOK(c *Call, i, n int) bool {
	t := c.Type(i)
	return t.DType == ir.F32 && t.Shape.Rank() == 1 && t.Shape[0] == n
}

func lowerFusedBatchNorm(c *Call) error {
	if err := c.arity(5); err != nil {
		return err
	}
	t := c.Type(0)
	ch, axes, err := bnAxes(c, t.Shape.Rank())
	if err != nil {
		return err
	}
	C := t.Shape[ch]
	training := c.Attrs.BoolOr("is_training", true)
	factor := float64(c.Attrs.Float("exponential_avg_factor", 1))
	needStats := !training || factor != 1
	if !vecOK(c, 1, C) || !vecOK(c, 2, C) || (needStats && (!vecOK(c, 3, C) || !vecOK(c, 4, C))) {
		return c.Errorf("scale, offset (and mean, variance unless training with exponential_avg_factor 1) must be float32 [%d] for x %v (data_format %s); inputs %s",
			C, t, c.Attrs.String("data_format", "NHWC"), c.Inputs())
	}
	b := c.B
	eps := float64(c.Attrs.Float("epsilon", 0.0001))
	x := b.Convert(c.In[0], ir.F32)
	xs := t.Shape
	per := func(v ir.Value) ir.Value { return b.BroadcastInDim(v, xs, []int{ch}) }
	vec := func(v float64) ir.Value { return b.Full(ir.TensorType{DType: ir.F32, Shape: ir.Shape{C}}, v) }
	n := xs.Size() / max(C, 1)
	if C == 0 {
		n = 0
	}
	scale, offset := c.In[1], c.In[2]
	var mean, variance ir.Value
	if training {
		mean = b.Binary(ir.OpDiv, b.Reduce(x, ir.ReduceSum, axes), vec(float64(n)))
		d := b.Binary(ir.OpSub, x, per(mean))
		variance = b.Binary(ir.OpDiv, b.Reduce(b.Binary(ir.OpMul, d, d), ir.ReduceSum, axes), vec(float64(n)))
	} else {
		mean, variance = c.In[3], c.In[4]
	}
	inv := b.Unary(ir.OpRsqrt, b.Binary(ir.OpAdd, variance, vec(eps)))
	y := b.Binary(ir.OpMul, b.Binary(ir.OpSub, x, per(mean)), per(b.Binary(ir.OpMul, inv, scale)))
	y = b.Convert(b.Binary(ir.OpAdd, y, per(offset)), t.DType)
	runMean, runVar := mean, variance
	if training {
		adjust := float64(n) / float64(max(n-1, 1)) // Bessel's correction
		runVar = b.Binary(ir.OpMul, variance, vec(adjust))
		if factor != 1 {
			runMean = b.Binary(ir.OpAdd, b.Binary(ir.OpMul, c.In[3], vec(1-factor)), b.Binary(ir.OpMul, mean, vec(factor)))
			runVar = b.Binary(ir.OpAdd, b.Binary(ir.OpMul, c.In[4], vec(1-factor)), b.Binary(ir.OpMul, variance, vec(factor*adjust)))
		}
	} else if n == 0 {
		// An empty x gives NaN statistics, in inference too.
		runMean, runVar = vec(math.NaN()), vec(math.NaN())
	}
	reserve := b.Scalar(ir.F32, 0)
	c.Out = []ir.Value{y, runMean, runVar, mean, variance, reserve}
	return nil
}

// lowerFusedBatchNormGrad is V3's gradient, whose reserve_space_3 it does
// not read.
func lowerFusedBatchNormGrad(c *Call) error { return fusedBatchNormGrad(c, 6) }

// fusedBatchNormGrad takes 6 inputs (V3) or 5 (V2 and the first).
func fusedBatchNormGrad(c *Call, inputs int) error {
	if err := c.arity(inputs); err != nil {
		return err
	}
	tdy, t := c.Type(0), c.Type(1)
	if tdy.DType != t.DType || !tdy.Shape.Equal(t.Shape) {
		return c.Errorf("y_backprop %v and x %v must have one shape and dtype", tdy, t)
	}
	ch, axes, err := bnAxes(c, t.Shape.Rank())
	if err != nil {
		return err
	}
	C := t.Shape[ch]
	if !vecOK(c, 2, C) || !vecOK(c, 3, C) || !vecOK(c, 4, C) {
		return c.Errorf("scale, reserve_space_1 and reserve_space_2 must be float32 [%d] for x %v; inputs %s", C, t, c.Inputs())
	}
	b := c.B
	eps := float64(c.Attrs.Float("epsilon", 0.0001))
	xs := t.Shape
	per := func(v ir.Value) ir.Value { return b.BroadcastInDim(v, xs, []int{ch}) }
	vec := func(v float64) ir.Value { return b.Full(ir.TensorType{DType: ir.F32, Shape: ir.Shape{C}}, v) }
	n := 0
	if C > 0 {
		n = xs.Size() / C
	}
	dy := b.Convert(c.In[0], ir.F32)
	x := b.Convert(c.In[1], ir.F32)
	scale, mean, variance := c.In[2], c.In[3], c.In[4]
	inv := b.Unary(ir.OpRsqrt, b.Binary(ir.OpAdd, variance, vec(eps)))
	xc := b.Binary(ir.OpSub, x, per(mean))
	sumDy := b.Reduce(dy, ir.ReduceSum, axes)
	sumDyXc := b.Reduce(b.Binary(ir.OpMul, dy, xc), ir.ReduceSum, axes)
	dScale := b.Binary(ir.OpMul, sumDyXc, inv)
	coef1 := per(b.Binary(ir.OpMul, scale, inv))
	var dx ir.Value
	if c.Attrs.BoolOr("is_training", true) {
		// dx = scale*inv * (dy - mean(dy) - xc * inv^2 * mean(dy*xc))
		nv := vec(float64(n))
		meanDy := b.Binary(ir.OpDiv, sumDy, nv)
		coef2 := b.Binary(ir.OpMul, b.Binary(ir.OpMul, inv, inv), b.Binary(ir.OpDiv, sumDyXc, nv))
		dx = b.Binary(ir.OpMul, coef1, b.Binary(ir.OpSub, b.Binary(ir.OpSub, dy, per(meanDy)), b.Binary(ir.OpMul, xc, per(coef2))))
	} else {
		dx = b.Binary(ir.OpMul, dy, coef1)
	}
	empty := b.Full(ir.TensorType{DType: ir.F32, Shape: ir.Shape{0}}, 0)
	c.Out = []ir.Value{b.Convert(dx, t.DType), dScale, sumDy, empty, empty}
	return nil
}

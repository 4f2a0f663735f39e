package lower

import (
	"math"

	"github.com/metalplug/metalplug/backend/ir"
)

// Activations and their gradients (relu_op_functor.h, softplus_op.h,
// softsign_op.h, cwise_ops_gradients.h), Softmax and LogSoftmax
// (softmax_op_functor.h), the cross-entropy losses (xent_op.cc,
// sparse_xent_op.h), BiasAdd and BiasAddGrad (bias_op.cc), LRN and LRNGrad
// (lrn_op.cc).
//
// Gradient input conventions: ReluGrad, Relu6Grad, LeakyReluGrad,
// SoftplusGrad and SoftsignGrad take (gradients, features), the forward
// input; EluGrad and SeluGrad take (gradients, outputs), the forward output;
// SigmoidGrad, TanhGrad, RsqrtGrad, SqrtGrad, ReciprocalGrad and InvGrad take
// (y, dy) with y the forward output.

// Selu's constants, from relu_op_functor.h.
const (
	seluScale      = 1.0507009873554804934193349852946
	seluScaleAlpha = 1.7580993408473768599402175208123
)

func init() {
	act := func(name string, attrs []AttrSpec, f func(c *Call, x ir.Value) ir.Value) {
		register(Kernel{Op: name, Constraints: T(Floats), Inputs: []string{"features"}, Attrs: attrs, Lower: lowerUnary(f)})
	}
	grad := func(name string, inputs []string, attrs []AttrSpec, f func(c *Call, g, x ir.Value) ir.Value) {
		register(Kernel{Op: name, Constraints: T(Floats), Inputs: inputs, Attrs: attrs, Lower: sameShapeBinary(f)})
	}
	fx := []string{"gradients", "features"}
	out := []string{"gradients", "outputs"}
	alpha := []AttrSpec{{Name: "alpha", Kind: AttrFloat, Optional: true}}

	act("Relu", nil, relu)
	act("Relu6", nil, relu6)
	act("Elu", nil, elu)
	act("Selu", nil, func(c *Call, x ir.Value) ir.Value {
		neg := c.B.Binary(ir.OpMul, like(c.B, x, seluScaleAlpha), c.B.Unary(ir.OpExpm1, x))
		return c.B.Select(lessThan(c, x, 0), neg, c.B.Binary(ir.OpMul, like(c.B, x, seluScale), x))
	})
	act("LeakyRelu", alpha, leakyRelu("alpha"))
	act("Softplus", nil, softplus)
	act("Softsign", nil, func(c *Call, x ir.Value) ir.Value {
		return c.B.Binary(ir.OpDiv, x, c.B.Binary(ir.OpAdd, like(c.B, x, 1), c.B.Unary(ir.OpAbs, x)))
	})

	// ReluGrad and Relu6Grad multiply by the mask, as relu_op_functor.h
	// does, so a NaN gradient stays NaN where the mask is 0.
	grad("ReluGrad", fx, nil, func(c *Call, g, x ir.Value) ir.Value {
		return c.B.Binary(ir.OpMul, g, c.B.Convert(c.B.Compare(ir.CmpGT, x, like(c.B, x, 0)), c.B.Type(g).DType))
	})
	grad("Relu6Grad", fx, nil, func(c *Call, g, x ir.Value) ir.Value {
		in := c.B.Binary(ir.OpAnd, c.B.Compare(ir.CmpGT, x, like(c.B, x, 0)), lessThan(c, x, 6))
		return c.B.Binary(ir.OpMul, g, c.B.Convert(in, c.B.Type(g).DType))
	})
	grad("EluGrad", out, nil, func(c *Call, g, y ir.Value) ir.Value {
		return c.B.Select(lessThan(c, y, 0), c.B.Binary(ir.OpMul, g, c.B.Binary(ir.OpAdd, y, like(c.B, y, 1))), g)
	})
	grad("SeluGrad", out, nil, func(c *Call, g, y ir.Value) ir.Value {
		neg := c.B.Binary(ir.OpMul, g, c.B.Binary(ir.OpAdd, y, like(c.B, y, seluScaleAlpha)))
		return c.B.Select(lessThan(c, y, 0), neg, c.B.Binary(ir.OpMul, g, like(c.B, g, seluScale)))
	})
	grad("LeakyReluGrad", fx, alpha, func(c *Call, g, x ir.Value) ir.Value {
		a := like(c.B, g, float64(c.Attrs.Float("alpha", 0.2)))
		return c.B.Select(c.B.Compare(ir.CmpGT, x, like(c.B, x, 0)), g, c.B.Binary(ir.OpMul, g, a))
	})
	// SoftplusGrad is g / (1 + exp(-x)).
	grad("SoftplusGrad", fx, nil, func(c *Call, g, x ir.Value) ir.Value {
		return c.B.Binary(ir.OpDiv, g, c.B.Binary(ir.OpAdd, c.B.Unary(ir.OpExp, c.B.Unary(ir.OpNeg, x)), like(c.B, x, 1)))
	})
	// SoftsignGrad is g / (1 + |x|)^2.
	grad("SoftsignGrad", fx, nil, func(c *Call, g, x ir.Value) ir.Value {
		d := c.B.Binary(ir.OpAdd, like(c.B, x, 1), c.B.Unary(ir.OpAbs, x))
		return c.B.Binary(ir.OpDiv, g, c.B.Binary(ir.OpMul, d, d))
	})
	// SigmoidGrad(y, dy) = dy * y * (1 - y); TanhGrad(y, dy) = dy * (1 - y*y).
	grad("SigmoidGrad", []string{"y", "dy"}, nil, func(c *Call, y, dy ir.Value) ir.Value {
		return c.B.Binary(ir.OpMul, dy, c.B.Binary(ir.OpMul, y, c.B.Binary(ir.OpSub, like(c.B, y, 1), y)))
	})
	grad("TanhGrad", []string{"y", "dy"}, nil, func(c *Call, y, dy ir.Value) ir.Value {
		return c.B.Binary(ir.OpMul, dy, c.B.Binary(ir.OpSub, like(c.B, y, 1), c.B.Binary(ir.OpMul, y, y)))
	})

	// The gradients of Rsqrt, Sqrt and Reciprocal are 0 where dy is 0 (even
	// where y is 0, inf or NaN) and otherwise computed in the order of
	// cwise_ops_gradients.h's rsqrt_grad, sqrt_grad and inverse_grad, so
	// each step rounds as TensorFlow's does (checked against its CPU in
	// float16): (-0.5 * (dy*y)) * (y*y), dy * (0.5/y) and (-y * y) * dy.
	yGrad := func(name string, f func(c *Call, y, dy ir.Value) ir.Value) {
		grad(name, []string{"y", "dy"}, nil, func(c *Call, y, dy ir.Value) ir.Value { return zeroWhere(c, dy, dy, f(c, y, dy)) })
	}
	yGrad("RsqrtGrad", func(c *Call, y, dy ir.Value) ir.Value {
		b := c.B
		return b.Binary(ir.OpMul, b.Binary(ir.OpMul, like(b, y, -0.5), b.Binary(ir.OpMul, dy, y)), b.Binary(ir.OpMul, y, y))
	})
	yGrad("SqrtGrad", func(c *Call, y, dy ir.Value) ir.Value {
		return c.B.Binary(ir.OpMul, dy, c.B.Binary(ir.OpDiv, like(c.B, y, 0.5), y))
	})
	inverseGrad := func(c *Call, y, dy ir.Value) ir.Value {
		return c.B.Binary(ir.OpMul, c.B.Binary(ir.OpMul, c.B.Unary(ir.OpNeg, y), y), dy)
	}
	yGrad("ReciprocalGrad", inverseGrad)
	yGrad("InvGrad", inverseGrad)

	register(Kernel{Op: "Softmax", Constraints: T(Floats), Inputs: []string{"logits"}, Lower: lowerSoftmax(false)})
	register(Kernel{Op: "LogSoftmax", Constraints: T(Floats), Inputs: []string{"logits"}, Lower: lowerSoftmax(true)})
	register(Kernel{Op: "SoftmaxCrossEntropyWithLogits", Constraints: T(Floats), Inputs: []string{"features", "labels"}, Lower: lowerXent})
	register(Kernel{Op: "SparseSoftmaxCrossEntropyWithLogits", Constraints: []Constraint{{"T", Floats}, {"Tlabels", Indices}},
		Inputs: []string{"features", "labels"}, Lower: lowerSparseXent})

	lrn := []AttrSpec{{Name: "depth_radius", Kind: AttrInt, Optional: true}, {Name: "bias", Kind: AttrFloat, Optional: true},
		{Name: "alpha", Kind: AttrFloat, Optional: true}, {Name: "beta", Kind: AttrFloat, Optional: true}}
	// LRN and LRNGrad's GPU kernels are float32 (lrn_op.cc).
	register(Kernel{Op: "LRN", Constraints: T([]ir.DType{ir.F32}), Inputs: []string{"input"}, Attrs: lrn, Lower: lowerLRN})
	register(Kernel{Op: "LRNGrad", Constraints: T([]ir.DType{ir.F32}), Inputs: []string{"input_grads", "input_image", "output_image"},
		Attrs: lrn, Lower: lowerLRNGrad})
	format := []AttrSpec{{Name: "data_format", Kind: AttrString, Optional: true}}
	register(Kernel{Op: "BiasAdd", Constraints: T(Floats), Inputs: []string{"value", "bias"}, Attrs: format, Lower: lowerBiasAdd})
	// BiasAddV1 is BiasAdd without data_format: channels last.
	register(Kernel{Op: "BiasAddV1", Constraints: T(Floats), Inputs: []string{"value", "bias"}, Lower: lowerBiasAdd})
	register(Kernel{Op: "BiasAddGrad", Constraints: T(Floats), Inputs: []string{"out_backprop"}, Attrs: format, Lower: lowerBiasAddGrad})
}

// The activations that _FusedConv2D and _FusedMatMul share with the
// standalone ops (Sigmoid and Tanh are in math.go).

func relu(c *Call, x ir.Value) ir.Value { return c.B.Binary(ir.OpMax, x, like(c.B, x, 0)) }

func relu6(c *Call, x ir.Value) ir.Value {
	return c.B.Binary(ir.OpMin, c.B.Binary(ir.OpMax, x, like(c.B, x, 0)), like(c.B, x, 6))
}

func elu(c *Call, x ir.Value) ir.Value {
	return c.B.Select(lessThan(c, x, 0), c.B.Unary(ir.OpExpm1, x), x)
}

// leakyRelu is x where x > 0, else alpha*x, with alpha the float attribute
// attr (LeakyRelu's alpha, the fused ops' leakyrelu_alpha), 0.2 by default.
func leakyRelu(attr string) func(c *Call, x ir.Value) ir.Value {
	return func(c *Call, x ir.Value) ir.Value {
		a := like(c.B, x, float64(c.Attrs.Float(attr, 0.2)))
		return c.B.Select(c.B.Compare(ir.CmpGT, x, like(c.B, x, 0)), x, c.B.Binary(ir.OpMul, x, a))
	}
}

func lessThan(c *Call, x ir.Value, v float64) ir.Value {
	return c.B.Compare(ir.CmpLT, x, like(c.B, x, v))
}

// sameShapeBinary lowers a gradient op whose two inputs share one type.
func sameShapeBinary(f func(c *Call, a, b ir.Value) ir.Value) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(2); err != nil {
			return err
		}
		ta, tb := c.Type(0), c.Type(1)
		if ta.DType != tb.DType || !ta.Shape.Equal(tb.Shape) {
			return c.Errorf("inputs must have one shape and dtype, got %v and %v", ta, tb)
		}
		c.Out = []ir.Value{f(c, c.In[0], c.In[1])}
		return nil
	}
}

// softplus follows softplus_op.h: x above -threshold, exp(x) below threshold,
// log(exp(x)+1) between, with threshold = log(epsilon) + 2 of the dtype.
func softplus(c *Call, x ir.Value) ir.Value {
	eps := 1.1920928955078125e-07 // float32
	switch c.B.Type(x).DType {
	case ir.F16:
		eps = 0.0009765625
	case ir.BF16:
		eps = 0.0078125
	}
	th := math.Log(eps) + 2
	b := c.B
	e := b.Unary(ir.OpExp, x)
	mid := b.Unary(ir.OpLog, b.Binary(ir.OpAdd, e, like(b, x, 1)))
	small := b.Select(lessThan(c, x, th), e, mid)
	return b.Select(b.Compare(ir.CmpGT, x, like(b, x, -th)), x, small)
}

// lastAxis computes over the last dim of logits, in float32 for the 16-bit
// floats: it returns the converted logits, shape, and the dims to broadcast a
// per-row value back.
func lastAxis(b *ir.Builder, x ir.Value) (ir.Value, ir.Shape, []int) {
	t := b.Type(x)
	r := t.Shape.Rank()
	return b.Convert(x, accType(t.DType)), t.Shape, seq(r - 1)
}

// logSoftmaxParts returns shifted = x - max(x) and log(sum(exp(shifted)))
// (per row) over the last axis.
func logSoftmaxParts(b *ir.Builder, x ir.Value) (shifted, lse ir.Value, shape ir.Shape, rows []int) {
	x, shape, rows = lastAxis(b, x)
	r := shape.Rank()
	m := b.Reduce(x, ir.ReduceMax, []int{r - 1})
	shifted = b.Binary(ir.OpSub, x, b.BroadcastInDim(m, shape, rows))
	lse = b.Unary(ir.OpLog, b.Reduce(b.Unary(ir.OpExp, shifted), ir.ReduceSum, []int{r - 1}))
	return shifted, lse, shape, rows
}

// lowerSoftmax is exp(x - max) / sum(exp(x - max)) over the last axis, or
// for LogSoftmax (x - max) - log(sum(exp(x - max))).
func lowerSoftmax(log bool) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(1); err != nil {
			return err
		}
		t := c.Type(0)
		if t.Shape.Rank() < 1 {
			return c.Errorf("logits must have rank at least 1, got %v", t)
		}
		b := c.B
		shifted, lse, shape, rows := logSoftmaxParts(b, c.In[0])
		y := b.Binary(ir.OpSub, shifted, b.BroadcastInDim(lse, shape, rows))
		if !log {
			y = b.Unary(ir.OpExp, y)
		}
		c.Out = []ir.Value{b.Convert(y, t.DType)}
		return nil
	}
}

// lowerXent: features and labels broadcast to [batch, classes]; the loss is
// sum(labels * (lse - shifted)) per row and the backprop softmax - labels.
func lowerXent(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	tf, tl := c.Type(0), c.Type(1)
	s, ok := ir.BroadcastShapes(tf.Shape, tl.Shape)
	if !ok || s.Rank() != 2 || tf.DType != tl.DType {
		return c.Errorf("features %v and labels %v must be, or broadcast to, matrices of one dtype", tf, tl)
	}
	b := c.B
	x := b.BroadcastInDim(c.In[0], s, nil)
	shifted, lse, _, rows := logSoftmaxParts(b, x)
	labels := b.Convert(b.BroadcastInDim(c.In[1], s, nil), accType(tf.DType))
	logp := b.Binary(ir.OpSub, shifted, b.BroadcastInDim(lse, s, rows))
	loss := b.Reduce(b.Binary(ir.OpMul, labels, b.Unary(ir.OpNeg, logp)), ir.ReduceSum, []int{1})
	back := b.Binary(ir.OpSub, b.Unary(ir.OpExp, logp), labels)
	c.Out = []ir.Value{b.Convert(loss, tf.DType), b.Convert(back, tf.DType)}
	return nil
}

// lowerSparseXent: labels index the classes; a label outside [0, classes)
// gives NaN loss and backprop for its row, as TensorFlow's GPU kernel does
// (its CPU kernel raises instead).
func lowerSparseXent(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	tf, tl := c.Type(0), c.Type(1)
	if tf.Shape.Rank() != 2 || tl.Shape.Rank() != 1 || tl.Shape[0] != tf.Shape[0] || (tl.DType != ir.I32 && tl.DType != ir.I64) {
		return c.Errorf("features %v must be [batch, classes] and labels %v an int32 or int64 [batch]", tf, tl)
	}
	b := c.B
	s := tf.Shape
	shifted, lse, _, rows := logSoftmaxParts(b, c.In[0])
	acc := b.Type(shifted).DType
	logp := b.Binary(ir.OpSub, shifted, b.BroadcastInDim(lse, s, rows))
	lab := c.In[1]
	classes := b.Iota(ir.TensorType{DType: tl.DType, Shape: s}, 1)
	onehot := b.Compare(ir.CmpEQ, classes, b.BroadcastInDim(lab, s, []int{0}))
	zero := b.Full(ir.TensorType{DType: acc, Shape: s}, 0)
	loss := b.Unary(ir.OpNeg, b.Reduce(b.Select(onehot, logp, zero), ir.ReduceSum, []int{1}))
	back := b.Binary(ir.OpSub, b.Unary(ir.OpExp, logp), b.Convert(onehot, acc))
	valid := b.Binary(ir.OpAnd, b.Compare(ir.CmpGE, lab, like(b, lab, 0)), b.Compare(ir.CmpLT, lab, like(b, lab, float64(s[1]))))
	loss = b.Select(valid, loss, b.Full(b.Type(loss), math.NaN()))
	back = b.Select(b.BroadcastInDim(valid, s, []int{0}), back, b.Full(b.Type(back), math.NaN()))
	c.Out = []ir.Value{b.Convert(loss, tf.DType), b.Convert(back, tf.DType)}
	return nil
}

// biasAxis is the channel axis: the last, or 1 for channels-first formats
// (NCHW, NCDHW), whatever the rank (bias_op.cc).
func biasAxis(c *Call, rank int) (int, error) {
	switch f := c.Attrs.String("data_format", "NHWC"); f {
	case "NHWC", "NDHWC", "":
		return rank - 1, nil
	case "NCHW", "NCDHW":
		return 1, nil
	default:
		return 0, c.Errorf("data_format %q is not supported; use NHWC or NCHW (inputs %s)", f, c.Inputs())
	}
}

func lowerBiasAdd(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	y, err := biasAdd(c, c.In[0], c.In[1])
	if err != nil {
		return err
	}
	c.Out = []ir.Value{y}
	return nil
}

// biasAdd adds the vector bias along x's channel axis, which the node's
// data_format decides: BiasAdd, and the fused ops' BiasAdd.
func biasAdd(c *Call, x, bias ir.Value) (ir.Value, error) {
	tx, tb := c.B.Type(x), c.B.Type(bias)
	axis, err := biasAxis(c, tx.Shape.Rank())
	if err != nil {
		return 0, err
	}
	if tx.Shape.Rank() < 2 || tb.Shape.Rank() != 1 || tx.Shape[axis] != tb.Shape[0] || tx.DType != tb.DType {
		return 0, c.Errorf("bias %v does not match the channel dimension of %v (data_format %s)", tb, tx, c.Attrs.String("data_format", "NHWC"))
	}
	return c.B.Binary(ir.OpAdd, x, c.B.BroadcastInDim(bias, tx.Shape, []int{axis})), nil
}

// lowerBiasAddGrad sums out_backprop over every axis but the channel axis.
func lowerBiasAddGrad(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	t := c.Type(0)
	if t.Shape.Rank() < 2 {
		return c.Errorf("out_backprop must have rank at least 2, got %v", t)
	}
	axis, err := biasAxis(c, t.Shape.Rank())
	if err != nil {
		return err
	}
	var axes []int
	for i := range t.Shape.Rank() {
		if i != axis {
			axes = append(axes, i)
		}
	}
	b := c.B
	c.Out = []ir.Value{b.Convert(b.Reduce(b.Convert(c.In[0], accType(t.DType)), ir.ReduceSum, axes), t.DType)}
	return nil
}

// lrnSpec checks for n inputs, the first 4-D, and reads LRN's attributes.
func lrnSpec(c *Call, n int) (r int, bias, alpha, beta float64, err error) {
	if err := c.arity(n); err != nil {
		return 0, 0, 0, 0, err
	}
	t := c.Type(0)
	r = int(c.Attrs.Int("depth_radius", 5))
	bias, alpha, beta = float64(c.Attrs.Float("bias", 1)), float64(c.Attrs.Float("alpha", 1)), float64(c.Attrs.Float("beta", 0.5))
	if t.Shape.Rank() != 4 || r < 0 {
		return 0, 0, 0, 0, c.Errorf("input must be 4-D and depth_radius %d non-negative (inputs %s)", r, c.Inputs())
	}
	return r, bias, alpha, beta, nil
}

// depthWindowSum sums x over depth_radius channels either side of each
// channel (the last dim), as far as they exist.
func depthWindowSum(b *ir.Builder, x ir.Value, r int) ir.Value {
	w := ir.WindowAttrs{Dims: []int{1, 1, 1, 2*r + 1}, Padding: [][2]int{{0, 0}, {0, 0}, {0, 0}, {r, r}}}
	return b.ReduceWindow(x, ir.ReduceSum, w)
}

// lrnNorm is bias + alpha * (the window's sum of x^2).
func lrnNorm(b *ir.Builder, x ir.Value, r int, bias, alpha float64) ir.Value {
	s := depthWindowSum(b, b.Binary(ir.OpMul, x, x), r)
	return b.Binary(ir.OpAdd, like(b, s, bias), b.Binary(ir.OpMul, like(b, s, alpha), s))
}

// lowerLRN is x / norm^beta, with 1/norm and rsqrt(norm) for beta 1 and
// 0.5, and exp(-beta log norm) otherwise, as lrn_op.cc's CPU kernel.
func lowerLRN(c *Call) error {
	r, bias, alpha, beta, err := lrnSpec(c, 1)
	if err != nil {
		return err
	}
	b := c.B
	x := c.In[0]
	n := lrnNorm(b, x, r, bias, alpha)
	var m ir.Value
	switch beta {
	case 1:
		m = b.Binary(ir.OpDiv, like(b, n, 1), n)
	case 0.5:
		m = b.Unary(ir.OpRsqrt, n)
	default:
		m = b.Unary(ir.OpExp, b.Binary(ir.OpMul, b.Unary(ir.OpLog, n), like(b, n, -beta)))
	}
	c.Out = []ir.Value{b.Binary(ir.OpMul, x, m)}
	return nil
}

// lowerLRNGrad is dy * norm^-beta - 2 alpha beta x * S, where S sums
// dy * y / norm over each channel's window (LaunchLRNGrad, the window being
// symmetric).
func lowerLRNGrad(c *Call) error {
	r, bias, alpha, beta, err := lrnSpec(c, 3)
	if err != nil {
		return err
	}
	t := c.Type(0)
	for i := 1; i < 3; i++ {
		if c.Type(i).DType != t.DType || !c.Type(i).Shape.Equal(t.Shape) {
			return c.Errorf("input_grads, input_image and output_image must have one shape and dtype: %s", c.Inputs())
		}
	}
	b := c.B
	dy, x, y := c.In[0], c.In[1], c.In[2]
	n := lrnNorm(b, x, r, bias, alpha)
	s := depthWindowSum(b, b.Binary(ir.OpDiv, b.Binary(ir.OpMul, dy, y), n), r)
	self := b.Binary(ir.OpMul, dy, b.Binary(ir.OpPow, n, like(b, n, -beta)))
	cross := b.Binary(ir.OpMul, b.Binary(ir.OpMul, like(b, x, 2*alpha*beta), x), s)
	c.Out = []ir.Value{b.Binary(ir.OpSub, self, cross)}
	return nil
}

package lower

import (
	"math"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/compose"
)

// Elementwise math: unary and numpy-broadcasting binary ops, AddN and
// ClipByValue. Dtypes follow TensorFlow's GPU registrations in
// tensorflow/core/kernels/cwise_op_*.cc (int32 there is a HostMemory kernel
// that runs on the CPU; here it runs on the device).

func init() {
	bin := func(name string, types []ir.DType, f func(c *Call, x, y ir.Value) ir.Value) {
		register(Kernel{Op: name, Constraints: T(types), Inputs: []string{"x", "y"}, Lower: lowerBinary(f)})
	}
	op := func(o ir.Op) func(c *Call, x, y ir.Value) ir.Value {
		return func(c *Call, x, y ir.Value) ir.Value { return binaryOp(c.B, o, x, y) }
	}
	// complex64 where TensorFlow's GPU has it (cwise_op_*.cc), composed
	// of the parts by backend/ir/compose, as jax's complex arithmetic is.
	bin("AddV2", withComplex(Numeric), op(ir.OpAdd))
	// Add is AddV2's older form, for graphs that still hold it.
	bin("Add", withComplex(Numeric), op(ir.OpAdd))
	bin("Sub", withComplex(FloatsInts), op(ir.OpSub))
	bin("Mul", withComplex(Numeric), op(ir.OpMul))
	// Div truncates integers toward zero (C's /), as TensorFlow's functor::div.
	bin("Div", withComplex(Numeric), op(ir.OpDiv))
	bin("RealDiv", withComplex(Floats), op(ir.OpDiv))
	bin("Maximum", Numeric, op(ir.OpMax))
	bin("Minimum", Numeric, op(ir.OpMin))
	// Pow's GPU kernels are float and int64 (cwise_op_pow.cc); an integer
	// to a negative power is the driver's to define.
	bin("Pow", []ir.DType{ir.F32, ir.F16, ir.BF16, ir.I64}, op(ir.OpPow))
	bin("DivNoNan", withComplex(Floats), divNoNan)
	bin("SquaredDifference", FloatsInts, func(c *Call, x, y ir.Value) ir.Value {
		d := c.B.Binary(ir.OpSub, x, y)
		return c.B.Binary(ir.OpMul, d, d)
	})
	// Xlogy, Xdivy and MulNoNan are 0 where x (for MulNoNan, y) is 0, even
	// where the other operand is inf or NaN (cwise_ops.h, xlogy_op,
	// xdivy_op, mul_no_nan_op).
	bin("Xlogy", withComplex(Floats), func(c *Call, x, y ir.Value) ir.Value {
		return zeroWhere(c, x, x, binaryOp(c.B, ir.OpMul, x, unaryOp(c.B, ir.OpLog, y)))
	})
	bin("Xdivy", withComplex(Floats), func(c *Call, x, y ir.Value) ir.Value {
		return zeroWhere(c, x, x, binaryOp(c.B, ir.OpDiv, x, y))
	})
	bin("MulNoNan", withComplex(Floats), func(c *Call, x, y ir.Value) ir.Value {
		return zeroWhere(c, y, x, binaryOp(c.B, ir.OpMul, x, y))
	})
	bin("FloorDiv", Numeric, floorDiv)
	bin("FloorMod", FloatsInts, floorMod)
	// Xlog1py is x*log1p(y), 0 where x is 0 (cwise_ops.h, xlog1py_op);
	// its GPU kernels are float and half (cwise_op_xlog1py.cc).
	bin("Xlog1py", []ir.DType{ir.F32, ir.F16}, func(c *Call, x, y ir.Value) ir.Value {
		return zeroWhere(c, x, x, c.B.Binary(ir.OpMul, x, c.B.Unary(ir.OpLog1p, y)))
	})
	// TruncateDiv and TruncateMod are C's / and %: truncating integer
	// division and its remainder. TruncateDiv's GPU kernels are uint8 and
	// int64 (cwise_op_div.cc), TruncateMod's and Mod's int32 on the host
	// (cwise_op_mod.cc); int32 runs on the device here.
	bin("TruncateDiv", []ir.DType{ir.I32, ir.I64, ir.U8}, op(ir.OpDiv))
	bin("TruncateMod", []ir.DType{ir.I32}, op(ir.OpRem))
	bin("Mod", []ir.DType{ir.I32}, op(ir.OpRem))

	un := func(name string, types []ir.DType, f func(c *Call, x ir.Value) ir.Value) {
		register(Kernel{Op: name, Constraints: T(types), Inputs: []string{"x"}, Lower: lowerUnary(f)})
	}
	uop := func(o ir.Op) func(c *Call, x ir.Value) ir.Value {
		return func(c *Call, x ir.Value) ir.Value { return unaryOp(c.B, o, x) }
	}
	un("Neg", withComplex(FloatsInts), uop(ir.OpNeg))
	un("Abs", FloatsInts, uop(ir.OpAbs))
	un("Sign", withComplex(FloatsInts), uop(ir.OpSign))
	un("Square", FloatsInts, func(c *Call, x ir.Value) ir.Value { return c.B.Binary(ir.OpMul, x, x) })
	un("Sqrt", Floats, uop(ir.OpSqrt))
	un("Rsqrt", Floats, uop(ir.OpRsqrt))
	un("Exp", withComplex(Floats), uop(ir.OpExp))
	un("Log", Floats, uop(ir.OpLog))
	un("Log1p", Floats, uop(ir.OpLog1p))
	un("Expm1", Floats, uop(ir.OpExpm1))
	un("Floor", Floats, uop(ir.OpFloor))
	un("Ceil", Floats, uop(ir.OpCeil))
	un("Erf", Floats, uop(ir.OpErf))
	un("Sin", withComplex(Floats), uop(ir.OpSin))
	un("Cos", withComplex(Floats), uop(ir.OpCos))
	un("Sigmoid", Floats, sigmoid)
	un("Tanh", Floats, tanh)
	reciprocal := func(c *Call, x ir.Value) ir.Value {
		if t := c.B.Type(x); t.DType == ir.C64 {
			one := c.B.Full(ir.TensorType{DType: ir.F32, Shape: t.Shape}, 1) // 1 + 0i
			v, _ := compose.ComplexBinary(c.B, ir.OpDiv, one, x)             // composes every division
			return v
		}
		return c.B.Binary(ir.OpDiv, like(c.B, x, 1), x)
	}
	un("Reciprocal", withComplex(Floats), reciprocal)
	un("Inv", withComplex(Floats), reciprocal)
	// Sinh, Cosh and Tan are compositions; the 16-bit floats compute them
	// in float32 and round once, as Eigen's half and bfloat16 functions do.
	un("Sinh", withComplex(Floats), complexOr(compose.ComplexSinh, inFloat32(sinh)))
	un("Cosh", withComplex(Floats), complexOr(compose.ComplexCosh, inFloat32(cosh)))
	un("Tan", withComplex(Floats), complexOr(compose.ComplexTan, func(c *Call, x ir.Value) ir.Value { return compose.Tan(c.B, x) }))
	// Round is half to even (tensorflow/core/kernels/cwise_ops.h, round);
	// integers are already round.
	// Rint is round half to even, like Round; its GPU kernel is float
	// (cwise_op_rint.cc).
	un("Rint", []ir.DType{ir.F32}, uop(ir.OpRound))
	un("Round", FloatsInts, func(c *Call, x ir.Value) ir.Value {
		if c.B.Type(x).DType.IsInt() {
			return x
		}
		return c.B.Unary(ir.OpRound, x)
	})
	// The predicates compare against +inf rather than x-x, so a driver's
	// fast-math cannot fold them away: NaN compares false either way.
	un("IsNan", Floats, func(c *Call, x ir.Value) ir.Value { return c.B.Compare(ir.CmpNE, x, x) })
	un("IsInf", Floats, func(c *Call, x ir.Value) ir.Value {
		return c.B.Compare(ir.CmpEQ, c.B.Unary(ir.OpAbs, x), like(c.B, x, math.Inf(1)))
	})
	un("IsFinite", Floats, func(c *Call, x ir.Value) ir.Value {
		return c.B.Compare(ir.CmpLT, c.B.Unary(ir.OpAbs, x), like(c.B, x, math.Inf(1)))
	})

	register(Kernel{Op: "ApproximateEqual", Constraints: T([]ir.DType{ir.F32}), Inputs: []string{"x", "y"},
		Attrs: []AttrSpec{{Name: "tolerance", Kind: AttrFloat, Optional: true}}, Lower: lowerApproximateEqual})
	// Cross's GPU kernels are every real type (cross_op.cc).
	register(Kernel{Op: "Cross", Constraints: T(Numeric), Inputs: []string{"a", "b"}, Lower: lowerCross})
	register(Kernel{Op: "AddN", Constraints: T(withComplex(FloatsInts)), Inputs: []string{"inputs"}, Lower: lowerAddN})
	register(Kernel{Op: "ClipByValue", Constraints: T(FloatsInts), Inputs: []string{"t", "clip_value_min", "clip_value_max"}, Lower: lowerClipByValue})
}

// sigmoid and tanh are also activations of the fused ops (fused.go).
func sigmoid(c *Call, x ir.Value) ir.Value { return c.B.Unary(ir.OpLogistic, x) }
func tanh(c *Call, x ir.Value) ir.Value    { return c.B.Unary(ir.OpTanh, x) }

// lowerUnary lowers a one-input op.
func lowerUnary(f func(c *Call, x ir.Value) ir.Value) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(1); err != nil {
			return err
		}
		c.Out = []ir.Value{f(c, c.In[0])}
		return nil
	}
}

// lowerBinary lowers a numpy-broadcasting binary op.
func lowerBinary(f func(c *Call, x, y ir.Value) ir.Value) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(2); err != nil {
			return err
		}
		if err := c.sameDType(0, 1); err != nil {
			return err
		}
		x, y, err := broadcastPair(c, c.In[0], c.In[1])
		if err != nil {
			return err
		}
		c.Out = []ir.Value{f(c, x, y)}
		return nil
	}
}

// broadcastPair expands x and y to their numpy broadcast shape.
func broadcastPair(c *Call, x, y ir.Value) (ir.Value, ir.Value, error) {
	tx, ty := c.B.Type(x), c.B.Type(y)
	shape, ok := ir.BroadcastShapes(tx.Shape, ty.Shape)
	if !ok {
		return 0, 0, c.Errorf("incompatible shapes: %v and %v (%v and %v)", tx.Shape, ty.Shape, tx.DType, ty.DType)
	}
	return c.B.BroadcastInDim(x, shape, nil), c.B.BroadcastInDim(y, shape, nil), nil
}

// divNoNan is x/y, or 0 where y is 0 (cwise_ops.h, div_no_nan_op).
func divNoNan(c *Call, x, y ir.Value) ir.Value {
	return zeroWhere(c, y, x, binaryOp(c.B, ir.OpDiv, x, y))
}

// zeroWhere is v, or 0 where z is 0.
func zeroWhere(c *Call, z, x, v ir.Value) ir.Value {
	return c.B.Select(compose.IsZero(c.B, z), compose.Zeros(c.B, x), v)
}

// withComplex is types and complex64.
func withComplex(types []ir.DType) []ir.DType {
	return append(append([]ir.DType(nil), types...), ir.C64)
}

// binaryOp is o of x and y, complex64 composed of its parts (an op
// compose does not compose is left to the builder, which refuses it).
func binaryOp(b *ir.Builder, o ir.Op, x, y ir.Value) ir.Value {
	if b.Type(x).DType == ir.C64 {
		if v, ok := compose.ComplexBinary(b, o, x, y); ok {
			return v
		}
	}
	return b.Binary(o, x, y)
}

// unaryOp is o of x, complex64 composed of its parts, as binaryOp.
func unaryOp(b *ir.Builder, o ir.Op, x ir.Value) ir.Value {
	if b.Type(x).DType == ir.C64 {
		if v, ok := compose.ComplexUnary(b, o, x); ok {
			return v
		}
	}
	return b.Unary(o, x)
}

// complexOr is cf for complex64 operands and f otherwise.
func complexOr(cf func(*ir.Builder, ir.Value) ir.Value, f func(c *Call, x ir.Value) ir.Value) func(c *Call, x ir.Value) ir.Value {
	return func(c *Call, x ir.Value) ir.Value {
		if c.B.Type(x).DType == ir.C64 {
			return cf(c.B, x)
		}
		return f(c, x)
	}
}

// inFloat32 computes f in float32 for the 16-bit floats, rounding the result
// back to the input's dtype once.
func inFloat32(f func(c *Call, x ir.Value) ir.Value) func(c *Call, x ir.Value) ir.Value {
	return func(c *Call, x ir.Value) ir.Value {
		return compose.InFloat32(c.B, x, func(x ir.Value) ir.Value { return f(c, x) })
	}
}

// hyperbolicLarge is where Sinh and Cosh switch to exp(|x|)/2, which they
// equal to within float32's precision from here on (exp(-2*20) < 2^-57).
const hyperbolicLarge = 20

// halfExpAbs is exp(|x|)/2 as (exp(|x|/2)/2) * exp(|x|/2), which stays
// finite as long as the answer does (exp(|x|) alone overflows first).
func halfExpAbs(c *Call, x ir.Value) ir.Value {
	t := c.B.Unary(ir.OpExp, c.B.Binary(ir.OpMul, c.B.Unary(ir.OpAbs, x), like(c.B, x, 0.5)))
	return c.B.Binary(ir.OpMul, c.B.Binary(ir.OpMul, t, like(c.B, x, 0.5)), t)
}

// sinh is (expm1(x) - expm1(-x))/2, which does not cancel near 0 (the two
// terms have opposite signs) and keeps the sign of -0; past
// hyperbolicLarge it is ±exp(|x|)/2.
func sinh(c *Call, x ir.Value) ir.Value {
	b := c.B
	small := b.Binary(ir.OpMul, b.Binary(ir.OpSub, b.Unary(ir.OpExpm1, x), b.Unary(ir.OpExpm1, b.Unary(ir.OpNeg, x))), like(b, x, 0.5))
	h := halfExpAbs(c, x)
	large := b.Select(lessThan(c, x, 0), b.Unary(ir.OpNeg, h), h)
	return b.Select(b.Compare(ir.CmpGT, b.Unary(ir.OpAbs, x), like(b, x, hyperbolicLarge)), large, small)
}

// cosh is exp(x)/2 + exp(-x)/2, a sum of positive terms; past
// hyperbolicLarge it is exp(|x|)/2.
func cosh(c *Call, x ir.Value) ir.Value {
	b := c.B
	half := like(b, x, 0.5)
	small := b.Binary(ir.OpAdd, b.Binary(ir.OpMul, b.Unary(ir.OpExp, x), half), b.Binary(ir.OpMul, b.Unary(ir.OpExp, b.Unary(ir.OpNeg, x)), half))
	return b.Select(b.Compare(ir.CmpGT, b.Unary(ir.OpAbs, x), like(b, x, hyperbolicLarge)), halfExpAbs(c, x), small)
}

// signsDiffer is (a < 0) != (b < 0), elementwise.
func signsDiffer(c *Call, a, b ir.Value) ir.Value {
	return c.B.Compare(ir.CmpNE, c.B.Compare(ir.CmpLT, a, like(c.B, a, 0)), c.B.Compare(ir.CmpLT, b, like(c.B, b, 0)))
}

// floorDiv rounds the quotient toward -inf: floor(x/y) for floats
// (floor_div_real), and for integers C's truncating quotient minus one where
// the remainder is non-zero and its sign differs from the divisor's
// (google_floor_div in cwise_ops.h).
func floorDiv(c *Call, x, y ir.Value) ir.Value {
	if c.B.Type(x).DType.IsFloat() {
		return c.B.Unary(ir.OpFloor, c.B.Binary(ir.OpDiv, x, y))
	}
	q := c.B.Binary(ir.OpDiv, x, y)
	r := c.B.Binary(ir.OpRem, x, y)
	fix := c.B.Binary(ir.OpAnd, c.B.Compare(ir.CmpNE, r, like(c.B, r, 0)), signsDiffer(c, r, y))
	return c.B.Select(fix, c.B.Binary(ir.OpSub, q, like(c.B, q, 1)), q)
}

// floorMod is the remainder with the divisor's sign: C's remainder (fmod for
// floats), plus y where it is non-zero and its sign differs from y's
// (google_floor_fmod and google_floor_mod in cwise_ops.h).
func floorMod(c *Call, x, y ir.Value) ir.Value {
	r := c.B.Binary(ir.OpRem, x, y)
	fix := c.B.Binary(ir.OpAnd, c.B.Compare(ir.CmpNE, r, like(c.B, r, 0)), signsDiffer(c, r, y))
	return c.B.Select(fix, c.B.Binary(ir.OpAdd, r, y), r)
}

// lowerAddN sums inputs of one shape; it does not broadcast.
func lowerAddN(c *Call) error {
	if err := c.atLeast(1); err != nil {
		return err
	}
	t0 := c.Type(0)
	sum := c.In[0]
	for i := 1; i < len(c.In); i++ {
		if t := c.Type(i); t.DType != t0.DType || !t.Shape.Equal(t0.Shape) {
			return c.Errorf("inputs must have one shape and dtype: input 0 is %v, input %d is %v", t0, i, t)
		}
		sum = binaryOp(c.B, ir.OpAdd, sum, c.In[i])
	}
	c.Out = []ir.Value{sum}
	return nil
}

// lowerClipByValue is max(min(t, hi), lo); the bounds are scalars or of t's
// shape (cwise_op_clip.cc), and here anything that broadcasts to it.
func lowerClipByValue(c *Call) error {
	if err := c.arity(3); err != nil {
		return err
	}
	if err := c.sameDType(0, 1, 2); err != nil {
		return err
	}
	t := c.Type(0)
	for i := 1; i <= 2; i++ {
		if s, ok := ir.BroadcastShapes(t.Shape, c.Type(i).Shape); !ok || !s.Equal(t.Shape) {
			return c.Errorf("clip bounds must be scalars or of the shape of t: t %v, clip_value_min %v, clip_value_max %v", t, c.Type(1), c.Type(2))
		}
	}
	lo := c.B.BroadcastInDim(c.In[1], t.Shape, nil)
	hi := c.B.BroadcastInDim(c.In[2], t.Shape, nil)
	c.Out = []ir.Value{c.B.Binary(ir.OpMax, c.B.Binary(ir.OpMin, c.In[0], hi), lo)}
	return nil
}

// lowerApproximateEqual is |x - y| < tolerance for x and y of one shape
// (approximate_equal_op.cc: it does not broadcast).
func lowerApproximateEqual(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	tx, ty := c.Type(0), c.Type(1)
	if tx.DType != ty.DType || !tx.Shape.Equal(ty.Shape) {
		return c.Errorf("x and y must have one shape and dtype, got %v and %v", tx, ty)
	}
	b := c.B
	d := b.Unary(ir.OpAbs, b.Binary(ir.OpSub, c.In[0], c.In[1]))
	c.Out = []ir.Value{b.Compare(ir.CmpLT, d, like(b, d, float64(c.Attrs.Float("tolerance", 1e-5))))}
	return nil
}

// lowerCross is the cross product of the 3-vectors along a and b's last
// dim: (a1 b2 - a2 b1, a2 b0 - a0 b2, a0 b1 - a1 b0).
func lowerCross(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	ta, tb := c.Type(0), c.Type(1)
	r := ta.Shape.Rank()
	if ta.DType != tb.DType || !ta.Shape.Equal(tb.Shape) || r < 1 || ta.Shape[r-1] != 3 {
		return c.Errorf("a and b must have one shape and dtype, with an innermost dim of 3: got %v and %v", ta, tb)
	}
	b := c.B
	as, bs := splitAt(b, c.In[0], r-1, []int{1, 1, 1}), splitAt(b, c.In[1], r-1, []int{1, 1, 1})
	term := func(i, j int) ir.Value {
		return b.Binary(ir.OpSub, b.Binary(ir.OpMul, as[i], bs[j]), b.Binary(ir.OpMul, as[j], bs[i]))
	}
	c.Out = []ir.Value{b.Concat(r-1, term(1, 2), term(2, 0), term(0, 1))}
	return nil
}

package lower

import (
	"math"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/compose"
)

// Inverse trigonometric and hyperbolic functions and Erfc, composed from the
// IR's elementwise ops (it has no atan, asin or erfc of its own). Each is
// written in float32 and the 16-bit floats compute in float32 and round
// once, as Eigen's half and bfloat16 functions do. TensorFlow's GPU
// registers them for half, bfloat16, float and double
// (cwise_op_acos.cc, cwise_op_atan2.cc, ...).

func init() {
	un := func(name string, f func(c *Call, x ir.Value) ir.Value) {
		register(Kernel{Op: name, Constraints: T(Floats), Inputs: []string{"x"}, Lower: lowerUnary(inFloat32(f))})
	}
	un("Atan", atan)
	un("Asin", asin)
	un("Acos", acos)
	un("Asinh", asinh)
	un("Acosh", acosh)
	un("Atanh", atanh)
	un("Erfc", erfc)
	register(Kernel{Op: "Atan2", Constraints: T(Floats), Inputs: []string{"y", "x"},
		Lower: lowerBinary(func(c *Call, y, x ir.Value) ir.Value {
			d := c.B.Type(y).DType
			if acc := accType(d); acc != d {
				return c.B.Convert(atan2(c, c.B.Convert(y, acc), c.B.Convert(x, acc)), d)
			}
			return atan2(c, y, x)
		})})
}

// negWhere is -v where neg holds, else v.
func negWhere(c *Call, neg, v ir.Value) ir.Value { return c.B.Select(neg, c.B.Unary(ir.OpNeg, v), v) }

// signBit is compose.SignBit.
func signBit(c *Call, x ir.Value) ir.Value { return compose.SignBit(c.B, x) }

func atan(c *Call, x ir.Value) ir.Value { return compose.Atan(c.B, x) }

// atan2 is compose.Atan2, the one both frontends use.
func atan2(c *Call, y, x ir.Value) ir.Value { return compose.Atan2(c.B, y, x) }

// oneMinusSquare is 1 - x*x as (1-x)(1+x), exact near |x| = 1.
func oneMinusSquare(c *Call, x ir.Value) ir.Value {
	one := like(c.B, x, 1)
	return c.B.Binary(ir.OpMul, c.B.Binary(ir.OpSub, one, x), c.B.Binary(ir.OpAdd, one, x))
}

// asin is atan2(x, sqrt(1 - x^2)); NaN outside [-1, 1].
func asin(c *Call, x ir.Value) ir.Value {
	return atan2(c, x, c.B.Unary(ir.OpSqrt, oneMinusSquare(c, x)))
}

// acos is atan2(sqrt(1 - x^2), x); NaN outside [-1, 1].
func acos(c *Call, x ir.Value) ir.Value {
	return atan2(c, c.B.Unary(ir.OpSqrt, oneMinusSquare(c, x)), x)
}

// hyperbolicHuge is where asinh and acosh switch to log(2|x|), which they
// equal to within float32's precision from here on (the next term is
// 1/(4x^2) < 2^-26), and before x*x can overflow.
const hyperbolicHuge = 4096

// logTwiceAbs is log(|x|) + log(2).
func logTwiceAbs(c *Call, x ir.Value) ir.Value {
	return c.B.Binary(ir.OpAdd, c.B.Unary(ir.OpLog, c.B.Unary(ir.OpAbs, x)), like(c.B, x, math.Ln2))
}

// asinh is sign(x) * log1p(|x| + x^2 / (1 + sqrt(1 + x^2))), which does not
// cancel near 0; log(2|x|) with x's sign past hyperbolicHuge.
func asinh(c *Call, x ir.Value) ir.Value {
	b := c.B
	a := b.Unary(ir.OpAbs, x)
	one := like(b, x, 1)
	a2 := b.Binary(ir.OpMul, a, a)
	small := b.Unary(ir.OpLog1p, b.Binary(ir.OpAdd, a, b.Binary(ir.OpDiv, a2, b.Binary(ir.OpAdd, one, b.Unary(ir.OpSqrt, b.Binary(ir.OpAdd, one, a2))))))
	r := b.Select(b.Compare(ir.CmpGT, a, like(b, x, hyperbolicHuge)), logTwiceAbs(c, x), small)
	return negWhere(c, signBit(c, x), r)
}

// acosh is log1p(t + sqrt(t*(t+2))) with t = x-1, exact near 1; log(2x)
// past hyperbolicHuge; NaN below 1.
func acosh(c *Call, x ir.Value) ir.Value {
	b := c.B
	t := b.Binary(ir.OpSub, x, like(b, x, 1))
	small := b.Unary(ir.OpLog1p, b.Binary(ir.OpAdd, t, b.Unary(ir.OpSqrt, b.Binary(ir.OpMul, t, b.Binary(ir.OpAdd, t, like(b, x, 2))))))
	return b.Select(b.Compare(ir.CmpGT, x, like(b, x, hyperbolicHuge)), logTwiceAbs(c, x), small)
}

// atanh is sign(x) * log1p(2|x| / (1 - |x|)) / 2: ±inf at ±1, NaN beyond.
func atanh(c *Call, x ir.Value) ir.Value {
	b := c.B
	a := b.Unary(ir.OpAbs, x)
	q := b.Binary(ir.OpDiv, b.Binary(ir.OpMul, a, like(b, x, 2)), b.Binary(ir.OpSub, like(b, x, 1), a))
	r := b.Binary(ir.OpMul, b.Unary(ir.OpLog1p, q), like(b, x, 0.5))
	return negWhere(c, signBit(c, x), r)
}

// erfcLarge is where Erfc switches from 1 - erf(x), which loses erfc's
// relative precision as erf nears 1, to the Chebyshev fit.
const erfcLarge = 0.5

// erfc is 1 - erf(x) below erfcLarge, and above it the Chebyshev fit of
// erfc(x) = t exp(-x^2 + P(t)), t = 1/(1 + x/2) (Numerical Recipes' erfcc,
// relative error below 1.2e-7 for every x >= 0), so small answers keep
// their significant digits.
func erfc(c *Call, x ir.Value) ir.Value {
	b := c.B
	t := b.Binary(ir.OpDiv, like(b, x, 1), b.Binary(ir.OpAdd, like(b, x, 1), b.Binary(ir.OpMul, x, like(b, x, 0.5))))
	coef := []float64{0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806, 0.09678418, 0.37409196, 1.00002368, -1.26551223}
	p := like(b, x, coef[0])
	for _, k := range coef[1:] {
		p = b.Binary(ir.OpAdd, b.Binary(ir.OpMul, p, t), like(b, x, k))
	}
	e := b.Binary(ir.OpSub, p, b.Binary(ir.OpMul, x, x))
	large := b.Binary(ir.OpMul, t, b.Unary(ir.OpExp, e))
	// +inf gives t = 0 and exp(-inf) = 0: erfc(inf) is 0.
	small := b.Binary(ir.OpSub, like(b, x, 1), b.Unary(ir.OpErf, x))
	return b.Select(b.Compare(ir.CmpGE, x, like(b, x, erfcLarge)), large, small)
}

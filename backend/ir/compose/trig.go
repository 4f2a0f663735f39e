// Package compose builds, from the IR's own ops, the functions the IR has
// no op for and both frontends need (TensorFlow's Atan2 and jax's atan2,
// for instance), so that each is written once and both frontends give the
// same answers. Every function takes float32 values; callers compute the
// 16-bit floats in float32 and round once.
package compose

import (
	"math"

	"github.com/metalplug/metalplug/backend/ir"
)

// atanCoeffs are Q in atan(t) ~ t + t^3 Q(t^2) on [0, 1], a minimax fit of
// the relative error (Lawson's iterations on Chebyshev nodes, in float64,
// rounded to float32): evaluated by Horner in float32 it is within 1.1 ulp
// of atan over [0, 1] (TestAtanAccuracy).
var atanCoeffs = []float64{
	-0.33333152532577515, 0.19993773102760315, -0.14211054146289825, 0.10666002333164215,
	-0.07552209496498108, 0.04321179911494255, -0.01636788621544838, 0.0029206809122115374,
}

// like is a constant of x's type and shape.
func like(b *ir.Builder, x ir.Value, v float64) ir.Value { return b.Full(b.Type(x), v) }

// SignBit is true where x is negative or -0 (1/x is -inf there), false for
// NaN: by comparisons rather than x's bits, which MPSGraph reads only from
// macOS 13.2 on.
func SignBit(b *ir.Builder, x ir.Value) ir.Value {
	zero := like(b, x, 0)
	negZero := b.Binary(ir.OpAnd, b.Compare(ir.CmpEQ, x, zero), b.Compare(ir.CmpLT, b.Binary(ir.OpDiv, like(b, x, 1), x), zero))
	return b.Binary(ir.OpOr, b.Compare(ir.CmpLT, x, zero), negZero)
}

// atanUnit is atan(t) for t in [0, 1] (or NaN).
func atanUnit(b *ir.Builder, t ir.Value) ir.Value {
	t2 := b.Binary(ir.OpMul, t, t)
	q := like(b, t, atanCoeffs[len(atanCoeffs)-1])
	for k := len(atanCoeffs) - 2; k >= 0; k-- {
		q = b.Binary(ir.OpAdd, b.Binary(ir.OpMul, q, t2), like(b, t, atanCoeffs[k]))
	}
	return b.Binary(ir.OpAdd, t, b.Binary(ir.OpMul, b.Binary(ir.OpMul, t, t2), q))
}

// Atan is the arc tangent of float32 values: atanUnit of |x|, or of 1/|x|
// taken from pi/2 past 1, with x's sign (-0 stays -0; NaN stays NaN).
func Atan(b *ir.Builder, x ir.Value) ir.Value {
	a := b.Unary(ir.OpAbs, x)
	big := b.Compare(ir.CmpGT, a, like(b, x, 1))
	t := b.Select(big, b.Binary(ir.OpDiv, like(b, x, 1), a), a)
	r := atanUnit(b, t)
	r = b.Select(big, b.Binary(ir.OpSub, like(b, x, math.Pi/2), r), r)
	return b.Select(SignBit(b, x), b.Unary(ir.OpNeg, r), r)
}

// Atan2 is the angle of (x, y) of float32 values, as C's atan2: atanUnit
// of min(|x|,|y|)/max(|x|,|y|), reflected into the octant, then the
// quadrant, of (x, y), with y's sign. Signed zeros and infinities as
// IEEE says: atan2(±0, -0) is ±pi, atan2(±0, +0) is ±0, atan2(±inf, ±inf)
// an odd multiple of ±pi/4; NaN in either operand is NaN.
func Atan2(b *ir.Builder, y, x ir.Value) ir.Value {
	ax, ay := b.Unary(ir.OpAbs, x), b.Unary(ir.OpAbs, y)
	hi, lo := b.Binary(ir.OpMax, ax, ay), b.Binary(ir.OpMin, ax, ay)
	t := b.Binary(ir.OpDiv, lo, hi)
	t = b.Select(b.Compare(ir.CmpEQ, hi, like(b, x, 0)), like(b, x, 0), t)           // both zero
	t = b.Select(b.Compare(ir.CmpEQ, lo, like(b, x, math.Inf(1))), like(b, x, 1), t) // both infinite
	r := atanUnit(b, t)
	r = b.Select(b.Compare(ir.CmpGT, ay, ax), b.Binary(ir.OpSub, like(b, x, math.Pi/2), r), r)
	r = b.Select(SignBit(b, x), b.Binary(ir.OpSub, like(b, x, math.Pi), r), r)
	// A NaN operand: max and min may drop it, and the comparisons above
	// are false; say NaN outright.
	nan := b.Binary(ir.OpOr, b.Compare(ir.CmpNE, x, x), b.Compare(ir.CmpNE, y, y))
	r = b.Select(nan, like(b, x, math.NaN()), r)
	return b.Select(SignBit(b, y), b.Unary(ir.OpNeg, r), r)
}

// InFloat32 computes f in float32 for the 16-bit floats, rounding once at
// the end (as Eigen's half and bfloat16 functions and XLA's CPU do), and in
// x's own type otherwise.
func InFloat32(b *ir.Builder, x ir.Value, f func(x ir.Value) ir.Value) ir.Value {
	if d := b.Type(x).DType; d == ir.F16 || d == ir.BF16 {
		return b.Convert(f(b.Convert(x, ir.F32)), d)
	}
	return f(x)
}

// Tan is sin(x)/cos(x) of real floats (the IR has no tan), in float32 for
// the 16-bit ones; complex64 is ComplexTan.
func Tan(b *ir.Builder, x ir.Value) ir.Value {
	return InFloat32(b, x, func(x ir.Value) ir.Value {
		return b.Binary(ir.OpDiv, b.Unary(ir.OpSin, x), b.Unary(ir.OpCos, x))
	})
}

package compose

// complex64 arithmetic, composed of the float32 parts the IR's real, imag
// and complex move exactly: the IR holds complex data but has no complex
// arithmetic, and neither does MPSGraph before macOS 14, so both frontends
// build it here, from ops every driver runs (no bit casts). The formulas
// are the careful ones (Smith's division, a scaled hypot, Kahan's tanh),
// so that values away from overflow agree with XLA's and TensorFlow's CPU
// to a few ulp.

import (
	"math"

	"github.com/metalplug/metalplug/backend/ir"
)

// cx is a complex value as its two float32 parts.
type cx struct{ re, im ir.Value }

// fb is float32 arithmetic of one shape, for the compositions below.
type fb struct {
	b *ir.Builder
	s ir.Shape
}

func (f fb) c(v float64) ir.Value            { return f.b.Full(ir.TensorType{DType: ir.F32, Shape: f.s}, v) }
func (f fb) add(x, y ir.Value) ir.Value      { return f.b.Binary(ir.OpAdd, x, y) }
func (f fb) sub(x, y ir.Value) ir.Value      { return f.b.Binary(ir.OpSub, x, y) }
func (f fb) mul(x, y ir.Value) ir.Value      { return f.b.Binary(ir.OpMul, x, y) }
func (f fb) div(x, y ir.Value) ir.Value      { return f.b.Binary(ir.OpDiv, x, y) }
func (f fb) un(o ir.Op, x ir.Value) ir.Value { return f.b.Unary(o, x) }
func (f fb) sel(p, x, y ir.Value) ir.Value   { return f.b.Select(p, x, y) }
func (f fb) and(p, q ir.Value) ir.Value      { return f.b.Binary(ir.OpAnd, p, q) }
func (f fb) or(p, q ir.Value) ir.Value       { return f.b.Binary(ir.OpOr, p, q) }
func (f fb) cmp(d ir.CompareDir, x, y ir.Value) ir.Value {
	return f.b.Compare(d, x, y)
}

// copysign is |x| with the sign of y (a NaN y counts as positive).
func (f fb) copysign(x, y ir.Value) ir.Value {
	a := f.un(ir.OpAbs, x)
	return f.sel(SignBit(f.b, y), f.un(ir.OpNeg, a), a)
}

// partsOf takes x apart; a real x is converted to float32 with a zero
// imaginary part, so that mixed operands compose too.
func partsOf(b *ir.Builder, x ir.Value) (cx, fb) {
	f := fb{b, b.Type(x).Shape}
	if b.Type(x).DType != ir.C64 {
		return cx{b.Convert(x, ir.F32), f.c(0)}, f
	}
	return cx{b.Real(x), b.Imag(x)}, f
}

func (f fb) value(z cx) ir.Value { return f.b.Complex(z.re, z.im) }

func (f fb) cmul(x, y cx) cx {
	return cx{f.sub(f.mul(x.re, y.re), f.mul(x.im, y.im)), f.add(f.mul(x.re, y.im), f.mul(x.im, y.re))}
}

// cdiv is Smith's division: the divisor's smaller part divided by its
// larger, so that nothing squares out of range.
func (f fb) cdiv(x, y cx) cx {
	a, b, c, d := x.re, x.im, y.re, y.im
	big := f.cmp(ir.CmpGE, f.un(ir.OpAbs, c), f.un(ir.OpAbs, d))
	// |c| >= |d|: r = d/c, den = c + d r, ((a + b r), (b - a r)) / den.
	r1 := f.div(d, c)
	den1 := f.add(c, f.mul(d, r1))
	re1, im1 := f.div(f.add(a, f.mul(b, r1)), den1), f.div(f.sub(b, f.mul(a, r1)), den1)
	// otherwise: r = c/d, den = c r + d, ((a r + b), (b r - a)) / den.
	r2 := f.div(c, d)
	den2 := f.add(f.mul(c, r2), d)
	re2, im2 := f.div(f.add(f.mul(a, r2), b), den2), f.div(f.sub(f.mul(b, r2), a), den2)
	return cx{f.sel(big, re1, re2), f.sel(big, im1, im2)}
}

// Hypot is sqrt(x^2 + y^2) of float32 values without overflow or underflow
// on the way: the larger magnitude times sqrt(1 + (smaller/larger)^2);
// +inf if either is infinite (even against NaN, as C's hypot), NaN if
// either is NaN otherwise, 0 for two zeros. It is |z| of a complex z.
func Hypot(b *ir.Builder, x, y ir.Value) ir.Value {
	ax, ay := b.Unary(ir.OpAbs, x), b.Unary(ir.OpAbs, y)
	hi, lo := b.Binary(ir.OpMax, ax, ay), b.Binary(ir.OpMin, ax, ay)
	zero, inf := like(b, x, 0), like(b, x, math.Inf(1))
	q := b.Binary(ir.OpDiv, lo, hi)
	q = b.Select(b.Compare(ir.CmpEQ, hi, zero), zero, q)
	r := b.Binary(ir.OpMul, hi, b.Unary(ir.OpSqrt, b.Binary(ir.OpAdd, like(b, x, 1), b.Binary(ir.OpMul, q, q))))
	// max and min may drop a NaN; say NaN outright.
	nan := b.Binary(ir.OpOr, b.Compare(ir.CmpNE, x, x), b.Compare(ir.CmpNE, y, y))
	r = b.Select(nan, like(b, x, math.NaN()), r)
	anyInf := b.Binary(ir.OpOr, b.Compare(ir.CmpEQ, ax, inf), b.Compare(ir.CmpEQ, ay, inf))
	return b.Select(anyInf, inf, r)
}

// Conj negates the imaginary part of a complex64 x: negation flips the
// sign bit, so NaN and zero imaginary parts keep their payloads and change
// sign, as both frameworks' CPUs do.
func Conj(b *ir.Builder, x ir.Value) ir.Value {
	return b.Complex(b.Real(x), b.Unary(ir.OpNeg, b.Imag(x)))
}

func (f fb) cexp(z cx) cx {
	e := f.un(ir.OpExp, z.re)
	return cx{f.mul(e, f.un(ir.OpCos, z.im)), f.mul(e, f.un(ir.OpSin, z.im))}
}

func (f fb) clog(z cx) cx {
	return cx{f.un(ir.OpLog, Hypot(f.b, z.re, z.im)), Atan2(f.b, z.im, z.re)}
}

// csqrt: t = sqrt((|a| + |z|) / 2); for a >= 0 it is (t, b / 2t), else
// (|b| / 2t, t with b's sign); sqrt(±0 + bi) at b = 0 is (0, b).
func (f fb) csqrt(z cx) cx {
	a, b := z.re, z.im
	t := f.un(ir.OpSqrt, f.mul(f.add(f.un(ir.OpAbs, a), Hypot(f.b, a, b)), f.c(0.5)))
	q := f.div(b, f.mul(f.c(2), t))
	neg := SignBit(f.b, a)
	re := f.sel(neg, f.un(ir.OpAbs, q), t)
	im := f.sel(neg, f.copysign(t, b), q)
	zero := f.cmp(ir.CmpEQ, t, f.c(0))
	return cx{f.sel(zero, f.c(0), re), f.sel(zero, b, im)}
}

// ctanh is Kahan's: t = tan(b), s = sinh(a), beta = 1 + t^2,
// tanh = (beta s sqrt(1 + s^2) + i t) / (1 + beta s^2); where |a| is large
// (s^2 would overflow) it is (sign(a), 0 with t's sign), the limit as a
// grows, except that a finite a with b infinite or NaN has no limit:
// NaN in both parts (C99's tanh(x + i inf)); a = ±inf is (±1, ±0)
// whatever b.
func (f fb) ctanh(z cx) cx {
	a, b := z.re, z.im
	t := f.div(f.un(ir.OpSin, b), f.un(ir.OpCos, b))
	s := f.mul(f.sub(f.un(ir.OpExpm1, a), f.un(ir.OpExpm1, f.un(ir.OpNeg, a))), f.c(0.5))
	beta := f.add(f.c(1), f.mul(t, t))
	s2 := f.mul(s, s)
	den := f.add(f.c(1), f.mul(beta, s2))
	re := f.div(f.mul(f.mul(beta, s), f.un(ir.OpSqrt, f.add(f.c(1), s2))), den)
	im := f.div(t, den)
	absA := f.un(ir.OpAbs, a)
	large := f.cmp(ir.CmpGT, absA, f.c(20))
	infA := f.cmp(ir.CmpEQ, absA, f.c(math.Inf(1)))
	finiteB := f.cmp(ir.CmpLT, f.un(ir.OpAbs, b), f.c(math.Inf(1))) // false for NaN too
	nan := f.c(math.NaN())
	undefined := f.and(f.un(ir.OpNot, infA), f.un(ir.OpNot, finiteB))
	limRe := f.sel(undefined, nan, f.copysign(f.c(1), a))
	limIm := f.sel(undefined, nan, f.copysign(f.c(0), t))
	return cx{f.sel(large, limRe, re), f.sel(large, limIm, im)}
}

// coshSinh are cosh and sinh of x, sinh through expm1 so that it is
// accurate near 0.
func (f fb) coshSinh(x ir.Value) (ir.Value, ir.Value) {
	ep, en := f.un(ir.OpExpm1, x), f.un(ir.OpExpm1, f.un(ir.OpNeg, x))
	sh := f.mul(f.sub(ep, en), f.c(0.5))
	ch := f.add(f.mul(f.add(ep, en), f.c(0.5)), f.c(1))
	return ch, sh
}

// ComplexUnary is the unary op o on complex64 x; ok is false for the ops
// it does not compose. Abs gives |x| as float32; the others complex64.
func ComplexUnary(b *ir.Builder, o ir.Op, x ir.Value) (v ir.Value, ok bool) {
	z, f := partsOf(b, x)
	var r cx
	switch o {
	case ir.OpNeg:
		r = cx{f.un(ir.OpNeg, z.re), f.un(ir.OpNeg, z.im)}
	case ir.OpAbs:
		return Hypot(b, z.re, z.im), true
	case ir.OpSign:
		// z / |z|, 0 at 0 (NaN stays NaN).
		h := Hypot(b, z.re, z.im)
		zero := f.cmp(ir.CmpEQ, h, f.c(0))
		r = cx{f.sel(zero, f.c(0), f.div(z.re, h)), f.sel(zero, f.c(0), f.div(z.im, h))}
	case ir.OpExp:
		r = f.cexp(z)
	case ir.OpExpm1:
		// (expm1(a) cos b - 2 sin^2(b/2), exp(a) sin b): no cancellation
		// near 0.
		h := f.un(ir.OpSin, f.mul(z.im, f.c(0.5)))
		re := f.sub(f.mul(f.un(ir.OpExpm1, z.re), f.un(ir.OpCos, z.im)), f.mul(f.c(2), f.mul(h, h)))
		// At b = 0 the imaginary part is b itself: exp(a) sin b would be
		// inf * 0 = NaN where exp(a) overflows.
		im := f.mul(f.un(ir.OpExp, z.re), f.un(ir.OpSin, z.im))
		r = cx{re, f.sel(f.cmp(ir.CmpEQ, z.im, f.c(0)), z.im, im)}
	case ir.OpLog:
		r = f.clog(z)
	case ir.OpLog1p:
		// log|1 + z| = log1p(2a + a^2 + b^2) / 2, arg(1 + z).
		a, bi := z.re, z.im
		m := f.add(f.mul(a, f.add(f.c(2), a)), f.mul(bi, bi))
		r = cx{f.mul(f.un(ir.OpLog1p, m), f.c(0.5)), Atan2(b, bi, f.add(f.c(1), a))}
	case ir.OpSqrt:
		r = f.csqrt(z)
	case ir.OpRsqrt:
		r = f.cdiv(cx{f.c(1), f.c(0)}, f.csqrt(z))
	case ir.OpTanh:
		r = f.ctanh(z)
	case ir.OpLogistic:
		e := f.cexp(cx{f.un(ir.OpNeg, z.re), f.un(ir.OpNeg, z.im)})
		r = f.cdiv(cx{f.c(1), f.c(0)}, cx{f.add(f.c(1), e.re), e.im})
	case ir.OpSin:
		// (sin a cosh b, cos a sinh b)
		ch, sh := f.coshSinh(z.im)
		r = cx{f.mul(f.un(ir.OpSin, z.re), ch), f.mul(f.un(ir.OpCos, z.re), sh)}
	case ir.OpCos:
		// (cos a cosh b, -sin a sinh b)
		ch, sh := f.coshSinh(z.im)
		r = cx{f.mul(f.un(ir.OpCos, z.re), ch), f.un(ir.OpNeg, f.mul(f.un(ir.OpSin, z.re), sh))}
	default:
		return 0, false
	}
	return f.value(r), true
}

// ComplexTan is tan(z) = -i tanh(iz) of complex64 x (the IR has no tan).
func ComplexTan(b *ir.Builder, x ir.Value) ir.Value {
	z, f := partsOf(b, x)
	t := f.ctanh(cx{f.un(ir.OpNeg, z.im), z.re})
	return f.value(cx{t.im, f.un(ir.OpNeg, t.re)})
}

// ComplexBinary is the binary op o on complex64 operands of one shape;
// ok is false for the ops it does not compose. x^y is exp(y log x), with
// 0^0 = 1 and 0^y = 0 for y of positive real part and no imaginary part,
// as XLA and TensorFlow say.
func ComplexBinary(b *ir.Builder, o ir.Op, x, y ir.Value) (v ir.Value, ok bool) {
	p, f := partsOf(b, x)
	q, _ := partsOf(b, y)
	switch o {
	case ir.OpAdd, ir.OpSub:
		return f.value(cx{b.Binary(o, p.re, q.re), b.Binary(o, p.im, q.im)}), true
	case ir.OpMul:
		return f.value(f.cmul(p, q)), true
	case ir.OpDiv:
		return f.value(f.cdiv(p, q)), true
	case ir.OpPow:
		r := f.cexp(f.cmul(q, f.clog(p)))
		xzero := f.and(f.cmp(ir.CmpEQ, p.re, f.c(0)), f.cmp(ir.CmpEQ, p.im, f.c(0)))
		yzero := f.and(f.cmp(ir.CmpEQ, q.re, f.c(0)), f.cmp(ir.CmpEQ, q.im, f.c(0)))
		ypos := f.and(f.cmp(ir.CmpGT, q.re, f.c(0)), f.cmp(ir.CmpEQ, q.im, f.c(0)))
		one, zero := f.c(1), f.c(0)
		re := f.sel(xzero, f.sel(yzero, one, f.sel(ypos, zero, r.re)), r.re)
		im := f.sel(xzero, f.sel(f.or(yzero, ypos), zero, r.im), r.im)
		return f.value(cx{re, im}), true
	}
	return 0, false
}

// ComplexCompare compares complex64 values by their parts: EQ and NE both
// parts, the orders lexicographically (real part first), as StableHLO
// specifies.
func ComplexCompare(b *ir.Builder, dir ir.CompareDir, x, y ir.Value) ir.Value {
	p, f := partsOf(b, x)
	q, _ := partsOf(b, y)
	eqRe := f.cmp(ir.CmpEQ, p.re, q.re)
	switch dir {
	case ir.CmpEQ:
		return f.and(eqRe, f.cmp(ir.CmpEQ, p.im, q.im))
	case ir.CmpNE:
		return f.or(f.cmp(ir.CmpNE, p.re, q.re), f.cmp(ir.CmpNE, p.im, q.im))
	}
	strict := map[ir.CompareDir]ir.CompareDir{ir.CmpLT: ir.CmpLT, ir.CmpLE: ir.CmpLT, ir.CmpGT: ir.CmpGT, ir.CmpGE: ir.CmpGT}[dir]
	return f.or(f.cmp(strict, p.re, q.re), f.and(eqRe, f.cmp(dir, p.im, q.im)))
}

// ComplexContract is a contraction (a dot, a convolution) with a complex64
// operand, from four real ones of the parts: (a + bi)(c + di) summed is
// (sum ac - sum bd) + (sum ad + sum bc) i. A real operand has a zero
// imaginary part.
func ComplexContract(b *ir.Builder, x, y ir.Value, contract func(p, q ir.Value) ir.Value) ir.Value {
	p, _ := partsOf(b, x)
	q, _ := partsOf(b, y)
	re := b.Binary(ir.OpSub, contract(p.re, q.re), contract(p.im, q.im))
	im := b.Binary(ir.OpAdd, contract(p.re, q.im), contract(p.im, q.re))
	return b.Complex(re, im)
}

// ComplexSinh is sinh(a + bi) = (sinh a cos b, cosh a sin b) of complex64 x.
func ComplexSinh(b *ir.Builder, x ir.Value) ir.Value {
	z, f := partsOf(b, x)
	ch, sh := f.coshSinh(z.re)
	return f.value(cx{f.mul(sh, f.un(ir.OpCos, z.im)), f.mul(ch, f.un(ir.OpSin, z.im))})
}

// ComplexCosh is cosh(a + bi) = (cosh a cos b, sinh a sin b) of complex64 x.
func ComplexCosh(b *ir.Builder, x ir.Value) ir.Value {
	z, f := partsOf(b, x)
	ch, sh := f.coshSinh(z.re)
	return f.value(cx{f.mul(ch, f.un(ir.OpCos, z.im)), f.mul(sh, f.un(ir.OpSin, z.im))})
}

// IsZero is true where x is zero: both parts for complex64, either sign.
func IsZero(b *ir.Builder, x ir.Value) ir.Value {
	if b.Type(x).DType != ir.C64 {
		return b.Compare(ir.CmpEQ, x, like(b, x, 0))
	}
	z, f := partsOf(b, x)
	return f.and(f.cmp(ir.CmpEQ, z.re, f.c(0)), f.cmp(ir.CmpEQ, z.im, f.c(0)))
}

// Zeros is a zero of x's type and shape, complex64 included (the IR
// encodes no complex scalar: it is built from its parts).
func Zeros(b *ir.Builder, x ir.Value) ir.Value {
	if b.Type(x).DType != ir.C64 {
		return like(b, x, 0)
	}
	f := fb{b, b.Type(x).Shape}
	return f.value(cx{f.c(0), f.c(0)})
}

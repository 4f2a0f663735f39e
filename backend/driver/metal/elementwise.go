package metal

import (
	"fmt"
	"math"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"

	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	registerLowering(lowerUnary, ir.UnaryOps()...)
	registerLowering(lowerBinary, ir.BinaryOps()...)
}

// lowerUnary lowers the elementwise ops of one operand. Where MPSGraph's op
// does not pin down the semantics the IR asks for (signed zeros and NaN in
// sign, ties in round, integer wrap-around), the op is composed from ones
// whose semantics are plain.
func lowerUnary(l *lowering, in ir.Instr, args []val) (tensor, error) {
	x := args[0].t
	d := in.Type.DType
	dt := mustPhys(d)
	one, zero := l.scalar(1, dt), l.scalar(0, dt)
	isFloat := d.IsFloat()
	switch in.Op {
	case ir.OpNeg:
		if isFloat {
			return l.negBits(x), nil
		}
		return l.sub(zero, x), nil // wraps: -MinInt is MinInt
	case ir.OpAbs:
		switch {
		case isFloat:
			return l.absf(x), nil
		case d == ir.U8:
			return l.identity(x), nil
		}
		return l.sel(l.lt(x, zero), l.sub(zero, x), x), nil
	case ir.OpSign:
		// NaN stays NaN and zeros keep their sign, as StableHLO says.
		rest := x
		if !isFloat {
			rest = zero
		}
		neg := l.scalar(-1, dt)
		if d == ir.U8 {
			neg = zero
		}
		return l.sel(l.gt(x, zero), one, l.sel(l.lt(x, zero), neg, rest)), nil
	case ir.OpNot:
		switch d {
		case ir.Bool:
			return l.sub(one, x), nil
		case ir.U8:
			return l.sub(l.scalar(255, dt), x), nil
		}
		return l.sub(l.sub(zero, x), one), nil // ^x == -x-1 in two's complement
	}
	if !isFloat {
		return tensor{}, fmt.Errorf("op %s is not defined on %v", in.Op, d)
	}
	switch in.Op {
	case ir.OpExp:
		return l.exp(x), nil
	case ir.OpLog:
		return l.log(x), nil
	case ir.OpSqrt:
		return l.g.SquareRoot(x), nil
	case ir.OpRsqrt:
		if l.g.Has(gpu.OpReciprocalSquareRoot) {
			return l.g.ReciprocalSquareRoot(x), nil
		}
		return l.g.ReverseSquareRoot(x), nil
	case ir.OpTanh:
		return l.g.Tanh(x), nil
	case ir.OpLogistic:
		return l.g.Sigmoid(x), nil
	case ir.OpFloor:
		return l.floor(x), nil
	case ir.OpCeil:
		return l.ceil(x), nil
	case ir.OpErf:
		return l.g.Erf(x), nil
	case ir.OpSin:
		return l.g.Sin(x), nil
	case ir.OpCos:
		return l.g.Cos(x), nil
	case ir.OpLog1p:
		// Kahan's log1p: with u = 1+x rounded, log(u) * x/(u-1) cancels
		// the rounding of u, keeping full relative accuracy near 0, where
		// log(1+x) alone would lose it. u == 1 means x is below half an
		// ulp of 1, where log1p(x) is x; at u == inf the plain log is right.
		u := l.add(one, x)
		kahan := l.mul(l.log(u), l.div(x, l.sub(u, one)))
		return l.sel(l.eq(u, one), x, l.sel(l.isFinite(u), kahan, l.log(u))), nil
	case ir.OpExpm1:
		// Kahan's expm1: (u-1) * x/log(u) with u = exp(x) rounded.
		u := l.exp(x)
		um1 := l.sub(u, one)
		kahan := l.mul(um1, l.div(x, l.log(u)))
		r := l.sel(l.eq(um1, l.scalar(-1, dt)), um1, kahan)
		r = l.sel(l.isFinite(u), r, um1) // exp overflowed to inf (or x is NaN)
		return l.sel(l.eq(u, one), x, r), nil
	case ir.OpRound:
		// Round half to even, composed: MPSGraph's round breaks ties away
		// from zero, and its rint does not document its ties.
		f := l.floor(x)
		frac := l.sub(x, f)
		half := l.scalar(0.5, dt)
		odd := l.ne(l.floorMod(f, l.scalar(2, dt)), zero)
		up := l.lor(l.gt(frac, half), l.land(l.eq(frac, half), odd))
		r := l.sel(up, l.add(f, one), f)
		r = l.sel(l.eq(r, zero), l.mul(x, zero), r) // a zero keeps x's sign: round(-0.25) is -0
		return l.sel(l.isFinite(x), r, x), nil
	}
	return tensor{}, fmt.Errorf("no lowering for %s", in.Op)
}

// lowerBinary lowers the elementwise ops of two operands of one type.
func lowerBinary(l *lowering, in ir.Instr, args []val) (tensor, error) {
	x, y := args[0].t, args[1].t
	d := in.Type.DType
	isFloat := d.IsFloat()
	switch in.Op {
	case ir.OpAdd:
		return l.add(x, y), nil
	case ir.OpSub:
		return l.sub(x, y), nil
	case ir.OpMul:
		return l.mul(x, y), nil
	case ir.OpMax:
		if isFloat {
			return l.signedZeros(x, y, l.maxNaN(x, y), false), nil // NaN propagates, as the host's max does
		}
		return l.maximum(x, y), nil
	case ir.OpMin:
		if isFloat {
			return l.signedZeros(x, y, l.minNaN(x, y), true), nil
		}
		return l.minimum(x, y), nil
	case ir.OpAnd, ir.OpOr:
		if d == ir.Bool { // 0/1 bytes: and is min, or is max
			if in.Op == ir.OpAnd {
				return l.minimum(x, y), nil
			}
			return l.maximum(x, y), nil
		}
		if in.Op == ir.OpAnd {
			return l.band(x, y), nil
		}
		return l.bor(x, y), nil
	case ir.OpXor:
		if d == ir.Bool {
			return l.boolToU8(l.ne(x, y)), nil
		}
		return l.bxor(x, y), nil
	case ir.OpShiftLeft, ir.OpShiftRightLogical, ir.OpShiftRightArithmetic:
		if !l.g.Has(gpu.OpReinterpretCast) {
			return tensor{}, fallback(in.Op, "shifts of %v need reinterpretCastTensor (macOS 13.2)", d)
		}
		return l.shift(in.Op, d, x, y)
	}
	if isFloat {
		switch in.Op {
		case ir.OpDiv:
			return l.div(x, y), nil
		case ir.OpRem:
			// fmod: x - trunc(x/y)*y, with the sign of x; x/0 gives NaN.
			// Composed, it would also give NaN for a finite x over an
			// infinite y (0 * inf), where fmod is x, and +0 where fmod
			// keeps the sign of x: both are selected back.
			r := l.sub(x, l.mul(l.trunc(l.div(x, y)), y))
			zero := l.scalar(0, mustPhys(d))
			r = l.sel(l.eq(r, zero), l.mul(x, zero), r) // x*0 is -0 for a negative x
			infY := l.land(l.lnot(l.isFinite(y)), l.lnot(l.isNaN(y)))
			return l.sel(l.land(infY, l.isFinite(x)), x, r), nil
		case ir.OpPow:
			return l.pow(x, y), nil
		}
	} else {
		switch in.Op {
		case ir.OpDiv, ir.OpRem:
			// MPSGraph's division and floor modulo have no 64-bit or
			// unsigned 32-bit kernels: those divide bit by bit; narrow
			// types go through int32.
			var q, r tensor
			if d == ir.I64 || d == ir.U32 {
				if !l.g.Has(gpu.OpReinterpretCast) {
					return tensor{}, fallback(in.Op, "integer division of %v is bit by bit, with reinterpretCast (macOS 13.2)", d)
				}
				q, r = l.longDivRem(x, y, d)
			} else {
				q, r = l.intDivRem(l.widen(x, d), l.widen(y, d), d)
			}
			if in.Op == ir.OpRem {
				q = r
			}
			if isNarrow(d) {
				q = l.narrow(q, d)
			}
			return q, nil
		case ir.OpPow:
			return l.intPow(x, y, d)
		}
	}
	return tensor{}, fmt.Errorf("op %s is not defined on %v", in.Op, d)
}

// trunc rounds toward zero.
func (l *lowering) trunc(x tensor) tensor {
	return l.sel(l.lt(x, l.scalar(0, x.DType)), l.ceil(x), l.floor(x))
}

// intDivRem is C's truncating division and remainder (the remainder has the
// dividend's sign), with the host driver's answers where C has none: x/0 is
// 0, x%0 is x, MinInt/-1 wraps to MinInt. x and y are int32 (narrow types
// widened); d is the IR type. The remainder comes from floor modulo,
// corrected where its sign differs from the dividend's (which makes it
// right whether MPSGraph's floor modulo floors or truncates); the quotient
// is then an exact division, which any rounding gets right.
func (l *lowering) intDivRem(x, y tensor, d ir.DType) (q, r tensor) {
	dt := x.DType
	zero, one := l.scalar(0, dt), l.scalar(1, dt)
	byZero := l.eq(y, zero)
	ys := l.sel(byZero, one, y)
	fm := l.floorMod(x, ys)
	if d != ir.U8 {
		wrongSign := l.land(l.ne(fm, zero), l.lxor(l.lt(fm, zero), l.lt(x, zero)))
		fm = l.sel(wrongSign, l.sub(fm, ys), fm)
	}
	r = l.sel(byZero, x, fm)
	q = l.div(l.sub(x, fm), ys)
	if d != ir.U8 {
		q = l.sel(l.eq(y, l.scalar(-1, dt)), l.sub(zero, x), q)
	}
	q = l.sel(byZero, zero, q)
	return q, r
}

// longDivRem is C's truncating division and remainder of int64 or uint32
// values, with intDivRem's answers by zero, by restoring long division of
// the magnitudes as uint64, one quotient bit per step: MPSGraph's division
// has no kernel for either type. The partial remainder stays below the
// divisor's magnitude, at most 2^63, so shifting it left never loses a bit.
func (l *lowering) longDivRem(x, y tensor, d ir.DType) (q, r tensor) {
	u := gpu.UInt64
	dt := x.DType
	zero := l.scalar(0, dt)
	byZero := l.eq(y, zero)
	y = l.sel(byZero, l.scalar(1, dt), y)
	var nx, ny tensor // the magnitudes, as uint64
	if d == ir.I64 {
		// 0 - MinInt64 wraps to MinInt64, whose bits are its magnitude.
		nx = l.reinterpret(l.sel(l.lt(x, zero), l.sub(zero, x), x), u)
		ny = l.reinterpret(l.sel(l.lt(y, zero), l.sub(zero, y), y), u)
	} else {
		nx, ny = l.cast(x, u), l.cast(y, u)
	}
	uzero, one := l.sub(nx, nx), l.scalar(1, u)
	qm, rm := uzero, uzero
	for i := 63; i >= 0; i-- {
		if d == ir.U32 && i >= 32 {
			continue // the dividend's high bits are zero
		}
		amount := l.scalar(float64(i), u)
		rm = l.bor(l.shl(rm, one), l.band(l.shr(nx, amount), one))
		fits := l.ge(rm, ny)
		rm = l.sel(fits, l.sub(rm, ny), rm)
		qm = l.bor(qm, l.shl(l.cast(fits, u), amount))
	}
	if d == ir.I64 {
		q = l.reinterpret(qm, dt)
		q = l.sel(l.lxor(l.lt(x, zero), l.lt(y, zero)), l.sub(zero, q), q)
		r = l.reinterpret(rm, dt)
		r = l.sel(l.lt(x, zero), l.sub(zero, r), r)
	} else {
		q, r = l.cast(qm, dt), l.cast(rm, dt)
	}
	return l.sel(byZero, zero, q), l.sel(byZero, x, r)
}

// intPow is exact integer power with wrap-around by binary exponentiation,
// unrolled over the exponent's bits. A negative exponent gives 1/x^-y
// truncated, as the host driver does: 0 except for bases 1 and -1. Narrow
// types compute in int32 and wrap back; the exponent's bits are read with
// floor modulo and division on int32, and with bitwise ops (macOS 13) on
// int64 and uint32, which MPSGraph's division does not take.
func (l *lowering) intPow(x, y tensor, d ir.DType) (tensor, error) {
	x, y = l.widen(x, d), l.widen(y, d)
	dt := x.DType
	bitwise := dt != i32
	zero, one, two := l.scalar(0, dt), l.scalar(1, dt), l.scalar(2, dt)
	odd := func(e tensor) tensor {
		if bitwise {
			return l.ne(l.band(e, one), zero)
		}
		return l.ne(l.floorMod(e, two), zero)
	}
	bits := 8*d.Size() - 1
	if d == ir.U8 || d == ir.U32 {
		bits = 8 * d.Size()
	}
	e := y
	if d != ir.U8 && d != ir.U32 {
		e = l.sel(l.lt(y, zero), zero, y)
	}
	r, b := one, x
	for i := range bits {
		r = l.sel(odd(e), l.mul(r, b), r)
		if i < bits-1 {
			b = l.mul(b, b)
			if bitwise {
				e = l.shr(e, one) // e >= 0: logical and arithmetic agree
			} else {
				e = l.div(e, two) // e >= 0: floor and truncation agree
			}
		}
	}
	if d != ir.U8 && d != ir.U32 {
		negOne := l.scalar(-1, dt)
		negative := l.sel(l.eq(x, one), one, l.sel(l.eq(x, negOne), l.sel(odd(y), negOne, one), zero))
		r = l.sel(l.lt(y, zero), negative, r)
	}
	if isNarrow(d) {
		r = l.narrow(r, d)
	}
	return r, nil
}

// i32 and i64 abbreviate the index types.
const (
	i32 = gpu.Int32
	i64 = gpu.Int64
)

// unsignedOf is the unsigned MPS type of an integer dtype's width.
func unsignedOf(d ir.DType) gpu.DataType {
	return map[int]gpu.DataType{1: gpu.UInt8, 2: gpu.UInt16, 4: gpu.UInt32, 8: gpu.UInt64}[d.Size()]
}

// signedOf is the signed MPS type of an integer dtype's width.
func signedOf(d ir.DType) gpu.DataType {
	return map[int]gpu.DataType{1: gpu.Int8, 2: gpu.Int16, 4: gpu.Int32, 8: gpu.Int64}[d.Size()]
}

// shift lowers the IR's shifts, whose amounts are read as unsigned and
// shift everything out at the width or past it; MPSGraph's (like C's) leave
// such amounts undefined, so the result is selected around them. The
// logical right shift works on the bits as unsigned, the arithmetic one as
// signed, whatever the dtype.
func (l *lowering) shift(op ir.Op, d ir.DType, x, n tensor) (tensor, error) {
	phys := mustPhys(d)
	u, s := unsignedOf(d), signedOf(d)
	bits := float64(8 * d.Size())
	un := l.reinterpret(n, u)
	inRange := l.lt(un, l.scalar(bits, u))
	switch op {
	case ir.OpShiftLeft:
		r := l.shl(l.reinterpret(x, u), l.sel(inRange, un, l.scalar(0, u)))
		return l.sel(inRange, l.reinterpret(r, phys), l.scalar(0, phys)), nil
	case ir.OpShiftRightLogical:
		r := l.shr(l.reinterpret(x, u), l.sel(inRange, un, l.scalar(0, u)))
		return l.sel(inRange, l.reinterpret(r, phys), l.scalar(0, phys)), nil
	}
	amount := l.sel(inRange, un, l.scalar(bits-1, u)) // past the width: the sign everywhere
	r := l.shr(l.reinterpret(x, s), l.reinterpret(amount, s))
	return l.reinterpret(r, phys), nil
}

// negBits negates a float by flipping its sign bit, as IEEE 754's negate
// and the IR's do, NaN included: MPSGraph does not say its negative keeps
// a NaN's sign and payload. Before reinterpretCast (macOS 13.2) it is
// negativeWithTensor, whose NaNs may come out of either sign.
func (l *lowering) negBits(x tensor) tensor {
	if !l.g.Has(gpu.OpReinterpretCast) || x.DType != gpu.Float32 {
		return l.neg(x)
	}
	bits := l.reinterpret(x, gpu.Int32)
	return l.reinterpret(l.bxor(bits, l.intConst(math.MinInt32, gpu.Int32)), gpu.Float32)
}

// signedZeros fixes r, the max (or min) of x and y, where both are zeros:
// the IR orders -0 below +0, as IEEE's maximum and minimum do, and
// MPSGraph's documentation does not say which zero it returns. The sum of
// two zeros is +0 unless both are -0, which is the max; the min is the
// negated sum of the negations.
func (l *lowering) signedZeros(x, y, r tensor, min bool) tensor {
	zero := l.scalar(0, x.DType)
	both := l.land(l.eq(x, zero), l.eq(y, zero))
	s := l.add(x, y)
	if min {
		s = l.neg(l.add(l.neg(x), l.neg(y)))
	}
	return l.sel(both, s, r)
}

package stablehlo

// Ops the IR has no op for, composed of IR ops: complex arithmetic of the
// parts, and tan, cbrt, atan2, round half away from zero, is_finite,
// popcnt and count_leading_zeros.

import (
	"math"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/compose"
	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// Complex numbers: the IR holds complex64 data and takes it apart (real,
// imag) and puts it together (complex) exactly, but has no complex
// arithmetic: it is composed of the float32 parts.

func complexBinary(e *env, op *mlir.Operation, o ir.Op, x, y ir.Value) ([]ir.Value, error) {
	if v, ok := compose.ComplexBinary(e.b, o, x, y); ok {
		return one(v), nil
	}
	return nil, unsupported(op, "complex operands (the IR has no complex arithmetic; this op is not composed of its parts)")
}

func realImag(imag bool) func(*env, *mlir.Operation) ([]ir.Value, error) {
	return func(e *env, op *mlir.Operation) ([]ir.Value, error) {
		x, err := oneOperand(e, op)
		if err != nil {
			return nil, err
		}
		b := e.b
		t := b.Type(x)
		switch {
		case t.DType == ir.C64 && imag:
			return one(b.Imag(x)), nil
		case t.DType == ir.C64:
			return one(b.Real(x)), nil
		case t.DType.IsFloat() && imag:
			return one(floatConst(b, t.DType, t.Shape, 0)), nil
		case t.DType.IsFloat():
			return one(x), nil
		}
		return nil, invalid(op, "operand %v is not complex or float", t)
	}
}

func complexOp(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, y, err := twoOperands(e, op)
	if err != nil {
		return nil, err
	}
	if d := e.b.Type(x).DType; d != ir.F32 {
		return nil, unsupported(op, "parts of %v (complex<f32> is the only complex type)", d)
	}
	return one(e.b.Complex(x, y)), nil
}

// upcast computes f (in float32) for half types, as XLA's CPU does, and in
// the operand's type otherwise.
func upcast(b *ir.Builder, x ir.Value, f func(ir.Value) ir.Value) ir.Value {
	return compose.InFloat32(b, x, f)
}

func floatOperand(e *env, op *mlir.Operation) (ir.Value, error) {
	if err := checkAccuracy(op); err != nil {
		return 0, err
	}
	x, err := oneOperand(e, op)
	if err != nil {
		return 0, err
	}
	if d := e.b.Type(x).DType; !d.IsFloat() {
		return 0, unsupported(op, "%v operands (only floats)", d)
	}
	return x, nil
}

// tan is sin/cos (in float32 for half types).
func tan(e *env, op *mlir.Operation) ([]ir.Value, error) {
	if x, err := oneOperand(e, op); err == nil && e.b.Type(x).DType == ir.C64 {
		if err := checkAccuracy(op); err != nil {
			return nil, err
		}
		return one(compose.ComplexTan(e.b, x)), nil
	}
	x, err := floatOperand(e, op)
	if err != nil {
		return nil, err
	}
	return one(compose.Tan(e.b, x)), nil
}

// cbrt is pow(|x|, 1/3) refined by one Newton step, r = (2r + a/r^2)/3,
// with the sign put back: within an ulp or two of the true cube root
// (pow alone is off by up to |ln x| * 2^-24 relative, from 1/3's
// rounding). Zeros, infinities and NaN pass through pow unrefined.
func cbrt(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, err := floatOperand(e, op)
	if err != nil {
		return nil, err
	}
	b := e.b
	return one(upcast(b, x, func(x ir.Value) ir.Value {
		t := b.Type(x)
		c := func(v float64) ir.Value { return floatConst(b, t.DType, t.Shape, v) }
		a := b.Unary(ir.OpAbs, x)
		r0 := b.Binary(ir.OpPow, a, c(1.0/3))
		r := b.Binary(ir.OpDiv, b.Binary(ir.OpAdd, b.Binary(ir.OpMul, c(2), r0), b.Binary(ir.OpDiv, a, b.Binary(ir.OpMul, r0, r0))), c(3))
		finite := b.Binary(ir.OpAnd, b.Compare(ir.CmpGT, r0, c(0)), b.Compare(ir.CmpLT, r0, c(math.Inf(1))))
		return b.Binary(ir.OpMul, b.Unary(ir.OpSign, x), b.Select(finite, r, r0))
	})), nil
}

// roundAFZ rounds half away from zero: floor(|x|), plus one where the
// fraction (exact: |x| - floor(|x|)) is at least a half, with x's sign
// (sign(x) * r keeps -0 and NaN). floor(|x| + 0.5) would round
// 0.49999997 up.
func roundAFZ(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, err := floatOperand(e, op)
	if err != nil {
		return nil, err
	}
	b := e.b
	t := b.Type(x)
	a := b.Unary(ir.OpAbs, x)
	fl := b.Unary(ir.OpFloor, a)
	up := b.Compare(ir.CmpGE, b.Binary(ir.OpSub, a, fl), floatConst(b, t.DType, t.Shape, 0.5))
	r := b.Binary(ir.OpAdd, fl, b.Select(up, floatConst(b, t.DType, t.Shape, 1), floatConst(b, t.DType, t.Shape, 0)))
	return one(b.Binary(ir.OpMul, b.Unary(ir.OpSign, x), r)), nil
}

// isFinite is x - x == 0: NaN for infinities and NaN, 0 otherwise.
func isFinite(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, err := floatOperand(e, op)
	if err != nil {
		return nil, err
	}
	b := e.b
	t := b.Type(x)
	return one(b.Compare(ir.CmpEQ, b.Binary(ir.OpSub, x, x), floatConst(b, t.DType, t.Shape, 0))), nil
}

func intOperand(e *env, op *mlir.Operation) (ir.Value, error) {
	x, err := oneOperand(e, op)
	if err != nil {
		return 0, err
	}
	if d := e.b.Type(x).DType; !d.IsInt() {
		return 0, unsupported(op, "%v operands (only integers)", d)
	}
	return x, nil
}

// popcnt counts bits in parallel (the SWAR sums of pairs, nibbles, bytes
// and wider), with logical shifts so that signed types count their sign
// bit.
func popcnt(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, err := intOperand(e, op)
	if err != nil {
		return nil, err
	}
	b := e.b
	t := b.Type(x)
	w := bits(t.DType)
	c := func(v uint64) ir.Value { return intConst(b, t.DType, t.Shape, int64(v)) }
	shr := func(v ir.Value, n int) ir.Value { return b.Binary(ir.OpShiftRightLogical, v, c(uint64(n))) }
	and := func(v, m ir.Value) ir.Value { return b.Binary(ir.OpAnd, v, m) }
	x = b.Binary(ir.OpSub, x, and(shr(x, 1), c(0x5555555555555555)))
	x = b.Binary(ir.OpAdd, and(x, c(0x3333333333333333)), and(shr(x, 2), c(0x3333333333333333)))
	x = and(b.Binary(ir.OpAdd, x, shr(x, 4)), c(0x0f0f0f0f0f0f0f0f))
	for s := 8; s < w; s *= 2 {
		x = b.Binary(ir.OpAdd, x, shr(x, s))
	}
	return one(and(x, c(uint64(2*w-1)))), nil
}

// countLeadingZeros halves the search: wherever x >> s is not zero, s
// fewer leading zeros and keep x >> s.
func countLeadingZeros(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, err := intOperand(e, op)
	if err != nil {
		return nil, err
	}
	b := e.b
	t := b.Type(x)
	w := bits(t.DType)
	c := func(v int) ir.Value { return intConst(b, t.DType, t.Shape, int64(v)) }
	n := c(w)
	for s := w / 2; s >= 1; s /= 2 {
		y := b.Binary(ir.OpShiftRightLogical, x, c(s))
		nz := b.Compare(ir.CmpNE, y, c(0))
		n = b.Select(nz, b.Binary(ir.OpSub, n, c(s)), n)
		x = b.Select(nz, y, x)
	}
	return one(b.Binary(ir.OpSub, n, x)), nil
}

// atan2 is composed (the IR has no arc tangent) by compose.Atan2, in
// float32 (half types computed in it); float64 is an error, since the
// polynomial is float32's.
func atan2(e *env, op *mlir.Operation) ([]ir.Value, error) {
	y, x, err := twoOperands(e, op)
	if err != nil {
		return nil, err
	}
	b := e.b
	d := b.Type(x).DType
	if d != ir.F32 && d != ir.F16 && d != ir.BF16 {
		return nil, unsupported(op, "atan2 of %v (composed for f32, f16 and bf16 only)", d)
	}
	if d != ir.F32 {
		y, x = b.Convert(y, ir.F32), b.Convert(x, ir.F32)
	}
	return one(b.Convert(atan2Of(b, y, x), d)), nil
}

// atan2Of is compose.Atan2, the one both frontends use.
func atan2Of(b *ir.Builder, y, x ir.Value) ir.Value { return compose.Atan2(b, y, x) }

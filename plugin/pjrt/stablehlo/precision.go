package stablehlo

import (
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// reducePrecision is reduce_precision: each value rounded to a float of
// exponent_bits and mantissa_bits and back, as XLA computes it on the bits
// (round to nearest even at the mantissa width; past the narrower
// exponent's range, the signed infinity above and the signed zero below:
// no subnormals; NaN stays NaN), on the bits of the operand's own type.
//
// XLA's algorithm flushes what is below the narrower exponent's normal
// range to zero, so a reduction to float16's widths is not a round trip
// through float16, which keeps subnormals.
func reducePrecision(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, err := oneOperand(e, op)
	if err != nil {
		return nil, err
	}
	eb, err := smallInt(op, "exponent_bits")
	if err != nil {
		return nil, err
	}
	mb, err := smallInt(op, "mantissa_bits")
	if err != nil {
		return nil, err
	}
	if eb < 1 || mb < 0 {
		return nil, invalid(op, "exponent_bits %d and mantissa_bits %d: a float has at least one exponent bit and no fewer than zero mantissa bits", eb, mb)
	}
	t := e.b.Type(x)
	srcE, srcM := 8, 23 // float32's, and float64's in float32
	switch t.DType {
	case ir.F32:
	case ir.F16:
		srcE, srcM = 5, 10
	case ir.BF16:
		srcM = 7
	case ir.F64:
		// The host driver's float64 (the device has none): nothing to do
		// at its own widths; through float32 where the widths fit it
		// (rounding twice, which can move a tie).
		if eb >= 11 && mb >= 52 {
			return one(x), nil
		}
		if eb > 8 || mb > 23 {
			return nil, unsupported(op, "reduce_precision of %v to %d exponent and %d mantissa bits (wider than float32's)", t, eb, mb)
		}
	default:
		return nil, unsupported(op, "reduce_precision of %v (float32, float16 and bfloat16 are)", t)
	}
	b := e.b
	// On the bits of the operand's own type, as XLA computes it (a
	// float16 subnormal rounds as the bits it is, not as the float32 it
	// would widen to); float64 in float32.
	f, bitsType, nbits := x, ir.I32, 32
	switch t.DType {
	case ir.F16, ir.BF16:
		bitsType, nbits = ir.I16, 16
	case ir.F64:
		f = b.Convert(x, ir.F32)
	}
	floatType := b.Type(f).DType
	c := func(v int64) ir.Value { return intConst(b, bitsType, t.Shape, v) }
	bits := b.BitcastConvert(f, bitsType)
	if mb < srcM {
		shift := int64(srcM - mb)
		last := int64(1) << shift
		lsb := b.Binary(ir.OpShiftRightLogical, b.Binary(ir.OpAnd, bits, c(last)), c(shift))
		bias := b.Binary(ir.OpAdd, lsb, c(last/2-1))
		bits = b.Binary(ir.OpAnd, b.Binary(ir.OpAdd, bits, bias), c(^(last - 1)))
	}
	if eb < srcE {
		expMask := (int64(1)<<srcE - 1) << srcM
		srcBias := int64(1)<<(srcE-1) - 1
		reducedBias := int64(1)<<(eb-1) - 1
		exp := b.Binary(ir.OpAnd, bits, c(expMask))
		over := b.Compare(ir.CmpGT, exp, c((srcBias+reducedBias)<<srcM))
		under := b.Compare(ir.CmpLE, exp, c((srcBias-reducedBias)<<srcM))
		signed := b.Binary(ir.OpAnd, bits, c(-1<<(nbits-1)))
		bits = b.Select(over, b.Binary(ir.OpOr, signed, c(expMask)), b.Select(under, signed, bits))
	}
	out := b.BitcastConvert(bits, floatType)
	out = b.Select(b.Compare(ir.CmpNE, f, f), f, out) // NaN stays as it was
	if floatType != t.DType {
		out = b.Convert(out, t.DType)
	}
	return one(out), nil
}

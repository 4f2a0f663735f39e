package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

// Bitwise ops on integers: BitwiseAnd, BitwiseOr, BitwiseXor, Invert,
// LeftShift, RightShift (cwise_op_bitwise_*.cc, cwise_op_invert.cc,
// cwise_op_*_shift.cc) and PopulationCount (population_count_op.cc).
// TensorFlow's GPU registers them for every integer width; the device has
// int32, int64 and uint8.

// Ints are the integer dtypes the device supports.
var Ints = []ir.DType{ir.I32, ir.I64, ir.U8}

func init() {
	bin := func(name string, f func(c *Call, x, y ir.Value) ir.Value) {
		register(Kernel{Op: name, Constraints: T(Ints), Inputs: []string{"x", "y"}, Lower: lowerBinary(f)})
	}
	op := func(o ir.Op) func(c *Call, x, y ir.Value) ir.Value {
		return func(c *Call, x, y ir.Value) ir.Value { return c.B.Binary(o, x, y) }
	}
	bin("BitwiseAnd", op(ir.OpAnd))
	bin("BitwiseOr", op(ir.OpOr))
	bin("BitwiseXor", op(ir.OpXor))
	// The shifts clamp the amount to [0, bits-1] (functor::left_shift_op
	// and right_shift_op in cwise_ops.h); the right shift is arithmetic for
	// signed integers, logical for unsigned ones.
	bin("LeftShift", func(c *Call, x, y ir.Value) ir.Value { return c.B.Binary(ir.OpShiftLeft, x, clampShift(c, y)) })
	bin("RightShift", func(c *Call, x, y ir.Value) ir.Value {
		o := ir.OpShiftRightArithmetic
		if c.B.Type(x).DType.IsUnsigned() {
			o = ir.OpShiftRightLogical
		}
		return c.B.Binary(o, x, clampShift(c, y))
	})
	register(Kernel{Op: "Invert", Constraints: T(Ints), Inputs: []string{"x"},
		Lower: lowerUnary(func(c *Call, x ir.Value) ir.Value { return c.B.Unary(ir.OpNot, x) })})
	register(Kernel{Op: "PopulationCount", Constraints: T(Ints), Inputs: []string{"x"}, Lower: lowerUnary(popCount)})
}

// clampShift clamps shift amounts to [0, bits-1].
func clampShift(c *Call, y ir.Value) ir.Value {
	bits := float64(8 * c.B.Type(y).DType.Size())
	return c.B.Binary(ir.OpMin, c.B.Binary(ir.OpMax, y, like(c.B, y, 0)), like(c.B, y, bits-1))
}

// bitsLike is a tensor shaped as x, of x's dtype, holding the low bits of
// pattern in every element (int64's patterns are not exact in a float).
func bitsLike(b *ir.Builder, x ir.Value, pattern uint64) ir.Value {
	t := b.Type(x)
	return b.BroadcastInDim(b.Convert(i64Constant(b, nil, []int64{int64(pattern)}), t.DType), t.Shape, nil)
}

// popCount counts each element's set bits, as uint8, by the parallel bit
// count: pairs, nibbles and bytes summed in place (logical shifts, so the
// sign bit counts like any other), then the bytes folded onto the lowest.
func popCount(c *Call, x ir.Value) ir.Value {
	b := c.B
	width := 8 * b.Type(x).DType.Size()
	shr := func(v ir.Value, n int) ir.Value { return b.Binary(ir.OpShiftRightLogical, v, like(b, v, float64(n))) }
	and := func(v ir.Value, m uint64) ir.Value { return b.Binary(ir.OpAnd, v, bitsLike(b, v, m)) }
	x = b.Binary(ir.OpSub, x, and(shr(x, 1), 0x5555555555555555))
	x = b.Binary(ir.OpAdd, and(x, 0x3333333333333333), and(shr(x, 2), 0x3333333333333333))
	x = and(b.Binary(ir.OpAdd, x, shr(x, 4)), 0x0f0f0f0f0f0f0f0f)
	for s := 8; s < width; s *= 2 {
		x = b.Binary(ir.OpAdd, x, shr(x, s))
	}
	return b.Convert(and(x, 0x7f), ir.U8)
}

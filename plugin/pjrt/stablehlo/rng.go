package stablehlo

import (
	"math"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// rngBitGenerator is rng_bit_generator (lax.rng_bit_generator, and the
// rbg and unsafe_rbg PRNGs' random bits): the output filled with random
// bits from a ui64 state, and the state advanced past them. Its bits are
// Philox4x32-10 (the IR's Rng) for every rng_algorithm: StableHLO leaves
// the bits to the implementation, and jax documents that they differ
// between backends. The state's first word is the key and the next two
// (or the second and zero) the 128-bit counter, as XLA's Philox reads
// them; each 128-bit block the output takes advances the counter by one.
func rngBitGenerator(e *env, op *mlir.Operation) ([]ir.Value, error) {
	if len(op.Operands) != 1 || len(op.Results) != 2 {
		return nil, invalid(op, "has %d operands and %d results, want the state, and the state and the bits", len(op.Operands), len(op.Results))
	}
	state, err := e.value(op, op.Operands[0])
	if err != nil {
		return nil, err
	}
	st := e.b.Type(state)
	if st.DType != ir.I64 || st.Shape.Rank() != 1 || (st.Shape[0] != 2 && st.Shape[0] != 3) || !heldUnsigned(op.Operands[0].Type) {
		return nil, unsupported(op, "a state of %s (the state is ui64[2] or ui64[3])", op.Operands[0].Type)
	}
	out, err := resultType(op, 1)
	if err != nil {
		return nil, err
	}
	var draw ir.DType // what the IR's Rng draws: raw 32 or 64 bits
	switch out.DType {
	case ir.U8, ir.I16, ir.U32:
		draw = ir.I32
	case ir.I64:
		draw = ir.I64
	default:
		return nil, unsupported(op, "random bits of %s (rng_bit_generator gives ui8, ui16, ui32 and ui64)", mlir.ElementType(op.Results[1].Type))
	}
	if it, ok := mlir.ElementType(op.Results[1].Type).(*mlir.IntegerType); !ok || it.Signedness != mlir.Unsigned {
		return nil, unsupported(op, "random bits of %s (rng_bit_generator gives unsigned integers)", mlir.ElementType(op.Results[1].Type))
	}
	key := e.b.Slice(state, []int{0}, []int{1}, []int{1})
	var counter ir.Value
	if st.Shape[0] == 3 {
		counter = e.b.Slice(state, []int{1}, []int{3}, []int{1})
	} else {
		counter = e.b.Concat(0, e.b.Slice(state, []int{1}, []int{2}, []int{1}), intConst(e.b, ir.I64, ir.Shape{1}, 0))
	}
	bits := e.b.Rng(key, counter, ir.RngUniform, ir.TensorType{DType: draw, Shape: out.Shape})
	switch out.DType {
	case ir.U32:
		bits = e.b.BitcastConvert(bits, ir.U32)
	case ir.U8:
		bits = e.b.Convert(e.b.Binary(ir.OpAnd, bits, intConst(e.b, ir.I32, out.Shape, 0xff)), ir.U8)
	case ir.I16:
		// The low 16 bits, sign-extended, so that the conversion is exact.
		sixteen := intConst(e.b, ir.I32, out.Shape, 16)
		bits = e.b.Convert(e.b.Binary(ir.OpShiftRightArithmetic, e.b.Binary(ir.OpShiftLeft, bits, sixteen), sixteen), ir.I16)
	}
	// One 128-bit block per four 32-bit or two 64-bit draws (a last
	// partial block is whole).
	per := 4
	if draw == ir.I64 {
		per = 2
	}
	n := out.Shape.Size()
	blocks := int64((n + per - 1) / per)
	lo := e.b.Slice(counter, []int{0}, []int{1}, []int{1})
	hi := e.b.Slice(counter, []int{1}, []int{2}, []int{1})
	next := e.b.Binary(ir.OpAdd, lo, intConst(e.b, ir.I64, ir.Shape{1}, blocks))
	// The carry: next < lo as unsigned numbers, compared as signed ones
	// with the sign bit flipped.
	flip := intConst(e.b, ir.I64, ir.Shape{1}, math.MinInt64)
	carried := e.b.Compare(ir.CmpLT, e.b.Binary(ir.OpXor, next, flip), e.b.Binary(ir.OpXor, lo, flip))
	hi = e.b.Binary(ir.OpAdd, hi, e.b.Convert(carried, ir.I64))
	parts := []ir.Value{key, next}
	if st.Shape[0] == 3 {
		parts = append(parts, hi)
	}
	return []ir.Value{e.b.Concat(0, parts...), bits}, nil
}

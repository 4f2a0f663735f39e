package stablehlo

// Conversions: convert, bitcast_convert (of one width and between widths),
// reduce_precision, and the unsigned types held as signed bits.

import (
	"math"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// convert follows StableHLO (and XLA's CPU, measured with jaxlib 0.12):
// the IR's convert already truncates floats toward zero and saturates them
// at the integer range with NaN giving 0, wraps integers, and maps nonzero
// (NaN included) to true. To complex it sets the real part; from complex to
// a real type StableHLO leaves the result undefined, which is an error.
func convert(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, err := oneOperand(e, op)
	if err != nil {
		return nil, err
	}
	rt, err := resultType(op, 0)
	if err != nil {
		return nil, err
	}
	b := e.b
	from := b.Type(x).DType
	if n, ok := narrowOf(op.Results[0].Type); ok && !n.float && from.IsFloat() {
		// XLA saturates a float at the integer type's range (NaN to 0),
		// the narrow one's too: clamp first, then convert (the result
		// is wrapped to its width after the op, a no-op here).
		lo, hi := 0.0, float64(int(1)<<n.bits-1)
		if n.signed {
			lo, hi = -float64(int(1)<<(n.bits-1)), float64(int(1)<<(n.bits-1)-1)
		}
		if from != ir.F32 && from != ir.F64 {
			x, from = b.Convert(x, ir.F32), ir.F32
		}
		s := b.Type(x).Shape
		x = b.Binary(ir.OpMin, b.Binary(ir.OpMax, x, floatConst(b, from, s, lo)), floatConst(b, from, s, hi))
		return one(b.Convert(x, rt.DType)), nil
	}
	heldFrom, heldTo := heldUnsigned(op.Operands[0].Type), heldUnsigned(op.Results[0].Type)
	if heldFrom && from == ir.I16 && !(heldTo && rt.DType == ir.I16) {
		x, from, heldFrom = zeroExtend16(b, x), ir.I32, false // the value, then as any int32
	}
	switch {
	case from == rt.DType:
		return one(x), nil
	case rt.DType == ir.C64:
		re := b.Convert(x, ir.F32)
		return one(b.Complex(re, floatConst(b, ir.F32, rt.Shape, 0))), nil
	case from == ir.C64:
		return nil, unsupported(op, "a conversion from complex to %v (take real_v1 first)", rt.DType)
	case heldFrom && rt.DType.IsFloat():
		return one(u64ToFloat(b, x, rt.DType)), nil
	case heldTo && rt.DType == ir.I64 && from.IsFloat():
		return one(floatToU64(b, x)), nil
	case heldTo && rt.DType == ir.I16 && from.IsFloat():
		// Saturate to [0, 65535] in int32, then keep the low 16 bits.
		w := b.Convert(x, ir.I32)
		s := b.Type(w).Shape
		w = b.Binary(ir.OpMin, b.Binary(ir.OpMax, w, intConst(b, ir.I32, s, 0)), intConst(b, ir.I32, s, 0xFFFF))
		return one(b.Convert(w, ir.I16)), nil
	}
	return one(b.Convert(x, rt.DType)), nil
}

// u64ToFloat converts ui64 values held as int64 bits: those below 2^63 as
// they are; the others halved, keeping the lost bit (round to odd, so the
// final rounding is right), converted and doubled.
func u64ToFloat(b *ir.Builder, x ir.Value, d ir.DType) ir.Value {
	s := b.Type(x).Shape
	small := b.Compare(ir.CmpGE, x, intConst(b, ir.I64, s, 0))
	half := b.Binary(ir.OpOr, b.Binary(ir.OpShiftRightLogical, x, intConst(b, ir.I64, s, 1)), b.Binary(ir.OpAnd, x, intConst(b, ir.I64, s, 1)))
	cd := d
	if d != ir.F64 {
		cd = ir.F32 // halves double to f16's or bf16's infinity correctly from f32
	}
	f := b.Convert(half, cd)
	big := b.Binary(ir.OpAdd, f, f)
	return b.Convert(b.Select(small, b.Convert(x, cd), big), d)
}

// floatToU64 is XLA's saturating conversion to ui64 (NaN and negatives to
// 0, 2^64 and above to all ones), as int64 bits: values from 2^63 on are
// converted less 2^63 with the top bit set back.
func floatToU64(b *ir.Builder, x ir.Value) ir.Value {
	t := b.Type(x)
	if t.DType != ir.F64 {
		x = b.Convert(x, ir.F32)
		t.DType = ir.F32
	}
	v := b.Binary(ir.OpMax, x, floatConst(b, t.DType, t.Shape, 0)) // NaN stays NaN, converts to 0
	two63 := floatConst(b, t.DType, t.Shape, 1<<63)
	big := b.Compare(ir.CmpGE, v, two63)
	hi := b.Binary(ir.OpXor, b.Convert(b.Binary(ir.OpSub, v, two63), ir.I64), intConst(b, ir.I64, t.Shape, math.MinInt64))
	return b.Select(big, hi, b.Convert(v, ir.I64))
}

func bitcastConvert(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, err := oneOperand(e, op)
	if err != nil {
		return nil, err
	}
	rt, err := resultType(op, 0)
	if err != nil {
		return nil, err
	}
	b := e.b
	if _, ok := narrowOf(op.Operands[0].Type); ok {
		v, err := narrowBitcast(b, op, x, rt)
		return one(v), err
	}
	if _, ok := narrowOf(op.Results[0].Type); ok {
		v, err := narrowBitcast(b, op, x, rt)
		return one(v), err
	}
	t := b.Type(x)
	if t.DType == ir.Bool || rt.DType == ir.Bool {
		return nil, unsupported(op, "a bitcast from %v to %v (not of bool)", t, rt)
	}
	wf, wt := bits(t.DType), bits(rt.DType)
	switch {
	case t.DType == rt.DType:
		return one(x), nil
	case wf == wt:
		return one(b.BitcastConvert(x, rt.DType)), nil
	case wf < wt:
		if n := t.Shape.Rank(); n == 0 || t.Shape[n-1] != wt/wf {
			return nil, invalid(op, "a bitcast from %v to %v needs a last dim of %d", t, rt.DType, wt/wf)
		}
		return one(bitcastJoin(b, x, wf, wt, rt.DType)), nil
	}
	return one(bitcastSplit(b, x, wf, wt, rt.DType)), nil
}

// bitcastJoin is a bitcast to a wider type: the last dim's r = ww/wn
// elements become one, the first the least significant (the bytes in
// memory order, little-endian; a sub-byte type's elements likewise, as
// XLA packs them). x's elements are wn bits wide, in the low bits of its
// dtype when wn is below the dtype's width (a narrow integer's codes); the
// result is to (an integer dtype when ww is below its width: the bits in
// the low ones, the others clear).
func bitcastJoin(b *ir.Builder, x ir.Value, wn, ww int, to ir.DType) ir.Value {
	t := b.Type(x)
	r := ww / wn
	s := t.Shape // its last dim is r, checked by the caller
	out := s[:s.Rank()-1].Clone()
	wd, _ := sameWidthInt(to, false)
	v := x
	if t.DType.IsFloat() {
		nd, _ := sameWidthInt(t.DType, false)
		v = b.BitcastConvert(x, nd)
	}
	var acc ir.Value
	for i := range r {
		start, limit := make([]int, s.Rank()), s.Clone()
		start[s.Rank()-1], limit[s.Rank()-1] = i, i+1
		part := b.Reshape(b.Slice(v, start, limit, filled(s.Rank(), 1)), out)
		// Converting to the wide integer sign-extends a signed part:
		// the mask keeps its own bits.
		part = b.Binary(ir.OpAnd, b.Convert(part, wd), intConst(b, wd, out, int64(uint64(1)<<wn-1)))
		if i > 0 {
			part = b.Binary(ir.OpShiftLeft, part, intConst(b, wd, out, int64(i*wn)))
			part = b.Binary(ir.OpOr, acc, part)
		}
		acc = part
	}
	if to == wd {
		return acc
	}
	return b.BitcastConvert(acc, to)
}

// bitcastSplit is a bitcast to a narrower type: each element (ww bits, the
// low ones of its dtype when ww is below the dtype's width) becomes a new
// last dim of r = ww/wn elements, least significant first. Elements below
// 8 bits are made as U8 codes, the bits in the low ones; to is their
// dtype otherwise.
func bitcastSplit(b *ir.Builder, x ir.Value, ww, wn int, to ir.DType) ir.Value {
	t := b.Type(x)
	r := ww / wn
	wd, _ := sameWidthInt(t.DType, false)
	nd, _ := sameWidthInt(to, false)
	if wn < 8 {
		nd = ir.U8
	}
	v := x
	if t.DType != wd {
		v = b.BitcastConvert(x, wd)
	}
	shape := append(t.Shape.Clone(), 1)
	parts := make([]ir.Value, r)
	for i := range r {
		p := v
		if i > 0 {
			p = b.Binary(ir.OpShiftRightLogical, v, intConst(b, wd, t.Shape, int64(i*wn)))
		}
		p = b.Convert(p, nd) // integer conversions wrap: the low bits
		if wn < 8 {
			p = b.Binary(ir.OpAnd, p, intConst(b, nd, t.Shape, 1<<wn-1))
		}
		parts[i] = b.Reshape(p, shape)
	}
	out := b.Concat(len(shape)-1, parts...)
	if to == nd {
		return out
	}
	return b.BitcastConvert(out, to)
}

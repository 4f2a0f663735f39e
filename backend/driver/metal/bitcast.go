package metal

import (
	"math"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	registerLowering(lowerBitcast, ir.OpBitcastConvert)
	// The result is the operand's bits: rounding it to its half type again
	// would quieten a signalling bfloat16 NaN.
	exactOnHalves[ir.OpBitcastConvert] = true
}

// lowerBitcast reads each element's bits as another type of the same width
// (the IR has no bitcast between widths: a frontend splits or joins the
// elements with shifts around one of these). Between integers that is the
// wrapping conversion, exact on every release. Otherwise the value goes to
// its bits as a signed integer of its width, held in the graph, and from
// there to the result's physical form: float32 and the integers by
// reinterpretCast, bfloat16 (float32 holding its bits in the upper half)
// by shifts, float16 (float32 holding its value) by casts. A NaN's sign and
// payload survive: its bits move only through reinterpretCast, integer ops
// and select, never through float arithmetic (which MPSGraph may
// canonicalise), and float16's NaNs, whose casts could do the same, are
// rebuilt bit by bit beside them.
func lowerBitcast(l *lowering, in ir.Instr, args []val) (tensor, error) {
	x := args[0].t
	src, dst := args[0].typ.DType, in.Type.DType
	switch {
	case src == dst:
		return l.identity(x), nil
	case src.IsInt() && dst.IsInt():
		if l.g.Has(gpu.OpReinterpretCast) {
			return l.reinterpret(x, mustPhys(dst)), nil
		}
		return l.intToInt(x, src, dst)
	}
	if !l.g.Has(gpu.OpReinterpretCast) {
		return tensor{}, fallback(in.Op, "%v to %v reads bits with reinterpretCastTensor (macOS 13.2)", src, dst)
	}
	switch {
	case src == ir.C64:
		return l.complexBits(x, args[0].typ), nil
	case dst == ir.C64:
		return l.complexFromBits(x, in.Type), nil
	}
	return l.fromBits(l.bitsOf(x, src), dst), nil
}

// bitsOf is a physical value's bits as the signed integer type of d's
// width. Callers check for reinterpretCast and bitwise ops.
func (l *lowering) bitsOf(x tensor, d ir.DType) tensor {
	switch d {
	case ir.F32, ir.U32:
		return l.reinterpret(x, i32)
	case ir.U8:
		return l.reinterpret(x, gpu.Int8)
	case ir.BF16:
		// The value is a bfloat16 (every op rounds to it), so the lower
		// half is zero; the upper half, shifted down with its sign, is in
		// int16's range and casts exactly.
		return l.cast(l.shr(l.reinterpret(x, i32), l.scalar(16, i32)), gpu.Int16)
	case ir.F16:
		return l.f16Bits(x)
	}
	return x // the signed integers are their own bits
}

// fromBits is the physical value of dtype d whose bits are b, held as the
// signed integer type of d's width.
func (l *lowering) fromBits(b tensor, d ir.DType) tensor {
	switch d {
	case ir.F32:
		return l.reinterpret(b, gpu.Float32)
	case ir.U32:
		return l.reinterpret(b, gpu.UInt32)
	case ir.U8:
		return l.reinterpret(b, gpu.UInt8)
	case ir.BF16:
		v, _ := l.load(b, ir.BF16) // int16 bits are bfloat16's storage form
		return v
	case ir.F16:
		return l.f16FromBits(b)
	}
	return b
}

// f16Bits is the int16 bits of a float16 held as float32: the cast to
// float16 for numbers (exact, signed zeros and subnormals included), and
// for NaNs the sign and the top 10 payload bits (where a float16's payload
// sits in a float32), made nonzero if need be, put together with integer
// ops.
func (l *lowering) f16Bits(x tensor) tensor {
	num := l.reinterpret(l.cast(x, gpu.Float16), gpu.Int16)
	b := l.reinterpret(x, i32)
	sign := l.sel(l.lt(b, l.scalar(0, i32)), l.scalar(-0x8000, i32), l.scalar(0, i32))
	payload := l.band(l.shr(b, l.scalar(13, i32)), l.scalar(0x3ff, i32))
	payload = l.sel(l.eq(payload, l.scalar(0, i32)), l.scalar(0x200, i32), payload)
	nan := l.cast(l.bor(l.bor(sign, l.scalar(0x7c00, i32)), payload), gpu.Int16) // in int16's range: exact
	return l.sel(l.isNaN(x), nan, num)
}

// f16FromBits is the float16 whose int16 bits are b, held as float32: the
// cast from float16 for numbers, and NaNs rebuilt as float32 bits (sign,
// all-ones exponent, the payload in the top 10 fraction bits).
func (l *lowering) f16FromBits(b tensor) tensor {
	num := l.cast(l.reinterpret(b, gpu.Float16), gpu.Float32)
	w := l.cast(b, i32)
	exp := l.band(w, l.scalar(0x7c00, i32))
	frac := l.band(w, l.scalar(0x3ff, i32))
	isNaN := l.land(l.eq(exp, l.scalar(0x7c00, i32)), l.ne(frac, l.scalar(0, i32)))
	sign := l.sel(l.lt(w, l.scalar(0, i32)), l.scalar(math.MinInt32, i32), l.scalar(0, i32))
	nan := l.bor(l.bor(sign, l.scalar(0x7f800000, i32)), l.shl(frac, l.scalar(13, i32)))
	return l.sel(isNaN, l.reinterpret(nan, gpu.Float32), num)
}

// complexBits is the int64 whose bytes are a complex64's (physically
// float32 pairs): the real part's bits are the low word, the imaginary
// part's the high word.
func (l *lowering) complexBits(x tensor, t ir.TensorType) tensor {
	ps := physShape(t)
	r := len(ps) - 1
	w := l.reinterpret(x, i32)
	part := func(j int) tensor {
		starts, ends := make([]int, len(ps)), append([]int(nil), ps...)
		starts[r], ends[r] = j, j+1
		return l.cast(l.reshape(l.slice(w, starts, ends, ones(len(ps))), physShape(ir.TensorType{DType: ir.I64, Shape: t.Shape})), i64)
	}
	lo := l.band(part(0), l.intConst(1<<32-1, i64))
	hi := l.shl(part(1), l.scalar(32, i64))
	return l.bor(lo, hi)
}

// complexFromBits is the complex64 whose bytes are an int64's: the low
// word's bits are the real part, the high word's the imaginary part.
func (l *lowering) complexFromBits(x tensor, t ir.TensorType) tensor {
	lo, _ := l.low32(x, ir.I64)                    // bitwise ops are there: the caller checked
	hi := l.cast(l.shr(x, l.scalar(32, i64)), i32) // the arithmetic shift leaves int32's range: exact
	pair := append([]int(nil), t.Shape...)
	pair = append(pair, 1)
	re := l.reshape(l.reinterpret(lo, gpu.Float32), pair)
	im := l.reshape(l.reinterpret(hi, gpu.Float32), pair)
	return l.concat([]tensor{re, im}, len(pair)-1)
}

package metal

import (
	"fmt"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"

	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	registerLowering(lowerCompare, ir.OpCompare)
	registerLowering(lowerSelect, ir.OpSelect)
	registerLowering(lowerConvert, ir.OpConvert)
}

// lowerCompare compares with IEEE semantics (with a NaN operand everything
// but NE is false). Bools compare as their 0/1 bytes, so false < true.
// complex64 compares for equality only, both parts at once.
func lowerCompare(l *lowering, in ir.Instr, args []val) (tensor, error) {
	x, y := args[0].t, args[1].t
	var c tensor
	switch in.Compare {
	case ir.CmpEQ:
		c = l.eq(x, y)
	case ir.CmpNE:
		c = l.ne(x, y)
	case ir.CmpLT:
		c = l.lt(x, y)
	case ir.CmpLE:
		c = l.le(x, y)
	case ir.CmpGT:
		c = l.gt(x, y)
	case ir.CmpGE:
		c = l.ge(x, y)
	default:
		return tensor{}, fmt.Errorf("unknown comparison %v", in.Compare)
	}
	r := l.boolToU8(c)
	if args[0].typ.DType == ir.C64 {
		last := len(physShape(args[0].typ)) - 1
		switch in.Compare {
		case ir.CmpEQ: // both parts equal
			r = l.cast(l.reduceMin(l.cast(r, i32), []int{last}), gpu.UInt8)
		case ir.CmpNE: // either part differs
			r = l.cast(l.reduceMax(l.cast(r, i32), []int{last}), gpu.UInt8)
		default:
			return tensor{}, fallback(in.Op, "complex64 has no order")
		}
		r = l.toShape(r, in.Type)
	}
	return r, nil
}

// lowerSelect picks elementwise; a complex64 predicate broadcasts over the
// real and imaginary parts.
func lowerSelect(l *lowering, in ir.Instr, args []val) (tensor, error) {
	p := l.pred(args[0].t)
	if in.Type.DType == ir.C64 {
		p = l.reshape(p, append(in.Type.Shape.Clone(), 1))
	}
	return l.sel(p, args[1].t, args[2].t), nil
}

// lowerConvert follows the host driver: integers wrap to narrower or
// differently signed integers (keeping the low bits), floats truncate toward
// zero into integers, saturating, with NaN going to 0, and anything nonzero
// (NaN included) is true. MPSGraph's cast leaves out-of-range conversions
// unspecified, so those cases are composed.
func lowerConvert(l *lowering, in ir.Instr, args []val) (tensor, error) {
	x := args[0].t
	src, dst := args[0].typ.DType, in.Type.DType
	dt := mustPhys(dst)
	switch {
	case src == ir.C64 || dst == ir.C64:
		return tensor{}, fallback(in.Op, "conversions to or from complex64 are not defined")
	case src == dst:
		return l.identity(x), nil
	case dst == ir.Bool:
		return l.boolToU8(l.ne(x, l.scalar(0, mustPhys(src)))), nil
	case src == ir.Bool, !src.IsFloat() && dst.IsFloat():
		return l.cast(x, dt), nil
	case src.IsFloat() && dst.IsFloat():
		return l.identity(x), nil // float32 either way; the result is rounded to a half type after
	case src.IsFloat():
		return l.floatToInt(x, dst), nil
	}
	return l.intToInt(x, src, dst)
}

// floatToInt truncates toward zero and saturates at dst's range; NaN gives 0.
func (l *lowering) floatToInt(x tensor, dst ir.DType) tensor {
	dt := mustPhys(dst)
	f32 := gpu.Float32
	lo, hi := dst.Range()
	// float32(hi) may round up (2^31, 2^63): values at or above it saturate
	// and never reach the cast, which could overflow.
	tooHigh := l.ge(x, l.scalar(float64(float32(hi)), f32))
	tooLow := l.le(x, l.scalar(lo, f32))
	nan := l.isNaN(x)
	safe := l.sel(l.lor(l.lor(tooHigh, tooLow), nan), l.scalar(0, f32), l.trunc(x))
	v := l.cast(safe, dt)
	v = l.sel(tooHigh, l.extremeConst(dst, true), v)
	v = l.sel(tooLow, l.extremeConst(dst, false), v)
	return v
}

// intToInt converts between integer types, wrapping as two's complement
// does. MPSGraph's cast leaves out-of-range integer conversions unspecified,
// so only exact ones are casts: the value's low 32 bits are found as an
// int32 (low32), then wrapped into the destination (narrow), or read as
// unsigned.
func (l *lowering) intToInt(x tensor, src, dst ir.DType) (tensor, error) {
	dt := mustPhys(dst)
	slo, shi := src.Range()
	dlo, dhi := dst.Range()
	if slo >= dlo && shi <= dhi {
		return l.cast(x, dt), nil // widening: exact
	}
	v, err := l.low32(x, src)
	if err != nil {
		return tensor{}, err
	}
	switch dst {
	case ir.I32:
		return v, nil
	case ir.U32: // through int64, where v + 2^32 is exact
		w := l.cast(v, i64)
		w = l.sel(l.lt(w, l.scalar(0, i64)), l.add(w, l.intConst(1<<32, i64)), w)
		return l.cast(w, dt), nil
	}
	return l.narrow(v, dst), nil
}

// low32 is an integer value's low 32 bits, as int32.
func (l *lowering) low32(x tensor, src ir.DType) (tensor, error) {
	switch src {
	case ir.I32:
		return x, nil
	case ir.I8, ir.I16, ir.U8, ir.Bool:
		return l.cast(x, i32), nil
	case ir.U32: // exact in int64, then into int32's range
		w := l.cast(x, i64)
		w = l.sel(l.ge(w, l.intConst(1<<31, i64)), l.sub(w, l.intConst(1<<32, i64)), w)
		return l.cast(w, i32), nil
	case ir.I64:
		w := l.band(x, l.intConst(1<<32-1, i64))
		w = l.sel(l.ge(w, l.intConst(1<<31, i64)), l.sub(w, l.intConst(1<<32, i64)), w)
		return l.cast(w, i32), nil
	}
	return tensor{}, fmt.Errorf("low32 of %v", src)
}

// Narrow integers (int8, int16, uint8 and the 0/1 bytes of bool) compute in
// int32: MPSGraph's division, remainder, reductions and scatter have int32
// kernels, not 8- or 16-bit ones (see package gpu's contract). Addition and
// multiplication modulo 2^32 keep the low bits that modulo 2^8 or 2^16
// would, so wrapping the int32 result back (narrow) is exact.

// isNarrow reports a dtype that computes in int32.
func isNarrow(d ir.DType) bool { return d == ir.I8 || d == ir.I16 || d == ir.U8 || d == ir.Bool }

// widen is x in int32 when d is narrow, else x.
func (l *lowering) widen(x tensor, d ir.DType) tensor {
	if isNarrow(d) {
		return l.cast(x, i32)
	}
	return x
}

// narrow wraps an int32 value into an 8- or 16-bit type (or bool's 0/1),
// keeping the low bits, with floor modulo on int32 (which every release
// has) and an exact cast of the in-range result.
func (l *lowering) narrow(v tensor, d ir.DType) tensor {
	dt := mustPhys(d)
	if d == ir.Bool {
		return l.cast(l.ne(v, l.scalar(0, i32)), dt)
	}
	bits := 8 * d.Size()
	mod := l.scalar(float64(int64(1)<<bits), i32)
	m := l.floorMod(v, mod)
	m = l.sel(l.lt(m, l.scalar(0, i32)), l.add(m, mod), m) // in [0, 2^bits) whichever sign floorMod gives
	if d != ir.U8 {
		half := l.scalar(float64(int64(1)<<(bits-1)), i32)
		m = l.sel(l.ge(m, half), l.sub(m, mod), m)
	}
	return l.cast(m, dt)
}

//go:build darwin

package metal

import (
	"fmt"

	"github.com/progrium/darwinkit/macos/mps"

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
			r = l.reduceMin(r, []int{last})
		case ir.CmpNE: // either part differs
			r = l.reduceMax(r, []int{last})
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
	return l.intToInt(x, src, dst), nil
}

// floatToInt truncates toward zero and saturates at dst's range; NaN gives 0.
func (l *lowering) floatToInt(x tensor, dst ir.DType) tensor {
	dt := mustPhys(dst)
	f32 := mps.DataTypeFloat32
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

// intToInt converts between integer types, wrapping as two's complement does.
func (l *lowering) intToInt(x tensor, src, dst ir.DType) tensor {
	dt := mustPhys(dst)
	slo, shi := src.Range()
	dlo, dhi := dst.Range()
	if slo >= dlo && shi <= dhi {
		return l.cast(x, dt) // widening: exact
	}
	// Narrowing or changing sign: dst has at most 32 bits here (nothing
	// narrows to int64), so 2^bits fits the wider working type.
	w := i32
	if src == ir.I64 || dst == ir.I64 || dst == ir.I32 {
		w = i64
	}
	bits := 8 * dst.Size()
	mod := l.intConst(1<<bits, w)
	m := l.floorMod(l.cast(x, w), mod)
	m = l.sel(l.lt(m, l.scalar(0, w)), l.add(m, mod), m) // in [0, 2^bits) whichever way floorMod rounds
	if dst != ir.U8 {
		half := l.intConst(1<<(bits-1), w)
		m = l.sel(l.ge(m, half), l.sub(m, mod), m)
	}
	return l.cast(m, dt)
}

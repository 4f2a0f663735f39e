package ir

import (
	"encoding/binary"
	"fmt"
	"math"
)

// EncodeScalar returns v converted to dtype d, as d's little-endian bytes.
func EncodeScalar(d DType, v float64) ([]byte, error) {
	buf := make([]byte, d.Size())
	switch d {
	case F32:
		binary.LittleEndian.PutUint32(buf, math.Float32bits(float32(v)))
	case F64:
		binary.LittleEndian.PutUint64(buf, math.Float64bits(v))
	case F16:
		binary.LittleEndian.PutUint16(buf, F32ToF16(float32(v)))
	case BF16:
		binary.LittleEndian.PutUint16(buf, F32ToBF16(float32(v)))
	case I8:
		buf[0] = byte(int8(clampInt(v, math.MinInt8, math.MaxInt8)))
	case U8:
		buf[0] = byte(clampInt(v, 0, math.MaxUint8))
	case I16:
		binary.LittleEndian.PutUint16(buf, uint16(int16(clampInt(v, math.MinInt16, math.MaxInt16))))
	case I32:
		binary.LittleEndian.PutUint32(buf, uint32(int32(clampInt(v, math.MinInt32, math.MaxInt32))))
	case U32:
		binary.LittleEndian.PutUint32(buf, uint32(clampInt(v, 0, math.MaxUint32)))
	case I64:
		binary.LittleEndian.PutUint64(buf, uint64(clampInt(v, math.MinInt64, math.MaxInt64)))
	case Bool:
		if v != 0 {
			buf[0] = 1
		}
	default:
		return nil, fmt.Errorf("ir: no scalar encoding for %v", d)
	}
	return buf, nil
}

// clampInt converts v to an integer in [lo,hi]: infinities saturate, so that
// "the lowest value" constants such as -inf for a max-reduction work on integers.
func clampInt(v float64, lo, hi float64) int64 {
	switch {
	case math.IsNaN(v):
		return 0
	case v <= lo:
		return int64(lo)
	case v >= hi:
		if hi == math.MaxInt64 {
			return math.MaxInt64
		}
		return int64(hi)
	}
	return int64(v)
}

// F32ToF16 rounds f to the nearest IEEE half, ties to even.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int((b >> 23) & 0xff)
	man := b & 0x7fffff
	switch {
	case exp == 0xff: // inf or nan
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp > 142: // overflow to inf
		return sign | 0x7c00
	case exp < 102: // below half the smallest subnormal: rounds to zero
		return sign
	case exp < 113: // subnormal half
		man |= 0x800000
		shift := uint(126 - exp)
		h := man >> shift
		rem := man & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(exp-112)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, which is the right answer
	}
	return sign | uint16(h)
}

// F16ToF32 widens an IEEE half exactly.
func F16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0:
		if man == 0 {
			return math.Float32frombits(sign)
		}
		for man&0x400 == 0 {
			man <<= 1
			exp--
		}
		exp++
		man &= 0x3ff
	}
	return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
}

// F32ToBF16 rounds f to the nearest bfloat16, ties to even.
func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40 // quiet nan
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// BF16ToF32 widens a bfloat16 exactly.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

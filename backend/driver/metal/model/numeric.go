package model

import (
	"math"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
)

// Rounding, bit encodings and conversions between the element types. The
// conversions here are Cast's, and also what constants, fills and pad
// values go through.

// arith is the result of float arithmetic, x, rounded to dt. The sign and
// payload of a NaN that arithmetic gives are unspecified (MPSGraph does not
// say it keeps an operand's; GPUs commonly give one canonical NaN), so the
// model never keeps them: any NaN result
// of arithmetic is the positive quiet NaN with no payload. A lowering that
// must keep a NaN's bits moves them with data movement, select or
// reinterpretCast. Casts keep a NaN's payload (roundTo), as IEEE 754's
// conversions do.
func arith(dt gpu.DataType, x float64) float64 {
	if x != x {
		return canonicalNaN
	}
	return roundTo(dt, x)
}

// canonicalNaN is float32's quiet NaN 0x7fc00000 (float16's 0x7e00).
var canonicalNaN = f32frombits(0x7fc00000)

// roundTo rounds x to the nearest value of the float type dt, ties to even.
func roundTo(dt gpu.DataType, x float64) float64 {
	switch dt {
	case gpu.Float32:
		return round32(x)
	case gpu.Float16:
		return round16(x)
	}
	return x
}

func round32(x float64) float64 {
	if x != x {
		return x // keep a NaN's payload: a conversion could quieten it
	}
	return float64(float32(x)) // Go rounds to nearest even, subnormals included
}

// round16 rounds x to float16 (1 sign, 5 exponent, 10 fraction bits):
// to a multiple of the quantum of x's binade, the subnormal quantum 2^-24
// below the smallest normal 2^-14, and to infinity from 65520 up (halfway
// between the largest finite 65504 and 65536, where ties go to even, the
// infinity).
func round16(x float64) float64 {
	if x != x || x == 0 || math.IsInf(x, 0) {
		return x
	}
	a := math.Abs(x)
	if a >= 65520 {
		return math.Copysign(math.Inf(1), x)
	}
	_, e := math.Frexp(a) // a in [2^(e-1), 2^e)
	exp := max(e-1, -14)
	q := math.Ldexp(1, exp-10)
	return math.Copysign(math.RoundToEven(a/q)*q, x)
}

// f32bits encodes x, exactly a float32, as its bits. A NaN keeps the top of
// its payload (a bit-exact round trip through reinterpretCast), made quiet
// only if nothing of it is left.
func f32bits(x float64) uint32 {
	if x != x {
		b := math.Float64bits(x)
		p := uint32(b>>29) & 0x7fffff
		if p == 0 {
			p = 1 << 22
		}
		return uint32(b>>63)<<31 | 0xff<<23 | p
	}
	return math.Float32bits(float32(x))
}

// f32frombits decodes float32 bits, moving a NaN's payload by hand: a
// float32 to float64 conversion would set the quiet bit of a signaling NaN.
func f32frombits(b uint32) float64 {
	if b&0x7f800000 == 0x7f800000 && b&0x7fffff != 0 {
		return math.Float64frombits(uint64(b>>31)<<63 | 0x7ff<<52 | uint64(b&0x7fffff)<<29)
	}
	return float64(math.Float32frombits(b))
}

// f16bits encodes x, exactly a float16, as its bits.
func f16bits(x float64) uint16 {
	var sign uint16
	if math.Signbit(x) {
		sign = 0x8000
	}
	a := math.Abs(x)
	switch {
	case x != x:
		p := uint16(math.Float64bits(x)>>42) & 0x3ff
		if p == 0 {
			p = 1 << 9
		}
		return sign | 0x7c00 | p
	case math.IsInf(x, 0):
		return sign | 0x7c00
	case a == 0:
		return sign
	case a < 0x1p-14:
		return sign | uint16(a/0x1p-24) // subnormal: a whole number of 2^-24
	}
	_, e := math.Frexp(a)
	exp := e - 1
	frac := uint16((math.Ldexp(a, -exp) - 1) * 1024)
	return sign | uint16(exp+15)<<10 | frac
}

func f16frombits(b uint16) float64 {
	sign := 1.0
	if b&0x8000 != 0 {
		sign = -1
	}
	exp, frac := int(b>>10)&0x1f, b&0x3ff
	switch exp {
	case 0:
		return sign * float64(frac) * 0x1p-24
	case 0x1f:
		if frac == 0 {
			return sign * math.Inf(1)
		}
		return math.Float64frombits(uint64(b>>15)<<63 | 0x7ff<<52 | uint64(frac)<<42)
	}
	return sign * math.Ldexp(1+float64(frac)/1024, exp-15)
}

// wrap reduces x modulo the width of dt (sign-extending signed types); bool
// is x != 0.
func wrap(dt gpu.DataType, x int64) int64 {
	switch dt {
	case gpu.Int8:
		return int64(int8(x))
	case gpu.Int16:
		return int64(int16(x))
	case gpu.Int32:
		return int64(int32(x))
	case gpu.UInt8:
		return int64(uint8(x))
	case gpu.UInt16:
		return int64(uint16(x))
	case gpu.UInt32:
		return int64(uint32(x))
	case gpu.Bool:
		return b2i(x != 0)
	}
	return x // int64, and uint64 as its bits
}

// intMax is the largest value of dt as held (uint64's is all ones, -1 as an
// int64). It is also the model's poison: what an undefined integer result
// (division by zero, an oversized shift) becomes.
func intMax(dt gpu.DataType) int64 {
	switch dt {
	case gpu.Int8:
		return math.MaxInt8
	case gpu.Int16:
		return math.MaxInt16
	case gpu.Int32:
		return math.MaxInt32
	case gpu.UInt8:
		return math.MaxUint8
	case gpu.UInt16:
		return math.MaxUint16
	case gpu.UInt32:
		return math.MaxUint32
	case gpu.UInt64:
		return -1
	case gpu.Bool:
		return 1
	}
	return math.MaxInt64
}

func intMin(dt gpu.DataType) int64 {
	switch dt {
	case gpu.Int8:
		return math.MinInt8
	case gpu.Int16:
		return math.MinInt16
	case gpu.Int32:
		return math.MinInt32
	case gpu.Int64:
		return math.MinInt64
	}
	return 0
}

// intLess orders held integers of dt: uint64 unsigned, the rest (whose held
// values are their values) signed.
func intLess(dt gpu.DataType, a, b int64) bool {
	if dt == gpu.UInt64 {
		return uint64(a) < uint64(b)
	}
	return a < b
}

// floatToInt converts as cast does: truncation toward zero. A NaN or a
// value outside the target's range is undefined in MPSGraph; the model gives
// the target's minimum (0 for unsigned types), which neither saturates nor
// wraps, so a lowering must clamp before casting.
func floatToInt(x float64, to gpu.DataType) int64 {
	if to == gpu.Bool {
		return b2i(x != 0) // NaN != 0: true
	}
	t := math.Trunc(x)
	var lo, hi float64 // lo inclusive, hi exclusive, both exact in float64
	switch to {
	case gpu.Int64:
		lo, hi = -(1 << 63), 1<<63
	case gpu.UInt64:
		lo, hi = 0, 1<<64
	default:
		lo, hi = float64(intMin(to)), float64(intMax(to))+1
	}
	if !(t >= lo && t < hi) {
		return intMin(to)
	}
	if to == gpu.UInt64 && t >= 1<<63 {
		return int64(uint64(t))
	}
	return int64(t)
}

// intToInt converts between integer types (bool as 0/1). A value outside
// the target's range is undefined in MPSGraph; the model saturates, so that
// code expecting two's-complement wrap-around (or a reinterpretation between
// same-size signed and unsigned types) fails: it must use reinterpretCast.
func intToInt(x int64, from, to gpu.DataType) int64 {
	if to == gpu.Bool {
		return b2i(x != 0)
	}
	if from == gpu.UInt64 && x < 0 { // a uint64 above MaxInt64
		if to == gpu.UInt64 {
			return x
		}
		return intMax(to)
	}
	if to == gpu.UInt64 {
		return max(x, 0)
	}
	return min(max(x, intMin(to)), intMax(to))
}

// intToFloat rounds an integer to the nearest float of type to, ties to
// even, in one rounding (Go's integer conversions round once).
func intToFloat(x int64, from, to gpu.DataType) float64 {
	if from == gpu.UInt64 {
		u := uint64(x)
		if to == gpu.Float32 {
			return float64(float32(u))
		}
		return round16(float64(u)) // exact below 2^53; above, infinity either way
	}
	if to == gpu.Float32 {
		return float64(float32(x))
	}
	return round16(float64(x))
}

// fromFloat64 converts a float64 attribute (a fill, scalar or pad value) to
// one element of dt, as cast would.
func fromFloat64(x float64, dt gpu.DataType) *value {
	v := newValue([]int{1}, dt)
	if dt.IsFloat() {
		v.f[0] = roundTo(dt, x)
	} else {
		v.i[0] = floatToInt(x, dt)
	}
	return v
}

// bits is element k of v as the little-endian bits of its type.
func (v *value) bits(k int) uint64 {
	switch v.dt {
	case gpu.Float32:
		return uint64(f32bits(v.f[k]))
	case gpu.Float16:
		return uint64(f16bits(v.f[k]))
	}
	n := uint(v.dt.Size()) * 8
	return uint64(v.i[k]) & (^uint64(0) >> (64 - n))
}

// setBits sets element k of v from the bits of its type. A bool byte other
// than 0 reads as true.
func (v *value) setBits(k int, b uint64) {
	switch v.dt {
	case gpu.Float32:
		v.f[k] = f32frombits(uint32(b))
	case gpu.Float16:
		v.f[k] = f16frombits(uint16(b))
	default:
		v.i[k] = wrap(v.dt, int64(b))
	}
}

// load sets element k from the little-endian bytes at the start of p.
func (v *value) load(k int, p []byte) {
	var b uint64
	for j := v.dt.Size() - 1; j >= 0; j-- {
		b = b<<8 | uint64(p[j])
	}
	v.setBits(k, b)
}

// store writes element k as little-endian bytes at the start of p.
func (v *value) store(k int, p []byte) {
	b := v.bits(k)
	for j := range v.dt.Size() {
		p[j] = byte(b >> (8 * j))
	}
}

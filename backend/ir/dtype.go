// Package ir is the op set both frontends lower to and every driver executes.
//
// Its semantics follow StableHLO: operands of an elementwise op have identical
// shapes (frontends insert BroadcastInDim), reductions and windows name their
// axes explicitly, and every value has one static shape and dtype. A program is
// a straight-line list of instructions in SSA form; drivers never see a
// TensorFlow or JAX type.
package ir

import (
	"fmt"
	"math"
)

// DType is an element type. The numbering is ours, not TensorFlow's: frontends
// translate at their boundary.
type DType uint8

const (
	Invalid DType = iota
	F32
	F16
	BF16
	F64
	I8
	I16
	I32
	I64
	U8
	Bool
	C64 // complex64: a float32 real part, then the imaginary part
	U32 // uint32: jax's random bits and bit manipulation
)

var dtypeInfo = [...]struct {
	name string
	size int
}{
	Invalid: {"invalid", 0},
	F32:     {"float32", 4},
	F16:     {"float16", 2},
	BF16:    {"bfloat16", 2},
	F64:     {"float64", 8},
	I8:      {"int8", 1},
	I16:     {"int16", 2},
	I32:     {"int32", 4},
	I64:     {"int64", 8},
	U8:      {"uint8", 1},
	Bool:    {"bool", 1},
	C64:     {"complex64", 8},
	U32:     {"uint32", 4},
}

// String is the dtype's name as users of TensorFlow and JAX spell it.
func (d DType) String() string {
	if int(d) < len(dtypeInfo) {
		return dtypeInfo[d].name
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// Size is the width of one element in bytes.
func (d DType) Size() int {
	if int(d) < len(dtypeInfo) {
		return dtypeInfo[d].size
	}
	return 0
}

// Valid reports whether d names a real element type.
func (d DType) Valid() bool { return d > Invalid && int(d) < len(dtypeInfo) }

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d == F32 || d == F16 || d == BF16 || d == F64 }

// IsInt reports whether d is a signed or unsigned integer type.
func (d DType) IsInt() bool {
	return d == I8 || d == I16 || d == I32 || d == I64 || d == U8 || d == U32
}

// IsUnsigned reports whether d is an unsigned integer type.
func (d DType) IsUnsigned() bool { return d == U8 || d == U32 }

// IntRange is the lowest and highest value of an integer or bool dtype; ok
// is false for the others.
func (d DType) IntRange() (lo, hi int64, ok bool) {
	switch d {
	case I8:
		return math.MinInt8, math.MaxInt8, true
	case I16:
		return math.MinInt16, math.MaxInt16, true
	case I32:
		return math.MinInt32, math.MaxInt32, true
	case I64:
		return math.MinInt64, math.MaxInt64, true
	case U8:
		return 0, math.MaxUint8, true
	case U32:
		return 0, math.MaxUint32, true
	case Bool:
		return 0, 1, true
	}
	return 0, 0, false
}

// Range is d's lowest and highest value as float64: infinities for floats,
// IntRange (the int64 bounds rounded) for the rest.
func (d DType) Range() (lo, hi float64) {
	if l, h, ok := d.IntRange(); ok {
		return float64(l), float64(h)
	}
	return math.Inf(-1), math.Inf(1)
}

// Wrap reduces x to d's values the way d's arithmetic does: two's
// complement for the signed integers, modulo the width for the unsigned,
// 0 or 1 for bool; other dtypes leave x as it is.
func (d DType) Wrap(x int64) int64 {
	switch d {
	case I8:
		return int64(int8(x))
	case I16:
		return int64(int16(x))
	case I32:
		return int64(int32(x))
	case U8:
		return int64(uint8(x))
	case U32:
		return int64(uint32(x))
	case Bool:
		if x != 0 {
			return 1
		}
	}
	return x
}

// IsNumeric reports whether real arithmetic is defined on d.
func (d DType) IsNumeric() bool { return d.IsFloat() || d.IsInt() }

// ParseDType maps a dtype name back to its DType.
func ParseDType(name string) (DType, error) {
	for d := F32; int(d) < len(dtypeInfo); d++ {
		if dtypeInfo[d].name == name {
			return d, nil
		}
	}
	return Invalid, fmt.Errorf("ir: unknown dtype %q", name)
}

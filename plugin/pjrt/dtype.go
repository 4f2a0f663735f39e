package pjrt

/*
#include "abi.h"
*/
import "C"

import (
	"fmt"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/status"
)

// bufType is a PJRT_Buffer_Type.
type bufType int

// bufTypeInfo is what we know of an element type: XLA's name for it (what
// jax prints), its width, and the IR dtype programs compute in, if any.
type bufTypeInfo struct {
	name string
	size int      // bytes per element; 0 for the types buffers cannot hold
	ir   ir.DType // ir.Invalid: buffers may hold it, programs cannot
}

var bufTypes = map[bufType]bufTypeInfo{
	C.PJRT_Buffer_Type_PRED:          {"pred", 1, ir.Bool},
	C.PJRT_Buffer_Type_S8:            {"s8", 1, ir.I8},
	C.PJRT_Buffer_Type_S16:           {"s16", 2, ir.I16},
	C.PJRT_Buffer_Type_S32:           {"s32", 4, ir.I32},
	C.PJRT_Buffer_Type_S64:           {"s64", 8, ir.I64},
	C.PJRT_Buffer_Type_U8:            {"u8", 1, ir.U8},
	C.PJRT_Buffer_Type_U16:           {"u16", 2, ir.Invalid},
	C.PJRT_Buffer_Type_U32:           {"u32", 4, ir.U32},
	C.PJRT_Buffer_Type_U64:           {"u64", 8, ir.Invalid},
	C.PJRT_Buffer_Type_F16:           {"f16", 2, ir.F16},
	C.PJRT_Buffer_Type_F32:           {"f32", 4, ir.F32},
	C.PJRT_Buffer_Type_F64:           {"f64", 8, ir.F64},
	C.PJRT_Buffer_Type_BF16:          {"bf16", 2, ir.BF16},
	C.PJRT_Buffer_Type_C64:           {"c64", 8, ir.C64},
	C.PJRT_Buffer_Type_C128:          {"c128", 16, ir.Invalid},
	C.PJRT_Buffer_Type_F8E5M2:        {"f8e5m2", 1, ir.Invalid},
	C.PJRT_Buffer_Type_F8E4M3FN:      {"f8e4m3fn", 1, ir.Invalid},
	C.PJRT_Buffer_Type_F8E4M3B11FNUZ: {"f8e4m3b11fnuz", 1, ir.Invalid},
	C.PJRT_Buffer_Type_F8E5M2FNUZ:    {"f8e5m2fnuz", 1, ir.Invalid},
	C.PJRT_Buffer_Type_F8E4M3FNUZ:    {"f8e4m3fnuz", 1, ir.Invalid},
	C.PJRT_Buffer_Type_S4:            {"s4", 1, ir.Invalid},
	C.PJRT_Buffer_Type_U4:            {"u4", 1, ir.Invalid},
	C.PJRT_Buffer_Type_TOKEN:         {"token", 0, ir.Invalid},
	C.PJRT_Buffer_Type_S2:            {"s2", 1, ir.Invalid},
	C.PJRT_Buffer_Type_U2:            {"u2", 1, ir.Invalid},
	C.PJRT_Buffer_Type_F8E4M3:        {"f8e4m3", 1, ir.Invalid},
	C.PJRT_Buffer_Type_F8E3M4:        {"f8e3m4", 1, ir.Invalid},
	C.PJRT_Buffer_Type_F8E8M0FNU:     {"f8e8m0fnu", 1, ir.Invalid},
	C.PJRT_Buffer_Type_F4E2M1FN:      {"f4e2m1fn", 1, ir.Invalid},
	C.PJRT_Buffer_Type_S1:            {"s1", 0, ir.Invalid},
	C.PJRT_Buffer_Type_U1:            {"u1", 0, ir.Invalid},
	C.PJRT_Buffer_Type_F6E2M3FN:      {"f6e2m3fn", 1, ir.Invalid},
	C.PJRT_Buffer_Type_F6E3M2FN:      {"f6e3m2fn", 1, ir.Invalid},
}

func (t bufType) String() string {
	if info, ok := bufTypes[t]; ok {
		return info.name
	}
	return fmt.Sprintf("PJRT_Buffer_Type(%d)", int(t))
}

// storable checks that a buffer can hold elements of t, and gives their
// width. Device memory holds whole bytes per element. The 4-, 6- and 2-bit
// types are a byte each, as jax hands them over and takes them back
// (ml_dtypes' storage: the value in the low bits; measured with jaxlib
// 0.12, a uint4[7] arrives as 7 bytes); the 1-bit types and tokens are
// refused.
func (t bufType) storable() (int, error) {
	info, ok := bufTypes[t]
	switch {
	case !ok:
		return 0, status.Invalidf("element type %d is not a PJRT_Buffer_Type", int(t))
	case info.size == 0:
		return 0, status.Errorf(status.Unimplemented, "element type %s is not supported by metalplug buffers (1-bit and token types are not)", info.name)
	}
	return info.size, nil
}

// typeOfIR is the PJRT type of an IR dtype (every IR dtype has one).
func typeOfIR(d ir.DType) (bufType, error) {
	for t, info := range bufTypes {
		if info.ir == d && d != ir.Invalid {
			return t, nil
		}
	}
	return 0, fmt.Errorf("IR dtype %v has no PJRT element type", d)
}

// boundaryType is the element type of a program's parameter or result of
// IR dtype d, marked held (Marks: 0 for none): held, which d must be as
// wide as, or d's own type.
func boundaryType(d ir.DType, held bufType) (bufType, error) {
	if held == 0 {
		return typeOfIR(d)
	}
	info, ok := bufTypes[held]
	if !ok || info.size != d.Size() {
		return 0, fmt.Errorf("IR dtype %v cannot hold %v", d, held)
	}
	return held, nil
}

// typeNamed is the PJRT type XLA names name (u16, f8e4m3fn).
func typeNamed(name string) (bufType, bool) {
	for t, info := range bufTypes {
		if info.name == name {
			return t, true
		}
	}
	return 0, false
}

// shapeString prints an array type as XLA does: f32[2,3].
func shapeString(t bufType, dims []int64) string {
	s := t.String() + "["
	for i, d := range dims {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprint(d)
	}
	return s + "]"
}

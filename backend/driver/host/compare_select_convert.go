package host

import (
	"fmt"
	"math"

	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	register(opKernel{make: compareKernel}, ir.OpCompare)
	register(opKernel{make: selectKernel}, ir.OpSelect)
	register(opKernel{make: convertKernel}, ir.OpConvert)
	register(opKernel{make: func(ir.Instr, []ir.TensorType) (kernel, error) { return bitcastKernel, nil }}, ir.OpBitcastConvert)
}

// bitcastKernel copies the bits: the dtypes have one width.
func bitcastKernel(out []byte, ins [][]byte) { copy(out, ins[0]) }

func compareKernel(in ir.Instr, at []ir.TensorType) (kernel, error) {
	dir := in.Compare
	switch at[0].DType {
	case ir.F32, ir.F64, ir.F16, ir.BF16:
		return forFloat(in, at, false, compareOf[float32](dir), compareOf[float64](dir))
	case ir.I8:
		return orUnsupported(compareOf[int8](dir), in, at)
	case ir.I16:
		return orUnsupported(compareOf[int16](dir), in, at)
	case ir.I32:
		return orUnsupported(compareOf[int32](dir), in, at)
	case ir.I64:
		return orUnsupported(compareOf[int64](dir), in, at)
	case ir.U8, ir.Bool: // bools are 0/1 bytes, so false < true falls out
		return orUnsupported(compareOf[uint8](dir), in, at)
	case ir.U32:
		return orUnsupported(compareOf[uint32](dir), in, at)
	}
	return nil, errUnsupported(in, at)
}

// compareOf relies on Go's IEEE comparisons: with a NaN operand everything
// but NE is false, as StableHLO's default (non-total) order says.
func compareOf[T numT](dir ir.CompareDir) kernel {
	loop := func(f func(a, b T) bool) kernel {
		return mapBinary(grainCheap, func(z []uint8, x, y []T) {
			x, y = x[:len(z)], y[:len(z)]
			for i := range z {
				z[i] = b2u(f(x[i], y[i]))
			}
		})
	}
	switch dir {
	case ir.CmpEQ:
		return loop(func(a, b T) bool { return a == b })
	case ir.CmpNE:
		return loop(func(a, b T) bool { return a != b })
	case ir.CmpLT:
		return loop(func(a, b T) bool { return a < b })
	case ir.CmpLE:
		return loop(func(a, b T) bool { return a <= b })
	case ir.CmpGT:
		return loop(func(a, b T) bool { return a > b })
	case ir.CmpGE:
		return loop(func(a, b T) bool { return a >= b })
	}
	return nil
}

// selectKernel moves elements by width: it never looks at their values.
func selectKernel(in ir.Instr, at []ir.TensorType) (kernel, error) {
	switch at[1].DType.Size() {
	case 1:
		return selectOf[uint8](), nil
	case 2:
		return selectOf[uint16](), nil
	case 4:
		return selectOf[uint32](), nil
	case 8:
		return selectOf[uint64](), nil
	}
	return nil, errUnsupported(in, at[1:])
}

func selectOf[T any]() kernel {
	return func(out []byte, ins [][]byte) {
		z, p, x, y := view[T](out), ins[0], view[T](ins[1]), view[T](ins[2])
		parallelFor(len(z), grainCheap, func(lo, hi int) {
			z, p, x, y := z[lo:hi], p[lo:hi], x[lo:hi], y[lo:hi]
			for i := range z {
				if p[i] != 0 {
					z[i] = x[i]
				} else {
					z[i] = y[i]
				}
			}
		})
	}
}

// convertKernel dispatches on the source dtype; convertFrom on the target.
// Half types travel through float32: the source is widened exactly, and the
// target is rounded from float32, as XLA's CPU and Eigen round float64 and
// integers to float16 and bfloat16 (twice, near a half type's tie).
func convertKernel(in ir.Instr, at []ir.TensorType) (kernel, error) {
	src, dst := at[0].DType, in.Type.DType
	if src == ir.C64 || dst == ir.C64 {
		// The builder allows it, but no frontend lowers to it yet, and which
		// part a real value lands in (or comes from) is a choice to make once.
		return nil, fmt.Errorf("convert from %v to %v is not supported by the host driver", src, dst)
	}
	var k kernel
	switch src {
	case ir.F32, ir.F16, ir.BF16:
		k = convertFrom[float32](dst)
	case ir.F64:
		k = convertFrom[float64](dst)
	case ir.I8:
		k = convertFrom[int8](dst)
	case ir.I16:
		k = convertFrom[int16](dst)
	case ir.I32:
		k = convertFrom[int32](dst)
	case ir.I64:
		k = convertFrom[int64](dst)
	case ir.U8:
		k = convertFrom[uint8](dst)
	case ir.U32:
		k = convertFrom[uint32](dst)
	case ir.Bool:
		k = convertFrom[uint8](dst)
		k = normalizeBool(k)
	}
	if k == nil {
		return nil, errUnsupported(in, at)
	}
	if isHalf(src) {
		k = halfKernel(src, []bool{true}, false, in.Type.Bytes(), k)
	}
	return k, nil
}

// normalizeBool makes any nonzero bool byte count as 1 before converting,
// so a C caller's stray 0xff still converts to 1.
func normalizeBool(k kernel) kernel {
	return func(out []byte, ins [][]byte) {
		src := ins[0]
		norm := make([]byte, len(src))
		for i, b := range src {
			norm[i] = b2u(b != 0)
		}
		k(out, [][]byte{norm})
	}
}

func convertFrom[S numT](dst ir.DType) kernel {
	switch dst {
	case ir.F32:
		return convertTo[S, float32](0, 0, 0, 0)
	case ir.F64:
		return convertTo[S, float64](0, 0, 0, 0)
	case ir.F16, ir.BF16:
		toF32 := convertTo[S, float32](0, 0, 0, 0)
		return func(out []byte, ins [][]byte) {
			tmp := make([]float32, len(out)/2)
			toF32(bytesOf(tmp), ins)
			narrow(dst, out, tmp)
		}
	case ir.I8:
		return convertTo[S, int8](math.MinInt8, math.MaxInt8, math.MinInt8, math.MaxInt8)
	case ir.I16:
		return convertTo[S, int16](math.MinInt16, math.MaxInt16, math.MinInt16, math.MaxInt16)
	case ir.I32:
		return convertTo[S, int32](math.MinInt32, math.MaxInt32, math.MinInt32, math.MaxInt32)
	case ir.I64:
		return convertTo[S, int64](math.MinInt64, math.MaxInt64, math.MinInt64, math.MaxInt64)
	case ir.U8:
		return convertTo[S, uint8](0, math.MaxUint8, 0, math.MaxUint8)
	case ir.U32:
		return convertTo[S, uint32](0, math.MaxUint32, 0, math.MaxUint32)
	case ir.Bool:
		return mapUnary(grainCheap, func(z []uint8, x []S) {
			x = x[:len(z)]
			for i, v := range x {
				z[i] = b2u(v != 0) // NaN != 0, so NaN is true, as in C
			}
		})
	}
	return nil
}

// convertTo converts elementwise. Integer to integer wraps (keeps the low
// bits); float to integer truncates toward zero and saturates at [lo,hi],
// with NaN going to 0, because Go leaves out-of-range conversions undefined.
// lo and hi are the bounds as floats (hi may round up, as 2^63 does for
// int64); dlo and dhi the exact bounds, since converting 2^63 would overflow.
func convertTo[S, D numT](lo, hi float64, dlo, dhi D) kernel {
	var s S
	var d D
	srcFloat, dstInt := isFloatType(s), !isFloatType(d)
	if srcFloat && dstInt {
		return mapUnary(grainCheap, func(z []D, x []S) {
			x = x[:len(z)]
			for i, v := range x {
				f := float64(v)
				switch {
				case f != f:
					z[i] = 0
				case f <= lo:
					z[i] = dlo
				case f >= hi:
					z[i] = dhi
				default:
					z[i] = D(f)
				}
			}
		})
	}
	return mapUnary(grainCheap, func(z []D, x []S) {
		x = x[:len(z)]
		for i, v := range x {
			z[i] = D(v)
		}
	})
}

func isFloatType(v any) bool {
	switch v.(type) {
	case float32, float64:
		return true
	}
	return false
}

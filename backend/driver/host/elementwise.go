package host

import (
	"unsafe"

	"math"

	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	register(opKernel{make: unaryKernel}, ir.UnaryOps()...)
	register(opKernel{make: binaryKernel}, ir.BinaryOps()...)
}

// Chunk sizes for splitting elementwise loops across goroutines: below them
// the goroutine hand-off costs more than the loop.
const (
	grainCheap = 1 << 16 // add, compare, copy...
	grainMath  = 1 << 13 // exp, tanh, pow...
)

// mapUnary runs f over matching chunks of one operand and the output.
func mapUnary[T, U any](grain int, f func(z []U, x []T)) kernel {
	return func(out []byte, ins [][]byte) {
		z, x := view[U](out), view[T](ins[0])
		parallelFor(len(z), grain, func(lo, hi int) { f(z[lo:hi], x[lo:hi]) })
	}
}

// mapBinary runs f over matching chunks of two operands and the output.
func mapBinary[T, U any](grain int, f func(z []U, x, y []T)) kernel {
	return func(out []byte, ins [][]byte) {
		z, x, y := view[U](out), view[T](ins[0]), view[T](ins[1])
		parallelFor(len(z), grain, func(lo, hi int) { f(z[lo:hi], x[lo:hi], y[lo:hi]) })
	}
}

// forFloat picks the float64 kernel for F64 and the float32 one for F32 and,
// wrapped to widen operands and narrow the result, for F16 and BF16. A nil
// kernel means the op has none for that dtype.
func forFloat(in ir.Instr, at []ir.TensorType, outHalf bool, f32, f64 kernel) (kernel, error) {
	d := at[0].DType
	switch {
	case d == ir.F64 && f64 != nil:
		return f64, nil
	case d == ir.F32 && f32 != nil:
		return f32, nil
	case isHalf(d) && f32 != nil:
		halfIn := make([]bool, len(at))
		for i, t := range at {
			halfIn[i] = isHalf(t.DType)
		}
		return halfKernel(d, halfIn, outHalf, in.Type.Bytes(), f32), nil
	}
	return nil, errUnsupported(in, at)
}

func orUnsupported(k kernel, in ir.Instr, at []ir.TensorType) (kernel, error) {
	if k == nil {
		return nil, errUnsupported(in, at)
	}
	return k, nil
}

func unaryKernel(in ir.Instr, at []ir.TensorType) (kernel, error) {
	switch at[0].DType {
	case ir.F32, ir.F64, ir.F16, ir.BF16:
		return forFloat(in, at, true, unaryFloat[float32](in.Op), unaryFloat[float64](in.Op))
	case ir.I8:
		return orUnsupported(unaryInt[int8](in.Op), in, at)
	case ir.I16:
		return orUnsupported(unaryInt[int16](in.Op), in, at)
	case ir.I32:
		return orUnsupported(unaryInt[int32](in.Op), in, at)
	case ir.I64:
		return orUnsupported(unaryInt[int64](in.Op), in, at)
	case ir.U8:
		return orUnsupported(unaryInt[uint8](in.Op), in, at)
	case ir.U32:
		return orUnsupported(unaryInt[uint32](in.Op), in, at)
	case ir.Bool:
		if in.Op == ir.OpNot {
			return mapUnary(grainCheap, func(z, x []uint8) {
				x = x[:len(z)]
				for i, v := range x {
					z[i] = b2u(v == 0)
				}
			}), nil
		}
	}
	return nil, errUnsupported(in, at)
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// fast32 are the float32 kernels that beat package math (see fastmath.go).
var fast32 = map[ir.Op]func(float32) float32{ir.OpExp: exp32, ir.OpTanh: tanh32, ir.OpLogistic: logistic32}

// unaryFloat computes in float64 through package math; for float32 the
// round trip is exact on the way in and rounds once on the way out.
func unaryFloat[T floatT](op ir.Op) kernel {
	var zero T
	if _, ok := any(zero).(float32); ok {
		if op == ir.OpTanh {
			return mapUnary(grainMath, tanhSlice)
		}
		if f := fast32[op]; f != nil {
			return mapUnary(grainMath, func(z, x []float32) {
				x = x[:len(z)]
				for i, v := range x {
					z[i] = f(v)
				}
			})
		}
	}
	m := func(f func(float64) float64) kernel {
		return mapUnary(grainMath, func(z, x []T) {
			x = x[:len(z)]
			for i, v := range x {
				z[i] = T(f(float64(v)))
			}
		})
	}
	switch op {
	case ir.OpNeg:
		return mapUnary(grainCheap, func(z, x []T) {
			x = x[:len(z)]
			for i, v := range x {
				z[i] = -v
			}
		})
	case ir.OpAbs:
		return m(math.Abs)
	case ir.OpExp:
		return m(math.Exp)
	case ir.OpLog:
		return m(math.Log)
	case ir.OpSqrt:
		return m(math.Sqrt)
	case ir.OpRsqrt:
		return m(func(v float64) float64 { return 1 / math.Sqrt(v) })
	case ir.OpTanh:
		return m(math.Tanh)
	case ir.OpLogistic:
		return m(func(v float64) float64 { return 1 / (1 + math.Exp(-v)) })
	case ir.OpFloor:
		return m(math.Floor)
	case ir.OpCeil:
		return m(math.Ceil)
	case ir.OpErf:
		return m(math.Erf)
	case ir.OpLog1p: // package math keeps full relative accuracy near 0, where log(1+x) would cancel
		return m(math.Log1p)
	case ir.OpExpm1:
		return m(math.Expm1)
	case ir.OpRound:
		return m(math.RoundToEven)
	case ir.OpSin:
		return m(math.Sin)
	case ir.OpCos:
		return m(math.Cos)
	case ir.OpSign:
		// NaN stays NaN and zeros keep their sign, as StableHLO says.
		return mapUnary(grainCheap, func(z, x []T) {
			x = x[:len(z)]
			for i, v := range x {
				switch {
				case v > 0:
					z[i] = 1
				case v < 0:
					z[i] = -1
				default:
					z[i] = v
				}
			}
		})
	}
	return nil
}

func unaryInt[T intT](op ir.Op) kernel {
	switch op {
	case ir.OpNeg: // wraps: -MinInt is MinInt, as in two's complement hardware
		return mapUnary(grainCheap, func(z, x []T) {
			x = x[:len(z)]
			for i, v := range x {
				z[i] = -v
			}
		})
	case ir.OpAbs:
		return mapUnary(grainCheap, func(z, x []T) {
			x = x[:len(z)]
			for i, v := range x {
				if v < 0 {
					v = -v
				}
				z[i] = v
			}
		})
	case ir.OpSign:
		return mapUnary(grainCheap, func(z, x []T) {
			x = x[:len(z)]
			var zero T
			minusOne := zero - 1 // a constant -1 would not compile for uint8
			for i, v := range x {
				switch {
				case v > 0:
					z[i] = 1
				case v < 0:
					z[i] = minusOne
				default:
					z[i] = 0
				}
			}
		})
	case ir.OpNot:
		return mapUnary(grainCheap, func(z, x []T) {
			x = x[:len(z)]
			for i, v := range x {
				z[i] = ^v
			}
		})
	}
	return nil
}

func binaryKernel(in ir.Instr, at []ir.TensorType) (kernel, error) {
	switch at[0].DType {
	case ir.F32, ir.F64, ir.F16, ir.BF16:
		return forFloat(in, at, true, binaryFloat[float32](in.Op), binaryFloat[float64](in.Op))
	case ir.I8:
		return orUnsupported(binaryInt[int8](in.Op), in, at)
	case ir.I16:
		return orUnsupported(binaryInt[int16](in.Op), in, at)
	case ir.I32:
		return orUnsupported(binaryInt[int32](in.Op), in, at)
	case ir.I64:
		return orUnsupported(binaryInt[int64](in.Op), in, at)
	case ir.U8:
		return orUnsupported(binaryInt[uint8](in.Op), in, at)
	case ir.U32:
		return orUnsupported(binaryInt[uint32](in.Op), in, at)
	case ir.Bool:
		switch in.Op {
		case ir.OpAnd:
			return mapBinary(grainCheap, func(z, x, y []uint8) {
				x, y = x[:len(z)], y[:len(z)]
				for i := range z {
					z[i] = b2u(x[i] != 0 && y[i] != 0)
				}
			}), nil
		case ir.OpOr:
			return mapBinary(grainCheap, func(z, x, y []uint8) {
				x, y = x[:len(z)], y[:len(z)]
				for i := range z {
					z[i] = b2u(x[i] != 0 || y[i] != 0)
				}
			}), nil
		case ir.OpXor:
			return mapBinary(grainCheap, func(z, x, y []uint8) {
				x, y = x[:len(z)], y[:len(z)]
				for i := range z {
					z[i] = b2u((x[i] != 0) != (y[i] != 0))
				}
			}), nil
		}
	}
	return nil, errUnsupported(in, at)
}

// binaryArith holds the ops whose Go operator means the same for every
// numeric type. For floats the max and min builtins propagate NaN and order
// -0 below +0; integers wrap on overflow.
func binaryArith[T numT](op ir.Op) kernel {
	// Each loop is spelled out: a function value in the loop would not inline.
	switch op {
	case ir.OpAdd:
		return mapBinary(grainCheap, func(z, x, y []T) {
			x, y = x[:len(z)], y[:len(z)]
			for i := range z {
				z[i] = x[i] + y[i]
			}
		})
	case ir.OpSub:
		return mapBinary(grainCheap, func(z, x, y []T) {
			x, y = x[:len(z)], y[:len(z)]
			for i := range z {
				z[i] = x[i] - y[i]
			}
		})
	case ir.OpMul:
		return mapBinary(grainCheap, func(z, x, y []T) {
			x, y = x[:len(z)], y[:len(z)]
			for i := range z {
				z[i] = x[i] * y[i]
			}
		})
	case ir.OpMax:
		return mapBinary(grainCheap, func(z, x, y []T) {
			x, y = x[:len(z)], y[:len(z)]
			for i := range z {
				z[i] = max(x[i], y[i])
			}
		})
	case ir.OpMin:
		return mapBinary(grainCheap, func(z, x, y []T) {
			x, y = x[:len(z)], y[:len(z)]
			for i := range z {
				z[i] = min(x[i], y[i])
			}
		})
	}
	return nil
}

func binaryFloat[T floatT](op ir.Op) kernel {
	if k := binaryArith[T](op); k != nil {
		return k
	}
	switch op {
	case ir.OpDiv:
		return mapBinary(grainCheap, func(z, x, y []T) {
			x, y = x[:len(z)], y[:len(z)]
			for i := range z {
				z[i] = x[i] / y[i]
			}
		})
	case ir.OpRem: // math.Mod has the sign of the dividend, like C's fmod
		return mapBinary(grainMath, func(z, x, y []T) {
			x, y = x[:len(z)], y[:len(z)]
			for i := range z {
				z[i] = T(math.Mod(float64(x[i]), float64(y[i])))
			}
		})
	case ir.OpPow:
		return mapBinary(grainMath, func(z, x, y []T) {
			x, y = x[:len(z)], y[:len(z)]
			for i := range z {
				z[i] = T(math.Pow(float64(x[i]), float64(y[i])))
			}
		})
	}
	return nil
}

// binaryInt wraps on overflow. Division by zero does not trap as it would in
// Go: x/0 is 0 and x%0 is x, which keeps x == (x/y)*y + x%y for every y.
func binaryInt[T intT](op ir.Op) kernel {
	if k := binaryArith[T](op); k != nil {
		return k
	}
	switch op {
	case ir.OpDiv: // truncates toward zero, like C; MinInt/-1 wraps to MinInt
		return mapBinary(grainCheap, func(z, x, y []T) {
			x, y = x[:len(z)], y[:len(z)]
			for i := range z {
				if y[i] == 0 {
					z[i] = 0
				} else {
					z[i] = x[i] / y[i]
				}
			}
		})
	case ir.OpRem: // sign of the dividend, like C
		return mapBinary(grainCheap, func(z, x, y []T) {
			x, y = x[:len(z)], y[:len(z)]
			for i := range z {
				if y[i] == 0 {
					z[i] = x[i]
				} else {
					z[i] = x[i] % y[i]
				}
			}
		})
	case ir.OpPow:
		return mapBinary(grainCheap, func(z, x, y []T) {
			x, y = x[:len(z)], y[:len(z)]
			for i := range z {
				z[i] = intPow(x[i], y[i])
			}
		})
	case ir.OpAnd:
		return mapBinary(grainCheap, func(z, x, y []T) {
			x, y = x[:len(z)], y[:len(z)]
			for i := range z {
				z[i] = x[i] & y[i]
			}
		})
	case ir.OpOr:
		return mapBinary(grainCheap, func(z, x, y []T) {
			x, y = x[:len(z)], y[:len(z)]
			for i := range z {
				z[i] = x[i] | y[i]
			}
		})
	case ir.OpXor:
		return mapBinary(grainCheap, func(z, x, y []T) {
			x, y = x[:len(z)], y[:len(z)]
			for i := range z {
				z[i] = x[i] ^ y[i]
			}
		})
	case ir.OpShiftLeft, ir.OpShiftRightLogical, ir.OpShiftRightArithmetic:
		return shiftKernel[T](op)
	}
	return nil
}

// shiftKernel shifts by amounts read as unsigned: one of at least the width
// shifts every bit out (0, or the sign for the arithmetic right shift), as
// StableHLO defines it, rather than Go's rule of taking the amount as is.
// The logical shift works on the bits whatever T's signedness, the
// arithmetic one on the bits read as signed.
func shiftKernel[T intT](op ir.Op) kernel {
	var zero T
	bits := uint64(unsafe.Sizeof(zero)) * 8
	mask := uint64(1)<<bits - 1 // bits is at most 32 here or 64 (then mask is all ones by wrap-around)
	if bits == 64 {
		mask = ^uint64(0)
	}
	amount := func(y T) uint64 { return uint64(y) & mask }
	switch op {
	case ir.OpShiftLeft:
		return mapBinary(grainCheap, func(z, x, y []T) {
			x, y = x[:len(z)], y[:len(z)]
			for i := range z {
				if n := amount(y[i]); n < bits {
					z[i] = T(uint64(x[i]) << n)
				} else {
					z[i] = 0
				}
			}
		})
	case ir.OpShiftRightLogical:
		return mapBinary(grainCheap, func(z, x, y []T) {
			x, y = x[:len(z)], y[:len(z)]
			for i := range z {
				if n := amount(y[i]); n < bits {
					z[i] = T((uint64(x[i]) & mask) >> n)
				} else {
					z[i] = 0
				}
			}
		})
	}
	return mapBinary(grainCheap, func(z, x, y []T) {
		x, y = x[:len(z)], y[:len(z)]
		for i := range z {
			n := min(amount(y[i]), bits-1)
			s := int64(uint64(x[i])<<(64-bits)) >> (64 - bits) // the bits read as signed
			z[i] = T(s >> n)
		}
	})
}

// intPow is exact integer power with wrap-around. A negative exponent gives
// the truncated 1/b^-e: 0, except for bases 1 and -1 (and 0, which has no
// answer; we give 0 rather than trap).
func intPow[T intT](b, e T) T {
	var zero T
	one, minusOne := zero+1, zero-1
	if e < 0 {
		switch {
		case b == one:
			return one
		case b == minusOne:
			if e&1 == 0 {
				return one
			}
			return minusOne
		}
		return 0
	}
	r := one
	for e > 0 {
		if e&1 == 1 {
			r *= b
		}
		b *= b
		e >>= 1
	}
	return r
}

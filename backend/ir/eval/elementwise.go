package eval

// Elementwise ops: unary and binary arithmetic, in float64 or exact integers.

import (
	"fmt"
	"math"

	"github.com/metalplug/metalplug/backend/ir"
)

func evalUnary(op ir.Op, x, out Tensor) {
	for k := range out.Type.Shape.Size() {
		if x.I != nil {
			a := x.I[k]
			var r int64
			switch op {
			case ir.OpNeg:
				r = -a
			case ir.OpAbs:
				r = a
				if a < 0 {
					r = -a
				}
			case ir.OpSign:
				r = int64(boolFloat(a > 0)) - int64(boolFloat(a < 0))
			case ir.OpNot:
				r = ^a
				if x.Type.DType == ir.Bool {
					r = 1 - a
				}
			}
			out.I[k] = out.Type.DType.Wrap(r)
			continue
		}
		a := x.F[k]
		var r float64
		switch op {
		case ir.OpNeg:
			r = -a
		case ir.OpAbs:
			r = math.Abs(a)
		case ir.OpExp:
			r = math.Exp(a)
		case ir.OpLog:
			r = math.Log(a)
		case ir.OpSqrt:
			r = math.Sqrt(a)
		case ir.OpRsqrt:
			r = 1 / math.Sqrt(a)
		case ir.OpTanh:
			r = math.Tanh(a)
		case ir.OpLogistic:
			r = 1 / (1 + math.Exp(-a))
		case ir.OpFloor:
			r = math.Floor(a)
		case ir.OpCeil:
			r = math.Ceil(a)
		case ir.OpSign:
			switch {
			case a > 0:
				r = 1
			case a < 0:
				r = -1
			default:
				r = a
			}
		case ir.OpErf:
			r = math.Erf(a)
		case ir.OpLog1p:
			r = math.Log1p(a)
		case ir.OpExpm1:
			r = math.Expm1(a)
		case ir.OpRound:
			r = math.RoundToEven(a)
		case ir.OpSin:
			r = math.Sin(a)
		case ir.OpCos:
			r = math.Cos(a)
		}
		out.Set(k, r)
	}
}

func evalBinary(op ir.Op, x, y, out Tensor) error {
	for k := range out.Type.Shape.Size() {
		if x.I != nil {
			a, b := x.I[k], y.I[k]
			var r int64
			switch op {
			case ir.OpAdd:
				r = a + b
			case ir.OpSub:
				r = a - b
			case ir.OpMul:
				r = a * b
			case ir.OpDiv: // by zero 0, as OpDiv defines it
				if b != 0 {
					r = a / b
				}
			case ir.OpRem: // by zero the dividend, as OpRem defines it
				r = a
				if b != 0 {
					r = a % b
				}
			case ir.OpMax:
				r = max(a, b)
			case ir.OpMin:
				r = min(a, b)
			case ir.OpPow:
				r = intPow(a, b)
			case ir.OpAnd:
				r = a & b
			case ir.OpOr:
				r = a | b
			case ir.OpXor:
				r = a ^ b
			case ir.OpShiftLeft, ir.OpShiftRightLogical, ir.OpShiftRightArithmetic:
				r = shift(op, x.Type.DType, a, b)
			}
			out.I[k] = out.Type.DType.Wrap(r)
			continue
		}
		a, b := x.F[k], y.F[k]
		var r float64
		switch op {
		case ir.OpAdd:
			r = a + b
		case ir.OpSub:
			r = a - b
		case ir.OpMul:
			r = a * b
		case ir.OpDiv:
			r = a / b
		case ir.OpRem:
			r = math.Mod(a, b)
		case ir.OpMax, ir.OpMin:
			// NaN propagates, as in StableHLO and every driver; Go's
			// math.Max would give +Inf for Max(NaN, +Inf).
			r = fold(map[ir.Op]ir.ReduceKind{ir.OpMax: ir.ReduceMax, ir.OpMin: ir.ReduceMin}[op], a, b)
		case ir.OpPow:
			r = math.Pow(a, b)
		default:
			return fmt.Errorf("%v on floats", op)
		}
		out.Set(k, r)
	}
	return nil
}

// shift shifts a (of dtype d, held as int64) by b. The amount is read as
// unsigned: one of at least the width shifts every bit out.
func shift(op ir.Op, d ir.DType, a, b int64) int64 {
	bits := uint64(8 * d.Size())
	n := uint64(b) & (1<<bits - 1) // the amount's own bits, unsigned
	u := uint64(a) & (1<<bits - 1) // the value's bits
	switch op {
	case ir.OpShiftLeft:
		if n >= bits {
			return 0
		}
		return int64(u << n)
	case ir.OpShiftRightLogical:
		if n >= bits {
			return 0
		}
		return int64(u >> n)
	}
	// Arithmetic: the sign of the value as its dtype reads it.
	signed := signedOf(d).Wrap(a)
	if n >= bits {
		n = bits - 1
	}
	return signed >> n
}

// signedOf is the signed dtype of d's width.
func signedOf(d ir.DType) ir.DType {
	return map[int]ir.DType{1: ir.I8, 2: ir.I16, 4: ir.I32, 8: ir.I64}[d.Size()]
}

// intPow is a**b with the wrapping of repeated multiplication; a negative
// exponent gives 1 for 1, +-1 for -1 and 0 otherwise, as integer division
// of 1 by a**-b would.
func intPow(a, b int64) int64 {
	if b < 0 {
		switch a {
		case 1:
			return 1
		case -1:
			if b%2 == 0 {
				return 1
			}
			return -1
		}
		return 0
	}
	r := int64(1)
	for ; b > 0; b-- {
		r *= a
	}
	return r
}

func init() {
	register(func(in ir.Instr, a []Tensor, out Tensor) (Tensor, error) {
		evalUnary(in.Op, a[0], out)
		return out, nil
	}, ir.UnaryOps()...)
	register(func(in ir.Instr, a []Tensor, out Tensor) (Tensor, error) {
		err := evalBinary(in.Op, a[0], a[1], out) // fills out's elements
		return out, err
	}, ir.BinaryOps()...)
}

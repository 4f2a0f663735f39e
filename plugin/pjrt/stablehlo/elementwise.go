package stablehlo

// Elementwise ops: what maps to one IR op, and what is composed of several
// so that the result is XLA's.

import (
	"math"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/compose"
	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// unaryOps are the VHLO ops that are one IR unary op (both versions of
// those that gained result_accuracy at v2).
var unaryOps = map[string]ir.Op{
	"abs": ir.OpAbs, "negate": ir.OpNeg, "sign": ir.OpSign, "not": ir.OpNot,
	"exponential": ir.OpExp, "exponential_minus_one": ir.OpExpm1, "log": ir.OpLog, "log_plus_one": ir.OpLog1p,
	"logistic": ir.OpLogistic, "sqrt": ir.OpSqrt, "rsqrt": ir.OpRsqrt, "tanh": ir.OpTanh,
	"sine": ir.OpSin, "cosine": ir.OpCos, "floor": ir.OpFloor, "ceil": ir.OpCeil, "round_nearest_even": ir.OpRound,
}

// binaryOps are the VHLO ops that are one IR binary op on most dtypes.
var binaryOps = map[string]ir.Op{
	"add": ir.OpAdd, "subtract": ir.OpSub, "multiply": ir.OpMul, "divide": ir.OpDiv, "remainder": ir.OpRem,
	"maximum": ir.OpMax, "minimum": ir.OpMin, "power": ir.OpPow, "and": ir.OpAnd, "or": ir.OpOr, "xor": ir.OpXor,
	"shift_left": ir.OpShiftLeft, "shift_right_logical": ir.OpShiftRightLogical, "shift_right_arithmetic": ir.OpShiftRightArithmetic,
}

func unary(o ir.Op) func(*env, *mlir.Operation) ([]ir.Value, error) {
	return func(e *env, op *mlir.Operation) ([]ir.Value, error) {
		if err := checkAccuracy(op); err != nil {
			return nil, err
		}
		x, err := oneOperand(e, op)
		if err != nil {
			return nil, err
		}
		d := e.b.Type(x).DType
		if heldUnsigned(op.Operands[0].Type) {
			switch o {
			case ir.OpAbs:
				return one(x), nil
			case ir.OpSign:
				b := e.b
				return one(b.Convert(b.Compare(ir.CmpNE, x, intConst(b, d, b.Type(x).Shape, 0)), d)), nil
			}
		}
		if d == ir.C64 {
			if v, ok := compose.ComplexUnary(e.b, o, x); ok {
				return one(v), nil
			}
			return nil, unsupported(op, "complex operands (the IR has no complex arithmetic; this op is not composed of its parts)")
		}
		return one(e.b.Unary(o, x)), nil
	}
}

func binary(o ir.Op) func(*env, *mlir.Operation) ([]ir.Value, error) {
	return func(e *env, op *mlir.Operation) ([]ir.Value, error) {
		x, y, err := twoOperands(e, op)
		if err != nil {
			return nil, err
		}
		b := e.b
		d := b.Type(x).DType
		switch {
		case d == ir.C64:
			return complexBinary(e, op, o, x, y)
		case d == ir.Bool && (o == ir.OpAdd || o == ir.OpMax):
			return one(b.Binary(ir.OpOr, x, y)), nil // StableHLO's add and maximum of i1
		case d == ir.Bool && (o == ir.OpMul || o == ir.OpMin):
			return one(b.Binary(ir.OpAnd, x, y)), nil
		case heldUnsigned(op.Operands[0].Type) && (o == ir.OpMax || o == ir.OpMin):
			return one(unsignedMaxMin(b, x, y, o == ir.OpMax)), nil
		case d == ir.I16 && heldUnsigned(op.Operands[0].Type) && (o == ir.OpDiv || o == ir.OpRem || o == ir.OpPow):
			// ui16 widens exactly to int32, where x/0 = -1 wraps back to
			// all ones.
			xw, yw := zeroExtend16(b, x), zeroExtend16(b, y)
			if o == ir.OpPow {
				return one(b.Convert(b.Binary(o, xw, yw), ir.I16)), nil
			}
			return one(b.Convert(intDivide(b, xw, yw, o == ir.OpRem), ir.I16)), nil
		case heldUnsigned(op.Operands[0].Type) && (o == ir.OpDiv || o == ir.OpRem || o == ir.OpPow):
			return nil, unsupported(op, "ui64 operands (held as int64 bits, ui64 has add, multiply, bitwise ops, shifts, compare, max, min and convert)")
		case d.IsInt() && (o == ir.OpDiv || o == ir.OpRem):
			return one(intDivide(b, x, y, o == ir.OpRem)), nil
		}
		return one(b.Binary(o, x, y)), nil
	}
}

// unsignedLess is x < y for ui16 or ui64 values held as signed bits:
// flipping the top bit maps the unsigned order onto the signed one.
func unsignedLess(b *ir.Builder, x, y ir.Value) ir.Value {
	t := b.Type(x)
	top := intConst(b, t.DType, t.Shape, math.MinInt64>>(64-bits(t.DType)))
	return b.Compare(ir.CmpLT, b.Binary(ir.OpXor, x, top), b.Binary(ir.OpXor, y, top))
}

func unsignedMaxMin(b *ir.Builder, x, y ir.Value, isMax bool) ir.Value {
	if isMax {
		return b.Select(unsignedLess(b, x, y), y, x)
	}
	return b.Select(unsignedLess(b, x, y), x, y)
}

// zeroExtend16 widens ui16 held as int16 to its value in int32.
func zeroExtend16(b *ir.Builder, x ir.Value) ir.Value {
	w := b.Convert(x, ir.I32)
	return b.Binary(ir.OpAnd, w, intConst(b, ir.I32, b.Type(w).Shape, 0xFFFF))
}

// intDivide is XLA's integer division (or remainder): truncating, with
// x/0 = -1 (all bits set, for unsigned types too), x%0 = x, and MIN/-1 =
// MIN, MIN%-1 = 0. The IR leaves division by zero undefined (the reference
// interpreter fails on it) and MIN/-1 is C's undefined case, so the divisor
// is replaced by 1 where it is 0 or -1 and those results are selected.
func intDivide(b *ir.Builder, x, y ir.Value, rem bool) ir.Value {
	t := b.Type(x)
	s := t.Shape
	isZero := b.Compare(ir.CmpEQ, y, intConst(b, t.DType, s, 0))
	bad := isZero
	var isNegOne ir.Value
	signed := !t.DType.IsUnsigned()
	if signed {
		isNegOne = b.Compare(ir.CmpEQ, y, intConst(b, t.DType, s, -1))
		bad = b.Binary(ir.OpOr, isZero, isNegOne)
	}
	safe := b.Select(bad, intConst(b, t.DType, s, 1), y)
	if rem {
		return b.Select(isZero, x, b.Binary(ir.OpRem, x, safe)) // x % 1 is the 0 that x % -1 is
	}
	q := b.Binary(ir.OpDiv, x, safe)
	if signed {
		q = b.Select(isNegOne, b.Unary(ir.OpNeg, x), q) // negation wraps: -MIN is MIN
	}
	return b.Select(isZero, intConst(b, t.DType, s, -1), q)
}

// compare is compare_v1 with every direction and compare type.
func compare(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, y, err := twoOperands(e, op)
	if err != nil {
		return nil, err
	}
	dirName, err := enumAttr(op, "comparison_direction")
	if err != nil {
		return nil, err
	}
	dir, ok := map[string]ir.CompareDir{"EQ": ir.CmpEQ, "NE": ir.CmpNE, "LT": ir.CmpLT, "LE": ir.CmpLE, "GT": ir.CmpGT, "GE": ir.CmpGE}[dirName]
	if !ok {
		return nil, unsupported(op, "comparison_direction %s", dirName)
	}
	ctype := "NOTYPE"
	if _, ok := op.Attr("compare_type"); ok {
		if ctype, err = enumAttr(op, "compare_type"); err != nil {
			return nil, err
		}
	}
	b := e.b
	t := b.Type(x)
	// Integers compare by their element type whatever compare_type says
	// (StableHLO requires the two to agree; XLA's CPU, measured, follows
	// the element type); ui16 and ui64 are held as signed bits.
	wantUnsigned := t.DType.IsUnsigned() || heldUnsigned(op.Operands[0].Type)
	switch {
	case t.DType.IsFloat() && ctype == "TOTALORDER":
		x, y = totalOrderKey(b, x), totalOrderKey(b, y)
	case t.DType.IsFloat() && (ctype == "FLOAT" || ctype == "NOTYPE"):
	case t.DType.IsInt() && (ctype == "SIGNED" || ctype == "UNSIGNED" || ctype == "NOTYPE"):
		if wantUnsigned != t.DType.IsUnsigned() {
			// Flipping the top bit maps one order onto the other.
			top := intConst(b, t.DType, t.Shape, math.MinInt64>>(64-bits(t.DType)))
			x, y = b.Binary(ir.OpXor, x, top), b.Binary(ir.OpXor, y, top)
		}
	case t.DType == ir.Bool && ctype != "FLOAT" && ctype != "TOTALORDER":
	case t.DType == ir.C64 && ctype != "TOTALORDER":
		// The host driver compares no complex values: by the parts.
		return one(compose.ComplexCompare(b, dir, x, y)), nil
	default:
		return nil, unsupported(op, "compare_type %s %s on %v", ctype, dirName, t.DType)
	}
	return one(b.Compare(dir, x, y)), nil
}

// totalOrderKey maps floats to signed integers whose order is XLA's total
// order: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN. Negative values'
// bits, read as signed integers, run the wrong way, so all but their sign
// bit are flipped: bits ^ ((bits >>arith (w-1)) >>logical 1), as XLA's
// comparison emitter does.
func totalOrderKey(b *ir.Builder, x ir.Value) ir.Value {
	t := b.Type(x)
	it, _ := sameWidthInt(t.DType, false)
	v := b.BitcastConvert(x, it)
	sign := b.Binary(ir.OpShiftRightArithmetic, v, intConst(b, it, t.Shape, int64(bits(it)-1)))
	mask := b.Binary(ir.OpShiftRightLogical, sign, intConst(b, it, t.Shape, 1))
	return b.Binary(ir.OpXor, v, mask)
}

func selectOp(e *env, op *mlir.Operation) ([]ir.Value, error) {
	vs, err := nOperands(e, op, 3)
	if err != nil {
		return nil, err
	}
	b := e.b
	pred, x, y := vs[0], vs[1], vs[2]
	if s := b.Type(x).Shape; b.Type(pred).Shape.Rank() == 0 && s.Rank() > 0 {
		pred = b.BroadcastInDim(pred, s, []int{})
	}
	return one(b.Select(pred, x, y)), nil
}

// clamp is min(max(operand, lo), hi), lo and hi scalars or of the
// operand's shape.
func clamp(e *env, op *mlir.Operation) ([]ir.Value, error) {
	vs, err := nOperands(e, op, 3)
	if err != nil {
		return nil, err
	}
	b := e.b
	lo, x, hi := vs[0], vs[1], vs[2]
	s := b.Type(x).Shape
	if b.Type(lo).Shape.Rank() == 0 {
		lo = b.BroadcastInDim(lo, s, []int{})
	}
	if b.Type(hi).Shape.Rank() == 0 {
		hi = b.BroadcastInDim(hi, s, []int{})
	}
	if b.Type(x).DType == ir.Bool {
		return one(b.Binary(ir.OpAnd, b.Binary(ir.OpOr, x, lo), hi)), nil
	}
	if heldUnsigned(op.Operands[1].Type) {
		return one(unsignedMaxMin(b, unsignedMaxMin(b, x, lo, true), hi, false)), nil
	}
	return one(b.Binary(ir.OpMin, b.Binary(ir.OpMax, x, lo), hi)), nil
}

// Operand helpers.

func oneOperand(e *env, op *mlir.Operation) (ir.Value, error) {
	vs, err := nOperands(e, op, 1)
	if err != nil {
		return 0, err
	}
	return vs[0], nil
}

func twoOperands(e *env, op *mlir.Operation) (ir.Value, ir.Value, error) {
	vs, err := nOperands(e, op, 2)
	if err != nil {
		return 0, 0, err
	}
	return vs[0], vs[1], nil
}

func nOperands(e *env, op *mlir.Operation, n int) ([]ir.Value, error) {
	if len(op.Operands) != n {
		return nil, invalid(op, "has %d operands, want %d", len(op.Operands), n)
	}
	return e.operands(op)
}

func one(v ir.Value) []ir.Value { return []ir.Value{v} }

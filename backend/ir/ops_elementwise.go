package ir

// The elementwise arithmetic: ops of one operand, or of two of one type,
// each result of its operands' type.

// unaryOps take one operand; the result has its type.
var unaryOps = opDefs{
	{OpNeg, unaryOp("negate")}, // on floats the sign bit flipped, NaN and zero included (IEEE negate); integers wrap
	{OpAbs, unaryOp("abs")},
	{OpExp, unaryOp("exponential")},
	{OpLog, unaryOp("log")},
	{OpSqrt, unaryOp("sqrt")},
	{OpRsqrt, unaryOp("rsqrt")},
	{OpTanh, unaryOp("tanh")},
	{OpLogistic, unaryOp("logistic")}, // 1 / (1 + exp(-x))
	{OpFloor, unaryOp("floor")},
	{OpCeil, unaryOp("ceil")},
	{OpSign, unaryOp("sign")},
	{OpErf, unaryOp("erf")},
	{OpLog1p, unaryOp("log_plus_one")},          // log(1 + x), accurate near 0
	{OpExpm1, unaryOp("exponential_minus_one")}, // exp(x) - 1, accurate near 0
	{OpRound, unaryOp("round_nearest_even")},    // to nearest, ties to even
	{OpSin, unaryOp("sine")},
	{OpCos, unaryOp("cosine")},
	{OpNot, unaryOp("not")}, // logical not on bool, bitwise not on integers
}

// binaryOps take two operands of one type; the result has that type.
var binaryOps = opDefs{
	{OpAdd, binaryOp("add")},
	{OpSub, binaryOp("subtract")},
	{OpMul, binaryOp("multiply")},
	// OpDiv is floating division; on integers it truncates like C, x/0 is
	// 0 and MinInt/-1 wraps to MinInt (StableHLO leaves both to the
	// implementation; every driver gives these).
	{OpDiv, binaryOp("divide")},
	// OpRem is the remainder with the sign of the dividend, like C's fmod;
	// on integers x%0 is x (so x == (x/y)*y + x%y for every y) and
	// MinInt % -1 is 0.
	{OpRem, binaryOp("remainder")},
	{OpMax, binaryOp("maximum")},
	{OpMin, binaryOp("minimum")},
	{OpPow, binaryOp("power")},
	{OpAnd, bitwiseOp("and")},
	{OpOr, bitwiseOp("or")},
	{OpXor, bitwiseOp("xor")}, // logical on bool, bitwise on integers
	// Shifts of integers by the second operand; an amount outside [0, bits)
	// shifts everything out: 0, or for the arithmetic right shift the sign.
	{OpShiftLeft, bitwiseOp("shift_left")},
	{OpShiftRightLogical, bitwiseOp("shift_right_logical")},
	{OpShiftRightArithmetic, bitwiseOp("shift_right_arithmetic")},
}

// UnaryOps lists the elementwise ops of one operand.
func UnaryOps() []Op { return opsWhere(Op.IsUnary) }

// BinaryOps lists the elementwise ops of two operands of one type.
func BinaryOps() []Op { return opsWhere(Op.IsBinary) }

func opsWhere(pred func(Op) bool) []Op {
	var ops []Op
	for _, o := range Ops() {
		if pred(o) {
			ops = append(ops, o)
		}
	}
	return ops
}

// IsUnary reports whether o is an elementwise op of one operand.
func (o Op) IsUnary() bool { return o.class() == classUnary }

// IsBinary reports whether o is an elementwise op of two operands of one type.
func (o Op) IsBinary() bool { return o.class() >= classBinary }

// IsBitwise reports whether o is one of the binary ops on bits (and, or,
// xor and the shifts), defined on integers and (but for shifts) bool.
func (o Op) IsBitwise() bool { return o.class() == classBitwise }

// opClass is which elementwise family an op belongs to, if any.
type opClass uint8

const (
	classOther opClass = iota
	classUnary
	classBinary
	classBitwise // binary, on bits
)

// class reads the table in place: the elementwise predicates are asked
// per instruction by every lowering, and Info copies the whole entry.
func (o Op) class() opClass {
	if o <= OpInvalid || o >= numOps {
		return classOther
	}
	return opTable[o].class
}

func unaryOp(name string) OpInfo {
	return OpInfo{Name: name, Arity: 1, class: classUnary, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		return b.Unary(in.Op, a[0]), nil
	}}
}

func binaryOp(name string) OpInfo {
	return OpInfo{Name: name, Arity: 2, class: classBinary, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		return b.Binary(in.Op, a[0], a[1]), nil
	}}
}

func bitwiseOp(name string) OpInfo {
	info := binaryOp(name)
	info.class = classBitwise
	return info
}

// Unary applies an elementwise op of one operand.
func (b *Builder) Unary(op Op, x Value) Value {
	t := b.Type(x)
	if !op.IsUnary() {
		return b.fail(op, "not a unary op")
	}
	switch {
	case op == OpNot && !(t.DType == Bool || t.DType.IsInt()):
		return b.fail(op, "needs bool or integer operand, got %v", t)
	case op != OpNot && op != OpNeg && op != OpAbs && op != OpSign && !t.DType.IsFloat():
		return b.fail(op, "needs a floating operand, got %v", t)
	case (op == OpNeg || op == OpAbs || op == OpSign) && !t.DType.IsNumeric():
		return b.fail(op, "needs a numeric operand, got %v", t)
	}
	return b.emit(Instr{Op: op, Args: []Value{x}, Type: t})
}

// Binary applies an elementwise op to two operands of identical type.
func (b *Builder) Binary(op Op, x, y Value) Value {
	tx, ty := b.Type(x), b.Type(y)
	if !op.IsBinary() {
		return b.fail(op, "not a binary op")
	}
	if tx.DType != ty.DType || !tx.Shape.Equal(ty.Shape) {
		return b.fail(op, "operand types differ: %v and %v", tx, ty)
	}
	shift := op == OpShiftLeft || op == OpShiftRightLogical || op == OpShiftRightArithmetic
	if shift && !tx.DType.IsInt() {
		return b.fail(op, "needs integer operands, got %v", tx)
	}
	if op.IsBitwise() && !(tx.DType == Bool || tx.DType.IsInt()) {
		return b.fail(op, "needs bool or integer operands, got %v", tx)
	}
	if !op.IsBitwise() && !tx.DType.IsNumeric() {
		return b.fail(op, "needs numeric operands, got %v", tx)
	}
	return b.emit(Instr{Op: op, Args: []Value{x, y}, Type: tx})
}

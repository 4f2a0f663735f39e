package ir

import "fmt"

// Comparisons, selection and conversions between dtypes.

// compareSelectConvertOps compare, pick and change dtypes.
var compareSelectConvertOps = opDefs{
	// OpCompare compares two operands of identical type; the result is bool.
	{OpCompare, OpInfo{Name: "compare", Arity: 2, Attrs: []string{"Compare"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		return b.Compare(in.Compare, a[0], a[1]), nil
	}}},
	// OpSelect picks from Args[1] where the bool Args[0] is true, else Args[2].
	{OpSelect, OpInfo{Name: "select", Arity: 3, infer: func(b *Builder, _ *Program, _ Instr, a []Value) (Value, error) {
		return b.Select(a[0], a[1], a[2]), nil
	}}},
	// OpConvert changes the dtype; floats to integers truncate toward zero
	// and saturate at the integer type's range (NaN becomes 0); integers
	// to narrower integers wrap. To float32 and float64 it rounds once; to
	// float16 and bfloat16 through float32 (as XLA's CPU and Eigen do), so
	// float64 and wide integers round twice near a half type's tie.
	{OpConvert, OpInfo{Name: "convert", Arity: 1, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		return b.Convert(a[0], in.Type.DType), nil
	}}},
	// OpBitcastConvert reinterprets each element's bits as Instr.Type's
	// dtype, of the same width.
	{OpBitcastConvert, OpInfo{Name: "bitcast_convert", Arity: 1, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		return b.BitcastConvert(a[0], in.Type.DType), nil
	}}},
}

// CompareDir is the relation OpCompare tests.
type CompareDir uint8

const (
	CmpEQ CompareDir = iota + 1
	CmpNE
	CmpLT
	CmpLE
	CmpGT
	CmpGE
)

// Compare is a dir b; for floats IEEE's (NaN is unordered, -0 == +0).
func Compare[T int64 | float64](dir CompareDir, a, b T) bool {
	switch dir {
	case CmpEQ:
		return a == b
	case CmpNE:
		return a != b
	case CmpLT:
		return a < b
	case CmpLE:
		return a <= b
	case CmpGT:
		return a > b
	case CmpGE:
		return a >= b
	}
	return false
}

func (c CompareDir) String() string {
	switch c {
	case CmpEQ:
		return "EQ"
	case CmpNE:
		return "NE"
	case CmpLT:
		return "LT"
	case CmpLE:
		return "LE"
	case CmpGT:
		return "GT"
	case CmpGE:
		return "GE"
	}
	return fmt.Sprintf("cmp(%d)", uint8(c))
}

// Compare tests x dir y elementwise; the result is bool.
func (b *Builder) Compare(dir CompareDir, x, y Value) Value {
	tx, ty := b.Type(x), b.Type(y)
	if tx.DType != ty.DType || !tx.Shape.Equal(ty.Shape) {
		return b.fail(OpCompare, "operand types differ: %v and %v", tx, ty)
	}
	if dir < CmpEQ || dir > CmpGE {
		return b.fail(OpCompare, "unknown direction %v", dir)
	}
	if tx.DType == C64 && dir != CmpEQ && dir != CmpNE {
		return b.fail(OpCompare, "complex numbers are not ordered: %v on %v", dir, tx)
	}
	return b.emit(Instr{Op: OpCompare, Args: []Value{x, y}, Type: TensorType{Bool, tx.Shape.Clone()}, Compare: dir})
}

// Select is pred ? x : y elementwise.
func (b *Builder) Select(pred, x, y Value) Value {
	tp, tx, ty := b.Type(pred), b.Type(x), b.Type(y)
	if tp.DType != Bool || !tp.Shape.Equal(tx.Shape) {
		return b.fail(OpSelect, "predicate %v must be bool of the operands' shape %v", tp, tx.Shape)
	}
	if tx.DType != ty.DType || !tx.Shape.Equal(ty.Shape) {
		return b.fail(OpSelect, "operand types differ: %v and %v", tx, ty)
	}
	return b.emit(Instr{Op: OpSelect, Args: []Value{pred, x, y}, Type: tx})
}

// Convert changes x's dtype to d.
func (b *Builder) Convert(x Value, d DType) Value {
	t := b.Type(x)
	if t.DType == d {
		return x
	}
	return b.emit(Instr{Op: OpConvert, Args: []Value{x}, Type: TensorType{d, t.Shape.Clone()}})
}

// BitcastConvert reinterprets x's bits as dtype d, of the same width (jax
// builds floats from random bits so).
func (b *Builder) BitcastConvert(x Value, d DType) Value {
	t := b.Type(x)
	if !d.Valid() || d.Size() != t.DType.Size() || d == Bool || t.DType == Bool {
		return b.fail(OpBitcastConvert, "%v to %v: the dtypes must have the same width, and not be bool", t, d)
	}
	return b.emit(Instr{Op: OpBitcastConvert, Args: []Value{x}, Type: TensorType{d, t.Shape.Clone()}})
}

package ir

import "fmt"

// Op names one IR operation.
type Op uint16

const (
	OpInvalid Op = iota

	// Sources.
	OpParameter // the program's i-th input
	OpConstant  // a literal, row-major, in Instr.Literal
	OpIota      // 0, 1, 2, ... along Instr.Axes[0]

	// Elementwise unary: one operand, result of the same type.
	OpNeg
	OpAbs
	OpExp
	OpLog
	OpSqrt
	OpRsqrt
	OpTanh
	OpLogistic // 1 / (1 + exp(-x))
	OpFloor
	OpCeil
	OpSign
	OpNot // logical not on bool, bitwise not on integers

	// Elementwise binary: operands of identical type, result of that type.
	OpAdd
	OpSub
	OpMul
	OpDiv // floating division; on integers, truncating like C
	OpRem // remainder with the sign of the dividend, like C fmod
	OpMax
	OpMin
	OpPow
	OpAnd
	OpOr

	// OpCompare compares two operands of identical type; the result is bool.
	OpCompare
	// OpSelect picks from Args[1] where the bool Args[0] is true, else Args[2].
	OpSelect
	// OpConvert changes the dtype; floats to integers truncate toward zero.
	OpConvert

	// Data movement.
	OpBroadcastInDim // operand dim i becomes result dim Axes[i]
	OpReshape        // same elements, row-major, new shape
	OpTranspose      // result dim i is operand dim Axes[i]
	OpSlice
	OpConcat // along Axes[0]
	OpPad

	// Contractions and windows.
	OpDotGeneral
	OpConvolution
	OpReduce       // reduce Axes with Instr.Reduce
	OpReduceWindow // slide Instr.Window over the operand, reducing with Instr.Reduce

	numOps
)

var opNames = [...]string{
	OpInvalid: "invalid", OpParameter: "parameter", OpConstant: "constant", OpIota: "iota",
	OpNeg: "negate", OpAbs: "abs", OpExp: "exponential", OpLog: "log", OpSqrt: "sqrt",
	OpRsqrt: "rsqrt", OpTanh: "tanh", OpLogistic: "logistic", OpFloor: "floor", OpCeil: "ceil",
	OpSign: "sign", OpNot: "not",
	OpAdd: "add", OpSub: "subtract", OpMul: "multiply", OpDiv: "divide", OpRem: "remainder",
	OpMax: "maximum", OpMin: "minimum", OpPow: "power", OpAnd: "and", OpOr: "or",
	OpCompare: "compare", OpSelect: "select", OpConvert: "convert",
	OpBroadcastInDim: "broadcast_in_dim", OpReshape: "reshape", OpTranspose: "transpose",
	OpSlice: "slice", OpConcat: "concatenate", OpPad: "pad",
	OpDotGeneral: "dot_general", OpConvolution: "convolution", OpReduce: "reduce",
	OpReduceWindow: "reduce_window",
}

// String is the op's StableHLO-style name.
func (o Op) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint16(o))
}

// Ops lists every IR op, for drivers and tests that must cover them all.
func Ops() []Op {
	ops := make([]Op, 0, numOps-1)
	for o := OpParameter; o < numOps; o++ {
		ops = append(ops, o)
	}
	return ops
}

// IsUnary reports whether o is an elementwise op of one operand.
func (o Op) IsUnary() bool { return o >= OpNeg && o <= OpNot }

// IsBinary reports whether o is an elementwise op of two operands of one type.
func (o Op) IsBinary() bool { return o >= OpAdd && o <= OpOr }

// ReduceKind is the monoid a Reduce or ReduceWindow folds with.
type ReduceKind uint8

const (
	ReduceSum ReduceKind = iota + 1
	ReduceProd
	ReduceMax
	ReduceMin
	ReduceAnd
	ReduceOr
)

func (k ReduceKind) String() string {
	switch k {
	case ReduceSum:
		return "sum"
	case ReduceProd:
		return "prod"
	case ReduceMax:
		return "max"
	case ReduceMin:
		return "min"
	case ReduceAnd:
		return "and"
	case ReduceOr:
		return "or"
	}
	return fmt.Sprintf("reduce(%d)", uint8(k))
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

// DotDims are dot_general's dimension numbers. The result holds the batch
// dimensions, then the lhs free dimensions, then the rhs free dimensions, each
// in operand order.
type DotDims struct {
	LhsBatch, RhsBatch       []int
	LhsContract, RhsContract []int
}

// ConvAttrs describe a convolution in channels-last layout: the input is
// [N, spatial..., C], the kernel [spatial..., C/FeatureGroups, O] and the
// result [N, spatial'..., O]. Frontends with other layouts transpose around it.
type ConvAttrs struct {
	Strides       []int    // per spatial dim
	Padding       [][2]int // per spatial dim: low, high (after lhs dilation)
	LhsDilation   []int    // per spatial dim; >1 inserts holes in the input (transposed conv)
	RhsDilation   []int    // per spatial dim; >1 spreads the kernel (atrous conv)
	FeatureGroups int      // 1 for ordinary conv; C for depthwise
}

// WindowAttrs describe a reduce_window. Every slice has one entry per operand
// dimension. Padding positions hold the reduction's identity (0 for sum, -inf
// for max), so they never win and never add.
type WindowAttrs struct {
	Dims    []int
	Strides []int
	Padding [][2]int
}

// SliceAttrs select Start[i] <= j < Limit[i], every Strides[i]-th index.
type SliceAttrs struct {
	Start, Limit, Strides []int
}

// PadAttrs add Low and High elements at each end of each dimension and Interior
// elements between neighbours; negative Low/High crop.
type PadAttrs struct {
	Low, High, Interior []int
}

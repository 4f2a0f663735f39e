package gpu

// The contract: for every primitive, the MPSGraph method it is, the macOS
// release that brought it, and the data types its operands may have, each
// with where the fact comes from. Graph refuses a call outside it; a
// lowering that needs a type a primitive lacks converts around it.
//
// Sources, abbreviated in the table:
//   - hdr: Apple's MPSGraph headers (MetalPerformanceShadersGraph.framework,
//     MPSGraph*.h): their API_AVAILABLE annotations in the iOS 18 SDK's
//     copies (which carry the macos(...) release), and for methods without
//     one, the first macOS SDK whose header has the method (11.0, 11.3,
//     12.0, 12.3); and Apple's documentation pages of the same methods.
//   - torch: PyTorch's MPS backend (aten/src/ATen/native/mps, its 2023-24
//     revisions), which works around each of these limits and says so where
//     it does, for instance that int64 reductions are native "starting from
//     macOS 13.3", and Apple's engineers' comments in it (sortWithTensor
//     "has support of Int32, Half and Float32 types").
//   - lead: stated by Apple engineers in public issues of MPS backends
//     (tensorflow-metal, jax-metal, PyTorch); not documented, so taken as
//     the stricter reading.
//   - hw: behaviour of Apple's GPUs reported to this project, which no
//     header documents (for gathers and scatterND, that integer data moves
//     through float32, exact only within 2^24); the model reproduces it.

// Op is an MPSGraph primitive.
type Op uint8

const (
	OpPlaceholder Op = iota + 1
	OpConstant       // constantWithData:shape:dataType:
	OpFill           // constantWithScalar:shape:dataType:
	OpScalar         // constantWithScalar:shape:dataType: with shape [1]

	// Elementwise, one operand.
	OpIdentity
	OpNegative
	OpAbsolute
	OpExponent
	OpLogarithm
	OpSquareRoot
	OpReverseSquareRoot
	OpReciprocalSquareRoot
	OpTanh
	OpSigmoid
	OpErf
	OpSin
	OpCos
	OpFloor
	OpCeil
	OpIsNaN
	OpIsFinite
	OpNot // logical not

	// Elementwise, two operands (broadcast).
	OpAddition
	OpSubtraction
	OpMultiplication
	OpDivision
	OpFloorModulo
	OpMaximum
	OpMinimum
	OpMaximumNaN
	OpMinimumNaN
	OpPower
	OpEqual
	OpNotEqual
	OpLessThan
	OpLessThanOrEqual
	OpGreaterThan
	OpGreaterThanOrEqual
	OpLogicalAND
	OpLogicalOR
	OpLogicalXOR
	OpBitwiseAND
	OpBitwiseOR
	OpBitwiseXOR
	OpBitwiseLeftShift
	OpBitwiseRightShift

	OpSelect
	OpCast
	OpReinterpretCast

	// Movement.
	OpReshape
	OpBroadcast
	OpTranspose // transposeTensor:dimension:withDimension:
	OpSlice
	OpConcat
	OpPad
	OpReverse

	OpMatMul
	OpConvolution2D

	// Reductions keep the reduced axes with size 1.
	OpReductionSum
	OpReductionProduct
	OpReductionMaximum
	OpReductionMinimum
	OpReductionMaximumNaN
	OpReductionMinimumNaN

	OpArgSort
	OpCumulativeSum
	OpGather
	OpGatherAlongAxis
	OpScatterND

	numOps
)

// Type sets of the table.
var (
	floats   = []DataType{Float32, Float16}
	ints     = []DataType{Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64}
	numeric  = append(append([]DataType{}, floats...), ints...)
	anyType  = append(append([]DataType{}, numeric...), Bool)
	bools    = []DataType{Bool}
	arith32  = []DataType{Float32, Float16, Int32}         // the types lead and torch say every kernel has
	arith32u = []DataType{Float32, Float16, Int32, UInt32} // as arith32, plus what floor modulo needs here
	v11      = Version{11, 0}
	v11_3    = Version{11, 3}
	v12      = Version{12, 0}
	v12_3    = Version{12, 3}
	v13      = Version{13, 0}
	v13_2    = Version{13, 2}
	v13_3    = Version{13, 3}
	v15      = Version{15, 0}
)

// gate is a data type a primitive accepts from some release on.
type gate struct {
	t      DataType
	since  Version
	source string
}

// rule is one primitive's entry.
type rule struct {
	method string     // the MPSGraph selector
	since  Version    // first release with the method
	types  []DataType // what the (first data) operand may be
	gates  []gate     // types added in later releases
	source string
}

// deprecation is the first release that deprecates a primitive's method,
// and the primitive to call there instead: a deprecated method still
// answers, but it is the one a later release drops first.
type deprecation struct {
	since   Version
	instead Op
}

var deprecations = map[Op]deprecation{
	OpReverseSquareRoot: {v15, OpReciprocalSquareRoot},
}

// Table is the contract, by primitive.
var table = [numOps]rule{
	OpPlaceholder: {"placeholderWithShape:dataType:name:", v11, anyType, nil, "hdr"},
	OpConstant:    {"constantWithData:shape:dataType:", v11, anyType, nil, "hdr"},
	OpFill:        {"constantWithScalar:shape:dataType:", v11, anyType, nil, "hdr"},
	OpScalar:      {"constantWithScalar:shape:dataType:", v11, anyType, nil, "hdr"},

	OpIdentity:             {"identityWithTensor:name:", v11, anyType, nil, "hdr"},
	OpNegative:             {"negativeWithTensor:name:", v11, append([]DataType{}, floats...), nil, "lead: integer negation is built as 0 - x here"},
	OpAbsolute:             {"absoluteWithTensor:name:", v11, append([]DataType{}, floats...), nil, "lead: integer absolute values are composed here"},
	OpExponent:             {"exponentWithTensor:name:", v11, floats, nil, "hdr: transcendental ops are defined on floating-point tensors"},
	OpLogarithm:            {"logarithmWithTensor:name:", v11, floats, nil, "hdr"},
	OpSquareRoot:           {"squareRootWithTensor:name:", v11, floats, nil, "hdr"},
	OpReverseSquareRoot:    {"reverseSquareRootWithTensor:name:", v11, floats, nil, "hdr; deprecated from macos(15.0) for reciprocalSquareRoot"},
	OpReciprocalSquareRoot: {"reciprocalSquareRootWithTensor:name:", v15, floats, nil, "hdr: macos(15.0) (iOS 18.0)"},
	OpTanh:                 {"tanhWithTensor:name:", v11, floats, nil, "hdr"},
	OpSigmoid:              {"sigmoidWithTensor:name:", v11, floats, nil, "hdr"},
	OpErf:                  {"erfWithTensor:name:", v11, floats, nil, "hdr"},
	OpSin:                  {"sinWithTensor:name:", v11, floats, nil, "hdr"},
	OpCos:                  {"cosWithTensor:name:", v11, floats, nil, "hdr"},
	OpFloor:                {"floorWithTensor:name:", v11, floats, nil, "torch: MPSGraph has no floorOp_i64 kernel (pytorch#84995)"},
	OpCeil:                 {"ceilWithTensor:name:", v11, floats, nil, "torch: as floor"},
	OpIsNaN:                {"isNaNWithTensor:name:", v11, floats, nil, "hdr"},
	OpIsFinite:             {"isFiniteWithTensor:name:", v11, floats, nil, "hdr"},
	OpNot:                  {"notWithTensor:name:", v11, bools, nil, "hdr: logical not of a bool tensor"},

	OpAddition:           {"additionWithPrimaryTensor:secondaryTensor:name:", v11, numeric, nil, "hdr"},
	OpSubtraction:        {"subtractionWithPrimaryTensor:secondaryTensor:name:", v11, numeric, nil, "hdr"},
	OpMultiplication:     {"multiplicationWithPrimaryTensor:secondaryTensor:name:", v11, numeric, nil, "hdr"},
	OpDivision:           {"divisionWithPrimaryTensor:secondaryTensor:name:", v11, arith32, nil, "lead: no int64 kernel; narrow integers go through int32"},
	OpFloorModulo:        {"floorModuloWithPrimaryTensor:secondaryTensor:name:", v11, arith32, nil, "hdr: returns 0 for a divisor of 0; lead: no int64 kernel (torch computes integer remainders through float32)"},
	OpMaximum:            {"maximumWithPrimaryTensor:secondaryTensor:name:", v11, numeric, nil, "hdr"},
	OpMinimum:            {"minimumWithPrimaryTensor:secondaryTensor:name:", v11, numeric, nil, "hdr"},
	OpMaximumNaN:         {"maximumWithNaNPropagationWithPrimaryTensor:secondaryTensor:name:", v12, floats, nil, "hdr: macos(12.0)"},
	OpMinimumNaN:         {"minimumWithNaNPropagationWithPrimaryTensor:secondaryTensor:name:", v12, floats, nil, "hdr: macos(12.0)"},
	OpPower:              {"powerWithPrimaryTensor:secondaryTensor:name:", v11, floats, nil, "lead: a float kernel; integer powers are composed here"},
	OpEqual:              {"equalWithPrimaryTensor:secondaryTensor:name:", v11, anyType, nil, "hdr"},
	OpNotEqual:           {"notEqualWithPrimaryTensor:secondaryTensor:name:", v11, anyType, nil, "hdr"},
	OpLessThan:           {"lessThanWithPrimaryTensor:secondaryTensor:name:", v11, numeric, nil, "hdr"},
	OpLessThanOrEqual:    {"lessThanOrEqualToWithPrimaryTensor:secondaryTensor:name:", v11, numeric, nil, "hdr"},
	OpGreaterThan:        {"greaterThanWithPrimaryTensor:secondaryTensor:name:", v11, numeric, nil, "hdr"},
	OpGreaterThanOrEqual: {"greaterThanOrEqualToWithPrimaryTensor:secondaryTensor:name:", v11, numeric, nil, "hdr"},
	OpLogicalAND:         {"logicalANDWithPrimaryTensor:secondaryTensor:name:", v11, bools, nil, "torch casts every operand of logical ops to bool; the header is silent, so bool only"},
	OpLogicalOR:          {"logicalORWithPrimaryTensor:secondaryTensor:name:", v11, bools, nil, "hdr"},
	OpLogicalXOR:         {"logicalXORWithPrimaryTensor:secondaryTensor:name:", v11, bools, nil, "hdr"},
	OpBitwiseAND:         {"bitwiseANDWithPrimaryTensor:secondaryTensor:name:", v13, ints, nil, "hdr: macos(13.0); \"only accepts integer tensors\""},
	OpBitwiseOR:          {"bitwiseORWithPrimaryTensor:secondaryTensor:name:", v13, ints, nil, "hdr: macos(13.0)"},
	OpBitwiseXOR:         {"bitwiseXORWithPrimaryTensor:secondaryTensor:name:", v13, ints, nil, "hdr: macos(13.0)"},
	OpBitwiseLeftShift:   {"bitwiseLeftShiftWithPrimaryTensor:secondaryTensor:name:", v13, ints, nil, "hdr: macos(13.0)"},
	OpBitwiseRightShift:  {"bitwiseRightShiftWithPrimaryTensor:secondaryTensor:name:", v13, ints, nil, "hdr: macos(13.0)"},

	OpSelect:          {"selectWithPredicateTensor:truePredicateTensor:falsePredicateTensor:name:", v11, anyType, nil, "hdr"},
	OpCast:            {"castTensor:toType:name:", v12, anyType, nil, "hdr: macos(12.0), absent from the 11.x SDKs"},
	OpReinterpretCast: {"reinterpretCastTensor:toType:name:", v13_2, anyType, nil, "hdr: macos(13.2)"},

	OpReshape:   {"reshapeTensor:withShape:name:", v11, anyType, nil, "hdr"},
	OpBroadcast: {"broadcastTensor:toShape:name:", v12, anyType, nil, "hdr: macos(12.0)"},
	OpTranspose: {"transposeTensor:dimension:withDimension:name:", v11, anyType, nil, "hdr"},
	OpSlice:     {"sliceTensor:starts:ends:strides:name:", v11_3, anyType, nil, "hdr: first in the 11.3 SDK"},
	OpConcat:    {"concatTensors:dimension:name:", v11, anyType, nil, "hdr"},
	OpPad:       {"padTensor:withPaddingMode:leftPadding:rightPadding:constantValue:name:", v11, anyType, nil, "hdr"},
	OpReverse:   {"reverseTensor:axes:name:", v12, anyType, nil, "hdr: macos(12.0)"},

	OpMatMul:        {"matrixMultiplicationWithPrimaryTensor:secondaryTensor:name:", v11, floats, nil, "torch: MPS \"does not support mm for non-float inputs\"; integers run torch's own kernel"},
	OpConvolution2D: {"convolution2DWithSourceTensor:weightsTensor:descriptor:name:", v11, floats, nil, "torch: \"Convolution is supported only for Floating types\""},

	OpReductionSum:        {"reductionSumWithTensor:axes:name:", v11, arith32, []gate{{Int64, v13_3, "torch: int64 reductions native from macOS 13.3"}}, "torch: reductions of int8, int16, uint8 and bool go through float32 or int32"},
	OpReductionProduct:    {"reductionProductWithTensor:axes:name:", v11, arith32, []gate{{Int64, v13_3, "torch"}}, "lead"},
	OpReductionMaximum:    {"reductionMaximumWithTensor:axes:name:", v11, arith32, []gate{{Int64, v13_3, "torch"}}, "lead"},
	OpReductionMinimum:    {"reductionMinimumWithTensor:axes:name:", v11, arith32, []gate{{Int64, v13_3, "torch"}}, "lead"},
	OpReductionMaximumNaN: {"reductionMaximumPropagateNaNWithTensor:axes:name:", v12_3, floats, nil, "hdr: first in the 12.3 SDK"},
	OpReductionMinimumNaN: {"reductionMinimumPropagateNaNWithTensor:axes:name:", v12_3, floats, nil, "hdr: first in the 12.3 SDK"},

	OpArgSort:         {"argSortWithTensor:axis:descending:name:", v13, arith32, []gate{{Int64, v13_3, "torch: int64 sort from macOS 13.3"}}, "hdr: macos(13.0) (iOS 16.1); torch, Apple's comment: Int32, Half and Float32"},
	OpCumulativeSum:   {"cumulativeSumWithTensor:axis:name:", v13, arith32, []gate{{Int64, v13_3, "torch: int64 from macOS 13.3"}}, "hdr: macos(13.0); torch casts int8, int16 and uint8 to int32 on every release (Apple's radar 103810551: cumsum \"horribly broken for int8, int16\"), so they are not taken here either"},
	OpGather:          {"gatherWithUpdatesTensor:indicesTensor:axis:batchDimensions:name:", v11, anyType, nil, "hdr; hw: integer data moves through float32 (exact within 2^24)"},
	OpGatherAlongAxis: {"gatherAlongAxis:withUpdatesTensor:indicesTensor:name:", v12_3, anyType, nil, "hdr: macos(12.3); an index out of range gives 0; hw: as gather, integer data moves through float32"},
	OpScatterND:       {"scatterNDWithDataTensor:updatesTensor:indicesTensor:batchDimensions:mode:name:", v12, arith32, nil, "hdr: the data-tensor form is macos(12.0); torch: float32, float16 and int32 data; hw: as gather, integer data moves through float32"},
}

var opNames = [numOps]string{
	OpPlaceholder: "placeholder", OpConstant: "constant", OpFill: "fill", OpScalar: "scalar",
	OpIdentity: "identity", OpNegative: "negative", OpAbsolute: "absolute", OpExponent: "exponent",
	OpLogarithm: "logarithm", OpSquareRoot: "squareRoot", OpReverseSquareRoot: "reverseSquareRoot",
	OpReciprocalSquareRoot: "reciprocalSquareRoot",
	OpTanh:                 "tanh", OpSigmoid: "sigmoid", OpErf: "erf", OpSin: "sin", OpCos: "cos", OpFloor: "floor",
	OpCeil: "ceil", OpIsNaN: "isNaN", OpIsFinite: "isFinite", OpNot: "not",
	OpAddition: "addition", OpSubtraction: "subtraction", OpMultiplication: "multiplication",
	OpDivision: "division", OpFloorModulo: "floorModulo", OpMaximum: "maximum", OpMinimum: "minimum",
	OpMaximumNaN: "maximumWithNaNPropagation", OpMinimumNaN: "minimumWithNaNPropagation", OpPower: "power",
	OpEqual: "equal", OpNotEqual: "notEqual", OpLessThan: "lessThan", OpLessThanOrEqual: "lessThanOrEqualTo",
	OpGreaterThan: "greaterThan", OpGreaterThanOrEqual: "greaterThanOrEqualTo",
	OpLogicalAND: "logicalAND", OpLogicalOR: "logicalOR", OpLogicalXOR: "logicalXOR",
	OpBitwiseAND: "bitwiseAND", OpBitwiseOR: "bitwiseOR", OpBitwiseXOR: "bitwiseXOR",
	OpBitwiseLeftShift: "bitwiseLeftShift", OpBitwiseRightShift: "bitwiseRightShift",
	OpSelect: "select", OpCast: "cast", OpReinterpretCast: "reinterpretCast",
	OpReshape: "reshape", OpBroadcast: "broadcast", OpTranspose: "transpose", OpSlice: "slice",
	OpConcat: "concat", OpPad: "pad", OpReverse: "reverse", OpMatMul: "matrixMultiplication",
	OpConvolution2D: "convolution2D", OpReductionSum: "reductionSum", OpReductionProduct: "reductionProduct",
	OpReductionMaximum: "reductionMaximum", OpReductionMinimum: "reductionMinimum",
	OpReductionMaximumNaN: "reductionMaximumPropagateNaN", OpReductionMinimumNaN: "reductionMinimumPropagateNaN",
	OpArgSort: "argSort", OpCumulativeSum: "cumulativeSum", OpGather: "gather",
	OpGatherAlongAxis: "gatherAlongAxis", OpScatterND: "scatterND",
}

func (op Op) String() string {
	if op > 0 && op < numOps {
		return opNames[op]
	}
	return "Op(?)"
}

// Ops lists every primitive, for tables.
func Ops() []Op {
	out := make([]Op, 0, numOps-1)
	for op := OpPlaceholder; op < numOps; op++ {
		out = append(out, op)
	}
	return out
}

// Method is the MPSGraph selector op is.
func (op Op) Method() string { return table[op].method }

// Since is the first macOS release with op.
func (op Op) Since() Version { return table[op].since }

// Deprecated is the first macOS release that deprecates op, and what to
// call there instead; the zero Version when none does.
func (op Op) Deprecated() (Version, Op) { d := deprecations[op]; return d.since, d.instead }

// On reports whether the lowering may call op on macOS v: v has it and
// does not deprecate it.
func (op Op) On(v Version) bool {
	d, ok := deprecations[op]
	return v.AtLeast(op.Since()) && (!ok || !v.AtLeast(d.since))
}

// Source says where op's entry comes from.
func (op Op) Source() string { return table[op].source }

// Accepts reports whether op takes operands of type t on macOS v.
func (op Op) Accepts(t DataType, v Version) bool {
	r := table[op]
	for _, x := range r.types {
		if x == t {
			return true
		}
	}
	for _, g := range r.gates {
		if g.t == t && v.AtLeast(g.since) {
			return true
		}
	}
	return false
}

// Types lists what op accepts on macOS v, for tables.
func (op Op) Types(v Version) []DataType {
	var out []DataType
	for t := Float32; t <= Bool; t++ {
		if op.Accepts(t, v) {
			out = append(out, t)
		}
	}
	return out
}

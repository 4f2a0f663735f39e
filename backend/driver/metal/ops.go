package metal

import "github.com/metalplug/metalplug/backend/ir"

// Lowered lists the IR ops with an MPSGraph lowering, in ir.Ops() order, for
// tables of IR ops by driver. An op listed here may still run on the CPU in
// the cases Fallbacks names.
func Lowered() []ir.Op {
	var ops []ir.Op
	for _, op := range ir.Ops() {
		if _, ok := lowerings[op]; ok || op == ir.OpParameter {
			ops = append(ops, op)
		}
	}
	return ops
}

// lowerings maps every lowered op to its lowering; each file of an op
// family (elementwise.go, movement.go, dot.go, ...) registers its own from
// an init function. OpParameter is lowered by compile itself, as a
// placeholder.
var lowerings = map[ir.Op]lowerFunc{}

// registerLowering adds f as the lowering of ops; it runs from init
// functions only.
func registerLowering(f lowerFunc, ops ...ir.Op) {
	for _, op := range ops {
		if _, dup := lowerings[op]; dup {
			panic("metal: " + op.String() + " lowered twice")
		}
		lowerings[op] = f
	}
}

// NotLowered lists the IR ops with no MPSGraph lowering at all, and why.
// Programs that use them run on the CPU through the host driver (unless
// Options.NoCPUFallback). A test (setup/docs) fails when the IR gains an op
// that is neither registered by a lowering nor listed here with its reason.
var NotLowered = map[ir.Op]string{
	ir.OpWhile: "control flow is not lowered yet (MPSGraph has while and if operations taking blocks, which darwinkit v0.5.0 binds but nothing here builds): the program runs on the CPU",
	ir.OpCase:  "as while",
	ir.OpCall:  "as while (a frontend can inline calls instead)",
	ir.OpReduceRegion: "a reduction by an arbitrary body (a variadic one, as jax writes argmax) is not lowered: the program runs on the CPU; " +
		"the fixed monoids are reduce, which is",
	ir.OpSortRegion: "a sort by an arbitrary comparator is not lowered: the program runs on the CPU; the fixed orders are sort, which is",
	ir.OpSelectAndScatterRegion: "select_and_scatter by arbitrary bodies is not lowered: the program runs on the CPU; " +
		"max and min pooling's gradients are select_and_scatter, which is",
	ir.OpCholesky: "MPSGraph has no matrix decompositions: the program runs on the CPU, through the host driver's gonum " +
		"LAPACK in float64, which on unified memory reads the tensors in place, a fair first kernel " +
		"(MPS's MPSMatrixDecompositionCholesky, which darwinkit binds, is a kernel outside the graph, not used yet)",
	ir.OpTriangularSolve:    "as cholesky (MPSGraph has no triangular solve; MPS's MPSMatrixSolveTriangular is outside the graph)",
	ir.OpQr:                 "as cholesky (neither MPSGraph nor MPS has a QR decomposition)",
	ir.OpHouseholderProduct: "as qr",
	ir.OpEigh:               "as cholesky (neither MPSGraph nor MPS has an eigendecomposition)",
	ir.OpLu:                 "as cholesky (MPSGraph has no LU decomposition; MPS's MPSMatrixDecompositionLU is outside the graph)",
	ir.OpSvd:                "as eigh",
	ir.OpEig:                "as eigh (neither MPSGraph nor MPS has a nonsymmetric eigendecomposition)",
	ir.OpHessenberg:         "as qr (neither MPSGraph nor MPS has a Hessenberg reduction)",
	ir.OpTridiagonal:        "as qr (neither MPSGraph nor MPS has a tridiagonal reduction)",
	ir.OpQrPivoted:          "as qr",
	ir.OpSchur:              "as eig",
	ir.OpHostCall: "a host function (one of jax's Python callbacks) reads and writes host memory between kernels: the program " +
		"runs on the CPU (splitting the graph around the call would keep the rest on the GPU; not done yet)",
}

// Fallbacks lists, per lowered op, the cases that still run on the CPU
// through the host driver, and why. Each is decided at compile time from
// the program's types and attributes and from the methods the running
// macOS offers (see features). Any op also runs on the CPU when an operand
// has no elements but its result has some, except pad, concatenate,
// reduce, reduce_window, dot_general, convolution, scatter and
// select_and_scatter, which handle that case on the GPU.
var Fallbacks = map[ir.Op]string{
	ir.OpRng: "normal and truncated-normal numbers: TensorFlow's Box-Muller uses the C library's logf, sinf and cosf, " +
		"and the GPU's functions round differently, so the bits would differ; uniform numbers run on the GPU (macOS 13+)",
	ir.OpConvolution:          "three or more spatial dimensions: darwinkit v0.5.0 binds no 3-D convolution descriptor",
	ir.OpSort:                 "rows longer than 46340 (the stable tie-break key must fit int32), or before macOS 13 (argSort, cumulativeSum) / 13.2 for floats (reinterpretCast)",
	ir.OpArgSort:              "as sort",
	ir.OpFFT:                  "transform lengths above 2048: the DFT-matrix lowering would need matrices of more than 2^22 elements",
	ir.OpDotGeneral:           "integer operands whose broadcast product exceeds 2^27 elements (integers multiply-and-sum exactly rather than through the float matmul); int64 before macOS 13.3 and uint32 before 13.2 (MPSGraph's reductions lack them)",
	ir.OpReduceWindow:         "windows of more than 1024 elements (window positions are unrolled), unless cumulative (jax's cumsum, cummax and cummin: the whole axis, padded at one end), which is a scan of any length",
	ir.OpSelectAndScatter:     "windows of more than 1024 elements",
	ir.OpGather:               "operands of 2^31 elements or more (positions are int32)",
	ir.OpScatter:              "operands or updates of 2^31 elements or more; replace of 2^24 update elements or more (which of several writes to one element is last is found with ordinals, which scatterND carries as float32); replace of uint32 and int64 before macOS 13 (cut into 16-bit parts, each exact as float32, with bitwise ops); add, multiply, max and min of int64, max and min of uint32, and uint32 add and multiply before macOS 13.2 (MPSGraph's scatterND takes float32, float16 and int32 data)",
	ir.OpAnd:                  "integer operands before macOS 13 (bitwise ops)",
	ir.OpXor:                  "integer operands before macOS 13 (bitwise ops)",
	ir.OpShiftLeft:            "before macOS 13.2 (bitwise ops and reinterpretCastTensor)",
	ir.OpShiftRightLogical:    "as shift_left",
	ir.OpShiftRightArithmetic: "as shift_left",
	ir.OpOr:                   "integer operands before macOS 13 (bitwise ops)",
	ir.OpConvert:              "to or from complex64 (not defined by the host driver either); narrowing int64 before macOS 13 (bitwise ops)",
	ir.OpIota:                 "complex64 and bool iotas",
	ir.OpReduce:               "complex64 operands; int64 before macOS 13.3, uint32 sums before 13.2 and its max and min before 13.3 (MPSGraph's reductions take float32, float16 and int32, and int64 from 13.3)",
	ir.OpDiv:                  "int64 and uint32 operands before macOS 13.2 (MPSGraph's division has float32, float16 and int32 kernels only: they divide bit by bit, with bitwise ops and reinterpretCast)",
	ir.OpRem:                  "as divide",
	ir.OpPow:                  "int64 and uint32 operands before macOS 13 (the exponent's bits are read with bitwise ops)",
	ir.OpArgReduce:            "int64 and uint32 operands before macOS 13.3 (as reduce)",
	ir.OpCompare:              "LT, LE, GT, GE on complex64",
	ir.OpParameter:            "bfloat16 values anywhere in the program before macOS 13.2 (reinterpretCast and bitwise ops)",
	ir.OpReduceWindowRegion: "a body that mixes its operands' results (a variadic fold such as a windowed argmax), a body with other than elementwise ops, " +
		"complex64 operands, and windows of more than 1024 elements (window positions are unrolled) unless the fold is cumulative " +
		"(jax's cumsum, cumprod, cummax, cummin: the whole axis, padded at one end) by a monoid from its identity, which is a scan of any length",
	ir.OpScatterRegion: "a body that mixes its operands' results, or is not replace, keep, a monoid (add, multiply, max, min; or and and of bools) " +
		"or a choice of the operand or the update by a comparison (max or min with its NaN and tie rules); of int32, uint32 and int64 data " +
		"anything but replace and keep, of narrow integers products and sums of more than 2^24 / 2^bits updates (MPSGraph's scatterND " +
		"carries integer data as float32, exact only below 2^24); complex64 other than replace, keep and add; and scatter's own cases",
	ir.OpBitcastConvert: "a float or complex64 type on either side before macOS 13.2 (reinterpretCastTensor and bitwise ops); between integers it runs on every release",
}

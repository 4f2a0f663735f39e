package metal

import "github.com/metalplug/metalplug/backend/ir"

// Lowered lists the IR ops with an MPSGraph lowering, in ir.Ops() order, for
// tables of IR ops by driver. An op listed here may still run on the CPU in
// the cases Fallbacks names.
func Lowered() []ir.Op {
	var ops []ir.Op
	for _, op := range ir.Ops() {
		_, tuple := tupleLowerings[op]
		if _, ok := lowerings[op]; ok || tuple || op == ir.OpParameter {
			ops = append(ops, op)
		}
	}
	return ops
}

// lowerings maps every lowered op to its lowering; each file of an op
// family (elementwise.go, movement.go, dot.go, ...) registers its own from
// an init function. OpParameter is lowered by compile itself, as a
// placeholder.
var lowerings = ir.Kernels[lowerFunc]{}

// registerLowering adds f as the lowering of ops; it runs from init
// functions only.
func registerLowering(f lowerFunc, ops ...ir.Op) { lowerings.Register("metal", f, ops...) }

// NotLowered lists the IR ops with no MPSGraph lowering at all, and why;
// each reason stands alone, since it is what a user reads when the op runs
// on the CPU. backend/split runs these instructions on the host driver and
// the rest of the program on the GPU. A test (setup/docs) fails when the IR
// gains an op that is neither registered by a lowering nor listed here.
var NotLowered = map[ir.Op]string{
	ir.OpWhile: "a loop MPSGraph cannot run as one graph: its trip count is known only at run time (loops of a known count are unrolled or replayed), " +
		"so the host drives it, one wait for the GPU per iteration",
	ir.OpCase: "a conditional whose branches the GPU cannot run as one graph (a branch with a host part or a data-dependent loop): " +
		"the host reads its index (one wait) and runs the branch it picks, that branch's GPU work on the GPU; with none, on the CPU",
	ir.OpCall: "a call left after inlining: it runs on the CPU",
	ir.OpSelectAndScatterRegion: "select_and_scatter by arbitrary bodies is not lowered: it runs on the CPU; " +
		"max and min pooling's gradients are select_and_scatter, which is",
	ir.OpCholesky:           decomposition("MPSGraph has no Cholesky factorization (MPS's MPSMatrixDecompositionCholesky is a kernel outside the graph)"),
	ir.OpTriangularSolve:    decomposition("MPSGraph has no triangular solve (MPS's MPSMatrixSolveTriangular is a kernel outside the graph)"),
	ir.OpQr:                 decomposition("neither MPSGraph nor MPS has a QR decomposition"),
	ir.OpHouseholderProduct: decomposition("neither MPSGraph nor MPS forms Householder products"),
	ir.OpEigh:               decomposition("neither MPSGraph nor MPS has an eigendecomposition"),
	ir.OpLu:                 decomposition("MPSGraph has no LU factorization (MPS's MPSMatrixDecompositionLU is a kernel outside the graph)"),
	ir.OpSvd:                decomposition("neither MPSGraph nor MPS has a singular value decomposition"),
	ir.OpEig:                decomposition("neither MPSGraph nor MPS has a nonsymmetric eigendecomposition"),
	ir.OpHessenberg:         decomposition("neither MPSGraph nor MPS has a Hessenberg reduction"),
	ir.OpTridiagonal:        decomposition("neither MPSGraph nor MPS has a tridiagonal reduction"),
	ir.OpQrPivoted:          decomposition("neither MPSGraph nor MPS has a pivoted QR decomposition"),
	ir.OpSchur:              decomposition("neither MPSGraph nor MPS has a Schur decomposition"),
	ir.OpHostCall: "a host function (one of jax's Python callbacks) reads and writes host memory: it runs on the CPU, " +
		"between the GPU parts of the program",
}

// decomposition is the reason a matrix decomposition runs on the CPU.
func decomposition(why string) string {
	return why + ": it runs on the CPU through the host driver's LAPACK (gonum, in float64), which reads the unified memory in place"
}

// hostHome are the ops whose home is the host by design: matrix
// decompositions (MPSGraph has none; the host's LAPACK reads unified memory
// in place) and host callbacks. backend/split runs them there without a
// warning; any other op that leaves the GPU is said once.
var hostHome = map[ir.Op]bool{
	ir.OpCholesky: true, ir.OpTriangularSolve: true, ir.OpQr: true, ir.OpHouseholderProduct: true,
	ir.OpEigh: true, ir.OpLu: true, ir.OpSvd: true, ir.OpEig: true, ir.OpHessenberg: true,
	ir.OpTridiagonal: true, ir.OpQrPivoted: true, ir.OpSchur: true, ir.OpHostCall: true,
}

// Fallbacks lists, per lowered op, the cases that still run on the CPU
// through the host driver, and why. Each is decided at compile time from
// the program's types and attributes and from the methods the running
// macOS offers (see features). Any op also runs on the CPU when an operand
// has no elements but its result has some, except pad, concatenate,
// reduce, reduce_region, reduce_window, dot_general, convolution, scatter,
// select_and_scatter and gather, which handle that case on the GPU.
var Fallbacks = map[ir.Op]string{
	ir.OpRng: "normal and truncated-normal numbers: TensorFlow's Box-Muller uses the C library's logf, sinf and cosf, " +
		"and the GPU's functions round differently, so the bits would differ; uniform numbers run on the GPU",
	ir.OpConvolution: "four or more spatial dimensions (three are a sum of 2-D convolutions: darwinkit v0.5.0 binds no 3-D convolution descriptor)",
	ir.OpSort:        "rows longer than 46340 (the stable tie-break key must fit int32); float keys before macOS 13.2 (their order is made from their bits with reinterpretCast)",
	ir.OpArgSort:     "as sort",
	ir.OpReduceRegion: "bodies of other forms than jax's argmax and argmin over (value, index) (ir.ArgReduceOf) and results that each fold one operand by " +
		"add, mul, max, min, and, or or xor (ir.MonoidsOf) that are not elementwise, or are over complex64 or more than 1024 elements per result " +
		"(folded one element at a time); as reduce for each such fold (complex64; int64 before macOS 13.3, uint32 sums and products before " +
		"13.2 and its max and min before 13.3); argmax and argmin of int64 or uint32 values, or into int64 or uint32 indices, before 13.3 (their extremes " +
		"reduce in int64)",
	ir.OpSortRegion: "comparators of other forms than ir.SortKeysOf's (jax's sort, argsort, lax.sort with num_keys, top_k and approx_max_k are of them); " +
		"complex64 compared whole (jax compares its real, then its imaginary parts, which run on the GPU); a float compared plainly (not in a total order) as one key of several (no strict weak order once a NaN occurs); " +
		"otherwise as sort: rows longer than 46340, float keys before macOS 13.2 (reinterpretCast)",
	ir.OpFFT:                  "transform lengths above 2048: the DFT-matrix lowering would need matrices of more than 2^22 elements",
	ir.OpDotGeneral:           "integer operands whose broadcast product exceeds 2^27 elements (integers multiply-and-sum exactly rather than through the float matmul); int64 before macOS 13.3 and uint32 before 13.2 (MPSGraph's reductions lack them)",
	ir.OpReduceWindow:         "windows of more than 1024 elements (window positions are unrolled), unless cumulative (jax's cumsum, cummax and cummin: the whole axis, padded at one end), which is a scan of any length",
	ir.OpSelectAndScatter:     "windows of more than 1024 elements",
	ir.OpGather:               "operands of 2^31 elements or more (positions are int32)",
	ir.OpScatter:              "operands or updates of 2^31 elements or more; replace of 2^24 update elements or more (which of several writes to one element is last is found with ordinals, which scatterND carries as float32); add, multiply, max and min of int64, max and min of uint32, and uint32 add and multiply before macOS 13.2 (MPSGraph's scatterND takes float32, float16 and int32 data)",
	ir.OpShiftLeft:            "before macOS 13.2 (bitwise ops and reinterpretCastTensor)",
	ir.OpShiftRightLogical:    "as shift_left",
	ir.OpShiftRightArithmetic: "as shift_left",
	ir.OpConvert:              "to or from complex64 (not defined by the host driver either)",
	ir.OpIota:                 "complex64 and bool iotas",
	ir.OpReduce:               "complex64 operands; int64 before macOS 13.3, uint32 sums before 13.2 and its max and min before 13.3 (MPSGraph's reductions take float32, float16 and int32, and int64 from 13.3)",
	ir.OpDiv:                  "int64 and uint32 operands before macOS 13.2 (MPSGraph's division has float32, float16 and int32 kernels only: they divide bit by bit, with bitwise ops and reinterpretCast)",
	ir.OpRem:                  "as divide",
	ir.OpArgReduce:            "int64 and uint32 operands before macOS 13.3 (as reduce)",
	ir.OpCompare:              "LT, LE, GT, GE on complex64",
	ir.OpParameter:            "bfloat16 values anywhere in the program before macOS 13.2 (reinterpretCast)",
	ir.OpReduceWindowRegion: "a body with other than elementwise ops, " +
		"complex64 operands, and windows of more than 1024 elements (window positions are unrolled) unless the fold is cumulative " +
		"(jax's cumsum, cumprod, cummax, cummin: the whole axis, padded at one end) by a monoid from its identity, which is a scan of any length",
	ir.OpScatterRegion: "a body with other than elementwise ops that is not replace, keep, a monoid or a choice of the operand or the update by a comparison; " +
		"any other elementwise body (applied in rounds of distinct positions, or once per hit where it reads the operand alone) with more than 256 " +
		"index vectors, or, with repeated indices, more than 2048 update elements; " +
		"and scatter's own cases",
	ir.OpBitcastConvert: "a float or complex64 type on either side before macOS 13.2 (reinterpretCastTensor); between integers it runs on every release",
}

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
	OpNeg // on floats the sign bit flipped, NaN and zero included (IEEE negate); integers wrap
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
	OpErf
	OpLog1p // log(1 + x), accurate near 0
	OpExpm1 // exp(x) - 1, accurate near 0
	OpRound // to nearest, ties to even
	OpSin
	OpCos
	OpNot // logical not on bool, bitwise not on integers

	// Elementwise binary: operands of identical type, result of that type.
	OpAdd
	OpSub
	OpMul
	// OpDiv is floating division; on integers it truncates like C, x/0 is
	// 0 and MinInt/-1 wraps to MinInt (StableHLO leaves both to the
	// implementation; every driver gives these).
	OpDiv
	// OpRem is the remainder with the sign of the dividend, like C's fmod;
	// on integers x%0 is x (so x == (x/y)*y + x%y for every y) and
	// MinInt % -1 is 0.
	OpRem
	OpMax
	OpMin
	OpPow
	OpAnd
	OpOr
	OpXor // logical on bool, bitwise on integers
	// Shifts of integers by the second operand; an amount outside [0, bits)
	// shifts everything out: 0, or for the arithmetic right shift the sign.
	OpShiftLeft
	OpShiftRightLogical
	OpShiftRightArithmetic

	// OpCompare compares two operands of identical type; the result is bool.
	OpCompare
	// OpSelect picks from Args[1] where the bool Args[0] is true, else Args[2].
	OpSelect
	// OpConvert changes the dtype; floats to integers truncate toward zero
	// and saturate at the integer type's range (NaN becomes 0); integers
	// to narrower integers wrap. To float32 and float64 it rounds once; to
	// float16 and bfloat16 through float32 (as XLA's CPU and Eigen do), so
	// float64 and wide integers round twice near a half type's tie.
	OpConvert
	// OpBitcastConvert reinterprets each element's bits as Instr.Type's
	// dtype, of the same width.
	OpBitcastConvert
	// Complex numbers taken apart and put together: the parts are moved,
	// never computed on, so NaN payloads and signs, signed zeros and
	// infinities come through bit for bit.
	OpReal    // the real parts of the complex64 Args[0]: float32 of its shape
	OpImag    // the imaginary parts of the complex64 Args[0]: float32 of its shape
	OpComplex // complex64 with real parts Args[0] and imaginary parts Args[1], float32 of one shape

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

	// Indexing, sorting and the rest.
	OpReverse          // reverse the dims in Axes
	OpGather           // StableHLO gather: Args operand, start indices; Instr.Gather
	OpScatter          // StableHLO scatter: Args operand, indices, updates; Instr.Scatter
	OpSort             // sort along Instr.Sort.Dim; NaN is the largest value (last ascending, first descending); ties keep their order
	OpArgSort          // the stable permutation (in the result dtype) that OpSort applies
	OpArgReduce        // index (result dtype) of the first max or min along Axes[0]
	OpSelectAndScatter // Args operand, source: adds each source element at its window's first max (GE) or min (LE)
	OpRng              // Args key I64[1], counter I64[2]: Philox4x32-10 numbers, Instr.Rng
	OpFFT              // Instr.FFT over the innermost dims

	// Linear algebra, on float32 and float64 matrices in the two innermost
	// dims, batched over the leading dims (every operand has the same
	// batch dims). Attributes in Instr.Linalg. Qr, Eigh, Lu, Svd, Eig,
	// Hessenberg, Tridiagonal, QrPivoted and Schur yield
	// a tuple of results (no regions), which OpGetResult takes apart.

	// OpCholesky factors a symmetric positive definite a[..., n, n] as
	// L L^T (Linalg.Lower: L in the lower triangle, from a's lower
	// triangle) or U^T U (upper, from the upper triangle); only that
	// triangle of a is read, and the result's other triangle is zero
	// (XLA leaves it unspecified; jax zeroes it itself). A matrix that is
	// not positive definite gives NaN in every element of its result, as
	// jax's CPU and GPU Cholesky do. complex64 factors a Hermitian
	// positive definite a as L L^H or U^H U (zpotrf), the factor's
	// diagonal real and positive; a's diagonal's imaginary parts are not
	// read.
	OpCholesky
	// OpTriangularSolve solves op(a) x = b (Linalg.LeftSide) or
	// x op(a) = b for x, with a[..., k, k] triangular (Linalg.Lower reads
	// the lower triangle, else the upper; the other is not read) and
	// b[..., m, n], k = m on the left and n on the right; op(a) is a,
	// a^T or a^H (the conjugate transpose; for real types a^T) by
	// Linalg.Transpose. Real or complex64 (a and b of one dtype). With
	// Linalg.UnitDiagonal a's diagonal is taken as ones and not read. The
	// result has b's type. A zero on a's diagonal divides by zero
	// (infinities and NaN), as StableHLO's triangular_solve does.
	OpTriangularSolve
	// OpQr is LAPACK's geqrf of a[..., m, n]: it yields the packed
	// factorization [..., m, n] (R on and above the diagonal, the
	// Householder vectors v_i below it, v_i's unit leading entry
	// implied) and taus [..., min(m, n)], with Q = H_0 H_1 ... and
	// H_i = I - tau_i v_i v_i^T; what jax's custom_call "Qr" returns.
	// complex64 follows zgeqrf (zlarfg): H_i = I - tau_i v_i v_i^H with
	// tau_i complex (zero when column i below the diagonal is zero and its
	// diagonal entry real, else 1 <= Re tau_i <= 2, |tau_i - 1| <= 1) and
	// R's diagonal real.
	OpQr
	// OpHouseholderProduct is LAPACK's orgqr: from a[..., m, n] (m >= n)
	// holding Householder vectors below its diagonal as OpQr packs them,
	// and taus[..., k] (k <= n), the first n columns of H_0 H_1 ... H_{k-1}
	// ([..., m, n], orthonormal columns); a's diagonal and upper triangle
	// are not read. jax's custom_call "ProductOfElementaryHouseholderReflectors".
	// complex64 is ungqr, with OpQr's complex reflectors (unitary columns).
	OpHouseholderProduct
	// OpEigh decomposes a symmetric a[..., n, n], reading only its lower
	// (Linalg.Lower) or upper triangle: it yields the eigenvectors
	// [..., n, n] (column j is the unit vector of eigenvalue j; the sign of
	// each is unspecified) and the eigenvalues [..., n], ascending. jax's
	// custom_call "Eigh" (whose sort flag may leave the order unspecified:
	// ascending is one order). complex64 reads a Hermitian a (the other
	// triangle is the conjugate of the one read, the diagonal's imaginary
	// parts are not read): the eigenvectors are complex64 (each unit
	// vector's phase unspecified), the eigenvalues real, float32. A matrix
	// holding NaN or infinities gives NaN in both results.
	OpEigh
	// OpLu is LU decomposition with partial pivoting of a[..., m, n]: it
	// yields the packed factors [..., m, n] (unit-lower L below the
	// diagonal, U on and above), the int32 pivots [..., min(m, n)] (row i
	// was swapped with row pivots[i] >= i, zero-based, in turn) and the
	// int32 permutation [..., m] they make (row i of P a is row
	// permutation[i] of a), so that P a = L U, as jax's lu returns. A
	// singular matrix is still factored: U has a zero on its diagonal.
	OpLu
	// OpSvd is the singular value decomposition a = U diag(s) V^T of
	// a[..., m, n], k = min(m, n): it yields s [..., k] (descending, non
	// negative), u [..., m, m] and vt [..., n, n] with
	// Linalg.FullMatrices, else u [..., m, k] and vt [..., k, n] (each
	// singular vector's sign is unspecified, and so are the vectors of
	// repeated singular values).
	OpSvd
	// OpEig is the eigendecomposition of a general a[..., n, n] (LAPACK's
	// geev): it yields the eigenvalues' real and imaginary parts
	// [..., n] each (complex conjugate pairs adjacent, the one of positive
	// imaginary part first; otherwise in no specified order), then the
	// left eigenvectors' real and imaginary parts [..., n, n] each, then
	// the right eigenvectors' (column j belongs to eigenvalue j: right
	// A v_j = w_j v_j, left u_j^H A = w_j u_j^H), each of unit Euclidean
	// norm with its largest component real, as LAPACK normalizes them. A
	// matrix holding NaN or infinities, or one the QR iteration does not
	// converge on, gives NaN in every result. The parts are real tensors
	// of a's dtype: a frontend makes complex values of them. jax's CPU
	// custom_call lapack_sgeev_ffi. complex64 (zgeev) yields three
	// complex64 tensors instead: the eigenvalues [..., n] (in the order
	// the QR algorithm leaves them, no pairing), the left and the right
	// eigenvectors [..., n, n], normalized alike (lapack_cgeev_ffi).
	OpEig
	// OpHessenberg is the reduction of a[..., n, n] to upper Hessenberg
	// form H = Q^T a Q (LAPACK's gehrd over the whole matrix): it yields
	// the packed [..., n, n] (H on and above the first subdiagonal, the
	// Householder vectors v_i below it, column i's entries from row i+2,
	// v_i's unit entry at row i+1 implied) and taus [..., max(n-1, 0)],
	// Q = H_0 H_1 ... H_{n-2}, H_i = I - tau_i v_i v_i^T.
	OpHessenberg
	// OpTridiagonal is the reduction of a symmetric a[..., n, n] to
	// tridiagonal form T = Q^T a Q (LAPACK's sytrd), reading only a's lower
	// (Linalg.Lower) or upper triangle: it yields a [..., n, n] with the
	// Householder vectors in that triangle beyond the first off-diagonal
	// (the other triangle as a had it), the diagonal d [..., n], the
	// off-diagonal e [..., max(n-1, 0)] and taus [..., max(n-1, 0)], as
	// sytrd packs them: lower, Q = H_0 ... H_{n-2} with v_i's unit entry
	// at row i+1 and the rest below it in column i; upper,
	// Q = H_{n-2} ... H_0 with v_i's unit entry at row i and the rest above
	// it in column i+1. complex64 is hetrd of a Hermitian a (the
	// diagonal's imaginary parts are not read): T = Q^H a Q is real, so d
	// and e are float32, the reflectors H_i = I - tau_i v_i v_i^H have
	// complex64 taus, and a's diagonal comes out real.
	OpTridiagonal
	// OpQrPivoted is QR decomposition with column pivoting (LAPACK's
	// geqp3) of a[..., m, n], given int32 jpvt [..., n] (a nonzero entry
	// makes its column a leading one, moved to the front in order; the
	// free columns are pivoted by norm): it yields the packed
	// factorization of a P [..., m, n] as OpQr packs it, the int32
	// permutation [..., n] (column j of a P is column perm[j] of a,
	// zero-based) and taus [..., min(m, n)].
	OpQrPivoted
	// OpSchur is the real Schur decomposition a = Z T Z^T of a[..., n, n]:
	// it yields T [..., n, n] (upper quasi-triangular: 1 x 1 blocks for
	// real eigenvalues and standardized 2 x 2 blocks, equal diagonal and
	// off-diagonal entries of opposite signs, for conjugate pairs), the
	// orthogonal Z [..., n, n] and the eigenvalues' real and imaginary
	// parts [..., n] each, in T's diagonal order (LAPACK's gees without
	// sorting; unlike gees there is no balancing, which leaves every
	// property above). A matrix holding NaN or infinities, or one the QR
	// iteration does not converge on, gives NaN in every result.
	OpSchur

	// Control flow. Each holds sub-programs in Instr.Regions, which see
	// only their own parameters (a frontend passes what a region uses as
	// operands), and yields a tuple of results (Instr.Tuple) that
	// OpGetResult takes apart.
	OpWhile     // Args the initial values; Regions cond (values -> bool[]) and body (values -> values)
	OpCase      // Args[0] the int32 branch index (out of range: the last branch), Args[1:] the branches' operands; Regions the branches
	OpCall      // Args the operands of Regions[0], whose results it yields
	OpGetResult // result Param of the tuple Args[0]
	// OpReduceRegion folds N operands of one shape over Axes with the body
	// Regions[0]: (acc_1..acc_N, x_1..x_N) scalars -> acc_1..acc_N, from the
	// N init scalars Args[N:]; it yields N results. Variadic reductions (an
	// argmax as jax writes it) need it; ReduceWith recognises the fixed
	// monoids and emits OpReduce instead.
	OpReduceRegion
	// OpSortRegion sorts N operands of one shape together along Sort.Dim,
	// stably, by the comparator Regions[0]: (lhs_1, rhs_1, ..., lhs_N,
	// rhs_N) scalars -> bool, true when lhs goes first; it yields the N
	// sorted operands. SortWith recognises the fixed orders and emits OpSort.
	OpSortRegion
	// OpScatterRegion is scatter with an update body: Args N operands, the
	// indices, N updates (Scatter's dimension numbers; Kind unused);
	// Regions[0]: (operand_1..operand_N, update_1..update_N) scalars ->
	// operand_1..operand_N; it yields the N updated operands. ScatterWith
	// recognises the fixed kinds and emits OpScatter instead.
	OpScatterRegion
	// OpReduceWindowRegion is reduce_window with a body: Args N operands of
	// one shape then N init scalars, Window; Regions[0] as OpReduceRegion's;
	// padding positions hold the init values. ReduceWindowWith recognises
	// the fixed monoids and emits OpReduceWindow.
	OpReduceWindowRegion
	// OpSelectAndScatterRegion is select_and_scatter with bodies: Args the
	// operand, the source and the init scalar, Window; Regions[0] the
	// select (x, y scalars -> bool, true keeps x), Regions[1] the scatter
	// (acc, source scalars -> acc); it yields one result. Each window's
	// selection starts from its first position inside the operand and runs
	// in row-major order; padding positions are never selected.
	// SelectAndScatterWith recognises max and min pooling's gradients and
	// emits OpSelectAndScatter.
	OpSelectAndScatterRegion

	// OpHostCall runs a function of the host process (one of jax's Python
	// callbacks, registered with backend/hostcall) on Args[1:], and
	// yields Instr.Tuple: Tuple[0] a token (an empty bool tensor), then
	// the function's results. Args[0] is the token of what it must
	// follow. It has effects: a driver runs it once per execution of its
	// program, in program order, whether or not anything uses its
	// results, and on the host (the function reads and writes host
	// memory). Instr.Host names the function.
	OpHostCall

	numOps
)

// Ops lists every IR op, for drivers and tests that must cover them all.
func Ops() []Op {
	ops := make([]Op, 0, numOps-1)
	for o := OpParameter; o < numOps; o++ {
		ops = append(ops, o)
	}
	return ops
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
func (o Op) IsUnary() bool { return o >= OpNeg && o <= OpNot }

// IsBinary reports whether o is an elementwise op of two operands of one type.
func (o Op) IsBinary() bool { return o >= OpAdd && o <= OpShiftRightArithmetic }

// IsBitwise reports whether o is one of the binary ops on bits (and, or,
// xor and the shifts), defined on integers and (but for shifts) bool.
func (o Op) IsBitwise() bool { return o >= OpAnd && o <= OpShiftRightArithmetic }

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

// GatherDims are StableHLO's gather dimension numbers (without batching
// dims). Each index vector of the start indices (along IndexVectorDim, which
// may equal the indices' rank for scalar indices) addresses operand dims
// StartIndexMap; a slice of SliceSizes starts there (clamped to stay in
// bounds); CollapsedSliceDims (of size 1) are dropped; the remaining slice
// dims appear at result positions OffsetDims, the batch dims everywhere else.
type GatherDims struct {
	OffsetDims         []int
	CollapsedSliceDims []int
	StartIndexMap      []int
	IndexVectorDim     int
	SliceSizes         []int
}

// ScatterKind is how OpScatter combines an update with the operand.
type ScatterKind uint8

const (
	ScatterReplace ScatterKind = iota + 1 // later updates win where indices repeat
	ScatterAdd
	ScatterMul
	ScatterMax
	ScatterMin
)

func (k ScatterKind) String() string {
	return [...]string{"invalid", "replace", "add", "mul", "max", "min"}[min(int(k), 5)]
}

// ScatterDims are StableHLO's scatter dimension numbers (without batching
// dims): the mirror image of GatherDims. Updates whose window would leave the
// operand are skipped.
type ScatterDims struct {
	UpdateWindowDims         []int
	InsertedWindowDims       []int
	ScatterDimsToOperandDims []int
	IndexVectorDim           int
	Kind                     ScatterKind
	// Unique is StableHLO's unique_indices: the caller promises that no
	// two updates go to one element, so a driver may apply every update in
	// one step; what a broken promise gives is undefined, as in StableHLO.
	Unique bool
}

// SortAttrs say how OpSort and OpArgSort order a dimension.
type SortAttrs struct {
	Dim        int
	Descending bool
}

// RngDistribution is what OpRng draws.
type RngDistribution uint8

const (
	RngUniform         RngDistribution = iota + 1 // floats in [0,1); integers over their whole range
	RngNormal                                     // standard normal
	RngTruncatedNormal                            // standard normal, redrawn outside (-2, 2)
)

func (d RngDistribution) String() string {
	return [...]string{"invalid", "uniform", "normal", "truncated_normal"}[min(int(d), 3)]
}

// RngAttrs describe OpRng. The numbers follow TensorFlow's Philox4x32-10
// kernels for the same key and counter, so stateless ops agree with its CPU.
type RngAttrs struct {
	Distribution RngDistribution
}

// FFTKind is the transform OpFFT computes.
type FFTKind uint8

const (
	FFTForward     FFTKind = iota + 1 // complex64 -> complex64
	FFTInverse                        // complex64 -> complex64, scaled by 1/n
	FFTReal                           // float32 -> complex64, the non-negative frequencies (n/2+1)
	FFTInverseReal                    // complex64 -> float32, of Length
)

func (k FFTKind) String() string {
	return [...]string{"invalid", "fft", "ifft", "rfft", "irfft"}[min(int(k), 4)]
}

// FFTAttrs describe OpFFT over the len(Length) innermost dims.
type FFTAttrs struct {
	Kind   FFTKind
	Length []int
}

// TransposeKind is the op(a) of a triangular solve.
type TransposeKind uint8

const (
	NoTranspose TransposeKind = iota // a
	Transpose                        // a^T
	Adjoint                          // a^H: a^T on real types
)

func (k TransposeKind) String() string {
	return [...]string{"no_transpose", "transpose", "adjoint", "invalid"}[min(int(k), 3)]
}

// HostCallAttrs name the host function an OpHostCall runs: an ID the
// frontend that built the program registered it under.
type HostCallAttrs struct {
	ID uint64
}

// TokenType is the type of OpHostCall's tokens: an empty bool tensor,
// which carries no data and orders what takes it after what made it.
var TokenType = TensorType{DType: Bool, Shape: Shape{0}}

// LinalgAttrs describe the linear algebra ops; each reads the fields its
// doc names (OpQr, OpHouseholderProduct, OpLu, OpEig, OpHessenberg,
// OpQrPivoted and OpSchur read none, and need none).
type LinalgAttrs struct {
	Lower        bool          // OpCholesky, OpTriangularSolve, OpEigh, OpTridiagonal: the lower triangle, else the upper
	LeftSide     bool          // OpTriangularSolve: op(a) x = b, else x op(a) = b
	UnitDiagonal bool          // OpTriangularSolve: a's diagonal is ones and is not read
	Transpose    TransposeKind // OpTriangularSolve: op(a)
	FullMatrices bool          // OpSvd: square u and vt
}

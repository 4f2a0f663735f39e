package ir

import "slices"

// Linear algebra: the decompositions and the triangular solve, on float32
// and float64 matrices (complex64 where complexLinalg says) in the two
// innermost dims, batched over the leading dims (every operand has the
// same batch dims). Attributes in Instr.Linalg. Qr, Eigh, Lu, Svd, Eig,
// Hessenberg, Tridiagonal, QrPivoted and Schur yield a tuple of results
// (no regions), which OpGetResult takes apart.

// linalgOps factor, reduce and solve matrices.
var linalgOps = opDefs{
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
	{OpCholesky, OpInfo{Name: "cholesky", Arity: 1, Attrs: []string{"Linalg"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if in.Linalg == nil {
			return 0, missing("linalg attributes (lower)")
		}
		return b.Cholesky(a[0], in.Linalg.Lower), nil
	}}},
	// OpTriangularSolve solves op(a) x = b (Linalg.LeftSide) or
	// x op(a) = b for x, with a[..., k, k] triangular (Linalg.Lower reads
	// the lower triangle, else the upper; the other is not read) and
	// b[..., m, n], k = m on the left and n on the right; op(a) is a,
	// a^T or a^H (the conjugate transpose; for real types a^T) by
	// Linalg.Transpose. Real or complex64 (a and b of one dtype). With
	// Linalg.UnitDiagonal a's diagonal is taken as ones and not read. The
	// result has b's type. A zero on a's diagonal divides by zero
	// (infinities and NaN), as StableHLO's triangular_solve does.
	{OpTriangularSolve, OpInfo{Name: "triangular_solve", Arity: 2, Attrs: []string{"Linalg"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if in.Linalg == nil {
			return 0, missing("linalg attributes (left_side, lower, unit_diagonal, transpose)")
		}
		return b.TriangularSolve(a[0], a[1], *in.Linalg), nil
	}}},
	// OpQr is LAPACK's geqrf of a[..., m, n]: it yields the packed
	// factorization [..., m, n] (R on and above the diagonal, the
	// Householder vectors v_i below it, v_i's unit leading entry
	// implied) and taus [..., min(m, n)], with Q = H_0 H_1 ... and
	// H_i = I - tau_i v_i v_i^T; what jax's custom_call "Qr" returns.
	// complex64 follows zgeqrf (zlarfg): H_i = I - tau_i v_i v_i^H with
	// tau_i complex (zero when column i below the diagonal is zero and its
	// diagonal entry real, else 1 <= Re tau_i <= 2, |tau_i - 1| <= 1) and
	// R's diagonal real.
	{OpQr, OpInfo{Name: "qr", Arity: 1, Attrs: []string{"Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		return b.Qr(a[0]), nil
	}}},
	// OpHouseholderProduct is LAPACK's orgqr: from a[..., m, n] (m >= n)
	// holding Householder vectors below its diagonal as OpQr packs them,
	// and taus[..., k] (k <= n), the first n columns of H_0 H_1 ... H_{k-1}
	// ([..., m, n], orthonormal columns); a's diagonal and upper triangle
	// are not read. jax's custom_call "ProductOfElementaryHouseholderReflectors".
	// complex64 is ungqr, with OpQr's complex reflectors (unitary columns).
	{OpHouseholderProduct, OpInfo{Name: "householder_product", Arity: 2, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		return b.HouseholderProduct(a[0], a[1]), nil
	}}},
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
	{OpEigh, OpInfo{Name: "eigh", Arity: 1, Attrs: []string{"Linalg", "Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if in.Linalg == nil {
			return 0, missing("linalg attributes (lower)")
		}
		return b.Eigh(a[0], in.Linalg.Lower), nil
	}}},
	// OpLu is LU decomposition with partial pivoting of a[..., m, n]: it
	// yields the packed factors [..., m, n] (unit-lower L below the
	// diagonal, U on and above), the int32 pivots [..., min(m, n)] (row i
	// was swapped with row pivots[i] >= i, zero-based, in turn) and the
	// int32 permutation [..., m] they make (row i of P a is row
	// permutation[i] of a), so that P a = L U, as jax's lu returns. A
	// singular matrix is still factored: U has a zero on its diagonal.
	{OpLu, OpInfo{Name: "lu", Arity: 1, Attrs: []string{"Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		return b.Lu(a[0]), nil
	}}},
	// OpSvd is the singular value decomposition a = U diag(s) V^T of
	// a[..., m, n], k = min(m, n): it yields s [..., k] (descending, non
	// negative), u [..., m, m] and vt [..., n, n] with
	// Linalg.FullMatrices, else u [..., m, k] and vt [..., k, n] (each
	// singular vector's sign is unspecified, and so are the vectors of
	// repeated singular values).
	{OpSvd, OpInfo{Name: "svd", Arity: 1, Attrs: []string{"Linalg", "Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if in.Linalg == nil {
			return 0, missing("linalg attributes (full_matrices)")
		}
		return b.Svd(a[0], in.Linalg.FullMatrices), nil
	}}},
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
	{OpEig, OpInfo{Name: "eig", Arity: 1, Attrs: []string{"Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		return b.Eig(a[0]), nil
	}}},
	// OpHessenberg is the reduction of a[..., n, n] to upper Hessenberg
	// form H = Q^T a Q (LAPACK's gehrd over the whole matrix): it yields
	// the packed [..., n, n] (H on and above the first subdiagonal, the
	// Householder vectors v_i below it, column i's entries from row i+2,
	// v_i's unit entry at row i+1 implied) and taus [..., max(n-1, 0)],
	// Q = H_0 H_1 ... H_{n-2}, H_i = I - tau_i v_i v_i^T.
	{OpHessenberg, OpInfo{Name: "hessenberg", Arity: 1, Attrs: []string{"Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		return b.Hessenberg(a[0]), nil
	}}},
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
	{OpTridiagonal, OpInfo{Name: "tridiagonal", Arity: 1, Attrs: []string{"Linalg", "Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if in.Linalg == nil {
			return 0, missing("linalg attributes (lower)")
		}
		return b.Tridiagonal(a[0], in.Linalg.Lower), nil
	}}},
	// OpQrPivoted is QR decomposition with column pivoting (LAPACK's
	// geqp3) of a[..., m, n], given int32 jpvt [..., n] (a nonzero entry
	// makes its column a leading one, moved to the front in order; the
	// free columns are pivoted by norm): it yields the packed
	// factorization of a P [..., m, n] as OpQr packs it, the int32
	// permutation [..., n] (column j of a P is column perm[j] of a,
	// zero-based) and taus [..., min(m, n)].
	{OpQrPivoted, OpInfo{Name: "qr_pivoted", Arity: 2, Attrs: []string{"Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		return b.QrPivoted(a[0], a[1]), nil
	}}},
	// OpSchur is the real Schur decomposition a = Z T Z^T of a[..., n, n]:
	// it yields T [..., n, n] (upper quasi-triangular: 1 x 1 blocks for
	// real eigenvalues and standardized 2 x 2 blocks, equal diagonal and
	// off-diagonal entries of opposite signs, for conjugate pairs), the
	// orthogonal Z [..., n, n] and the eigenvalues' real and imaginary
	// parts [..., n] each, in T's diagonal order (LAPACK's gees without
	// sorting; unlike gees there is no balancing, which leaves every
	// property above). A matrix holding NaN or infinities, or one the QR
	// iteration does not converge on, gives NaN in every result.
	{OpSchur, OpInfo{Name: "schur", Arity: 1, Attrs: []string{"Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		return b.Schur(a[0]), nil
	}}},
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

// matrixType checks that t is a float32 or float64 tensor of rank 2 or
// more, and returns its batch dims and matrix size.
func (b *Builder) matrixType(op Op, what string, t TensorType) (batch Shape, m, n int, ok bool) {
	r := t.Shape.Rank()
	if r < 2 || (t.DType != F32 && t.DType != F64 && !complexLinalg(op, t.DType)) {
		b.fail(op, "%s %v must be a float32 or float64 matrix (rank 2 or more)%s", what, t, complexLinalgNote(op))
		return nil, 0, 0, false
	}
	return t.Shape[:r-2].Clone(), t.Shape[r-2], t.Shape[r-1], true
}

// matrixShape is batch followed by an m x n matrix.
func matrixShape(batch Shape, dims ...int) Shape {
	return append(batch.Clone(), dims...)
}

// squareOperand checks that x is a batch of square matrices.
func (b *Builder) squareOperand(op Op, x Value) (TensorType, Shape, int, bool) {
	t := b.Type(x)
	batch, m, n, ok := b.matrixType(op, "operand", t)
	if ok && m != n {
		b.fail(op, "operand %v must be a batch of square matrices", t)
		return t, nil, 0, false
	}
	return t, batch, n, ok
}

// Cholesky factors the symmetric positive definite matrices of a, from and
// into the lower triangle (lower) or the upper.
func (b *Builder) Cholesky(a Value, lower bool) Value {
	if b.err != nil {
		return 0
	}
	t, _, _, ok := b.squareOperand(OpCholesky, a)
	if !ok {
		return 0
	}
	return b.emit(Instr{Op: OpCholesky, Args: []Value{a}, Type: TensorType{t.DType, t.Shape.Clone()}, Linalg: &LinalgAttrs{Lower: lower}})
}

// TriangularSolve solves op(a) x = b (attrs.LeftSide) or x op(a) = b for x.
// Only Lower, LeftSide, UnitDiagonal and Transpose of attrs count.
func (b *Builder) TriangularSolve(a, rhs Value, attrs LinalgAttrs) Value {
	if b.err != nil {
		return 0
	}
	ta, tb := b.Type(a), b.Type(rhs)
	_, batchA, k, ok := b.squareOperand(OpTriangularSolve, a)
	if !ok {
		return 0
	}
	batchB, m, n, ok := b.matrixType(OpTriangularSolve, "right-hand side", tb)
	if !ok {
		return 0
	}
	if ta.DType != tb.DType || !batchA.Equal(batchB) {
		return b.fail(OpTriangularSolve, "a %v and b %v must have one dtype and the same batch dims", ta, tb)
	}
	if attrs.Transpose > Adjoint {
		return b.fail(OpTriangularSolve, "unknown transpose %v", attrs.Transpose)
	}
	if (attrs.LeftSide && k != m) || (!attrs.LeftSide && k != n) {
		side := "columns"
		if attrs.LeftSide {
			side = "rows"
		}
		return b.fail(OpTriangularSolve, "a %v must have as many rows as b %v has %s (left_side=%v)", ta, tb, side, attrs.LeftSide)
	}
	la := LinalgAttrs{Lower: attrs.Lower, LeftSide: attrs.LeftSide, UnitDiagonal: attrs.UnitDiagonal, Transpose: attrs.Transpose}
	return b.emit(Instr{Op: OpTriangularSolve, Args: []Value{a, rhs}, Type: TensorType{tb.DType, tb.Shape.Clone()}, Linalg: &la})
}

// Qr is LAPACK's geqrf of a: it yields the packed factorization and the taus.
func (b *Builder) Qr(a Value) Value {
	if b.err != nil {
		return 0
	}
	t := b.Type(a)
	batch, m, n, ok := b.matrixType(OpQr, "operand", t)
	if !ok {
		return 0
	}
	return b.emitTuple(Instr{Op: OpQr, Args: []Value{a}, Tuple: []TensorType{
		{t.DType, t.Shape.Clone()},
		{t.DType, matrixShape(batch, min(m, n))},
	}})
}

// HouseholderProduct is LAPACK's orgqr: the first n columns of the product
// of the Householder reflectors held below a's diagonal and in taus.
func (b *Builder) HouseholderProduct(a, taus Value) Value {
	if b.err != nil {
		return 0
	}
	ta, tt := b.Type(a), b.Type(taus)
	batch, m, n, ok := b.matrixType(OpHouseholderProduct, "operand", ta)
	if !ok {
		return 0
	}
	r := tt.Shape.Rank()
	if tt.DType != ta.DType || r != len(batch)+1 || !tt.Shape[:r-1].Equal(batch) {
		return b.fail(OpHouseholderProduct, "taus %v must be a vector per matrix of a %v, of its dtype", tt, ta)
	}
	if m < n || tt.Shape[r-1] > n {
		return b.fail(OpHouseholderProduct, "a %v must have at least as many rows as columns, and taus %v at most as many taus as columns", ta, tt)
	}
	return b.emit(Instr{Op: OpHouseholderProduct, Args: []Value{a, taus}, Type: TensorType{ta.DType, ta.Shape.Clone()}})
}

// Eigh decomposes the symmetric matrices of a (read from the lower triangle,
// or the upper): it yields the eigenvectors (columns) and the eigenvalues,
// ascending.
func (b *Builder) Eigh(a Value, lower bool) Value {
	if b.err != nil {
		return 0
	}
	t, batch, n, ok := b.squareOperand(OpEigh, a)
	if !ok {
		return 0
	}
	return b.emitTuple(Instr{Op: OpEigh, Args: []Value{a}, Linalg: &LinalgAttrs{Lower: lower}, Tuple: []TensorType{
		{t.DType, t.Shape.Clone()},
		{eigenvalueType(t.DType), matrixShape(batch, n)},
	}})
}

// Lu factors a with partial pivoting: it yields the packed factors, the
// int32 pivots and the int32 permutation.
func (b *Builder) Lu(a Value) Value {
	if b.err != nil {
		return 0
	}
	t := b.Type(a)
	batch, m, n, ok := b.matrixType(OpLu, "operand", t)
	if !ok {
		return 0
	}
	return b.emitTuple(Instr{Op: OpLu, Args: []Value{a}, Tuple: []TensorType{
		{t.DType, t.Shape.Clone()},
		{I32, matrixShape(batch, min(m, n))},
		{I32, matrixShape(batch, m)},
	}})
}

// Svd is the singular value decomposition of a: it yields s, u and vt.
func (b *Builder) Svd(a Value, fullMatrices bool) Value {
	if b.err != nil {
		return 0
	}
	t := b.Type(a)
	batch, m, n, ok := b.matrixType(OpSvd, "operand", t)
	if !ok {
		return 0
	}
	k := min(m, n)
	um, vn := k, k
	if fullMatrices {
		um, vn = m, n
	}
	return b.emitTuple(Instr{Op: OpSvd, Args: []Value{a}, Linalg: &LinalgAttrs{FullMatrices: fullMatrices}, Tuple: []TensorType{
		{t.DType, matrixShape(batch, k)},
		{t.DType, matrixShape(batch, m, um)},
		{t.DType, matrixShape(batch, vn, n)},
	}})
}

// Eig is LAPACK's geev of the general matrices of a: of a real a it
// yields the eigenvalues' real and imaginary parts, then the left
// eigenvectors' and the right eigenvectors' (columns), each as two real
// tensors of a's dtype; of a complex64 a, the eigenvalues, the left and
// the right eigenvectors as three complex64 tensors.
func (b *Builder) Eig(a Value) Value {
	if b.err != nil {
		return 0
	}
	t, batch, n, ok := b.squareOperand(OpEig, a)
	if !ok {
		return 0
	}
	w := func() TensorType { return TensorType{t.DType, matrixShape(batch, n)} }
	v := func() TensorType { return TensorType{t.DType, t.Shape.Clone()} }
	if t.DType == C64 {
		return b.emitTuple(Instr{Op: OpEig, Args: []Value{a}, Tuple: []TensorType{w(), v(), v()}})
	}
	return b.emitTuple(Instr{Op: OpEig, Args: []Value{a}, Tuple: []TensorType{w(), w(), v(), v(), v(), v()}})
}

// Hessenberg is LAPACK's gehrd of a: it yields the packed Hessenberg form
// and the taus.
func (b *Builder) Hessenberg(a Value) Value {
	if b.err != nil {
		return 0
	}
	t, batch, n, ok := b.squareOperand(OpHessenberg, a)
	if !ok {
		return 0
	}
	return b.emitTuple(Instr{Op: OpHessenberg, Args: []Value{a}, Tuple: []TensorType{
		{t.DType, t.Shape.Clone()},
		{t.DType, matrixShape(batch, max(n-1, 0))},
	}})
}

// Tridiagonal is LAPACK's sytrd of the symmetric matrices of a (read from
// the lower triangle, or the upper), or hetrd of complex64 Hermitian ones:
// it yields the packed reflectors, the diagonal, the off-diagonal (real:
// float32 for complex64) and the taus.
func (b *Builder) Tridiagonal(a Value, lower bool) Value {
	if b.err != nil {
		return 0
	}
	t, batch, n, ok := b.squareOperand(OpTridiagonal, a)
	if !ok {
		return 0
	}
	return b.emitTuple(Instr{Op: OpTridiagonal, Args: []Value{a}, Linalg: &LinalgAttrs{Lower: lower}, Tuple: []TensorType{
		{t.DType, t.Shape.Clone()},
		{eigenvalueType(t.DType), matrixShape(batch, n)},
		{eigenvalueType(t.DType), matrixShape(batch, max(n-1, 0))},
		{t.DType, matrixShape(batch, max(n-1, 0))},
	}})
}

// QrPivoted is LAPACK's geqp3 of a with the int32 leading-column flags
// jpvt: it yields the packed factorization of a P, the zero-based int32
// column permutation and the taus.
func (b *Builder) QrPivoted(a, jpvt Value) Value {
	if b.err != nil {
		return 0
	}
	t, tp := b.Type(a), b.Type(jpvt)
	batch, m, n, ok := b.matrixType(OpQrPivoted, "operand", t)
	if !ok {
		return 0
	}
	if tp.DType != I32 || !tp.Shape.Equal(matrixShape(batch, n)) {
		return b.fail(OpQrPivoted, "jpvt %v must be an int32 vector of a column flag per column of a %v", tp, t)
	}
	return b.emitTuple(Instr{Op: OpQrPivoted, Args: []Value{a, jpvt}, Tuple: []TensorType{
		{t.DType, t.Shape.Clone()},
		{I32, matrixShape(batch, n)},
		{t.DType, matrixShape(batch, min(m, n))},
	}})
}

// Schur is the real Schur decomposition of a: it yields T, Z and the
// eigenvalues' real and imaginary parts.
func (b *Builder) Schur(a Value) Value {
	if b.err != nil {
		return 0
	}
	t, batch, n, ok := b.squareOperand(OpSchur, a)
	if !ok {
		return 0
	}
	return b.emitTuple(Instr{Op: OpSchur, Args: []Value{a}, Tuple: []TensorType{
		{t.DType, t.Shape.Clone()},
		{t.DType, t.Shape.Clone()},
		{t.DType, matrixShape(batch, n)},
		{t.DType, matrixShape(batch, n)},
	}})
}

// complexLinalgOps are the linear algebra ops that take complex64
// operands: Hermitian for cholesky, eigh and tridiagonal, op(a) = a^H
// conjugating for triangular_solve's Adjoint, complex reflectors for qr
// and householder_product, complex eigenvalues and vectors for eig
// (linalgOps documents each).
var complexLinalgOps = []Op{OpCholesky, OpTriangularSolve, OpQr, OpHouseholderProduct, OpEigh, OpEig, OpTridiagonal}

// complexLinalg reports whether op takes operands of dtype d as complex64.
func complexLinalg(op Op, d DType) bool {
	return d == C64 && slices.Contains(complexLinalgOps, op)
}

// complexLinalgNote completes matrixType's refusal for the ops that also
// take complex64.
func complexLinalgNote(op Op) string {
	if slices.Contains(complexLinalgOps, op) {
		return ", or a complex64 one"
	}
	return ""
}

// eigenvalueType is the dtype of eigh's eigenvalues of a d matrix, and of
// tridiagonal's diagonal and off-diagonal: real, float32 for complex64.
func eigenvalueType(d DType) DType {
	if d == C64 {
		return F32
	}
	return d
}

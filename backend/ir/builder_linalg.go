package ir

// Linear algebra: the decompositions and the triangular solve (op.go
// documents each op's semantics). Every operand is a float32 or float64
// batch of matrices in its two innermost dims (or complex64, for the ops
// builder_linalg_complex.go names).

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

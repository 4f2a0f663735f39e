package ir

import "slices"

// complexLinalgOps are the linear algebra ops that take complex64
// operands: Hermitian for cholesky, eigh and tridiagonal, op(a) = a^H
// conjugating for triangular_solve's Adjoint, complex reflectors for qr
// and householder_product, complex eigenvalues and vectors for eig
// (op.go documents each).
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

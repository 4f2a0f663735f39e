// Package lapack computes the IR's linear algebra ops (ir.OpCholesky,
// ir.OpTriangularSolve, ir.OpQr, ir.OpHouseholderProduct, ir.OpEigh,
// ir.OpLu, ir.OpSvd, and in nonsymmetric.go ir.OpEig, ir.OpHessenberg,
// ir.OpTridiagonal, ir.OpQrPivoted, ir.OpSchur) on one row-major float64 matrix at a time, through
// gonum's pure-Go LAPACK. The host driver and the IR's evaluator both call
// it, rounding to their dtypes after, so the two cannot disagree on what a
// decomposition's unspecified parts (signs of eigenvectors, the other
// triangle) hold; the conformance suite checks both against the
// properties that define each op (A = L L^T, Q^T Q = I, A V = V diag(w)).
//
// Each function overwrites its matrix operand with the result, as LAPACK
// does, and takes sizes that may be zero.
package lapack

import (
	"math"

	"github.com/metalplug/metalplug/backend/ir"
	"gonum.org/v1/gonum/blas"
	blasimpl "gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/lapack"
	lapackimpl "gonum.org/v1/gonum/lapack/gonum"
)

var (
	impl lapackimpl.Implementation
	bi   blasimpl.Implementation
)

func uplo(lower bool) blas.Uplo {
	if lower {
		return blas.Lower
	}
	return blas.Upper
}

func fillNaN(xs ...[]float64) {
	for _, x := range xs {
		for i := range x {
			x[i] = math.NaN()
		}
	}
}

func finite(a []float64) bool {
	for _, v := range a {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// work is a workspace of the size a LAPACK routine asks for by its
// workspace query (query calls it with lwork -1).
func work(query func(work []float64, lwork int)) []float64 {
	w := make([]float64, 1)
	query(w, -1)
	return make([]float64, max(1, int(w[0])))
}

// Cholesky factors the n x n matrix a in place from its lower (or upper)
// triangle and zeroes the other triangle; a matrix that is not positive
// definite (or holds NaN) becomes all NaN.
func Cholesky(a []float64, n int, lower bool) {
	if n == 0 {
		return
	}
	if !impl.Dpotrf(uplo(lower), n, a, n) || !finite(a) {
		fillNaN(a)
		return
	}
	for i := range n {
		for j := range n {
			if (lower && j > i) || (!lower && j < i) {
				a[i*n+j] = 0
			}
		}
	}
}

// TriangularSolve overwrites the m x n matrix b with the solution x of
// op(a) x = b (attrs.LeftSide; a is m x m) or x op(a) = b (a is n x n).
func TriangularSolve(a, b []float64, m, n int, attrs ir.LinalgAttrs) {
	if m == 0 || n == 0 {
		return
	}
	side, k := blas.Right, n
	if attrs.LeftSide {
		side, k = blas.Left, m
	}
	trans := blas.NoTrans
	if attrs.Transpose != ir.NoTranspose {
		trans = blas.Trans
	}
	diag := blas.NonUnit
	if attrs.UnitDiagonal {
		diag = blas.Unit
	}
	bi.Dtrsm(side, uplo(attrs.Lower), trans, diag, m, n, 1, a, k, b, n)
}

// Qr overwrites the m x n matrix a with its geqrf factorization (R on and
// above the diagonal, Householder vectors below) and fills tau
// (min(m, n) long).
func Qr(a []float64, m, n int, tau []float64) {
	if m == 0 || n == 0 {
		return
	}
	w := work(func(w []float64, l int) { impl.Dgeqrf(m, n, a, n, tau, w, l) })
	impl.Dgeqrf(m, n, a, n, tau, w, len(w))
}

// HouseholderProduct overwrites the m x n matrix a (m >= n >= len(tau)),
// which holds Householder vectors below its diagonal, with the first n
// columns of the product of the reflectors (orgqr).
func HouseholderProduct(a []float64, m, n int, tau []float64) {
	if m == 0 || n == 0 {
		return
	}
	k := len(tau)
	w := work(func(w []float64, l int) { impl.Dorgqr(m, n, k, a, n, tau, w, l) })
	impl.Dorgqr(m, n, k, a, n, tau, w, len(w))
}

// Eigh overwrites the symmetric n x n matrix a (read from its lower or
// upper triangle) with its eigenvectors, as columns, and fills w with the
// eigenvalues, ascending. A matrix holding NaN or infinities, or one the
// iteration does not converge on, gives NaN everywhere.
func Eigh(a []float64, n int, lower bool, w []float64) {
	if n == 0 {
		return
	}
	// Only the triangle named is read: mirror it into the other, so that
	// the finiteness check sees what LAPACK reads.
	for i := range n {
		for j := range n {
			if (lower && j > i) || (!lower && j < i) {
				a[i*n+j] = a[j*n+i]
			}
		}
	}
	if !finite(a) {
		fillNaN(a, w)
		return
	}
	ws := work(func(ws []float64, l int) { impl.Dsyev(lapack.EVCompute, uplo(lower), n, a, n, w, ws, l) })
	if !impl.Dsyev(lapack.EVCompute, uplo(lower), n, a, n, w, ws, len(ws)) {
		fillNaN(a, w)
	}
}

// Lu overwrites the m x n matrix a with its packed LU factors (partial
// pivoting), and fills pivots (min(m, n) long, zero-based) and perm (m
// long: row i of P a is row perm[i] of a).
func Lu(a []float64, m, n int, pivots, perm []int) {
	for i := range perm {
		perm[i] = i
	}
	if m == 0 || n == 0 {
		return
	}
	impl.Dgetrf(m, n, a, n, pivots) // a singular matrix is factored all the same
	for i, p := range pivots {
		perm[i], perm[p] = perm[p], perm[i]
	}
}

// Svd overwrites the m x n matrix a with scratch and fills s (min(m, n),
// descending), u (m x m when full, else m x min(m, n)) and vt (n x n when
// full, else min(m, n) x n). A matrix holding NaN or infinities, or one the
// iteration does not converge on, gives NaN everywhere.
func Svd(a []float64, m, n int, full bool, s, u, vt []float64) {
	k := min(m, n)
	ucols, vrows := k, k
	job := lapack.SVDStore
	if full {
		ucols, vrows, job = m, n, lapack.SVDAll
	}
	if k == 0 { // no singular values: the vectors are any orthonormal basis
		identity(u, m, ucols)
		identity(vt, vrows, n)
		return
	}
	if !finite(a) {
		fillNaN(s, u, vt)
		return
	}
	ws := work(func(ws []float64, l int) {
		impl.Dgesvd(job, job, m, n, a, n, s, u, ucols, vt, n, ws, l)
	})
	if !impl.Dgesvd(job, job, m, n, a, n, s, u, ucols, vt, n, ws, len(ws)) {
		fillNaN(s, u, vt)
	}
}

// identity fills the r x c matrix x with ones on its diagonal.
func identity(x []float64, r, c int) {
	for i := range r {
		for j := range c {
			x[i*c+j] = 0
			if i == j {
				x[i*c+j] = 1
			}
		}
	}
}

package lapack

import (
	"gonum.org/v1/gonum/lapack"
)

// The nonsymmetric eigenproblem and the reductions jax's CPU lowerings
// call LAPACK for (geev, gehrd, sytrd, geqp3, gees), on one row-major
// float64 matrix at a time, as the rest of this package.

// Eig computes the eigenvalues of the n x n matrix a (overwritten with
// scratch) into wr and wi (real and imaginary parts, conjugate pairs
// adjacent, the positive imaginary part first), and the left and right
// eigenvectors, as columns, into vlRe, vlIm and vrRe, vrIm, unpacked from
// LAPACK's shared conjugate-pair columns: each of unit Euclidean norm with
// its largest component real. A matrix holding NaN or infinities, or one
// the QR iteration does not converge on, gives NaN everywhere.
func Eig(a []float64, n int, wr, wi, vlRe, vlIm, vrRe, vrIm []float64) {
	if n == 0 {
		return
	}
	if !finite(a) {
		fillNaN(wr, wi, vlRe, vlIm, vrRe, vrIm)
		return
	}
	vl, vr := make([]float64, n*n), make([]float64, n*n)
	w := work(func(w []float64, l int) {
		impl.Dgeev(lapack.LeftEVCompute, lapack.RightEVCompute, n, a, n, wr, wi, vl, n, vr, n, w, l)
	})
	if impl.Dgeev(lapack.LeftEVCompute, lapack.RightEVCompute, n, a, n, wr, wi, vl, n, vr, n, w, len(w)) != 0 {
		fillNaN(wr, wi, vlRe, vlIm, vrRe, vrIm)
		return
	}
	unpackPairs(vl, wi, n, vlRe, vlIm)
	unpackPairs(vr, wi, n, vrRe, vrIm)
}

// unpackPairs writes the complex eigenvectors packed in v (a real
// eigenvalue's vector in its column; a conjugate pair's real and imaginary
// parts in the pair's two columns) as real and imaginary parts.
func unpackPairs(v, wi []float64, n int, re, im []float64) {
	for j := 0; j < n; j++ {
		if wi[j] == 0 || j == n-1 {
			for i := range n {
				re[i*n+j], im[i*n+j] = v[i*n+j], 0
			}
			continue
		}
		for i := range n {
			x, y := v[i*n+j], v[i*n+j+1]
			re[i*n+j], im[i*n+j] = x, y
			re[i*n+j+1], im[i*n+j+1] = x, -y
		}
		j++
	}
}

// Hessenberg overwrites the n x n matrix a with its reduction to upper
// Hessenberg form by an orthogonal similarity (gehrd over the whole
// matrix): H on and above the first subdiagonal, the Householder vectors
// below it, and fills tau (n - 1 long).
func Hessenberg(a []float64, n int, tau []float64) {
	if n <= 1 {
		return
	}
	w := work(func(w []float64, l int) { impl.Dgehrd(n, 0, n-1, a, n, tau, w, l) })
	impl.Dgehrd(n, 0, n-1, a, n, tau, w, len(w))
}

// Tridiagonal overwrites the symmetric n x n matrix a (read from its lower
// or upper triangle) with its reduction to tridiagonal form by an
// orthogonal similarity (sytrd): the Householder vectors in that triangle
// below (or above) the first off-diagonal; d gets the diagonal (n long),
// e the off-diagonal and tau the reflectors' scalars (n - 1 long each).
func Tridiagonal(a []float64, n int, lower bool, d, e, tau []float64) {
	if n == 0 {
		return
	}
	w := work(func(w []float64, l int) { impl.Dsytrd(uplo(lower), n, a, n, d, e, tau, w, l) })
	impl.Dsytrd(uplo(lower), n, a, n, d, e, tau, w, len(w))
}

// QrPivoted overwrites the m x n matrix a with the geqrf-style
// factorization of a P (geqp3: R on and above the diagonal, Householder
// vectors below) and fills tau (min(m, n) long). On entry a nonzero
// jpvt[j] makes column j a leading column (moved to the front, in order);
// on return column j of a P is column jpvt[j] of a (zero-based).
func QrPivoted(a []float64, m, n int, jpvt []int, tau []float64) {
	if m == 0 || n == 0 {
		// No reflectors: only the leading columns move, as geqp3 moves them.
		fixed := 0
		for j := range n {
			if jpvt[j] != 0 {
				jpvt[j] = jpvt[fixed]
				jpvt[fixed] = j
				fixed++
			} else {
				jpvt[j] = j
			}
		}
		return
	}
	for j, p := range jpvt {
		jpvt[j] = -1
		if p != 0 {
			jpvt[j] = j
		}
	}
	w := work(func(w []float64, l int) { impl.Dgeqp3(m, n, a, n, jpvt, tau, w, l) })
	impl.Dgeqp3(m, n, a, n, jpvt, tau, w, len(w))
}

// Schur overwrites the n x n matrix a with its real Schur form T (upper
// quasi-triangular, its 2 x 2 diagonal blocks standardized: equal diagonal
// entries and off-diagonal entries of opposite signs, one block per
// conjugate pair of eigenvalues) and fills z with the orthogonal Schur
// vectors, a = Z T Z^T, and wr, wi with the eigenvalues in T's diagonal
// order. Unlike LAPACK's gees there is no balancing, which changes no
// property of the decomposition. A matrix holding NaN or infinities, or
// one the QR iteration does not converge on, gives NaN everywhere.
func Schur(a []float64, n int, z, wr, wi []float64) {
	if n == 0 {
		return
	}
	if !finite(a) {
		fillNaN(a, z, wr, wi)
		return
	}
	tau := make([]float64, max(n-1, 0))
	Hessenberg(a, n, tau)
	copy(z, a)
	if n > 1 {
		w := work(func(w []float64, l int) { impl.Dorghr(n, 0, n-1, z, n, tau, w, l) })
		impl.Dorghr(n, 0, n-1, z, n, tau, w, len(w))
	} else {
		z[0] = 1
	}
	for i := 2; i < n; i++ {
		for j := range i - 1 {
			a[i*n+j] = 0
		}
	}
	w := work(func(w []float64, l int) {
		impl.Dhseqr(lapack.EigenvaluesAndSchur, lapack.SchurOrig, n, 0, n-1, a, n, wr, wi, z, n, w, l)
	})
	if impl.Dhseqr(lapack.EigenvaluesAndSchur, lapack.SchurOrig, n, 0, n-1, a, n, wr, wi, z, n, w, len(w)) != 0 {
		fillNaN(a, z, wr, wi)
	}
}

package lapack

// The complex64 nonsymmetric eigenproblem (LAPACK's zgeev) and the
// Hermitian reduction to tridiagonal form (zhetrd), on one row-major
// complex128 matrix at a time, in plain Go as the rest of complex.go.
// CEig follows zgeev step by step: balancing (zgebal: isolated eigenvalues
// permuted to the ends, rows and columns scaled by powers of 2, which a
// companion matrix, as jnp.roots builds, needs for its accuracy), the
// Hessenberg reduction (zgehd2) and its unitary Q (zunghr), the shifted
// complex QR algorithm on it (zlahqr: Wilkinson shifts, Ahues and
// Kressner's deflation test, exceptional shifts every 10 iterations
// without a deflation) accumulating the Schur vectors, the eigenvectors of
// the triangular factor by back substitution (ztrevc, scaled against
// overflow) transformed back by the Schur vectors and the balancing
// (zgebak), and each vector normalized as zgeev does. The eigenvalues come
// in the order the QR algorithm leaves them on the diagonal, as LAPACK's,
// which for the sizes zhseqr hands to zlahqr (below 75) is the same
// algorithm.

import (
	"math"
	"math/cmplx"
)

const (
	safmin = 0x1p-1022 // dlamch('S')
	ulp    = 0x1p-52   // dlamch('P'): epsilon times the base
)

func cabs1(z complex128) float64 { return math.Abs(real(z)) + math.Abs(imag(z)) }

// CEig computes the eigenvalues w of the n x n matrix a (overwritten with
// scratch) and its left and right eigenvectors, as the columns of vl and
// vr: u_j^H a = w_j u_j^H and a v_j = w_j v_j, each of unit Euclidean norm
// with its largest component real. A matrix holding NaN or infinities, or
// one the QR iteration does not converge on, gives NaN everywhere.
func CEig(a []complex128, n int, w, vl, vr []complex128) {
	if n == 0 {
		return
	}
	if !cfinite(a) {
		cfillNaN(w)
		cfillNaN(vl)
		cfillNaN(vr)
		return
	}
	ilo, ihi, perm, scale := cgebal(a, n)
	tau := make([]complex128, n)
	cgehrd(a, n, ilo, ihi, tau)
	cunghr(a, n, ilo, ihi, tau, vl)
	for i := range n {
		for j := 0; j+1 < i; j++ {
			a[i*n+j] = 0
		}
	}
	for i := range n { // the eigenvalues balancing isolated
		if i < ilo || i > ihi {
			w[i] = a[i*n+i]
		}
	}
	if !clahqr(a, n, ilo, ihi, w, vl) {
		cfillNaN(w)
		cfillNaN(vl)
		cfillNaN(vr)
		return
	}
	copy(vr, vl)
	ctrevc(a, n, vl, vr)
	cgebak(vl, n, ilo, ihi, perm, scale, true)
	cgebak(vr, n, ilo, ihi, perm, scale, false)
	normalizeColumns(vl, n)
	normalizeColumns(vr, n)
}

// cgebal is zgebal with job 'B' on the n x n a: it permutes rows and
// columns that isolate an eigenvalue to the bottom (rows) and the left
// (columns), recording in perm the index each position was swapped with,
// then scales rows and columns ilo..ihi (zero-based, inclusive) by powers
// of 2 until their norms are balanced, recording the factors in scale.
func cgebal(a []complex128, n int) (ilo, ihi int, perm []int, scale []float64) {
	perm, scale = make([]int, n), make([]float64, n)
	for i := range n {
		perm[i], scale[i] = i, 1
	}
	k, l := 0, n-1
	swap := func(j, m int) { // columns j and m over rows 0..l, rows j and m over columns k..n-1
		perm[m] = j
		if j == m {
			return
		}
		for i := 0; i <= l; i++ {
			a[i*n+j], a[i*n+m] = a[i*n+m], a[i*n+j]
		}
		for i := k; i < n; i++ {
			a[j*n+i], a[m*n+i] = a[m*n+i], a[j*n+i]
		}
	}
	// Rows isolating an eigenvalue (zero off the diagonal within columns
	// 0..l) go to the bottom.
	for again := true; again; {
		again = false
		for j := l; j >= 0; j-- {
			isolated := true
			for i := 0; i <= l && isolated; i++ {
				isolated = i == j || a[j*n+i] == 0
			}
			if !isolated {
				continue
			}
			swap(j, l)
			if l == 0 {
				return 0, 0, perm, scale
			}
			l--
			again = true
			break
		}
	}
	// Columns isolating an eigenvalue (zero off the diagonal within rows
	// k..l) go to the left.
	for again := true; again; {
		again = false
		for j := k; j <= l; j++ {
			isolated := true
			for i := k; i <= l && isolated; i++ {
				isolated = i == j || a[i*n+j] == 0
			}
			if !isolated {
				continue
			}
			swap(j, k)
			k++
			again = true
			break
		}
	}
	const sclfac, factor = 2.0, 0.95
	sfmin1 := safmin / ulp
	sfmax1 := 1 / sfmin1
	sfmin2 := sfmin1 * sclfac
	sfmax2 := 1 / sfmin2
	for noconv := true; noconv; {
		noconv = false
		for i := k; i <= l; i++ {
			var c, r, ca, ra float64
			for j := k; j <= l; j++ {
				c = math.Hypot(c, cmplx.Abs(a[j*n+i]))
				r = math.Hypot(r, cmplx.Abs(a[i*n+j]))
			}
			ica, ira := 0, k
			for j := 0; j <= l; j++ {
				if cabs1(a[j*n+i]) > cabs1(a[ica*n+i]) {
					ica = j
				}
			}
			for j := k; j < n; j++ {
				if cabs1(a[i*n+j]) > cabs1(a[i*n+ira]) {
					ira = j
				}
			}
			ca, ra = cmplx.Abs(a[ica*n+i]), cmplx.Abs(a[i*n+ira])
			if c == 0 || r == 0 {
				continue
			}
			g, f, s := r/sclfac, 1.0, c+r
			for c < g && max(f, c, ca) < sfmax2 && min(r, g, ra) > sfmin2 {
				f, c, ca, r, g, ra = f*sclfac, c*sclfac, ca*sclfac, r/sclfac, g/sclfac, ra/sclfac
			}
			g = c / sclfac
			for g >= r && max(r, ra) < sfmax2 && min(f, c, g, ca) > sfmin2 {
				f, c, g, ca, r, ra = f/sclfac, c/sclfac, g/sclfac, ca/sclfac, r*sclfac, ra*sclfac
			}
			if c+r >= factor*s ||
				(f < 1 && scale[i] < 1 && f*scale[i] <= sfmin1) ||
				(f > 1 && scale[i] > 1 && scale[i] >= sfmax1/f) {
				continue
			}
			scale[i] *= f
			noconv = true
			for j := k; j < n; j++ {
				a[i*n+j] *= complex(1/f, 0)
			}
			for j := 0; j <= l; j++ {
				a[j*n+i] *= complex(f, 0)
			}
		}
	}
	return k, l, perm, scale
}

// cgebak is zgebak with job 'B': it undoes cgebal's scaling and
// permutation on the rows of the n x n eigenvectors v (left ones divided
// by the scale factors, right ones multiplied).
func cgebak(v []complex128, n, ilo, ihi int, perm []int, scale []float64, left bool) {
	if ilo != ihi {
		for i := ilo; i <= ihi; i++ {
			s := scale[i]
			if left {
				s = 1 / s
			}
			for j := range n {
				v[i*n+j] *= complex(s, 0)
			}
		}
	}
	for ii := range n {
		i := ii
		if i >= ilo && i <= ihi {
			continue
		}
		if i < ilo {
			i = ilo - 1 - ii
		}
		if k := perm[i]; k != i {
			for j := range n {
				v[i*n+j], v[k*n+j] = v[k*n+j], v[i*n+j]
			}
		}
	}
}

// cgehrd is zgehd2: it reduces rows and columns ilo..ihi of the n x n a to
// upper Hessenberg form by the unitary similarity Q^H a Q,
// Q = H_ilo ... H_{ihi-1}, H_i = I - tau_i v_i v_i^H, v_i's unit entry at
// row i+1 and the rest below it in column i of a.
func cgehrd(a []complex128, n, ilo, ihi int, tau []complex128) {
	for i := range tau {
		tau[i] = 0
	}
	for i := ilo; i < ihi; i++ {
		beta, t := larfg(a[(i+1)*n+i], a, func(r int) int { return (i+2+r)*n + i }, ihi-i-1)
		tau[i] = t
		a[(i+1)*n+i] = 1 // v is column i, rows i+1..ihi
		// a[0..ihi][i+1..ihi] -= tau (a v) v^H
		for r := 0; r <= ihi; r++ {
			var s complex128
			for c := i + 1; c <= ihi; c++ {
				s += a[r*n+c] * a[c*n+i]
			}
			s *= t
			for c := i + 1; c <= ihi; c++ {
				a[r*n+c] -= s * cmplx.Conj(a[c*n+i])
			}
		}
		// a[i+1..ihi][i+1..n-1] -= conj(tau) v (v^H a)
		ct := cmplx.Conj(t)
		for c := i + 1; c < n; c++ {
			var s complex128
			for r := i + 1; r <= ihi; r++ {
				s += cmplx.Conj(a[r*n+i]) * a[r*n+c]
			}
			s *= ct
			for r := i + 1; r <= ihi; r++ {
				a[r*n+c] -= a[r*n+i] * s
			}
		}
		a[(i+1)*n+i] = complex(beta, 0)
	}
}

// cunghr is zunghr: it fills the n x n q with the Q of cgehrd's
// reflectors held below a's first subdiagonal.
func cunghr(a []complex128, n, ilo, ihi int, tau, q []complex128) {
	for i := range q {
		q[i] = 0
	}
	for i := range n {
		q[i*n+i] = 1
	}
	for i := ihi - 1; i >= ilo; i-- { // q = H_i q, on rows and columns i+1..ihi
		t := tau[i]
		if t == 0 {
			continue
		}
		v := func(r int) complex128 {
			if r == i+1 {
				return 1
			}
			return a[r*n+i]
		}
		for c := i + 1; c <= ihi; c++ {
			var s complex128
			for r := i + 1; r <= ihi; r++ {
				s += cmplx.Conj(v(r)) * q[r*n+c]
			}
			s *= t
			for r := i + 1; r <= ihi; r++ {
				q[r*n+c] -= v(r) * s
			}
		}
	}
}

// clahqr is zlahqr with wantt and wantz: it reduces the upper Hessenberg
// n x n h, whose rows and columns outside ilo..ihi are already triangular,
// to upper triangular Schur form T by unitary similarities, accumulated
// into z (z <- z Q), and sets w[ilo..ihi] to T's diagonal. It reports
// whether every eigenvalue converged within 30 max(10, ihi-ilo+1)
// iterations each.
func clahqr(h []complex128, n, ilo, ihi int, w, z []complex128) bool {
	const dat1, kexsh = 0.75, 10
	if ilo == ihi {
		w[ilo] = h[ilo*n+ilo]
		return true
	}
	scaleRow := func(i, from, to int, s complex128) {
		for j := from; j <= to; j++ {
			h[i*n+j] *= s
		}
	}
	scaleCol := func(j, from, to int, s complex128) {
		for i := from; i <= to; i++ {
			h[i*n+j] *= s
		}
		for i := range n {
			z[i*n+j] *= s
		}
	}
	// Make the subdiagonal real.
	for i := ilo + 1; i <= ihi; i++ {
		if sub := h[i*n+i-1]; imag(sub) != 0 {
			sc := sub / complex(cabs1(sub), 0)
			sc = cmplx.Conj(sc) / complex(cmplx.Abs(sc), 0)
			h[i*n+i-1] = complex(cmplx.Abs(sub), 0)
			scaleRow(i, i, n-1, sc)
			scaleCol(i, 0, min(n-1, i+1), cmplx.Conj(sc))
		}
	}
	nh := ihi - ilo + 1
	smlnum := safmin * (float64(nh) / ulp)
	itmax := 30 * max(10, nh)
	kdefl := 0
	at := func(i, j int) complex128 { return h[i*n+j] }
	for i := ihi; i >= ilo; {
		// The active block is rows and columns l..i; i+1..ihi have converged.
		l := ilo
		converged := false
		for range itmax + 1 {
			// A negligible subdiagonal entry splits the block.
			k := i
			for ; k > l; k-- {
				if cabs1(at(k, k-1)) <= smlnum {
					break
				}
				tst := cabs1(at(k-1, k-1)) + cabs1(at(k, k))
				if tst == 0 {
					if k-2 >= ilo {
						tst += math.Abs(real(at(k-1, k-2)))
					}
					if k+1 <= ihi {
						tst += math.Abs(real(at(k+1, k)))
					}
				}
				if math.Abs(real(at(k, k-1))) <= ulp*tst { // Ahues and Kressner's test
					ab := max(cabs1(at(k, k-1)), cabs1(at(k-1, k)))
					ba := min(cabs1(at(k, k-1)), cabs1(at(k-1, k)))
					aa := max(cabs1(at(k, k)), cabs1(at(k-1, k-1)-at(k, k)))
					bb := min(cabs1(at(k, k)), cabs1(at(k-1, k-1)-at(k, k)))
					s := aa + ab
					if ba*(ab/s) <= max(smlnum, ulp*(bb*(aa/s))) {
						break
					}
				}
			}
			l = k
			if l > ilo {
				h[l*n+l-1] = 0
			}
			if l >= i {
				converged = true
				break
			}
			kdefl++
			var t complex128 // the shift
			switch {
			case kdefl%(2*kexsh) == 0:
				t = complex(dat1*math.Abs(real(at(i, i-1))), 0) + at(i, i)
			case kdefl%kexsh == 0:
				t = complex(dat1*math.Abs(real(at(l+1, l))), 0) + at(l, l)
			default: // Wilkinson's: the eigenvalue of the trailing 2 x 2 block nearer h[i][i]
				t = at(i, i)
				u := cmplx.Sqrt(at(i-1, i)) * cmplx.Sqrt(at(i, i-1))
				if s := cabs1(u); s != 0 {
					x := 0.5 * (at(i-1, i-1) - t)
					sx := cabs1(x)
					s = max(s, sx)
					xs, us := x/complex(s, 0), u/complex(s, 0)
					y := complex(s, 0) * cmplx.Sqrt(xs*xs+us*us)
					if sx > 0 {
						if d := x / complex(sx, 0); real(d)*real(y)+imag(d)*imag(y) < 0 {
							y = -y
						}
					}
					t -= u * (u / (x + y))
				}
			}
			// Start the sweep at row m where two consecutive subdiagonal
			// entries are small enough that the bulge leaves h[m][m-1]
			// negligible.
			var v [2]complex128
			m := i - 1
			for ; ; m-- {
				h11, h22 := at(m, m), at(m+1, m+1)
				h11s := h11 - t
				h21 := real(at(m+1, m))
				s := cabs1(h11s) + math.Abs(h21)
				h11s /= complex(s, 0)
				h21 /= s
				v = [2]complex128{h11s, complex(h21, 0)}
				if m == l {
					break
				}
				h10 := real(at(m, m-1))
				if math.Abs(h10)*math.Abs(h21) <= ulp*(cabs1(h11s)*(cabs1(h11)+cabs1(h22))) {
					break
				}
			}
			// The single-shift QR sweep: a reflector from v makes the
			// bulge, each next one chases it a row down.
			for k := m; k < i; k++ {
				if k > m {
					v = [2]complex128{at(k, k-1), at(k+1, k-1)}
				}
				beta, t1 := larfg(v[0], v[1:], func(r int) int { return r }, 1)
				if k > m {
					h[k*n+k-1] = complex(beta, 0)
					h[(k+1)*n+k-1] = 0
				}
				v2 := v[1]
				t2 := complex(real(t1*v2), 0)
				ct1 := cmplx.Conj(t1)
				for j := k; j < n; j++ {
					sum := ct1*h[k*n+j] + t2*h[(k+1)*n+j]
					h[k*n+j] -= sum
					h[(k+1)*n+j] -= sum * v2
				}
				cv2 := cmplx.Conj(v2)
				for j := 0; j <= min(k+2, i); j++ {
					sum := t1*h[j*n+k] + t2*h[j*n+k+1]
					h[j*n+k] -= sum
					h[j*n+k+1] -= sum * cv2
				}
				for j := range n {
					sum := t1*z[j*n+k] + t2*z[j*n+k+1]
					z[j*n+k] -= sum
					z[j*n+k+1] -= sum * cv2
				}
				if k == m && m > l {
					// Started below l: rescale to keep h[m][m-1] real.
					temp := 1 - t1
					temp /= complex(cmplx.Abs(temp), 0)
					h[(m+1)*n+m] *= cmplx.Conj(temp)
					if m+2 <= i {
						h[(m+2)*n+m+1] *= temp
					}
					for j := m; j <= i; j++ {
						if j != m+1 {
							scaleRow(j, j+1, n-1, temp)
							scaleCol(j, 0, j-1, cmplx.Conj(temp))
						}
					}
				}
			}
			if temp := at(i, i-1); imag(temp) != 0 { // keep h[i][i-1] real
				r := cmplx.Abs(temp)
				h[i*n+i-1] = complex(r, 0)
				temp /= complex(r, 0)
				scaleRow(i, i+1, n-1, cmplx.Conj(temp))
				scaleCol(i, 0, i-1, temp)
			}
		}
		if !converged {
			return false
		}
		w[i] = at(i, i)
		kdefl = 0
		i = l - 1
	}
	return true
}

// ctrevc is ztrevc with side 'B' and howmny 'B': from the upper triangular
// n x n t it computes the eigenvectors of t by back substitution and
// overwrites the Schur vectors in vl and vr (each a copy of z) with
// z times them, the eigenvectors of z t z^H, each scaled to a largest
// |re| + |im| of 1. A diagonal entry of t - t[k][k] smaller than
// ulp |t[k][k]| is taken as that (a repeated eigenvalue's vector then
// comes out nearly parallel to the first one's), and the solves rescale
// rather than overflow.
func ctrevc(t []complex128, n int, vl, vr []complex128) {
	const big = 0x1p500
	smlnum := safmin * (float64(n) / ulp)
	x := make([]complex128, n)
	d := make([]complex128, n)
	// shift fills d with t's diagonal less t[ki][ki], raised to smin where
	// it is smaller.
	shift := func(ki, from, to int) {
		smin := max(ulp*cabs1(t[ki*n+ki]), smlnum)
		for k := from; k < to; k++ {
			d[k] = t[k*n+k] - t[ki*n+ki]
			if cabs1(d[k]) < smin {
				d[k] = complex(smin, 0)
			}
		}
	}
	// divide sets x[j] to x[j] / dj, first scaling x[lo:hi] and *scale down
	// when the quotient would pass big.
	divide := func(j, lo, hi int, dj complex128, scale *float64) {
		if num, den := cmplx.Abs(x[j]), cmplx.Abs(dj); num > big*den {
			f := big * den / num
			for k := lo; k < hi; k++ {
				x[k] *= complex(f, 0)
			}
			*scale *= f
		}
		x[j] /= dj
	}
	for ki := n - 1; ki >= 0; ki-- {
		// (t[:ki][:ki] - t[ki][ki]) x = -scale t[:ki][ki], the vector (x, scale, 0).
		shift(ki, 0, ki)
		for k := range ki {
			x[k] = -t[k*n+ki]
		}
		scale := 1.0
		for j := ki - 1; j >= 0; j-- {
			divide(j, 0, ki, d[j], &scale)
			for r := range j {
				x[r] -= t[r*n+j] * x[j]
			}
		}
		for r := range n {
			s := complex(scale, 0) * vr[r*n+ki]
			for k := range ki {
				s += vr[r*n+k] * x[k]
			}
			vr[r*n+ki] = s
		}
		scaleColumn(vr, n, ki)
	}
	for ki := range n {
		// (t[ki+1:][ki+1:] - t[ki][ki])^H x = -scale conj(t[ki][ki+1:]), the vector (0, scale, x).
		shift(ki, ki+1, n)
		for k := ki + 1; k < n; k++ {
			x[k] = -cmplx.Conj(t[ki*n+k])
		}
		scale := 1.0
		for j := ki + 1; j < n; j++ {
			for r := ki + 1; r < j; r++ {
				x[j] -= cmplx.Conj(t[r*n+j]) * x[r]
			}
			divide(j, ki+1, n, cmplx.Conj(d[j]), &scale)
		}
		for r := range n {
			s := complex(scale, 0) * vl[r*n+ki]
			for k := ki + 1; k < n; k++ {
				s += vl[r*n+k] * x[k]
			}
			vl[r*n+ki] = s
		}
		scaleColumn(vl, n, ki)
	}
}

// scaleColumn scales column j of the n x n v to a largest |re| + |im| of 1.
func scaleColumn(v []complex128, n, j int) {
	var m float64
	for r := range n {
		m = max(m, cabs1(v[r*n+j]))
	}
	if m == 0 {
		return
	}
	for r := range n {
		v[r*n+j] /= complex(m, 0)
	}
}

// normalizeColumns scales each column of the n x n v as zgeev does: to
// Euclidean norm 1, then by the phase that makes its largest component
// (the first of the largest) real.
func normalizeColumns(v []complex128, n int) {
	for j := range n {
		var norm float64
		for r := range n {
			norm = math.Hypot(norm, cmplx.Abs(v[r*n+j]))
		}
		big, at := -1.0, 0
		for r := range n {
			v[r*n+j] /= complex(norm, 0)
			if m := real(v[r*n+j])*real(v[r*n+j]) + imag(v[r*n+j])*imag(v[r*n+j]); m > big {
				big, at = m, r
			}
		}
		phase := cmplx.Conj(v[at*n+j]) / complex(math.Sqrt(big), 0)
		for r := range n {
			v[r*n+j] *= phase
		}
		v[at*n+j] = complex(real(v[at*n+j]), 0)
	}
}

// CTridiagonal is zhetd2: it reduces the Hermitian n x n a, read from its
// lower (or upper) triangle, to real symmetric tridiagonal form T = Q^H a Q
// by a unitary similarity, in place: the diagonal d and the off-diagonal e
// (real, also written into a's diagonal and first off-diagonal in that
// triangle) and the reflectors H_i = I - tau_i v_i v_i^H in the rest of
// that triangle. Lower, Q = H_0 ... H_{n-2}, v_i's unit entry at row i+1
// and the rest below it in column i; upper, Q = H_{n-2} ... H_0, v_i's
// unit entry at row i and the rest above it in column i+1. The other
// triangle is left as it was.
func CTridiagonal(a []complex128, n int, lower bool, d, e, tau []complex128) {
	if n == 0 {
		return
	}
	// rank2 is zhemv, then zher2 of the k x k Hermitian block at rows and
	// columns off..off+k-1 of a (its lower or upper triangle read and
	// written): with v the reflector at v(r) (r from 0), it sets
	// x = tau block v, w = x - tau/2 (x^H v) v and block -= v w^H + w v^H.
	rank2 := func(off, k int, v func(r int) complex128, t complex128) {
		el := func(r, c int) complex128 { // block[r][c] from the triangle read
			switch {
			case r == c:
				return complex(real(a[(off+r)*n+off+c]), 0)
			case (r > c) == lower:
				return a[(off+r)*n+off+c]
			default:
				return cmplx.Conj(a[(off+c)*n+off+r])
			}
		}
		x := make([]complex128, k)
		for r := range k {
			var s complex128
			for c := range k {
				s += el(r, c) * v(c)
			}
			x[r] = t * s
		}
		var dot complex128 // x^H v
		for r := range k {
			dot += cmplx.Conj(x[r]) * v(r)
		}
		alpha := -0.5 * t * dot
		for r := range k {
			x[r] += alpha * v(r)
		}
		for r := range k {
			for c := range k {
				if r != c && (r > c) != lower {
					continue
				}
				p := &a[(off+r)*n+off+c]
				*p -= v(r)*cmplx.Conj(x[c]) + x[r]*cmplx.Conj(v(c))
				if r == c {
					*p = complex(real(*p), 0)
				}
			}
		}
	}
	real0 := func(i int) { a[i*n+i] = complex(real(a[i*n+i]), 0) }
	if lower {
		real0(0)
		for i := 0; i+1 < n; i++ {
			beta, t := larfg(a[(i+1)*n+i], a, func(r int) int { return (i+2+r)*n + i }, n-i-2)
			e[i] = complex(beta, 0)
			if t != 0 {
				a[(i+1)*n+i] = 1
				rank2(i+1, n-i-1, func(r int) complex128 { return a[(i+1+r)*n+i] }, t)
			} else {
				real0(i + 1)
			}
			a[(i+1)*n+i] = e[i]
			d[i] = complex(real(a[i*n+i]), 0)
			tau[i] = t
		}
		d[n-1] = complex(real(a[(n-1)*n+n-1]), 0)
		return
	}
	real0(n - 1)
	for i := n - 2; i >= 0; i-- {
		beta, t := larfg(a[i*n+i+1], a, func(r int) int { return r*n + i + 1 }, i)
		e[i] = complex(beta, 0)
		if t != 0 {
			a[i*n+i+1] = 1
			rank2(0, i+1, func(r int) complex128 { return a[r*n+i+1] }, t)
		} else {
			real0(i)
		}
		a[i*n+i+1] = e[i]
		d[i+1] = complex(real(a[(i+1)*n+i+1]), 0)
		tau[i] = t
	}
	d[0] = complex(real(a[0]), 0)
}

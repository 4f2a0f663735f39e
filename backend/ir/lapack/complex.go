package lapack

// The complex64 linear algebra ops (cholesky, triangular_solve, qr,
// householder_product, eigh; eig and tridiagonal in complex_eig.go) on one
// row-major complex128 matrix at a time.
// gonum's LAPACK has no complex routines, so these are written here in
// plain Go, following the conventions of LAPACK's zpotrf, ztrsm, zgeqrf
// (zlarfg's reflectors: H = I - tau v v^H, v's first element 1, tau
// complex, R's diagonal real), zungqr and zheev (eigenvalues real and
// ascending), which jax's CPU results and numpy's follow. Eigh is a cyclic
// Jacobi with complex rotations: a few dozen lines that reach full
// accuracy on their own, where the real 2n x 2n embedding
// [[Re, -Im], [Im, Re]] doubles every eigenvalue and would need each
// doubled (or repeated) eigenspace re-orthogonalized as complex vectors,
// from numerically clustered eigenvalues, to give n of them back.

import (
	"fmt"
	"math"
	"math/cmplx"
	"slices"
	"sort"

	"github.com/metalplug/metalplug/backend/ir"
)

// ComplexOps are the IR ops ApplyComplex computes on complex64 operands.
func ComplexOps() []ir.Op {
	return []ir.Op{ir.OpCholesky, ir.OpTriangularSolve, ir.OpQr, ir.OpHouseholderProduct, ir.OpEigh, ir.OpEig, ir.OpTridiagonal}
}

// ApplyComplex is Apply on complex operands (complex64 elements, widened
// to complex128): it returns the results in order as complex128, eigh's
// real eigenvalues and tridiagonal's real d and e with zero imaginary
// parts, for the caller to round to the result dtypes.
func ApplyComplex(in ir.Instr, argTypes []ir.TensorType, args [][]complex128) ([][]complex128, error) {
	if !slices.Contains(ComplexOps(), in.Op) {
		return nil, fmt.Errorf("lapack: %s of complex operands", in.Op)
	}
	types := in.Tuple
	if types == nil {
		types = []ir.TensorType{in.Type}
	}
	outs := make([][]complex128, len(types))
	for i, t := range types {
		outs[i] = make([]complex128, t.Shape.Size())
	}
	if len(args) == 0 || len(argTypes) != len(args) {
		return nil, fmt.Errorf("lapack: %s: %d operands of %d types", in.Op, len(args), len(argTypes))
	}
	at := argTypes[0].Shape
	r := at.Rank()
	if r < 2 {
		return nil, fmt.Errorf("lapack: %s: operand %v is not a matrix", in.Op, argTypes[0])
	}
	m, n := at[r-2], at[r-1]
	batches := at[:r-2].Size()
	var attrs ir.LinalgAttrs
	if in.Linalg != nil {
		attrs = *in.Linalg
	}
	part := func(x []complex128, b int) []complex128 {
		k := len(x) / batches
		return x[b*k : (b+1)*k]
	}
	for b := range batches {
		switch in.Op {
		case ir.OpCholesky:
			l := part(outs[0], b)
			copy(l, part(args[0], b))
			CCholesky(l, n, attrs.Lower)
		case ir.OpTriangularSolve:
			rhs := argTypes[1].Shape
			x := part(outs[0], b)
			copy(x, part(args[1], b))
			CTriangularSolve(part(args[0], b), x, rhs[r-2], rhs[r-1], attrs)
		case ir.OpQr:
			qr := part(outs[0], b)
			copy(qr, part(args[0], b))
			CQr(qr, m, n, part(outs[1], b))
		case ir.OpHouseholderProduct:
			q := part(outs[0], b)
			copy(q, part(args[0], b))
			CHouseholderProduct(q, m, n, part(args[1], b))
		case ir.OpEigh:
			v := part(outs[0], b)
			copy(v, part(args[0], b))
			w := make([]float64, n)
			CEigh(v, n, attrs.Lower, w)
			for i, x := range w {
				part(outs[1], b)[i] = complex(x, 0)
			}
		case ir.OpEig:
			a := append([]complex128(nil), part(args[0], b)...)
			CEig(a, n, part(outs[0], b), part(outs[1], b), part(outs[2], b))
		case ir.OpTridiagonal:
			t := part(outs[0], b)
			copy(t, part(args[0], b))
			CTridiagonal(t, n, attrs.Lower, part(outs[1], b), part(outs[2], b), part(outs[3], b))
		}
	}
	return outs, nil
}

func cfinite(a []complex128) bool {
	for _, z := range a {
		if cmplx.IsNaN(z) || cmplx.IsInf(z) {
			return false
		}
	}
	return true
}

func cfillNaN(a []complex128) {
	for i := range a {
		a[i] = cmplx.NaN()
	}
}

// hermitian mirrors the lower (or upper) triangle of the n x n matrix a
// into the other as its conjugate, and drops the diagonal's imaginary
// parts, which zpotrf and zheev do not read.
func hermitian(a []complex128, n int, lower bool) {
	for i := range n {
		a[i*n+i] = complex(real(a[i*n+i]), 0)
		for j := i + 1; j < n; j++ {
			if lower {
				a[i*n+j] = cmplx.Conj(a[j*n+i])
			} else {
				a[j*n+i] = cmplx.Conj(a[i*n+j])
			}
		}
	}
}

// CCholesky factors the Hermitian positive definite n x n matrix a in
// place as L L^H (lower, from the lower triangle) or U^H U (from the
// upper), zeroing the other triangle; the factor's diagonal is real and
// positive. A matrix that is not positive definite (or holds NaN or
// infinities) becomes all NaN.
func CCholesky(a []complex128, n int, lower bool) {
	hermitian(a, n, lower)
	// Cholesky-Banachiewicz on the lower triangle (row by row): U is L^H.
	l := make([]complex128, n*n)
	ok := true
	for i := 0; i < n && ok; i++ {
		for j := 0; j <= i; j++ {
			s := a[i*n+j]
			for k := range j {
				s -= l[i*n+k] * cmplx.Conj(l[j*n+k])
			}
			if i == j {
				d := real(s)
				if !(d > 0) || math.IsInf(d, 0) {
					ok = false
					break
				}
				l[i*n+i] = complex(math.Sqrt(d), 0)
			} else {
				l[i*n+j] = s / l[j*n+j]
			}
		}
	}
	if !ok || !cfinite(l) {
		cfillNaN(a)
		return
	}
	for i := range n {
		for j := range n {
			if lower {
				a[i*n+j] = l[i*n+j]
			} else {
				a[i*n+j] = cmplx.Conj(l[j*n+i])
			}
		}
	}
}

// CTriangularSolve overwrites the m x n matrix b with the solution x of
// op(a) x = b (attrs.LeftSide; a is m x m) or x op(a) = b (a is n x n),
// op(a) being a, a^T or a^H (the conjugate transpose). Only a's triangle
// named by attrs.Lower is read, and with attrs.UnitDiagonal not its
// diagonal.
func CTriangularSolve(a, b []complex128, m, n int, attrs ir.LinalgAttrs) {
	k := n
	if attrs.LeftSide {
		k = m
	}
	// t is op(a) itself, k x k; tLower whether it is lower triangular.
	t := make([]complex128, k*k)
	tLower := attrs.Lower
	for i := range k {
		for j := range k {
			if (attrs.Lower && j > i) || (!attrs.Lower && j < i) {
				continue
			}
			z := a[i*k+j]
			if i == j && attrs.UnitDiagonal {
				z = 1
			}
			switch attrs.Transpose {
			case ir.NoTranspose:
				t[i*k+j] = z
			case ir.Transpose:
				t[j*k+i] = z
			default:
				t[j*k+i] = cmplx.Conj(z)
			}
		}
	}
	if attrs.Transpose != ir.NoTranspose {
		tLower = !tLower
	}
	if attrs.LeftSide {
		solveLeft(t, tLower, attrs.UnitDiagonal, b, m, n, func(i, j int) int { return i*n + j })
		return
	}
	// x t = b is t^T x^T = b^T: solve with t^T, reading b by columns.
	tt := make([]complex128, k*k)
	for i := range k {
		for j := range k {
			tt[j*k+i] = t[i*k+j]
		}
	}
	solveLeft(tt, !tLower, attrs.UnitDiagonal, b, n, m, func(i, j int) int { return j*n + i })
}

// solveLeft overwrites the k x c matrix x (element (i, j) at x[at(i, j)])
// with t^-1 x, t k x k triangular (lower or upper), by substitution; unit
// takes t's diagonal as ones.
func solveLeft(t []complex128, lower, unit bool, x []complex128, k, c int, at func(i, j int) int) {
	for j := range c {
		for s := range k {
			i := s
			if !lower {
				i = k - 1 - s
			}
			z := x[at(i, j)]
			if lower {
				for p := range i {
					z -= t[i*k+p] * x[at(p, j)]
				}
			} else {
				for p := i + 1; p < k; p++ {
					z -= t[i*k+p] * x[at(p, j)]
				}
			}
			if !unit {
				z /= t[i*k+i]
			}
			x[at(i, j)] = z
		}
	}
}

// larfg is LAPACK's zlarfg on alpha and x (x[0], x[step], ...,
// count elements): it returns beta (real) and tau and scales x in place to
// v's tail, so that H^H [alpha; x] = [beta; 0] with H = I - tau v v^H and
// v = [1; x]. tau is zero (H = I) when x is zero and alpha real.
func larfg(alpha complex128, x []complex128, at func(i int) int, count int) (beta float64, tau complex128) {
	var xnorm float64
	for i := range count {
		xnorm = math.Hypot(xnorm, cmplx.Abs(x[at(i)]))
	}
	ar, ai := real(alpha), imag(alpha)
	if xnorm == 0 && ai == 0 {
		return ar, 0
	}
	beta = math.Hypot(math.Hypot(ar, ai), xnorm)
	if ar >= 0 {
		beta = -beta
	}
	tau = complex((beta-ar)/beta, -ai/beta)
	scale := 1 / (alpha - complex(beta, 0))
	for i := range count {
		x[at(i)] *= scale
	}
	return beta, tau
}

// CQr overwrites the m x n matrix a with its zgeqrf factorization (R on
// and above the diagonal, R's diagonal real; the Householder vectors'
// tails below) and fills tau (min(m, n) long): a = Q R with
// Q = H_0 H_1 ... H_{k-1}, H_i = I - tau_i v_i v_i^H.
func CQr(a []complex128, m, n int, tau []complex128) {
	for i := range min(m, n) {
		col := func(r int) int { return (i+1+r)*n + i }
		beta, t := larfg(a[i*n+i], a, col, m-i-1)
		tau[i] = t
		a[i*n+i] = complex(beta, 0)
		if t == 0 {
			continue
		}
		// Apply H_i^H = I - conj(tau) v v^H to the columns right of i.
		v := func(r int) complex128 { // r from i
			if r == i {
				return 1
			}
			return a[r*n+i]
		}
		ct := cmplx.Conj(t)
		for j := i + 1; j < n; j++ {
			var s complex128 // v^H a[:, j]
			for r := i; r < m; r++ {
				s += cmplx.Conj(v(r)) * a[r*n+j]
			}
			s *= ct
			for r := i; r < m; r++ {
				a[r*n+j] -= v(r) * s
			}
		}
	}
}

// CHouseholderProduct overwrites the m x n matrix a (m >= n >= len(tau)),
// holding Householder vectors below its diagonal as CQr packs them, with
// the first n columns of H_0 H_1 ... H_{k-1} (zungqr).
func CHouseholderProduct(a []complex128, m, n int, tau []complex128) {
	q := make([]complex128, m*n)
	for i := range min(m, n) {
		q[i*n+i] = 1
	}
	for i := len(tau) - 1; i >= 0; i-- { // q = H_i q
		t := tau[i]
		if t == 0 {
			continue
		}
		v := func(r int) complex128 {
			if r == i {
				return 1
			}
			return a[r*n+i]
		}
		for j := range n {
			var s complex128
			for r := i; r < m; r++ {
				s += cmplx.Conj(v(r)) * q[r*n+j]
			}
			s *= t
			for r := i; r < m; r++ {
				q[r*n+j] -= v(r) * s
			}
		}
	}
	copy(a, q)
}

// CEigh overwrites the Hermitian n x n matrix a (read from its lower or
// upper triangle, the diagonal's imaginary parts ignored) with its
// eigenvectors, as unit columns, and fills w with the eigenvalues,
// ascending. A matrix holding NaN or infinities, or one the iteration does
// not converge on, gives NaN everywhere.
func CEigh(a []complex128, n int, lower bool, w []float64) {
	hermitian(a, n, lower)
	if !cfinite(a) {
		cfillNaN(a)
		for i := range w {
			w[i] = math.NaN()
		}
		return
	}
	vt := make([]complex128, n*n) // the eigenvectors as rows, so that rotations run along memory
	for i := range n {
		vt[i*n+i] = 1
	}
	if !jacobi(a, vt, n) {
		cfillNaN(a)
		for i := range w {
			w[i] = math.NaN()
		}
		return
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return real(a[order[x]*n+order[x]]) < real(a[order[y]*n+order[y]]) })
	for j, o := range order {
		w[j] = real(a[o*n+o])
	}
	for i := range n {
		for j, o := range order {
			a[i*n+j] = vt[o*n+i]
		}
	}
}

// jacobi diagonalizes the Hermitian n x n matrix a by cyclic sweeps of
// complex rotations, a <- J^H a J and v <- v J (vt holding v^T), until the
// off-diagonal part is negligible beside the whole (within float64's
// epsilon): it reports whether that took at most its limit of sweeps. The
// entries come from complex64, so their squares cannot overflow float64.
func jacobi(a, vt []complex128, n int) bool {
	const eps = 0x1p-52
	abs2 := func(z complex128) float64 { return real(z)*real(z) + imag(z)*imag(z) }
	var total float64
	for _, z := range a {
		total += abs2(z)
	}
	for range 100 {
		var off float64
		for i := range n {
			for j := i + 1; j < n; j++ {
				off += 2 * abs2(a[i*n+j])
			}
		}
		if off <= eps*eps*total {
			return true
		}
		for p := range n {
			for q := p + 1; q < n; q++ {
				rotate(a, vt, n, p, q)
			}
		}
	}
	return false
}

// rotate zeroes a[p][q] (and a[q][p]) of the Hermitian a with
// J = diag(1, e^{-i phi}) R, a[p][q] = |a[p][q]| e^{i phi} and R the real
// Jacobi rotation [[c, s], [-s, c]] of the real symmetric
// [[a_pp, |a_pq|], [|a_pq|, a_qq]] that the phase makes of the pair. Rows
// p and q of J^H a J are updated along memory, columns p and q are their
// conjugates (a stays Hermitian), and the 2 x 2 block is the rotated
// diagonal.
func rotate(a, vt []complex128, n, p, q int) {
	b := a[p*n+q]
	g := cmplx.Abs(b)
	if g == 0 {
		return
	}
	app, aqq := real(a[p*n+p]), real(a[q*n+q])
	theta := (aqq - app) / (2 * g)
	t := 1 / (math.Abs(theta) + math.Sqrt(theta*theta+1))
	if theta < 0 {
		t = -t
	}
	if math.Abs(theta) > 1e150 { // theta^2 would overflow: t is 1/(2 theta) to float64's precision
		t = 1 / (2 * theta)
	}
	c := 1 / math.Sqrt(t*t+1)
	s := t * c
	e := cmplx.Conj(b) / complex(g, 0) // e^{-i phi}
	// J = [[c, s], [-s e, c e]]; row p of J^H a is conj(J_pp) a_p + conj(J_qp) a_q,
	// row q conj(J_pq) a_p + conj(J_qq) a_q.
	cpp, cqp := complex(c, 0), complex(-s, 0)*cmplx.Conj(e)
	cpq, cqq := complex(s, 0), complex(c, 0)*cmplx.Conj(e)
	rp, rq := a[p*n:(p+1)*n], a[q*n:(q+1)*n]
	for k := range n {
		x, y := rp[k], rq[k]
		rp[k], rq[k] = cpp*x+cqp*y, cpq*x+cqq*y
	}
	for k := range n {
		a[k*n+p], a[k*n+q] = cmplx.Conj(rp[k]), cmplx.Conj(rq[k])
	}
	a[p*n+p], a[q*n+q] = complex(app-t*g, 0), complex(aqq+t*g, 0)
	a[p*n+q], a[q*n+p] = 0, 0
	// v <- v J: rows p and q of v^T are J^T's combinations of them.
	jpp, jqp, jpq, jqq := cmplx.Conj(cpp), cmplx.Conj(cqp), cmplx.Conj(cpq), cmplx.Conj(cqq)
	vp, vq := vt[p*n:(p+1)*n], vt[q*n:(q+1)*n]
	for k := range n {
		x, y := vp[k], vq[k]
		vp[k], vq[k] = x*jpp+y*jqp, x*jpq+y*jqq
	}
}

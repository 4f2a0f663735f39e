package lapack

import (
	"fmt"
	"maps"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"testing"
)

// CEig and CTridiagonal in complex128, checked by the properties that
// define them to float64's precision (the conformance suite checks the
// complex64 ops built on them to float32's).

func randComplex(r *rand.Rand, n int) []complex128 {
	a := make([]complex128, n*n)
	for i := range a {
		a[i] = complex(r.Float64()*2-1, r.Float64()*2-1)
	}
	return a
}

// eigCases are general matrices: random ones, and those that exercise
// balancing (isolated eigenvalues, bad scaling), deflation (triangular,
// diagonal, zero) and defective or clustered spectra (a Jordan block,
// roots of unity, a companion matrix of wide-ranging coefficients).
func eigCases() map[string][]complex128 {
	r := rand.New(rand.NewPCG(1, 2))
	cases := map[string][]complex128{}
	for _, n := range []int{1, 2, 3, 5, 8, 17, 40} {
		cases[fmt.Sprintf("random %d", n)] = randComplex(r, n)
	}
	cases["zero 3"] = make([]complex128, 9)
	cases["diagonal"] = []complex128{1i, 0, 0, 0, 2, 0, 0, 0, -3}
	cases["upper triangular"] = []complex128{2, 1i, 3, 0, 2, 1, 0, 0, 1 - 1i}
	cases["lower triangular"] = []complex128{2, 0, 0, 1i, 2, 0, 3, 1, 1 - 1i}
	jordan := make([]complex128, 36)
	for i := range 6 {
		jordan[i*6+i] = 1 + 1i
		if i+1 < 6 {
			jordan[i*6+i+1] = 1
		}
	}
	cases["jordan 6"] = jordan
	cycle := make([]complex128, 25)
	for i := range 5 {
		cycle[((i+1)%5)*5+i] = 1
	}
	cases["cycle 5"] = cycle
	// Isolated eigenvalues within a dense block: row 0 and column 4 are
	// zero off the diagonal.
	iso := randComplex(r, 5)
	for j := 1; j < 5; j++ {
		iso[j] = 0
	}
	for i := range 4 {
		iso[i*5+4] = 0
	}
	cases["isolated"] = iso
	// Badly scaled: a diagonal similarity of a random matrix by powers of 10.
	bad := randComplex(r, 6)
	for i := range 6 {
		for j := range 6 {
			bad[i*6+j] *= complex(math.Pow(10, float64(2*(i-j))), 0)
		}
	}
	cases["badly scaled"] = bad
	// The companion matrix of (x - 1)(x - 2)...(x - 8), as jnp.roots builds it.
	coef := []complex128{1}
	for k := 1; k <= 8; k++ {
		next := make([]complex128, len(coef)+1)
		for i, c := range coef {
			next[i] += c
			next[i+1] -= c * complex(float64(k), 0)
		}
		coef = next
	}
	comp := make([]complex128, 64)
	for j := range 8 {
		comp[j] = -coef[j+1] / coef[0]
	}
	for i := 1; i < 8; i++ {
		comp[i*8+i-1] = 1
	}
	cases["companion"] = comp
	return cases
}

func TestCEig(t *testing.T) {
	cases := eigCases()
	for _, name := range slices.Sorted(maps.Keys(cases)) {
		a := cases[name]
		n := int(math.Round(math.Sqrt(float64(len(a)))))
		w, vl, vr := make([]complex128, n), make([]complex128, n*n), make([]complex128, n*n)
		CEig(append([]complex128(nil), a...), n, w, vl, vr)
		var anorm float64
		for _, z := range a {
			anorm = math.Max(anorm, cmplx.Abs(z))
		}
		anorm = math.Max(anorm, 1)
		// A defective eigenvalue's vectors are accurate to only about the
		// n-th root of epsilon; their residuals still are small.
		const tol = 1e-13
		var worst float64
		for j := range n {
			for _, left := range []bool{false, true} {
				v := vr
				if left {
					v = vl
				}
				var norm, big float64
				at := 0
				for i := range n {
					m := cmplx.Abs(v[i*n+j])
					norm += m * m
					if m > big {
						big, at = m, i
					}
				}
				if math.Abs(norm-1) > 1e-14 {
					t.Errorf("%s: vector %d (left %v) has norm^2 %v", name, j, left, norm)
				}
				if imag(v[at*n+j]) != 0 {
					t.Errorf("%s: vector %d (left %v): its largest component %v is not real", name, j, left, v[at*n+j])
				}
				for i := range n {
					var s complex128
					for k := range n {
						if left { // (u^H A)_i - w u^H_i
							s += cmplx.Conj(v[k*n+j]) * a[k*n+i]
						} else {
							s += a[i*n+k] * v[k*n+j]
						}
					}
					if left {
						s -= w[j] * cmplx.Conj(v[i*n+j])
					} else {
						s -= w[j] * v[i*n+j]
					}
					worst = math.Max(worst, cmplx.Abs(s)/anorm)
				}
			}
		}
		if !(worst <= tol*float64(n)) {
			t.Errorf("%s: largest residual %v of A v = w v and u^H A = w u^H (relative to |A|), want within %v", name, worst, tol*float64(n))
		}
		t.Logf("%s: n %d, largest residual %.2g", name, n, worst)
		// The eigenvalues' sum is the trace.
		var tr, sum complex128
		for i := range n {
			tr += a[i*n+i]
			sum += w[i]
		}
		if cmplx.Abs(tr-sum) > 1e-12*anorm*float64(n) {
			t.Errorf("%s: eigenvalues sum to %v, the trace is %v", name, sum, tr)
		}
	}
	// The companion matrix's eigenvalues are its polynomial's roots.
	w := make([]complex128, 8)
	CEig(cases["companion"], 8, w, make([]complex128, 64), make([]complex128, 64))
	for k := 1; k <= 8; k++ {
		best := math.Inf(1)
		for _, z := range w {
			best = math.Min(best, cmplx.Abs(z-complex(float64(k), 0)))
		}
		if best > 1e-8 {
			t.Errorf("companion of (x-1)...(x-8): root %d is %v away from every eigenvalue %v", k, best, w)
		}
	}
}

func TestCEigNaN(t *testing.T) {
	w, vl, vr := make([]complex128, 2), make([]complex128, 4), make([]complex128, 4)
	CEig([]complex128{1, cmplx.NaN(), 0, 1}, 2, w, vl, vr)
	for _, x := range append(append(w, vl...), vr...) {
		if !cmplx.IsNaN(x) {
			t.Fatalf("eig of a matrix holding NaN: %v %v %v, want NaN everywhere", w, vl, vr)
		}
	}
}

func TestCTridiagonal(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 3, 6, 33} {
		for _, lower := range []bool{true, false} {
			name := fmt.Sprintf("%d lower=%v", n, lower)
			a := randComplex(r, n)
			packed := append([]complex128(nil), a...)
			d, e, tau := make([]complex128, n), make([]complex128, max(n-1, 0)), make([]complex128, max(n-1, 0))
			CTridiagonal(packed, n, lower, d, e, tau)
			// herm is the Hermitian matrix of a's triangle named.
			herm := make([]complex128, n*n)
			for i := range n {
				for j := range n {
					switch {
					case i == j:
						herm[i*n+j] = complex(real(a[i*n+i]), 0)
					case (i > j) == lower:
						herm[i*n+j] = a[i*n+j]
					default:
						herm[i*n+j] = cmplx.Conj(a[j*n+i])
					}
				}
			}
			// q is the product of the packed reflectors, applied to the identity.
			q := make([]complex128, n*n)
			for i := range n {
				q[i*n+i] = 1
			}
			reflect := func(v []complex128, tau complex128) { // q <- q H
				for i := range n {
					var s complex128
					for k := range n {
						s += q[i*n+k] * v[k]
					}
					s *= tau
					for k := range n {
						q[i*n+k] -= s * cmplx.Conj(v[k])
					}
				}
			}
			for s := range n - 1 {
				v := make([]complex128, n)
				if lower { // Q = H_0 ... H_{n-2}
					i := s
					v[i+1] = 1
					for k := i + 2; k < n; k++ {
						v[k] = packed[k*n+i]
					}
					reflect(v, tau[i])
				} else { // Q = H_{n-2} ... H_0
					i := n - 2 - s
					v[i] = 1
					for k := range i {
						v[k] = packed[k*n+i+1]
					}
					reflect(v, tau[i])
				}
			}
			var worst float64
			for i := range n {
				for j := range n {
					var qq, tt complex128 // (Q^H Q)_ij and (Q^H A Q)_ij
					for k := range n {
						qq += cmplx.Conj(q[k*n+i]) * q[k*n+j]
						for l := range n {
							tt += cmplx.Conj(q[k*n+i]) * herm[k*n+l] * q[l*n+j]
						}
					}
					var want complex128
					switch {
					case i == j:
						want = d[i]
						if imag(d[i]) != 0 || packed[i*n+i] != d[i] {
							t.Errorf("%s: d[%d] = %v, the packed diagonal %v", name, i, d[i], packed[i*n+i])
						}
					case j == i+1:
						want = e[i]
					case i == j+1:
						want = e[j]
					}
					if i == j {
						qq--
					}
					worst = math.Max(worst, math.Max(cmplx.Abs(qq), cmplx.Abs(tt-want)))
					// The other triangle is as a had it.
					if (lower && j > i) || (!lower && j < i) {
						if packed[i*n+j] != a[i*n+j] {
							t.Errorf("%s: element (%d, %d) of the other triangle changed", name, i, j)
						}
					}
				}
			}
			for i, x := range e {
				if imag(x) != 0 {
					t.Errorf("%s: e[%d] = %v is not real", name, i, x)
				}
				at := (i+1)*n + i
				if !lower {
					at = i*n + i + 1
				}
				if packed[at] != x {
					t.Errorf("%s: e[%d] = %v, the packed off-diagonal %v", name, i, x, packed[at])
				}
			}
			if worst > 1e-13*float64(n) {
				t.Errorf("%s: largest error of Q^H Q = I and Q^H A Q = T: %v", name, worst)
			}
		}
	}
}

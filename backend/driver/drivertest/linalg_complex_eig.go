package drivertest

import (
	"fmt"
	"math"
	"math/cmplx"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

// The complex64 cases of eig and tridiagonal, checked by what defines
// them: A v_j = w_j v_j and u_j^H A = w_j u_j^H, each vector of unit norm
// with its largest component real (zgeev's normalization); Q^H A Q real
// symmetric tridiagonal with Q unitary, rebuilt from the packed reflectors
// (zhetrd's packing), d and e real.

// cgeneralCases are the complex matrices of eig: random ones, a real
// rotation (a conjugate pair), a defective triangular one, a permutation
// cycle (roots of unity), a complex diagonal, and a companion matrix with
// complex coefficients, as jnp.roots builds it.
func (h *harness) cgeneralCases() []tensor {
	cases := []tensor{}
	for _, shape := range linalgSquareShapes {
		cases = append(cases, h.randC(shape...))
	}
	re := func(v ...float64) []float64 { return v }
	return append(cases,
		tensor{T: tt(ir.C64, 2, 2), V: re(0, -1, 1, 0), Im: make([]float64, 4)},
		tensor{T: tt(ir.C64, 3, 3), V: re(2, 1, 0, 0, 2, 1, 0, 0, 3), Im: re(1, 0, 0, 0, 1, 0.5, 0, 0, 0)},
		tensor{T: tt(ir.C64, 4, 4), V: re(0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0), Im: make([]float64, 16)},
		tensor{T: tt(ir.C64, 3, 3), V: re(1, 0, 0, 0, -2, 0, 0, 0, 0), Im: re(1, 0, 0, 0, 0, 0, 0, 0, -3)},
		// x^4 - (1+2i) x^3 + 3i x - 2: the first row is the negated
		// coefficients, ones below the diagonal.
		tensor{T: tt(ir.C64, 4, 4), V: re(1, 0, 0, 2, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0), Im: re(2, 0, -3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)},
	)
}

func testEigC64(t *testing.T, h *harness) {
	if !complexLinalg(h) {
		return
	}
	for _, a := range h.cgeneralCases() {
		name := fmt.Sprintf("complex64%v", a.T.Shape)
		got := h.runLinalgC(t, name, []tensor{a}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			return b.Results(b.Eig(xs[0]))
		})
		checkEigC64(t, name, cmatOf(a), got)
	}
	nan := tensor{T: tt(ir.C64, 2, 2), V: []float64{1, math.NaN(), 0, 1}, Im: make([]float64, 4)}
	got := h.runLinalgC(t, "complex64 with NaN", []tensor{nan}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return b.Results(b.Eig(xs[0]))
	})
	for i, r := range got {
		for k := range r.V {
			if !math.IsNaN(r.V[k]) || !math.IsNaN(r.imag()[k]) {
				t.Errorf("complex64 eig of a matrix holding NaN: result %d holds %v + %vi, want NaN everywhere", i, r.V, r.imag())
				break
			}
		}
	}
}

// checkEigC64 checks complex64 eig's results (w, vl, vr) against what
// defines them.
func checkEigC64(t *testing.T, name string, a cmat, got []tensor) {
	t.Helper()
	if len(got) != 3 {
		t.Fatalf("%s: %d results, want 3 (w, vl, vr)", name, len(got))
	}
	for i, r := range got {
		if r.T.DType != ir.C64 {
			t.Errorf("%s: result %d is %v, want complex64", name, i, r.T)
		}
	}
	n := a.r
	tol := 2 * c64Tol(n)
	vl, vr := cmatOf(got[1]), cmatOf(got[2])
	for b := range a.batch {
		scale := 1.0
		for _, x := range a.v[b*n*n : (b+1)*n*n] {
			scale = math.Max(scale, cmplx.Abs(x))
		}
		for j := range n {
			w := complex(got[0].V[b*n+j], got[0].imag()[b*n+j])
			for _, side := range []string{"left", "right"} {
				v := make([]complex128, n)
				for i := range n {
					if side == "left" {
						v[i] = vl.at(b, i, j)
					} else {
						v[i] = vr.at(b, i, j)
					}
				}
				var norm, largest float64
				for _, x := range v {
					norm += real(x)*real(x) + imag(x)*imag(x)
					largest = math.Max(largest, cmplx.Abs(x))
				}
				if math.Abs(norm-1) > tol {
					t.Errorf("%s: batch %d %s eigenvector %d has norm^2 %v, want 1", name, b, side, j, norm)
				}
				// zgeev makes the largest component real; rounding may
				// leave another of (nearly) equal modulus the largest.
				real0 := false
				for _, x := range v {
					real0 = real0 || (imag(x) == 0 && cmplx.Abs(x) >= largest*(1-tol))
				}
				if !real0 {
					t.Errorf("%s: batch %d %s eigenvector %d = %v: its largest component is not real", name, b, side, j, v)
				}
				for i := range n {
					var r complex128 // (A v)_i - w v_i, or (u^H A)_i - w u^H_i
					for l := range n {
						if side == "right" {
							r += a.at(b, i, l) * v[l]
						} else {
							r += cmplx.Conj(v[l]) * a.at(b, l, i)
						}
					}
					if side == "right" {
						r -= w * v[i]
					} else {
						r -= w * cmplx.Conj(v[i])
					}
					if cmplx.Abs(r) > tol*scale*float64(n) {
						t.Errorf("%s: batch %d %s eigenvector %d of %v: residual %v at %d", name, b, side, j, w, r, i)
						return
					}
				}
			}
		}
	}
}

func testTridiagonalC64(t *testing.T, h *harness) {
	if !complexLinalg(h) {
		return
	}
	for _, shape := range linalgSquareShapes {
		for _, lower := range []bool{true, false} {
			name := fmt.Sprintf("complex64%v lower=%v", shape, lower)
			a := h.hermitianC(shape...)
			in := withGarbageC(a, lower, true)
			got := h.runLinalgC(t, name, []tensor{in}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
				return b.Results(b.Tridiagonal(xs[0], lower))
			})
			checkTridiagonalC64(t, name, cmatOf(a), cmatOf(in), lower, got)
		}
	}
}

// checkTridiagonalC64 checks complex64 tridiagonal's results (packed, d,
// e, taus) of in, whose triangle named is that of the Hermitian a.
func checkTridiagonalC64(t *testing.T, name string, a, in cmat, lower bool, got []tensor) {
	t.Helper()
	for i, want := range []ir.DType{ir.C64, ir.F32, ir.F32, ir.C64} {
		if got[i].T.DType != want {
			t.Errorf("%s: result %d is %v, want %v", name, i, got[i].T, want)
		}
	}
	packed := cmatOf(got[0])
	n, batch := packed.r, packed.batch
	k := max(n-1, 0)
	d, e := got[1].V, got[2].V
	taus := make([]complex128, batch*k)
	for i := range taus {
		taus[i] = complex(got[3].V[i], got[3].imag()[i])
		if tau := taus[i]; tau != 0 && (real(tau) < 1-1e-6 || real(tau) > 2+1e-6 || cmplx.Abs(tau-1) > 1+1e-6) {
			t.Errorf("%s: tau %d = %v is outside zlarfg's range", name, i, tau)
		}
	}
	q := ceye(batch, n, n)
	tm := cmat{batch: batch, r: n, c: n, v: make([]complex128, batch*n*n)}
	for b := range batch {
		for s := range k {
			v := make([]complex128, n)
			i := s
			if lower { // Q = H_0 ... H_{n-2}: v_i's unit entry at row i+1, the rest below it in column i
				v[i+1] = 1
				for r := i + 2; r < n; r++ {
					v[r] = packed.at(b, r, i)
				}
			} else { // Q = H_{n-2} ... H_0: v_i's unit entry at row i, the rest above it in column i+1
				i = k - 1 - s
				v[i] = 1
				for r := range i {
					v[r] = packed.at(b, r, i+1)
				}
			}
			tau := taus[b*k+i]
			for r := range n { // q <- q (I - tau v v^H)
				var sum complex128
				for c := range n {
					sum += q.at(b, r, c) * v[c]
				}
				sum *= tau
				for c := range n {
					q.v[(b*n+r)*n+c] -= sum * cmplx.Conj(v[c])
				}
			}
		}
		for i := range n {
			tm.v[(b*n+i)*n+i] = complex(d[b*n+i], 0)
			if packed.at(b, i, i) != complex(d[b*n+i], 0) {
				t.Errorf("%s: batch %d: the packed diagonal's %v at %d, d %v", name, b, packed.at(b, i, i), i, d[b*n+i])
			}
			if i+1 < n {
				ev := e[b*k+i]
				tm.v[(b*n+i)*n+i+1], tm.v[(b*n+i+1)*n+i] = complex(ev, 0), complex(ev, 0)
				off := packed.at(b, i+1, i)
				if !lower {
					off = packed.at(b, i, i+1)
				}
				if off != complex(ev, 0) {
					t.Errorf("%s: batch %d: the packed off-diagonal's %v at %d, e %v", name, b, off, i, ev)
				}
			}
			for j := range n {
				if ((lower && j > i) || (!lower && j < i)) && packed.at(b, i, j) != in.at(b, i, j) {
					t.Errorf("%s: batch %d element (%d, %d) of the triangle not read became %v", name, b, i, j, packed.at(b, i, j))
				}
			}
		}
	}
	tol := c64Tol(n)
	cnear(t, name+": Q^H Q", cmul(ctr(q, true), q), ceye(batch, n, n), tol)
	cnear(t, name+": Q T Q^H", cmul(cmul(q, tm), ctr(q, true)), a, tol)
}

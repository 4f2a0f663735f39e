package drivertest

import (
	"fmt"
	"math"
	"math/cmplx"
	"sort"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

// The complex64 cases of cholesky, triangular_solve, qr,
// householder_product and eigh, checked as the real ones are by the
// properties that define each op, computed here in complex128 with the
// conjugate transpose (A = L L^H, Q^H Q = I, Q R = A, A V = V diag(w),
// V^H V = I, op(a) x = b), and against the reference interpreter.

// cmat is a row-major batch of r x c complex128 matrices.
type cmat struct {
	batch int
	r, c  int
	v     []complex128
}

func cmatOf(t tensor) cmat {
	s := t.T.Shape
	n := s.Rank()
	im := t.imag()
	v := make([]complex128, len(t.V))
	for k := range v {
		v[k] = complex(t.V[k], im[k])
	}
	return cmat{batch: s[:n-2].Size(), r: s[n-2], c: s[n-1], v: v}
}

// tensorOfC is m as a complex64 tensor of shape.
func tensorOfC(m cmat, shape ...int) tensor {
	t := tensor{T: tt(ir.C64, shape...), V: make([]float64, len(m.v)), Im: make([]float64, len(m.v))}
	for k, z := range m.v {
		t.V[k], t.Im[k] = real(z), imag(z)
	}
	return t
}

func (m cmat) at(b, i, j int) complex128 { return m.v[(b*m.r+i)*m.c+j] }

func cmul(x, y cmat) cmat {
	out := cmat{batch: x.batch, r: x.r, c: y.c, v: make([]complex128, x.batch*x.r*y.c)}
	for b := range x.batch {
		for i := range x.r {
			for j := range y.c {
				var s complex128
				for k := range x.c {
					s += x.at(b, i, k) * y.at(b, k, j)
				}
				out.v[(b*out.r+i)*out.c+j] = s
			}
		}
	}
	return out
}

// ctr is x^T, or x^H when conj.
func ctr(x cmat, conj bool) cmat {
	out := cmat{batch: x.batch, r: x.c, c: x.r, v: make([]complex128, len(x.v))}
	for b := range x.batch {
		for i := range x.r {
			for j := range x.c {
				z := x.at(b, i, j)
				if conj {
					z = cmplx.Conj(z)
				}
				out.v[(b*out.r+j)*out.c+i] = z
			}
		}
	}
	return out
}

func ceye(batch, r, c int) cmat {
	e := eye(batch, r, c)
	out := cmat{batch: batch, r: r, c: c, v: make([]complex128, len(e.v))}
	for k, x := range e.v {
		out.v[k] = complex(x, 0)
	}
	return out
}

func crows(x cmat, n int) cmat {
	out := cmat{batch: x.batch, r: n, c: x.c}
	for b := range x.batch {
		out.v = append(out.v, x.v[b*x.r*x.c:b*x.r*x.c+n*x.c]...)
	}
	return out
}

func ccols(x cmat, n int) cmat {
	out := cmat{batch: x.batch, r: x.r, c: n, v: make([]complex128, x.batch*x.r*n)}
	for b := range x.batch {
		for i := range x.r {
			for j := range n {
				out.v[(b*x.r+i)*n+j] = x.at(b, i, j)
			}
		}
	}
	return out
}

// ctriangle is a's lower (or upper) triangle, the rest zero; unit puts
// ones on the diagonal.
func ctriangle(a cmat, lower, unit bool) cmat {
	out := cmat{batch: a.batch, r: a.r, c: a.c, v: make([]complex128, len(a.v))}
	for b := range a.batch {
		for i := range a.r {
			for j := range a.c {
				switch {
				case i == j && unit:
					out.v[(b*a.r+i)*a.c+j] = 1
				case i == j || (lower && j < i) || (!lower && j > i):
					out.v[(b*a.r+i)*a.c+j] = a.at(b, i, j)
				}
			}
		}
	}
	return out
}

// cnear is near on complex matrices: |got - want| within tol times want's
// largest magnitude (per batch matrix, at least 1).
func cnear(t *testing.T, name string, got, want cmat, tol float64) {
	t.Helper()
	if got.batch != want.batch || got.r != want.r || got.c != want.c {
		t.Errorf("%s: %dx%dx%d, want %dx%dx%d", name, got.batch, got.r, got.c, want.batch, want.r, want.c)
		return
	}
	per := want.r * want.c
	for b := range want.batch {
		scale := 1.0
		for _, w := range want.v[b*per : (b+1)*per] {
			scale = math.Max(scale, cmplx.Abs(w))
		}
		for k := b * per; k < (b+1)*per; k++ {
			if d := cmplx.Abs(got.v[k] - want.v[k]); !(d <= tol*scale) {
				t.Errorf("%s: batch %d element %d = %v, want %v (scale %v)", name, b, k-b*per, got.v[k], want.v[k], scale)
				return
			}
		}
	}
}

// randC is a complex64 tensor whose real and imaginary parts are each in
// [-2, 2] by quarters, drawn independently.
func (h *harness) randC(shape ...int) tensor {
	re, im := h.gen(ir.F32, small, shape...), h.gen(ir.F32, small, shape...)
	return tensor{T: tt(ir.C64, shape...), V: re.V, Im: im.V}
}

// hpd is m m^H + n I for a random complex m: Hermitian positive definite
// and well conditioned.
func (h *harness) hpd(shape ...int) tensor {
	m := cmatOf(h.randC(shape...))
	a := cmul(m, ctr(m, true))
	for b := range a.batch {
		for i := range a.r {
			a.v[(b*a.r+i)*a.c+i] += complex(float64(a.r), 0)
		}
	}
	return tensorOfC(a, shape...)
}

// hermitianC is a random Hermitian matrix (not definite): m + m^H.
func (h *harness) hermitianC(shape ...int) tensor {
	m := cmatOf(h.randC(shape...))
	mh := ctr(m, true)
	for k := range m.v {
		m.v[k] += mh.v[k]
	}
	return tensorOfC(m, shape...)
}

// withGarbageC fills the triangle of a that an op must not read with
// values that would change its answer; hermitian also puts imaginary
// parts on the diagonal, which a Hermitian op ignores.
func withGarbageC(a tensor, lower, hermitian bool) tensor {
	m := cmatOf(a)
	for b := range m.batch {
		for i := range m.r {
			for j := range m.c {
				k := (b*m.r+i)*m.c + j
				switch {
				case (lower && j > i) || (!lower && j < i):
					m.v[k] = complex(100+float64(i+2*j), -50-float64(j))
				case i == j && hermitian:
					m.v[k] += complex(0, 30+float64(i))
				}
			}
		}
	}
	return tensorOfC(m, a.T.Shape...)
}

// runLinalgC is runLinalg for programs with complex64 parameters.
func (h *harness) runLinalgC(t *testing.T, name string, args []tensor, build func(b *ir.Builder, xs []ir.Value) []ir.Value) []tensor {
	t.Helper()
	p := programOver(t, name, args, build)
	got := h.run(t, p, args...)
	in := make([]eval.Tensor, len(args))
	for i, a := range args {
		in[i] = eval.New(a.T)
		for k, im := range a.imag() {
			in[i].C[k] = complex(a.V[k], im)
		}
	}
	ref, err := eval.Run(p, in)
	if err != nil {
		t.Errorf("%s: the reference interpreter fails where the driver ran: %v", name, err)
		return got
	}
	for i, r := range ref {
		want := tensor{T: r.Type, V: r.Floats()}
		if r.C != nil {
			want.Im = make([]float64, len(r.C))
			for k, z := range r.C {
				want.Im[k] = imag(z)
			}
		}
		compare(t, fmt.Sprintf("%s result %d (against the reference interpreter)", name, i), got[i], want)
	}
	return got
}

// complexLinalg reports whether the driver takes complex64.
func complexLinalg(h *harness) bool { return len(h.keep([]ir.DType{ir.C64})) == 1 }

// c64Tol is the tolerance of a property of complex64 results (each part
// rounded to float32).
func c64Tol(n int) float64 { return 3e-6 * float64(max(n, 1)) }

func testCholeskyC64(t *testing.T, h *harness) {
	if !complexLinalg(h) {
		return
	}
	for _, shape := range linalgSquareShapes {
		for _, lower := range []bool{true, false} {
			name := fmt.Sprintf("complex64%v lower=%v", shape, lower)
			a := h.hpd(shape...)
			got := h.runLinalgC(t, name, []tensor{withGarbageC(a, lower, true)}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
				return []ir.Value{b.Cholesky(xs[0], lower)}
			})
			l := cmatOf(got[0])
			cnear(t, name+": the other triangle is zero", l, ctriangle(l, lower, false), 0)
			for b := range l.batch {
				for i := range l.r {
					if d := l.at(b, i, i); imag(d) != 0 || !(real(d) > 0) {
						t.Errorf("%s: diagonal element %d of batch %d is %v, want real and positive", name, i, b, d)
					}
				}
			}
			prod := cmul(l, ctr(l, true))
			if !lower {
				prod = cmul(ctr(l, true), l)
			}
			cnear(t, name+": the factors' product", prod, cmatOf(a), c64Tol(l.r))
		}
	}
	// Hermitian but indefinite: that matrix is all NaN, its neighbour in
	// the batch is factored ([[4, 2i], [-2i, 5]] = L L^H, L = [[2, 0], [-i, 2]]).
	a := tensor{T: tt(ir.C64, 2, 2, 2), V: []float64{4, 0, 0, 5, 1, 0, 0, 1}, Im: []float64{0, 2, -2, 0, 0, 2, -2, 0}}
	got := h.runLinalgC(t, "complex64 not positive definite", []tensor{a}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return []ir.Value{b.Cholesky(xs[0], true)}
	})
	want := []complex128{2, 0, -1i, 2}
	for k, g := range cmatOf(got[0]).v {
		if (k < 4 && g != want[k]) || (k >= 4 && !cmplx.IsNaN(g)) {
			t.Errorf("complex64 cholesky of a positive definite and an indefinite matrix: %v, want %v then NaNs", cmatOf(got[0]).v, want)
			break
		}
	}
}

func testTriangularSolveC64(t *testing.T, h *harness) {
	if !complexLinalg(h) {
		return
	}
	for _, c := range []struct{ batch, k, other []int }{{nil, []int{4}, []int{3}}, {[]int{2}, []int{5}, []int{2}}, {nil, []int{1}, []int{1}}, {[]int{3}, []int{3}, []int{0}}} {
		for _, left := range []bool{true, false} {
			for _, lower := range []bool{true, false} {
				for _, unit := range []bool{false, true} {
					for _, trans := range []ir.TransposeKind{ir.NoTranspose, ir.Transpose, ir.Adjoint} {
						k, o := c.k[0], c.other[0]
						ashape := append(append([]int(nil), c.batch...), k, k)
						bshape := append(append([]int(nil), c.batch...), k, o)
						if !left {
							bshape = append(append([]int(nil), c.batch...), o, k)
						}
						attrs := ir.LinalgAttrs{LeftSide: left, Lower: lower, UnitDiagonal: unit, Transpose: trans}
						name := fmt.Sprintf("complex64 a%v b%v %+v", ashape, bshape, attrs)
						// A diagonal of magnitude 2..4 keeps the solve well
						// conditioned; unit puts one there the op must not read.
						am := cmatOf(h.randC(ashape...))
						for bb := range am.batch {
							for i := range k {
								d := complex(float64(2+(i+bb)%3), float64(i%2))
								if unit {
									d = 7 + 3i
								}
								am.v[(bb*k+i)*k+i] = d
							}
						}
						a := tensorOfC(am, ashape...)
						rhs := h.randC(bshape...)
						got := h.runLinalgC(t, name, []tensor{withGarbageC(a, lower, false), rhs}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
							return []ir.Value{b.TriangularSolve(xs[0], xs[1], attrs)}
						})
						opA := ctriangle(am, lower, unit)
						if trans != ir.NoTranspose {
							opA = ctr(opA, trans == ir.Adjoint)
						}
						x := cmatOf(got[0])
						prod := cmul(x, opA)
						if left {
							prod = cmul(opA, x)
						}
						cnear(t, name+": op(a) x", prod, cmatOf(rhs), c64Tol(k))
					}
				}
			}
		}
	}
	// A zero on the diagonal divides by zero: not finite.
	got := h.runLinalgC(t, "complex64 singular", []tensor{{T: tt(ir.C64, 1, 1), V: []float64{0}, Im: []float64{0}}, {T: tt(ir.C64, 1, 1), V: []float64{1}, Im: []float64{0}}},
		func(b *ir.Builder, xs []ir.Value) []ir.Value {
			return []ir.Value{b.TriangularSolve(xs[0], xs[1], ir.LinalgAttrs{LeftSide: true, Lower: true})}
		})
	if z := cmatOf(got[0]).v[0]; !cmplx.IsInf(z) && !cmplx.IsNaN(z) {
		t.Errorf("complex64 solve of 0 x = 1: %v, want a non-finite value", z)
	}
}

// householderQC is the m x m product H_0 H_1 ... of the complex
// reflectors H_i = I - tau_i v_i v_i^H packed below the diagonal of qr,
// computed here from their definition.
func householderQC(qr cmat, taus []complex128, k int) cmat {
	m := qr.r
	q := ceye(qr.batch, m, m)
	for b := range qr.batch {
		for i := k - 1; i >= 0; i-- {
			v := make([]complex128, m)
			v[i] = 1
			for r := i + 1; r < m; r++ {
				v[r] = qr.at(b, r, i)
			}
			tau := taus[b*k+i]
			for j := range m { // q -= tau v (v^H q)
				var s complex128
				for r := range m {
					s += cmplx.Conj(v[r]) * q.at(b, r, j)
				}
				for r := range m {
					q.v[(b*m+r)*m+j] -= tau * v[r] * s
				}
			}
		}
	}
	return q
}

func testQrC64(t *testing.T, h *harness) {
	if !complexLinalg(h) {
		return
	}
	cases := []tensor{}
	for _, shape := range linalgShapes {
		cases = append(cases, h.randC(shape...))
	}
	// A column already reduced, with a complex diagonal entry: zlarfg's
	// tau is not zero then (H_0 turns i into -1), but 1 + i.
	cases = append(cases, tensor{T: tt(ir.C64, 2, 2), V: []float64{0, 1, 0, 2}, Im: []float64{1, 0, 0, 1}})
	for _, a := range cases {
		name := fmt.Sprintf("complex64%v", a.T.Shape)
		got := h.runLinalgC(t, name, []tensor{a}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			return b.Results(b.Qr(xs[0]))
		})
		packed := cmatOf(got[0])
		k := min(packed.r, packed.c)
		taus := cmatOf(tensor{T: tt(ir.C64, packed.batch, 1, k), V: got[1].V, Im: got[1].Im}).v
		for i, tau := range taus { // zlarfg's range: 1 <= Re tau <= 2, |tau - 1| <= 1, or 0
			if tau != 0 && (real(tau) < 1-1e-6 || real(tau) > 2+1e-6 || cmplx.Abs(tau-1) > 1+1e-6) {
				t.Errorf("%s: tau %d = %v is outside zlarfg's range", name, i, tau)
			}
		}
		for b := range packed.batch {
			for i := range k {
				if d := packed.at(b, i, i); imag(d) != 0 {
					t.Errorf("%s: R[%d,%d] = %v, want real (zgeqrf)", name, i, i, d)
				}
			}
		}
		q := householderQC(packed, taus, k)
		r := ctriangle(packed, false, false)
		tol := c64Tol(max(packed.r, packed.c))
		cnear(t, name+": Q^H Q", cmul(ctr(q, true), q), ceye(packed.batch, packed.r, packed.r), tol)
		cnear(t, name+": Q R", cmul(q, r), cmatOf(a), tol)
	}
}

func testHouseholderProductC64(t *testing.T, h *harness) {
	if !complexLinalg(h) {
		return
	}
	for _, shape := range [][]int{{1, 1}, {4, 4}, {5, 3}, {2, 6, 2}, {9, 4}, {0, 3, 2}} {
		name := fmt.Sprintf("complex64%v", shape)
		a := h.randC(shape...)
		got := h.runLinalgC(t, name, []tensor{a}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			qr := b.Results(b.Qr(xs[0]))
			return []ir.Value{b.HouseholderProduct(qr[0], qr[1]), qr[0]}
		})
		q, packed := cmatOf(got[0]), cmatOf(got[1])
		n := q.c
		tol := c64Tol(q.r)
		cnear(t, name+": Q^H Q", cmul(ctr(q, true), q), ceye(q.batch, n, n), tol)
		cnear(t, name+": Q R", cmul(q, crows(ctriangle(packed, false, false), n)), cmatOf(a), tol)
	}
	// Fewer taus than columns, complex taus: the product of the first k
	// reflectors, against this file's own product; a's diagonal and upper
	// triangle are not read.
	m, n, k := 5, 4, 2
	a := h.randC(m, n)
	taus := tensor{T: tt(ir.C64, k), V: []float64{1.25, 0.5}, Im: []float64{-0.5, 0.25}}
	got := h.runLinalgC(t, "complex64 with 2 taus", []tensor{withGarbageC(a, true, false), taus}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return []ir.Value{b.HouseholderProduct(xs[0], xs[1])}
	})
	tv := []complex128{complex(taus.V[0], taus.Im[0]), complex(taus.V[1], taus.Im[1])}
	want := ccols(householderQC(cmatOf(a), tv, k), n)
	cnear(t, "complex64 householder product of 2 reflectors", cmatOf(got[0]), want, c64Tol(m))
}

func testEighC64(t *testing.T, h *harness) {
	if !complexLinalg(h) {
		return
	}
	for _, shape := range linalgSquareShapes {
		for _, lower := range []bool{true, false} {
			checkEighC64(t, h, fmt.Sprintf("complex64%v lower=%v", shape, lower), h.hermitianC(shape...), lower)
		}
	}
	// Repeated eigenvalues: any orthonormal basis of each eigenspace.
	checkEighC64(t, h, "complex64 identity", tensorOfC(ceye(1, 3, 3), 3, 3), true)
	checkEighC64(t, h, "complex64 singular", tensor{T: tt(ir.C64, 2, 2), V: []float64{1, 0, 0, 1}, Im: []float64{0, 1, -1, 0}}, false)
	// 2 I + u u^H, u = (1, i, 1 + i): eigenvalues 2, 2 and 6.
	u := []complex128{1, 1i, 1 + 1i}
	rep := ceye(1, 3, 3)
	for i := range 3 {
		for j := range 3 {
			rep.v[i*3+j] = 2*rep.v[i*3+j] + u[i]*cmplx.Conj(u[j])
		}
	}
	checkEighC64(t, h, "complex64 repeated", tensorOfC(rep, 3, 3), true)
}

func checkEighC64(t *testing.T, h *harness, name string, a tensor, lower bool) {
	t.Helper()
	got := h.runLinalgC(t, name, []tensor{withGarbageC(a, lower, true)}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return b.Results(b.Eigh(xs[0], lower))
	})
	if got[1].T.DType != ir.F32 {
		t.Errorf("%s: eigenvalues of %v, want float32", name, got[1].T)
	}
	v, n := cmatOf(got[0]), cmatOf(a).r
	w := got[1].V
	tol := c64Tol(n)
	cnear(t, name+": V^H V", cmul(ctr(v, true), v), ceye(v.batch, n, n), tol)
	vw := cmat{batch: v.batch, r: n, c: n, v: make([]complex128, len(v.v))}
	for b := range v.batch {
		if !sort.Float64sAreSorted(w[b*n : (b+1)*n]) {
			t.Errorf("%s: eigenvalues %v are not ascending", name, w[b*n:(b+1)*n])
		}
		for i := range n {
			for j := range n {
				vw.v[(b*n+i)*n+j] = v.at(b, i, j) * complex(w[b*n+j], 0)
			}
		}
	}
	cnear(t, name+": A V = V diag(w)", cmul(cmatOf(a), v), vw, tol)
}

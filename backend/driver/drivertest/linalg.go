package drivertest

import (
	"fmt"
	"math"
	"math/cmplx"
	"slices"
	"sort"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

// The linear algebra ops. A decomposition's unspecified parts (signs of
// eigenvectors and singular vectors, which Householder vectors) leave no
// single right answer, so each case checks the properties that define the
// op (A = L L^T, Q^T Q = I, Q R = A, A V = V diag(w), P A = L U,
// U diag(s) V^T = A), computed here in float64 from the driver's results,
// and the results against the reference interpreter as well.

// mat is a row-major batch of r x c float64 matrices.
type mat struct {
	batch int
	r, c  int
	v     []float64
}

func matOf(t tensor) mat {
	s := t.T.Shape
	n := s.Rank()
	return mat{batch: s[:n-2].Size(), r: s[n-2], c: s[n-1], v: t.V}
}

func (m mat) at(b, i, j int) float64 { return m.v[(b*m.r+i)*m.c+j] }

// mul is x y for each batch.
func mul(x, y mat) mat {
	out := mat{batch: x.batch, r: x.r, c: y.c, v: make([]float64, x.batch*x.r*y.c)}
	for b := range x.batch {
		for i := range x.r {
			for j := range y.c {
				var s float64
				for k := range x.c {
					s += x.at(b, i, k) * y.at(b, k, j)
				}
				out.v[(b*out.r+i)*out.c+j] = s
			}
		}
	}
	return out
}

// tr is x^T for each batch.
func tr(x mat) mat {
	out := mat{batch: x.batch, r: x.c, c: x.r, v: make([]float64, len(x.v))}
	for b := range x.batch {
		for i := range x.r {
			for j := range x.c {
				out.v[(b*out.r+j)*out.c+i] = x.at(b, i, j)
			}
		}
	}
	return out
}

// eye is the r x c identity, batched.
func eye(batch, r, c int) mat {
	out := mat{batch: batch, r: r, c: c, v: make([]float64, batch*r*c)}
	for b := range batch {
		for i := range min(r, c) {
			out.v[(b*r+i)*c+i] = 1
		}
	}
	return out
}

// cols is x's first n columns.
func cols(x mat, n int) mat {
	out := mat{batch: x.batch, r: x.r, c: n, v: make([]float64, x.batch*x.r*n)}
	for b := range x.batch {
		for i := range x.r {
			for j := range n {
				out.v[(b*x.r+i)*n+j] = x.at(b, i, j)
			}
		}
	}
	return out
}

// rows is x's first n rows.
func rows(x mat, n int) mat {
	return mat{batch: x.batch, r: n, c: x.c, v: slicesOfRows(x, n)}
}

func slicesOfRows(x mat, n int) []float64 {
	out := make([]float64, 0, x.batch*n*x.c)
	for b := range x.batch {
		out = append(out, x.v[b*x.r*x.c:b*x.r*x.c+n*x.c]...)
	}
	return out
}

// near checks got against want within tol times want's largest magnitude
// (per batch matrix, at least 1).
func near(t *testing.T, name string, got, want mat, tol float64) {
	t.Helper()
	if got.batch != want.batch || got.r != want.r || got.c != want.c {
		t.Errorf("%s: %dx%dx%d, want %dx%dx%d", name, got.batch, got.r, got.c, want.batch, want.r, want.c)
		return
	}
	per := want.r * want.c
	for b := range want.batch {
		scale := 1.0
		for _, w := range want.v[b*per : (b+1)*per] {
			scale = math.Max(scale, math.Abs(w))
		}
		for k := b * per; k < (b+1)*per; k++ {
			if d := math.Abs(got.v[k] - want.v[k]); !(d <= tol*scale) {
				t.Errorf("%s: batch %d element %d = %v, want %v (scale %v)", name, b, k-b*per, got.v[k], want.v[k], scale)
				return
			}
		}
	}
}

// linalgTol is the tolerance of a property computed from rounded results.
func linalgTol(d ir.DType, n int) float64 {
	if d == ir.F64 {
		return 1e-11 * float64(max(n, 1))
	}
	return 2e-6 * float64(max(n, 1))
}

// runLinalg builds the program, runs it on the driver and checks every
// result against the reference interpreter.
func (h *harness) runLinalg(t *testing.T, name string, args []tensor, build func(b *ir.Builder, xs []ir.Value) []ir.Value) []tensor {
	t.Helper()
	p := programOver(t, name, args, build)
	got := h.run(t, p, args...)
	in := make([]eval.Tensor, len(args))
	for i, a := range args {
		in[i] = eval.FromFloats(a.T, a.V...)
	}
	ref, err := eval.Run(p, in)
	if err != nil {
		t.Errorf("%s: the reference interpreter fails where the driver ran: %v", name, err)
		return got
	}
	for i, r := range ref {
		compare(t, fmt.Sprintf("%s result %d (against the reference interpreter)", name, i), got[i], tensor{T: r.Type, V: r.Floats()})
	}
	return got
}

// randMat is a batch of r x c matrices with entries in [-2, 2] by
// quarters (exact in every float type).
func (h *harness) randMat(d ir.DType, shape ...int) tensor { return h.gen(d, small, shape...) }

// spd is m m^T + n I for a random m: symmetric positive definite and well
// conditioned, with entries exact in float32.
func (h *harness) spd(d ir.DType, shape ...int) tensor {
	m := matOf(h.randMat(d, shape...))
	a := mul(m, tr(m))
	for b := range a.batch {
		for i := range a.r {
			a.v[(b*a.r+i)*a.c+i] += float64(a.r)
		}
	}
	return tensor{T: tt(d, shape...), V: a.v}
}

// withGarbage fills the triangle of a that an op must not read (above the
// diagonal when lower, else below) with values that would change its answer.
func withGarbage(a tensor, lower bool) tensor {
	m := matOf(a)
	out := append([]float64(nil), a.V...)
	for b := range m.batch {
		for i := range m.r {
			for j := range m.c {
				if (lower && j > i) || (!lower && j < i) {
					out[(b*m.r+i)*m.c+j] = 100 + float64(i+2*j)
				}
			}
		}
	}
	return tensor{T: a.T, V: out}
}

// triangle is a's lower (or upper) triangle, the rest zero; unit puts ones
// on the diagonal.
func triangle(a mat, lower, unit bool) mat {
	out := mat{batch: a.batch, r: a.r, c: a.c, v: make([]float64, len(a.v))}
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

func linalgDTypes(h *harness) []ir.DType { return h.keep([]ir.DType{ir.F32, ir.F64}) }

var linalgSquareShapes = [][]int{{1, 1}, {4, 4}, {2, 3, 5, 5}, {12, 12}, {0, 3, 3}}

func testCholesky(t *testing.T, h *harness) {
	testCholeskyC64(t, h)
	for _, d := range linalgDTypes(h) {
		for _, shape := range linalgSquareShapes {
			for _, lower := range []bool{true, false} {
				name := fmt.Sprintf("%v%v lower=%v", d, shape, lower)
				a := h.spd(d, shape...)
				got := h.runLinalg(t, name, []tensor{withGarbage(a, lower)}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
					return []ir.Value{b.Cholesky(xs[0], lower)}
				})
				l := matOf(got[0])
				near(t, name+": the other triangle is zero", l, triangle(l, lower, false), 0)
				prod := mul(l, tr(l))
				if !lower {
					prod = mul(tr(l), l)
				}
				near(t, name+": the factors' product", prod, matOf(a), linalgTol(d, l.r))
			}
		}
		// Not positive definite: that matrix is all NaN, its neighbour in
		// the batch is factored.
		a := tensor{T: tt(d, 2, 2, 2), V: []float64{4, 2, 2, 5, 1, 2, 2, 1}}
		got := h.runLinalg(t, fmt.Sprintf("%v not positive definite", d), []tensor{a}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			return []ir.Value{b.Cholesky(xs[0], true)}
		})
		want := []float64{2, 0, 1, 2}
		for k, g := range got[0].V {
			if (k < 4 && g != want[k]) || (k >= 4 && !math.IsNaN(g)) {
				t.Errorf("%v cholesky of a positive definite and an indefinite matrix: %v, want %v then NaNs", d, got[0].V, want)
				break
			}
		}
	}
}

func testTriangularSolve(t *testing.T, h *harness) {
	testTriangularSolveC64(t, h)
	for _, d := range linalgDTypes(h) {
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
							name := fmt.Sprintf("%v a%v b%v %+v", d, ashape, bshape, attrs)
							// A diagonal of 2..4 keeps the solve well conditioned.
							a := h.randMat(d, ashape...)
							am := matOf(a)
							for bb := range am.batch {
								for i := range k {
									a.V[(bb*k+i)*k+i] = float64(2 + (i+bb)%3)
								}
							}
							if unit { // a diagonal the op must not read
								for bb := range am.batch {
									for i := range k {
										a.V[(bb*k+i)*k+i] = 7
									}
								}
							}
							rhs := h.randMat(d, bshape...)
							got := h.runLinalg(t, name, []tensor{withGarbage(a, lower), rhs}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
								return []ir.Value{b.TriangularSolve(xs[0], xs[1], attrs)}
							})
							opA := triangle(matOf(a), lower, unit)
							if trans != ir.NoTranspose {
								opA = tr(opA)
							}
							x := matOf(got[0])
							var prod mat
							if left {
								prod = mul(opA, x)
							} else {
								prod = mul(x, opA)
							}
							near(t, name+": op(a) x", prod, matOf(rhs), linalgTol(d, k))
						}
					}
				}
			}
		}
		// A zero on the diagonal divides by zero.
		got := h.runLinalg(t, fmt.Sprintf("%v singular", d), []tensor{{T: tt(d, 1, 1), V: []float64{0}}, {T: tt(d, 1, 2), V: []float64{1, 0}}},
			func(b *ir.Builder, xs []ir.Value) []ir.Value {
				return []ir.Value{b.TriangularSolve(xs[0], xs[1], ir.LinalgAttrs{LeftSide: true, Lower: true})}
			})
		if !math.IsInf(got[0].V[0], 1) || !math.IsNaN(got[0].V[1]) {
			t.Errorf("%v solve of 0 x = [1, 0]: %v, want [+Inf NaN]", d, got[0].V)
		}
	}
}

var linalgShapes = [][]int{{1, 1}, {4, 4}, {5, 3}, {3, 5}, {2, 4, 3}, {2, 2, 3, 6}, {16, 9}, {0, 2, 2}, {3, 0}, {0, 3}}

// householderQ is the m x m product H_0 H_1 ... of the reflectors packed
// below the diagonal of qr with taus, computed here from their definition.
func householderQ(qr, taus mat) mat {
	m := qr.r
	q := eye(qr.batch, m, m)
	for b := range qr.batch {
		for i := taus.c - 1; i >= 0; i-- { // Q = H_0 (H_1 (... H_{k-1}))
			v := make([]float64, m)
			v[i] = 1
			for r := i + 1; r < m; r++ {
				v[r] = qr.at(b, r, i)
			}
			tau := taus.v[b*taus.c+i]
			for j := range m { // q -= tau v (v^T q)
				var s float64
				for r := range m {
					s += v[r] * q.at(b, r, j)
				}
				for r := range m {
					q.v[(b*m+r)*m+j] -= tau * v[r] * s
				}
			}
		}
	}
	return q
}

func testQr(t *testing.T, h *harness) {
	testQrC64(t, h)
	for _, d := range linalgDTypes(h) {
		for _, shape := range linalgShapes {
			name := fmt.Sprintf("%v%v", d, shape)
			a := h.randMat(d, shape...)
			got := h.runLinalg(t, name, []tensor{a}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
				return b.Results(b.Qr(xs[0]))
			})
			packed := matOf(got[0])
			taus := mat{batch: packed.batch, r: 1, c: min(packed.r, packed.c), v: got[1].V}
			q := householderQ(packed, taus)
			r := triangle(packed, false, false)
			tol := linalgTol(d, max(packed.r, packed.c))
			near(t, name+": Q^T Q", mul(tr(q), q), eye(packed.batch, packed.r, packed.r), tol)
			near(t, name+": Q R", mul(q, r), matOf(a), tol)
		}
	}
}

func testHouseholderProduct(t *testing.T, h *harness) {
	testHouseholderProductC64(t, h)
	for _, d := range linalgDTypes(h) {
		for _, shape := range [][]int{{1, 1}, {4, 4}, {5, 3}, {2, 6, 2}, {9, 4}, {0, 3, 2}} {
			name := fmt.Sprintf("%v%v", d, shape)
			a := h.randMat(d, shape...)
			got := h.runLinalg(t, name, []tensor{a}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
				qr := b.Results(b.Qr(xs[0]))
				return []ir.Value{b.HouseholderProduct(qr[0], qr[1]), qr[0]}
			})
			q, packed := matOf(got[0]), matOf(got[1])
			n := q.c
			tol := linalgTol(d, q.r)
			near(t, name+": Q^T Q", mul(tr(q), q), eye(q.batch, n, n), tol)
			near(t, name+": Q R", mul(q, rows(triangle(packed, false, false), n)), matOf(a), tol)
		}
		// Fewer taus than columns: the product of the first k reflectors
		// (orgqr's k < n), against this file's own product; a's diagonal
		// and upper triangle are not read.
		m, n, k := 5, 4, 2
		a := h.randMat(d, m, n)
		taus := tensor{T: tt(d, k), V: []float64{1.25, 0.5}}
		got := h.runLinalg(t, fmt.Sprintf("%v %dx%d with %d taus", d, m, n, k), []tensor{withGarbage(a, true), taus}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			return []ir.Value{b.HouseholderProduct(xs[0], xs[1])}
		})
		want := cols(householderQ(matOf(a), mat{batch: 1, r: 1, c: k, v: taus.V}), n)
		near(t, fmt.Sprintf("%v householder product of %d reflectors", d, k), matOf(got[0]), want, linalgTol(d, m))
	}
}

// symmetric is a random symmetric matrix (not definite).
func (h *harness) symmetric(d ir.DType, shape ...int) tensor {
	m := matOf(h.randMat(d, shape...))
	s := mat{batch: m.batch, r: m.r, c: m.c, v: make([]float64, len(m.v))}
	for k := range s.v {
		s.v[k] = m.v[k] + tr(m).v[k]
	}
	return tensor{T: tt(d, shape...), V: s.v}
}

func testEigh(t *testing.T, h *harness) {
	testEighC64(t, h)
	for _, d := range linalgDTypes(h) {
		for _, shape := range linalgSquareShapes {
			for _, lower := range []bool{true, false} {
				name := fmt.Sprintf("%v%v lower=%v", d, shape, lower)
				a := h.symmetric(d, shape...)
				checkEigh(t, h, name, d, a, lower)
			}
		}
		// Repeated eigenvalues: any orthonormal basis of each eigenspace.
		checkEigh(t, h, fmt.Sprintf("%v identity", d), d, tensor{T: tt(d, 3, 3), V: eye(1, 3, 3).v}, true)
		checkEigh(t, h, fmt.Sprintf("%v singular", d), d, tensor{T: tt(d, 2, 2), V: []float64{1, 1, 1, 1}}, false)
	}
}

func checkEigh(t *testing.T, h *harness, name string, d ir.DType, a tensor, lower bool) {
	t.Helper()
	got := h.runLinalg(t, name, []tensor{withGarbage(a, lower)}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return b.Results(b.Eigh(xs[0], lower))
	})
	v, n := matOf(got[0]), matOf(a).r
	w := got[1].V
	tol := linalgTol(d, n)
	near(t, name+": V^T V", mul(tr(v), v), eye(v.batch, n, n), tol)
	vw := mat{batch: v.batch, r: n, c: n, v: make([]float64, len(v.v))}
	for b := range v.batch {
		if !sort.Float64sAreSorted(w[b*n : (b+1)*n]) {
			t.Errorf("%s: eigenvalues %v are not ascending", name, w[b*n:(b+1)*n])
		}
		for i := range n {
			for j := range n {
				vw.v[(b*n+i)*n+j] = v.at(b, i, j) * w[b*n+j]
			}
		}
	}
	near(t, name+": A V = V diag(w)", mul(matOf(a), v), vw, tol)
}

func testLu(t *testing.T, h *harness) {
	for _, d := range linalgDTypes(h) {
		cases := []tensor{}
		for _, shape := range linalgShapes {
			cases = append(cases, h.randMat(d, shape...))
		}
		cases = append(cases,
			tensor{T: tt(d, 2, 2), V: []float64{1, 2, 2, 4}},                // singular
			tensor{T: tt(d, 3, 3), V: []float64{0, 1, 2, 0, 3, 4, 0, 5, 6}}, // a zero column
		)
		for _, a := range cases {
			name := fmt.Sprintf("%v %v", d, a.T.Shape)
			got := h.runLinalg(t, name, []tensor{a}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
				return b.Results(b.Lu(xs[0]))
			})
			lu := matOf(got[0])
			m, n, k := lu.r, lu.c, min(lu.r, lu.c)
			l := cols(triangle(lu, true, true), k)
			u := rows(triangle(lu, false, false), k)
			pa := mat{batch: lu.batch, r: m, c: n, v: make([]float64, len(lu.v))}
			am := matOf(a)
			for b := range lu.batch {
				perm := make([]int, m)
				for i := range perm {
					perm[i] = i
				}
				for i := range k { // the pivots, applied in turn, give the permutation
					p := int(got[1].V[b*k+i])
					if p < i || p >= m {
						t.Errorf("%s: pivot %d is %d", name, i, p)
						return
					}
					perm[i], perm[p] = perm[p], perm[i]
				}
				for i := range m {
					if int(got[2].V[b*m+i]) != perm[i] {
						t.Errorf("%s: permutation %v, the pivots %v make %v", name, got[2].V[b*m:(b+1)*m], got[1].V[b*k:(b+1)*k], perm)
						return
					}
					for j := range n {
						pa.v[(b*m+i)*n+j] = am.at(b, perm[i], j)
					}
				}
				for i := range m {
					for j := range min(i, k) {
						if math.Abs(lu.at(b, i, j)) > 1 {
							t.Errorf("%s: |L[%d,%d]| = %v > 1: not partial pivoting", name, i, j, lu.at(b, i, j))
						}
					}
				}
			}
			near(t, name+": P A = L U", mul(l, u), pa, linalgTol(d, max(m, n)))
		}
	}
}

func testSvd(t *testing.T, h *harness) {
	for _, d := range linalgDTypes(h) {
		cases := []tensor{}
		for _, shape := range linalgShapes {
			cases = append(cases, h.randMat(d, shape...))
		}
		cases = append(cases, tensor{T: tt(d, 3, 2), V: []float64{1, 2, 2, 4, 3, 6}}) // rank 1
		for _, a := range cases {
			for _, full := range []bool{false, true} {
				name := fmt.Sprintf("%v %v full=%v", d, a.T.Shape, full)
				got := h.runLinalg(t, name, []tensor{a}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
					return b.Results(b.Svd(xs[0], full))
				})
				u, vt := matOf(got[1]), matOf(got[2])
				am := matOf(a)
				k := min(am.r, am.c)
				tol := linalgTol(d, max(am.r, am.c))
				near(t, name+": U^T U", mul(tr(u), u), eye(u.batch, u.c, u.c), tol)
				near(t, name+": V^T V", mul(vt, tr(vt)), eye(vt.batch, vt.r, vt.r), tol)
				us := cols(u, k)
				for b := range u.batch {
					s := got[0].V[b*k : (b+1)*k]
					for i, x := range s {
						if x < 0 || (i > 0 && x > s[i-1]) {
							t.Errorf("%s: singular values %v are not descending and non-negative", name, s)
							break
						}
					}
					for i := range am.r {
						for j := range k {
							us.v[(b*am.r+i)*k+j] *= s[j]
						}
					}
				}
				near(t, name+": U diag(s) V^T", mul(us, rows(vt, k)), am, tol)
			}
		}
	}
}

// reflectorQ is the product H_0 H_1 ... H_{k-1} (m x m) of the
// Householder reflectors packed below row i+off of column i (v_i's unit
// entry at row i+off implied, zeros above it): off 0 is geqrf's packing,
// off 1 gehrd's and sytrd's lower one.
func reflectorQ(packed, taus mat, off int) mat {
	m := packed.r
	q := eye(packed.batch, m, m)
	for b := range packed.batch {
		for i := taus.c - 1; i >= 0; i-- {
			v := make([]float64, m)
			v[i+off] = 1
			for r := i + off + 1; r < m; r++ {
				v[r] = packed.at(b, r, i)
			}
			reflect(q, b, v, taus.v[b*taus.c+i])
		}
	}
	return q
}

// reflect overwrites batch b of the square q with (I - tau v v^T) q.
func reflect(q mat, b int, v []float64, tau float64) {
	m := q.r
	for j := range q.c {
		var s float64
		for r := range m {
			s += v[r] * q.at(b, r, j)
		}
		for r := range m {
			q.v[(b*m+r)*q.c+j] -= tau * v[r] * s
		}
	}
}

// zeroBelow checks that x is zero below its k-th subdiagonal.
func zeroBelow(t *testing.T, name string, x mat, k int) {
	t.Helper()
	for b := range x.batch {
		for i := range x.r {
			for j := range min(max(i-k, 0), x.c) {
				if x.at(b, i, j) != 0 {
					t.Errorf("%s: batch %d element (%d, %d) = %v, want 0", name, b, i, j, x.at(b, i, j))
					return
				}
			}
		}
	}
}

// generalCases are the nonsymmetric matrices of eig and schur: random
// ones, a rotation (a conjugate pair), a triangular one with a repeated
// eigenvalue and a permutation cycle (roots of unity).
func (h *harness) generalCases(d ir.DType) []tensor {
	cases := []tensor{}
	for _, shape := range linalgSquareShapes {
		cases = append(cases, h.randMat(d, shape...))
	}
	return append(cases,
		tensor{T: tt(d, 2, 2), V: []float64{0, -1, 1, 0}},
		tensor{T: tt(d, 3, 3), V: []float64{2, 1, 0, 0, 2, 1, 0, 0, 3}},
		tensor{T: tt(d, 4, 4), V: []float64{0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}},
	)
}

func testEig(t *testing.T, h *harness) {
	testEigC64(t, h)
	for _, d := range linalgDTypes(h) {
		for _, a := range h.generalCases(d) {
			name := fmt.Sprintf("%v %v", d, a.T.Shape)
			got := h.runLinalg(t, name, []tensor{a}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
				return b.Results(b.Eig(xs[0]))
			})
			checkEig(t, name, d, matOf(a), got)
		}
		nan := tensor{T: tt(d, 2, 2), V: []float64{1, math.NaN(), 0, 1}}
		got := h.runLinalg(t, fmt.Sprintf("%v with NaN", d), []tensor{nan}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			return b.Results(b.Eig(xs[0]))
		})
		for i, r := range got {
			for _, v := range r.V {
				if !math.IsNaN(v) {
					t.Errorf("%v eig of a matrix holding NaN: result %d holds %v, want NaN everywhere", d, i, r.V)
					break
				}
			}
		}
	}
}

// checkEig checks eig's results (wr, wi, vl re and im, vr re and im)
// against what defines them: A v_j = w_j v_j, u_j^H A = w_j u_j^H, unit
// vectors, conjugate pairs adjacent with the positive imaginary part
// first.
func checkEig(t *testing.T, name string, d ir.DType, a mat, got []tensor) {
	t.Helper()
	n := a.r
	tol := linalgTol(d, n) * 2
	for b := range a.batch {
		w := make([]complex128, n)
		for j := range n {
			w[j] = complex(got[0].V[b*n+j], got[1].V[b*n+j])
		}
		for j := 0; j < n; j++ {
			if imag(w[j]) == 0 {
				continue
			}
			if j+1 >= n || imag(w[j]) < 0 || w[j+1] != complex(real(w[j]), -imag(w[j])) {
				t.Errorf("%s: batch %d eigenvalues %v: conjugate pairs must be adjacent, the positive imaginary part first", name, b, w)
				return
			}
			j++
		}
		vec := func(k, j int) []complex128 { // column j of vl (k 2) or vr (k 4)
			v := make([]complex128, n)
			for i := range n {
				v[i] = complex(got[k].V[(b*n+i)*n+j], got[k+1].V[(b*n+i)*n+j])
			}
			return v
		}
		scale := 1.0
		for _, x := range a.v[b*n*n : (b+1)*n*n] {
			scale = math.Max(scale, math.Abs(x))
		}
		for j := range n {
			for k, side := range map[int]string{2: "left", 4: "right"} {
				v := vec(k, j)
				var norm float64
				for _, x := range v {
					norm += real(x)*real(x) + imag(x)*imag(x)
				}
				if math.Abs(norm-1) > tol {
					t.Errorf("%s: batch %d %s eigenvector %d has norm^2 %v, want 1", name, b, side, j, norm)
				}
				for i := range n {
					var r complex128 // (A v)_i - w v_i, or (u^H A)_i - w u^H_i
					for l := range n {
						if side == "right" {
							r += complex(a.at(b, i, l), 0) * v[l]
						} else {
							r += cmplx.Conj(v[l]) * complex(a.at(b, l, i), 0)
						}
					}
					if side == "right" {
						r -= w[j] * v[i]
					} else {
						r -= w[j] * cmplx.Conj(v[i])
					}
					if cmplx.Abs(r) > tol*scale*float64(n) {
						t.Errorf("%s: batch %d %s eigenvector %d of %v: residual %v at %d", name, b, side, j, w[j], r, i)
						return
					}
				}
			}
		}
	}
}

func testHessenberg(t *testing.T, h *harness) {
	for _, d := range linalgDTypes(h) {
		for _, a := range h.generalCases(d) {
			name := fmt.Sprintf("%v %v", d, a.T.Shape)
			got := h.runLinalg(t, name, []tensor{a}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
				return b.Results(b.Hessenberg(xs[0]))
			})
			packed := matOf(got[0])
			n := packed.r
			taus := mat{batch: packed.batch, r: 1, c: max(n-1, 0), v: got[1].V}
			q := reflectorQ(packed, taus, 1)
			hm := triangle(packed, false, false)
			for b := range packed.batch { // and the first subdiagonal
				for i := 1; i < n; i++ {
					hm.v[(b*n+i)*n+i-1] = packed.at(b, i, i-1)
				}
			}
			tol := linalgTol(d, n)
			near(t, name+": Q^T Q", mul(tr(q), q), eye(packed.batch, n, n), tol)
			near(t, name+": Q H Q^T", mul(mul(q, hm), tr(q)), matOf(a), tol)
		}
	}
}

func testTridiagonal(t *testing.T, h *harness) {
	testTridiagonalC64(t, h)
	for _, d := range linalgDTypes(h) {
		for _, shape := range linalgSquareShapes {
			for _, lower := range []bool{true, false} {
				name := fmt.Sprintf("%v%v lower=%v", d, shape, lower)
				a := h.symmetric(d, shape...)
				got := h.runLinalg(t, name, []tensor{withGarbage(a, lower)}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
					return b.Results(b.Tridiagonal(xs[0], lower))
				})
				packed := matOf(got[0])
				n, batch := packed.r, packed.batch
				k := max(n-1, 0)
				taus := mat{batch: batch, r: 1, c: k, v: got[3].V}
				var q mat
				if lower {
					q = reflectorQ(packed, taus, 1)
				} else { // Q = H_{n-2} ... H_0, v_i's unit entry at row i, the rest above it in column i+1
					q = eye(batch, n, n)
					for b := range batch {
						for i := range k {
							v := make([]float64, n)
							v[i] = 1
							for r := range i {
								v[r] = packed.at(b, r, i+1)
							}
							reflect(q, b, v, taus.v[b*k+i])
						}
					}
				}
				tm := mat{batch: batch, r: n, c: n, v: make([]float64, batch*n*n)}
				for b := range batch {
					for i := range n {
						tm.v[(b*n+i)*n+i] = got[1].V[b*n+i]
						if i+1 < n {
							e := got[2].V[b*k+i]
							tm.v[(b*n+i)*n+i+1], tm.v[(b*n+i+1)*n+i] = e, e
						}
					}
				}
				tol := linalgTol(d, n)
				near(t, name+": Q^T Q", mul(tr(q), q), eye(batch, n, n), tol)
				near(t, name+": Q T Q^T", mul(mul(q, tm), tr(q)), matOf(a), tol)
			}
		}
	}
}

func testQrPivoted(t *testing.T, h *harness) {
	for _, d := range linalgDTypes(h) {
		for _, shape := range linalgShapes {
			n := shape[len(shape)-1]
			flags := tensor{T: tt(ir.I32, append(slices.Clone(shape[:len(shape)-2]), n)...)}
			flags.V = make([]float64, flags.T.Shape.Size())
			if n > 2 { // the last column leads, the rest are free
				for k := n - 1; k < len(flags.V); k += n {
					flags.V[k] = 1
				}
			}
			name := fmt.Sprintf("%v%v", d, shape)
			a := h.randMat(d, shape...)
			got := h.runLinalg(t, name, []tensor{a, flags}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
				return b.Results(b.QrPivoted(xs[0], xs[1]))
			})
			packed, am := matOf(got[0]), matOf(a)
			m, k := packed.r, min(packed.r, packed.c)
			taus := mat{batch: packed.batch, r: 1, c: k, v: got[2].V}
			ap := mat{batch: am.batch, r: m, c: n, v: make([]float64, len(am.v))}
			for b := range am.batch {
				perm := got[1].V[b*n : (b+1)*n]
				seen := make([]bool, n)
				for j, p := range perm {
					if p < 0 || int(p) >= n || seen[int(p)] {
						t.Errorf("%s: batch %d permutation %v", name, b, perm)
						return
					}
					seen[int(p)] = true
					for i := range m {
						ap.v[(b*m+i)*n+j] = am.at(b, i, int(p))
					}
				}
				if n > 2 && perm[0] != float64(n-1) {
					t.Errorf("%s: batch %d permutation %v does not lead with the flagged column %d", name, b, perm, n-1)
				}
				for i := 2; i < k; i++ { // the free columns by decreasing norm
					if math.Abs(packed.at(b, i, i)) > math.Abs(packed.at(b, i-1, i-1))*(1+1e-6) {
						t.Errorf("%s: batch %d |R| diagonal rises at %d", name, b, i)
					}
				}
			}
			q := householderQ(packed, taus)
			tol := linalgTol(d, max(m, n))
			near(t, name+": Q^T Q", mul(tr(q), q), eye(packed.batch, m, m), tol)
			near(t, name+": Q R = A P", mul(q, triangle(packed, false, false)), ap, tol)
		}
	}
}

func testSchur(t *testing.T, h *harness) {
	for _, d := range linalgDTypes(h) {
		for _, a := range h.generalCases(d) {
			name := fmt.Sprintf("%v %v", d, a.T.Shape)
			got := h.runLinalg(t, name, []tensor{a}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
				return b.Results(b.Schur(xs[0]))
			})
			tm, z := matOf(got[0]), matOf(got[1])
			n := tm.r
			tol := linalgTol(d, n)
			near(t, name+": Z^T Z", mul(tr(z), z), eye(z.batch, n, n), tol)
			near(t, name+": Z T Z^T", mul(mul(z, tm), tr(z)), matOf(a), tol*2)
			zeroBelow(t, name+": T", tm, 1)
			for b := range tm.batch {
				wr, wi := got[2].V[b*n:(b+1)*n], got[3].V[b*n:(b+1)*n]
				for i := 0; i < n; i++ {
					if i+1 == n || tm.at(b, i+1, i) == 0 {
						if wr[i] != tm.at(b, i, i) || wi[i] != 0 {
							t.Errorf("%s: batch %d eigenvalue %d is %v%+vi, T's diagonal %v", name, b, i, wr[i], wi[i], tm.at(b, i, i))
						}
						continue
					}
					// A standardized 2 x 2 block [p q; r p], q r < 0: p +- sqrt(-q r) i.
					p, q, r := tm.at(b, i, i), tm.at(b, i, i+1), tm.at(b, i+1, i)
					if tm.at(b, i+1, i+1) != p || q*r >= 0 || (i+2 < n && tm.at(b, i+2, i+1) != 0) {
						t.Errorf("%s: batch %d block at %d [%v %v; %v %v] is not standardized", name, b, i, p, q, r, tm.at(b, i+1, i+1))
					}
					want := math.Sqrt(-q * r)
					if wr[i] != p || wr[i+1] != p || math.Abs(wi[i]-want) > tol*want || wi[i+1] != -wi[i] {
						t.Errorf("%s: batch %d eigenvalues %v%+vi, %v%+vi of block [%v %v; %v %v]", name, b, wr[i], wi[i], wr[i+1], wi[i+1], p, q, r, p)
					}
					i++
				}
			}
		}
	}
}

package drivertest

import (
	"fmt"
	"math"
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
	b := ir.NewBuilder()
	xs := make([]ir.Value, len(args))
	for i, a := range args {
		xs[i] = b.Parameter(a.T)
	}
	p, err := b.Build(build(b, xs)...)
	if err != nil {
		t.Fatalf("%s: build: %v", name, err)
	}
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

package lower

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

func linalgShapeCases() []shapeCase {
	tt16 := func(s ...int) ir.TensorType { return tt(ir.F16, s...) }
	return []shapeCase{
		{op: "Cholesky", in: []ir.TensorType{f32(3, 6, 6)}, out: []ir.TensorType{f32(3, 6, 6)}},
		{op: "MatrixTriangularSolve", in: []ir.TensorType{f32(2, 1, 5, 5), f32(3, 5, 4)}, out: []ir.TensorType{f32(2, 3, 5, 4)}},
		{op: "Qr", in: []ir.TensorType{f32(2, 6, 4)}, out: []ir.TensorType{f32(2, 6, 4), f32(2, 4, 4)}},
		{name: "Qr_full", op: "Qr", attrs: A().B("full_matrices", true), in: []ir.TensorType{f32(6, 4)}, out: []ir.TensorType{f32(6, 6), f32(6, 4)}},
		{name: "Qr_wide_half", op: "Qr", in: []ir.TensorType{tt16(3, 5)}, out: []ir.TensorType{tt16(3, 3), tt16(3, 5)}},
		{op: "SelfAdjointEigV2", attrs: A().B("compute_v", true), in: []ir.TensorType{f32(2, 5, 5)}, out: []ir.TensorType{f32(2, 5), f32(2, 5, 5)}},
		{name: "SelfAdjointEigV2_values", op: "SelfAdjointEigV2", attrs: A().B("compute_v", false), in: []ir.TensorType{f32(5, 5)}, out: []ir.TensorType{f32(5), f32()}},
		{op: "Svd", attrs: A().B("compute_uv", true), in: []ir.TensorType{f32(2, 6, 4)}, out: []ir.TensorType{f32(2, 4), f32(2, 6, 4), f32(2, 4, 4)}},
		{name: "Svd_full", op: "Svd", attrs: A().B("compute_uv", true).B("full_matrices", true), in: []ir.TensorType{f32(3, 5)},
			out: []ir.TensorType{f32(3), f32(3, 3), f32(5, 5)}},
		{name: "Svd_values", op: "Svd", attrs: A().B("compute_uv", false), in: []ir.TensorType{f32(3, 5)}, out: []ir.TensorType{f32(3), f32(), f32()}},
		{op: "MatrixInverse", in: []ir.TensorType{f32(2, 4, 4)}, out: []ir.TensorType{f32(2, 4, 4)}},
		{op: "MatrixSolve", in: []ir.TensorType{f32(2, 4, 4), f32(2, 4, 3)}, out: []ir.TensorType{f32(2, 4, 3)}},
		{op: "MatrixDeterminant", in: []ir.TensorType{f32(2, 3, 4, 4)}, out: []ir.TensorType{f32(2, 3)}},
		{op: "LogMatrixDeterminant", in: []ir.TensorType{f32(4, 4)}, out: []ir.TensorType{f32(), f32()}},
		{op: "Lu", attrs: A().T("output_idx_type", ir.I64), in: []ir.TensorType{f32(2, 4, 4)}, out: []ir.TensorType{f32(2, 4, 4), i64(2, 4)}},
		{op: "TridiagonalMatMul", in: []ir.TensorType{f32(2, 1, 5), f32(2, 1, 5), f32(2, 1, 5), f32(2, 5, 3)}, out: []ir.TensorType{f32(2, 5, 3)}},
		{op: "TridiagonalSolve", in: []ir.TensorType{f32(2, 3, 5), f32(2, 5, 3)}, out: []ir.TensorType{f32(2, 5, 3)}},
	}
}

// matOfT reads a rank-2 (or batched) eval tensor's b-th n x m matrix.
func matAt(x eval.Tensor, b, i, j int) float64 {
	s := x.Type.Shape
	r := s.Rank()
	return x.F[(b*s[r-2]+i)*s[r-1]+j]
}

// spdVal is m m^T + n I for a random m: well conditioned.
func spdVal(r *rand.Rand, batch, n int) eval.Tensor {
	a := make([]float64, batch*n*n)
	m := make([]float64, n*n)
	for b := range batch {
		for i := range m {
			m[i] = float64(r.IntN(9)-4) / 4
		}
		for i := range n {
			for j := range n {
				var s float64
				for k := range n {
					s += m[i*n+k] * m[j*n+k]
				}
				if i == j {
					s += float64(n)
				}
				a[(b*n+i)*n+j] = s
			}
		}
	}
	return fv(ir.Shape{batch, n, n}, a...)
}

// TestLinalgCompositions checks the composed ops through the reference
// interpreter against what defines them: A inv(A) = I, A x = b, det by
// cofactors, LU's P A = L U, Qr's Q R = A, the tridiagonal product against
// the dense one.
func TestLinalgCompositions(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 4
	a := spdVal(r, 2, n)
	// Not symmetric, so that adjoint matters.
	for k := range a.F {
		a.F[k] += float64(k%3) / 4
	}
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 2e-5*(1+math.Abs(want)) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	for _, adjoint := range []bool{false, true} {
		inv := run(t, "MatrixInverse", A().B("adjoint", adjoint), a)[0]
		for b := range 2 {
			for i := range n {
				for j := range n {
					var s float64
					for k := range n {
						aik := matAt(a, b, i, k)
						if adjoint {
							aik = matAt(a, b, k, i)
						}
						s += aik * matAt(inv, b, k, j)
					}
					near("(op(A) inv)["+string(rune('0'+i))+","+string(rune('0'+j))+"]", s, map[bool]float64{true: 1, false: 0}[i == j])
				}
			}
		}
		rhs := randVal(r, ir.F32, ir.Shape{2, n, 3}, 3)
		x := run(t, "MatrixSolve", A().B("adjoint", adjoint), a, rhs)[0]
		for b := range 2 {
			for i := range n {
				for j := range 3 {
					var s float64
					for k := range n {
						aik := matAt(a, b, i, k)
						if adjoint {
							aik = matAt(a, b, k, i)
						}
						s += aik * matAt(x, b, k, j)
					}
					near("op(A) x", s, matAt(rhs, b, i, j))
				}
			}
		}
	}
	// Determinants of known matrices: a permutation's sign, a singular one.
	m := fv(ir.Shape{3, 3, 3}, 0, 1, 0, 1, 0, 0, 0, 0, 1, 2, 1, 0, 1, 3, 1, 0, 1, 4, 1, 2, 3, 2, 4, 6, 0, 1, 1)
	det := run(t, "MatrixDeterminant", A(), m)[0]
	want := []float64{-1, 2*(3*4-1) - 1*(1*4-0), 0}
	ld := run(t, "LogMatrixDeterminant", A(), m)
	for b, w := range want {
		near("det", det.F[b], w)
		sign, logAbs := ld[0].F[b], ld[1].F[b]
		switch {
		case w == 0:
			if sign != 0 || !math.IsInf(logAbs, -1) {
				t.Errorf("log det of a singular matrix: sign %v log %v, want 0 and -inf", sign, logAbs)
			}
		default:
			near("sign * exp(log |det|)", sign*math.Exp(logAbs), w)
		}
	}
	empty := run(t, "MatrixDeterminant", A(), fv(ir.Shape{0, 0}))[0]
	if empty.F[0] != 1 {
		t.Errorf("det of a 0x0 matrix = %v, want 1", empty.F[0])
	}
	// Lu: L U is the input's rows in the permutation's order.
	lu := run(t, "Lu", A().T("output_idx_type", ir.I32), a)
	for b := range 2 {
		for i := range n {
			for j := range n {
				var s float64
				for k := range min(i, j) + 1 {
					l := matAt(lu[0], b, i, k)
					if k == i {
						l = 1
					}
					s += l * matAt(lu[0], b, k, j)
				}
				near("(L U)", s, matAt(a, b, int(lu[1].I[b*n+i]), j))
			}
		}
	}
	// Qr of a tall matrix, both ways: Q R = A and R upper triangular.
	tall := randVal(r, ir.F32, ir.Shape{5, 3}, 4)
	for _, full := range []bool{false, true} {
		qr := run(t, "Qr", A().B("full_matrices", full), tall)
		q, rr := qr[0], qr[1]
		kk := q.Type.Shape[1]
		for i := range 5 {
			for j := range 3 {
				var s float64
				for k := range kk {
					s += matAt(q, 0, i, k) * matAt(rr, 0, k, j)
				}
				near("Q R", s, matAt(tall, 0, i, j))
			}
		}
		for i := range rr.Type.Shape[0] {
			for j := range min(i, 3) {
				if matAt(rr, 0, i, j) != 0 {
					t.Errorf("R[%d,%d] = %v below the diagonal", i, j, matAt(rr, 0, i, j))
				}
			}
		}
	}
	// The tridiagonal product and solve against the dense matrix.
	sup, main, sub := fv(ir.Shape{1, 4}, 1, 2, 3, 9), fv(ir.Shape{1, 4}, 5, 6, 7, 8), fv(ir.Shape{1, 4}, 9, -1, -2, -3)
	x := randVal(r, ir.F32, ir.Shape{4, 2}, 3)
	dense := func(i, j int) float64 {
		switch j - i {
		case 1:
			return sup.F[i]
		case 0:
			return main.F[i]
		case -1:
			return sub.F[i]
		}
		return 0
	}
	prod := run(t, "TridiagonalMatMul", A(), sup, main, sub, x)[0]
	diags := fv(ir.Shape{3, 4}, append(append(append([]float64(nil), sup.F...), main.F...), sub.F...)...)
	sol := run(t, "TridiagonalSolve", A().B("partial_pivoting", true), diags, prod)[0]
	for i := range 4 {
		for j := range 2 {
			var s float64
			for k := range 4 {
				s += dense(i, k) * matAt(x, 0, k, j)
			}
			near("tridiagonal product", prod.F[i*2+j], s)
			near("tridiagonal solve", sol.F[i*2+j], x.F[i*2+j])
		}
	}
}

// TestLinalgErrors: malformed shapes name the op and the input.
func TestLinalgErrors(t *testing.T) {
	cases := []struct {
		op   string
		in   []ir.TensorType
		want string
	}{
		{"Cholesky", []ir.TensorType{f32(3, 4)}, "square"},
		{"MatrixInverse", []ir.TensorType{f32(4)}, "at least a matrix"},
		{"MatrixTriangularSolve", []ir.TensorType{f32(3, 3), f32(4, 2)}, "as many rows"},
		{"MatrixTriangularSolve", []ir.TensorType{f32(2, 3, 3), f32(3, 3, 2)}, "do not broadcast"},
		{"MatrixSolve", []ir.TensorType{f32(2, 3, 3), f32(3, 3, 2)}, "batch dims"},
		{"TridiagonalSolve", []ir.TensorType{f32(2, 5), f32(5, 1)}, "[..., 3, M]"},
		{"TridiagonalMatMul", []ir.TensorType{f32(1, 4), f32(1, 5), f32(1, 5), f32(5, 2)}, "superdiag"},
	}
	for _, c := range cases {
		_, err := build(t, c.op, A().Attrs, c.in, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.op) {
			t.Errorf("%s %v: error %v, want one naming the op and saying %q", c.op, c.in, err, c.want)
		}
	}
}

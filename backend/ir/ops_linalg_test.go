package ir

import (
	"strings"
	"testing"
)

// linalgCase is a linear algebra op built on parameters, with the result
// types (one, or the tuple's) the builder must infer, or the words of the
// error it must give.
type linalgCase struct {
	op     Op
	name   string
	params []TensorType
	build  func(b *Builder, x []Value) Value
	want   []TensorType
	err    string
}

func linalgInferenceCases() []linalgCase {
	f, d := F32, F64
	sq := []TensorType{tensorOf(f, 3, 4, 4)}
	return []linalgCase{
		{OpCholesky, "cholesky", sq, func(b *Builder, x []Value) Value { return b.Cholesky(x[0], true) }, []TensorType{tensorOf(f, 3, 4, 4)}, ""},
		{OpCholesky, "cholesky of a non-square", []TensorType{tensorOf(f, 4, 3)}, func(b *Builder, x []Value) Value { return b.Cholesky(x[0], true) }, nil, "square"},
		{OpCholesky, "cholesky of a vector", []TensorType{tensorOf(f, 4)}, func(b *Builder, x []Value) Value { return b.Cholesky(x[0], true) }, nil, "rank 2"},
		{OpCholesky, "cholesky of integers", []TensorType{tensorOf(I32, 2, 2)}, func(b *Builder, x []Value) Value { return b.Cholesky(x[0], true) }, nil, "float32 or float64"},
		{OpTriangularSolve, "left solve", []TensorType{tensorOf(d, 2, 3, 3), tensorOf(d, 2, 3, 5)}, func(b *Builder, x []Value) Value {
			return b.TriangularSolve(x[0], x[1], LinalgAttrs{LeftSide: true, Lower: true, Transpose: Adjoint})
		}, []TensorType{tensorOf(d, 2, 3, 5)}, ""},
		{OpTriangularSolve, "right solve", []TensorType{tensorOf(f, 5, 5), tensorOf(f, 3, 5)}, func(b *Builder, x []Value) Value {
			return b.TriangularSolve(x[0], x[1], LinalgAttrs{})
		}, []TensorType{tensorOf(f, 3, 5)}, ""},
		{OpTriangularSolve, "left solve of the wrong rows", []TensorType{tensorOf(f, 5, 5), tensorOf(f, 3, 5)}, func(b *Builder, x []Value) Value {
			return b.TriangularSolve(x[0], x[1], LinalgAttrs{LeftSide: true})
		}, nil, "as many rows as b float32[3,5] has rows"},
		{OpTriangularSolve, "solve across batch dims", []TensorType{tensorOf(f, 2, 3, 3), tensorOf(f, 3, 3)}, func(b *Builder, x []Value) Value {
			return b.TriangularSolve(x[0], x[1], LinalgAttrs{LeftSide: true})
		}, nil, "same batch dims"},
		{OpQr, "qr of a wide matrix", []TensorType{tensorOf(f, 2, 3, 5)}, func(b *Builder, x []Value) Value { return b.Qr(x[0]) },
			[]TensorType{tensorOf(f, 2, 3, 5), tensorOf(f, 2, 3)}, ""},
		{OpQr, "qr of a tall matrix", []TensorType{tensorOf(f, 6, 2)}, func(b *Builder, x []Value) Value { return b.Qr(x[0]) },
			[]TensorType{tensorOf(f, 6, 2), tensorOf(f, 2)}, ""},
		{OpHouseholderProduct, "householder product", []TensorType{tensorOf(f, 2, 6, 4), tensorOf(f, 2, 3)}, func(b *Builder, x []Value) Value {
			return b.HouseholderProduct(x[0], x[1])
		}, []TensorType{tensorOf(f, 2, 6, 4)}, ""},
		{OpHouseholderProduct, "householder product of a wide matrix", []TensorType{tensorOf(f, 3, 4), tensorOf(f, 3)}, func(b *Builder, x []Value) Value {
			return b.HouseholderProduct(x[0], x[1])
		}, nil, "at least as many rows"},
		{OpHouseholderProduct, "too many taus", []TensorType{tensorOf(f, 5, 4), tensorOf(f, 5)}, func(b *Builder, x []Value) Value {
			return b.HouseholderProduct(x[0], x[1])
		}, nil, "at most as many taus"},
		{OpEigh, "eigh", sq, func(b *Builder, x []Value) Value { return b.Eigh(x[0], false) },
			[]TensorType{tensorOf(f, 3, 4, 4), tensorOf(f, 3, 4)}, ""},
		{OpLu, "lu", []TensorType{tensorOf(f, 2, 5, 3)}, func(b *Builder, x []Value) Value { return b.Lu(x[0]) },
			[]TensorType{tensorOf(f, 2, 5, 3), tensorOf(I32, 2, 3), tensorOf(I32, 2, 5)}, ""},
		{OpSvd, "svd", []TensorType{tensorOf(f, 5, 3)}, func(b *Builder, x []Value) Value { return b.Svd(x[0], false) },
			[]TensorType{tensorOf(f, 3), tensorOf(f, 5, 3), tensorOf(f, 3, 3)}, ""},
		{OpSvd, "full svd", []TensorType{tensorOf(f, 2, 3, 5)}, func(b *Builder, x []Value) Value { return b.Svd(x[0], true) },
			[]TensorType{tensorOf(f, 2, 3), tensorOf(f, 2, 3, 3), tensorOf(f, 2, 5, 5)}, ""},
		{OpEig, "eig", sq, func(b *Builder, x []Value) Value { return b.Eig(x[0]) },
			[]TensorType{tensorOf(f, 3, 4), tensorOf(f, 3, 4), tensorOf(f, 3, 4, 4), tensorOf(f, 3, 4, 4), tensorOf(f, 3, 4, 4), tensorOf(f, 3, 4, 4)}, ""},
		{OpEig, "eig of a non-square", []TensorType{tensorOf(d, 4, 3)}, func(b *Builder, x []Value) Value { return b.Eig(x[0]) }, nil, "square"},
		{OpHessenberg, "hessenberg", sq, func(b *Builder, x []Value) Value { return b.Hessenberg(x[0]) },
			[]TensorType{tensorOf(f, 3, 4, 4), tensorOf(f, 3, 3)}, ""},
		{OpHessenberg, "hessenberg of an empty matrix", []TensorType{tensorOf(d, 0, 0)}, func(b *Builder, x []Value) Value { return b.Hessenberg(x[0]) },
			[]TensorType{tensorOf(d, 0, 0), tensorOf(d, 0)}, ""},
		{OpTridiagonal, "tridiagonal", []TensorType{tensorOf(d, 2, 5, 5)}, func(b *Builder, x []Value) Value { return b.Tridiagonal(x[0], true) },
			[]TensorType{tensorOf(d, 2, 5, 5), tensorOf(d, 2, 5), tensorOf(d, 2, 4), tensorOf(d, 2, 4)}, ""},
		{OpTridiagonal, "tridiagonal of a non-square", []TensorType{tensorOf(f, 5, 4)}, func(b *Builder, x []Value) Value { return b.Tridiagonal(x[0], false) }, nil, "square"},
		{OpQrPivoted, "pivoted qr", []TensorType{tensorOf(f, 2, 3, 5), tensorOf(I32, 2, 5)}, func(b *Builder, x []Value) Value { return b.QrPivoted(x[0], x[1]) },
			[]TensorType{tensorOf(f, 2, 3, 5), tensorOf(I32, 2, 5), tensorOf(f, 2, 3)}, ""},
		{OpQrPivoted, "pivoted qr with float flags", []TensorType{tensorOf(f, 3, 5), tensorOf(f, 5)}, func(b *Builder, x []Value) Value { return b.QrPivoted(x[0], x[1]) }, nil, "int32 vector"},
		{OpQrPivoted, "pivoted qr with a flag per row", []TensorType{tensorOf(f, 3, 5), tensorOf(I32, 3)}, func(b *Builder, x []Value) Value { return b.QrPivoted(x[0], x[1]) }, nil, "per column"},
		{OpSchur, "schur", []TensorType{tensorOf(f, 6, 6)}, func(b *Builder, x []Value) Value { return b.Schur(x[0]) },
			[]TensorType{tensorOf(f, 6, 6), tensorOf(f, 6, 6), tensorOf(f, 6), tensorOf(f, 6)}, ""},
		{OpSvd, "svd of a bfloat16", []TensorType{tensorOf(BF16, 3, 3)}, func(b *Builder, x []Value) Value { return b.Svd(x[0], true) }, nil, "float32 or float64"},
	}
}

// TestLinalgInference: each linear algebra op's result types (a tuple's
// for the decompositions), its refusals, and that the built program
// verifies and keys its attributes.
func TestLinalgInference(t *testing.T) {
	for _, c := range append(linalgInferenceCases(), complexLinalgInferenceCases()...) {
		b := NewBuilder()
		xs := make([]Value, len(c.params))
		for i, p := range c.params {
			xs[i] = b.Parameter(p)
		}
		v := c.build(b, xs)
		if c.err != "" {
			if err := b.Err(); err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one saying %q", c.name, err, c.err)
			}
			continue
		}
		if err := b.Err(); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if op := b.prog.Instrs[v].Op; op != c.op {
			t.Errorf("%s: built %s, want %s", c.name, op, c.op)
		}
		results := []Value{v}
		if c.op.YieldsTuple() {
			results = b.Results(v)
		} else if b.TupleTypes(v) != nil {
			t.Errorf("%s: %s yields a tuple but its table entry does not say so", c.name, c.op)
		}
		if len(results) != len(c.want) {
			t.Errorf("%s: %d results, want %d", c.name, len(results), len(c.want))
			continue
		}
		for i, r := range results {
			if got := b.Type(r); got.DType != c.want[i].DType || !got.Shape.Equal(c.want[i].Shape) {
				t.Errorf("%s: result %d is %v, want %v", c.name, i, got, c.want[i])
			}
		}
		p, err := b.Build(results...)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if err := Verify(p); err != nil {
			t.Errorf("%s: the built program does not verify: %v", c.name, err)
		}
	}
}

// TestLinalgAttrsKeyed: programs that differ only in a linear algebra
// attribute have different keys, and a hand-assembled instruction without
// the attributes its op needs is refused by name.
func TestLinalgAttrsKeyed(t *testing.T) {
	build := func(a LinalgAttrs) *Program {
		b := NewBuilder()
		x, y := b.Parameter(tensorOf(F32, 3, 3)), b.Parameter(tensorOf(F32, 3, 2))
		p, err := b.Build(b.TriangularSolve(x, y, a))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := LinalgAttrs{LeftSide: true}
	keys := map[Key]string{build(base).Key(): "base"}
	for name, a := range map[string]LinalgAttrs{
		"lower":     {LeftSide: true, Lower: true},
		"unit":      {LeftSide: true, UnitDiagonal: true},
		"transpose": {LeftSide: true, Transpose: Transpose},
		"adjoint":   {LeftSide: true, Transpose: Adjoint},
	} {
		k := build(a).Key()
		if prev, dup := keys[k]; dup {
			t.Errorf("%s has the key of %s", name, prev)
		}
		keys[k] = name
	}
	p := build(base)
	p.Instrs[2].Linalg = nil
	if err := Verify(p); err == nil || !strings.Contains(err.Error(), "missing linalg attributes") {
		t.Errorf("a triangular_solve without attributes: %v", err)
	}
}

package lower

import (
	"math"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

func init() {
	familyShapeCases = append(familyShapeCases, func() []shapeCase {
		c64 := func(s ...int) ir.TensorType { return tt(ir.C64, s...) }
		var cs []shapeCase
		for _, op := range []string{"Real", "Imag", "Angle", "ComplexAbs"} {
			cs = append(cs, shapeCase{op: op, in: []ir.TensorType{c64(3, 5)}, out: []ir.TensorType{f32(3, 5)}})
		}
		cs = append(cs,
			shapeCase{op: "Complex", in: []ir.TensorType{f32(4, 1, 3), f32(5, 1)}, out: []ir.TensorType{c64(4, 5, 3)}},
			shapeCase{op: "Conj", in: []ir.TensorType{c64(2, 7)}, out: []ir.TensorType{c64(2, 7)}},
			shapeCase{op: "ConjugateTranspose", in: []ir.TensorType{c64(2, 3, 4), i32(3)}, host: h(1, v(2, 0, 1)), out: []ir.TensorType{c64(4, 2, 3)}},
			shapeCase{name: "ConjugateTranspose real", op: "ConjugateTranspose", in: []ir.TensorType{f32(2, 3), i32(2)}, host: h(1, v(1, 0)), out: []ir.TensorType{f32(3, 2)}},
		)
		return cs
	})
	for _, op := range []string{"Real", "Imag", "Angle", "ComplexAbs"} {
		familyMultiConstraint[op] = func(map[string]ir.DType) ([]ir.TensorType, map[int][]int64) {
			return []ir.TensorType{tt(ir.C64, 3, 2)}, nil
		}
	}
	familyMultiConstraint["Complex"] = func(map[string]ir.DType) ([]ir.TensorType, map[int][]int64) {
		return []ir.TensorType{f32(3, 2), f32(2)}, nil
	}
}

func cv(s ir.Shape, zs ...complex128) eval.Tensor {
	t := eval.New(ir.TensorType{DType: ir.C64, Shape: s})
	copy(t.C, zs)
	return t
}

// The parts come out bit for bit, signed zeros and NaN included, and go
// back in the same way.
func TestComplexParts(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	zs := []complex128{complex(1.5, -2), complex(math.Copysign(0, -1), 0), complex(nan, 3), complex(-inf, nan), complex(3, 4)}
	x := cv(ir.Shape{5}, zs...)
	re, im := make([]float64, len(zs)), make([]float64, len(zs))
	for i, z := range zs {
		re[i], im[i] = real(z), imag(z)
	}
	got := run(t, "Real", A(), x)[0]
	expectClose(t, "Real", got, re, 0)
	if !math.Signbit(got.F[1]) {
		t.Errorf("Real(-0+0i) = %v, want -0", got.F[1])
	}
	expectClose(t, "Imag", run(t, "Imag", A(), x)[0], im, 0)
	expectClose(t, "ComplexAbs", run(t, "ComplexAbs", A(), x)[0], []float64{2.5, 0, nan, inf, 5}, 1e-7)
	expectClose(t, "Angle", run(t, "Angle", A(), x)[0], []float64{math.Atan2(-2, 1.5), math.Pi, nan, nan, math.Atan2(4, 3)}, 1e-7)
	z := run(t, "Complex", A(), fv(ir.Shape{2, 1}, -1, 2.5), fv(ir.Shape{3}, 0, -7, nan))[0]
	want := []complex128{complex(-1, 0), complex(-1, -7), complex(-1, nan), complex(2.5, 0), complex(2.5, -7), complex(2.5, nan)}
	for i, w := range want {
		if g := z.C[i]; real(g) != real(w) || (imag(g) != imag(w) && !math.IsNaN(imag(w))) || math.IsNaN(imag(g)) != math.IsNaN(imag(w)) {
			t.Errorf("Complex: element %d is %v, want %v", i, g, w)
		}
	}
	c := run(t, "Conj", A(), x)[0]
	for i, w := range zs {
		g := c.C[i]
		if !(real(g) == real(w) || math.IsNaN(real(g)) && math.IsNaN(real(w))) || math.Signbit(imag(g)) == math.Signbit(imag(w)) {
			t.Errorf("Conj: element %d is %v, want the conjugate of %v", i, g, w)
		}
	}
	ct := run(t, "ConjugateTranspose", A(), cv(ir.Shape{2, 2}, 1+2i, 3+4i, 5+6i, 7+8i), val(ir.I32, ir.Shape{2}, 1, 0))[0]
	for i, w := range []complex128{1 - 2i, 5 - 6i, 3 - 4i, 7 - 8i} {
		if ct.C[i] != w {
			t.Errorf("ConjugateTranspose: element %d is %v, want %v", i, ct.C[i], w)
		}
	}
}

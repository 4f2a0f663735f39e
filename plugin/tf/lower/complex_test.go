package lower

import (
	"bytes"
	"encoding/binary"
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

// TestComplexPartsBitForBit: Real, Imag, Complex, Conj and
// ConjugateTranspose move the parts' bits, on the reference interpreter
// and on the host driver: NaN payloads, signed zeros and infinities come
// through, and conjugating flips the imaginary part's sign bit whatever
// it holds (NaN and zero included), as TensorFlow's CPU does.
func TestComplexPartsBitForBit(t *testing.T) {
	re := []uint32{0x3fc00000, 0x80000000, 0x7fc12345, 0xffc00001, 0x7f800000, 0x00000001}
	im := []uint32{0xffd00bad, 0x00000000, 0x80000000, 0x7fc00000, 0xff800000, 0x807fffff}
	bits := func(ws ...uint32) []byte {
		var b []byte
		for _, w := range ws {
			b = binary.LittleEndian.AppendUint32(b, w)
		}
		return b
	}
	interleave := func(re, im []uint32) []uint32 {
		var z []uint32
		for k := range re {
			z = append(z, re[k], im[k])
		}
		return z
	}
	flip := func(ws []uint32) []uint32 {
		out := make([]uint32, len(ws))
		for k, w := range ws {
			out[k] = w ^ 0x80000000
		}
		return out
	}
	// transposed is ws, a [2, 3] matrix, transposed to [3, 2].
	transposed := func(ws []uint32) []uint32 {
		return []uint32{ws[0], ws[3], ws[1], ws[4], ws[2], ws[5]}
	}
	s := ir.Shape{2, 3}
	z := eval.FromBytes(ir.TensorType{DType: ir.C64, Shape: s}, bits(interleave(re, im)...))
	fre := eval.FromBytes(ir.TensorType{DType: ir.F32, Shape: s}, bits(re...))
	fim := eval.FromBytes(ir.TensorType{DType: ir.F32, Shape: s}, bits(im...))
	perm := val(ir.I32, ir.Shape{2}, 1, 0)
	for _, r := range []struct {
		name string
		run  runner
	}{{"interpreter", run}, {"host driver", runHost}} {
		for _, c := range []struct {
			op   string
			ins  []eval.Tensor
			want []uint32
		}{
			{"Real", []eval.Tensor{z}, re},
			{"Imag", []eval.Tensor{z}, im},
			{"Complex", []eval.Tensor{fre, fim}, interleave(re, im)},
			{"Conj", []eval.Tensor{z}, interleave(re, flip(im))},
			{"ConjugateTranspose", []eval.Tensor{z, perm}, interleave(transposed(re), transposed(flip(im)))},
		} {
			if c.op == "ConjugateTranspose" && r.name == "host driver" {
				continue // perm is a host input, which runHost does not take
			}
			got := r.run(t, c.op, A(), c.ins...)[0].Bytes()
			if want := bits(c.want...); !bytes.Equal(got, want) {
				t.Errorf("%s on the %s: % x\nwant % x", c.op, r.name, got, want)
			}
		}
	}
}

package drivertest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

// real, imag and complex move float32 parts bit for bit, so their cases
// compare bits: every pattern below must come through unchanged, in every
// position. (Signaling NaNs are left out: the reference interpreter, and
// the model of MPSGraph, hold floats as float64, and widening a float32
// quiets them.)
var partWords = []uint32{
	0x3fc00000, // 1.5
	0xc0000000, // -2
	0x00000000, // +0
	0x80000000, // -0
	0x7f800000, // +inf
	0xff800000, // -inf
	0x7fc00000, // NaN
	0xffc00000, // NaN, sign set
	0x7fc12345, // NaN with a payload
	0xffd00bad, // NaN with a payload, sign set
	0x00000001, // the smallest subnormal
	0x807fffff, // the largest negative subnormal
}

// partShapes are the shapes the cases run at: a matrix, a scalar and
// empty tensors.
var partShapes = [][]int{{3, 4}, {12}, {}, {0, 3}, {2, 0}}

// parts is the real and imaginary words of n numbers: every pattern meets
// every other, the imaginary parts shifted by one place against the real.
func parts(n int) (re, im []uint32) {
	for k := range n {
		re = append(re, partWords[k%len(partWords)])
		im = append(im, partWords[(k+1+k/len(partWords))%len(partWords)])
	}
	return re, im
}

func words(ws []uint32) []byte {
	b := make([]byte, 0, 4*len(ws))
	for _, w := range ws {
		b = binary.LittleEndian.AppendUint32(b, w)
	}
	return b
}

// interleave is the complex64 layout of parts: real then imaginary.
func interleave(re, im []uint32) []uint32 {
	z := make([]uint32, 0, 2*len(re))
	for k := range re {
		z = append(z, re[k], im[k])
	}
	return z
}

// checkBits runs build over raw args and requires want's bytes exactly,
// from the driver and from the reference interpreter.
func (h *harness) checkBits(t *testing.T, name string, args []tensor, build func(b *ir.Builder, xs []ir.Value) ir.Value, want []byte) {
	t.Helper()
	h.checkBitsNaN(t, name, args, build, want, false)
}

// checkBitsNaN is checkBits where, with anyNaN, the driver may give any
// NaN where want has one (the reference interpreter still gives want's).
func (h *harness) checkBitsNaN(t *testing.T, name string, args []tensor, build func(b *ir.Builder, xs []ir.Value) ir.Value, want []byte, anyNaN bool) {
	t.Helper()
	p := programOver(t, name, args, one(build))
	if got := h.runBytes(t, p, args...)[0]; !bytes.Equal(got, want) && !(anyNaN && sameUpToNaN(got, want)) {
		t.Errorf("%s: % x\nwant % x", name, got, want)
	}
	in := make([]eval.Tensor, len(args))
	for i, a := range args {
		in[i] = eval.FromBytes(a.T, a.Raw)
	}
	ref, err := eval.Run(p, in)
	if err != nil {
		t.Errorf("%s: the reference interpreter fails where the driver ran: %v", name, err)
	} else if got := ref[0].Bytes(); !bytes.Equal(got, want) {
		t.Errorf("%s (the reference interpreter): % x\nwant % x", name, got, want)
	}
}

func testReal(t *testing.T, h *harness) { partTest(t, h, ir.OpReal) }
func testImag(t *testing.T, h *harness) { partTest(t, h, ir.OpImag) }

func partTest(t *testing.T, h *harness, op ir.Op) {
	for _, shape := range partShapes {
		n := ir.Shape(shape).Size()
		re, im := parts(n)
		want := re
		if op == ir.OpImag {
			want = im
		}
		x := tensor{T: tt(ir.C64, shape...), Raw: words(interleave(re, im))}
		h.checkBits(t, fmt.Sprintf("%s of %v", op, x.T), []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
			if op == ir.OpImag {
				return b.Imag(xs[0])
			}
			return b.Real(xs[0])
		}, words(want))
		// After data movement, as parts of a larger program: a transposed
		// view of the number, reversed.
		if len(shape) == 2 {
			h.checkBits(t, fmt.Sprintf("%s of a transposed %v", op, x.T), []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
				z := b.Transpose(xs[0], []int{1, 0})
				if op == ir.OpImag {
					return b.Transpose(b.Imag(z), []int{1, 0})
				}
				return b.Transpose(b.Real(z), []int{1, 0})
			}, words(want))
		}
	}
}

func testComplex(t *testing.T, h *harness) {
	for _, shape := range partShapes {
		n := ir.Shape(shape).Size()
		re, im := parts(n)
		args := []tensor{{T: tt(ir.F32, shape...), Raw: words(re)}, {T: tt(ir.F32, shape...), Raw: words(im)}}
		h.checkBits(t, fmt.Sprintf("complex of %v", args[0].T), args, func(b *ir.Builder, xs []ir.Value) ir.Value {
			return b.Complex(xs[0], xs[1])
		}, words(interleave(re, im)))
		// The conjugate, as frontends build it: negate flips the sign bit
		// of every float, NaN and zero included, and touches nothing else.
		// (The Metal driver does so from macOS 13.2, with
		// reinterpretCast; before, MPSGraph's negative decides a NaN's
		// sign, and the model's gives the canonical NaN: such a driver
		// checks the numbers as numbers.)
		z := tensor{T: tt(ir.C64, shape...), Raw: words(interleave(re, im))}
		flipped := make([]uint32, n)
		for k, w := range im {
			flipped[k] = w ^ 0x80000000
		}
		h.checkBitsNaN(t, fmt.Sprintf("complex(real, -imag) of %v", z.T), []tensor{z}, func(b *ir.Builder, xs []ir.Value) ir.Value {
			return b.Complex(b.Real(xs[0]), b.Unary(ir.OpNeg, b.Imag(xs[0])))
		}, words(interleave(re, flipped)), h.d.Name() != "host")
	}
}

// sameUpToNaN says whether two float32 arrays' bytes are equal but where
// both words are NaNs.
func sameUpToNaN(got, want []byte) bool {
	if len(got) != len(want) {
		return false
	}
	for k := 0; k+4 <= len(want); k += 4 {
		g, w := binary.LittleEndian.Uint32(got[k:]), binary.LittleEndian.Uint32(want[k:])
		if g != w && !(math.IsNaN(float64(math.Float32frombits(g))) && math.IsNaN(float64(math.Float32frombits(w)))) {
			return false
		}
	}
	return true
}

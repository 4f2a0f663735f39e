package drivertest

import (
	"fmt"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

// genComplex draws complex64 values with independent real and imaginary parts.
func genComplex(h *harness, shape ...int) tensor {
	t := h.gen(ir.C64, anyValue, shape...)
	t.Im = h.gen(ir.F32, anyValue, shape...).V
	return t
}

// testFFT compares every kind of transform with the reference interpreter's
// (the DFT by its definition), and checks that a transform and its inverse
// give the input back.
func testFFT(t *testing.T, h *harness) {
	cases := []struct {
		shape  []int // batch dims, then the transformed dims
		length []int
	}{
		{[]int{3, 1}, []int{1}},
		{[]int{2, 5}, []int{5}},
		{[]int{3, 8}, []int{8}},
		{[]int{12}, []int{12}},
		{[]int{17}, []int{17}},
		{[]int{64}, []int{64}},
		{[]int{2, 4, 6}, []int{4, 6}},
		{[]int{4, 6}, []int{4, 6}},
		{[]int{2, 3, 4}, []int{2, 3, 4}},
		{[]int{0, 8}, []int{8}},
	}
	for _, c := range cases {
		nd := len(c.length)
		name := fmt.Sprintf("%v over %v", c.shape, c.length)
		x := genComplex(h, c.shape...)
		for _, kind := range []ir.FFTKind{ir.FFTForward, ir.FFTInverse} {
			h.checkEval(t, fmt.Sprintf("%s %s", kind, name), []tensor{x}, one(func(b *ir.Builder, xs []ir.Value) ir.Value {
				return b.FFT(xs[0], kind, c.length)
			}))
		}
		h.check(t, "ifft(fft(x)) "+name, []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
			return b.FFT(b.FFT(xs[0], ir.FFTForward, c.length), ir.FFTInverse, c.length)
		}, x)

		// Real transforms: the real input has the transformed shape; the
		// half spectrum has last/2+1 entries in the last dim.
		r := h.gen(ir.F32, anyValue, c.shape...)
		h.checkEval(t, "rfft "+name, []tensor{r}, one(func(b *ir.Builder, xs []ir.Value) ir.Value {
			return b.FFT(xs[0], ir.FFTReal, c.length)
		}))
		h.check(t, "irfft(rfft(x)) "+name, []tensor{r}, func(b *ir.Builder, xs []ir.Value) ir.Value {
			return b.FFT(b.FFT(xs[0], ir.FFTReal, c.length), ir.FFTInverseReal, c.length)
		}, r)

		// An arbitrary half spectrum, not one a real signal made: the result
		// is the real part of the inverse of its Hermitian extension, which
		// ignores the imaginary parts that extension cannot hold.
		hshape := append(append([]int(nil), c.shape[:len(c.shape)-1]...), c.length[nd-1]/2+1)
		hx := genComplex(h, hshape...)
		h.checkEval(t, "irfft "+name, []tensor{hx}, one(func(b *ir.Builder, xs []ir.Value) ir.Value {
			return b.FFT(xs[0], ir.FFTInverseReal, c.length)
		}))
	}
}

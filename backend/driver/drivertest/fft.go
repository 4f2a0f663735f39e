package drivertest

import (
	"fmt"
	"math"
	"math/cmplx"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

// dftRef is the textbook n-dimensional DFT over the innermost len(length)
// dims of x (batch dims outermost), every output a direct sum over every
// input of the line: O(N²), independent of any fast algorithm. sign is -1
// forward, +1 inverse; the inverse also divides by the number of points.
func dftRef(x []complex128, shape []int, nd int, sign float64) []complex128 {
	fshape := shape[len(shape)-nd:]
	n := ir.Shape(fshape).Size()
	out := make([]complex128, len(x))
	for b := 0; b < len(x); b += max(n, 1) {
		forEachIndex(fshape, func(k []int) {
			var sum complex128
			forEachIndex(fshape, func(j []int) {
				phase := 0.0 // Σ k·j/N per dim, each reduced mod N for accuracy
				for a := range fshape {
					phase += float64(k[a]*j[a]%fshape[a]) / float64(fshape[a])
				}
				s, c := math.Sincos(sign * 2 * math.Pi * phase)
				sum += x[b+offset(fshape, j)] * complex(c, s)
			})
			if sign > 0 {
				sum /= complex(float64(n), 0)
			}
			out[b+offset(fshape, k)] = sum
		})
	}
	return out
}

func complexOf(t tensor) []complex128 {
	im := t.Im
	if t.T.DType == ir.C64 {
		im = t.imag()
	}
	x := make([]complex128, len(t.V))
	for i, re := range t.V {
		if im != nil {
			x[i] = complex(re, im[i])
		} else {
			x[i] = complex(re, 0)
		}
	}
	return x
}

func complexTensor(shape []int, x []complex128) tensor {
	t := tensor{T: tt(ir.C64, shape...), V: make([]float64, len(x)), Im: make([]float64, len(x))}
	for i, v := range x {
		t.V[i], t.Im[i] = real(v), imag(v)
	}
	return t
}

// genComplex draws complex64 values with independent real and imaginary parts.
func genComplex(h *harness, shape ...int) tensor {
	t := h.gen(ir.C64, anyValue, shape...)
	t.Im = h.gen(ir.F32, anyValue, shape...).V
	return t
}

// halfSpectrum keeps the non-negative frequencies of the last dim.
func halfSpectrum(x []complex128, shape []int) ([]complex128, []int) {
	last := shape[len(shape)-1]
	half := last/2 + 1
	hs := append(append([]int(nil), shape[:len(shape)-1]...), half)
	out := make([]complex128, 0, len(x)/max(last, 1)*half)
	for l := 0; l < len(x); l += last {
		out = append(out, x[l:l+half]...)
	}
	return out, hs
}

// hermitianExtension rebuilds the full spectrum an inverse real transform
// sees from its non-negative half: X[k] = conj(X[-k]) over all fft dims
// jointly, for the frequencies of the last dim past n/2.
func hermitianExtension(x []complex128, shape []int, nd int, last int) ([]complex128, []int) {
	half := last/2 + 1
	full := append(append([]int(nil), shape[:len(shape)-1]...), last)
	fshape := full[len(full)-nd:]
	hshape := shape[len(shape)-nd:]
	n, hn := ir.Shape(fshape).Size(), ir.Shape(hshape).Size()
	out := make([]complex128, len(x)/hn*n)
	for b := 0; b*hn < len(x); b++ {
		forEachIndex(fshape, func(k []int) {
			src := append([]int(nil), k...)
			conj := k[nd-1] >= half
			if conj {
				for a := range src {
					src[a] = (fshape[a] - k[a]) % fshape[a]
				}
			}
			v := x[b*hn+offset(hshape, src)]
			if conj {
				v = cmplx.Conj(v)
			}
			out[b*n+offset(fshape, k)] = v
		})
	}
	return out, full
}

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
		xc := complexOf(x)
		for _, kind := range []ir.FFTKind{ir.FFTForward, ir.FFTInverse} {
			sign := -1.0
			if kind == ir.FFTInverse {
				sign = 1
			}
			want := complexTensor(c.shape, dftRef(xc, c.shape, nd, sign))
			h.check(t, fmt.Sprintf("%s %s", kind, name), []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
				return b.FFT(xs[0], kind, c.length)
			}, want)
		}
		h.check(t, "ifft(fft(x)) "+name, []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
			return b.FFT(b.FFT(xs[0], ir.FFTForward, c.length), ir.FFTInverse, c.length)
		}, x)

		// Real transforms: the real input has the transformed shape; the
		// half spectrum has last/2+1 entries in the last dim.
		last := c.length[nd-1]
		r := h.gen(ir.F32, anyValue, c.shape...)
		spec, hshape := halfSpectrum(dftRef(complexOf(r), c.shape, nd, -1), c.shape)
		h.check(t, "rfft "+name, []tensor{r}, func(b *ir.Builder, xs []ir.Value) ir.Value {
			return b.FFT(xs[0], ir.FFTReal, c.length)
		}, complexTensor(hshape, spec))
		h.check(t, "irfft(rfft(x)) "+name, []tensor{r}, func(b *ir.Builder, xs []ir.Value) ir.Value {
			return b.FFT(b.FFT(xs[0], ir.FFTReal, c.length), ir.FFTInverseReal, c.length)
		}, r)

		// An arbitrary half spectrum, not one a real signal made: the result
		// is the real part of the inverse of its Hermitian extension, which
		// ignores the imaginary parts that extension cannot hold.
		hx := genComplex(h, hshape...)
		full, fshape := hermitianExtension(complexOf(hx), hshape, nd, last)
		inv := dftRef(full, fshape, nd, 1)
		want := tensor{T: tt(ir.F32, fshape...), V: make([]float64, len(inv))}
		for i, v := range inv {
			want.V[i] = real(v)
		}
		h.check(t, "irfft "+name, []tensor{hx}, func(b *ir.Builder, xs []ir.Value) ir.Value {
			return b.FFT(xs[0], ir.FFTInverseReal, c.length)
		}, want)
	}
}

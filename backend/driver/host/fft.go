package host

import (
	"fmt"
	"math/bits"
	"math/cmplx"

	"github.com/metalplug/metalplug/backend/ir"
)

func init() { register(opKernel{make: fftKernel, work: heavyWork}, ir.OpFFT) }

// OpFFT transforms in complex128 whatever the stored precision, so that a
// float32 result carries only its final rounding. A multi-dimensional
// transform is 1-D transforms along each axis in turn. Lengths that are
// powers of two use an iterative radix-2 transform; any other length uses
// Bluestein's algorithm, which rewrites a length-n DFT as a convolution
// computed with power-of-two transforms of length at least 2n-1, so every
// length costs O(n log n) and keeps radix-2's accuracy.

// fftPlan is the precomputed part of a 1-D transform of one length. Plans
// are read-only once built, so goroutines share them.
type fftPlan struct {
	n   int
	pow bool
	// radix-2: twiddle[k] = exp(-2πik/n) for k < n/2
	twiddle []complex128
	// Bluestein: chirp[k] = exp(-πik²/n); kernel = the length-m transform
	// of the conjugate chirp laid out circularly; sub is the length-m plan.
	chirp  []complex128
	kernel []complex128
	sub    *fftPlan
}

func newFFTPlan(n int) *fftPlan {
	p := &fftPlan{n: n, pow: n&(n-1) == 0}
	if p.pow {
		p.twiddle = make([]complex128, n/2)
		for k := range p.twiddle {
			p.twiddle[k] = ir.UnitRoot(k, n)
		}
		return p
	}
	m := 1 << bits.Len(uint(2*n-2))
	p.sub = newFFTPlan(m)
	p.chirp = make([]complex128, n)
	for k := range p.chirp {
		// k² mod 2n keeps the angle small, so it is accurate for large k.
		r := (k * k) % (2 * n)
		p.chirp[k] = ir.UnitRoot(r, 2*n)
	}
	p.kernel = make([]complex128, m)
	p.kernel[0] = cmplx.Conj(p.chirp[0])
	for k := 1; k < n; k++ {
		p.kernel[k] = cmplx.Conj(p.chirp[k])
		p.kernel[m-k] = p.kernel[k]
	}
	p.sub.forward(p.kernel, nil)
	return p
}

// scratchLen is the scratch forward needs.
func (p *fftPlan) scratchLen() int {
	if p.pow {
		return 0
	}
	return len(p.kernel)
}

// forward computes the unscaled DFT of x in place, X[k] = Σ x[j] e^(-2πijk/n).
func (p *fftPlan) forward(x, scratch []complex128) {
	n := p.n
	if n <= 1 {
		return
	}
	if !p.pow {
		a := scratch[:len(p.kernel)]
		for k := range a {
			a[k] = 0
		}
		for k, v := range x {
			a[k] = v * p.chirp[k]
		}
		p.sub.forward(a, nil)
		for k := range a {
			a[k] = cmplx.Conj(a[k] * p.kernel[k]) // conj, forward, conj is the inverse
		}
		p.sub.forward(a, nil)
		inv := 1 / float64(len(a))
		for k := range x {
			x[k] = p.chirp[k] * cmplx.Conj(a[k]) * complex(inv, 0)
		}
		return
	}
	shift := 64 - bits.Len(uint(n-1))
	for i := range x {
		if j := int(bits.Reverse64(uint64(i)) >> shift); j > i {
			x[i], x[j] = x[j], x[i]
		}
	}
	for size := 2; size <= n; size <<= 1 {
		half, step := size/2, n/size
		for start := 0; start < n; start += size {
			for k := range half {
				t := p.twiddle[k*step] * x[start+k+half]
				x[start+k+half] = x[start+k] - t
				x[start+k] += t
			}
		}
	}
}

// inverse computes the unscaled inverse DFT, Σ X[k] e^(+2πijk/n), as the
// conjugate of the forward transform of the conjugate.
func (p *fftPlan) inverse(x, scratch []complex128) {
	for i := range x {
		x[i] = cmplx.Conj(x[i])
	}
	p.forward(x, scratch)
	for i := range x {
		x[i] = cmplx.Conj(x[i])
	}
}

// fftAxis transforms every line of data (of shape) along axis.
func fftAxis(data []complex128, shape []int, axis int, p *fftPlan, inverse bool) {
	outer, n, inner := ir.Shape(shape[:axis]).Size(), shape[axis], ir.Shape(shape[axis+1:]).Size()
	if n <= 1 || len(data) == 0 {
		return
	}
	lines := outer * inner
	work := n * max(1, bits.Len(uint(n))) * 4
	parallelFor(lines, max(1, grainMath/work), func(lo, hi int) {
		buf := make([]complex128, n)
		scratch := make([]complex128, p.scratchLen())
		for l := lo; l < hi; l++ {
			start := l/inner*n*inner + l%inner
			for k := range buf {
				buf[k] = data[start+k*inner]
			}
			if inverse {
				p.inverse(buf, scratch)
			} else {
				p.forward(buf, scratch)
			}
			for k, v := range buf {
				data[start+k*inner] = v
			}
		}
	})
}

func fftKernel(in ir.Instr, at []ir.TensorType) (kernel, error) {
	a := in.FFT
	inShape, outShape := at[0].Shape, in.Type.Shape
	r, nd := len(inShape), len(a.Length)
	plans := map[int]*fftPlan{}
	plan := func(n int) *fftPlan {
		if plans[n] == nil {
			plans[n] = newFFTPlan(n)
		}
		return plans[n]
	}
	for _, n := range a.Length {
		plan(n)
	}
	total := 1.0
	for _, n := range a.Length {
		total *= float64(n)
	}
	last := a.Length[nd-1]
	switch a.Kind {
	case ir.FFTForward, ir.FFTInverse:
		inv := a.Kind == ir.FFTInverse
		return func(out []byte, ins [][]byte) {
			x := view[complex64](ins[0])
			buf := make([]complex128, len(x))
			for i, v := range x {
				buf[i] = complex128(v)
			}
			for ax := r - nd; ax < r; ax++ {
				fftAxis(buf, inShape, ax, plans[inShape[ax]], inv)
			}
			scale := 1.0
			if inv {
				scale = 1 / total
			}
			z := view[complex64](out)
			for i, v := range buf {
				z[i] = complex64(v * complex(scale, 0))
			}
		}, nil
	case ir.FFTReal:
		// A real transform along the last axis, keeping the non-negative
		// frequencies, then complex transforms along the others.
		half := last/2 + 1
		return func(out []byte, ins [][]byte) {
			x := view[float32](ins[0])
			buf := make([]complex128, len(out)/8)
			lines := len(x) / last
			parallelFor(lines, max(1, grainMath/(4*last)), func(lo, hi int) {
				line := make([]complex128, last)
				scratch := make([]complex128, plans[last].scratchLen())
				for l := lo; l < hi; l++ {
					for k := range line {
						line[k] = complex(float64(x[l*last+k]), 0)
					}
					plans[last].forward(line, scratch)
					copy(buf[l*half:(l+1)*half], line[:half])
				}
			})
			for ax := r - nd; ax < r-1; ax++ {
				fftAxis(buf, outShape, ax, plans[outShape[ax]], false)
			}
			z := view[complex64](out)
			for i, v := range buf {
				z[i] = complex64(v)
			}
		}, nil
	case ir.FFTInverseReal:
		// Complex inverse transforms along all but the last axis, then, along
		// it, the inverse of the Hermitian extension X[n-k] = conj(X[k]),
		// keeping the real part. That drops the imaginary parts of the zero
		// (and, for even n, the n/2) frequency, as every C2R transform does.
		half := last/2 + 1
		return func(out []byte, ins [][]byte) {
			x := view[complex64](ins[0])
			buf := make([]complex128, len(x))
			for i, v := range x {
				buf[i] = complex128(v)
			}
			for ax := r - nd; ax < r-1; ax++ {
				fftAxis(buf, inShape, ax, plans[inShape[ax]], true)
			}
			z := view[float32](out)
			lines := len(z) / last
			scale := 1 / total
			parallelFor(lines, max(1, grainMath/(4*last)), func(lo, hi int) {
				line := make([]complex128, last)
				scratch := make([]complex128, plans[last].scratchLen())
				for l := lo; l < hi; l++ {
					src := buf[l*half : (l+1)*half]
					for k := range line {
						if k < half {
							line[k] = src[k]
						} else {
							line[k] = cmplx.Conj(src[last-k])
						}
					}
					plans[last].inverse(line, scratch)
					for k, v := range line {
						z[l*last+k] = float32(real(v) * scale)
					}
				}
			})
		}, nil
	}
	return nil, fmt.Errorf("op fft: unknown kind %v", a.Kind)
}

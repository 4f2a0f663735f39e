package eval

import (
	"math/cmplx"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/philox"
)

// evalRng draws the numbers backend/ir/philox defines, one group after
// another.
func init() {
	register(func(in ir.Instr, a []Tensor, out Tensor) (Tensor, error) {
		err := evalRng(in, a[0], a[1], out) // fills out's elements
		return out, err
	}, ir.OpRng)
	register(func(in ir.Instr, a []Tensor, out Tensor) (Tensor, error) { evalFFT(in, a[0], out); return out, nil }, ir.OpFFT)
}

func evalRng(in ir.Instr, key, ctr, out Tensor) error {
	dist, err := philox.Of(in.Rng.Distribution, out.Type.DType)
	if err != nil {
		return err
	}
	c := philox.Counter{Lo: uint64(ctr.I[0]), Hi: uint64(ctr.I[1])}
	f := make([]float32, dist.Group)
	v := make([]int64, dist.Group)
	n := out.Type.Shape.Size()
	for g := 0; g*dist.Group < n; g++ {
		s := dist.Stream(uint64(key.I[0]), c, g)
		if dist.Floats != nil {
			dist.Floats(f, s)
		} else {
			dist.Ints(v, s)
		}
		for j := range dist.Group {
			k := g*dist.Group + j
			if k >= n {
				break
			}
			if dist.Floats != nil {
				out.Set(k, float64(f[j]))
			} else {
				out.I[k] = v[j]
			}
		}
	}
	return nil
}

// evalFFT is the discrete Fourier transform by its definition, summed in
// complex128 over the len(Length) innermost dims, one dim after another:
// X[k] = sum_t x[t] e^(-2 pi i k t / n), the inverse with +i and 1/n. A real
// transform keeps the n/2+1 non-negative frequencies of its last dim; an
// inverse real one reads them as a Hermitian spectrum (the imaginary parts of
// frequency 0 and, for even n, n/2 are ignored, as a real signal has none).
func evalFFT(in ir.Instr, x, out Tensor) {
	a := in.FFT
	r, nd := x.Type.Shape.Rank(), len(a.Length)
	// work holds the signal as complex numbers in a shape that every pass
	// rewrites in place along one dim.
	shape := x.Type.Shape.Clone()
	work := make([]complex128, shape.Size())
	for k := range work {
		if x.C != nil {
			work[k] = x.C[k]
		} else {
			work[k] = complex(x.F[k], 0)
		}
	}
	switch a.Kind {
	case ir.FFTForward, ir.FFTInverse:
		for d := r - nd; d < r; d++ {
			work = dft(work, shape, d, a.Length[d-(r-nd)], a.Kind == ir.FFTInverse)
		}
	case ir.FFTReal:
		for d := r - nd; d < r; d++ {
			work = dft(work, shape, d, shape[d], false)
		}
		shape, work = keepLeading(work, shape, r-1, a.Length[nd-1]/2+1)
	case ir.FFTInverseReal:
		for d := r - nd; d < r-1; d++ {
			work = dft(work, shape, d, shape[d], true)
		}
		shape, work = hermitian(work, shape, a.Length[nd-1])
		work = dft(work, shape, r-1, shape[r-1], true)
	}
	for k := range out.Type.Shape.Size() {
		if out.C != nil {
			out.C[k] = roundC(work[k])
		} else {
			out.Set(k, real(work[k]))
		}
	}
}

// dft transforms every line of x along dim d (of length n).
func dft(x []complex128, shape ir.Shape, d, n int, inverse bool) []complex128 {
	out := make([]complex128, len(x))
	stride := shape.Strides()[d]
	line := make([]complex128, n)
	for k := range x {
		if (k/stride)%n != 0 {
			continue // one line per start
		}
		for t := range n {
			line[t] = x[k+t*stride]
		}
		for f := range n {
			var sum complex128
			for t, v := range line {
				// The angle is reduced mod n in integers, so large n keep
				// their precision.
				w := ir.UnitRoot(f*t%n, n)
				if inverse {
					w = cmplx.Conj(w)
				}
				sum += v * w
			}
			if inverse {
				sum /= complex(float64(n), 0)
			}
			out[k+f*stride] = sum
		}
	}
	return out
}

// keepLeading keeps the first m entries of the last dim.
func keepLeading(x []complex128, shape ir.Shape, d, m int) (ir.Shape, []complex128) {
	ns := shape.Clone()
	ns[d] = m
	out := make([]complex128, ns.Size())
	for k := range out {
		idx := Unravel(k, ns)
		out[k] = x[Ravel(idx, shape)]
	}
	return ns, out
}

// hermitian rebuilds the full last dim of length n from its n/2+1 leading
// frequencies: X[n-f] = conj(X[f]).
func hermitian(x []complex128, shape ir.Shape, n int) (ir.Shape, []complex128) {
	r := shape.Rank()
	ns := shape.Clone()
	ns[r-1] = n
	out := make([]complex128, ns.Size())
	for k := range out {
		idx := Unravel(k, ns)
		f := idx[r-1]
		conj := false
		if f > n/2 {
			f, conj = n-f, true
		}
		idx[r-1] = f
		v := x[Ravel(idx, shape)]
		if f == 0 || 2*f == n {
			v = complex(real(v), 0)
		}
		if conj {
			v = cmplx.Conj(v)
		}
		out[k] = v
	}
	return ns, out
}

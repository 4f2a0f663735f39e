package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

// FFTs over the 1, 2 or 3 innermost dims (fft_ops.cc), complex64 only. The
// real transforms take fft_length as a host input: each transformed input
// dim is cropped or zero-padded to it (to fft_length/2+1 for the last dim of
// IRFFT's complex input).

func init() {
	for n, suffix := range []string{"", "2D", "3D"} {
		rank := n + 1
		register(Kernel{Op: "FFT" + suffix, Constraints: []Constraint{{"Tcomplex", Complex}}, Inputs: []string{"input"},
			Lower: lowerFFT(ir.FFTForward, rank)})
		register(Kernel{Op: "IFFT" + suffix, Constraints: []Constraint{{"Tcomplex", Complex}}, Inputs: []string{"input"},
			Lower: lowerFFT(ir.FFTInverse, rank)})
		realCons := []Constraint{{"Treal", []ir.DType{ir.F32}}, {"Tcomplex", Complex}}
		register(Kernel{Op: "RFFT" + suffix, Constraints: realCons, Inputs: []string{"input", "fft_length"},
			HostInputs: []string{"fft_length"}, Lower: lowerFFT(ir.FFTReal, rank)})
		register(Kernel{Op: "IRFFT" + suffix, Constraints: realCons, Inputs: []string{"input", "fft_length"},
			HostInputs: []string{"fft_length"}, Lower: lowerFFT(ir.FFTInverseReal, rank)})
	}
}

func lowerFFT(kind ir.FFTKind, n int) func(c *Call) error {
	return func(c *Call) error {
		isReal := kind == ir.FFTReal || kind == ir.FFTInverseReal
		want := 1
		if isReal {
			want = 2
		}
		if err := c.arity(want); err != nil {
			return err
		}
		t := c.Type(0)
		r := t.Shape.Rank()
		in := ir.C64
		if kind == ir.FFTReal {
			in = ir.F32
		}
		if r < n || t.DType != in {
			return c.Errorf("input must be %v of rank at least %d, got %v", in, n, t)
		}
		b := c.B
		x := c.In[0]
		length := t.Shape[r-n:].Clone()
		out := t.Shape.Clone()
		outType := ir.C64
		if isReal {
			fl, err := c.hostInts(1, "fft_length")
			if err != nil {
				return err
			}
			if len(fl) != n {
				return c.Errorf("fft_length %v must have %d entries (input %v)", fl, n, t)
			}
			// The input extent each transformed dim must have.
			extent := make([]int, r)
			copy(extent, t.Shape)
			for i, l := range fl {
				if l < 0 {
					return c.Errorf("fft_length %v must not be negative (input %v)", fl, t)
				}
				length[i] = int(l)
				extent[r-n+i] = int(l)
				out[r-n+i] = int(l)
			}
			if kind == ir.FFTReal {
				out[r-1] = length[n-1]/2 + 1
			} else {
				extent[r-1] = length[n-1]/2 + 1
				outType = ir.F32
			}
			x = cropOrPad(b, x, extent)
		}
		if ir.Shape(length).Size() == 0 || t.Shape.Size() == 0 || out.Size() == 0 {
			c.Out = []ir.Value{zeros(b, ir.TensorType{DType: outType, Shape: out})}
			return nil
		}
		c.Out = []ir.Value{b.FFT(x, kind, length)}
		return nil
	}
}

// cropOrPad slices or zero-pads x at the end of each dim to the extent.
func cropOrPad(b *ir.Builder, x ir.Value, extent []int) ir.Value {
	t := b.Type(x)
	r := t.Shape.Rank()
	limit := make([]int, r)
	high := make([]int, r)
	crop, pad := false, false
	for i := range r {
		limit[i] = min(t.Shape[i], extent[i])
		high[i] = extent[i] - limit[i]
		crop = crop || limit[i] < t.Shape[i]
		pad = pad || high[i] > 0
	}
	if crop {
		x = b.Slice(x, make([]int, r), limit, filled(r, 1))
	}
	if pad {
		x = b.Pad(x, scalarZero(b, t.DType), make([]int, r), high, make([]int, r))
	}
	return x
}

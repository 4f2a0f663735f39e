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
	nd := []string{"input", "fft_length", "axes"}
	ndHost := []string{"fft_length", "axes"}
	register(Kernel{Op: "FFTND", Constraints: []Constraint{{"Tcomplex", Complex}}, Inputs: nd, HostInputs: ndHost,
		Lower: lowerFFTND(ir.FFTForward)})
	register(Kernel{Op: "IFFTND", Constraints: []Constraint{{"Tcomplex", Complex}}, Inputs: nd, HostInputs: ndHost,
		Lower: lowerFFTND(ir.FFTInverse)})
	realCons := []Constraint{{"Treal", []ir.DType{ir.F32}}, {"Tcomplex", Complex}}
	register(Kernel{Op: "RFFTND", Constraints: realCons, Inputs: nd, HostInputs: ndHost,
		Lower: lowerFFTND(ir.FFTReal)})
	register(Kernel{Op: "IRFFTND", Constraints: realCons, Inputs: nd, HostInputs: ndHost,
		Lower: lowerFFTND(ir.FFTInverseReal)})
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
		t, err := fftInput(c, kind, n)
		if err != nil {
			return err
		}
		r := t.Shape.Rank()
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

// lowerFFTND transforms over the given axes, each cropped or zero-padded to
// its fft_length (the last axis of IRFFTND's input to fft_length/2+1), as
// numpy's fftn, ifftn, rfftn and irfftn do: the axes move innermost (in
// the order given), the transform runs over them three at a time (the
// real one over the innermost, last for RFFTND and first for IRFFTND's
// inverse), and they move back.
func lowerFFTND(kind ir.FFTKind) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(3); err != nil {
			return err
		}
		t, err := fftInput(c, kind, 0)
		if err != nil {
			return err
		}
		r := t.Shape.Rank()
		fl, err := c.hostInts(1, "fft_length")
		if err != nil {
			return err
		}
		ax, err := c.hostInts(2, "axes")
		if err != nil {
			return err
		}
		if len(fl) != len(ax) {
			return c.Errorf("fft_length %v and axes %v must have one length (input %v)", fl, ax, t)
		}
		k := len(ax)
		b := c.B
		if k == 0 {
			if kind == ir.FFTReal || kind == ir.FFTInverseReal {
				return c.Errorf("needs at least one axis (input %v)", t)
			}
			c.Out = []ir.Value{b.Select(b.Full(ir.TensorType{DType: ir.Bool, Shape: t.Shape}, 1), c.In[0], c.In[0])}
			return nil
		}
		axes := make([]int, k)
		seen := make([]bool, r)
		extent := t.Shape.Clone()
		out := t.Shape.Clone()
		length := make([]int, k)
		for i, a := range ax {
			n, err := c.axis(a, r, "axis")
			if err != nil {
				return err
			}
			if seen[n] {
				return c.Errorf("axis %d appears twice in axes %v (input %v)", n, ax, t)
			}
			if fl[i] < 0 || fl[i] > 1<<30 {
				return c.Errorf("fft_length %v must not be negative (input %v)", fl, t)
			}
			seen[n] = true
			axes[i] = n
			length[i] = int(fl[i])
			extent[n], out[n] = length[i], length[i]
		}
		last := axes[k-1]
		outType := ir.C64
		switch kind {
		case ir.FFTReal:
			out[last] = length[k-1]/2 + 1
		case ir.FFTInverseReal:
			extent[last] = length[k-1]/2 + 1
			outType = ir.F32
		}
		if ir.Shape(length).Size() == 0 || t.Shape.Size() == 0 || out.Size() == 0 {
			c.Out = []ir.Value{zeros(b, ir.TensorType{DType: outType, Shape: out})}
			return nil
		}
		x := cropOrPad(b, c.In[0], extent)
		// perm: the other dims, then the axes in order.
		var perm []int
		for i := range r {
			if !seen[i] {
				perm = append(perm, i)
			}
		}
		batch := len(perm)
		perm = append(perm, axes...)
		x = b.Transpose(x, perm)
		// Transform over positions [lo, hi) of the k axes, which must be
		// innermost: bring them there, transform, and put them back.
		over := func(x ir.Value, lo, hi int, kind ir.FFTKind) ir.Value {
			if hi == k {
				return b.FFT(x, kind, length[lo:hi])
			}
			p := append(seq(batch), rangeInts(batch, batch+lo)...)
			p = append(p, rangeInts(batch+hi, batch+k)...)
			p = append(p, rangeInts(batch+lo, batch+hi)...)
			y := b.FFT(b.Transpose(x, p), kind, length[lo:hi])
			inv := make([]int, len(p))
			for i, q := range p {
				inv[q] = i
			}
			return b.Transpose(y, inv)
		}
		complexKind := kind
		switch kind {
		case ir.FFTReal:
			complexKind = ir.FFTForward
		case ir.FFTInverseReal:
			complexKind = ir.FFTInverse
		}
		first := max(k-3, 0)
		if kind == ir.FFTInverseReal {
			for hi := first; hi > 0; hi -= 3 {
				x = over(x, max(hi-3, 0), hi, complexKind)
			}
			x = over(x, first, k, kind)
		} else {
			x = over(x, first, k, kind)
			for hi := first; hi > 0; hi -= 3 {
				x = over(x, max(hi-3, 0), hi, complexKind)
			}
		}
		inv := make([]int, r)
		for i, q := range perm {
			inv[q] = i
		}
		c.Out = []ir.Value{b.Transpose(x, inv)}
		return nil
	}
}

// fftInput is the type of a transform's input, checked: float32 for a real
// forward transform, complex64 otherwise, of rank at least minRank.
func fftInput(c *Call, kind ir.FFTKind, minRank int) (ir.TensorType, error) {
	t := c.Type(0)
	in := ir.C64
	if kind == ir.FFTReal {
		in = ir.F32
	}
	switch {
	case t.DType != in && minRank == 0:
		return t, c.Errorf("input must be %v, got %v", in, t)
	case t.Shape.Rank() < minRank || t.DType != in:
		return t, c.Errorf("input must be %v of rank at least %d, got %v", in, minRank, t)
	}
	return t, nil
}

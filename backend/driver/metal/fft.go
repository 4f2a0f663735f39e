package metal

import (
	"encoding/binary"
	"math"
	"math/cmplx"
	"slices"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"

	"github.com/metalplug/metalplug/backend/ir"
)

func init() { registerLowering(lowerFFT, ir.OpFFT) }

// maxDFTMatrix bounds the elements of one DFT matrix (16 MiB of float32).
const maxDFTMatrix = 1 << 22

// lowerFFT computes each 1-D transform as a matrix product with the DFT
// matrix (its cosine and sine halves, float32 constants computed in float64
// on the host), on real and imaginary parts kept as separate float32
// tensors. MPSGraph's own FFT needs macOS 14 and complex data types, neither
// of which darwinkit v0.5.0 knows; the matrix form runs anywhere and is
// accurate, at O(n) work per output element, so transforms longer than
// 2048 run on the CPU. Like the host driver: a real transform works along
// the last axis first and complex ones along the others; an inverse real
// transform the other way round, with the Hermitian extension of the last
// axis, ignoring the imaginary parts of the zero and Nyquist frequencies.
func lowerFFT(l *lowering, in ir.Instr, args []val) (tensor, error) {
	a := in.FFT
	t := args[0].typ
	r := t.Shape.Rank()
	nd := len(a.Length)
	for _, n := range a.Length {
		if n*n > maxDFTMatrix {
			return tensor{}, fallback(in.Op, "length %d (DFT matrices beyond 2048 would be too large)", n)
		}
	}
	x := args[0].t
	shape := []int(t.Shape.Clone())
	var re, im tensor
	if t.DType == ir.C64 {
		re, im = l.complexParts(x, shape)
	}
	switch a.Kind {
	case ir.FFTForward, ir.FFTInverse:
		inv := a.Kind == ir.FFTInverse
		for ax := r - nd; ax < r; ax++ {
			re, im = l.dftAxis(re, im, shape, ax, inv)
		}
	case ir.FFTReal:
		last := shape[r-1]
		half := last/2 + 1
		c, s := dftMatrix(last, half, -1, 1, false)
		re = l.alongLast(x, shape, l.constMatrix(c, last, half))
		im = l.alongLast(x, shape, l.constMatrix(s, last, half))
		shape[r-1] = half
		// alongLast gives [rows, half]: back to the logical rank, which the
		// other axes' transforms permute (a rank-2 tensor given a rank-r
		// permutation asserts in MPSGraph and aborts the process).
		re, im = l.reshape(re, shape), l.reshape(im, shape)
		for ax := r - nd; ax < r-1; ax++ {
			re, im = l.dftAxis(re, im, shape, ax, false)
		}
	case ir.FFTInverseReal:
		for ax := r - nd; ax < r-1; ax++ {
			re, im = l.dftAxis(re, im, shape, ax, true)
		}
		n := a.Length[nd-1]
		half := shape[r-1]
		c, s := dftMatrix(half, n, 1, 1/float64(n), true)
		for i := range s {
			s[i] = -s[i] // y = Xr·C - Xi·S
		}
		y := l.add(l.alongLast(re, shape, l.constMatrix(c, half, n)), l.alongLast(im, shape, l.constMatrix(s, half, n)))
		shape[r-1] = n
		return l.reshape(y, shape), nil
	}
	return l.joinComplex(re, im, shape), nil
}

// complexParts splits a physical complex64 tensor [..., 2] into its real
// and imaginary parts, each of the logical shape.
func (l *lowering) complexParts(x tensor, shape []int) (re, im tensor) {
	ps := append(slices.Clone(shape), 2)
	r := len(ps)
	starts, ends := make([]int, r), slices.Clone(ps)
	ends[r-1] = 1
	re = l.reshape(l.slice(x, starts, ends, ones(r)), shape)
	starts[r-1], ends[r-1] = 1, 2
	im = l.reshape(l.slice(x, starts, ends, ones(r)), shape)
	return re, im
}

// joinComplex is the inverse of complexParts.
func (l *lowering) joinComplex(re, im tensor, shape []int) tensor {
	ps := append(slices.Clone(shape), 1)
	return l.concat([]tensor{l.reshape(re, ps), l.reshape(im, ps)}, len(shape))
}

// dftAxis transforms (re, im) along one axis: the axis is moved last, the
// tensor viewed as a matrix of rows, multiplied by the DFT matrix and put
// back.
func (l *lowering) dftAxis(re, im tensor, shape []int, ax int, inv bool) (tensor, tensor) {
	n := shape[ax]
	sign, scale := -1.0, 1.0
	if inv {
		sign, scale = 1, 1/float64(n)
	}
	c, s := dftMatrix(n, n, sign, scale, false)
	C, S := l.constMatrix(c, n, n), l.constMatrix(s, n, n)
	r := len(shape)
	perm := make([]int, 0, r)
	for d := range r {
		if d != ax {
			perm = append(perm, d)
		}
	}
	perm = append(perm, ax)
	moved := make([]int, r)
	for i, p := range perm {
		moved[i] = shape[p]
	}
	back := make([]int, r)
	for i, p := range perm {
		back[p] = i
	}
	tr := func(x tensor) tensor { return l.transpose(x, perm) }
	xr, xi := tr(re), tr(im)
	yr := l.sub(l.alongLast(xr, moved, C), l.alongLast(xi, moved, S))
	yi := l.add(l.alongLast(xr, moved, S), l.alongLast(xi, moved, C))
	yr, yi = l.reshape(yr, moved), l.reshape(yi, moved)
	return l.transpose(yr, back), l.transpose(yi, back)
}

// alongLast multiplies the rows of x (the last axis of shape) by the matrix
// m [len, k], giving [rows, k].
func (l *lowering) alongLast(x tensor, shape []int, m tensor) tensor {
	last := shape[len(shape)-1]
	rows := ir.Shape(shape).Size() / last
	return l.matmul(l.reshape(x, []int{rows, last}), m)
}

// dftMatrix is cos and sin of sign·2π·j·k/n for j < rows (input index) and
// k < cols (output index), times scale; n is the transform length, the
// larger of the two. hermitian weights input frequency j by 2 when its
// conjugate twin is implied (the inverse real transform's extension).
func dftMatrix(rows, cols int, sign, scale float64, hermitian bool) (c, s []float64) {
	n := max(rows, cols)
	c, s = make([]float64, rows*cols), make([]float64, rows*cols)
	for j := range rows {
		w := scale
		if hermitian && j != 0 && !(n%2 == 0 && j == n/2) {
			w *= 2
		}
		for k := range cols {
			// exact argument reduction; exact at the quarter turns, so a
			// real signal's Nyquist term has no imaginary part
			z := ir.UnitRoot(j*k%n, n)
			if sign > 0 {
				z = cmplx.Conj(z)
			}
			c[j*cols+k], s[j*cols+k] = w*real(z), w*imag(z)
		}
	}
	return c, s
}

func (l *lowering) constMatrix(v []float64, rows, cols int) tensor {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(x)))
	}
	return l.constBytes(b, []int{rows, cols}, gpu.Float32)
}

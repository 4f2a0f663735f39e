package ir

import (
	"math"
	"slices"
)

// Random numbers and Fourier transforms.

// randomFFTOps draw Philox numbers and transform to and from frequencies.
var randomFFTOps = opDefs{
	{OpRng, OpInfo{Name: "rng", Arity: 2, Attrs: []string{"Rng"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if in.Rng == nil {
			return 0, missing("rng attributes")
		}
		return b.Rng(a[0], a[1], in.Rng.Distribution, in.Type), nil
	}}}, // Args key I64[1], counter I64[2]: Philox4x32-10 numbers, Instr.Rng
	{OpFFT, OpInfo{Name: "fft", Arity: 1, Attrs: []string{"FFT"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if in.FFT == nil {
			return 0, missing("fft attributes")
		}
		return b.FFT(a[0], in.FFT.Kind, in.FFT.Length), nil
	}}}, // Instr.FFT over the innermost dims
}

// RngDistribution is what OpRng draws.
type RngDistribution uint8

const (
	RngUniform         RngDistribution = iota + 1 // floats in [0,1); integers over their whole range
	RngNormal                                     // standard normal
	RngTruncatedNormal                            // standard normal, redrawn outside (-2, 2)
)

func (d RngDistribution) String() string {
	return [...]string{"invalid", "uniform", "normal", "truncated_normal"}[min(int(d), 3)]
}

// RngAttrs describe OpRng. The numbers follow TensorFlow's Philox4x32-10
// kernels for the same key and counter, so stateless ops agree with its CPU.
type RngAttrs struct {
	Distribution RngDistribution
}

// FFTKind is the transform OpFFT computes.
type FFTKind uint8

const (
	FFTForward     FFTKind = iota + 1 // complex64 -> complex64
	FFTInverse                        // complex64 -> complex64, scaled by 1/n
	FFTReal                           // float32 -> complex64, the non-negative frequencies (n/2+1)
	FFTInverseReal                    // complex64 -> float32, of Length
)

func (k FFTKind) String() string {
	return [...]string{"invalid", "fft", "ifft", "rfft", "irfft"}[min(int(k), 4)]
}

// FFTAttrs describe OpFFT over the len(Length) innermost dims.
type FFTAttrs struct {
	Kind   FFTKind
	Length []int
}

// Rng draws numbers of type t from Philox4x32-10 with the given key (I64[1])
// and counter (I64[2]), whose bits are TensorFlow's uint64 key and counter.
func (b *Builder) Rng(key, counter Value, dist RngDistribution, t TensorType) Value {
	tk, tc := b.Type(key), b.Type(counter)
	if tk.DType != I64 || !tk.Shape.Equal(Shape{1}) || tc.DType != I64 || !tc.Shape.Equal(Shape{2}) {
		return b.fail(OpRng, "key %v must be int64[1] and counter %v int64[2]", tk, tc)
	}
	switch {
	case dist == RngUniform && (t.DType.IsFloat() && t.DType != F64 || t.DType == I32 || t.DType == I64):
	case (dist == RngNormal || dist == RngTruncatedNormal) && t.DType.IsFloat() && t.DType != F64:
	default:
		return b.fail(OpRng, "%v numbers of type %v are not defined", dist, t)
	}
	return b.emit(Instr{Op: OpRng, Args: []Value{key, counter}, Type: TensorType{t.DType, t.Shape.Clone()}, Rng: &RngAttrs{dist}})
}

// FFT transforms the len(length) innermost dims of x.
func (b *Builder) FFT(x Value, kind FFTKind, length []int) Value {
	t := b.Type(x)
	r, n := t.Shape.Rank(), len(length)
	if n < 1 || n > 3 || n > r {
		return b.fail(OpFFT, "%v over %d dims of %v: 1 to 3 dims, at most the rank", kind, n, t)
	}
	inner := t.Shape[r-n:]
	out := t.Shape.Clone()
	want := slices.Clone(length)
	var in, res DType
	switch kind {
	case FFTForward, FFTInverse:
		in, res = C64, C64
	case FFTReal:
		in, res = F32, C64
		out[r-1] = length[n-1]/2 + 1
	case FFTInverseReal:
		in, res = C64, F32
		want[n-1] = length[n-1]/2 + 1
		copy(out[r-n:], length)
	default:
		return b.fail(OpFFT, "unknown kind %v", kind)
	}
	if t.DType != in || !Shape(want).Equal(inner) {
		return b.fail(OpFFT, "%v of length %v needs %v with inner dims %v, got %v", kind, length, in, Shape(want), t)
	}
	for _, l := range length {
		if l < 1 {
			return b.fail(OpFFT, "length %v must be positive", length)
		}
	}
	return b.emit(Instr{Op: OpFFT, Args: []Value{x}, Type: TensorType{res, out}, FFT: &FFTAttrs{kind, slices.Clone(length)}})
}

// UnitRoot is exp(-2πik/n), the twiddle factor of OpFFT's transforms of
// length n, exact at the quarter turns (1, -i, -1, i): a transform then
// keeps the zeros it must have, such as the imaginary part of a real
// signal's Nyquist term, which sin(π) computed in floating point is not.
func UnitRoot(k, n int) complex128 {
	k %= n
	if k < 0 {
		k += n
	}
	switch {
	case k == 0:
		return 1
	case 2*k == n:
		return -1
	case 4*k == n:
		return -1i
	case 4*k == 3*n:
		return 1i
	}
	s, c := math.Sincos(-2 * math.Pi * float64(k) / float64(n))
	return complex(c, s)
}

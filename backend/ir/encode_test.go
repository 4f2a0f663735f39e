package ir

import (
	"math"
	"testing"
)

// TestHalfRoundTrip checks float32 -> float16 -> float32 against a reference
// that picks the nearest half by exhaustive search over all finite halves.
func TestHalfRoundTrip(t *testing.T) {
	halves := make([]float64, 0, 1<<16)
	for h := 0; h < 1<<16; h++ {
		if f := F16ToF32(uint16(h)); !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) && h&0x8000 == 0 {
			halves = append(halves, float64(f))
		}
	}
	nearest := func(x float64) float64 {
		best := halves[0]
		for _, h := range halves {
			if math.Abs(h-x) < math.Abs(best-x) || (math.Abs(h-x) == math.Abs(best-x) && evenHalf(h)) {
				best = h
			}
		}
		return best
	}
	for _, x := range []float64{0, 1, 1.5, 65504, 1e-8, math.Ldexp(1.5, -25), math.Ldexp(1, -25), math.Ldexp(1, -24), 0.1, 3.14159, 2047.5, 2049} {
		got := float64(F16ToF32(F32ToF16(float32(x))))
		if want := nearest(float64(float32(x))); got != want {
			t.Errorf("%g -> %g, want %g", x, got, want)
		}
	}
	if F16ToF32(F32ToF16(1e6)) != float32(math.Inf(1)) {
		t.Error("overflow does not give +inf")
	}
}

func evenHalf(h float64) bool { return F32ToF16(float32(h))&1 == 0 }

func TestBFloat16(t *testing.T) {
	for x, want := range map[float32]float32{1: 1, 1.00390625: 1, 1.01171875: 1.015625, -2.5: -2.5} {
		if got := BF16ToF32(F32ToBF16(x)); got != want {
			t.Errorf("%g -> %g, want %g", x, got, want)
		}
	}
}

func TestBuilderErrorsNameOpAndTypes(t *testing.T) {
	b := NewBuilder()
	x := b.Parameter(TensorType{F32, Shape{2, 3}})
	y := b.Parameter(TensorType{F32, Shape{3, 2}})
	b.Binary(OpAdd, x, y)
	if _, err := b.Build(x); err == nil || err.Error() != "ir: add: operand types differ: float32[2,3] and float32[3,2]" {
		t.Fatalf("error = %v", err)
	}
}

package host

import "math"

// float32 exp, tanh and logistic dominate softmax, sigmoid and GELU, and
// math.Exp costs ~16ns an element on the machines we measured; exp32 costs
// ~6ns. They evaluate in float64, accurate to ~1e-12 relative before the one
// rounding to float32, so the result is the correctly rounded float32 except
// on rare near-ties (then 1 ulp off). float64 kernels keep package math.

const (
	log2eTimes32 = 32 * 1.4426950408889634
	ln2Hi32      = 0.6931471803691238 / 32     // ln2/32 with low bits clear, so k*ln2Hi32 is exact
	ln2Lo32      = 1.9082149292705877e-10 / 32 // the rest of ln2/32
)

// exp2Table[j] is 2^(j/32).
var exp2Table = func() (t [32]float64) {
	for j := range t {
		t[j] = math.Exp2(float64(j) / 32)
	}
	return t
}()

// expm1Parts splits exp(x) = s * (1 + q) for |x| <= 300, with s = 2^(k/32)
// from a table and q = expm1(r), |r| <= ln2/64, from a degree-4 Taylor
// polynomial (the first omitted term is under 2e-12 relative). The short
// polynomial, not its accuracy, is what makes this several times cheaper
// than math.Exp.
func expm1Parts(x float64) (s, q float64) {
	kf := math.Floor(x*log2eTimes32 + 0.5)
	r := (x - kf*ln2Hi32) - kf*ln2Lo32
	q = r * (1 + r*(1.0/2+r*(1.0/6+r*(1.0/24))))
	k := int(kf)
	return exp2Table[k&31] * math.Float64frombits(uint64((k>>5)+1023)<<52), q
}

func exp32(x float32) float32 {
	switch {
	case x != x:
		return x
	case x > 89: // above float32's largest result
		return float32(math.Inf(1))
	case x < -104: // below half its smallest subnormal
		return 0
	}
	s, q := expm1Parts(float64(x))
	return float32(s + s*q)
}

// tanh32 uses tanh(x) = expm1(2x) / (expm1(2x) + 2), which keeps full
// relative accuracy near zero, where 1 - 2/(exp(2x)+1) would cancel.
func tanh32(x float32) float32 {
	switch {
	case x != x:
		return x
	case x > 10: // tanh rounds to 1 in float32 from about 9.01
		return 1
	case x < -10:
		return -1
	}
	s, q := expm1Parts(2 * float64(x))
	e := q // exact scale 1 near zero, where s*q + (s-1) would round
	if s != 1 {
		e = s*q + (s - 1)
	}
	return float32(e / (e + 2))
}

func logistic32(x float32) float32 {
	switch {
	case x != x:
		return x
	case x > 40: // 1 - 1e-17 rounds to 1
		return 1
	case x < -110: // below float32's smallest subnormal
		return 0
	}
	s, q := expm1Parts(-float64(x))
	return float32(1 / (1 + s + s*q))
}

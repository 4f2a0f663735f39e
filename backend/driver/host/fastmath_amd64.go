package host

import "github.com/metalplug/metalplug/backend/ir"

// tanhConsts are ln2Hi32 and ln2Lo32 in four lanes each, for the assembly.
var tanhConsts = [8]float64{ln2Hi32, ln2Hi32, ln2Hi32, ln2Hi32, ln2Lo32, ln2Lo32, ln2Lo32, ln2Lo32}

//go:noescape
func tanhF32AVX2(dst, src *float32, n int, c *[8]float64)

// tanhSlice computes z[i] = tanh32(x[i]), with the AVX2 kernel when the
// machine has it.
func tanhSlice(z, x []float32) {
	x = x[:len(z)]
	n := 0
	if haveFMA && len(z) >= 4 {
		n = len(z) &^ 3
		tanhF32AVX2(&z[0], &x[0], n, &tanhConsts)
	}
	for i := n; i < len(z); i++ {
		z[i] = tanh32(x[i])
	}
}

//go:noescape
func sumF32AVX2(x *float32, n int) float32

// sumF32 is the float32 sum the reductions use, in AVX2 when the machine
// has it.
func sumF32(x []float32) float32 {
	if !haveFMA || len(x) < 64 {
		return fold(ir.ReduceSum, 0, x)
	}
	n := len(x) &^ 31
	return sumF32AVX2(&x[0], n) + fold(ir.ReduceSum, 0, x[n:])
}

package stablehlo

import (
	"math/rand"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

// TestIntConvolutionIsExact: integer convolutions (jax's lax_test and
// lax_numpy_test run int8 to int32 and unsigned ones) go through float64
// convolutions, exactly and with XLA's wrapping: against a plain loop in
// wrapping integer arithmetic, for 8-bit operands and for 32-bit ones
// across their whole range.
func TestIntConvolutionIsExact(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	const n, w, c, kw, o = 2, 9, 3, 3, 2
	for _, d := range []ir.DType{ir.I8, ir.U8, ir.I16, ir.I32, ir.U32} {
		xt, kt := ir.TensorType{DType: d, Shape: ir.Shape{n, w, c}}, ir.TensorType{DType: d, Shape: ir.Shape{kw, c, o}}
		b := ir.NewBuilder()
		xp, kp := b.Parameter(xt), b.Parameter(kt)
		a := ir.ConvAttrs{Strides: []int{1}, Padding: [][2]int{{1, 1}}, LhsDilation: []int{1}, RhsDilation: []int{1}, FeatureGroups: 1}
		p, err := b.Build(intConvolution(b, xp, kp, func(p, q ir.Value) ir.Value { return b.Convolution(p, q, a) }))
		if err != nil {
			t.Fatalf("%v: %v", d, err)
		}
		bits := uint(8 * d.Size())
		wrap := func(v int64) int64 { // to d's range, as XLA's integer arithmetic
			u := uint64(v) & (1<<bits - 1)
			if !d.IsUnsigned() && u >= 1<<(bits-1) {
				return int64(u) - 1<<bits
			}
			return int64(u)
		}
		x, k := eval.New(xt), eval.New(kt)
		for i := range x.I {
			x.I[i] = wrap(int64(r.Uint64()))
		}
		for i := range k.I {
			k.I[i] = wrap(int64(r.Uint64()))
		}
		got, err := eval.Run(p, []eval.Tensor{x, k})
		if err != nil {
			t.Fatalf("%v: %v", d, err)
		}
		for b := range n {
			for i := range w {
				for oc := range o {
					var s int64
					for j := range kw {
						at := i + j - 1
						if at < 0 || at >= w {
							continue
						}
						for ic := range c {
							s += x.I[(b*w+at)*c+ic] * k.I[(j*c+ic)*o+oc] // wraps in int64 as XLA's in d
						}
					}
					if g := got[0].I[(b*w+i)*o+oc]; g != wrap(s) {
						t.Fatalf("%v at [%d %d %d]: got %d, want %d", d, b, i, oc, g, wrap(s))
					}
				}
			}
		}
	}
}

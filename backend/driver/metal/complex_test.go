package metal

import (
	"testing"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
	"github.com/metalplug/metalplug/backend/ir"
)

// TestComplexPartsStayOnTheGPU: taking complex numbers apart, computing on
// the parts and putting them together (a conjugate, a product) lowers
// whole, on the oldest release as on the newest: no instruction is left
// for the CPU.
func TestComplexPartsStayOnTheGPU(t *testing.T) {
	b := ir.NewBuilder()
	c64 := ir.TensorType{DType: ir.C64, Shape: ir.Shape{4, 3}}
	x, y := b.Parameter(c64), b.Parameter(c64)
	a, bi, c, d := b.Real(x), b.Imag(x), b.Real(y), b.Imag(y)
	conj := b.Complex(a, b.Unary(ir.OpNeg, bi))
	re := b.Binary(ir.OpSub, b.Binary(ir.OpMul, a, c), b.Binary(ir.OpMul, bi, d))
	im := b.Binary(ir.OpAdd, b.Binary(ir.OpMul, a, d), b.Binary(ir.OpMul, bi, c))
	p, err := b.Build(conj, b.Complex(re, im), b.Imag(b.Reshape(x, ir.Shape{12})))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []gpu.Version{MinimumMacOS, {Major: 15, Minor: 0}} {
		d, err := OpenModel(ModelOptions{MacOS: v})
		if err != nil {
			t.Fatal(err)
		}
		places, err := d.Place(p)
		if err != nil {
			t.Fatalf("%v: %v", v, err)
		}
		for i, pl := range places {
			if pl != nil {
				t.Errorf("%v: instruction %d (%s) leaves the GPU: %v", v, i, p.Instrs[i].Op, pl)
			}
		}
	}
}

package lower

import (
	"math"

	"github.com/metalplug/metalplug/backend/ir"
)

const fileNextAfter = "plugin/tf/lower/nextafter.go"

func init() {
	register(Kernel{Op: "NextAfter", Constraints: T([]ir.DType{ir.F32}), Inputs: []string{"x1", "x2"}, File: fileNextAfter,
		Lower: lowerBinary(nextAfter)})
}

// nextAfter is std::nextafter on float32: the next float after x toward
// y, by one step of the bits (a float's bits, as an integer, count its
// magnitude up from zero on either side), y where they are equal, the
// smallest subnormal of y's sign after zero, and NaN where either is NaN.
func nextAfter(c *Call, x, y ir.Value) ir.Value {
	b := c.B
	t := b.Type(x)
	bits := b.BitcastConvert(x, ir.I32)
	one := b.Full(ir.TensorType{DType: ir.I32, Shape: t.Shape}, 1)
	// Away from zero (bits + 1) where y lies beyond x on x's side of zero.
	away := b.Binary(ir.OpXor, b.Compare(ir.CmpLT, x, y), b.Compare(ir.CmpLT, x, b.Full(t, 0)))
	step := b.BitcastConvert(b.Select(away, b.Binary(ir.OpAdd, bits, one), b.Binary(ir.OpSub, bits, one)), ir.F32)
	tiny := b.Full(t, float64(math.SmallestNonzeroFloat32))
	fromZero := b.Select(b.Compare(ir.CmpLT, y, b.Full(t, 0)), b.Unary(ir.OpNeg, tiny), tiny)
	out := b.Select(b.Compare(ir.CmpEQ, x, b.Full(t, 0)), fromZero, step)
	out = b.Select(b.Compare(ir.CmpEQ, x, y), y, out)
	nan := b.Binary(ir.OpOr, b.Compare(ir.CmpNE, x, x), b.Compare(ir.CmpNE, y, y))
	return b.Select(nan, b.Full(t, math.NaN()), out)
}

package lower

import (
	"math"

	"github.com/metalplug/metalplug/backend/ir"
)

// Complex numbers, complex64 only: building one from its parts, taking it
// apart (Real, Imag, Angle, ComplexAbs), Conj and ConjugateTranspose
// (cwise_op_complex.cc, cwise_op_real.cc, cwise_op_imag.cc,
// cwise_op_arg.cc, cwise_op_abs.cc, transpose_op.cc).
//
// The IR's real, imag and complex move the parts exactly, signed zeros and
// NaN payloads included; the IR has no other arithmetic on complex64.

const fileComplex = "plugin/tf/lower/complex.go"

func init() {
	parts := []Constraint{{"T", Complex}, {"Tout", []ir.DType{ir.F32}}}
	part := func(name, input string, f func(c *Call, re, im ir.Value) ir.Value) {
		register(Kernel{Op: name, Constraints: parts, Inputs: []string{input}, File: fileComplex,
			Lower: func(c *Call) error {
				if err := c.arity(1); err != nil {
					return err
				}
				if t := c.Type(0); t.DType != ir.C64 {
					return c.Errorf("%s must be complex64, got %v", input, t)
				}
				re, im := c.B.Real(c.In[0]), c.B.Imag(c.In[0])
				c.Out = []ir.Value{f(c, re, im)}
				return nil
			}})
	}
	part("Real", "input", func(c *Call, re, im ir.Value) ir.Value { return re })
	part("Imag", "input", func(c *Call, re, im ir.Value) ir.Value { return im })
	// Angle is atan2(imag, real), quadrants and signed zeros as C's carg.
	part("Angle", "input", func(c *Call, re, im ir.Value) ir.Value { return atan2(c, im, re) })
	part("ComplexAbs", "x", func(c *Call, re, im ir.Value) ir.Value { return hypot(c, re, im) })
	register(Kernel{Op: "Complex", Constraints: []Constraint{{"T", []ir.DType{ir.F32}}, {"Tout", Complex}},
		Inputs: []string{"real", "imag"}, File: fileComplex, Lower: lowerComplex})
	register(Kernel{Op: "Conj", Constraints: T(Complex), Inputs: []string{"input"}, File: fileComplex,
		Lower: func(c *Call) error {
			if err := c.arity(1); err != nil {
				return err
			}
			if t := c.Type(0); t.DType != ir.C64 {
				return c.Errorf("input must be complex64, got %v", t)
			}
			c.Out = []ir.Value{conj(c.B, c.In[0])}
			return nil
		}})
	// ConjugateTranspose is Transpose for every real dtype, and conjugates
	// complex64 as it moves it.
	register(Kernel{Op: "ConjugateTranspose", Constraints: T(append(append([]ir.DType(nil), All...), ir.C64)),
		Inputs: []string{"x", "perm"}, HostInputs: []string{"perm"}, HostInputIndex: []int{1}, File: fileComplex,
		Lower: func(c *Call) error {
			if err := lowerTranspose(c); err != nil {
				return err
			}
			if c.B.Type(c.Out[0]).DType == ir.C64 {
				c.Out[0] = conj(c.B, c.Out[0])
			}
			return nil
		}})
}

// conj negates the imaginary part: negate flips the sign bit (ir.OpNeg),
// so NaN and zero imaginary parts keep their payloads and change sign, as
// TensorFlow's CPU conj does.
func conj(b *ir.Builder, x ir.Value) ir.Value {
	return b.Complex(b.Real(x), b.Unary(ir.OpNeg, b.Imag(x)))
}

// lowerComplex joins real and imaginary parts, broadcasting them as numpy
// does (cwise_op_complex.cc is a broadcasting binary op).
func lowerComplex(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	if c.Type(0).DType != ir.F32 || c.Type(1).DType != ir.F32 {
		return c.Errorf("real and imag must be float32, got %s", c.Inputs())
	}
	re, im, err := broadcastPair(c, c.In[0], c.In[1])
	if err != nil {
		return err
	}
	c.Out = []ir.Value{c.B.Complex(re, im)}
	return nil
}

// hypot is sqrt(x^2 + y^2) without overflow or underflow on the way: the
// larger magnitude times sqrt(1 + (smaller/larger)^2); +inf if either is
// infinite (even against NaN, as C's hypot), NaN if either is NaN
// otherwise, 0 for two zeros.
func hypot(c *Call, x, y ir.Value) ir.Value {
	b := c.B
	ax, ay := b.Unary(ir.OpAbs, x), b.Unary(ir.OpAbs, y)
	hi, lo := b.Binary(ir.OpMax, ax, ay), b.Binary(ir.OpMin, ax, ay)
	zero, inf := like(b, x, 0), like(b, x, math.Inf(1))
	q := b.Binary(ir.OpDiv, lo, hi)
	q = b.Select(b.Compare(ir.CmpEQ, hi, zero), zero, q)
	r := b.Binary(ir.OpMul, hi, b.Unary(ir.OpSqrt, b.Binary(ir.OpAdd, like(b, x, 1), b.Binary(ir.OpMul, q, q))))
	nan := b.Binary(ir.OpOr, b.Compare(ir.CmpNE, x, x), b.Compare(ir.CmpNE, y, y))
	r = b.Select(nan, like(b, x, math.NaN()), r)
	anyInf := b.Binary(ir.OpOr, b.Compare(ir.CmpEQ, ax, inf), b.Compare(ir.CmpEQ, ay, inf))
	return b.Select(anyInf, inf, r)
}

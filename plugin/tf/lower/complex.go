package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/compose"
)

// Complex numbers, complex64 only: building one from its parts, taking it
// apart (Real, Imag, Angle, ComplexAbs), Conj and ConjugateTranspose
// (cwise_op_complex.cc, cwise_op_real.cc, cwise_op_imag.cc,
// cwise_op_arg.cc, cwise_op_abs.cc, transpose_op.cc).
//
// The IR's real, imag and complex move the parts exactly, signed zeros and
// NaN payloads included; the IR has no other arithmetic on complex64.

func init() {
	parts := []Constraint{{"T", Complex}, {"Tout", []ir.DType{ir.F32}}}
	part := func(name, input string, f func(c *Call, re, im ir.Value) ir.Value) {
		register(Kernel{Op: name, Constraints: parts, Inputs: []string{input},
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
	part("ComplexAbs", "x", func(c *Call, re, im ir.Value) ir.Value { return compose.Hypot(c.B, re, im) })
	register(Kernel{Op: "Complex", Constraints: []Constraint{{"T", []ir.DType{ir.F32}}, {"Tout", Complex}},
		Inputs: []string{"real", "imag"}, Lower: lowerComplex})
	register(Kernel{Op: "Conj", Constraints: T(Complex), Inputs: []string{"input"},
		Lower: func(c *Call) error {
			if err := c.arity(1); err != nil {
				return err
			}
			if t := c.Type(0); t.DType != ir.C64 {
				return c.Errorf("input must be complex64, got %v", t)
			}
			c.Out = []ir.Value{compose.Conj(c.B, c.In[0])}
			return nil
		}})
	// ConjugateTranspose is Transpose for every real dtype, and conjugates
	// complex64 as it moves it.
	register(Kernel{Op: "ConjugateTranspose", Constraints: T(append(append([]ir.DType(nil), All...), ir.C64)),
		Inputs: []string{"x", "perm"}, HostInputs: []string{"perm"},
		Lower: func(c *Call) error {
			if err := lowerTranspose(c); err != nil {
				return err
			}
			if c.B.Type(c.Out[0]).DType == ir.C64 {
				c.Out[0] = compose.Conj(c.B, c.Out[0])
			}
			return nil
		}})
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

package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/compose"
)

// Comparisons, logical ops, Select, SelectV2 and Cast.

func init() {
	cmp := func(name string, types []ir.DType, dir ir.CompareDir, attrs []AttrSpec) {
		register(Kernel{Op: name, Constraints: T(types), Inputs: []string{"x", "y"}, Attrs: attrs,
			Lower: lowerCompare(dir)})
	}
	// Equal and NotEqual: incompatible_shape_error=false turns unbroadcastable
	// shapes into a scalar false (Equal) or true (NotEqual); see BinaryOp in
	// tensorflow/core/kernels/cwise_ops_common.h.
	eqAttrs := []AttrSpec{{Name: "incompatible_shape_error", Kind: AttrBool, Optional: true}}
	// complex64 compares both parts (compose.ComplexCompare).
	cmp("Equal", withComplex(All), ir.CmpEQ, eqAttrs)
	cmp("NotEqual", withComplex(All), ir.CmpNE, eqAttrs)
	cmp("Less", Numeric, ir.CmpLT, nil)
	cmp("LessEqual", Numeric, ir.CmpLE, nil)
	cmp("Greater", Numeric, ir.CmpGT, nil)
	cmp("GreaterEqual", Numeric, ir.CmpGE, nil)

	// The logical ops have no type attribute: their inputs are bool.
	register(Kernel{Op: "LogicalAnd", Inputs: []string{"x", "y"}, Lower: lowerLogical(ir.OpAnd)})
	register(Kernel{Op: "LogicalOr", Inputs: []string{"x", "y"}, Lower: lowerLogical(ir.OpOr)})
	register(Kernel{Op: "LogicalNot", Inputs: []string{"x"}, Lower: func(c *Call) error {
		if err := c.arity(1); err != nil {
			return err
		}
		if c.Type(0).DType != ir.Bool {
			return c.Errorf("x must be bool, got %v", c.Type(0))
		}
		c.Out = []ir.Value{c.B.Unary(ir.OpNot, c.In[0])}
		return nil
	}})

	register(Kernel{Op: "Select", Constraints: T(All), Inputs: []string{"condition", "t", "e"}, Lower: lowerSelect})
	register(Kernel{Op: "SelectV2", Constraints: T(All), Inputs: []string{"condition", "t", "e"}, Lower: lowerSelectV2})

	register(Kernel{Op: "Cast", Inputs: []string{"x"},
		Constraints: []Constraint{{"SrcT", All}, {"DstT", All}},
		Attrs:       []AttrSpec{{Name: "DstT", Kind: AttrType}, {Name: "Truncate", Kind: AttrBool, Optional: true}},
		Lower:       lowerCast})
}

func lowerCompare(dir ir.CompareDir) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(2); err != nil {
			return err
		}
		if err := c.sameDType(0, 1); err != nil {
			return err
		}
		if _, ok := ir.BroadcastShapes(c.Type(0).Shape, c.Type(1).Shape); !ok && !c.Attrs.BoolOr("incompatible_shape_error", true) &&
			(dir == ir.CmpEQ || dir == ir.CmpNE) {
			c.Out = []ir.Value{c.B.Scalar(ir.Bool, boolFloat(dir == ir.CmpNE))}
			return nil
		}
		x, y, err := broadcastPair(c, c.In[0], c.In[1])
		if err != nil {
			return err
		}
		if c.B.Type(x).DType == ir.C64 {
			c.Out = []ir.Value{compose.ComplexCompare(c.B, dir, x, y)}
			return nil
		}
		c.Out = []ir.Value{c.B.Compare(dir, x, y)}
		return nil
	}
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func lowerLogical(op ir.Op) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(2); err != nil {
			return err
		}
		if c.Type(0).DType != ir.Bool || c.Type(1).DType != ir.Bool {
			return c.Errorf("inputs must be bool, got %v and %v", c.Type(0), c.Type(1))
		}
		x, y, err := broadcastPair(c, c.In[0], c.In[1])
		if err != nil {
			return err
		}
		c.Out = []ir.Value{c.B.Binary(op, x, y)}
		return nil
	}
}

// lowerSelect is the old Select: condition is a scalar, a vector matching the
// first dimension of t and e, or of their shape (SelectOp in
// tensorflow/core/kernels/cwise_op_select.cc).
func lowerSelect(c *Call) error {
	if err := c.arity(3); err != nil {
		return err
	}
	tc, tt, te := c.Type(0), c.Type(1), c.Type(2)
	if tc.DType != ir.Bool || tt.DType != te.DType || !tt.Shape.Equal(te.Shape) {
		return c.Errorf("condition must be bool and t, e of one type: condition %v, t %v, e %v", tc, tt, te)
	}
	cond := c.In[0]
	switch {
	case tc.Shape.Equal(tt.Shape):
	case tc.Shape.Rank() == 0:
		cond = c.B.BroadcastInDim(cond, tt.Shape, []int{})
	case tc.Shape.Rank() == 1 && tt.Shape.Rank() >= 1 && tc.Shape[0] == tt.Shape[0]:
		cond = c.B.BroadcastInDim(cond, tt.Shape, []int{0})
	default:
		return c.Errorf("condition %v must be a scalar, a vector of the first dimension of t, or of t's shape; t is %v", tc, tt)
	}
	c.Out = []ir.Value{c.B.Select(cond, c.In[1], c.In[2])}
	return nil
}

// lowerSelectV2 broadcasts condition, t and e together, numpy-style.
func lowerSelectV2(c *Call) error {
	if err := c.arity(3); err != nil {
		return err
	}
	tc, tt, te := c.Type(0), c.Type(1), c.Type(2)
	if tc.DType != ir.Bool || tt.DType != te.DType {
		return c.Errorf("condition must be bool and t, e of one dtype: condition %v, t %v, e %v", tc, tt, te)
	}
	s, ok := ir.BroadcastShapes(tc.Shape, tt.Shape)
	if ok {
		s, ok = ir.BroadcastShapes(s, te.Shape)
	}
	if !ok {
		return c.Errorf("condition %v, t %v and e %v do not broadcast together", tc, tt, te)
	}
	b := c.B
	c.Out = []ir.Value{b.Select(b.BroadcastInDim(c.In[0], s, nil), b.BroadcastInDim(c.In[1], s, nil), b.BroadcastInDim(c.In[2], s, nil))}
	return nil
}

// lowerCast converts; to bool it tests x != 0 (so NaN is true, as
// static_cast<bool> makes it), and floats to integers truncate.
func lowerCast(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	dst, ok := c.Attrs.Types["DstT"]
	if !ok {
		return c.Errorf("attribute DstT is missing (input %v)", c.Type(0))
	}
	x := c.In[0]
	t := c.Type(0)
	switch {
	case dst == t.DType:
		c.Out = []ir.Value{x}
	case dst == ir.Bool:
		c.Out = []ir.Value{c.B.Compare(ir.CmpNE, x, like(c.B, x, 0))}
	default:
		c.Out = []ir.Value{c.B.Convert(x, dst)}
	}
	return nil
}

package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	for _, op := range []struct {
		name string
		ir   ir.Op
	}{{"AddV2", ir.OpAdd}, {"Sub", ir.OpSub}, {"Mul", ir.OpMul}, {"RealDiv", ir.OpDiv}} {
		register(Kernel{Op: op.name, Constraints: T(Floats), Lower: binary(op.ir), File: "plugin/tf/lower/math.go"})
	}
	unary := func(name string, f func(c *Call, x ir.Value) ir.Value) {
		register(Kernel{Op: name, Constraints: T(Floats), File: "plugin/tf/lower/math.go",
			Lower: func(c *Call) error { c.Out = []ir.Value{f(c, c.In[0])}; return nil }})
	}
	unary("Relu", func(c *Call, x ir.Value) ir.Value {
		return c.B.Binary(ir.OpMax, x, c.B.Full(c.B.Type(x), 0))
	})
	unary("Sigmoid", func(c *Call, x ir.Value) ir.Value { return c.B.Unary(ir.OpLogistic, x) })
	unary("Tanh", func(c *Call, x ir.Value) ir.Value { return c.B.Unary(ir.OpTanh, x) })
	register(Kernel{Op: "Softmax", Constraints: T(Floats), Lower: lowerSoftmax, File: "plugin/tf/lower/math.go"})
	register(Kernel{Op: "BiasAdd", Constraints: T(Floats), Lower: lowerBiasAdd, File: "plugin/tf/lower/math.go",
		Attrs: []AttrSpec{{Name: "data_format", Kind: AttrString, Optional: true}}})
	register(Kernel{Op: "Cast", File: "plugin/tf/lower/math.go",
		Constraints: []Constraint{{"SrcT", castTypes}, {"DstT", castTypes}},
		Attrs:       []AttrSpec{{Name: "DstT", Kind: AttrType}, {Name: "Truncate", Kind: AttrBool, Optional: true}},
		Lower: func(c *Call) error {
			c.Out = []ir.Value{c.B.Convert(c.In[0], c.Attrs.Types["DstT"])}
			return nil
		}})
	register(Kernel{Op: "Identity", Constraints: T(All), File: "plugin/tf/lower/math.go",
		Lower: func(c *Call) error { c.Out = []ir.Value{c.In[0]}; return nil }})
}

var castTypes = []ir.DType{ir.F32, ir.F16, ir.BF16, ir.I32, ir.I64, ir.U8, ir.Bool}

// binary lowers a numpy-broadcasting binary op.
func binary(op ir.Op) func(c *Call) error {
	return func(c *Call) error {
		x, y, err := broadcastPair(c, c.In[0], c.In[1])
		if err != nil {
			return err
		}
		c.Out = []ir.Value{c.B.Binary(op, x, y)}
		return nil
	}
}

// broadcastPair expands x and y to their numpy broadcast shape.
func broadcastPair(c *Call, x, y ir.Value) (ir.Value, ir.Value, error) {
	tx, ty := c.B.Type(x), c.B.Type(y)
	shape, ok := BroadcastShapes(tx.Shape, ty.Shape)
	if !ok {
		return 0, 0, c.Errorf("incompatible shapes: %v and %v (%v)", tx.Shape, ty.Shape, tx.DType)
	}
	return c.B.BroadcastInDim(x, shape, nil), c.B.BroadcastInDim(y, shape, nil), nil
}

// BroadcastShapes is numpy's broadcast of two shapes.
func BroadcastShapes(a, b ir.Shape) (ir.Shape, bool) {
	n := max(len(a), len(b))
	out := make(ir.Shape, n)
	for i := range n {
		da, db := 1, 1
		if j := i - (n - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (n - len(b)); j >= 0 {
			db = b[j]
		}
		switch {
		case da == db, db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, false
		}
	}
	return out, true
}

// lowerSoftmax is exp(x - max) / sum(exp(x - max)) over the last axis; the
// shift keeps exp from overflowing.
func lowerSoftmax(c *Call) error {
	x := c.In[0]
	t := c.Type(0)
	r := t.Shape.Rank()
	if r < 1 {
		return c.Errorf("logits must have rank at least 1, got %v", t)
	}
	keep := make([]int, r-1)
	for i := range keep {
		keep[i] = i
	}
	m := c.B.Reduce(x, ir.ReduceMax, []int{r - 1})
	e := c.B.Unary(ir.OpExp, c.B.Binary(ir.OpSub, x, c.B.BroadcastInDim(m, t.Shape, keep)))
	s := c.B.Reduce(e, ir.ReduceSum, []int{r - 1})
	c.Out = []ir.Value{c.B.Binary(ir.OpDiv, e, c.B.BroadcastInDim(s, t.Shape, keep))}
	return nil
}

func lowerBiasAdd(c *Call) error {
	x, bias := c.In[0], c.In[1]
	tx, tb := c.Type(0), c.Type(1)
	axis := tx.Shape.Rank() - 1
	if c.Attrs.String("data_format", "NHWC") == "NCHW" {
		axis = 1
	}
	if tx.Shape.Rank() < 2 || tb.Shape.Rank() != 1 || axis >= tx.Shape.Rank() || tx.Shape[axis] != tb.Shape[0] {
		return c.Errorf("bias %v does not match the channel dimension of %v (data_format %s)", tb, tx, c.Attrs.String("data_format", "NHWC"))
	}
	c.Out = []ir.Value{c.B.Binary(ir.OpAdd, x, c.B.BroadcastInDim(bias, tx.Shape, []int{axis}))}
	return nil
}

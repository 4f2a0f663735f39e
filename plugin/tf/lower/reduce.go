package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	for _, r := range []struct {
		op   string
		kind ir.ReduceKind
		mean bool
	}{{"Sum", ir.ReduceSum, false}, {"Mean", ir.ReduceSum, true}, {"Max", ir.ReduceMax, false}} {
		register(Kernel{Op: r.op, Constraints: T(Floats), HostInputs: []string{"reduction_indices"}, HostInputIndex: []int{1},
			Attrs: []AttrSpec{{Name: "keep_dims", Kind: AttrBool}}, Lower: lowerReduce(r.kind, r.mean), File: "plugin/tf/lower/reduce.go"})
	}
}

// Axes normalises TensorFlow axes (negative counts from the end) for rank r.
func Axes(c *Call, axes []int64, r int) ([]int, error) {
	seen := make([]bool, r)
	var out []int
	for _, a := range axes {
		n := int(a)
		if n < 0 {
			n += r
		}
		if n < 0 || n >= r {
			return nil, c.Errorf("axis %d is out of range for rank %d", a, r)
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

func lowerReduce(kind ir.ReduceKind, mean bool) func(c *Call) error {
	return func(c *Call) error {
		x := c.In[0]
		t := c.Type(0)
		axes, err := Axes(c, c.Host[1], t.Shape.Rank())
		if err != nil {
			return err
		}
		y := c.B.Reduce(x, kind, axes)
		if mean {
			n := 1
			for _, a := range axes {
				n *= t.Shape[a]
			}
			// An empty reduction divides 0 by 0 and gives NaN, as TensorFlow does.
			y = c.B.Binary(ir.OpDiv, y, c.B.Full(c.B.Type(y), float64(n)))
		}
		if c.Attrs.Bool("keep_dims") {
			kept := t.Shape.Clone()
			for _, a := range axes {
				kept[a] = 1
			}
			y = c.B.Reshape(y, kept)
		}
		c.Out = []ir.Value{y}
		return nil
	}
}

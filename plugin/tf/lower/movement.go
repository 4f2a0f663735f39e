package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	register(Kernel{Op: "Reshape", Constraints: T(All), HostInputs: []string{"shape"}, HostInputIndex: []int{1},
		Lower: lowerReshape, File: "plugin/tf/lower/movement.go"})
	register(Kernel{Op: "Transpose", Constraints: T(All), HostInputs: []string{"perm"}, HostInputIndex: []int{1},
		Lower: lowerTranspose, File: "plugin/tf/lower/movement.go"})
}

func lowerReshape(c *Call) error {
	t := c.Type(0)
	want := c.Host[1]
	shape := make(ir.Shape, len(want))
	infer, known := -1, 1
	for i, d := range want {
		switch {
		case d == -1 && infer < 0:
			infer = i
		case d < 0:
			return c.Errorf("shape %v may hold one -1 and no other negative size", want)
		default:
			shape[i] = int(d)
			known *= int(d)
		}
	}
	if infer >= 0 {
		if known == 0 || t.Shape.Size()%known != 0 {
			return c.Errorf("cannot reshape %v (%d elements) to %v", t, t.Shape.Size(), want)
		}
		shape[infer] = t.Shape.Size() / known
	}
	if shape.Size() != t.Shape.Size() {
		return c.Errorf("cannot reshape %v (%d elements) to %v (%d elements)", t, t.Shape.Size(), want, shape.Size())
	}
	c.Out = []ir.Value{c.B.Reshape(c.In[0], shape)}
	return nil
}

func lowerTranspose(c *Call) error {
	t := c.Type(0)
	perm := make([]int, len(c.Host[1]))
	for i, p := range c.Host[1] {
		perm[i] = int(p)
		if perm[i] < 0 {
			perm[i] += t.Shape.Rank()
		}
	}
	seen := make([]bool, t.Shape.Rank())
	for _, p := range perm {
		if len(perm) != t.Shape.Rank() || p < 0 || p >= t.Shape.Rank() || seen[p] {
			return c.Errorf("perm %v is not a permutation of the %d dimensions of %v", c.Host[1], t.Shape.Rank(), t)
		}
		seen[p] = true
	}
	c.Out = []ir.Value{c.B.Transpose(c.In[0], perm)}
	return nil
}

package lower

import (
	"encoding/binary"
	"math"

	"github.com/metalplug/metalplug/backend/ir"
)

// Helpers shared by the lowerings. Each check returns an error that names the
// op (Call.Errorf) and the input types, so a user sees what was wrong.

// arity checks that the op got exactly n inputs.
func (c *Call) arity(n int) error {
	if len(c.In) != n {
		return c.Errorf("takes %d inputs, got %d (%s)", n, len(c.In), c.Inputs())
	}
	return nil
}

// atLeast checks that the op got at least n inputs.
func (c *Call) atLeast(n int) error {
	if len(c.In) < n {
		return c.Errorf("takes at least %d inputs, got %d (%s)", n, len(c.In), c.Inputs())
	}
	return nil
}

// hostInts returns the values of host input i.
func (c *Call) hostInts(i int, name string) ([]int64, error) {
	v, ok := c.Host[i]
	if !ok {
		return nil, c.Errorf("host input %s (input %d) was not provided (inputs %s)", name, i, c.Inputs())
	}
	return v, nil
}

// hostScalar returns the single value of host input i.
func (c *Call) hostScalar(i int, name string) (int64, error) {
	v, err := c.hostInts(i, name)
	if err != nil {
		return 0, err
	}
	if len(v) != 1 || c.Type(i).Shape.Rank() > 1 {
		return 0, c.Errorf("%s must be a scalar, got %d values (%v)", name, len(v), c.Type(i))
	}
	return v[0], nil
}

// hostShape reads host input i as a shape: non-negative sizes.
func (c *Call) hostShape(i int, name string) (ir.Shape, error) {
	v, err := c.hostInts(i, name)
	if err != nil {
		return nil, err
	}
	if c.Type(i).Shape.Rank() > 1 {
		return nil, c.Errorf("%s must be a vector, got %v", name, c.Type(i))
	}
	s := make(ir.Shape, len(v))
	for j, d := range v {
		if d < 0 || d > 1<<40 {
			return nil, c.Errorf("%s %v has a negative or huge size", name, v)
		}
		s[j] = int(d)
	}
	return s, nil
}

// axis normalises a TensorFlow axis (negative counts from the end) for rank r.
func (c *Call) axis(a int64, r int, what string) (int, error) {
	n := a
	if n < 0 {
		n += int64(r)
	}
	if n < 0 || n >= int64(r) {
		return 0, c.Errorf("%s %d is out of range for rank %d (inputs %s)", what, a, r, c.Inputs())
	}
	return int(n), nil
}

// sameTypes checks that inputs idx all have input first's dtype.
func (c *Call) sameDType(idx ...int) error {
	for _, i := range idx[1:] {
		if c.Type(i).DType != c.Type(idx[0]).DType {
			return c.Errorf("inputs %d and %d have different dtypes: %v and %v", idx[0], i, c.Type(idx[0]), c.Type(i))
		}
	}
	return nil
}

// seq is 0, 1, ..., n-1.
func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// rangeInts is lo, lo+1, ..., hi-1.
func rangeInts(lo, hi int) []int {
	s := make([]int, 0, max(hi-lo, 0))
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}

func filled(n, v int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// accType is the dtype to accumulate sums of d in: float32 for the 16-bit
// floats, as TensorFlow's GPU reductions do.
func accType(d ir.DType) ir.DType {
	if d == ir.F16 || d == ir.BF16 {
		return ir.F32
	}
	return d
}

// zeros is a tensor of type t full of zeros; it works for complex64 too.
func zeros(b *ir.Builder, t ir.TensorType) ir.Value {
	if t.DType == ir.C64 {
		return b.BroadcastInDim(b.Constant(ir.TensorType{DType: ir.C64}, make([]byte, 8)), t.Shape, nil)
	}
	return b.Full(t, 0)
}

// scalarZero is a scalar zero of dtype d, complex64 included.
func scalarZero(b *ir.Builder, d ir.DType) ir.Value {
	if d == ir.C64 {
		return b.Constant(ir.TensorType{DType: ir.C64}, make([]byte, 8))
	}
	return b.Scalar(d, 0)
}

// like is a tensor shaped as x, of x's dtype, full of v.
func like(b *ir.Builder, x ir.Value, v float64) ir.Value { return b.Full(b.Type(x), v) }

// keepDims reshapes a reduction result to the input's rank, with size 1 at
// the reduced axes.
func keepDims(b *ir.Builder, y ir.Value, in ir.Shape, axes []int) ir.Value {
	kept := in.Clone()
	for _, a := range axes {
		kept[a] = 1
	}
	return b.Reshape(y, kept)
}

// without removes the given axes from s.
func without(s ir.Shape, axes ...int) ir.Shape {
	var out ir.Shape
	for i, d := range s {
		drop := false
		for _, a := range axes {
			drop = drop || a == i
		}
		if !drop {
			out = append(out, d)
		}
	}
	return out
}

// expandTo broadcasts v, whose dims are those of shape except the given
// (sorted) axes, back to shape.
func expandTo(b *ir.Builder, v ir.Value, shape ir.Shape, removed []int) ir.Value {
	var dims []int
	for i := range shape {
		keep := true
		for _, a := range removed {
			keep = keep && a != i
		}
		if keep {
			dims = append(dims, i)
		}
	}
	return b.BroadcastInDim(v, shape, dims)
}

// i64Constant is a constant int64 tensor of the given shape.
func i64Constant(b *ir.Builder, shape ir.Shape, vals []int64) ir.Value {
	buf := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(buf[8*i:], uint64(v))
	}
	return b.Constant(ir.TensorType{DType: ir.I64, Shape: shape}, buf)
}

// f32Constant is a float32 vector of vals, each rounded to float32.
func f32Constant(b *ir.Builder, vals []float64) ir.Value {
	buf := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(float32(v)))
	}
	return b.Constant(ir.TensorType{DType: ir.F32, Shape: ir.Shape{len(vals)}}, buf)
}

// sizeOf is the product of the given dims of s.
func sizeOf(s ir.Shape, axes []int) int {
	n := 1
	for _, a := range axes {
		n *= s[a]
	}
	return n
}

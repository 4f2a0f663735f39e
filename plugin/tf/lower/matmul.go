package lower

import "github.com/metalplug/metalplug/backend/ir"

// MatMul and BatchMatMul, V2 and V3 (matmul_op_impl.h); Einsum is in einsum.go.

// matMulAttrs are MatMul's, and _FusedMatMul's product's.
var matMulAttrs = []AttrSpec{{Name: "transpose_a", Kind: AttrBool, Optional: true}, {Name: "transpose_b", Kind: AttrBool, Optional: true}}

func init() {
	register(Kernel{Op: "MatMul", Constraints: T(Floats), Inputs: []string{"a", "b"}, Lower: lowerMatMul,
		Attrs: matMulAttrs})
	bmmAttrs := []AttrSpec{{Name: "adj_x", Kind: AttrBool, Optional: true}, {Name: "adj_y", Kind: AttrBool, Optional: true}}
	register(Kernel{Op: "BatchMatMulV2", Constraints: T(Floats), Inputs: []string{"x", "y"}, Lower: lowerBatchMatMul,
		Attrs: bmmAttrs})
	// BatchMatMul is V2 without broadcasting (its shape function already
	// requires equal batch dims).
	register(Kernel{Op: "BatchMatMul", Constraints: T(Floats), Inputs: []string{"x", "y"}, Lower: lowerBatchMatMul,
		Attrs: bmmAttrs})
	// BatchMatMulV3 has separate input and output dtypes. TensorFlow's GPU
	// registers only Ta = Tb = Tout; the constraint is on Ta, and the lowering
	// converts both operands to Tout.
	register(Kernel{Op: "BatchMatMulV3", Constraints: []Constraint{{"Ta", Floats}}, Inputs: []string{"x", "y"},
		Lower: lowerBatchMatMul,
		Attrs: append([]AttrSpec{{Name: "Tout", Kind: AttrType}}, bmmAttrs...)})
}

func lowerMatMul(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	y, err := matMul(c, c.In[0], c.In[1])
	if err != nil {
		return err
	}
	c.Out = []ir.Value{y}
	return nil
}

// matMul is the product of matrices a and b, each transposed as the node's
// transpose_a and transpose_b say: MatMul, and the product _FusedMatMul
// starts with.
func matMul(c *Call, a, b ir.Value) (ir.Value, error) {
	ta, tb := c.B.Type(a), c.B.Type(b)
	if ta.Shape.Rank() != 2 || tb.Shape.Rank() != 2 || ta.DType != tb.DType {
		return 0, c.Errorf("operands must be matrices of one dtype, got %v and %v", ta, tb)
	}
	ka, kb := 1, 0
	if c.Attrs.Bool("transpose_a") {
		ka = 0
	}
	if c.Attrs.Bool("transpose_b") {
		kb = 1
	}
	if ta.Shape[ka] != tb.Shape[kb] {
		return 0, c.Errorf("inner dimensions differ: %v and %v (transpose_a=%v, transpose_b=%v)", ta, tb, c.Attrs.Bool("transpose_a"), c.Attrs.Bool("transpose_b"))
	}
	// dot_general puts the lhs free dim first: that is the row dim either way.
	return c.B.DotGeneral(a, b, ir.DotDims{LhsContract: []int{ka}, RhsContract: []int{kb}}), nil
}

// lowerBatchMatMul broadcasts the batch dimensions numpy-style, then contracts.
func lowerBatchMatMul(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	x, y := c.In[0], c.In[1]
	tx, ty := c.Type(0), c.Type(1)
	rx, ry := tx.Shape.Rank(), ty.Shape.Rank()
	if rx < 2 || ry < 2 {
		return c.Errorf("operands must have rank at least 2, got %v and %v", tx, ty)
	}
	out := c.Attrs.Type("Tout", tx.DType)
	if !out.IsFloat() || out == ir.F64 || !ty.DType.IsNumeric() {
		return c.Errorf("cannot multiply %v by %v into %v", tx, ty, out)
	}
	x, y = c.B.Convert(x, out), c.B.Convert(y, out)
	batch, ok := ir.BroadcastShapes(tx.Shape[:rx-2], ty.Shape[:ry-2])
	if !ok {
		return c.Errorf("batch dimensions do not broadcast: %v and %v", tx, ty)
	}
	nb := len(batch)
	x = c.B.BroadcastInDim(x, append(batch.Clone(), tx.Shape[rx-2:]...), nil)
	y = c.B.BroadcastInDim(y, append(batch.Clone(), ty.Shape[ry-2:]...), nil)
	kx, ky := nb+1, nb
	if c.Attrs.Bool("adj_x") {
		kx = nb
	}
	if c.Attrs.Bool("adj_y") {
		ky = nb + 1
	}
	if c.B.Type(x).Shape[kx] != c.B.Type(y).Shape[ky] {
		return c.Errorf("inner dimensions differ: %v and %v (adj_x=%v, adj_y=%v)", tx, ty, c.Attrs.Bool("adj_x"), c.Attrs.Bool("adj_y"))
	}
	bd := seq(nb)
	c.Out = []ir.Value{c.B.DotGeneral(x, y, ir.DotDims{LhsBatch: bd, RhsBatch: bd, LhsContract: []int{kx}, RhsContract: []int{ky}})}
	return nil
}

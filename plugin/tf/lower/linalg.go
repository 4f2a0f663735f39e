package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

// Linear algebra (tensorflow/core/kernels/linalg): the decompositions are
// the IR's own ops (cholesky, triangular_solve, qr, householder_product,
// eigh, lu, svd); inverse, solve and the determinants are composed from lu
// and triangular solves, the tridiagonal ops from dense matrices. Every op
// works on batches of matrices in the two innermost dims. TensorFlow's GPU
// registers float, double and complex (Qr also half, Svd no complex); the
// device has no float64, and the IR's decompositions are real, so these
// are float32 (and Qr float16, through float32).

func init() {
	f32 := []ir.DType{ir.F32}
	boolAttr := func(names ...string) []AttrSpec {
		var out []AttrSpec
		for _, n := range names {
			out = append(out, AttrSpec{Name: n, Kind: AttrBool, Optional: true})
		}
		return out
	}
	reg := func(op string, ds []ir.DType, inputs []string, attrs []AttrSpec, f func(c *Call) error) {
		register(Kernel{Op: op, Constraints: T(ds), Inputs: inputs, Attrs: attrs, Lower: f})
	}
	reg("Cholesky", f32, []string{"input"}, nil, lowerCholesky)
	reg("MatrixTriangularSolve", f32, []string{"matrix", "rhs"}, boolAttr("lower", "adjoint"), lowerMatrixTriangularSolve)
	reg("Qr", []ir.DType{ir.F32, ir.F16}, []string{"input"}, boolAttr("full_matrices"), lowerQr)
	reg("SelfAdjointEigV2", f32, []string{"input"}, boolAttr("compute_v"), lowerSelfAdjointEigV2)
	reg("Svd", f32, []string{"input"}, boolAttr("compute_uv", "full_matrices"), lowerSvd)
	reg("MatrixInverse", f32, []string{"input"}, boolAttr("adjoint"), lowerMatrixInverse)
	reg("MatrixSolve", f32, []string{"matrix", "rhs"}, boolAttr("adjoint"), lowerMatrixSolve)
	reg("MatrixDeterminant", f32, []string{"input"}, nil, lowerDeterminant(false))
	reg("LogMatrixDeterminant", f32, []string{"input"}, nil, lowerDeterminant(true))
	register(Kernel{Op: "Lu", Constraints: []Constraint{{"T", f32}, {"output_idx_type", []ir.DType{ir.I32, ir.I64}}},
		Inputs: []string{"input"}, Attrs: []AttrSpec{{Name: "output_idx_type", Kind: AttrType}}, Lower: lowerLu})
	reg("TridiagonalMatMul", f32, []string{"superdiag", "maindiag", "subdiag", "rhs"}, nil, lowerTridiagonalMatMul)
	reg("TridiagonalSolve", f32, []string{"diagonals", "rhs"}, boolAttr("partial_pivoting", "perturb_singular"), lowerTridiagonalSolve)
}

// matrixInput checks that input i is a batch of matrices (square when
// square is set) and returns its rank and matrix dims.
func (c *Call) matrixInput(i int, name string, square bool) (r, m, n int, err error) {
	t := c.Type(i)
	r = t.Shape.Rank()
	if r < 2 {
		return 0, 0, 0, c.Errorf("%s must be at least a matrix (rank 2), got %v", name, t)
	}
	m, n = t.Shape[r-2], t.Shape[r-1]
	if square && m != n {
		return 0, 0, 0, c.Errorf("%s must be a batch of square matrices, got %v", name, t)
	}
	return r, m, n, nil
}

// squareSystem checks the inputs of a solve: input 0 a batch of square
// matrices, input 1 the right-hand sides with as many rows; it gives their
// ranks.
func (c *Call) squareSystem() (ra, rb int, err error) {
	ra, m, _, err := c.matrixInput(0, "matrix", true)
	if err != nil {
		return 0, 0, err
	}
	rb, k, _, err := c.matrixInput(1, "rhs", false)
	if err != nil {
		return 0, 0, err
	}
	if k != m {
		return 0, 0, c.Errorf("rhs %v must have as many rows as matrix %v", c.Type(1), c.Type(0))
	}
	return ra, rb, nil
}

// matmul is x y over the two innermost dims, batched over the leading ones
// (equal in x and y).
func matmul(b *ir.Builder, x, y ir.Value) ir.Value {
	r := b.Type(x).Shape.Rank()
	batch := seq(r - 2)
	return b.DotGeneral(x, y, ir.DotDims{LhsBatch: batch, RhsBatch: batch, LhsContract: []int{r - 1}, RhsContract: []int{r - 2}})
}

// swapLast transposes the two innermost dims.
func swapLast(b *ir.Builder, x ir.Value) ir.Value {
	r := b.Type(x).Shape.Rank()
	perm := seq(r)
	perm[r-2], perm[r-1] = r-1, r-2
	return b.Transpose(x, perm)
}

// sliceLast keeps rows [0, rows) and columns [0, cols) of each matrix.
func sliceLast(b *ir.Builder, x ir.Value, rows, cols int) ir.Value {
	s := b.Type(x).Shape
	r := s.Rank()
	limit := s.Clone()
	limit[r-2], limit[r-1] = rows, cols
	return b.Slice(x, make([]int, r), limit, filled(r, 1))
}

// triangleMask is true on and below (lower) or on and above the diagonal of
// a tensor of shape s.
func triangleMask(b *ir.Builder, s ir.Shape, lower bool) ir.Value {
	r := s.Rank()
	row := b.Iota(ir.TensorType{DType: ir.I32, Shape: s}, r-2)
	col := b.Iota(ir.TensorType{DType: ir.I32, Shape: s}, r-1)
	if lower {
		return b.Compare(ir.CmpGE, row, col)
	}
	return b.Compare(ir.CmpLE, row, col)
}

// keepTriangle zeroes x outside its lower (or upper) triangle.
func keepTriangle(b *ir.Builder, x ir.Value, lower bool) ir.Value {
	t := b.Type(x)
	return b.Select(triangleMask(b, t.Shape, lower), x, zeros(b, t))
}

// permutationMatrix is the one-hot matrix P of perm [..., m] (int32): row i
// of P a is row perm[i] of a.
func permutationMatrix(b *ir.Builder, perm ir.Value, d ir.DType) ir.Value {
	s := b.Type(perm).Shape
	r := s.Rank()
	full := append(s.Clone(), s[r-1])
	rows := b.BroadcastInDim(perm, full, seq(r))
	col := b.Iota(ir.TensorType{DType: ir.I32, Shape: full}, r)
	t := ir.TensorType{DType: d, Shape: full}
	return b.Select(b.Compare(ir.CmpEQ, rows, col), b.Full(t, 1), zeros(b, t))
}

// luSolve solves a x = rhs (adjoint: a^T x = rhs) from a's packed LU and
// permutation: P a = L U, so x = U^-1 L^-1 P rhs, and for a^T = U^T L^T P,
// x = P^T L^-T U^-T rhs.
func luSolve(b *ir.Builder, lu, perm, rhs ir.Value, adjoint bool) ir.Value {
	p := permutationMatrix(b, perm, b.Type(lu).DType)
	lower := ir.LinalgAttrs{LeftSide: true, Lower: true, UnitDiagonal: true}
	upper := ir.LinalgAttrs{LeftSide: true}
	if !adjoint {
		y := b.TriangularSolve(lu, matmul(b, p, rhs), lower)
		return b.TriangularSolve(lu, y, upper)
	}
	lower.Transpose, upper.Transpose = ir.Transpose, ir.Transpose
	z := b.TriangularSolve(lu, rhs, upper)
	return matmul(b, swapLast(b, p), b.TriangularSolve(lu, z, lower))
}

func lowerCholesky(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	if _, _, _, err := c.matrixInput(0, "input", true); err != nil {
		return err
	}
	// TensorFlow reads the lower triangle and zeroes the upper one, as the
	// IR's cholesky does.
	c.Out = []ir.Value{c.B.Cholesky(c.In[0], true)}
	return nil
}

func lowerMatrixTriangularSolve(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	ra, rb, err := c.squareSystem()
	if err != nil {
		return err
	}
	ta, tb := c.Type(0), c.Type(1)
	// The batch dims broadcast (matrix_triangular_solve_op_impl.h).
	batch, ok := ir.BroadcastShapes(ta.Shape[:ra-2], tb.Shape[:rb-2])
	if !ok {
		return c.Errorf("the batch dims of matrix %v and rhs %v do not broadcast", ta, tb)
	}
	b := c.B
	a := broadcastBatch(b, c.In[0], batch)
	rhs := broadcastBatch(b, c.In[1], batch)
	attrs := ir.LinalgAttrs{LeftSide: true, Lower: c.Attrs.BoolOr("lower", true)}
	if c.Attrs.BoolOr("adjoint", false) {
		attrs.Transpose = ir.Adjoint
	}
	c.Out = []ir.Value{b.TriangularSolve(a, rhs, attrs)}
	return nil
}

// broadcastBatch broadcasts x's leading dims to batch, NumPy-aligned.
func broadcastBatch(b *ir.Builder, x ir.Value, batch ir.Shape) ir.Value {
	s := b.Type(x).Shape
	r := s.Rank()
	to := append(batch.Clone(), s[r-2:]...)
	if to.Equal(s) {
		return x
	}
	return b.BroadcastInDim(x, to, rangeInts(len(to)-r, len(to)))
}

// inF32 runs f on x widened to float32 when it is a half type, narrowing
// every result back.
func inF32(b *ir.Builder, x ir.Value, f func(x ir.Value) []ir.Value) []ir.Value {
	d := b.Type(x).DType
	if d != ir.F16 {
		return f(x)
	}
	outs := f(b.Convert(x, ir.F32))
	for i, o := range outs {
		outs[i] = b.Convert(o, d)
	}
	return outs
}

func lowerQr(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	_, m, n, err := c.matrixInput(0, "input", false)
	if err != nil {
		return err
	}
	full := c.Attrs.BoolOr("full_matrices", false)
	b := c.B
	k := min(m, n)
	c.Out = inF32(b, c.In[0], func(x ir.Value) []ir.Value {
		qr := b.Results(b.Qr(x))
		if len(qr) != 2 {
			return []ir.Value{x, x} // the builder recorded why
		}
		packed, taus := qr[0], qr[1]
		rRows, qCols := k, k
		if full {
			rRows, qCols = m, m
		}
		r := keepTriangle(b, sliceLast(b, packed, rRows, n), false)
		// Q's columns come from the reflectors held in the first
		// min(m, n) columns; for a full Q of a tall matrix the rest are
		// padded with zeros (no reflectors, so orgqr completes the basis).
		v := sliceLast(b, packed, m, k)
		if qCols > k {
			t := b.Type(v)
			low, high := make([]int, t.Shape.Rank()), make([]int, t.Shape.Rank())
			high[len(high)-1] = qCols - k
			v = b.Pad(v, scalarZero(b, t.DType), low, high, make([]int, len(low)))
		}
		return []ir.Value{b.HouseholderProduct(v, taus), r}
	})
	return nil
}

func lowerSelfAdjointEigV2(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	if _, _, _, err := c.matrixInput(0, "input", true); err != nil {
		return err
	}
	b := c.B
	// TensorFlow reads the lower triangle (Eigen's SelfAdjointEigenSolver,
	// cuSOLVER's syevd with CUBLAS_FILL_MODE_LOWER).
	ev := b.Results(b.Eigh(c.In[0], true))
	if len(ev) != 2 {
		return nil
	}
	v := ev[0]
	if !c.Attrs.BoolOr("compute_v", true) {
		// TensorFlow's v is then a scalar it leaves unwritten.
		v = scalarZero(b, c.Type(0).DType)
	}
	c.Out = []ir.Value{ev[1], v}
	return nil
}

func lowerSvd(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	if _, _, _, err := c.matrixInput(0, "input", false); err != nil {
		return err
	}
	b := c.B
	uv := c.Attrs.BoolOr("compute_uv", true)
	full := uv && c.Attrs.BoolOr("full_matrices", false)
	sv := b.Results(b.Svd(c.In[0], full))
	if len(sv) != 3 {
		return nil
	}
	if !uv { // u and v are scalars TensorFlow leaves unwritten
		z := scalarZero(b, c.Type(0).DType)
		c.Out = []ir.Value{sv[0], z, z}
		return nil
	}
	c.Out = []ir.Value{sv[0], sv[1], swapLast(b, sv[2])}
	return nil
}

// lu is the IR's lu of a square input: the packed factors, the pivots and
// the permutation.
func (c *Call) lu() ([]ir.Value, error) {
	if _, _, _, err := c.matrixInput(0, "input", true); err != nil {
		return nil, err
	}
	rs := c.B.Results(c.B.Lu(c.In[0]))
	if len(rs) != 3 {
		return nil, c.B.Err()
	}
	return rs, nil
}

func lowerLu(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	rs, err := c.lu()
	if err != nil {
		return err
	}
	c.Out = []ir.Value{rs[0], c.B.Convert(rs[2], c.Attrs.Type("output_idx_type", ir.I32))}
	return nil
}

func lowerMatrixInverse(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	rs, err := c.lu()
	if err != nil {
		return err
	}
	// A singular matrix divides by U's zero pivot (infinities and NaN);
	// TensorFlow's CPU refuses it with an error a device program cannot
	// raise.
	b := c.B
	t := c.Type(0)
	eye := b.Select(b.Compare(ir.CmpEQ, b.Iota(ir.TensorType{DType: ir.I32, Shape: t.Shape}, t.Shape.Rank()-2),
		b.Iota(ir.TensorType{DType: ir.I32, Shape: t.Shape}, t.Shape.Rank()-1)), b.Full(t, 1), zeros(b, t))
	c.Out = []ir.Value{luSolve(b, rs[0], rs[2], eye, c.Attrs.BoolOr("adjoint", false))}
	return nil
}

func lowerMatrixSolve(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	ra, rb, err := c.squareSystem()
	if err != nil {
		return err
	}
	ta, tb := c.Type(0), c.Type(1)
	if ra != rb || !ta.Shape[:ra-2].Equal(tb.Shape[:rb-2]) {
		return c.Errorf("rhs %v must have matrix %v's batch dims and as many rows", tb, ta)
	}
	rs, err := c.lu()
	if err != nil {
		return err
	}
	c.Out = []ir.Value{luSolve(c.B, rs[0], rs[2], c.In[1], c.Attrs.BoolOr("adjoint", false))}
	return nil
}

// lowerDeterminant is det(a) = sign(P) prod(diag(U)) from a's LU, or
// (logAbs) the sign and sum(log|diag(U)|) as LogMatrixDeterminant gives:
// a singular matrix has sign 0 and log -inf; an empty one determinant 1.
func lowerDeterminant(logAbs bool) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(1); err != nil {
			return err
		}
		rs, err := c.lu()
		if err != nil {
			return err
		}
		b := c.B
		t := c.Type(0)
		r := t.Shape.Rank()
		diag := b.Compare(ir.CmpEQ, b.Iota(ir.TensorType{DType: ir.I32, Shape: t.Shape}, r-2), b.Iota(ir.TensorType{DType: ir.I32, Shape: t.Shape}, r-1))
		// The permutation's sign: -1 for each pivot that swapped rows.
		piv := rs[1]
		ps := b.Type(piv).Shape
		swapped := b.Compare(ir.CmpNE, piv, b.Iota(ir.TensorType{DType: ir.I32, Shape: ps}, ps.Rank()-1))
		st := ir.TensorType{DType: t.DType, Shape: ps}
		sign := b.Reduce(b.Select(swapped, b.Full(st, -1), b.Full(st, 1)), ir.ReduceProd, []int{ps.Rank() - 1})
		last := []int{r - 2, r - 1}
		if !logAbs {
			prod := b.Reduce(b.Select(diag, rs[0], b.Full(t, 1)), ir.ReduceProd, last)
			c.Out = []ir.Value{b.Binary(ir.OpMul, sign, prod)}
			return nil
		}
		signs := b.Reduce(b.Select(diag, b.Unary(ir.OpSign, rs[0]), b.Full(t, 1)), ir.ReduceProd, last)
		logs := b.Reduce(b.Select(diag, b.Unary(ir.OpLog, b.Unary(ir.OpAbs, rs[0])), zeros(b, t)), ir.ReduceSum, last)
		c.Out = []ir.Value{b.Binary(ir.OpMul, sign, signs), logs}
		return nil
	}
}

// lowerTridiagonalMatMul is out[i] = sub[i] rhs[i-1] + main[i] rhs[i] +
// super[i] rhs[i+1] (super's last and sub's first element unused), each
// diagonal [..., 1, M] broadcast over rhs's [..., M, N] columns.
func lowerTridiagonalMatMul(c *Call) error {
	if err := c.arity(4); err != nil {
		return err
	}
	rr, m, n, err := c.matrixInput(3, "rhs", false)
	if err != nil {
		return err
	}
	tr := c.Type(3)
	want := append(tr.Shape[:rr-2].Clone(), 1, m)
	for i, name := range []string{"superdiag", "maindiag", "subdiag"} {
		if t := c.Type(i); !t.Shape.Equal(want) || t.DType != tr.DType {
			return c.Errorf("%s %v must be %v for rhs %v", name, t, ir.TensorType{DType: tr.DType, Shape: want}, tr)
		}
	}
	b := c.B
	// Each diagonal as a column [..., M, 1] broadcast over rhs's columns.
	col := func(d ir.Value) ir.Value {
		return b.BroadcastInDim(swapLast(b, d), tr.Shape, seq(rr))
	}
	prod := b.Binary(ir.OpMul, col(c.In[1]), c.In[3])
	if m > 1 && n > 0 {
		low, high, none := make([]int, rr), make([]int, rr), make([]int, rr)
		zero := scalarZero(b, tr.DType)
		start := make([]int, rr)
		limit := tr.Shape.Clone()
		strides := filled(rr, 1)
		// rhs shifted up one row (row i holds rhs[i+1]) and down one.
		start[rr-2] = 1
		up := b.Slice(c.In[3], start, limit, strides)
		high[rr-2] = 1
		up = b.Pad(up, zero, low, high, none)
		start[rr-2], limit[rr-2] = 0, m-1
		down := b.Slice(c.In[3], start, limit, strides)
		low[rr-2], high[rr-2] = 1, 0
		down = b.Pad(down, zero, low, high, none)
		prod = b.Binary(ir.OpAdd, prod, b.Binary(ir.OpMul, col(c.In[0]), up))
		prod = b.Binary(ir.OpAdd, prod, b.Binary(ir.OpMul, col(c.In[2]), down))
	}
	c.Out = []ir.Value{prod}
	return nil
}

// lowerTridiagonalSolve builds the dense matrix of diagonals [..., 3, M]
// (super, main, sub; super's last and sub's first element unused) and
// solves it by LU with partial pivoting. Without partial pivoting
// TensorFlow runs the Thomas algorithm, which gives the same solution up to
// rounding wherever it is defined (it is where no pivot is zero).
func lowerTridiagonalSolve(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	rd, three, m, err := c.matrixInput(0, "diagonals", false)
	if err != nil {
		return err
	}
	rr, k, _, err := c.matrixInput(1, "rhs", false)
	if err != nil {
		return err
	}
	td, tr := c.Type(0), c.Type(1)
	if three != 3 || k != m || rd != rr || !td.Shape[:rd-2].Equal(tr.Shape[:rr-2]) {
		return c.Errorf("diagonals %v must be [..., 3, M] and rhs %v [..., M, K] with the same batch dims", td, tr)
	}
	if c.Attrs.BoolOr("perturb_singular", false) {
		return c.Errorf("perturb_singular=true is not supported (it perturbs zero pivots of the Thomas algorithm)")
	}
	b := c.B
	s := append(td.Shape[:rd-2].Clone(), m, m)
	row := b.Iota(ir.TensorType{DType: ir.I32, Shape: s}, rd-2)
	colIdx := b.Iota(ir.TensorType{DType: ir.I32, Shape: s}, rd-1)
	diff := b.Binary(ir.OpSub, colIdx, row)
	at := ir.TensorType{DType: td.DType, Shape: s}
	a := zeros(b, at)
	for i, offset := range []int{1, 0, -1} { // super, main, sub
		start := make([]int, rd)
		limit := td.Shape.Clone()
		start[rd-2], limit[rd-2] = i, i+1
		d := b.Slice(c.In[0], start, limit, filled(rd, 1)) // [..., 1, M]: d[j] is row j's entry
		rows := b.BroadcastInDim(swapLast(b, d), s, seq(rd))
		on := b.Compare(ir.CmpEQ, diff, b.Full(ir.TensorType{DType: ir.I32, Shape: s}, float64(offset)))
		a = b.Select(on, rows, a)
	}
	lu := b.Results(b.Lu(a))
	if len(lu) != 3 {
		return nil
	}
	c.Out = []ir.Value{luSolve(b, lu[0], lu[2], c.In[1], false)}
	return nil
}

package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

// Diagonals and bands of (batches of) matrices: MatrixBandPart, Diag,
// DiagPart and the MatrixDiag, MatrixDiagPart and MatrixSetDiag families
// (linalg/matrix_band_part_op.cc, diag_op.cc, linalg/matrix_diag_op.cc).
// Every element's source is known from the shapes and the host inputs
// alone, so each is one gather of the flattened input by a constant index
// table (padding values appended as one more column). TensorFlow's GPU
// registers the matrix ops for half, bfloat16, float, double, complex and
// bool, with k, num_rows and num_cols in host memory; padding_value is a
// device input here.

func init() {
	floatsBool := []ir.DType{ir.F32, ir.F16, ir.BF16, ir.Bool}
	reg := func(name string, inputs, host []string, attrs []AttrSpec, f func(c *Call) error) {
		register(Kernel{Op: name, Constraints: T(floatsBool), Inputs: inputs, HostInputs: host,
			Attrs: attrs, Lower: f})
	}
	register(Kernel{Op: "MatrixBandPart", Constraints: []Constraint{{"T", floatsBool}, {"Tindex", Indices}},
		Inputs: []string{"input", "num_lower", "num_upper"}, HostInputs: []string{"num_lower", "num_upper"},
		Lower: lowerMatrixBandPart})
	align := []AttrSpec{{Name: "align", Kind: AttrString, Optional: true}}
	reg("MatrixDiag", []string{"diagonal"}, nil, nil, lowerMatrixDiag(0))
	reg("MatrixDiagV2", []string{"diagonal", "k", "num_rows", "num_cols", "padding_value"},
		[]string{"k", "num_rows", "num_cols"}, nil, lowerMatrixDiag(2))
	reg("MatrixDiagV3", []string{"diagonal", "k", "num_rows", "num_cols", "padding_value"},
		[]string{"k", "num_rows", "num_cols"}, align, lowerMatrixDiag(3))
	reg("MatrixDiagPart", []string{"input"}, nil, nil, lowerMatrixDiagPart(0))
	reg("MatrixDiagPartV2", []string{"input", "k", "padding_value"}, []string{"k"}, nil, lowerMatrixDiagPart(2))
	reg("MatrixDiagPartV3", []string{"input", "k", "padding_value"}, []string{"k"}, align, lowerMatrixDiagPart(3))
	reg("MatrixSetDiag", []string{"input", "diagonal"}, nil, nil, lowerMatrixSetDiag(0))
	reg("MatrixSetDiagV2", []string{"input", "diagonal", "k"}, []string{"k"}, nil, lowerMatrixSetDiag(2))
	reg("MatrixSetDiagV3", []string{"input", "diagonal", "k"}, []string{"k"}, align, lowerMatrixSetDiag(3))
	// Diag and DiagPart's GPU kernels are float, double, int32, int64 and
	// complex (diag_op.cc).
	diagTypes := []ir.DType{ir.F32, ir.I32, ir.I64}
	register(Kernel{Op: "Diag", Constraints: T(diagTypes), Inputs: []string{"diagonal"}, Lower: lowerDiag})
	register(Kernel{Op: "DiagPart", Constraints: T(diagTypes), Inputs: []string{"input"}, Lower: lowerDiagPart})
}

// pickColumns is x [rows, K] gathered column by column: column j of the
// result is column idx[j] of x, or pad (a scalar, broadcast; unused unless
// some idx[j] is -1) where idx[j] is -1.
func pickColumns(b *ir.Builder, x ir.Value, idx []int, pad ir.Value) ir.Value {
	t := b.Type(x)
	rows, k := t.Shape[0], t.Shape[1]
	src := make([]int, len(idx))
	padded := false
	for j, i := range idx {
		src[j] = i
		if i < 0 {
			src[j], padded = k, true
		}
	}
	if padded && rows > 0 {
		x = b.Concat(1, x, b.BroadcastInDim(pad, ir.Shape{rows, 1}, nil))
	}
	return takeAlong(b, x, 1, src)
}

// flatRows reshapes x to [product of its first keep dims, the rest].
func flatRows(b *ir.Builder, x ir.Value, keep int) ir.Value {
	s := b.Type(x).Shape
	return b.Reshape(x, ir.Shape{sizeOf(s, seq(keep)), sizeOf(s, rangeInts(keep, len(s)))})
}

func lowerMatrixBandPart(c *Call) error {
	if err := c.arity(3); err != nil {
		return err
	}
	t := c.Type(0)
	r := t.Shape.Rank()
	lo, err := c.hostScalar(1, "num_lower")
	if err != nil {
		return err
	}
	hi, err := c.hostScalar(2, "num_upper")
	if err != nil {
		return err
	}
	if r < 2 {
		return c.Errorf("input must be at least a matrix, got %v", t)
	}
	m, n := t.Shape[r-2], t.Shape[r-1]
	if lo > int64(m) || hi > int64(n) {
		return c.Errorf("num_lower %d must be at most the %d rows and num_upper %d at most the %d columns of input %v", lo, m, hi, n, t)
	}
	b := c.B
	row := b.Iota(ir.TensorType{DType: ir.I64, Shape: t.Shape}, r-2)
	col := b.Iota(ir.TensorType{DType: ir.I64, Shape: t.Shape}, r-1)
	in := b.Full(ir.TensorType{DType: ir.Bool, Shape: t.Shape}, 1)
	if lo >= 0 {
		in = b.Binary(ir.OpAnd, in, b.Compare(ir.CmpLE, b.Binary(ir.OpSub, row, col), like(b, row, float64(lo))))
	}
	if hi >= 0 {
		in = b.Binary(ir.OpAnd, in, b.Compare(ir.CmpLE, b.Binary(ir.OpSub, col, row), like(b, row, float64(hi))))
	}
	c.Out = []ir.Value{b.Select(in, c.In[0], b.Full(t, 0))}
	return nil
}

// diagSpec is the band of diagonals a MatrixDiag-family op addresses:
// diagonals lo..hi (0 the main one, positive above it), each held in a row
// of maxLen elements, aligned left or right as align says.
type diagSpec struct {
	lo, hi             int
	maxLen             int
	leftSuper, leftSub bool
	rows, cols         int
}

// versionArity checks for first inputs in version 0 of an op, later in V2
// and V3.
func versionArity(c *Call, version, first, later int) error {
	if version > 0 {
		return c.arity(later)
	}
	return c.arity(first)
}

// readDiagK reads k (host input i): a scalar or a pair lo <= hi; version
// 0 (the first ops) has none and means the main diagonal.
func readDiagK(c *Call, version, i int) (lo, hi int, err error) {
	if version == 0 {
		return 0, 0, nil
	}
	k, err := c.hostInts(i, "k")
	if err != nil {
		return 0, 0, err
	}
	switch len(k) {
	case 1:
		lo, hi = int(k[0]), int(k[0])
	case 2:
		lo, hi = int(k[0]), int(k[1])
	default:
		return 0, 0, c.Errorf("k must be a scalar or a pair, got %v (inputs %s)", k, c.Inputs())
	}
	if lo > hi {
		return 0, 0, c.Errorf("k %v: the lower diagonal index %d is above the upper %d (inputs %s)", k, lo, hi, c.Inputs())
	}
	return lo, hi, nil
}

// readAlign reads version 3's align attribute (RIGHT_LEFT by default);
// version 2 aligns every diagonal left, and the first ops hold one.
func readAlign(c *Call, version int) (leftSuper, leftSub bool, err error) {
	if version < 3 {
		return true, true, nil
	}
	switch a := c.Attrs.String("align", "RIGHT_LEFT"); a {
	case "LEFT_LEFT", "LEFT_RIGHT", "RIGHT_LEFT", "RIGHT_RIGHT":
		return a == "LEFT_LEFT" || a == "LEFT_RIGHT", a == "LEFT_LEFT" || a == "RIGHT_LEFT", nil
	default:
		return false, false, c.Errorf("align %q must be LEFT_LEFT, LEFT_RIGHT, RIGHT_LEFT or RIGHT_RIGHT (inputs %s)", a, c.Inputs())
	}
}

// length and offset are diagonal d's length in the matrix and where its
// elements start in its row (ComputeDiagLenAndContentOffset).
func (s diagSpec) length(d int) int { return min(s.rows+min(0, d), s.cols-max(0, d)) }

func (s diagSpec) offset(d int) int {
	if d >= 0 && s.leftSuper || d <= 0 && s.leftSub {
		return 0
	}
	return s.maxLen - s.length(d)
}

// source is the position in the packed diagonals [hi-lo+1, maxLen] of
// matrix element (i, j), or -1 outside the band.
func (s diagSpec) source(i, j int) int {
	d := j - i
	if d < s.lo || d > s.hi {
		return -1
	}
	return (s.hi-d)*s.maxLen + j - max(d, 0) + s.offset(d)
}

// diagShape is the shape of the packed diagonals for batch dims batch.
func (s diagSpec) diagShape(batch ir.Shape) ir.Shape {
	if s.lo == s.hi {
		return append(batch.Clone(), s.maxLen)
	}
	return append(batch.Clone(), s.hi-s.lo+1, s.maxLen)
}

func lowerMatrixDiag(version int) func(c *Call) error {
	return func(c *Call) error {
		if err := versionArity(c, version, 1, 5); err != nil {
			return err
		}
		t := c.Type(0)
		var s diagSpec
		var err error
		if s.lo, s.hi, err = readDiagK(c, version, 1); err != nil {
			return err
		}
		if s.leftSuper, s.leftSub, err = readAlign(c, version); err != nil {
			return err
		}
		nd := s.hi - s.lo + 1
		r := t.Shape.Rank()
		batchRank := r - 1
		if nd > 1 {
			batchRank = r - 2
		}
		if batchRank < 0 || nd > 1 && t.Shape[r-2] != nd {
			return c.Errorf("diagonal %v must hold the %d diagonals of k [%d, %d] in its last two dims", t, nd, s.lo, s.hi)
		}
		s.maxLen = t.Shape[r-1]
		s.rows, s.cols = s.maxLen-min(s.hi, 0), s.maxLen+max(s.lo, 0)
		minRows, minCols := s.rows, s.cols
		pad := ir.Value(0)
		if version > 0 {
			nr, err := c.hostScalar(2, "num_rows")
			if err != nil {
				return err
			}
			ncol, err := c.hostScalar(3, "num_cols")
			if err != nil {
				return err
			}
			switch {
			case nr == -1 && ncol == -1:
				s.rows = max(minRows, minCols)
				s.cols = s.rows
			case nr == -1:
				s.cols = int(ncol)
			case ncol == -1:
				s.rows = int(nr)
			default:
				s.rows, s.cols = int(nr), int(ncol)
			}
			if s.rows != minRows && s.cols != minCols || s.rows < minRows || s.cols < minCols {
				return c.Errorf("num_rows %d and num_cols %d do not fit k [%d, %d] and diagonal %v", nr, ncol, s.lo, s.hi, t)
			}
			if pt := c.Type(4); pt.DType != t.DType || pt.Shape.Rank() != 0 {
				return c.Errorf("padding_value must be a scalar of the diagonal's dtype, got %v (diagonal %v)", pt, t)
			}
			pad = c.In[4]
		} else {
			pad = c.B.Scalar(t.DType, 0)
		}
		idx := make([]int, 0, s.rows*s.cols)
		for i := range s.rows {
			for j := range s.cols {
				idx = append(idx, s.source(i, j))
			}
		}
		out := pickColumns(c.B, flatRows(c.B, c.In[0], batchRank), idx, pad)
		c.Out = []ir.Value{c.B.Reshape(out, append(t.Shape[:batchRank].Clone(), s.rows, s.cols))}
		return nil
	}
}

// matrixSpec reads the band of a MatrixDiagPart or MatrixSetDiag of input
// 0, with k at host input ki.
func matrixSpec(c *Call, version, ki int) (diagSpec, error) {
	t := c.Type(0)
	r := t.Shape.Rank()
	if r < 2 {
		return diagSpec{}, c.Errorf("input must be at least a matrix, got %v", t)
	}
	s := diagSpec{rows: t.Shape[r-2], cols: t.Shape[r-1]}
	var err error
	if s.lo, s.hi, err = readDiagK(c, version, ki); err != nil {
		return s, err
	}
	if s.leftSuper, s.leftSub, err = readAlign(c, version); err != nil {
		return s, err
	}
	for _, d := range []int{s.lo, s.hi} {
		if d != 0 && (d <= -s.rows || d >= s.cols) {
			return s, c.Errorf("diagonal index %d is out of bounds for the %dx%d matrices of input %v", d, s.rows, s.cols, t)
		}
	}
	s.maxLen = min(s.rows+min(s.hi, 0), s.cols-max(s.lo, 0))
	return s, nil
}

func lowerMatrixDiagPart(version int) func(c *Call) error {
	return func(c *Call) error {
		if err := versionArity(c, version, 1, 3); err != nil {
			return err
		}
		t := c.Type(0)
		s, err := matrixSpec(c, version, 1)
		if err != nil {
			return err
		}
		pad := c.B.Scalar(t.DType, 0)
		if version > 0 {
			if pt := c.Type(2); pt.DType != t.DType || pt.Shape.Rank() != 0 {
				return c.Errorf("padding_value must be a scalar of the input's dtype, got %v (input %v)", pt, t)
			}
			pad = c.In[2]
		}
		idx := make([]int, 0, (s.hi-s.lo+1)*s.maxLen)
		for d := s.hi; d >= s.lo; d-- {
			length, off := s.length(d), s.offset(d)
			for p := range s.maxLen {
				q := p - off
				if q < 0 || q >= length {
					idx = append(idx, -1)
					continue
				}
				idx = append(idx, (q+max(0, -d))*s.cols+q+max(0, d))
			}
		}
		r := t.Shape.Rank()
		out := pickColumns(c.B, flatRows(c.B, c.In[0], r-2), idx, pad)
		c.Out = []ir.Value{c.B.Reshape(out, s.diagShape(t.Shape[:r-2]))}
		return nil
	}
}

func lowerMatrixSetDiag(version int) func(c *Call) error {
	return func(c *Call) error {
		if err := versionArity(c, version, 2, 3); err != nil {
			return err
		}
		t, td := c.Type(0), c.Type(1)
		s, err := matrixSpec(c, version, 2)
		if err != nil {
			return err
		}
		r := t.Shape.Rank()
		if want := s.diagShape(t.Shape[:r-2]); td.DType != t.DType || !td.Shape.Equal(want) {
			return c.Errorf("diagonal %v must be %v for input %v and k [%d, %d]", td, ir.TensorType{DType: t.DType, Shape: want}, t, s.lo, s.hi)
		}
		b := c.B
		size := s.rows * s.cols
		idx := make([]int, 0, size)
		for i := range s.rows {
			for j := range s.cols {
				if p := s.source(i, j); p >= 0 {
					idx = append(idx, size+p)
				} else {
					idx = append(idx, i*s.cols+j)
				}
			}
		}
		both := b.Concat(1, flatRows(b, c.In[0], r-2), flatRows(b, c.In[1], r-2))
		c.Out = []ir.Value{b.Reshape(pickColumns(b, both, idx, 0), t.Shape)}
		return nil
	}
}

// lowerDiag puts a tensor of shape D on the diagonal of a D x D tensor.
func lowerDiag(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	t := c.Type(0)
	if t.Shape.Rank() < 1 {
		return c.Errorf("diagonal must have rank at least 1, got %v", t)
	}
	p := t.Shape.Size()
	idx := make([]int, p*p)
	for i := range idx {
		idx[i] = -1
		if i/p == i%p {
			idx[i] = i / p
		}
	}
	b := c.B
	out := pickColumns(b, b.Reshape(c.In[0], ir.Shape{1, p}), idx, b.Scalar(t.DType, 0))
	c.Out = []ir.Value{b.Reshape(out, append(t.Shape.Clone(), t.Shape...))}
	return nil
}

// lowerDiagPart takes the diagonal of a D x D tensor.
func lowerDiagPart(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	t := c.Type(0)
	r := t.Shape.Rank()
	if r == 0 || r%2 != 0 || !t.Shape[:r/2].Equal(t.Shape[r/2:]) {
		return c.Errorf("input must have an even rank and shape D x D, got %v", t)
	}
	p := sizeOf(t.Shape, seq(r/2))
	idx := make([]int, p)
	for i := range idx {
		idx[i] = i*p + i
	}
	b := c.B
	out := pickColumns(b, b.Reshape(c.In[0], ir.Shape{1, p * p}), idx, 0)
	c.Out = []ir.Value{b.Reshape(out, t.Shape[:r/2].Clone())}
	return nil
}

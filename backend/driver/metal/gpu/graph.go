package gpu

import (
	"fmt"
	"slices"

	"github.com/metalplug/metalplug/backend/ir"
)

// Backend builds and compiles graphs: the darwin adapter over MPSGraph, or
// the model. Graph has checked every node it adds.
type Backend interface {
	// Add adds n to the graph; n.Out.ID numbers it, from 1 in call order.
	Add(n *Node)
	// Compile makes an executable computing targets from feeds
	// (placeholders), in the orders given.
	Compile(feeds, targets []Tensor) (Executable, error)
	// Release frees what the graph holds; the executables it compiled stay
	// valid.
	Release()
}

// Executable is a compiled graph, run by CommandBuffer.Encode.
type Executable interface {
	Release()
}

// Graph builds one graph through a Backend, checking every primitive call
// against the contract first. The first error is kept (Err) and later calls
// return the zero Tensor, so a lowering reads as arithmetic and checks once.
type Graph struct {
	b     Backend
	macOS Version
	n     int
	err   error
}

// NewGraph builds on b for the given macOS release.
func NewGraph(b Backend, macOS Version) *Graph { return &Graph{b: b, macOS: macOS} }

// Err is the first contract violation, if any.
func (g *Graph) Err() error { return g.err }

// ClearErr forgets the contract violation, so that building goes on: for
// a graph that is only tried (metal's Place), never compiled.
func (g *Graph) ClearErr() { g.err = nil }

// MacOS is the release the graph is built for.
func (g *Graph) MacOS() Version { return g.macOS }

// Has reports whether the release offers op and does not deprecate it.
func (g *Graph) Has(op Op) bool { return op.On(g.macOS) }

// Accepts reports whether op takes operands of type t on this release.
func (g *Graph) Accepts(op Op, t DataType) bool { return g.Has(op) && op.Accepts(t, g.macOS) }

// Release frees the backend's graph.
func (g *Graph) Release() { g.b.Release() }

// Compile compiles the graph; feeds must be placeholders.
func (g *Graph) Compile(feeds, targets []Tensor) (Executable, error) {
	if g.err != nil {
		return nil, g.err
	}
	for _, t := range slices.Concat(feeds, targets) {
		if !t.Valid() {
			return nil, fmt.Errorf("gpu: compile: a feed or target is no tensor")
		}
	}
	return g.b.Compile(feeds, targets)
}

func (g *Graph) fail(op Op, args []Tensor, format string, a ...any) Tensor {
	if g.err == nil {
		parts := ""
		for i, t := range args {
			if i > 0 {
				parts += ", "
			}
			parts += t.String()
		}
		g.err = fmt.Errorf("MPSGraph %s(%s): %s", op, parts, fmt.Sprintf(format, a...))
	}
	return Tensor{}
}

// add checks what every primitive shares (its release, its operands'
// validity and data type, the result's shape) and hands the node on.
func (g *Graph) add(n *Node, shape []int, dt DataType) Tensor {
	if g.err != nil {
		return Tensor{}
	}
	for _, a := range n.Args {
		if !a.Valid() {
			return g.fail(n.Op, n.Args, "an operand is no tensor")
		}
	}
	if !g.macOS.AtLeast(n.Op.Since()) {
		return g.fail(n.Op, n.Args, "%s needs %v; this is %v", n.Op.Method(), n.Op.Since(), g.macOS)
	}
	if !g.Has(n.Op) {
		v, instead := n.Op.Deprecated()
		return g.fail(n.Op, n.Args, "%s is deprecated from %v: use %s", n.Op.Method(), v, instead.Method())
	}
	check := dt
	if len(n.Args) > 0 {
		check = n.Args[0].DType
		if n.Op == OpSelect {
			check = n.Args[1].DType
		}
	}
	if !n.Op.Accepts(check, g.macOS) {
		return g.fail(n.Op, n.Args, "%v is not a type %s takes on %v (it takes %v; %s)", check, n.Op, g.macOS, n.Op.Types(g.macOS), n.Op.Source())
	}
	if len(shape) == 0 {
		return g.fail(n.Op, n.Args, "a result of rank 0: the graphs here hold every value with at least one dimension")
	}
	for _, d := range shape {
		if d <= 0 {
			return g.fail(n.Op, n.Args, "result shape %v has an empty or negative dimension", shape)
		}
	}
	if len(shape) > MaxRank {
		return g.fail(n.Op, n.Args, "a result of rank %d (%v): MPSGraph's tensors have at most %d dimensions", len(shape), shape, MaxRank)
	}
	if e := elements(shape); e > MaxElements {
		return g.fail(n.Op, n.Args, "a result of %d elements (%v): MPSGraph's tensors hold at most 2^31-1", e, shape)
	}
	g.n++
	n.Out = Tensor{Shape: shape, DType: dt, ID: g.n}
	g.b.Add(n)
	return n.Out
}

// --- constants and inputs -----------------------------------------------------

// Placeholder is a graph input.
func (g *Graph) Placeholder(shape []int, dt DataType) Tensor {
	return g.add(&Node{Op: OpPlaceholder, Shape: clone(shape)}, clone(shape), dt)
}

// Constant is a tensor from row-major little-endian bytes.
func (g *Graph) Constant(data []byte, shape []int, dt DataType) Tensor {
	if len(data) != elements(shape)*dt.Size() {
		return g.fail(OpConstant, nil, "%d bytes for a %v%v constant of %d", len(data), dt, shape, elements(shape)*dt.Size())
	}
	return g.add(&Node{Op: OpConstant, Shape: clone(shape), Data: slices.Clone(data)}, clone(shape), dt)
}

// Fill is a tensor of shape with every element v (converted to dt as a cast
// would).
func (g *Graph) Fill(v float64, shape []int, dt DataType) Tensor {
	return g.add(&Node{Op: OpFill, Shape: clone(shape), Value: v}, clone(shape), dt)
}

// Scalar is a constant of shape [1], which broadcasts against any shape.
func (g *Graph) Scalar(v float64, dt DataType) Tensor {
	return g.add(&Node{Op: OpScalar, Value: v}, []int{1}, dt)
}

// --- elementwise ---------------------------------------------------------------

func (g *Graph) unary(op Op, x Tensor) Tensor {
	dt := x.DType
	if op == OpIsNaN || op == OpIsFinite {
		dt = Bool
	}
	return g.add(&Node{Op: op, Args: []Tensor{x}}, clone(x.Shape), dt)
}

func (g *Graph) Identity(x Tensor) Tensor             { return g.unary(OpIdentity, x) }
func (g *Graph) Negative(x Tensor) Tensor             { return g.unary(OpNegative, x) }
func (g *Graph) Absolute(x Tensor) Tensor             { return g.unary(OpAbsolute, x) }
func (g *Graph) Exponent(x Tensor) Tensor             { return g.unary(OpExponent, x) }
func (g *Graph) Logarithm(x Tensor) Tensor            { return g.unary(OpLogarithm, x) }
func (g *Graph) SquareRoot(x Tensor) Tensor           { return g.unary(OpSquareRoot, x) }
func (g *Graph) ReverseSquareRoot(x Tensor) Tensor    { return g.unary(OpReverseSquareRoot, x) }
func (g *Graph) ReciprocalSquareRoot(x Tensor) Tensor { return g.unary(OpReciprocalSquareRoot, x) }
func (g *Graph) Tanh(x Tensor) Tensor                 { return g.unary(OpTanh, x) }
func (g *Graph) Sigmoid(x Tensor) Tensor              { return g.unary(OpSigmoid, x) }
func (g *Graph) Erf(x Tensor) Tensor                  { return g.unary(OpErf, x) }
func (g *Graph) Sin(x Tensor) Tensor                  { return g.unary(OpSin, x) }
func (g *Graph) Cos(x Tensor) Tensor                  { return g.unary(OpCos, x) }
func (g *Graph) Floor(x Tensor) Tensor                { return g.unary(OpFloor, x) }
func (g *Graph) Ceil(x Tensor) Tensor                 { return g.unary(OpCeil, x) }
func (g *Graph) IsNaN(x Tensor) Tensor                { return g.unary(OpIsNaN, x) }
func (g *Graph) IsFinite(x Tensor) Tensor             { return g.unary(OpIsFinite, x) }
func (g *Graph) Not(x Tensor) Tensor                  { return g.unary(OpNot, x) }

// Broadcast is NumPy's broadcasting of two shapes, which MPSGraph's binary
// operations follow.
func Broadcast(a, b []int) ([]int, bool) {
	s, ok := ir.BroadcastShapes(a, b)
	return []int(s), ok
}

func isComparison(op Op) bool { return op >= OpEqual && op <= OpGreaterThanOrEqual }

func (g *Graph) binary(op Op, a, b Tensor) Tensor {
	args := []Tensor{a, b}
	if g.err != nil {
		return Tensor{}
	}
	if a.Valid() && b.Valid() && a.DType != b.DType {
		return g.fail(op, args, "operands of two types: MPSGraph's binary ops take one")
	}
	shape, ok := Broadcast(a.Shape, b.Shape)
	if !ok && a.Valid() && b.Valid() {
		return g.fail(op, args, "shapes %v and %v do not broadcast", a.Shape, b.Shape)
	}
	dt := a.DType
	if isComparison(op) {
		dt = Bool
	}
	return g.add(&Node{Op: op, Args: args}, shape, dt)
}

func (g *Graph) Addition(a, b Tensor) Tensor           { return g.binary(OpAddition, a, b) }
func (g *Graph) Subtraction(a, b Tensor) Tensor        { return g.binary(OpSubtraction, a, b) }
func (g *Graph) Multiplication(a, b Tensor) Tensor     { return g.binary(OpMultiplication, a, b) }
func (g *Graph) Division(a, b Tensor) Tensor           { return g.binary(OpDivision, a, b) }
func (g *Graph) FloorModulo(a, b Tensor) Tensor        { return g.binary(OpFloorModulo, a, b) }
func (g *Graph) Maximum(a, b Tensor) Tensor            { return g.binary(OpMaximum, a, b) }
func (g *Graph) Minimum(a, b Tensor) Tensor            { return g.binary(OpMinimum, a, b) }
func (g *Graph) MaximumNaN(a, b Tensor) Tensor         { return g.binary(OpMaximumNaN, a, b) }
func (g *Graph) MinimumNaN(a, b Tensor) Tensor         { return g.binary(OpMinimumNaN, a, b) }
func (g *Graph) Power(a, b Tensor) Tensor              { return g.binary(OpPower, a, b) }
func (g *Graph) Equal(a, b Tensor) Tensor              { return g.binary(OpEqual, a, b) }
func (g *Graph) NotEqual(a, b Tensor) Tensor           { return g.binary(OpNotEqual, a, b) }
func (g *Graph) LessThan(a, b Tensor) Tensor           { return g.binary(OpLessThan, a, b) }
func (g *Graph) LessThanOrEqual(a, b Tensor) Tensor    { return g.binary(OpLessThanOrEqual, a, b) }
func (g *Graph) GreaterThan(a, b Tensor) Tensor        { return g.binary(OpGreaterThan, a, b) }
func (g *Graph) GreaterThanOrEqual(a, b Tensor) Tensor { return g.binary(OpGreaterThanOrEqual, a, b) }
func (g *Graph) LogicalAND(a, b Tensor) Tensor         { return g.binary(OpLogicalAND, a, b) }
func (g *Graph) LogicalOR(a, b Tensor) Tensor          { return g.binary(OpLogicalOR, a, b) }
func (g *Graph) LogicalXOR(a, b Tensor) Tensor         { return g.binary(OpLogicalXOR, a, b) }
func (g *Graph) BitwiseAND(a, b Tensor) Tensor         { return g.binary(OpBitwiseAND, a, b) }
func (g *Graph) BitwiseOR(a, b Tensor) Tensor          { return g.binary(OpBitwiseOR, a, b) }
func (g *Graph) BitwiseXOR(a, b Tensor) Tensor         { return g.binary(OpBitwiseXOR, a, b) }
func (g *Graph) BitwiseLeftShift(a, b Tensor) Tensor   { return g.binary(OpBitwiseLeftShift, a, b) }
func (g *Graph) BitwiseRightShift(a, b Tensor) Tensor  { return g.binary(OpBitwiseRightShift, a, b) }

// Select is p ? a : b elementwise, all three broadcast; p is bool.
func (g *Graph) Select(p, a, b Tensor) Tensor {
	args := []Tensor{p, a, b}
	if g.err != nil {
		return Tensor{}
	}
	if p.DType != Bool || a.DType != b.DType {
		return g.fail(OpSelect, args, "select takes a bool predicate and two operands of one type")
	}
	s, ok := Broadcast(a.Shape, b.Shape)
	if ok {
		s, ok = Broadcast(p.Shape, s)
	}
	if !ok {
		return g.fail(OpSelect, args, "shapes do not broadcast")
	}
	return g.add(&Node{Op: OpSelect, Args: args}, s, a.DType)
}

// Cast converts x to dt: floats to integers truncate toward zero, out of
// range values are undefined (see the model), anything to bool is x != 0.
func (g *Graph) Cast(x Tensor, dt DataType) Tensor {
	if g.err == nil && dt.Size() == 0 {
		return g.fail(OpCast, []Tensor{x}, "to %v, which is no type", dt)
	}
	return g.add(&Node{Op: OpCast, Args: []Tensor{x}, To: dt}, clone(x.Shape), dt)
}

// ReinterpretCast reads x's bits as dt, of the same size.
func (g *Graph) ReinterpretCast(x Tensor, dt DataType) Tensor {
	if g.err == nil && x.Valid() && (dt.Size() == 0 || x.DType.Size() != dt.Size()) {
		return g.fail(OpReinterpretCast, []Tensor{x}, "to %v: the sizes differ (the graphs here reinterpret only between types of one size)", dt)
	}
	return g.add(&Node{Op: OpReinterpretCast, Args: []Tensor{x}, To: dt}, clone(x.Shape), dt)
}

// --- movement --------------------------------------------------------------------

// Reshape keeps the elements in row-major order; the counts must agree.
func (g *Graph) Reshape(x Tensor, shape []int) Tensor {
	if g.err == nil && x.Valid() && elements(shape) != x.Size() {
		return g.fail(OpReshape, []Tensor{x}, "to %v: %d elements into %d", shape, x.Size(), elements(shape))
	}
	return g.add(&Node{Op: OpReshape, Args: []Tensor{x}, Shape: clone(shape)}, clone(shape), x.DType)
}

// BroadcastTo broadcasts x to shape, which NumPy's rule must give.
func (g *Graph) BroadcastTo(x Tensor, shape []int) Tensor {
	if g.err == nil && x.Valid() {
		s, ok := Broadcast(x.Shape, shape)
		if !ok || !slices.Equal(s, shape) {
			return g.fail(OpBroadcast, []Tensor{x}, "to %v: not a broadcast of %v", shape, x.Shape)
		}
	}
	return g.add(&Node{Op: OpBroadcast, Args: []Tensor{x}, Shape: clone(shape)}, clone(shape), x.DType)
}

// Transpose swaps dimensions i and j.
func (g *Graph) Transpose(x Tensor, i, j int) Tensor {
	if g.err != nil || !x.Valid() {
		return g.add(&Node{Op: OpTranspose, Args: []Tensor{x}}, nil, x.DType)
	}
	if i < 0 || j < 0 || i >= x.Rank() || j >= x.Rank() {
		return g.fail(OpTranspose, []Tensor{x}, "dimensions %d and %d of a rank-%d tensor", i, j, x.Rank())
	}
	s := clone(x.Shape)
	s[i], s[j] = s[j], s[i]
	return g.add(&Node{Op: OpTranspose, Args: []Tensor{x}, Axis: i, Axis2: j}, s, x.DType)
}

// Slice takes starts[d] <= i < ends[d] by strides[d] in each dimension.
// MPSGraph clamps and wraps out-of-range bounds; the lowering never relies on
// that, so bounds outside the dimension are refused.
func (g *Graph) Slice(x Tensor, starts, ends, strides []int) Tensor {
	args := []Tensor{x}
	if g.err != nil || !x.Valid() {
		return g.add(&Node{Op: OpSlice, Args: args}, nil, x.DType)
	}
	r := x.Rank()
	if len(starts) != r || len(ends) != r || len(strides) != r {
		return g.fail(OpSlice, args, "starts %v, ends %v, strides %v for rank %d", starts, ends, strides, r)
	}
	s := make([]int, r)
	for d := range r {
		if strides[d] < 1 || starts[d] < 0 || ends[d] > x.Shape[d] || starts[d] >= ends[d] {
			return g.fail(OpSlice, args, "dimension %d: [%d:%d:%d] of %d", d, starts[d], ends[d], strides[d], x.Shape[d])
		}
		s[d] = (ends[d] - starts[d] + strides[d] - 1) / strides[d]
	}
	return g.add(&Node{Op: OpSlice, Args: args, Starts: clone(starts), Ends: clone(ends), Strides: clone(strides)}, s, x.DType)
}

// Concat joins xs along axis; all else must agree.
func (g *Graph) Concat(xs []Tensor, axis int) Tensor {
	args := slices.Clone(xs)
	if g.err == nil && len(xs) == 0 {
		return g.fail(OpConcat, nil, "no operands")
	}
	if g.err != nil || !xs[0].Valid() {
		return g.add(&Node{Op: OpConcat, Args: args}, nil, Invalid)
	}
	r := xs[0].Rank()
	if axis < 0 || axis >= r {
		return g.fail(OpConcat, args, "axis %d of rank %d", axis, r)
	}
	s := clone(xs[0].Shape)
	s[axis] = 0
	for _, x := range xs {
		if x.Rank() != r || x.DType != xs[0].DType {
			return g.fail(OpConcat, args, "operands of different ranks or types")
		}
		for d := range r {
			if d != axis && x.Shape[d] != xs[0].Shape[d] {
				return g.fail(OpConcat, args, "dimension %d differs", d)
			}
		}
		s[axis] += x.Shape[axis]
	}
	return g.add(&Node{Op: OpConcat, Args: args, Axis: axis}, s, xs[0].DType)
}

// Pad pads with non-negative low and high amounts of the constant v.
func (g *Graph) Pad(x Tensor, low, high []int, v float64) Tensor {
	args := []Tensor{x}
	if g.err != nil || !x.Valid() {
		return g.add(&Node{Op: OpPad, Args: args}, nil, x.DType)
	}
	if len(low) != x.Rank() || len(high) != x.Rank() {
		return g.fail(OpPad, args, "paddings %v and %v for rank %d", low, high, x.Rank())
	}
	s := clone(x.Shape)
	for d := range s {
		if low[d] < 0 || high[d] < 0 {
			return g.fail(OpPad, args, "negative padding %v, %v", low, high)
		}
		s[d] += low[d] + high[d]
	}
	return g.add(&Node{Op: OpPad, Args: args, Starts: clone(low), Ends: clone(high), Value: v}, s, x.DType)
}

func (g *Graph) checkAxes(op Op, x Tensor, axes []int) bool {
	if g.err != nil || !x.Valid() {
		return false
	}
	seen := map[int]bool{}
	for _, a := range axes {
		if a < 0 || a >= x.Rank() || seen[a] {
			g.fail(op, []Tensor{x}, "axes %v of a rank-%d tensor", axes, x.Rank())
			return false
		}
		seen[a] = true
	}
	return true
}

// Reverse reverses the order along axes.
func (g *Graph) Reverse(x Tensor, axes []int) Tensor {
	if !g.checkAxes(OpReverse, x, axes) {
		return Tensor{}
	}
	return g.add(&Node{Op: OpReverse, Args: []Tensor{x}, Axes: clone(axes)}, clone(x.Shape), x.DType)
}

// --- contractions ------------------------------------------------------------------

// MatMul multiplies the last two dimensions, broadcasting the batch ones.
func (g *Graph) MatMul(a, b Tensor) Tensor {
	args := []Tensor{a, b}
	if g.err != nil || !a.Valid() || !b.Valid() {
		return g.add(&Node{Op: OpMatMul, Args: args}, nil, a.DType)
	}
	if a.Rank() < 2 || b.Rank() < 2 || a.DType != b.DType || a.Shape[a.Rank()-1] != b.Shape[b.Rank()-2] {
		return g.fail(OpMatMul, args, "operands must be matrices of one type with a's columns b's rows")
	}
	batch, ok := Broadcast(a.Shape[:a.Rank()-2], b.Shape[:b.Rank()-2])
	if !ok {
		return g.fail(OpMatMul, args, "batch dimensions do not broadcast")
	}
	s := append(batch, a.Shape[a.Rank()-2], b.Shape[b.Rank()-1])
	return g.add(&Node{Op: OpMatMul, Args: args}, s, a.DType)
}

// Convolution2D convolves an NHWC source with HWIO weights, with no
// padding.
func (g *Graph) Convolution2D(x, w Tensor, c Conv2D) Tensor {
	args := []Tensor{x, w}
	if g.err != nil || !x.Valid() || !w.Valid() {
		return g.add(&Node{Op: OpConvolution2D, Args: args}, nil, x.DType)
	}
	if x.Rank() != 4 || w.Rank() != 4 || x.DType != w.DType {
		return g.fail(OpConvolution2D, args, "a rank-4 NHWC source and rank-4 HWIO weights of one type")
	}
	if c.StrideY < 1 || c.StrideX < 1 || c.DilationY < 1 || c.DilationX < 1 || c.Groups < 1 {
		return g.fail(OpConvolution2D, args, "strides, dilations and groups must be positive: %+v", c)
	}
	if x.Shape[3] != w.Shape[2]*c.Groups || w.Shape[3]%c.Groups != 0 {
		return g.fail(OpConvolution2D, args, "%d source channels, %d weight input channels in %d groups, %d outputs", x.Shape[3], w.Shape[2], c.Groups, w.Shape[3])
	}
	ey := (w.Shape[0]-1)*c.DilationY + 1
	ex := (w.Shape[1]-1)*c.DilationX + 1
	if ey > x.Shape[1] || ex > x.Shape[2] {
		return g.fail(OpConvolution2D, args, "a %dx%d dilated window over a %dx%d source", ey, ex, x.Shape[1], x.Shape[2])
	}
	s := []int{x.Shape[0], (x.Shape[1]-ey)/c.StrideY + 1, (x.Shape[2]-ex)/c.StrideX + 1, w.Shape[3]}
	return g.add(&Node{Op: OpConvolution2D, Args: args, Conv: c}, s, x.DType)
}

// --- reductions and scans ------------------------------------------------------------

func (g *Graph) reduce(op Op, x Tensor, axes []int) Tensor {
	if !g.checkAxes(op, x, axes) {
		return Tensor{}
	}
	s := clone(x.Shape)
	for _, a := range axes {
		s[a] = 1
	}
	return g.add(&Node{Op: op, Args: []Tensor{x}, Axes: clone(axes)}, s, x.DType)
}

func (g *Graph) ReductionSum(x Tensor, axes []int) Tensor { return g.reduce(OpReductionSum, x, axes) }
func (g *Graph) ReductionProduct(x Tensor, axes []int) Tensor {
	return g.reduce(OpReductionProduct, x, axes)
}
func (g *Graph) ReductionMaximum(x Tensor, axes []int) Tensor {
	return g.reduce(OpReductionMaximum, x, axes)
}
func (g *Graph) ReductionMinimum(x Tensor, axes []int) Tensor {
	return g.reduce(OpReductionMinimum, x, axes)
}
func (g *Graph) ReductionMaximumNaN(x Tensor, axes []int) Tensor {
	return g.reduce(OpReductionMaximumNaN, x, axes)
}
func (g *Graph) ReductionMinimumNaN(x Tensor, axes []int) Tensor {
	return g.reduce(OpReductionMinimumNaN, x, axes)
}

func (g *Graph) alongAxis(op Op, x Tensor, axis int, dt DataType) Tensor {
	if !g.checkAxes(op, x, []int{axis}) {
		return Tensor{}
	}
	return g.add(&Node{Op: op, Args: []Tensor{x}, Axis: axis}, clone(x.Shape), dt)
}

// ArgSort is the int32 positions that sort x ascending along axis. The sort
// is not stable: MPSGraph does not say how ties are ordered.
func (g *Graph) ArgSort(x Tensor, axis int) Tensor { return g.alongAxis(OpArgSort, x, axis, Int32) }

// CumulativeSum is the inclusive running sum along axis.
func (g *Graph) CumulativeSum(x Tensor, axis int) Tensor {
	return g.alongAxis(OpCumulativeSum, x, axis, x.DType)
}

// --- indexing -----------------------------------------------------------------------------

func isIndex(t Tensor) bool { return t.DType == Int32 }

// Gather takes x's slices along axis at int32 indices: the result is
// x.shape[:axis] + indices.shape + x.shape[axis+1:] (no batch dimensions).
// Indices out of range are undefined.
func (g *Graph) Gather(x, indices Tensor, axis int) Tensor {
	args := []Tensor{x, indices}
	if g.err != nil || !x.Valid() || !indices.Valid() {
		return g.add(&Node{Op: OpGather, Args: args}, nil, x.DType)
	}
	if axis < 0 || axis >= x.Rank() || !isIndex(indices) {
		return g.fail(OpGather, args, "axis %d of rank %d with int32 indices", axis, x.Rank())
	}
	s := slices.Concat(x.Shape[:axis], indices.Shape, x.Shape[axis+1:])
	return g.add(&Node{Op: OpGather, Args: args, Axis: axis}, s, x.DType)
}

// GatherAlongAxis is out[..., i, ...] = x[..., indices[..., i, ...], ...]
// along axis: indices have x's rank and shape but along axis.
func (g *Graph) GatherAlongAxis(axis int, x, indices Tensor) Tensor {
	args := []Tensor{x, indices}
	if g.err != nil || !x.Valid() || !indices.Valid() {
		return g.add(&Node{Op: OpGatherAlongAxis, Args: args}, nil, x.DType)
	}
	if axis < 0 || axis >= x.Rank() || indices.Rank() != x.Rank() || !isIndex(indices) {
		return g.fail(OpGatherAlongAxis, args, "axis %d: int32 indices of x's rank", axis)
	}
	for d := range x.Rank() {
		if d != axis && indices.Shape[d] != x.Shape[d] {
			return g.fail(OpGatherAlongAxis, args, "dimension %d differs", d)
		}
	}
	return g.add(&Node{Op: OpGatherAlongAxis, Args: args, Axis: axis}, clone(indices.Shape), x.DType)
}

// ScatterND combines updates into a copy of data at int32 index vectors
// (the last dimension of indices, of length K <= data's rank): updates are
// indices.shape[:-1] + data.shape[K:]. The order in which updates to one
// position apply is undefined, which matters for ScatterSet.
func (g *Graph) ScatterND(data, updates, indices Tensor, mode ScatterMode) Tensor {
	args := []Tensor{data, updates, indices}
	if g.err != nil || !data.Valid() || !updates.Valid() || !indices.Valid() {
		return g.add(&Node{Op: OpScatterND, Args: args}, nil, data.DType)
	}
	k := indices.Shape[indices.Rank()-1]
	if !isIndex(indices) || k > data.Rank() || updates.DType != data.DType {
		return g.fail(OpScatterND, args, "int32 index vectors of length at most data's rank, updates of data's type")
	}
	want := slices.Concat(indices.Shape[:indices.Rank()-1], data.Shape[k:])
	if len(want) == 0 {
		want = []int{1}
	}
	if !slices.Equal(want, updates.Shape) {
		return g.fail(OpScatterND, args, "updates must be %v", want)
	}
	return g.add(&Node{Op: OpScatterND, Args: args, Mode: mode}, clone(data.Shape), data.DType)
}

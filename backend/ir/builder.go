package ir

import (
	"errors"
	"fmt"
	"slices"
)

// Builder appends instructions to a Program, inferring and checking each
// result type. The first error sticks: later calls return a dummy value, and
// Build reports the error, so a lowering reads as straight-line code.
type Builder struct {
	prog Program
	err  error
	loc  string // given to every instruction emitted (SetLoc)
}

// SetLoc makes loc the source location of the instructions emitted from
// now on: a frontend sets it to the position of the op it translates, so
// that what the device cannot run is named by the user's source line.
func (b *Builder) SetLoc(loc string) { b.loc = loc }

// NewBuilder starts an empty program.
func NewBuilder() *Builder { return &Builder{} }

// Err is the first error recorded, if any.
func (b *Builder) Err() error { return b.err }

// Build finishes the program with the given results.
func (b *Builder) Build(results ...Value) (*Program, error) {
	if b.err != nil {
		return nil, b.err
	}
	if len(results) == 0 {
		return nil, errors.New("ir: program has no results")
	}
	for _, r := range results {
		if int(r) < 0 || int(r) >= len(b.prog.Instrs) {
			return nil, fmt.Errorf("ir: result %%%d does not exist", r)
		}
		if b.isTuple(r) {
			return nil, fmt.Errorf("ir: result %%%d is a tuple: take it apart with GetResult", r)
		}
	}
	p := b.prog
	p.Results = slices.Clone(results)
	return &p, nil
}

// Type is the type of a value built so far.
func (b *Builder) Type(v Value) TensorType {
	if int(v) < 0 || int(v) >= len(b.prog.Instrs) {
		return TensorType{}
	}
	return b.prog.Instrs[v].Type
}

func (b *Builder) fail(op Op, format string, args ...any) Value {
	if b.err == nil {
		b.err = fmt.Errorf("ir: %s: %s", op, fmt.Sprintf(format, args...))
	}
	return 0
}

func (b *Builder) emit(in Instr) Value {
	if b.err != nil {
		return 0
	}
	if err := in.Type.validate(); err != nil {
		return b.fail(in.Op, "%v", err)
	}
	for _, a := range in.Args {
		if int(a) < 0 || int(a) >= len(b.prog.Instrs) {
			return b.fail(in.Op, "operand %%%d does not exist", a)
		}
	}
	if in.Loc == "" {
		in.Loc = b.loc
	}
	b.prog.Instrs = append(b.prog.Instrs, in)
	return Value(len(b.prog.Instrs) - 1)
}

// Parameter declares the next program input.
func (b *Builder) Parameter(t TensorType) Value {
	if b.err == nil {
		if err := t.validate(); err != nil {
			return b.fail(OpParameter, "%v", err)
		}
	}
	t.Shape = t.Shape.Clone()
	b.prog.Params = append(b.prog.Params, t)
	return b.emit(Instr{Op: OpParameter, Type: t, Param: len(b.prog.Params) - 1})
}

// Constant adds a literal; data is row-major little-endian of t's dtype.
func (b *Builder) Constant(t TensorType, data []byte) Value {
	if len(data) != t.Bytes() {
		return b.fail(OpConstant, "%d bytes of data for %v, which needs %d", len(data), t, t.Bytes())
	}
	return b.emit(Instr{Op: OpConstant, Type: TensorType{t.DType, t.Shape.Clone()}, Literal: slices.Clone(data)})
}

// Scalar adds a constant scalar of dtype d holding v, converted to d.
func (b *Builder) Scalar(d DType, v float64) Value {
	data, err := EncodeScalar(d, v)
	if err != nil {
		return b.fail(OpConstant, "%v", err)
	}
	return b.Constant(TensorType{DType: d}, data)
}

// Full is a tensor of type t with every element v.
func (b *Builder) Full(t TensorType, v float64) Value {
	return b.BroadcastInDim(b.Scalar(t.DType, v), t.Shape, nil)
}

// Iota counts 0, 1, 2, ... along axis of a tensor of type t.
func (b *Builder) Iota(t TensorType, axis int) Value {
	if axis < 0 || axis >= t.Shape.Rank() || t.DType == C64 {
		return b.fail(OpIota, "axis %d of %v: iota needs a real type and an axis within the rank", axis, t)
	}
	return b.emit(Instr{Op: OpIota, Type: TensorType{t.DType, t.Shape.Clone()}, Axes: []int{axis}})
}

// Unary applies an elementwise op of one operand.
func (b *Builder) Unary(op Op, x Value) Value {
	t := b.Type(x)
	if !op.IsUnary() {
		return b.fail(op, "not a unary op")
	}
	switch {
	case op == OpNot && !(t.DType == Bool || t.DType.IsInt()):
		return b.fail(op, "needs bool or integer operand, got %v", t)
	case op != OpNot && op != OpNeg && op != OpAbs && op != OpSign && !t.DType.IsFloat():
		return b.fail(op, "needs a floating operand, got %v", t)
	case (op == OpNeg || op == OpAbs || op == OpSign) && !t.DType.IsNumeric():
		return b.fail(op, "needs a numeric operand, got %v", t)
	}
	return b.emit(Instr{Op: op, Args: []Value{x}, Type: t})
}

// Binary applies an elementwise op to two operands of identical type.
func (b *Builder) Binary(op Op, x, y Value) Value {
	tx, ty := b.Type(x), b.Type(y)
	if !op.IsBinary() {
		return b.fail(op, "not a binary op")
	}
	if tx.DType != ty.DType || !tx.Shape.Equal(ty.Shape) {
		return b.fail(op, "operand types differ: %v and %v", tx, ty)
	}
	shift := op == OpShiftLeft || op == OpShiftRightLogical || op == OpShiftRightArithmetic
	if shift && !tx.DType.IsInt() {
		return b.fail(op, "needs integer operands, got %v", tx)
	}
	if op.IsBitwise() && !(tx.DType == Bool || tx.DType.IsInt()) {
		return b.fail(op, "needs bool or integer operands, got %v", tx)
	}
	if !op.IsBitwise() && !tx.DType.IsNumeric() {
		return b.fail(op, "needs numeric operands, got %v", tx)
	}
	return b.emit(Instr{Op: op, Args: []Value{x, y}, Type: tx})
}

// Compare tests x dir y elementwise; the result is bool.
func (b *Builder) Compare(dir CompareDir, x, y Value) Value {
	tx, ty := b.Type(x), b.Type(y)
	if tx.DType != ty.DType || !tx.Shape.Equal(ty.Shape) {
		return b.fail(OpCompare, "operand types differ: %v and %v", tx, ty)
	}
	if dir < CmpEQ || dir > CmpGE {
		return b.fail(OpCompare, "unknown direction %v", dir)
	}
	if tx.DType == C64 && dir != CmpEQ && dir != CmpNE {
		return b.fail(OpCompare, "complex numbers are not ordered: %v on %v", dir, tx)
	}
	return b.emit(Instr{Op: OpCompare, Args: []Value{x, y}, Type: TensorType{Bool, tx.Shape.Clone()}, Compare: dir})
}

// Select is pred ? x : y elementwise.
func (b *Builder) Select(pred, x, y Value) Value {
	tp, tx, ty := b.Type(pred), b.Type(x), b.Type(y)
	if tp.DType != Bool || !tp.Shape.Equal(tx.Shape) {
		return b.fail(OpSelect, "predicate %v must be bool of the operands' shape %v", tp, tx.Shape)
	}
	if tx.DType != ty.DType || !tx.Shape.Equal(ty.Shape) {
		return b.fail(OpSelect, "operand types differ: %v and %v", tx, ty)
	}
	return b.emit(Instr{Op: OpSelect, Args: []Value{pred, x, y}, Type: tx})
}

// Convert changes x's dtype to d.
func (b *Builder) Convert(x Value, d DType) Value {
	t := b.Type(x)
	if t.DType == d {
		return x
	}
	return b.emit(Instr{Op: OpConvert, Args: []Value{x}, Type: TensorType{d, t.Shape.Clone()}})
}

// BitcastConvert reinterprets x's bits as dtype d, of the same width (jax
// builds floats from random bits so).
func (b *Builder) BitcastConvert(x Value, d DType) Value {
	t := b.Type(x)
	if !d.Valid() || d.Size() != t.DType.Size() || d == Bool || t.DType == Bool {
		return b.fail(OpBitcastConvert, "%v to %v: the dtypes must have the same width, and not be bool", t, d)
	}
	return b.emit(Instr{Op: OpBitcastConvert, Args: []Value{x}, Type: TensorType{d, t.Shape.Clone()}})
}

// BroadcastInDim expands x to shape; operand dimension i becomes result
// dimension dims[i] and must be 1 or equal to it. nil dims means trailing
// alignment, as numpy broadcasts.
func (b *Builder) BroadcastInDim(x Value, shape Shape, dims []int) Value {
	t := b.Type(x)
	if dims == nil {
		if t.Shape.Rank() > shape.Rank() {
			return b.fail(OpBroadcastInDim, "cannot broadcast %v to %v", t, shape)
		}
		dims = make([]int, t.Shape.Rank())
		for i := range dims {
			dims[i] = shape.Rank() - t.Shape.Rank() + i
		}
	}
	if len(dims) != t.Shape.Rank() {
		return b.fail(OpBroadcastInDim, "%d dims for an operand of rank %d", len(dims), t.Shape.Rank())
	}
	for i, d := range dims {
		if d < 0 || d >= shape.Rank() || (i > 0 && d <= dims[i-1]) {
			return b.fail(OpBroadcastInDim, "dims %v must be increasing and within rank %d", dims, shape.Rank())
		}
		if t.Shape[i] != 1 && t.Shape[i] != shape[d] {
			return b.fail(OpBroadcastInDim, "cannot broadcast %v to %v", t, shape)
		}
	}
	if t.Shape.Equal(shape) {
		return x
	}
	return b.emit(Instr{Op: OpBroadcastInDim, Args: []Value{x}, Type: TensorType{t.DType, shape.Clone()}, Axes: slices.Clone(dims)})
}

// Reshape gives x a new shape with the same number of elements.
func (b *Builder) Reshape(x Value, shape Shape) Value {
	t := b.Type(x)
	if t.Shape.Size() != shape.Size() {
		return b.fail(OpReshape, "cannot reshape %v (%d elements) to %v (%d elements)", t, t.Shape.Size(), shape, shape.Size())
	}
	if t.Shape.Equal(shape) {
		return x
	}
	return b.emit(Instr{Op: OpReshape, Args: []Value{x}, Type: TensorType{t.DType, shape.Clone()}})
}

// Transpose permutes dimensions: result dimension i is operand dimension perm[i].
func (b *Builder) Transpose(x Value, perm []int) Value {
	t := b.Type(x)
	if !IsPermutation(perm, t.Shape.Rank()) {
		return b.fail(OpTranspose, "%v is not a permutation of the %d dims of %v", perm, t.Shape.Rank(), t)
	}
	if isIdentity(perm) {
		return x
	}
	out := make(Shape, len(perm))
	for i, p := range perm {
		out[i] = t.Shape[p]
	}
	return b.emit(Instr{Op: OpTranspose, Args: []Value{x}, Type: TensorType{t.DType, out}, Axes: slices.Clone(perm)})
}

// Slice takes start <= i < limit in steps of strides along every dimension.
func (b *Builder) Slice(x Value, start, limit, strides []int) Value {
	t := b.Type(x)
	r := t.Shape.Rank()
	if len(start) != r || len(limit) != r || len(strides) != r {
		return b.fail(OpSlice, "start %v, limit %v, strides %v must each have %d entries for %v", start, limit, strides, r, t)
	}
	out := make(Shape, r)
	for i := range r {
		if strides[i] < 1 || start[i] < 0 || limit[i] > t.Shape[i] || start[i] > limit[i] {
			return b.fail(OpSlice, "dim %d: start %d, limit %d, stride %d do not fit size %d", i, start[i], limit[i], strides[i], t.Shape[i])
		}
		out[i] = (limit[i] - start[i] + strides[i] - 1) / strides[i]
	}
	return b.emit(Instr{Op: OpSlice, Args: []Value{x}, Type: TensorType{t.DType, out},
		Slice: &SliceAttrs{slices.Clone(start), slices.Clone(limit), slices.Clone(strides)}})
}

// Concat joins operands of one dtype along axis; other dimensions must agree.
func (b *Builder) Concat(axis int, xs ...Value) Value {
	if len(xs) == 0 {
		return b.fail(OpConcat, "no operands")
	}
	t0 := b.Type(xs[0])
	if axis < 0 || axis >= t0.Shape.Rank() {
		return b.fail(OpConcat, "axis %d out of range for %v", axis, t0)
	}
	out := t0.Shape.Clone()
	out[axis] = 0
	for _, x := range xs {
		t := b.Type(x)
		if t.DType != t0.DType || t.Shape.Rank() != t0.Shape.Rank() {
			return b.fail(OpConcat, "operands %v and %v do not match", t0, t)
		}
		for i := range t.Shape {
			if i != axis && t.Shape[i] != t0.Shape[i] {
				return b.fail(OpConcat, "operands %v and %v differ outside axis %d", t0, t, axis)
			}
		}
		out[axis] += t.Shape[axis]
	}
	if len(xs) == 1 {
		return xs[0]
	}
	return b.emit(Instr{Op: OpConcat, Args: slices.Clone(xs), Type: TensorType{t0.DType, out}, Axes: []int{axis}})
}

// Pad surrounds x with the scalar value; negative low or high crop.
func (b *Builder) Pad(x, value Value, low, high, interior []int) Value {
	t, tv := b.Type(x), b.Type(value)
	r := t.Shape.Rank()
	if tv.DType != t.DType || tv.Shape.Rank() != 0 {
		return b.fail(OpPad, "padding value %v must be a scalar of %v", tv, t.DType)
	}
	if len(low) != r || len(high) != r || len(interior) != r {
		return b.fail(OpPad, "low %v, high %v, interior %v must each have %d entries", low, high, interior, r)
	}
	out := make(Shape, r)
	for i := range r {
		if interior[i] < 0 {
			return b.fail(OpPad, "negative interior padding %v", interior)
		}
		n := t.Shape[i]
		if n > 0 {
			n += (n - 1) * interior[i]
		}
		n += low[i] + high[i]
		if n < 0 {
			return b.fail(OpPad, "padding %v/%v crops %v below zero", low, high, t)
		}
		out[i] = n
	}
	return b.emit(Instr{Op: OpPad, Args: []Value{x, value}, Type: TensorType{t.DType, out},
		Pad: &PadAttrs{slices.Clone(low), slices.Clone(high), slices.Clone(interior)}})
}

// DotGeneral contracts x and y; see DotDims for the result's layout.
func (b *Builder) DotGeneral(x, y Value, dims DotDims) Value {
	tx, ty := b.Type(x), b.Type(y)
	if tx.DType != ty.DType || !tx.DType.IsNumeric() {
		return b.fail(OpDotGeneral, "operands must share a numeric dtype: %v and %v", tx, ty)
	}
	if len(dims.LhsBatch) != len(dims.RhsBatch) || len(dims.LhsContract) != len(dims.RhsContract) {
		return b.fail(OpDotGeneral, "unpaired dimension numbers %+v", dims)
	}
	if !distinctIn(tx.Shape.Rank(), dims.LhsBatch, dims.LhsContract) || !distinctIn(ty.Shape.Rank(), dims.RhsBatch, dims.RhsContract) {
		return b.fail(OpDotGeneral, "dimension numbers %+v do not fit %v and %v", dims, tx, ty)
	}
	var out Shape
	for i := range dims.LhsBatch {
		l, r := tx.Shape[dims.LhsBatch[i]], ty.Shape[dims.RhsBatch[i]]
		if l != r {
			return b.fail(OpDotGeneral, "batch sizes differ: %v and %v", tx, ty)
		}
		out = append(out, l)
	}
	for i := range dims.LhsContract {
		if tx.Shape[dims.LhsContract[i]] != ty.Shape[dims.RhsContract[i]] {
			return b.fail(OpDotGeneral, "contracting sizes differ: %v and %v (dims %+v)", tx, ty, dims)
		}
	}
	out = append(out, freeDims(tx.Shape, dims.LhsBatch, dims.LhsContract)...)
	out = append(out, freeDims(ty.Shape, dims.RhsBatch, dims.RhsContract)...)
	d := DotDims{slices.Clone(dims.LhsBatch), slices.Clone(dims.RhsBatch), slices.Clone(dims.LhsContract), slices.Clone(dims.RhsContract)}
	return b.emit(Instr{Op: OpDotGeneral, Args: []Value{x, y}, Type: TensorType{tx.DType, out}, Dot: &d})
}

// Convolution convolves input with kernel; see ConvAttrs for layouts.
func (b *Builder) Convolution(input, kernel Value, a ConvAttrs) Value {
	ti, tk := b.Type(input), b.Type(kernel)
	if ti.DType != tk.DType || !ti.DType.IsFloat() {
		return b.fail(OpConvolution, "input %v and kernel %v must share a floating dtype", ti, tk)
	}
	ns := ti.Shape.Rank() - 2
	if ns < 1 || tk.Shape.Rank() != ns+2 {
		return b.fail(OpConvolution, "input %v and kernel %v must be [N,spatial...,C] and [spatial...,C,O]", ti, tk)
	}
	a = a.withDefaults(ns)
	if len(a.Strides) != ns || len(a.Padding) != ns || len(a.LhsDilation) != ns || len(a.RhsDilation) != ns {
		return b.fail(OpConvolution, "attributes %+v need %d spatial entries each", a, ns)
	}
	c, g := ti.Shape[ns+1], a.FeatureGroups
	if g < 1 || c%g != 0 || tk.Shape[ns] != c/g || tk.Shape[ns+1]%g != 0 {
		return b.fail(OpConvolution, "channels do not match: input %v, kernel %v, %d feature groups", ti, tk, g)
	}
	out := Shape{ti.Shape[0]}
	for i := range ns {
		if a.Strides[i] < 1 || a.LhsDilation[i] < 1 || a.RhsDilation[i] < 1 {
			return b.fail(OpConvolution, "strides and dilations must be at least 1: %+v", a)
		}
		in := 0
		if ti.Shape[1+i] > 0 {
			in = (ti.Shape[1+i]-1)*a.LhsDilation[i] + 1
		}
		in += a.Padding[i][0] + a.Padding[i][1]
		k := (tk.Shape[i]-1)*a.RhsDilation[i] + 1
		o := 0
		if in >= k {
			o = (in-k)/a.Strides[i] + 1
		}
		out = append(out, o)
	}
	out = append(out, tk.Shape[ns+1])
	return b.emit(Instr{Op: OpConvolution, Args: []Value{input, kernel}, Type: TensorType{ti.DType, out}, Conv: &a})
}

func (a ConvAttrs) withDefaults(ns int) ConvAttrs {
	ones := func(s []int) []int {
		if s != nil {
			return slices.Clone(s)
		}
		o := make([]int, ns)
		for i := range o {
			o[i] = 1
		}
		return o
	}
	a.Strides, a.LhsDilation, a.RhsDilation = ones(a.Strides), ones(a.LhsDilation), ones(a.RhsDilation)
	if a.Padding == nil {
		a.Padding = make([][2]int, ns)
	} else {
		a.Padding = slices.Clone(a.Padding)
	}
	if a.FeatureGroups == 0 {
		a.FeatureGroups = 1
	}
	return a
}

// Reduce folds the given axes away with kind.
func (b *Builder) Reduce(x Value, kind ReduceKind, axes []int) Value {
	t := b.Type(x)
	if kind < ReduceSum || kind > ReduceOr {
		return b.fail(OpReduce, "unknown reduction %v", kind)
	}
	if (kind == ReduceAnd || kind == ReduceOr) != (t.DType == Bool) || (t.DType != Bool && !t.DType.IsNumeric()) {
		return b.fail(OpReduce, "%v reduction does not apply to %v", kind, t)
	}
	seen := make([]bool, t.Shape.Rank())
	for _, a := range axes {
		if a < 0 || a >= t.Shape.Rank() || seen[a] {
			return b.fail(OpReduce, "axes %v invalid for %v", axes, t)
		}
		seen[a] = true
	}
	var out Shape
	for i, d := range t.Shape {
		if !seen[i] {
			out = append(out, d)
		}
	}
	ax := slices.Clone(axes)
	slices.Sort(ax)
	return b.emit(Instr{Op: OpReduce, Args: []Value{x}, Type: TensorType{t.DType, out}, Axes: ax, Reduce: kind})
}

// ReduceWindow slides a window over x, folding each window with kind.
func (b *Builder) ReduceWindow(x Value, kind ReduceKind, w WindowAttrs) Value {
	t := b.Type(x)
	if kind != ReduceSum && kind != ReduceMax && kind != ReduceMin {
		return b.fail(OpReduceWindow, "reduction %v is not supported in windows", kind)
	}
	if !t.DType.IsNumeric() {
		return b.fail(OpReduceWindow, "needs a numeric operand, got %v", t)
	}
	out, wa, err := windowed(t, w)
	if err != nil {
		return b.fail(OpReduceWindow, "%v", err)
	}
	return b.emit(Instr{Op: OpReduceWindow, Args: []Value{x}, Type: TensorType{t.DType, out}, Reduce: kind, Window: &wa})
}

// windowed is the shape of the windows w slides over t, and w with its
// defaults filled (unit strides, no padding).
func windowed(t TensorType, w WindowAttrs) (Shape, WindowAttrs, error) {
	r := t.Shape.Rank()
	if w.Strides == nil {
		w.Strides = make([]int, r)
		for i := range w.Strides {
			w.Strides[i] = 1
		}
	}
	if w.Padding == nil {
		w.Padding = make([][2]int, r)
	}
	if len(w.Dims) != r || len(w.Strides) != r || len(w.Padding) != r {
		return nil, w, fmt.Errorf("window %+v needs %d entries per field for %v", w, r, t)
	}
	out := make(Shape, r)
	for i := range r {
		if w.Dims[i] < 1 || w.Strides[i] < 1 || w.Padding[i][0] < 0 || w.Padding[i][1] < 0 {
			return nil, w, fmt.Errorf("window %+v invalid for %v", w, t)
		}
		in := t.Shape[i] + w.Padding[i][0] + w.Padding[i][1]
		if in >= w.Dims[i] {
			out[i] = (in-w.Dims[i])/w.Strides[i] + 1
		}
	}
	return out, WindowAttrs{slices.Clone(w.Dims), slices.Clone(w.Strides), slices.Clone(w.Padding)}, nil
}

// IsPermutation reports whether p is a permutation of 0..n-1.
func IsPermutation(p []int, n int) bool {
	if len(p) != n {
		return false
	}
	seen := make([]bool, n)
	for _, v := range p {
		if v < 0 || v >= n || seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}

func isIdentity(p []int) bool {
	for i, v := range p {
		if i != v {
			return false
		}
	}
	return true
}

// distinctIn reports whether every index is in [0,rank) and none repeats.
func distinctIn(rank int, lists ...[]int) bool {
	seen := make([]bool, rank)
	for _, l := range lists {
		for _, v := range l {
			if v < 0 || v >= rank || seen[v] {
				return false
			}
			seen[v] = true
		}
	}
	return true
}

func freeDims(s Shape, batch, contract []int) Shape {
	var out Shape
	for i, d := range s {
		if !slices.Contains(batch, i) && !slices.Contains(contract, i) {
			out = append(out, d)
		}
	}
	return out
}

package ir

import "slices"

// Data movement: the ops that place elements without computing on them.

// movementOps rearrange, select or repeat elements.
var movementOps = opDefs{
	{OpBroadcastInDim, OpInfo{Name: "broadcast_in_dim", Arity: 1, Attrs: []string{"Axes"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		dims := in.Axes
		if dims == nil {
			dims = []int{} // nil asks the builder for numpy alignment; an instruction means rank 0
		}
		return b.BroadcastInDim(a[0], in.Type.Shape, dims), nil
	}}}, // operand dim i becomes result dim Axes[i]
	{OpReshape, OpInfo{Name: "reshape", Arity: 1, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		return b.Reshape(a[0], in.Type.Shape), nil
	}}}, // same elements, row-major, new shape
	{OpTranspose, OpInfo{Name: "transpose", Arity: 1, Attrs: []string{"Axes"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		return b.Transpose(a[0], in.Axes), nil
	}}}, // result dim i is operand dim Axes[i]
	{OpSlice, OpInfo{Name: "slice", Arity: 1, Attrs: []string{"Slice"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if in.Slice == nil {
			return 0, missing("slice attributes")
		}
		return b.Slice(a[0], in.Slice.Start, in.Slice.Limit, in.Slice.Strides), nil
	}}},
	{OpConcat, OpInfo{Name: "concatenate", Arity: Variadic, Attrs: []string{"Axes"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		return b.Concat(singleAxis(in), a...), nil
	}}}, // along Axes[0]
	{OpPad, OpInfo{Name: "pad", Arity: 2, Attrs: []string{"Pad"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if in.Pad == nil {
			return 0, missing("pad attributes")
		}
		return b.Pad(a[0], a[1], in.Pad.Low, in.Pad.High, in.Pad.Interior), nil
	}}},
	{OpReverse, OpInfo{Name: "reverse", Arity: 1, Attrs: []string{"Axes"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		return b.Reverse(a[0], in.Axes), nil
	}}}, // reverse the dims in Axes
}

// SliceAttrs select Start[i] <= j < Limit[i], every Strides[i]-th index.
type SliceAttrs struct {
	Start, Limit, Strides []int
}

// PadAttrs add Low and High elements at each end of each dimension and Interior
// elements between neighbours; negative Low/High crop.
type PadAttrs struct {
	Low, High, Interior []int
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

// Reverse reverses x along dims.
func (b *Builder) Reverse(x Value, dims []int) Value {
	t := b.Type(x)
	if !distinctIn(t.Shape.Rank(), dims) {
		return b.fail(OpReverse, "dims %v invalid for %v", dims, t)
	}
	if len(dims) == 0 {
		return x
	}
	d := slices.Clone(dims)
	slices.Sort(d)
	return b.emit(Instr{Op: OpReverse, Args: []Value{x}, Type: TensorType{t.DType, t.Shape.Clone()}, Axes: d})
}

package ir

import (
	"fmt"
	"slices"
)

// Reductions over dimensions and windows with a fixed monoid, and what
// picks an extreme along them.

// reduceOps fold dimensions or windows with a fixed monoid, or find where
// the extreme is.
var reduceOps = opDefs{
	{OpReduce, OpInfo{Name: "reduce", Arity: 1, Attrs: []string{"Reduce", "Axes"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		return b.Reduce(a[0], in.Reduce, in.Axes), nil
	}}}, // reduce Axes with Instr.Reduce
	{OpReduceWindow, OpInfo{Name: "reduce_window", Arity: 1, Attrs: []string{"Reduce", "Window"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if in.Window == nil {
			return 0, missing("window attributes")
		}
		return b.ReduceWindow(a[0], in.Reduce, *in.Window), nil
	}}}, // slide Instr.Window over the operand, reducing with Instr.Reduce
	{OpArgReduce, OpInfo{Name: "arg_reduce", Arity: 1, Attrs: []string{"Reduce", "Axes"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		return b.ArgReduce(a[0], in.Reduce, singleAxis(in), in.Type.DType), nil
	}}}, // index (result dtype) of the first max or min along Axes[0]
	{OpSelectAndScatter, OpInfo{Name: "select_and_scatter", Arity: 2, Attrs: []string{"Compare", "Window"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if in.Window == nil {
			return 0, missing("window attributes")
		}
		return b.SelectAndScatter(a[0], a[1], in.Compare, *in.Window), nil
	}}}, // Args operand, source: adds each source element at its window's first max (GE) or min (LE)
}

// ReduceKind is the monoid a Reduce or ReduceWindow folds with.
type ReduceKind uint8

const (
	ReduceSum ReduceKind = iota + 1
	ReduceProd
	ReduceMax
	ReduceMin
	ReduceAnd
	ReduceOr
)

func (k ReduceKind) String() string {
	switch k {
	case ReduceSum:
		return "sum"
	case ReduceProd:
		return "prod"
	case ReduceMax:
		return "max"
	case ReduceMin:
		return "min"
	case ReduceAnd:
		return "and"
	case ReduceOr:
		return "or"
	}
	return fmt.Sprintf("reduce(%d)", uint8(k))
}

// WindowAttrs describe a reduce_window. Every slice has one entry per operand
// dimension. Padding positions hold the reduction's identity (0 for sum, -inf
// for max), so they never win and never add.
type WindowAttrs struct {
	Dims    []int
	Strides []int
	Padding [][2]int
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

// ArgReduce is the index (of dtype index) of the first max (kind ReduceMax) or
// min (ReduceMin) along axis; NaN counts as the max and the min.
func (b *Builder) ArgReduce(x Value, kind ReduceKind, axis int, index DType) Value {
	t := b.Type(x)
	if (kind != ReduceMax && kind != ReduceMin) || axis < 0 || axis >= t.Shape.Rank() || !t.DType.IsNumeric() || !isIndexType(index) {
		return b.fail(OpArgReduce, "arg %v over axis %d of %v into %v is not defined", kind, axis, t, index)
	}
	if t.Shape[axis] == 0 {
		return b.fail(OpArgReduce, "arg %v over an empty axis %d of %v", kind, axis, t)
	}
	var out Shape
	for i, d := range t.Shape {
		if i != axis {
			out = append(out, d)
		}
	}
	return b.emit(Instr{Op: OpArgReduce, Args: []Value{x}, Type: TensorType{index, out}, Axes: []int{axis}, Reduce: kind})
}

// SelectAndScatter adds each element of source at the first position of its
// window of operand that is the max (dir GE) or min (dir LE); the result has
// operand's type and is zero elsewhere. It is the gradient of max pooling.
func (b *Builder) SelectAndScatter(operand, source Value, dir CompareDir, w WindowAttrs) Value {
	to, ts := b.Type(operand), b.Type(source)
	if dir != CmpGE && dir != CmpLE {
		return b.fail(OpSelectAndScatter, "select must be GE or LE, got %v", dir)
	}
	probe := NewBuilder()
	pooled := probe.ReduceWindow(probe.Parameter(to), ReduceMax, w)
	if probe.err != nil {
		return b.fail(OpSelectAndScatter, "%v", probe.err)
	}
	want := probe.Type(pooled)
	if ts.DType != to.DType || !ts.Shape.Equal(want.Shape) {
		return b.fail(OpSelectAndScatter, "source %v must be %v, the windowed shape of operand %v", ts, want, to)
	}
	wa := probe.prog.Instrs[pooled].Window
	return b.emit(Instr{Op: OpSelectAndScatter, Args: []Value{operand, source}, Type: TensorType{to.DType, to.Shape.Clone()}, Compare: dir, Window: wa})
}

package ir

import (
	"fmt"
	"slices"
)

// The sources: the ops that make a value from nothing but their attributes.

// sourceOps make values from attributes alone.
var sourceOps = opDefs{
	{OpParameter, OpInfo{Name: "parameter", Arity: 0, Attrs: []string{"Param"}, infer: func(b *Builder, p *Program, in Instr, _ []Value) (Value, error) {
		if in.Param < 0 || in.Param >= len(p.Params) {
			return 0, fmt.Errorf("parameter #%d of a program with %d", in.Param, len(p.Params))
		}
		if pt := p.Params[in.Param]; pt.DType != in.Type.DType || !pt.Shape.Equal(in.Type.Shape) {
			return 0, fmt.Errorf("parameter #%d is declared %v but typed %v", in.Param, pt, in.Type)
		}
		return b.Parameter(in.Type), nil
	}}}, // the program's i-th input
	{OpConstant, OpInfo{Name: "constant", Arity: 0, Attrs: []string{"Literal"}, infer: func(b *Builder, _ *Program, in Instr, _ []Value) (Value, error) {
		return b.Constant(in.Type, in.Literal), nil
	}}}, // a literal, row-major, in Instr.Literal
	{OpIota, OpInfo{Name: "iota", Arity: 0, Attrs: []string{"Axes"}, infer: func(b *Builder, _ *Program, in Instr, _ []Value) (Value, error) {
		return b.Iota(in.Type, singleAxis(in)), nil
	}}}, // 0, 1, 2, ... along Instr.Axes[0]
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

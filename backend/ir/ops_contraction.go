package ir

import "slices"

// Contractions: dot_general and convolution.

// contractionOps multiply and sum over dimensions.
var contractionOps = opDefs{
	{OpDotGeneral, OpInfo{Name: "dot_general", Arity: 2, Attrs: []string{"Dot"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if in.Dot == nil {
			return 0, missing("dot dimension numbers")
		}
		return b.DotGeneral(a[0], a[1], *in.Dot), nil
	}}},
	{OpConvolution, OpInfo{Name: "convolution", Arity: 2, Attrs: []string{"Conv"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if in.Conv == nil {
			return 0, missing("convolution attributes")
		}
		return b.Convolution(a[0], a[1], *in.Conv), nil
	}}},
}

// DotDims are dot_general's dimension numbers. The result holds the batch
// dimensions, then the lhs free dimensions, then the rhs free dimensions, each
// in operand order.
type DotDims struct {
	LhsBatch, RhsBatch       []int
	LhsContract, RhsContract []int
}

// ConvAttrs describe a convolution in channels-last layout: the input is
// [N, spatial..., C], the kernel [spatial..., C/FeatureGroups, O] and the
// result [N, spatial'..., O]. Frontends with other layouts transpose around it.
type ConvAttrs struct {
	Strides       []int    // per spatial dim
	Padding       [][2]int // per spatial dim: low, high (after lhs dilation)
	LhsDilation   []int    // per spatial dim; >1 inserts holes in the input (transposed conv)
	RhsDilation   []int    // per spatial dim; >1 spreads the kernel (atrous conv)
	FeatureGroups int      // 1 for ordinary conv; C for depthwise
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

func freeDims(s Shape, batch, contract []int) Shape {
	var out Shape
	for i, d := range s {
		if !slices.Contains(batch, i) && !slices.Contains(contract, i) {
			out = append(out, d)
		}
	}
	return out
}

package ir

import (
	"testing"
)

func tensorOf(d DType, dims ...int) TensorType { return TensorType{DType: d, Shape: Shape(dims)} }

// inferenceCase is one op built on parameters, with the result type the
// builder must infer, or a case the builder must refuse.
type inferenceCase struct {
	op     Op
	name   string
	params []TensorType
	build  func(b *Builder, x []Value) Value
	want   TensorType // zero: the builder must fail
}

func inferenceCases() []inferenceCase {
	f, i32 := F32, I32
	win := WindowAttrs{Dims: []int{2, 2}, Strides: []int{2, 1}, Padding: [][2]int{{0, 1}, {1, 0}}}
	one := func(d DType, dims ...int) []TensorType { return []TensorType{tensorOf(d, dims...)} }
	return []inferenceCase{
		{OpParameter, "parameter", one(f, 2, 3), func(b *Builder, x []Value) Value { return x[0] }, tensorOf(f, 2, 3)},
		{OpConstant, "constant", nil, func(b *Builder, _ []Value) Value { return b.Constant(tensorOf(i32, 2), make([]byte, 8)) }, tensorOf(i32, 2)},
		{OpConstant, "constant of the wrong size", nil, func(b *Builder, _ []Value) Value { return b.Constant(tensorOf(i32, 2), make([]byte, 7)) }, TensorType{}},
		{OpIota, "iota", nil, func(b *Builder, _ []Value) Value { return b.Iota(tensorOf(i32, 3, 4), 1) }, tensorOf(i32, 3, 4)},
		{OpIota, "iota past the rank", nil, func(b *Builder, _ []Value) Value { return b.Iota(tensorOf(i32, 3), 1) }, TensorType{}},
		{OpExp, "unary", one(F16, 4), func(b *Builder, x []Value) Value { return b.Unary(OpExp, x[0]) }, tensorOf(F16, 4)},
		{OpAdd, "binary", []TensorType{tensorOf(f, 2), tensorOf(f, 2)}, func(b *Builder, x []Value) Value { return b.Binary(OpAdd, x[0], x[1]) }, tensorOf(f, 2)},
		{OpAdd, "binary of two shapes", []TensorType{tensorOf(f, 2), tensorOf(f, 3)}, func(b *Builder, x []Value) Value { return b.Binary(OpAdd, x[0], x[1]) }, TensorType{}},
		{OpAnd, "and on floats", []TensorType{tensorOf(f, 2), tensorOf(f, 2)}, func(b *Builder, x []Value) Value { return b.Binary(OpAnd, x[0], x[1]) }, TensorType{}},
		{OpCompare, "compare", []TensorType{tensorOf(f, 2), tensorOf(f, 2)}, func(b *Builder, x []Value) Value { return b.Compare(CmpLT, x[0], x[1]) }, tensorOf(Bool, 2)},
		{OpSelect, "select", []TensorType{tensorOf(Bool, 2), tensorOf(f, 2), tensorOf(f, 2)}, func(b *Builder, x []Value) Value { return b.Select(x[0], x[1], x[2]) }, tensorOf(f, 2)},
		{OpSelect, "select on a float predicate", []TensorType{tensorOf(f, 2), tensorOf(f, 2), tensorOf(f, 2)}, func(b *Builder, x []Value) Value { return b.Select(x[0], x[1], x[2]) }, TensorType{}},
		{OpConvert, "convert", one(f, 3), func(b *Builder, x []Value) Value { return b.Convert(x[0], I8) }, tensorOf(I8, 3)},
		{OpBitcastConvert, "bitcast", one(U32, 3), func(b *Builder, x []Value) Value { return b.BitcastConvert(x[0], f) }, tensorOf(f, 3)},
		{OpBitcastConvert, "bitcast to another width", one(f, 3), func(b *Builder, x []Value) Value { return b.BitcastConvert(x[0], I8) }, TensorType{}},
		{OpShiftLeft, "shift of floats", []TensorType{tensorOf(f, 2), tensorOf(f, 2)}, func(b *Builder, x []Value) Value { return b.Binary(OpShiftLeft, x[0], x[1]) }, TensorType{}},
		{OpXor, "xor of bools", []TensorType{tensorOf(Bool, 2), tensorOf(Bool, 2)}, func(b *Builder, x []Value) Value { return b.Binary(OpXor, x[0], x[1]) }, tensorOf(Bool, 2)},
		{OpReal, "real", one(C64, 2, 3), func(b *Builder, x []Value) Value { return b.Real(x[0]) }, tensorOf(f, 2, 3)},
		{OpReal, "real of a float", one(f, 2), func(b *Builder, x []Value) Value { return b.Real(x[0]) }, TensorType{}},
		{OpImag, "imag of a scalar", one(C64), func(b *Builder, x []Value) Value { return b.Imag(x[0]) }, tensorOf(f)},
		{OpComplex, "complex of empty parts", []TensorType{tensorOf(f, 2, 0), tensorOf(f, 2, 0)}, func(b *Builder, x []Value) Value { return b.Complex(x[0], x[1]) }, tensorOf(C64, 2, 0)},
		{OpComplex, "complex of two shapes", []TensorType{tensorOf(f, 2), tensorOf(f, 3)}, func(b *Builder, x []Value) Value { return b.Complex(x[0], x[1]) }, TensorType{}},
		{OpComplex, "complex of float16 parts", []TensorType{tensorOf(F16, 2), tensorOf(F16, 2)}, func(b *Builder, x []Value) Value { return b.Complex(x[0], x[1]) }, TensorType{}},
		{OpBroadcastInDim, "broadcast", one(f, 3), func(b *Builder, x []Value) Value { return b.BroadcastInDim(x[0], Shape{2, 3}, []int{1}) }, tensorOf(f, 2, 3)},
		{OpBroadcastInDim, "broadcast to a mismatched dim", one(f, 3), func(b *Builder, x []Value) Value { return b.BroadcastInDim(x[0], Shape{3, 2}, []int{1}) }, TensorType{}},
		{OpReshape, "reshape", one(f, 2, 3), func(b *Builder, x []Value) Value { return b.Reshape(x[0], Shape{3, 2}) }, tensorOf(f, 3, 2)},
		{OpReshape, "reshape to another size", one(f, 2, 3), func(b *Builder, x []Value) Value { return b.Reshape(x[0], Shape{4}) }, TensorType{}},
		{OpTranspose, "transpose", one(f, 2, 3, 4), func(b *Builder, x []Value) Value { return b.Transpose(x[0], []int{2, 0, 1}) }, tensorOf(f, 4, 2, 3)},
		{OpTranspose, "transpose by a non-permutation", one(f, 2, 3), func(b *Builder, x []Value) Value { return b.Transpose(x[0], []int{0, 0}) }, TensorType{}},
		{OpSlice, "slice", one(f, 10), func(b *Builder, x []Value) Value { return b.Slice(x[0], []int{1}, []int{8}, []int{3}) }, tensorOf(f, 3)},
		{OpConcat, "concatenate", []TensorType{tensorOf(f, 2, 3), tensorOf(f, 2, 1)}, func(b *Builder, x []Value) Value { return b.Concat(1, x[0], x[1]) }, tensorOf(f, 2, 4)},
		{OpPad, "pad", one(f, 3), func(b *Builder, x []Value) Value {
			return b.Pad(x[0], b.Scalar(f, 0), []int{1}, []int{-1}, []int{1})
		}, tensorOf(f, 5)},
		{OpDotGeneral, "batched matmul", []TensorType{tensorOf(f, 5, 2, 3), tensorOf(f, 5, 3, 4)}, func(b *Builder, x []Value) Value {
			return b.DotGeneral(x[0], x[1], DotDims{LhsBatch: []int{0}, RhsBatch: []int{0}, LhsContract: []int{2}, RhsContract: []int{1}})
		}, tensorOf(f, 5, 2, 4)},
		{OpDotGeneral, "contracting unequal dims", []TensorType{tensorOf(f, 2, 3), tensorOf(f, 4, 5)}, func(b *Builder, x []Value) Value {
			return b.DotGeneral(x[0], x[1], DotDims{LhsContract: []int{1}, RhsContract: []int{0}})
		}, TensorType{}},
		{OpConvolution, "convolution", []TensorType{tensorOf(f, 1, 5, 5, 2), tensorOf(f, 3, 3, 2, 4)}, func(b *Builder, x []Value) Value {
			return b.Convolution(x[0], x[1], ConvAttrs{Strides: []int{2, 2}, Padding: [][2]int{{1, 1}, {1, 1}}})
		}, tensorOf(f, 1, 3, 3, 4)},
		{OpReduce, "reduce", one(f, 2, 3, 4), func(b *Builder, x []Value) Value { return b.Reduce(x[0], ReduceSum, []int{2, 0}) }, tensorOf(f, 3)},
		{OpReduce, "reduce over an axis twice", one(f, 2, 3), func(b *Builder, x []Value) Value { return b.Reduce(x[0], ReduceSum, []int{1, 1}) }, TensorType{}},
		{OpReduceWindow, "reduce_window", one(f, 4, 4), func(b *Builder, x []Value) Value { return b.ReduceWindow(x[0], ReduceMax, win) }, tensorOf(f, 2, 4)},
		{OpReverse, "reverse", one(f, 2, 3), func(b *Builder, x []Value) Value { return b.Reverse(x[0], []int{1}) }, tensorOf(f, 2, 3)},
		{OpGather, "gather rows", []TensorType{tensorOf(f, 5, 3), tensorOf(i32, 4, 1)}, func(b *Builder, x []Value) Value {
			return b.Gather(x[0], x[1], GatherDims{OffsetDims: []int{1}, CollapsedSliceDims: []int{0}, StartIndexMap: []int{0}, IndexVectorDim: 1, SliceSizes: []int{1, 3}})
		}, tensorOf(f, 4, 3)},
		{OpScatter, "scatter rows", []TensorType{tensorOf(f, 5, 3), tensorOf(i32, 4, 1), tensorOf(f, 4, 3)}, func(b *Builder, x []Value) Value {
			return b.Scatter(x[0], x[1], x[2], ScatterDims{UpdateWindowDims: []int{1}, InsertedWindowDims: []int{0}, ScatterDimsToOperandDims: []int{0}, IndexVectorDim: 1, Kind: ScatterAdd})
		}, tensorOf(f, 5, 3)},
		{OpSort, "sort", one(f, 3, 4), func(b *Builder, x []Value) Value { return b.Sort(x[0], SortAttrs{Dim: 1}) }, tensorOf(f, 3, 4)},
		{OpArgSort, "arg_sort", one(f, 3, 4), func(b *Builder, x []Value) Value { return b.ArgSort(x[0], SortAttrs{Dim: 0}, I64) }, tensorOf(I64, 3, 4)},
		{OpArgReduce, "arg_reduce", one(f, 3, 4), func(b *Builder, x []Value) Value { return b.ArgReduce(x[0], ReduceMax, 1, i32) }, tensorOf(i32, 3)},
		{OpSelectAndScatter, "select_and_scatter", []TensorType{tensorOf(f, 4, 4), tensorOf(f, 2, 4)}, func(b *Builder, x []Value) Value {
			return b.SelectAndScatter(x[0], x[1], CmpGE, win)
		}, tensorOf(f, 4, 4)},
		{OpRng, "rng", []TensorType{tensorOf(I64, 1), tensorOf(I64, 2)}, func(b *Builder, x []Value) Value {
			return b.Rng(x[0], x[1], RngUniform, tensorOf(f, 3, 2))
		}, tensorOf(f, 3, 2)},
		{OpFFT, "real fft", one(f, 2, 8), func(b *Builder, x []Value) Value { return b.FFT(x[0], FFTReal, []int{8}) }, tensorOf(C64, 2, 5)},
	}
}

// TestBuilderInference: every op's result type, and refusals, from the
// builder itself; every op of the IR has a case here or in region_test.go.
func TestBuilderInference(t *testing.T) {
	covered := map[Op]bool{OpWhile: true, OpCase: true, OpCall: true, OpGetResult: true, OpReduceRegion: true, OpSortRegion: true, // region_test.go
		OpScatterRegion: true, OpReduceWindowRegion: true, OpSelectAndScatterRegion: true,
		OpHostCall: true} // ops_hostcall_test.go
	for _, c := range linalgInferenceCases() { // ops_linalg_test.go
		covered[c.op] = true
	}
	for _, c := range inferenceCases() {
		b := NewBuilder()
		xs := make([]Value, len(c.params))
		for i, p := range c.params {
			xs[i] = b.Parameter(p)
		}
		v := c.build(b, xs)
		if c.want.DType == Invalid {
			if b.Err() == nil {
				t.Errorf("%s: the builder accepted it as %v", c.name, b.Type(v))
			}
			continue
		}
		if err := b.Err(); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got := b.Type(v)
		if got.DType != c.want.DType || !got.Shape.Equal(c.want.Shape) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if op := b.prog.Instrs[v].Op; op != c.op {
			t.Errorf("%s: built %s, want %s", c.name, op, c.op)
		}
		p, err := b.Build(v)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if err := Verify(p); err != nil {
			t.Errorf("%s: the built program does not verify: %v", c.name, err)
		}
		covered[c.op] = true
	}
	for _, op := range Ops() {
		if !covered[op] && !op.IsUnary() && !op.IsBinary() {
			t.Errorf("%s has no inference case", op)
		}
	}
}

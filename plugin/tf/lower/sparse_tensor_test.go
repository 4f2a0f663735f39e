package lower

import (
	"slices"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

// Shape cases, errors and results of the sparse-tensor ops
// (sparse_tensor.go), the expected values taken from TensorFlow 2.21's CPU
// kernels for the same inputs.

// rawOf is the bytes of integer tensors as a ReadInputs map holds them.
func rawOf(kv ...any) map[int][]byte {
	m := map[int][]byte{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(int)] = kv[i+1].(eval.Tensor).Bytes()
	}
	return m
}

func iv(d ir.DType, s ir.Shape, xs ...int64) eval.Tensor {
	v := eval.New(ir.TensorType{DType: d, Shape: s})
	copy(v.I, xs)
	return v
}

func i64v(s ir.Shape, xs ...int64) eval.Tensor { return iv(ir.I64, s, xs...) }

// runSparse lowers op with its read inputs' bytes and host inputs' values
// taken from ins, and evaluates it.
func runSparse(t *testing.T, op string, a attrs, ins ...eval.Tensor) ([]eval.Tensor, error) {
	t.Helper()
	k, ok := Lookup(op)
	if !ok {
		t.Fatalf("%s is not registered", op)
	}
	types := make([]ir.TensorType, len(ins))
	host := map[int][]int64{}
	raw := map[int][]byte{}
	var args []eval.Tensor
	for i, in := range ins {
		types[i] = in.Type
		if k.IsHostInput(nil, i, len(ins)) {
			host[i] = slices.Clone(in.I)
			continue
		}
		if k.IsReadInput(i) {
			raw[i] = in.Bytes()
		}
		args = append(args, in)
	}
	if a.Attrs == nil {
		a = A()
	}
	l, err := k.Build(a.Attrs, types, host, raw)
	if err != nil {
		return nil, err
	}
	return eval.Run(l.Program, args)
}

func init() {
	familyShapeCases = append(familyShapeCases, sparseTensorShapeCases)
	familyMultiCases["SparseTensorDenseMatMul"] = func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
		ind := iv(combo["Tindices"], ir.Shape{2, 2}, 0, 1, 2, 0)
		return []ir.TensorType{ind.Type, tt(combo["T"], 2), i64(2), tt(combo["T"], 3, 4)}, h(2, v(3, 3)), rawOf(0, ind)
	}
}

func sparseTensorShapeCases() []shapeCase {
	var cs []shapeCase
	// Named, so that TestEveryDTypeCombinationBuilds, which swaps the
	// dtype of the first input's kind, leaves them to
	// TestSparseTensorDTypesBuild.
	add := func(c shapeCase) { c.name = c.op + " (sparse)"; cs = append(cs, c) }
	ind := i64v(ir.Shape{3, 2}, 0, 1, 2, 3, 1, 0)
	add(shapeCase{op: "SparseTensorDenseMatMul", in: []ir.TensorType{i64(3, 2), f32(3), i64(2), f32(4, 5)}, host: h(2, v(3, 4)), raw: rawOf(0, ind),
		out: []ir.TensorType{f32(3, 5)}})
	add(shapeCase{op: "SparseReshape", in: []ir.TensorType{i64(3, 2), i64(2), i64(3)}, host: h(1, v(3, 4), 2, v(2, -1, 3)),
		out: []ir.TensorType{i64(3, 3), i64(3)}})
	add(shapeCase{op: "SparseSlice", in: []ir.TensorType{i64(3, 2), f32(3), i64(2), i64(2), i64(2)}, host: h(2, v(3, 4), 3, v(1, 0), 4, v(2, 4)),
		raw: rawOf(0, ind), out: []ir.TensorType{i64(2, 2), f32(2), i64(2)}})
	add(shapeCase{op: "SparseSliceGrad", in: []ir.TensorType{f32(1), i64(3, 2), i64(2), i64(1, 2)},
		raw: rawOf(1, ind, 2, i64v(ir.Shape{2}, 1, 1), 3, i64v(ir.Shape{1, 2}, 1, 2)), out: []ir.TensorType{f32(3)}})
	add(shapeCase{op: "SparseReorder", in: []ir.TensorType{i64(3, 2), f32(3), i64(2)}, out: []ir.TensorType{i64(3, 2), f32(3)}})
	add(shapeCase{op: "SparseConcat", attrs: A().I("concat_dim", 1), in: []ir.TensorType{i64(3, 2), i64(1, 2), f32(3), f32(1), i64(2), i64(2)},
		host: h(4, v(3, 4), 5, v(3, 1)), out: []ir.TensorType{i64(4, 2), f32(4), i64(2)}})
	add(shapeCase{op: "SparseSplit", attrs: A().I("num_split", 2), in: []ir.TensorType{i64(), i64(3, 2), f32(3), i64(2)}, host: h(0, 0, 3, v(3, 4)),
		raw: rawOf(1, ind), out: []ir.TensorType{i64(2, 2), i64(1, 2), f32(2), f32(1), i64(2), i64(2)}})
	add(shapeCase{op: "SparseFillEmptyRows", in: []ir.TensorType{i64(3, 2), f32(3), i64(2), f32()}, host: h(2, v(5, 4)), raw: rawOf(0, ind),
		out: []ir.TensorType{i64(5, 2), f32(5), boolT(5), i64(3)}})
	add(shapeCase{op: "RaggedFillEmptyRows", in: []ir.TensorType{i64(3), f32(3), i64(), f32()}, host: h(2, 4), raw: rawOf(0, i64v(ir.Shape{3}, 0, 0, 2)),
		out: []ir.TensorType{i64(5), f32(5), boolT(4), i64(3)}})
	for _, op := range []string{"SparseFillEmptyRowsGrad", "RaggedFillEmptyRowsGrad"} {
		add(shapeCase{op: op, in: []ir.TensorType{i64(2), f32(4)}, raw: rawOf(0, i64v(ir.Shape{2}, 3, 0)), out: []ir.TensorType{f32(2), f32()}})
	}
	return cs
}

func TestSparseTensorErrors(t *testing.T) {
	f := func(xs ...float64) eval.Tensor { return fv(ir.Shape{len(xs)}, xs...) }
	for _, c := range []struct {
		op   string
		a    attrs
		in   []eval.Tensor
		want []string
	}{
		{"SparseTensorDenseMatMul", A(), []eval.Tensor{i64v(ir.Shape{1, 2}, 0, 5), f(1), i64v(ir.Shape{2}, 2, 3), fv(ir.Shape{3, 2}, 0, 0, 0, 0, 0, 0)}, []string{"k (5)", "index[0,1]", ">=3"}},
		{"SparseTensorDenseMatMul", A(), []eval.Tensor{i64v(ir.Shape{1, 2}, 4, 1), f(1), i64v(ir.Shape{2}, 2, 3), fv(ir.Shape{3, 2}, 0, 0, 0, 0, 0, 0)}, []string{"m (4)", ">=2"}},
		{"SparseTensorDenseMatMul", A().B("adjoint_b", true), []eval.Tensor{i64v(ir.Shape{1, 2}, 0, 1), f(1), i64v(ir.Shape{2}, 2, 3), fv(ir.Shape{3, 2}, 0, 0, 0, 0, 0, 0)}, []string{"inner dimension", "3 vs. 2"}},
		{"SparseReshape", A(), []eval.Tensor{i64v(ir.Shape{1, 2}, 0, 1), i64v(ir.Shape{2}, 2, 4), i64v(ir.Shape{2}, 3, -1)}, []string{"8 dense values", "multiple of 3"}},
		{"SparseReshape", A(), []eval.Tensor{i64v(ir.Shape{1, 2}, 0, 1), i64v(ir.Shape{2}, 2, 4), i64v(ir.Shape{2}, -1, -1)}, []string{"only one output dimension"}},
		{"SparseReshape", A(), []eval.Tensor{i64v(ir.Shape{1, 3}, 0, 1, 1), i64v(ir.Shape{2}, 2, 4), i64v(ir.Shape{1}, 8)}, []string{"rank must match"}},
		{"SparseSlice", A(), []eval.Tensor{i64v(ir.Shape{1, 2}, 0, 1), f(1), i64v(ir.Shape{2}, 2, 4), i64v(ir.Shape{2}, 0, 0), i64v(ir.Shape{2}, -1, 2)}, []string{"non-negative size", "-1"}},
		{"SparseSlice", A(), []eval.Tensor{i64v(ir.Shape{1, 2}, 0, 1), f(1, 2), i64v(ir.Shape{2}, 2, 4), i64v(ir.Shape{2}, 0, 0), i64v(ir.Shape{2}, 1, 2)}, []string{"indices (1)", "values (2)"}},
		{"SparseSliceGrad", A(), []eval.Tensor{f(5, 6), i64v(ir.Shape{3, 2}, 0, 1, 1, 3, 1, 2), i64v(ir.Shape{2}, 1, 1), i64v(ir.Shape{2, 2}, 0, 0, 0, 1)}, []string{"aren't all propagated", "used: 0"}},
		{"SparseReorder", A(), []eval.Tensor{i64v(ir.Shape{1, 2}, 1, 1), f(1), i64v(ir.Shape{3}, 2, 3, 4)}, []string{"index rank (2)", "shape rank (3)"}},
		{"SparseConcat", A().I("concat_dim", 2), []eval.Tensor{i64v(ir.Shape{1, 2}, 1, 1), i64v(ir.Shape{1, 2}, 0, 1), f(1), f(3), i64v(ir.Shape{2}, 2, 3), i64v(ir.Shape{2}, 2, 2)}, []string{"range [-2, 2)", "got 2"}},
		{"SparseConcat", A().I("concat_dim", 1), []eval.Tensor{i64v(ir.Shape{1, 2}, 1, 1), i64v(ir.Shape{1, 2}, 0, 1), f(1, 3), f(3), i64v(ir.Shape{2}, 2, 3), i64v(ir.Shape{2}, 2, 2)}, []string{"indices = 1, values = 2"}},
		{"SparseConcat", A().I("concat_dim", 1), []eval.Tensor{i64v(ir.Shape{1, 2}, 1, 1), i64v(ir.Shape{1, 2}, 0, 1), f(1), f(3), i64v(ir.Shape{2}, 2, 3), i64v(ir.Shape{2}, 3, 2)}, []string{"shapes must match", "expected 2 for dimension 0 but got 3 at position 1"}},
		{"SparseSplit", A().I("num_split", 2), []eval.Tensor{i64v(nil, 1), i64v(ir.Shape{2, 2}, 7, 1, 1, 1), f(1, 2), i64v(ir.Shape{2}, 2, 4)}, []string{"indices[0, :] = [7, 1]", "out of bounds"}},
		{"SparseSplit", A().I("num_split", 3), []eval.Tensor{i64v(nil, 0), i64v(ir.Shape{1, 2}, 1, 1), f(1), i64v(ir.Shape{2}, 2, 4)}, []string{"num_split", "(2), got 3"}},
		{"SparseFillEmptyRows", A(), []eval.Tensor{i64v(ir.Shape{1, 2}, 5, 1), f(1), i64v(ir.Shape{2}, 5, 3), fv(nil, 9)}, []string{"indices(0, 0) is invalid: 5 >= 5"}},
		{"SparseFillEmptyRows", A(), []eval.Tensor{i64v(ir.Shape{1, 3}, 1, 1, 0), f(1), i64v(ir.Shape{2}, 2, 2), fv(nil, 9)}, []string{"`dense_shape` (2)", "`indices` (3)"}},
		{"RaggedFillEmptyRows", A(), []eval.Tensor{i64v(ir.Shape{1}, -1), f(1), i64v(nil, 5), fv(nil, 9)}, []string{"indices(0, 0) is invalid: -1 >= 5"}},
		{"SparseFillEmptyRowsGrad", A(), []eval.Tensor{i64v(ir.Shape{1}, 4), f(1, 2, 3, 4)}, []string{"[0, 4)", "got 4"}},
	} {
		_, err := runSparse(t, c.op, c.a, c.in...)
		if err == nil {
			t.Errorf("%s: no error", c.op)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, c.op+": ") || strings.Contains(msg, "internal error") {
			t.Errorf("%s: error %q does not start with the op, or is internal", c.op, msg)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: error %q does not mention %q", c.op, msg, w)
			}
		}
	}
}

func expectInts(t *testing.T, what string, got eval.Tensor, want ...int64) {
	t.Helper()
	if !slices.Equal(got.I, want) {
		t.Errorf("%s: got %v, want %v", what, got.I, want)
	}
}

// TestSparseTensorResults checks the ops against TensorFlow's CPU on small
// unsorted inputs with empty rows and out-of-bounds indices where the op
// accepts them (the expected values are the CPU's).
func TestSparseTensorResults(t *testing.T) {
	f := func(xs ...float64) eval.Tensor { return fv(ir.Shape{len(xs)}, xs...) }
	must := func(out []eval.Tensor, err error) []eval.Tensor {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	out := must(runSparse(t, "SparseSplit", A().I("num_split", 3), i64v(nil, 1), i64v(ir.Shape{4, 2}, 1, 3, 0, 0, 1, 1, 0, 2), f(1, 2, 3, 4), i64v(ir.Shape{2}, 2, 5)))
	expectInts(t, "SparseSplit indices 0", out[0], 0, 0, 1, 1)
	expectInts(t, "SparseSplit indices 1", out[1], 1, 1, 0, 0)
	expectClose(t, "SparseSplit values 0", out[3], []float64{2, 3}, 0)
	expectClose(t, "SparseSplit values 1", out[4], []float64{1, 4}, 0)
	expectInts(t, "SparseSplit shape 2", out[8], 2, 1)

	out = must(runSparse(t, "SparseSlice", A(), i64v(ir.Shape{2, 2}, 0, 1, 1, 3), f(1, 2), i64v(ir.Shape{2}, 2, 4), i64v(ir.Shape{2}, -1, 0), i64v(ir.Shape{2}, 2, 2)))
	expectInts(t, "SparseSlice indices", out[0], 1, 1)
	expectClose(t, "SparseSlice values", out[1], []float64{1}, 0)
	expectInts(t, "SparseSlice shape", out[2], 2, 2)
	out = must(runSparse(t, "SparseSlice", A(), i64v(ir.Shape{2, 2}, 0, 1, 1, 3), f(1, 2), i64v(ir.Shape{2}, 2, 4), i64v(ir.Shape{2}, 3, 0), i64v(ir.Shape{2}, 2, 2)))
	expectInts(t, "SparseSlice past the end shape", out[2], 0, 2)

	out = must(runSparse(t, "SparseReorder", A(), i64v(ir.Shape{4, 2}, 1, 7, 0, 0, -1, 1, 0, 2), f(1, 2, 3, 4), i64v(ir.Shape{2}, 2, 3)))
	expectInts(t, "SparseReorder indices", out[0], -1, 1, 0, 0, 0, 2, 1, 7)
	expectClose(t, "SparseReorder values", out[1], []float64{3, 2, 4, 1}, 0)

	out = must(runSparse(t, "SparseConcat", A().I("concat_dim", 1), i64v(ir.Shape{2, 2}, 1, 1, 0, 0), i64v(ir.Shape{1, 2}, 0, 1), f(1, 2), f(3),
		i64v(ir.Shape{2}, 2, 3), i64v(ir.Shape{2}, 2, 2)))
	expectInts(t, "SparseConcat indices", out[0], 0, 0, 0, 4, 1, 1)
	expectClose(t, "SparseConcat values", out[1], []float64{2, 3, 1}, 0)
	expectInts(t, "SparseConcat shape", out[2], 2, 5)

	out = must(runSparse(t, "SparseFillEmptyRows", A(), i64v(ir.Shape{4, 2}, 3, 1, 0, 0, 3, 0, 1, 2), f(1, 2, 3, 4), i64v(ir.Shape{2}, 5, 3), fv(nil, 9)))
	expectInts(t, "SparseFillEmptyRows indices", out[0], 0, 0, 1, 2, 2, 0, 3, 1, 3, 0, 4, 0)
	expectClose(t, "SparseFillEmptyRows values", out[1], []float64{2, 4, 9, 1, 3, 9}, 0)
	expectInts(t, "SparseFillEmptyRows empty rows", out[2], 0, 0, 1, 0, 1)
	expectInts(t, "SparseFillEmptyRows reverse map", out[3], 3, 0, 4, 1)

	out = must(runSparse(t, "SparseFillEmptyRowsGrad", A(), i64v(ir.Shape{2}, 2, 2), f(1, 2, 3, 4)))
	expectClose(t, "SparseFillEmptyRowsGrad d_values", out[0], []float64{3, 3}, 0)
	expectClose(t, "SparseFillEmptyRowsGrad d_default_value", out[1], []float64{7}, 0)

	out = must(runSparse(t, "SparseSliceGrad", A(), f(5, 6), i64v(ir.Shape{3, 2}, 0, 1, 1, 3, 1, 2), i64v(ir.Shape{2}, 1, 1), i64v(ir.Shape{2, 2}, 0, 2, 0, 1)))
	expectClose(t, "SparseSliceGrad", out[0], []float64{0, 5, 6}, 0)

	out = must(runSparse(t, "SparseReshape", A(), i64v(ir.Shape{2, 2}, 0, 9, -1, 3), i64v(ir.Shape{2}, 2, 4), i64v(ir.Shape{2}, 4, 2)))
	expectInts(t, "SparseReshape out of bounds", out[0], 4, 1, 0, -1)

	// Duplicate entries add up.
	out = must(runSparse(t, "SparseTensorDenseMatMul", A().B("adjoint_a", true), iv(ir.I32, ir.Shape{3, 2}, 1, 0, 1, 0, 0, 2), f(1, 2, 3),
		i64v(ir.Shape{2}, 2, 3), fv(ir.Shape{2, 2}, 1, 2, 3, 4)))
	expectClose(t, "SparseTensorDenseMatMul", out[0], []float64{9, 12, 0, 0, 3, 6}, 0)
}

// TestSparseTensorDTypesBuild lowers every registration of the ops with
// one type attribute at their shape case, the values' dtype swapped in.
func TestSparseTensorDTypesBuild(t *testing.T) {
	valueInputs := map[string][]int{"SparseSlice": {1}, "SparseSliceGrad": {0}, "SparseReorder": {1}, "SparseConcat": {2, 3},
		"SparseSplit": {2}, "SparseFillEmptyRows": {1, 3}, "RaggedFillEmptyRows": {1, 3}, "SparseFillEmptyRowsGrad": {1}, "RaggedFillEmptyRowsGrad": {1}}
	for _, c := range sparseTensorShapeCases() {
		k, _ := Lookup(c.op)
		if len(k.Constraints) != 1 {
			continue
		}
		for _, d := range k.Constraints[0].DTypes {
			in := slices.Clone(c.in)
			for _, i := range valueInputs[c.op] {
				in[i].DType = d
			}
			a := c.attrs.Attrs
			if a == nil {
				a = NewAttrs()
			}
			if _, err := buildRaw(t, c.op, a, in, c.host, c.raw); err != nil {
				t.Errorf("%s T=%v: %v", c.op, d, err)
			}
		}
	}
}

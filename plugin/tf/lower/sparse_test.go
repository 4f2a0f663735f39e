package lower

import (
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

func init() {
	familyShapeCases = append(familyShapeCases, sparseShapeCases)
	for _, name := range []string{"Sum", "Mean", "SqrtN"} {
		familyMultiCases["SparseSegment"+name] = func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
			s := combo["Tsegmentids"]
			return []ir.TensorType{tt(combo["T"], 5, 2), tt(combo["Tidx"], 3), tt(s, 3)}, nil, map[int][]byte{2: make([]byte, 3*s.Size())}
		}
		familyMultiCases["SparseSegment"+name+"WithNumSegments"] = func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
			return []ir.TensorType{tt(combo["T"], 5, 2), tt(combo["Tidx"], 3), tt(combo["Tsegmentids"], 3), i32()}, h(3, 4), nil
		}
		familyMultiCases["SparseSegment"+name+"Grad"] = func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
			return []ir.TensorType{tt(combo["T"], 4, 2), tt(combo["Tidx"], 3), tt(combo["Tsegmentids"], 3), i32()}, h(3, 6), nil
		}
		familyMultiCases["SparseSegment"+name+"GradV2"] = func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
			i := combo["Tidx"]
			return []ir.TensorType{tt(combo["T"], 4, 2), tt(i, 3), tt(combo["Tsegmentids"], 3), i32()}, h(3, 6), map[int][]byte{1: make([]byte, 3*i.Size())}
		}
	}
	familyMultiCases["SparseToDense"] = func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
		return []ir.TensorType{tt(combo["Tindices"], 3, 2), tt(combo["Tindices"], 2), tt(combo["T"], 3), tt(combo["T"])}, h(1, v(4, 5)), nil
	}
}

func sparseShapeCases() []shapeCase {
	var cs []shapeCase
	for _, name := range []string{"Sum", "Mean", "SqrtN"} {
		cs = append(cs,
			shapeCase{op: "SparseSegment" + name, in: []ir.TensorType{f32(5, 3), i32(4), i64(4)}, raw: map[int][]byte{2: i64bytes(0, 0, 2, 3)}, out: []ir.TensorType{f32(4, 3)}},
			shapeCase{op: "SparseSegment" + name + "WithNumSegments", in: []ir.TensorType{f32(5, 3), i32(4), i32(4), i64()}, host: h(3, 7), out: []ir.TensorType{f32(7, 3)}},
			shapeCase{op: "SparseSegment" + name + "Grad", in: []ir.TensorType{f32(3, 2), i64(4), i32(4), i32()}, host: h(3, 9), out: []ir.TensorType{f32(9, 2)}},
			shapeCase{op: "SparseSegment" + name + "GradV2", in: []ir.TensorType{f32(3, 2), i32(4), i32(4), i32()}, host: h(3, 9),
				raw: map[int][]byte{1: i32bytes(5, 1, 5, 8)}, out: []ir.TensorType{f32(3, 2), i32(3)}},
		)
	}
	cs = append(cs, shapeCase{op: "SparseToDense", in: []ir.TensorType{i64(3, 2), i64(2), f32(3), f32()}, host: h(1, v(4, 5)), out: []ir.TensorType{f32(4, 5)}},
		shapeCase{name: "SparseToDense scalar index", op: "SparseToDense", in: []ir.TensorType{i32(), i32(1), f32(), f32()}, host: h(1, v(4)), out: []ir.TensorType{f32(4)}})
	return cs
}

func i64bytes(xs ...int64) []byte {
	b := make([]byte, 0, 8*len(xs))
	for _, x := range xs {
		for i := range 8 {
			b = append(b, byte(uint64(x)>>(8*i)))
		}
	}
	return b
}

func TestSparseSegments(t *testing.T) {
	data := fv(ir.Shape{4, 1}, 1, 2, 4, 8)
	idx := val(ir.I32, ir.Shape{4}, 0, 1, 3, 3)
	seg := val(ir.I32, ir.Shape{4}, 0, 0, 2, 2)
	raw := map[int][]byte{2: seg.Bytes()}
	for op, want := range map[string][]float64{"SparseSegmentSum": {3, 0, 16}, "SparseSegmentMean": {1.5, 0, 8}, "SparseSegmentSqrtN": {3 / 1.4142135, 0, 16 / 1.4142135}} {
		out, err := runRaw(t, op, A(), []eval.Tensor{data, idx, seg}, nil, raw)
		if err != nil {
			t.Fatal(err)
		}
		expectClose(t, op, out[0], want, 1e-6)
	}
	grad := fv(ir.Shape{3, 1}, 1, 10, 100)
	out, err := runRaw(t, "SparseSegmentMeanGradV2", A(), []eval.Tensor{grad, idx, seg, val(ir.I32, nil, 6)}, h(3, 6), map[int][]byte{1: idx.Bytes()})
	if err != nil {
		t.Fatal(err)
	}
	// Rows 0 and 1 each get half of segment 0's gradient; row 3 both halves of segment 2's.
	expectClose(t, "SparseSegmentMeanGradV2 output", out[0], []float64{0.5, 0.5, 100}, 1e-6)
	expectClose(t, "SparseSegmentMeanGradV2 indices", out[1], []float64{0, 1, 3}, 0)
	out = run(t, "SparseSegmentSumGrad", A(), grad, idx, seg, val(ir.I32, nil, 5))
	expectClose(t, "SparseSegmentSumGrad", out[0], []float64{1, 1, 0, 200, 0}, 0)
}

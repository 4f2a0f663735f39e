package lower

import (
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	familyShapeCases = append(familyShapeCases, random2ShapeCases)
	v1 := func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
		return []ir.TensorType{tt(combo["T"], 2), tt(combo["Tseed"], 2)}, h(0, v(3, 4), 1, v(7, -9)), nil
	}
	for _, op := range []string{"StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal", "StatelessRandomUniformFullInt"} {
		familyMultiCases[op] = v1
	}
	familyMultiCases["StatelessRandomUniformInt"] = func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
		return []ir.TensorType{tt(combo["T"], 2), tt(combo["Tseed"], 2), tt(combo["dtype"]), tt(combo["dtype"])}, h(0, v(3, 4), 1, v(7, -9), 2, -3, 3, 8), nil
	}
	familyMultiCases["StatelessMultinomial"] = func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
		return []ir.TensorType{tt(combo["T"], 2, 4), i32(), tt(combo["Tseed"], 2)}, h(1, 5, 2, v(1, 2)), nil
	}
	familyMultiCases["Multinomial"] = func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
		return []ir.TensorType{tt(combo["T"], 2, 4), i32()}, h(1, 5), nil
	}
}

func random2ShapeCases() []shapeCase {
	f := A().T("dtype", ir.F32)
	seed := h(0, v(32, 10), 1, v(17, 42))
	return []shapeCase{
		{op: "StatelessRandomUniform", attrs: f, in: []ir.TensorType{i32(2), i64(2)}, host: seed, out: []ir.TensorType{f32(32, 10)}},
		{op: "StatelessRandomNormal", attrs: f, in: []ir.TensorType{i32(2), i64(2)}, host: seed, out: []ir.TensorType{f32(32, 10)}},
		{op: "StatelessTruncatedNormal", attrs: f, in: []ir.TensorType{i64(2), i32(2)}, host: seed, out: []ir.TensorType{f32(32, 10)}},
		{op: "StatelessRandomUniformFullInt", attrs: A().T("dtype", ir.I64), in: []ir.TensorType{i32(2), i64(2)}, host: seed, out: []ir.TensorType{i64(32, 10)}},
		{op: "StatelessRandomUniformInt", attrs: A().T("dtype", ir.I32), in: []ir.TensorType{i32(2), i64(2), i32(), i32()},
			host: h(0, v(32, 10), 1, v(17, 42), 2, -5, 3, 5), out: []ir.TensorType{i32(32, 10)}},
		{op: "StatelessRandomGetKeyCounter", in: []ir.TensorType{i64(2)}, host: h(0, v(17, 42)), out: []ir.TensorType{i64(1), i64(2)}},
		{op: "StatelessRandomGetKeyCounterAlg", in: []ir.TensorType{i32(2)}, host: h(0, v(17, 42)), out: []ir.TensorType{i64(1), i64(2), i32()}},
		{op: "StatelessRandomGetAlg", out: []ir.TensorType{i32()}},
		{op: "StatelessMultinomial", in: []ir.TensorType{f32(3, 5), i32(), i64(2)}, host: h(1, 7, 2, v(1, 2)), out: []ir.TensorType{i64(3, 7)}},
		{op: "Multinomial", attrs: A().T("output_dtype", ir.I32), in: []ir.TensorType{f32(3, 5), i32()}, host: h(1, 7), out: []ir.TensorType{i32(3, 7)}, rng: true},
	}
}

// TestGenerateKey checks the seed scrambling against
// StatelessRandomGetKeyCounter on TensorFlow 2.21's CPU for seed (17, 42).
func TestGenerateKey(t *testing.T) {
	key, ctr := generateKey(17, 42)
	if key != 751520331047873631 || ctr.Lo != 0 || ctr.Hi != 8254996026274904088 {
		t.Errorf("generateKey(17, 42) = %d, %+v", key, ctr)
	}
}

package lower

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

func TestBadInputNamesOpAndShapes(t *testing.T) {
	conv := A().Is("strides", 1, 1, 1, 1).S("padding", "SAME")
	for _, c := range []struct {
		op   string
		a    attrs
		in   []ir.TensorType
		host map[int][]int64
		want []string
	}{
		{"MatMul", A(), []ir.TensorType{f32(5, 7), f32(6, 3)}, nil, []string{"[5,7]", "[6,3]"}},
		{"AddV2", A(), []ir.TensorType{f32(2, 3), f32(4)}, nil, []string{"[2,3]", "[4]", "float32"}},
		{"Equal", A(), []ir.TensorType{i32(2, 3), i32(4)}, nil, []string{"[2,3]", "[4]"}},
		{"Select", A(), []ir.TensorType{boolT(3), f32(4, 2), f32(4, 2)}, nil, []string{"bool[3]", "float32[4,2]"}},
		{"AddN", A(), []ir.TensorType{f32(2, 3), f32(3, 2)}, nil, []string{"float32[2,3]", "float32[3,2]"}},
		{"Reshape", A(), []ir.TensorType{f32(3, 4), i32(1)}, h(1, v(5)), []string{"[3,4]", "[5]"}},
		{"Sum", A(), []ir.TensorType{f32(3, 4), i32()}, h(1, 2), []string{"axis 2", "rank 2", "float32[3,4]"}},
		{"ArgMax", A(), []ir.TensorType{f32(0, 4), i32()}, h(1, 0), []string{"empty", "[0,4]"}},
		{"Transpose", A(), []ir.TensorType{f32(3, 4), i32(2)}, h(1, v(0, 0)), []string{"perm", "float32[3,4]"}},
		{"ConcatV2", A(), []ir.TensorType{f32(2, 3), f32(3, 3), i32()}, h(2, 1), []string{"float32[3,3]", "float32[2,3]"}},
		{"ConcatV2", A(), []ir.TensorType{f32(2, 3), f32(2, 3), i32()}, h(2, 2), []string{"axis 2", "rank 2"}},
		{"Split", A().I("num_split", 4), []ir.TensorType{i32(), f32(6, 3)}, h(0, 0), []string{"num_split 4", "float32[6,3]"}},
		{"SplitV", A().I("num_split", 2), []ir.TensorType{f32(6, 3), i32(2), i32()}, h(1, v(2, 2), 2, 0), []string{"size_splits", "float32[6,3]"}},
		{"Slice", A(), []ir.TensorType{f32(4, 5), i32(2), i32(2)}, h(1, v(3, 0), 2, v(2, 5)), []string{"float32[4,5]"}},
		{"StridedSlice", A(), []ir.TensorType{f32(4, 5), i32(1), i32(1), i32(1)}, h(1, v(0), 2, v(1), 3, v(0)), []string{"strides", "non-zero"}},
		{"Pad", A(), []ir.TensorType{f32(2, 3), i32(2, 2)}, h(1, v(1, 1, -1, 0)), []string{"negative", "float32[2,3]"}},
		{"MirrorPad", A().S("mode", "REFLECT"), []ir.TensorType{f32(2, 3), i32(2, 2)}, h(1, v(2, 0, 0, 0)), []string{"too large", "float32[2,3]"}},
		{"MirrorPad", A().S("mode", "EDGE"), []ir.TensorType{f32(2, 3), i32(2, 2)}, h(1, v(0, 0, 0, 0)), []string{"EDGE"}},
		{"Tile", A(), []ir.TensorType{f32(2, 3), i32(3)}, h(1, v(1, 2, 3)), []string{"multiples", "float32[2,3]"}},
		{"GatherV2", A(), []ir.TensorType{f32(5, 3), i32(4), i32()}, h(2, 2), []string{"axis 2", "rank 2"}},
		{"GatherV2", A().I("batch_dims", 2), []ir.TensorType{f32(5, 3), i32(5, 2), i32()}, h(2, 1), []string{"batch_dims", "float32[5,3]", "int32[5,2]"}},
		{"GatherNd", A(), []ir.TensorType{f32(5, 3), i32(4, 3)}, nil, []string{"float32[5,3]", "int32[4,3]"}},
		{"ScatterNd", A(), []ir.TensorType{i32(4, 1), f32(4, 2), i32(2)}, h(2, v(10, 3)), []string{"float32[4,2]", "[4,3]"}},
		{"OneHot", A().I("axis", 3), []ir.TensorType{i32(4), i32(), f32(), f32()}, h(1, 3), []string{"axis 3", "int32[4]"}},
		{"TopKV2", A(), []ir.TensorType{f32(4, 5), i32()}, h(1, 6), []string{"k 6", "float32[4,5]"}},
		{"ReverseV2", A(), []ir.TensorType{f32(4, 5), i32(2)}, h(1, v(1, -1)), []string{"more than once", "float32[4,5]"}},
		{"Range", A().T("Tidx", ir.I32), []ir.TensorType{i32(), i32(), i32()}, h(0, 0, 1, 5, 2, 0), []string{"delta"}},
		{"Conv2D", conv, []ir.TensorType{f32(2, 5, 5, 3), f32(3, 3, 2, 4)}, nil, []string{"float32[2,5,5,3]", "float32[3,3,2,4]"}},
		{"Conv2D", conv, []ir.TensorType{f32(2, 5, 5), f32(3, 3, 3, 4)}, nil, []string{"float32[2,5,5]", "rank 4"}},
		{"Conv2D", A().Is("strides", 1, 1, 1).S("padding", "SAME"), []ir.TensorType{f32(2, 5, 5, 3), f32(3, 3, 3, 4)}, nil, []string{"strides", "4 entries"}},
		{"Conv2D", A().Is("strides", 1, 1, 1, 1).S("padding", "FULL"), []ir.TensorType{f32(2, 5, 5, 3), f32(3, 3, 3, 4)}, nil, []string{"FULL", "float32[2,5,5,3]"}},
		{"Conv2D", conv.S("data_format", "NCHW_VECT_C"), []ir.TensorType{f32(2, 5, 5, 3), f32(3, 3, 3, 4)}, nil, []string{"NCHW_VECT_C"}},
		{"Conv2DBackpropInput", A().Is("strides", 1, 1, 1, 1).S("padding", "SAME"), []ir.TensorType{i32(4), f32(3, 3, 3, 4), f32(2, 4, 5, 4)}, h(0, v(2, 5, 5, 3)),
			[]string{"out_backprop", "[2,4,5,4]", "[2,5,5,4]"}},
		{"Conv2DBackpropFilter", A().Is("strides", 1, 1, 1, 1).S("padding", "SAME"), []ir.TensorType{f32(2, 5, 5, 3), i32(4), f32(2, 5, 5, 4)}, h(1, v(3, 3, 2, 4)),
			[]string{"filter_sizes", "[3,3,2,4]", "float32[2,5,5,3]"}},
		{"MaxPool", A().Is("ksize", 2, 2, 1, 1).Is("strides", 1, 1, 1, 1).S("padding", "SAME"), []ir.TensorType{f32(2, 5, 5, 3)}, nil, []string{"ksize", "batch"}},
		{"MaxPoolGrad", A().Is("ksize", 1, 2, 2, 1).Is("strides", 1, 2, 2, 1).S("padding", "VALID"), []ir.TensorType{f32(1, 4, 4, 1), f32(1, 3, 3, 1), f32(1, 3, 3, 1)}, nil,
			[]string{"float32[1,3,3,1]", "[1,2,2,1]"}},
		{"AvgPoolGrad", A().Is("ksize", 1, 2, 2, 1).Is("strides", 1, 2, 2, 1).S("padding", "VALID"), []ir.TensorType{i32(3), f32(1, 2, 2, 1)}, h(0, v(1, 4, 4)),
			[]string{"orig_input_shape", "[1,4,4]"}},
		{"FusedBatchNormV3", A().B("is_training", false), []ir.TensorType{f32(2, 3, 3, 4), f32(4), f32(4), f32(0), f32(0)}, nil, []string{"float32[2,3,3,4]", "float32[0]"}},
		{"FusedBatchNormV3", A(), []ir.TensorType{f32(2, 3, 4), f32(4), f32(4), f32(0), f32(0)}, nil, []string{"rank 4 or 5", "float32[2,3,4]"}},
		{"FusedBatchNormGradV3", A(), []ir.TensorType{f32(2, 3, 3, 4), f32(2, 3, 3, 5), f32(4), f32(4), f32(4), f32()}, nil, []string{"float32[2,3,3,4]", "float32[2,3,3,5]"}},
		{"SoftmaxCrossEntropyWithLogits", A(), []ir.TensorType{f32(4, 10), f32(4, 9)}, nil, []string{"float32[4,10]", "float32[4,9]"}},
		{"SparseSoftmaxCrossEntropyWithLogits", A(), []ir.TensorType{f32(4, 10), i32(5)}, nil, []string{"float32[4,10]", "int32[5]"}},
		{"BiasAdd", A(), []ir.TensorType{f32(2, 3, 4), f32(3)}, nil, []string{"float32[3]", "float32[2,3,4]"}},
		{"BatchMatMulV2", A(), []ir.TensorType{f32(2, 4, 5), f32(3, 5, 6)}, nil, []string{"float32[2,4,5]", "float32[3,5,6]"}},
		{"Einsum", A().S("equation", "ij,jk->ik"), []ir.TensorType{f32(3, 4), f32(5, 6)}, nil, []string{"ij,jk->ik", "float32[3,4]", "float32[5,6]"}},
		{"RandomUniform", A().T("dtype", ir.F32), []ir.TensorType{i32(2)}, h(0, v(3, -1)), []string{"shape", "negative"}},
		{"StatelessRandomUniformV2", A().T("dtype", ir.F32), []ir.TensorType{i32(1), i64(1), i64(2), i32()}, h(0, v(3), 3, 2), []string{"algorithm", "2"}},
		{"StatelessRandomUniformV2", A().T("dtype", ir.F32), []ir.TensorType{i32(1), i64(2), i64(2), i32()}, h(0, v(3), 3, 1), []string{"int64[2]", "key"}},
		{"RandomUniformInt", A(), []ir.TensorType{i32(1), i32(), i32()}, h(0, v(3), 1, 5, 2, 5), []string{"minval < maxval", "5 >= 5"}},
		{"RFFT", A(), []ir.TensorType{f32(4, 8), i32(2)}, h(1, v(8, 8)), []string{"fft_length", "float32[4,8]"}},
		{"FFT2D", A(), []ir.TensorType{tt(ir.C64, 8)}, nil, []string{"complex64[8]", "rank at least 2"}},
		{"Where", A(), []ir.TensorType{f32(2, 3)}, nil, []string{"float32[2,3]", "contents"}},
		{"Cast", A(), []ir.TensorType{f32(2, 3)}, nil, []string{"DstT", "float32[2,3]"}},
	} {
		_, err := build(t, c.op, c.a.Attrs, c.in, c.host)
		if err == nil {
			t.Errorf("%s %v: no error", c.op, c.in)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, c.op+": ") {
			t.Errorf("%s: error %q does not start with the op", c.op, msg)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: error %q does not mention %q", c.op, msg, w)
			}
		}
	}
}

// TestMangledInputsNeverPanic lowers every shape case with its input shapes,
// host values and attributes scrambled: lowerings must reject nonsense with
// an error, never an internal error (a recovered panic).
func TestMangledInputsNeverPanic(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	randShape := func() ir.Shape {
		s := make(ir.Shape, r.IntN(6))
		for i := range s {
			s[i] = r.IntN(4)
		}
		return s
	}
	randInts := func() []int64 {
		v := make([]int64, r.IntN(6))
		for i := range v {
			v[i] = int64(r.IntN(9) - 3)
		}
		return v
	}
	for _, c := range shapeCases() {
		for range 40 {
			in := make([]ir.TensorType, len(c.in))
			copy(in, c.in)
			host := map[int][]int64{}
			for i, v := range c.host {
				host[i] = v
			}
			switch r.IntN(4) {
			case 0:
				if len(in) == 0 { // StatelessRandomGetAlg
					continue
				}
				j := r.IntN(len(in))
				in[j].Shape = randShape()
			case 1:
				for j := range host {
					host[j] = randInts()
				}
			case 2:
				in = in[:r.IntN(len(in)+1)]
			case 3:
				for j := range in {
					in[j].Shape = randShape()
				}
				for j := range host {
					host[j] = randInts()
				}
			}
			a := NewAttrs()
			if c.attrs.Attrs != nil {
				for k, v := range c.attrs.Ints {
					a.Ints[k] = v
				}
				for k, v := range c.attrs.Strings {
					a.Strings[k] = v
				}
				for k, v := range c.attrs.Types {
					a.Types[k] = v
				}
				for k, v := range c.attrs.Bools {
					a.Bools[k] = v
				}
				for k, v := range c.attrs.Floats {
					a.Floats[k] = v
				}
				for k, v := range c.attrs.StringLists {
					a.StringLists[k] = v
				}
			}
			if r.IntN(3) == 0 {
				for k := range a.Ints {
					a.Ints[k] = randInts()
				}
			}
			_, err := buildRaw(t, c.op, a, in, host, c.raw)
			if err != nil && strings.Contains(err.Error(), "internal error") {
				t.Errorf("%s %v host %v: %v", c.op, in, host, err)
			}
		}
	}
}

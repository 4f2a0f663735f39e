package lower

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

// shapeCase builds one op at realistic shapes and checks its result types.
type shapeCase struct {
	name  string // defaults to op
	op    string
	attrs attrs
	in    []ir.TensorType
	host  map[int][]int64
	raw   map[int][]byte
	out   []ir.TensorType
	rng   bool // the op draws with the frontend's random state (Call.RngState)
}

func h(kv ...any) map[int][]int64 {
	m := map[int][]int64{}
	for i := 0; i < len(kv); i += 2 {
		var v []int64
		switch x := kv[i+1].(type) {
		case int:
			v = []int64{int64(x)}
		case []int64:
			v = x
		}
		m[kv[i].(int)] = v
	}
	return m
}

func v(xs ...int64) []int64 { return xs }

// familyShapeCases are the shape cases an op family keeps in its own test
// file (its init appends to it), so that families grow without editing
// this one.
var familyShapeCases []func() []shapeCase

// multiCase is one registration's inputs for TestMultiConstraintCombinationsBuild.
type multiCase func(combo map[string]ir.DType, a attrs) (in []ir.TensorType, host map[int][]int64, raw map[int][]byte)

// familyMultiCases are the multi-constraint cases op families keep in
// their own test files, by op.
var familyMultiCases = map[string]multiCase{}

func shapeCases() []shapeCase {
	var cs []shapeCase
	add := func(c shapeCase) { cs = append(cs, c) }
	// Elementwise.
	for _, op := range []string{"AddV2", "Sub", "Mul", "Div", "RealDiv", "Maximum", "Minimum", "Pow", "DivNoNan",
		"SquaredDifference", "FloorDiv", "FloorMod", "Xlogy", "Xdivy", "MulNoNan"} {
		add(shapeCase{op: op, in: []ir.TensorType{f32(8, 1, 16), f32(4, 1)}, out: []ir.TensorType{f32(8, 4, 16)}})
	}
	for _, op := range []string{"AddV2", "Sub", "Mul", "FloorDiv", "FloorMod", "Maximum"} {
		add(shapeCase{name: op + "_int64", op: op, in: []ir.TensorType{i64(5, 3), i64(3)}, out: []ir.TensorType{i64(5, 3)}})
	}
	for _, op := range []string{"Neg", "Abs", "Sign", "Square", "Sqrt", "Rsqrt", "Exp", "Log", "Log1p", "Expm1", "Floor", "Ceil",
		"Erf", "Sin", "Cos", "Sigmoid", "Tanh", "Reciprocal", "Round",
		"Inv", "Sinh", "Cosh", "Tan"} {
		add(shapeCase{op: op, in: []ir.TensorType{tt(ir.F16, 32, 7)}, out: []ir.TensorType{tt(ir.F16, 32, 7)}})
	}
	for _, op := range []string{"Atan", "Asin", "Acos", "Asinh", "Acosh", "Atanh", "Erfc"} {
		add(shapeCase{op: op, in: []ir.TensorType{tt(ir.F16, 32, 7)}, out: []ir.TensorType{tt(ir.F16, 32, 7)}})
	}
	add(shapeCase{op: "Rint", in: []ir.TensorType{f32(5, 2)}, out: []ir.TensorType{f32(5, 2)}})
	for _, op := range []string{"Atan2", "Xlog1py"} {
		add(shapeCase{op: op, in: []ir.TensorType{f32(8, 1, 16), f32(4, 1)}, out: []ir.TensorType{f32(8, 4, 16)}})
	}
	for _, op := range []string{"TruncateDiv", "TruncateMod", "Mod"} {
		add(shapeCase{op: op, in: []ir.TensorType{i32(5, 3), i32(3)}, out: []ir.TensorType{i32(5, 3)}})
	}
	for _, op := range []string{"BitwiseAnd", "BitwiseOr", "BitwiseXor", "LeftShift", "RightShift"} {
		add(shapeCase{op: op, in: []ir.TensorType{i64(5, 3), i64(3)}, out: []ir.TensorType{i64(5, 3)}})
	}
	add(shapeCase{op: "Invert", in: []ir.TensorType{i32(4, 2)}, out: []ir.TensorType{i32(4, 2)}})
	add(shapeCase{op: "PopulationCount", in: []ir.TensorType{i64(4, 2)}, out: []ir.TensorType{tt(ir.U8, 4, 2)}})
	add(shapeCase{op: "MatrixDiag", in: []ir.TensorType{f32(2, 4)}, out: []ir.TensorType{f32(2, 4, 4)}})
	add(shapeCase{op: "MatrixDiagV2", in: []ir.TensorType{f32(3, 4), i32(2), i32(), i32(), f32()}, host: h(1, v(-1, 1), 2, 4, 3, 5),
		out: []ir.TensorType{f32(4, 5)}})
	add(shapeCase{op: "MatrixDiagV3", in: []ir.TensorType{f32(2, 4), i32(), i32(), i32(), f32()}, host: h(1, 1, 2, -1, 3, -1),
		out: []ir.TensorType{f32(2, 5, 5)}})
	add(shapeCase{op: "MatrixDiagPart", in: []ir.TensorType{f32(2, 4, 5)}, out: []ir.TensorType{f32(2, 4)}})
	add(shapeCase{op: "MatrixDiagPartV2", in: []ir.TensorType{f32(4, 5), i32(2), f32()}, host: h(1, v(-1, 2)), out: []ir.TensorType{f32(4, 4)}})
	add(shapeCase{op: "MatrixDiagPartV3", in: []ir.TensorType{f32(2, 4, 5), i32(), f32()}, host: h(1, -2), out: []ir.TensorType{f32(2, 2)}})
	add(shapeCase{op: "MatrixSetDiag", in: []ir.TensorType{f32(2, 4, 5), f32(2, 4)}, out: []ir.TensorType{f32(2, 4, 5)}})
	add(shapeCase{op: "MatrixSetDiagV2", in: []ir.TensorType{f32(4, 5), f32(2, 4), i32(2)}, host: h(2, v(0, 1)), out: []ir.TensorType{f32(4, 5)}})
	add(shapeCase{op: "MatrixSetDiagV3", in: []ir.TensorType{f32(3, 4, 5), f32(3, 4), i32()}, host: h(2, 1), out: []ir.TensorType{f32(3, 4, 5)}})
	add(shapeCase{op: "MatrixBandPart", in: []ir.TensorType{f32(2, 4, 5), i64(), i64()}, host: h(1, 1, 2, -1), out: []ir.TensorType{f32(2, 4, 5)}})
	add(shapeCase{op: "Diag", in: []ir.TensorType{f32(2, 3)}, out: []ir.TensorType{f32(2, 3, 2, 3)}})
	add(shapeCase{op: "DiagPart", in: []ir.TensorType{f32(2, 3, 2, 3)}, out: []ir.TensorType{f32(2, 3)}})
	add(shapeCase{op: "Roll", in: []ir.TensorType{f32(4, 3, 2), i32(2), i32(2)}, host: h(1, v(-1, 5), 2, v(0, -1)), out: []ir.TensorType{f32(4, 3, 2)}})
	add(shapeCase{op: "ReverseSequence", attrs: A().I("seq_dim", 1).I("batch_dim", 0), in: []ir.TensorType{f32(3, 5, 2), i64(3)},
		out: []ir.TensorType{f32(3, 5, 2)}})
	add(shapeCase{op: "DepthToSpace", attrs: A().I("block_size", 2), in: []ir.TensorType{f32(2, 3, 4, 8)}, out: []ir.TensorType{f32(2, 6, 8, 2)}})
	add(shapeCase{op: "SpaceToDepth", attrs: A().I("block_size", 2).S("data_format", "NCHW"), in: []ir.TensorType{f32(2, 3, 4, 6)},
		out: []ir.TensorType{f32(2, 12, 2, 3)}})
	add(shapeCase{op: "SpaceToBatchND", in: []ir.TensorType{f32(2, 5, 6, 3), i32(2), i32(2, 2)}, host: h(1, v(2, 3), 2, v(1, 0, 0, 0)),
		out: []ir.TensorType{f32(12, 3, 2, 3)}})
	add(shapeCase{op: "BatchToSpaceND", in: []ir.TensorType{f32(12, 3, 2, 3), i32(2), i32(2, 2)}, host: h(1, v(2, 3), 2, v(1, 0, 0, 0)),
		out: []ir.TensorType{f32(2, 5, 6, 3)}})
	add(shapeCase{op: "SpaceToBatch", attrs: A().I("block_size", 2), in: []ir.TensorType{f32(1, 4, 3, 2), i32(2, 2)}, host: h(1, v(0, 0, 1, 0)),
		out: []ir.TensorType{f32(4, 2, 2, 2)}})
	add(shapeCase{op: "BatchToSpace", attrs: A().I("block_size", 2), in: []ir.TensorType{f32(4, 2, 2, 2), i32(2, 2)}, host: h(1, v(0, 0, 1, 0)),
		out: []ir.TensorType{f32(1, 4, 3, 2)}})
	ids := []byte{0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0} // int32 0, 0, 2, 3
	for _, op := range []string{"SegmentSum", "SegmentMean", "SegmentProd", "SegmentMin", "SegmentMax"} {
		add(shapeCase{op: op, in: []ir.TensorType{f32(4, 3), i32(4)}, raw: map[int][]byte{1: ids}, out: []ir.TensorType{f32(4, 3)}})
	}
	for _, op := range []string{"UnsortedSegmentSum", "UnsortedSegmentProd", "UnsortedSegmentMin", "UnsortedSegmentMax"} {
		add(shapeCase{op: op, in: []ir.TensorType{tt(ir.F16, 2, 3, 5), i64(2, 3), i32()}, host: h(2, 4), out: []ir.TensorType{tt(ir.F16, 4, 5)}})
	}
	add(shapeCase{op: "Add", in: []ir.TensorType{f32(8, 1, 16), f32(4, 1)}, out: []ir.TensorType{f32(8, 4, 16)}})
	add(shapeCase{op: "BatchMatMul", in: []ir.TensorType{f32(3, 5, 4), f32(3, 4, 6)}, out: []ir.TensorType{f32(3, 5, 6)}})
	add(shapeCase{op: "BiasAddV1", in: []ir.TensorType{f32(2, 3, 5), f32(5)}, out: []ir.TensorType{f32(2, 3, 5)}})
	add(shapeCase{op: "Concat", in: []ir.TensorType{i32(), f32(2, 3), f32(2, 4)}, host: h(0, 1), out: []ir.TensorType{f32(2, 7)}})
	for _, op := range []string{"Snapshot", "StopGradient", "PreventGradient"} {
		add(shapeCase{op: op, in: []ir.TensorType{f32(2, 3)}, out: []ir.TensorType{f32(2, 3)}})
	}
	for _, op := range []string{"TensorScatterSub", "TensorScatterMax", "TensorScatterMin", "ScatterNdNonAliasingAdd"} {
		add(shapeCase{op: op, in: []ir.TensorType{f32(5, 4), i32(2, 1), f32(2, 4)}, out: []ir.TensorType{f32(5, 4)}})
	}
	add(shapeCase{op: "MaxPoolV2", attrs: A().S("padding", "SAME"), in: []ir.TensorType{f32(2, 9, 10, 3), i32(4), i32(4)},
		host: h(1, v(1, 3, 3, 1), 2, v(1, 2, 2, 1)), out: []ir.TensorType{f32(2, 5, 5, 3)}})
	add(shapeCase{op: "MaxPoolGradV2", attrs: A().S("padding", "VALID"), in: []ir.TensorType{f32(1, 4, 4, 2), f32(1, 2, 2, 2), f32(1, 2, 2, 2), i32(4), i32(4)},
		host: h(3, v(1, 2, 2, 1), 4, v(1, 2, 2, 1)), out: []ir.TensorType{f32(1, 4, 4, 2)}})
	add(shapeCase{op: "FusedBatchNorm", in: []ir.TensorType{f32(2, 4, 4, 3), f32(3), f32(3), f32(0), f32(0)},
		out: []ir.TensorType{f32(2, 4, 4, 3), f32(3), f32(3), f32(3), f32(3)}})
	add(shapeCase{op: "FusedBatchNormV2", in: []ir.TensorType{f32(2, 4, 4, 3), f32(3), f32(3), f32(0), f32(0)},
		out: []ir.TensorType{f32(2, 4, 4, 3), f32(3), f32(3), f32(3), f32(3)}})
	for _, op := range []string{"FusedBatchNormGrad", "FusedBatchNormGradV2"} {
		add(shapeCase{op: op, in: []ir.TensorType{f32(2, 4, 4, 3), f32(2, 4, 4, 3), f32(3), f32(3), f32(3)},
			out: []ir.TensorType{f32(2, 4, 4, 3), f32(3), f32(3), f32(0), f32(0)}})
	}
	for _, op := range []string{"ResizeNearestNeighbor", "ResizeBilinear"} {
		out := tt(ir.F16, 2, 7, 9, 3)
		if op == "ResizeBilinear" {
			out = f32(2, 7, 9, 3)
		}
		add(shapeCase{op: op, attrs: A().B("half_pixel_centers", true), in: []ir.TensorType{tt(ir.F16, 2, 5, 4, 3), i32(2)}, host: h(1, v(7, 9)),
			out: []ir.TensorType{out}})
	}
	add(shapeCase{op: "ResizeNearestNeighborGrad", attrs: A().B("align_corners", true), in: []ir.TensorType{f32(2, 7, 9, 3), i32(2)}, host: h(1, v(5, 4)),
		out: []ir.TensorType{f32(2, 5, 4, 3)}})
	add(shapeCase{op: "ResizeBilinearGrad", in: []ir.TensorType{f32(2, 7, 9, 3), tt(ir.BF16, 2, 5, 4, 3)}, out: []ir.TensorType{tt(ir.BF16, 2, 5, 4, 3)}})
	add(shapeCase{op: "Cross", in: []ir.TensorType{f32(4, 2, 3), f32(4, 2, 3)}, out: []ir.TensorType{f32(4, 2, 3)}})
	add(shapeCase{op: "LinSpace", in: []ir.TensorType{f32(), f32(), i32()}, host: h(2, 7), out: []ir.TensorType{f32(7)}})
	add(shapeCase{op: "InTopKV2", in: []ir.TensorType{f32(4, 5), i64(4), i64()}, out: []ir.TensorType{boolT(4)}})
	add(shapeCase{op: "CumulativeLogsumexp", attrs: A().B("exclusive", true), in: []ir.TensorType{tt(ir.F16, 3, 9), i32()}, host: h(1, 1),
		out: []ir.TensorType{tt(ir.F16, 3, 9)}})
	add(shapeCase{op: "LRN", attrs: A().I("depth_radius", 2), in: []ir.TensorType{f32(2, 3, 4, 7)}, out: []ir.TensorType{f32(2, 3, 4, 7)}})
	add(shapeCase{op: "LRNGrad", in: []ir.TensorType{f32(2, 3, 4, 7), f32(2, 3, 4, 7), f32(2, 3, 4, 7)}, out: []ir.TensorType{f32(2, 3, 4, 7)}})
	add(shapeCase{op: "ApproximateEqual", in: []ir.TensorType{f32(3, 4), f32(3, 4)}, out: []ir.TensorType{boolT(3, 4)}})
	add(shapeCase{name: "Round_int32", op: "Round", in: []ir.TensorType{i32(4)}, out: []ir.TensorType{i32(4)}})
	add(shapeCase{name: "Neg_int32", op: "Neg", in: []ir.TensorType{i32(4)}, out: []ir.TensorType{i32(4)}})
	for _, op := range []string{"IsNan", "IsInf", "IsFinite"} {
		add(shapeCase{op: op, in: []ir.TensorType{f32(6, 2)}, out: []ir.TensorType{boolT(6, 2)}})
	}
	add(shapeCase{op: "AddN", in: []ir.TensorType{f32(3, 4), f32(3, 4), f32(3, 4)}, out: []ir.TensorType{f32(3, 4)}})
	add(shapeCase{op: "ClipByValue", in: []ir.TensorType{f32(5, 6), f32(), f32(5, 6)}, out: []ir.TensorType{f32(5, 6)}})
	// Comparisons and selection.
	for _, op := range []string{"Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"} {
		add(shapeCase{op: op, in: []ir.TensorType{i32(2, 5), i32(5)}, out: []ir.TensorType{boolT(2, 5)}})
	}
	add(shapeCase{name: "Equal_incompatible", op: "Equal", attrs: A().B("incompatible_shape_error", false),
		in: []ir.TensorType{f32(2, 3), f32(4)}, out: []ir.TensorType{boolT()}})
	add(shapeCase{op: "LogicalAnd", in: []ir.TensorType{boolT(3, 1), boolT(4)}, out: []ir.TensorType{boolT(3, 4)}})
	add(shapeCase{op: "LogicalOr", in: []ir.TensorType{boolT(3), boolT(3)}, out: []ir.TensorType{boolT(3)}})
	add(shapeCase{op: "LogicalNot", in: []ir.TensorType{boolT(7)}, out: []ir.TensorType{boolT(7)}})
	add(shapeCase{op: "Select", in: []ir.TensorType{boolT(4), f32(4, 3), f32(4, 3)}, out: []ir.TensorType{f32(4, 3)}})
	add(shapeCase{name: "Select_scalar", op: "Select", in: []ir.TensorType{boolT(), i64(4, 3), i64(4, 3)}, out: []ir.TensorType{i64(4, 3)}})
	add(shapeCase{op: "SelectV2", in: []ir.TensorType{boolT(4, 1), f32(3), f32(1, 1)}, out: []ir.TensorType{f32(4, 3)}})
	add(shapeCase{op: "Cast", attrs: A().T("DstT", ir.I32), in: []ir.TensorType{f32(3, 4)}, out: []ir.TensorType{i32(3, 4)}})
	add(shapeCase{name: "Cast_to_bool", op: "Cast", attrs: A().T("DstT", ir.Bool), in: []ir.TensorType{tt(ir.BF16, 3)}, out: []ir.TensorType{boolT(3)}})
	// Reductions.
	keep := A().B("keep_dims", true)
	for _, op := range []string{"Sum", "Mean", "Prod", "Max", "Min", "EuclideanNorm"} {
		add(shapeCase{op: op, in: []ir.TensorType{tt(ir.F16, 16, 10, 5), i32(2)}, host: h(1, v(0, -1)), out: []ir.TensorType{tt(ir.F16, 10)}})
	}
	add(shapeCase{name: "Sum_keep", op: "Sum", attrs: keep, in: []ir.TensorType{f32(3, 4, 5), i32(2)}, host: h(1, v(-1, 0)), out: []ir.TensorType{f32(1, 4, 1)}})
	add(shapeCase{name: "Mean_int", op: "Mean", in: []ir.TensorType{i32(3, 4), i32()}, host: h(1, 1), out: []ir.TensorType{i32(3)}})
	add(shapeCase{name: "Sum_all_empty_axes", op: "Sum", in: []ir.TensorType{f32(3, 4), i32(0)}, host: h(1, v()), out: []ir.TensorType{f32(3, 4)}})
	add(shapeCase{op: "All", attrs: keep, in: []ir.TensorType{boolT(3, 4), i64(1)}, host: h(1, v(1)), out: []ir.TensorType{boolT(3, 1)}})
	add(shapeCase{op: "Any", in: []ir.TensorType{boolT(3, 4), i32()}, host: h(1, 0), out: []ir.TensorType{boolT(4)}})
	add(shapeCase{op: "ArgMax", attrs: A().T("output_type", ir.I32), in: []ir.TensorType{f32(6, 10), i32()}, host: h(1, -1), out: []ir.TensorType{i32(6)}})
	add(shapeCase{op: "ArgMin", in: []ir.TensorType{i64(6, 10), i32()}, host: h(1, 0), out: []ir.TensorType{i64(10)}})
	add(shapeCase{op: "L2Loss", in: []ir.TensorType{tt(ir.BF16, 64, 32)}, out: []ir.TensorType{tt(ir.BF16)}})
	// Contractions.
	add(shapeCase{op: "MatMul", attrs: A().B("transpose_a", true), in: []ir.TensorType{f32(7, 5), f32(7, 3)}, out: []ir.TensorType{f32(5, 3)}})
	add(shapeCase{op: "BatchMatMulV2", in: []ir.TensorType{f32(2, 1, 4, 5), f32(3, 5, 6)}, out: []ir.TensorType{f32(2, 3, 4, 6)}})
	add(shapeCase{op: "BatchMatMulV3", attrs: A().T("Tout", ir.F32).B("adj_y", true), in: []ir.TensorType{f32(8, 4, 5), f32(8, 6, 5)}, out: []ir.TensorType{f32(8, 4, 6)}})
	add(shapeCase{op: "Einsum", attrs: A().S("equation", "abc,cd->abd"), in: []ir.TensorType{f32(2, 3, 4), f32(4, 5)}, out: []ir.TensorType{f32(2, 3, 5)}})
	add(shapeCase{name: "Einsum_ellipsis", op: "Einsum", attrs: A().S("equation", "...ij,...jk->...ik"), in: []ir.TensorType{f32(2, 1, 3, 4), f32(5, 4, 6)}, out: []ir.TensorType{f32(2, 5, 3, 6)}})
	add(shapeCase{name: "Einsum_trace", op: "Einsum", attrs: A().S("equation", "ii->"), in: []ir.TensorType{f32(4, 4)}, out: []ir.TensorType{f32()}})
	add(shapeCase{name: "Einsum_keras", op: "Einsum", attrs: A().S("equation", "abcd,cde->abe"), in: []ir.TensorType{f32(2, 7, 4, 8), f32(4, 8, 16)}, out: []ir.TensorType{f32(2, 7, 16)}})
	add(shapeCase{name: "Einsum_attention", op: "Einsum", attrs: A().S("equation", "aecd,abcd->acbe"), in: []ir.TensorType{f32(2, 5, 4, 8), f32(2, 6, 4, 8)}, out: []ir.TensorType{f32(2, 4, 6, 5)}})
	// Activations.
	for _, op := range []string{"Relu", "Relu6", "Elu", "Selu", "LeakyRelu", "Softplus", "Softsign", "Softmax", "LogSoftmax"} {
		add(shapeCase{op: op, in: []ir.TensorType{tt(ir.BF16, 16, 10)}, out: []ir.TensorType{tt(ir.BF16, 16, 10)}})
	}
	for _, op := range []string{"ReluGrad", "Relu6Grad", "EluGrad", "SeluGrad", "LeakyReluGrad", "SoftplusGrad", "SoftsignGrad", "SigmoidGrad", "TanhGrad",
		"RsqrtGrad", "SqrtGrad", "ReciprocalGrad", "InvGrad"} {
		add(shapeCase{op: op, in: []ir.TensorType{f32(16, 10), f32(16, 10)}, out: []ir.TensorType{f32(16, 10)}})
	}
	add(shapeCase{op: "SoftmaxCrossEntropyWithLogits", in: []ir.TensorType{f32(32, 10), f32(32, 10)}, out: []ir.TensorType{f32(32), f32(32, 10)}})
	add(shapeCase{name: "SoftmaxCrossEntropyWithLogits_broadcast", op: "SoftmaxCrossEntropyWithLogits", in: []ir.TensorType{tt(ir.F16, 32, 10), tt(ir.F16, 1, 10)},
		out: []ir.TensorType{tt(ir.F16, 32), tt(ir.F16, 32, 10)}})
	add(shapeCase{op: "SparseSoftmaxCrossEntropyWithLogits", in: []ir.TensorType{f32(32, 10), i64(32)}, out: []ir.TensorType{f32(32), f32(32, 10)}})
	add(shapeCase{op: "BiasAdd", in: []ir.TensorType{f32(2, 3, 4, 5), f32(5)}, out: []ir.TensorType{f32(2, 3, 4, 5)}})
	add(shapeCase{name: "BiasAdd_NCHW", op: "BiasAdd", attrs: A().S("data_format", "NCHW"), in: []ir.TensorType{f32(2, 5, 4), f32(5)}, out: []ir.TensorType{f32(2, 5, 4)}})
	add(shapeCase{op: "BiasAddGrad", in: []ir.TensorType{f32(8, 6, 6, 16)}, out: []ir.TensorType{f32(16)}})
	add(shapeCase{name: "BiasAddGrad_NCHW", op: "BiasAddGrad", attrs: A().S("data_format", "NCHW"), in: []ir.TensorType{f32(8, 16, 6, 6)}, out: []ir.TensorType{f32(16)}})
	// Convolutions.
	conv2 := A().Is("strides", 1, 2, 2, 1).S("padding", "SAME")
	add(shapeCase{op: "Conv2D", attrs: conv2, in: []ir.TensorType{f32(2, 9, 10, 3), f32(3, 3, 3, 4)}, out: []ir.TensorType{f32(2, 5, 5, 4)}})
	add(shapeCase{name: "Conv2D_NCHW_grouped", op: "Conv2D", attrs: A().Is("strides", 1, 1, 1, 1).S("padding", "VALID").S("data_format", "NCHW"),
		in: []ir.TensorType{f32(2, 6, 9, 10), f32(3, 3, 2, 9)}, out: []ir.TensorType{f32(2, 9, 7, 8)}})
	add(shapeCase{op: "Conv3D", attrs: A().Is("strides", 1, 1, 2, 2, 1).S("padding", "SAME"), in: []ir.TensorType{f32(2, 4, 8, 8, 3), f32(3, 3, 3, 3, 8)},
		out: []ir.TensorType{f32(2, 4, 4, 4, 8)}})
	add(shapeCase{op: "DepthwiseConv2dNative", attrs: conv2, in: []ir.TensorType{f32(2, 9, 10, 3), f32(3, 3, 3, 2)}, out: []ir.TensorType{f32(2, 5, 5, 6)}})
	add(shapeCase{op: "_FusedConv2D", attrs: A().Is("strides", 1, 2, 2, 1).S("padding", "SAME").Ss("fused_ops", "BiasAdd", "Relu").I("num_args", 1), in: []ir.TensorType{f32(2, 9, 10, 3), f32(3, 3, 3, 4), f32(4)},
		out: []ir.TensorType{f32(2, 5, 5, 4)}})
	add(shapeCase{name: "_FusedConv2D_NCHW", op: "_FusedConv2D", attrs: A().Is("strides", 1, 1, 1, 1).S("padding", "VALID").S("data_format", "NCHW").Ss("fused_ops", "BiasAdd").I("num_args", 1),
		in: []ir.TensorType{f32(2, 3, 9, 10), f32(3, 3, 3, 4), f32(4)}, out: []ir.TensorType{f32(2, 4, 7, 8)}})
	add(shapeCase{op: "_FusedMatMul", attrs: A().B("transpose_b", true).Ss("fused_ops", "BiasAdd", "Tanh").I("num_args", 1), in: []ir.TensorType{f32(7, 5), f32(3, 5), f32(3)},
		out: []ir.TensorType{f32(7, 3)}})
	add(shapeCase{op: "Conv2DBackpropInput", attrs: conv2, in: []ir.TensorType{i32(4), f32(3, 3, 3, 4), f32(2, 5, 5, 4)}, host: h(0, v(2, 9, 10, 3)),
		out: []ir.TensorType{f32(2, 9, 10, 3)}})
	add(shapeCase{op: "Conv2DBackpropFilter", attrs: conv2, in: []ir.TensorType{f32(2, 9, 10, 3), i32(4), f32(2, 5, 5, 4)}, host: h(1, v(3, 3, 3, 4)),
		out: []ir.TensorType{f32(3, 3, 3, 4)}})
	conv3 := A().Is("strides", 1, 2, 1, 2, 1).S("padding", "VALID").S("data_format", "NDHWC")
	add(shapeCase{op: "Conv3DBackpropInputV2", attrs: conv3, in: []ir.TensorType{i64(5), f32(2, 3, 3, 3, 4), f32(1, 3, 4, 3, 4)}, host: h(0, v(1, 7, 6, 8, 3)),
		out: []ir.TensorType{f32(1, 7, 6, 8, 3)}})
	add(shapeCase{op: "Conv3DBackpropFilterV2", attrs: conv3, in: []ir.TensorType{f32(1, 7, 6, 8, 3), i32(5), f32(1, 3, 4, 3, 4)}, host: h(1, v(2, 3, 3, 3, 4)),
		out: []ir.TensorType{f32(2, 3, 3, 3, 4)}})
	add(shapeCase{op: "DepthwiseConv2dNativeBackpropInput", attrs: conv2, in: []ir.TensorType{i32(4), f32(3, 3, 3, 2), f32(2, 5, 5, 6)}, host: h(0, v(2, 9, 10, 3)),
		out: []ir.TensorType{f32(2, 9, 10, 3)}})
	add(shapeCase{op: "DepthwiseConv2dNativeBackpropFilter", attrs: conv2, in: []ir.TensorType{f32(2, 9, 10, 3), i32(4), f32(2, 5, 5, 6)}, host: h(1, v(3, 3, 3, 2)),
		out: []ir.TensorType{f32(3, 3, 3, 2)}})
	// Pooling.
	pool := A().Is("ksize", 1, 3, 3, 1).Is("strides", 1, 2, 2, 1).S("padding", "SAME")
	add(shapeCase{op: "MaxPool", attrs: pool, in: []ir.TensorType{f32(2, 9, 10, 3)}, out: []ir.TensorType{f32(2, 5, 5, 3)}})
	add(shapeCase{op: "AvgPool", attrs: pool, in: []ir.TensorType{f32(2, 9, 10, 3)}, out: []ir.TensorType{f32(2, 5, 5, 3)}})
	add(shapeCase{op: "MaxPoolGrad", attrs: pool, in: []ir.TensorType{f32(2, 9, 10, 3), f32(2, 5, 5, 3), f32(2, 5, 5, 3)}, out: []ir.TensorType{f32(2, 9, 10, 3)}})
	add(shapeCase{op: "AvgPoolGrad", attrs: pool, in: []ir.TensorType{i32(4), f32(2, 5, 5, 3)}, host: h(0, v(2, 9, 10, 3)), out: []ir.TensorType{f32(2, 9, 10, 3)}})
	pool3 := A().Is("ksize", 1, 1, 2, 2, 1).Is("strides", 1, 1, 2, 2, 1).S("padding", "VALID").S("data_format", "NCDHW")
	pool3.Ints["ksize"] = []int64{1, 1, 1, 2, 2}
	pool3.Ints["strides"] = []int64{1, 1, 1, 2, 2}
	add(shapeCase{op: "MaxPool3D", attrs: pool3, in: []ir.TensorType{f32(2, 3, 4, 8, 8)}, out: []ir.TensorType{f32(2, 3, 4, 4, 4)}})
	add(shapeCase{op: "AvgPool3D", attrs: pool3, in: []ir.TensorType{f32(2, 3, 4, 8, 8)}, out: []ir.TensorType{f32(2, 3, 4, 4, 4)}})
	add(shapeCase{op: "MaxPool3DGrad", attrs: pool3, in: []ir.TensorType{f32(2, 3, 4, 8, 8), f32(2, 3, 4, 4, 4), f32(2, 3, 4, 4, 4)}, out: []ir.TensorType{f32(2, 3, 4, 8, 8)}})
	add(shapeCase{op: "AvgPool3DGrad", attrs: pool3, in: []ir.TensorType{i32(5), f32(2, 3, 4, 4, 4)}, host: h(0, v(2, 3, 4, 8, 8)), out: []ir.TensorType{f32(2, 3, 4, 8, 8)}})
	// Batch norm.
	bn := A().F("epsilon", 0.001).B("is_training", true)
	add(shapeCase{op: "FusedBatchNormV3", attrs: bn, in: []ir.TensorType{tt(ir.F16, 8, 5, 5, 16), f32(16), f32(16), f32(0), f32(0)},
		out: []ir.TensorType{tt(ir.F16, 8, 5, 5, 16), f32(16), f32(16), f32(16), f32(16), f32()}})
	add(shapeCase{name: "FusedBatchNormV3_inference_NCHW", op: "FusedBatchNormV3", attrs: A().B("is_training", false).S("data_format", "NCHW"),
		in:  []ir.TensorType{f32(8, 16, 5, 5), f32(16), f32(16), f32(16), f32(16)},
		out: []ir.TensorType{f32(8, 16, 5, 5), f32(16), f32(16), f32(16), f32(16), f32()}})
	add(shapeCase{op: "FusedBatchNormGradV3", attrs: bn, in: []ir.TensorType{f32(8, 5, 5, 16), f32(8, 5, 5, 16), f32(16), f32(16), f32(16), f32()},
		out: []ir.TensorType{f32(8, 5, 5, 16), f32(16), f32(16), f32(0), f32(0)}})
	// Data movement.
	add(shapeCase{op: "Identity", in: []ir.TensorType{tt(ir.U8, 3)}, out: []ir.TensorType{tt(ir.U8, 3)}})
	add(shapeCase{op: "Reshape", in: []ir.TensorType{f32(3, 4, 5), i32(2)}, host: h(1, v(5, -1)), out: []ir.TensorType{f32(5, 12)}})
	add(shapeCase{op: "Squeeze", in: []ir.TensorType{f32(1, 3, 1, 2)}, out: []ir.TensorType{f32(3, 2)}})
	add(shapeCase{name: "Squeeze_dims", op: "Squeeze", attrs: A().Is("squeeze_dims", -2), in: []ir.TensorType{f32(1, 3, 1, 2)}, out: []ir.TensorType{f32(1, 3, 2)}})
	add(shapeCase{op: "ExpandDims", in: []ir.TensorType{f32(3, 2), i32()}, host: h(1, -1), out: []ir.TensorType{f32(3, 2, 1)}})
	add(shapeCase{op: "Transpose", in: []ir.TensorType{f32(2, 3, 4), i32(3)}, host: h(1, v(2, 0, 1)), out: []ir.TensorType{f32(4, 2, 3)}})
	add(shapeCase{op: "ConcatV2", in: []ir.TensorType{f32(2, 3), f32(2, 5), f32(2, 0), i32()}, host: h(3, -1), out: []ir.TensorType{f32(2, 8)}})
	add(shapeCase{op: "Split", attrs: A().I("num_split", 3), in: []ir.TensorType{i32(), f32(4, 9)}, host: h(0, 1), out: []ir.TensorType{f32(4, 3), f32(4, 3), f32(4, 3)}})
	add(shapeCase{op: "SplitV", attrs: A().I("num_split", 3), in: []ir.TensorType{f32(4, 9), i64(3), i32()}, host: h(1, v(2, -1, 3), 2, 1),
		out: []ir.TensorType{f32(4, 2), f32(4, 4), f32(4, 3)}})
	add(shapeCase{op: "Slice", in: []ir.TensorType{f32(4, 9), i32(2), i32(2)}, host: h(1, v(1, 2), 2, v(-1, 3)), out: []ir.TensorType{f32(3, 3)}})
	add(shapeCase{op: "StridedSlice", attrs: A().I("shrink_axis_mask", 4).I("new_axis_mask", 2), in: []ir.TensorType{f32(5, 6, 7), i32(3), i32(3), i32(3)},
		host: h(1, v(1, 0, 2), 2, v(-1, 0, 3), 3, v(2, 1, 1)), out: []ir.TensorType{f32(2, 1, 7)}})
	add(shapeCase{op: "StridedSliceGrad", attrs: A().I("shrink_axis_mask", 4).I("new_axis_mask", 2), in: []ir.TensorType{i32(3), i32(3), i32(3), i32(3), f32(2, 1, 7)},
		host: h(0, v(5, 6, 7), 1, v(1, 0, 2), 2, v(-1, 0, 3), 3, v(2, 1, 1)), out: []ir.TensorType{f32(5, 6, 7)}})
	add(shapeCase{op: "Pad", in: []ir.TensorType{f32(2, 3), i32(2, 2)}, host: h(1, v(1, 1, 0, 2)), out: []ir.TensorType{f32(4, 5)}})
	add(shapeCase{op: "PadV2", in: []ir.TensorType{i32(2, 3), i32(2, 2), i32()}, host: h(1, v(1, 1, 0, 2)), out: []ir.TensorType{i32(4, 5)}})
	add(shapeCase{op: "MirrorPad", attrs: A().S("mode", "REFLECT"), in: []ir.TensorType{f32(3, 4), i64(2, 2)}, host: h(1, v(2, 1, 3, 0)), out: []ir.TensorType{f32(6, 7)}})
	add(shapeCase{op: "Tile", in: []ir.TensorType{f32(2, 3), i32(2)}, host: h(1, v(3, 2)), out: []ir.TensorType{f32(6, 6)}})
	add(shapeCase{op: "Pack", attrs: A().I("axis", 1), in: []ir.TensorType{f32(2, 3), f32(2, 3)}, out: []ir.TensorType{f32(2, 2, 3)}})
	add(shapeCase{op: "Unpack", attrs: A().I("num", 3).I("axis", -1), in: []ir.TensorType{f32(2, 3)}, out: []ir.TensorType{f32(2), f32(2), f32(2)}})
	add(shapeCase{op: "Fill", in: []ir.TensorType{i32(2), tt(ir.Bool)}, host: h(0, v(3, 4)), out: []ir.TensorType{boolT(3, 4)}})
	add(shapeCase{op: "ZerosLike", in: []ir.TensorType{tt(ir.BF16, 3, 4)}, out: []ir.TensorType{tt(ir.BF16, 3, 4)}})
	add(shapeCase{op: "OnesLike", in: []ir.TensorType{boolT(3)}, out: []ir.TensorType{boolT(3)}})
	add(shapeCase{op: "Range", attrs: A().T("Tidx", ir.I64), in: []ir.TensorType{i64(), i64(), i64()}, host: h(0, 10, 1, 0, 2, -3), out: []ir.TensorType{i64(4)}})
	add(shapeCase{op: "BroadcastTo", in: []ir.TensorType{f32(3, 1), i32(3)}, host: h(1, v(2, 3, 4)), out: []ir.TensorType{f32(2, 3, 4)}})
	// Indexing.
	add(shapeCase{op: "GatherV2", in: []ir.TensorType{f32(1000, 64), i32(8, 20), i32()}, host: h(2, 0), out: []ir.TensorType{f32(8, 20, 64)}})
	add(shapeCase{name: "GatherV2_batch_dims", op: "GatherV2", attrs: A().I("batch_dims", 1), in: []ir.TensorType{f32(4, 5, 6, 7), i64(4, 3), i32()}, host: h(2, 2),
		out: []ir.TensorType{f32(4, 5, 3, 7)}})
	add(shapeCase{op: "GatherNd", in: []ir.TensorType{f32(5, 6, 7), i32(4, 2)}, out: []ir.TensorType{f32(4, 7)}})
	add(shapeCase{op: "ScatterNd", in: []ir.TensorType{i32(4, 1), f32(4, 7), i32(2)}, host: h(2, v(10, 7)), out: []ir.TensorType{f32(10, 7)}})
	add(shapeCase{op: "TensorScatterUpdate", in: []ir.TensorType{f32(10, 7), i64(4, 2), f32(4)}, out: []ir.TensorType{f32(10, 7)}})
	add(shapeCase{op: "TensorScatterAdd", in: []ir.TensorType{i32(10, 7), i32(4, 1), i32(4, 7)}, out: []ir.TensorType{i32(10, 7)}})
	add(shapeCase{op: "OneHot", in: []ir.TensorType{i64(4, 3), i32(), f32(), f32()}, host: h(1, 10), out: []ir.TensorType{f32(4, 3, 10)}})
	add(shapeCase{name: "OneHot_axis0", op: "OneHot", attrs: A().I("axis", 0), in: []ir.TensorType{tt(ir.U8, 4), i32(), boolT(), boolT()}, host: h(1, 5), out: []ir.TensorType{boolT(5, 4)}})
	add(shapeCase{op: "Cumsum", attrs: A().B("exclusive", true).B("reverse", true), in: []ir.TensorType{f32(4, 100), i32()}, host: h(1, 1), out: []ir.TensorType{f32(4, 100)}})
	add(shapeCase{op: "Cumprod", in: []ir.TensorType{i64(4, 100), i32()}, host: h(1, 1), out: []ir.TensorType{i64(4, 100)}})
	add(shapeCase{op: "TopKV2", in: []ir.TensorType{f32(4, 100), i32()}, host: h(1, 5), out: []ir.TensorType{f32(4, 5), i32(4, 5)}})
	add(shapeCase{op: "ReverseV2", in: []ir.TensorType{f32(4, 5, 6), i32(2)}, host: h(1, v(0, -1)), out: []ir.TensorType{f32(4, 5, 6)}})
	add(shapeCase{op: "Where", in: []ir.TensorType{boolT(2, 3)}, raw: map[int][]byte{0: {1, 0, 1, 0, 0, 1}}, out: []ir.TensorType{i64(3, 2)}})
	// Random.
	for _, op := range []string{"RandomUniform", "RandomStandardNormal", "TruncatedNormal"} {
		add(shapeCase{op: op, attrs: A().T("dtype", ir.F16).I("seed", 1), in: []ir.TensorType{i32(2)}, host: h(0, v(32, 10)), out: []ir.TensorType{tt(ir.F16, 32, 10)}})
	}
	add(shapeCase{op: "RandomUniformInt", in: []ir.TensorType{i32(1), i64(), i64()}, host: h(0, v(100), 1, -5, 2, 5), out: []ir.TensorType{i64(100)}})
	stateless := []ir.TensorType{i32(2), i64(1), i64(2), i32()}
	for _, op := range []string{"StatelessRandomUniformV2", "StatelessRandomNormalV2", "StatelessTruncatedNormalV2"} {
		add(shapeCase{op: op, attrs: A().T("dtype", ir.F32), in: stateless, host: h(0, v(32, 10), 3, 1), out: []ir.TensorType{f32(32, 10)}})
	}
	add(shapeCase{op: "StatelessRandomUniformFullIntV2", attrs: A().T("dtype", ir.I64), in: stateless, host: h(0, v(32, 10), 3, 3), out: []ir.TensorType{i64(32, 10)}})
	add(shapeCase{op: "StatelessRandomUniformIntV2", attrs: A().T("dtype", ir.I32), in: append(stateless, i32(), i32()), host: h(0, v(32, 10), 3, 1, 4, 0, 5, 10),
		out: []ir.TensorType{i32(32, 10)}})
	// FFT.
	c64 := func(s ...int) ir.TensorType { return tt(ir.C64, s...) }
	add(shapeCase{op: "FFT", in: []ir.TensorType{c64(4, 64)}, out: []ir.TensorType{c64(4, 64)}})
	add(shapeCase{op: "IFFT", in: []ir.TensorType{c64(4, 64)}, out: []ir.TensorType{c64(4, 64)}})
	add(shapeCase{op: "FFT2D", in: []ir.TensorType{c64(4, 8, 16)}, out: []ir.TensorType{c64(4, 8, 16)}})
	add(shapeCase{op: "IFFT2D", in: []ir.TensorType{c64(4, 8, 16)}, out: []ir.TensorType{c64(4, 8, 16)}})
	add(shapeCase{op: "FFT3D", in: []ir.TensorType{c64(2, 4, 8, 16)}, out: []ir.TensorType{c64(2, 4, 8, 16)}})
	add(shapeCase{op: "IFFT3D", in: []ir.TensorType{c64(2, 4, 8, 16)}, out: []ir.TensorType{c64(2, 4, 8, 16)}})
	add(shapeCase{op: "RFFT", in: []ir.TensorType{f32(4, 64), i32(1)}, host: h(1, v(64)), out: []ir.TensorType{c64(4, 33)}})
	add(shapeCase{name: "RFFT_padded", op: "RFFT", in: []ir.TensorType{f32(4, 50), i32(1)}, host: h(1, v(64)), out: []ir.TensorType{c64(4, 33)}})
	add(shapeCase{op: "IRFFT", in: []ir.TensorType{c64(4, 33), i32(1)}, host: h(1, v(64)), out: []ir.TensorType{f32(4, 64)}})
	add(shapeCase{op: "RFFT2D", in: []ir.TensorType{f32(4, 8, 16), i32(2)}, host: h(1, v(6, 16)), out: []ir.TensorType{c64(4, 6, 9)}})
	add(shapeCase{op: "IRFFT2D", in: []ir.TensorType{c64(4, 8, 9), i32(2)}, host: h(1, v(8, 16)), out: []ir.TensorType{f32(4, 8, 16)}})
	add(shapeCase{op: "RFFT3D", in: []ir.TensorType{f32(2, 4, 8, 16), i32(3)}, host: h(1, v(4, 8, 16)), out: []ir.TensorType{c64(2, 4, 8, 9)}})
	add(shapeCase{op: "IRFFT3D", in: []ir.TensorType{c64(2, 4, 8, 9), i32(3)}, host: h(1, v(4, 8, 15)), out: []ir.TensorType{f32(2, 4, 8, 15)}})
	cs = append(cs, linalgShapeCases()...) // linalg_test.go
	for _, f := range familyShapeCases {
		cs = append(cs, f()...)
	}
	return cs
}

// familyMultiConstraint is familyMultiCases for a family whose inputs
// need neither the attributes nor raw bytes (complex_test.go).
var familyMultiConstraint = map[string]func(combo map[string]ir.DType) ([]ir.TensorType, map[int][]int64){}

func TestShapesOfLoweredOps(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range shapeCases() {
		name := c.name
		if name == "" {
			name = c.op
		}
		covered[c.op] = true
		a := c.attrs.Attrs
		if a == nil {
			a = NewAttrs()
		}
		l, err := buildRaw(t, c.op, a, c.in, c.host, c.raw)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		got := l.Program.ResultTypes()
		if len(got) != len(c.out) {
			t.Errorf("%s: %d results %v, want %v", name, len(got), got, c.out)
			continue
		}
		for i := range got {
			if got[i].DType != c.out[i].DType || !got[i].Shape.Equal(c.out[i].Shape) {
				t.Errorf("%s: result %d is %v, want %v", name, i, got[i], c.out[i])
			}
		}
		k, _ := Lookup(c.op)
		wantRng := c.rng || c.op == "RandomUniform" || c.op == "RandomStandardNormal" || c.op == "TruncatedNormal" || c.op == "RandomUniformInt"
		if l.Rng != wantRng {
			t.Errorf("%s: Rng = %v", name, l.Rng)
		}
		// Parameters are the device inputs (then the random state).
		dev := 0
		for i := range c.in {
			if !k.IsHostInput(nil, i, len(c.in)) {
				dev++
			}
		}
		if l.Rng {
			dev += 2
		}
		if len(l.Program.Params) != dev {
			t.Errorf("%s: %d parameters, want %d", name, len(l.Program.Params), dev)
		}
	}
	for _, k := range Kernels() {
		// The variable ops' are in variables_test.go, the cluster's in cluster_test.go.
		if !covered[k.Op] && k.Variables.Access == VarNone && k.Op != ClusterOp {
			t.Errorf("%s has no shape test", k.Op)
		}
	}
}

// TestEveryDTypeCombinationBuilds lowers each registration of the simple
// same-type ops at a small shape, so no registered dtype fails to build.
func TestEveryDTypeCombinationBuilds(t *testing.T) {
	// The input that carries T, where it is not the first.
	tInput := map[string]int{"Select": 1, "SelectV2": 1, "Fill": 1, "Split": 1, "StridedSliceGrad": 4, "AvgPoolGrad": 1,
		"AvgPool3DGrad": 1, "ResizeBilinearGrad": 1, "InTopKV2": 1, "Conv2DBackpropInput": 1, "Conv3DBackpropInputV2": 1, "DepthwiseConv2dNativeBackpropInput": 1}
	for _, c := range shapeCases() {
		k, _ := Lookup(c.op)
		if len(k.Constraints) != 1 || k.Constraints[0].Attr != "T" || c.name != "" || c.raw != nil {
			continue
		}
		ref := c.in[tInput[c.op]].DType
		for _, d := range k.Constraints[0].DTypes {
			in := make([]ir.TensorType, len(c.in))
			for i, t0 := range c.in {
				in[i] = t0
				if t0.DType == ref && !k.IsHostInput(nil, i, len(c.in)) {
					in[i].DType = d
				}
			}
			if _, err := buildRaw(t, c.op, c.attrs.Attrs, in, c.host, c.raw); err != nil {
				t.Errorf("%s T=%v: %v", c.op, d, err)
			}
		}
	}
}

func TestEmptyTensors(t *testing.T) {
	conv := A().Is("strides", 1, 1, 1, 1).S("padding", "SAME")
	for _, c := range []shapeCase{
		{op: "AddV2", in: []ir.TensorType{f32(0, 3), f32(3)}, out: []ir.TensorType{f32(0, 3)}},
		{op: "Sum", in: []ir.TensorType{f32(0, 3), i32(1)}, host: h(1, v(0)), out: []ir.TensorType{f32(3)}},
		{op: "Mean", in: []ir.TensorType{i32(0, 3), i32(1)}, host: h(1, v(0)), out: []ir.TensorType{i32(3)}},
		{op: "Softmax", in: []ir.TensorType{f32(0, 10)}, out: []ir.TensorType{f32(0, 10)}},
		{op: "MatMul", in: []ir.TensorType{f32(0, 4), f32(4, 3)}, out: []ir.TensorType{f32(0, 3)}},
		{op: "Conv2D", attrs: conv, in: []ir.TensorType{f32(0, 5, 5, 3), f32(3, 3, 3, 4)}, out: []ir.TensorType{f32(0, 5, 5, 4)}},
		{op: "Conv2DBackpropInput", attrs: conv, in: []ir.TensorType{i32(4), f32(3, 3, 3, 4), f32(0, 5, 5, 4)}, host: h(0, v(0, 5, 5, 3)), out: []ir.TensorType{f32(0, 5, 5, 3)}},
		{op: "Conv2DBackpropFilter", attrs: conv, in: []ir.TensorType{f32(0, 5, 5, 3), i32(4), f32(0, 5, 5, 4)}, host: h(1, v(3, 3, 3, 4)), out: []ir.TensorType{f32(3, 3, 3, 4)}},
		{op: "MaxPoolGrad", attrs: A().Is("ksize", 1, 2, 2, 1).Is("strides", 1, 2, 2, 1).S("padding", "VALID"),
			in: []ir.TensorType{f32(0, 4, 4, 3), f32(0, 2, 2, 3), f32(0, 2, 2, 3)}, out: []ir.TensorType{f32(0, 4, 4, 3)}},
		{op: "FusedBatchNormV3", in: []ir.TensorType{f32(0, 4, 4, 3), f32(3), f32(3), f32(0), f32(0)},
			out: []ir.TensorType{f32(0, 4, 4, 3), f32(3), f32(3), f32(3), f32(3), f32()}},
		{op: "GatherV2", in: []ir.TensorType{f32(5, 3), i32(0), i32()}, host: h(2, 0), out: []ir.TensorType{f32(0, 3)}},
		{op: "GatherNd", in: []ir.TensorType{f32(5, 3), i32(0, 1)}, out: []ir.TensorType{f32(0, 3)}},
		{op: "ScatterNd", in: []ir.TensorType{i32(0, 1), f32(0, 3), i32(2)}, host: h(2, v(5, 3)), out: []ir.TensorType{f32(5, 3)}},
		{op: "TopKV2", in: []ir.TensorType{f32(0, 10), i32()}, host: h(1, 3), out: []ir.TensorType{f32(0, 3), i32(0, 3)}},
		{op: "Cumsum", in: []ir.TensorType{f32(3, 0), i32()}, host: h(1, 1), out: []ir.TensorType{f32(3, 0)}},
		{op: "ConcatV2", in: []ir.TensorType{f32(0, 3), f32(0, 3), i32()}, host: h(2, 0), out: []ir.TensorType{f32(0, 3)}},
		{op: "Where", in: []ir.TensorType{f32(0, 3)}, raw: map[int][]byte{0: {}}, out: []ir.TensorType{i64(0, 2)}},
		{op: "Range", attrs: A().T("Tidx", ir.I32), in: []ir.TensorType{i32(), i32(), i32()}, host: h(0, 3, 1, 3, 2, 1), out: []ir.TensorType{i32(0)}},
		{op: "StridedSlice", in: []ir.TensorType{f32(5), i32(1), i32(1), i32(1)}, host: h(1, v(3), 2, v(1), 3, v(1)), out: []ir.TensorType{f32(0)}},
		{op: "FFT", in: []ir.TensorType{tt(ir.C64, 0, 8)}, out: []ir.TensorType{tt(ir.C64, 0, 8)}},
		{op: "RandomUniform", attrs: A().T("dtype", ir.F32), in: []ir.TensorType{i32(2)}, host: h(0, v(0, 4)), out: []ir.TensorType{f32(0, 4)}},
	} {
		a := c.attrs.Attrs
		l, err := buildRaw(t, c.op, a, c.in, c.host, c.raw)
		if err != nil {
			t.Errorf("%s %v: %v", c.op, c.in, err)
			continue
		}
		got := l.Program.ResultTypes()
		for i := range c.out {
			if i >= len(got) || got[i].DType != c.out[i].DType || !got[i].Shape.Equal(c.out[i].Shape) {
				t.Errorf("%s %v: results %v, want %v", c.op, c.in, got, c.out)
				break
			}
		}
	}
}

func f32bytes(xs ...float32) []byte {
	b := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// TestMultiConstraintCombinationsBuild lowers every registration of the
// kernels with several type attributes.
func TestMultiConstraintCombinationsBuild(t *testing.T) {
	for _, k := range Kernels() {
		if len(k.Constraints) < 2 {
			continue
		}
		for _, combo := range k.Combinations() {
			var in []ir.TensorType
			var host map[int][]int64
			var raw map[int][]byte
			a := A()
			for attr, d := range combo {
				a.T(attr, d)
			}
			switch k.Op {
			case "Cast":
				in = []ir.TensorType{tt(combo["SrcT"], 3, 2)}
			case "ArgMax", "ArgMin":
				in, host = []ir.TensorType{tt(combo["T"], 3, 2), i32()}, h(1, 1)
			case "GatherV2":
				in, host = []ir.TensorType{tt(combo["Tparams"], 5, 2), tt(combo["Tindices"], 3), i32()}, h(2, 0)
			case "GatherNd":
				in = []ir.TensorType{tt(combo["Tparams"], 5, 2), tt(combo["Tindices"], 3, 1)}
			case "ScatterNd":
				in, host = []ir.TensorType{tt(combo["Tindices"], 3, 1), tt(combo["T"], 3, 2), i32(2)}, h(2, v(5, 2))
			case "ResourceGather":
				in = []ir.TensorType{tt(combo["dtype"], 5, 2), tt(combo["Tindices"], 3)}
			case "ResourceScatterUpdate":
				in = []ir.TensorType{tt(combo["dtype"], 5, 2), tt(combo["Tindices"], 3), tt(combo["dtype"], 3, 2)}
			case "TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub", "TensorScatterMax", "TensorScatterMin", "ScatterNdNonAliasingAdd":
				in = []ir.TensorType{tt(combo["T"], 5, 2), tt(combo["Tindices"], 3, 1), tt(combo["T"], 3, 2)}
			case "MatrixBandPart":
				in, host = []ir.TensorType{tt(combo["T"], 3, 4), tt(combo["Tindex"]), tt(combo["Tindex"])}, h(1, 1, 2, 0)
			case "Roll":
				in, host = []ir.TensorType{tt(combo["T"], 3, 4), tt(combo["Tshift"]), tt(combo["Taxis"])}, h(1, 2, 2, 1)
			case "ReverseSequence":
				a.I("seq_dim", 1)
				in = []ir.TensorType{tt(combo["T"], 3, 4), tt(combo["Tlen"], 3)}
			case "SegmentSum", "SegmentMean", "SegmentProd", "SegmentMin", "SegmentMax":
				in, raw = []ir.TensorType{tt(combo["T"], 3, 2), tt(combo["Tindices"], 3)}, map[int][]byte{1: make([]byte, 3*combo["Tindices"].Size())}
			case "UnsortedSegmentSum", "UnsortedSegmentProd", "UnsortedSegmentMin", "UnsortedSegmentMax":
				in, host = []ir.TensorType{tt(combo["T"], 3, 2), tt(combo["Tindices"], 3), i32()}, h(2, 4)
			case "LinSpace":
				in, host = []ir.TensorType{tt(combo["T"]), tt(combo["T"]), tt(combo["Tidx"])}, h(2, 5)
			case "OneHot":
				in, host = []ir.TensorType{tt(combo["TI"], 3), i32(), tt(combo["T"]), tt(combo["T"])}, h(1, 4)
			case "SparseSoftmaxCrossEntropyWithLogits":
				in = []ir.TensorType{tt(combo["T"], 3, 4), tt(combo["Tlabels"], 3)}
			case "FusedBatchNormV3":
				in = []ir.TensorType{tt(combo["T"], 2, 2, 2, 3), f32(3), f32(3), f32(3), f32(3)}
			case "FusedBatchNormV2":
				in = []ir.TensorType{tt(combo["T"], 2, 2, 2, 3), f32(3), f32(3), f32(3), f32(3)}
			case "FusedBatchNormGradV2":
				in = []ir.TensorType{tt(combo["T"], 2, 2, 2, 3), tt(combo["T"], 2, 2, 2, 3), f32(3), f32(3), f32(3)}
			case "FusedBatchNormGradV3":
				in = []ir.TensorType{tt(combo["T"], 2, 2, 2, 3), tt(combo["T"], 2, 2, 2, 3), f32(3), f32(3), f32(3), f32()}
			case "RFFT", "RFFT2D", "RFFT3D":
				n := len(k.Op) - len("RFFT") + 1
				if n > 1 {
					n = int(k.Op[len(k.Op)-2] - '0')
				}
				s := ir.Shape(filled(n+1, 4))
				in, host = []ir.TensorType{tt(ir.F32, s...), i32(n)}, h(1, v(make([]int64, n)...))
				for i := range host[1] {
					host[1][i] = 4
				}
			case "IRFFT", "IRFFT2D", "IRFFT3D":
				n := 1
				if len(k.Op) > len("IRFFT") {
					n = int(k.Op[len(k.Op)-2] - '0')
				}
				s := ir.Shape(filled(n+1, 4))
				s[n] = 3
				in, host = []ir.TensorType{tt(ir.C64, s...), i32(n)}, h(1, v(make([]int64, n)...))
				for i := range host[1] {
					host[1][i] = 4
				}
			case "Lu":
				in = []ir.TensorType{tt(combo["T"], 2, 4, 4)}
			default:
				f, ok := familyMultiCases[k.Op]
				if g, simple := familyMultiConstraint[k.Op]; simple && !ok {
					f, ok = func(combo map[string]ir.DType, _ attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
						in, host := g(combo)
						return in, host, nil
					}, true
				}
				if !ok {
					t.Errorf("%s: no multi-constraint case", k.Op)
					continue
				}
				in, host, raw = f(combo, a)
			}
			if _, err := buildRaw(t, k.Op, a.Attrs, in, host, raw); err != nil {
				t.Errorf("%s %v: %v", k.Op, combo, err)
			}
		}
	}
}

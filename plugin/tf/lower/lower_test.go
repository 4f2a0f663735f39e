package lower

import (
	"strings"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

func f32(shape ...int) ir.TensorType { return ir.TensorType{DType: ir.F32, Shape: shape} }

func build(t *testing.T, op string, attrs *Attrs, in []ir.TensorType, host map[int][]int64) (*ir.Program, error) {
	t.Helper()
	k, ok := Lookup(op)
	if !ok {
		t.Fatalf("%s is not registered", op)
	}
	if attrs == nil {
		attrs = NewAttrs()
	}
	return k.Build(attrs, in, host)
}

func TestBroadcastShapes(t *testing.T) {
	if s, ok := BroadcastShapes(ir.Shape{4, 1, 3}, ir.Shape{5, 1}); !ok || !s.Equal(ir.Shape{4, 5, 3}) {
		t.Errorf("got %v %v", s, ok)
	}
	if _, ok := BroadcastShapes(ir.Shape{2, 3}, ir.Shape{4}); ok {
		t.Error("[2,3] and [4] broadcast")
	}
}

func TestSamePaddingMatchesTensorFlow(t *testing.T) {
	// in, window, stride, dilation -> low, high, from TensorFlow's GetWindowedOutputSize.
	for _, c := range []struct{ in, w, s, d, lo, hi int }{
		{9, 3, 1, 1, 1, 1}, {9, 3, 2, 1, 1, 1}, {10, 3, 2, 1, 0, 1}, {10, 4, 2, 1, 1, 1}, {9, 3, 1, 2, 2, 2}, {5, 1, 1, 1, 0, 0},
	} {
		if p := samePadding(c.in, c.w, c.s, c.d); p != [2]int{c.lo, c.hi} {
			t.Errorf("samePadding(%d,%d,%d,%d) = %v, want [%d %d]", c.in, c.w, c.s, c.d, p, c.lo, c.hi)
		}
	}
}

func TestShapesOfLoweredOps(t *testing.T) {
	conv := NewAttrs()
	conv.Ints["strides"] = []int64{1, 2, 2, 1}
	conv.Strings["padding"] = "SAME"
	pool := NewAttrs()
	pool.Ints["ksize"] = []int64{1, 3, 3, 1}
	pool.Ints["strides"] = []int64{1, 2, 2, 1}
	pool.Strings["padding"] = "VALID"
	keep := NewAttrs()
	keep.Bools["keep_dims"] = true
	for _, c := range []struct {
		op    string
		attrs *Attrs
		in    []ir.TensorType
		host  map[int][]int64
		want  ir.Shape
	}{
		{"MatMul", nil, []ir.TensorType{f32(5, 7), f32(7, 3)}, nil, ir.Shape{5, 3}},
		{"BatchMatMulV2", nil, []ir.TensorType{f32(2, 1, 4, 5), f32(3, 5, 6)}, nil, ir.Shape{2, 3, 4, 6}},
		{"Conv2D", conv, []ir.TensorType{f32(2, 9, 10, 3), f32(3, 3, 3, 4)}, nil, ir.Shape{2, 5, 5, 4}},
		{"MaxPool", pool, []ir.TensorType{f32(2, 9, 10, 3)}, nil, ir.Shape{2, 4, 4, 3}},
		{"AvgPool", pool, []ir.TensorType{f32(2, 9, 10, 3)}, nil, ir.Shape{2, 4, 4, 3}},
		{"Sum", keep, []ir.TensorType{f32(3, 4, 5), {DType: ir.I32}}, map[int][]int64{1: {-1, 0}}, ir.Shape{1, 4, 1}},
		{"Mean", nil, []ir.TensorType{f32(3, 4, 5), {DType: ir.I32}}, map[int][]int64{1: {1}}, ir.Shape{3, 5}},
		{"Reshape", nil, []ir.TensorType{f32(3, 4, 5), {DType: ir.I32, Shape: ir.Shape{2}}}, map[int][]int64{1: {5, -1}}, ir.Shape{5, 12}},
		{"Transpose", nil, []ir.TensorType{f32(2, 3, 4), {DType: ir.I32, Shape: ir.Shape{3}}}, map[int][]int64{1: {2, 0, 1}}, ir.Shape{4, 2, 3}},
		{"Softmax", nil, []ir.TensorType{f32(3, 7)}, nil, ir.Shape{3, 7}},
	} {
		p, err := build(t, c.op, c.attrs, c.in, c.host)
		if err != nil {
			t.Errorf("%s: %v", c.op, err)
			continue
		}
		if got := p.ResultTypes()[0].Shape; !got.Equal(c.want) {
			t.Errorf("%s: result shape %v, want %v", c.op, got, c.want)
		}
	}
}

func TestBadInputNamesOpAndShapes(t *testing.T) {
	for _, c := range []struct {
		op   string
		in   []ir.TensorType
		host map[int][]int64
		want []string
	}{
		{"MatMul", []ir.TensorType{f32(5, 7), f32(6, 3)}, nil, []string{"MatMul", "[5,7]", "[6,3]"}},
		{"AddV2", []ir.TensorType{f32(2, 3), f32(4)}, nil, []string{"AddV2", "[2,3]", "[4]"}},
		{"Reshape", []ir.TensorType{f32(3, 4), {DType: ir.I32, Shape: ir.Shape{1}}}, map[int][]int64{1: {5}}, []string{"Reshape", "[3,4]", "[5]"}},
		{"Sum", []ir.TensorType{f32(3, 4), {DType: ir.I32}}, map[int][]int64{1: {2}}, []string{"Sum", "axis 2", "rank 2"}},
		{"Transpose", []ir.TensorType{f32(3, 4), {DType: ir.I32, Shape: ir.Shape{2}}}, map[int][]int64{1: {0, 0}}, []string{"Transpose", "perm"}},
	} {
		_, err := build(t, c.op, nil, c.in, c.host)
		if err == nil {
			t.Errorf("%s %v: no error", c.op, c.in)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", c.op, err, w)
			}
		}
	}
}

func TestEveryKernelRegistersSomeDType(t *testing.T) {
	if len(Kernels()) < 21 {
		t.Fatalf("%d kernels registered, want the 21 of the foundation set", len(Kernels()))
	}
	for _, k := range Kernels() {
		if len(k.Combinations()) == 0 || k.File == "" {
			t.Errorf("%s: %d dtype combinations, file %q", k.Op, len(k.Combinations()), k.File)
		}
		for _, combo := range k.Combinations() {
			for _, d := range combo {
				if d == ir.F64 {
					t.Errorf("%s registers float64, which Metal does not have", k.Op)
				}
			}
		}
	}
}

package lower

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

// Fs sets a list(float) attribute.
func (a attrs) Fs(name string, v ...float32) attrs { a.FloatLists[name] = v; return a }

func i32bytes(xs ...int32) []byte {
	b := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

func init() {
	familyShapeCases = append(familyShapeCases, arrayShapeCases)
	familyMultiCases["DenseBincount"] = func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
		return []ir.TensorType{tt(combo["Tidx"], 3, 4), tt(combo["Tidx"]), tt(combo["T"], 3, 4)}, h(1, 5), nil
	}
	familyMultiCases["HistogramFixedWidth"] = func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
		return []ir.TensorType{tt(combo["T"], 7), tt(combo["T"], 2), i32()}, h(2, 4), nil
	}
	bound := func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
		return []ir.TensorType{tt(combo["T"], 2, 5), tt(combo["T"], 2, 3)}, nil, nil
	}
	familyMultiCases["LowerBound"], familyMultiCases["UpperBound"] = bound, bound
	familyMultiCases["UniqueWithCounts"] = func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
		return []ir.TensorType{tt(combo["T"], 3)}, nil, map[int][]byte{0: make([]byte, 3*combo["T"].Size())}
	}
	familyMultiCases["Bitcast"] = func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
		in, out := combo["T"].Size(), combo["type"].Size()
		if in < out {
			return []ir.TensorType{tt(combo["T"], 3, out/in)}, nil, nil
		}
		return []ir.TensorType{tt(combo["T"], 3, 2)}, nil, nil
	}
	familyMultiCases["Gather"] = func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
		return []ir.TensorType{tt(combo["Tparams"], 5, 2), tt(combo["Tindices"], 3)}, nil, nil
	}
	familyMultiCases["RFFTND"] = func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
		return []ir.TensorType{f32(2, 4, 6), i32(2), i32(2)}, h(1, v(4, 6), 2, v(1, 2)), nil
	}
	familyMultiCases["IRFFTND"] = func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
		return []ir.TensorType{tt(ir.C64, 2, 4, 4), i32(2), i32(2)}, h(1, v(4, 6), 2, v(1, 2)), nil
	}
}

func arrayShapeCases() []shapeCase {
	c64 := func(s ...int) ir.TensorType { return tt(ir.C64, s...) }
	u8 := func(s ...int) ir.TensorType { return tt(ir.U8, s...) }
	f16 := func(s ...int) ir.TensorType { return tt(ir.F16, s...) }
	return []shapeCase{
		{name: "Bincount weighted", op: "Bincount", in: []ir.TensorType{i32(7), i32(), f32(7)}, host: h(1, 5), out: []ir.TensorType{f32(5)}},
		{name: "Bincount unweighted", op: "Bincount", in: []ir.TensorType{i32(7), i32(), i32(0)}, host: h(1, 5), out: []ir.TensorType{i32(5)}},
		{op: "DenseBincount", attrs: A().B("binary_output", true), in: []ir.TensorType{i64(3, 4), i64(), f32(0)}, host: h(1, 6), out: []ir.TensorType{f32(3, 6)}},
		{op: "Bucketize", attrs: A().Fs("boundaries", 0, 1, 2), in: []ir.TensorType{f32(3, 4)}, out: []ir.TensorType{i32(3, 4)}},
		{op: "HistogramFixedWidth", in: []ir.TensorType{f32(3, 4), f32(2), i32()}, host: h(2, 5), out: []ir.TensorType{i32(5)}},
		{op: "LowerBound", in: []ir.TensorType{f32(2, 5), f32(2, 3)}, out: []ir.TensorType{i32(2, 3)}},
		{op: "UpperBound", attrs: A().T("out_type", ir.I64), in: []ir.TensorType{i32(2, 5), i32(2, 3)}, out: []ir.TensorType{i64(2, 3)}},
		{op: "UniqueWithCounts", in: []ir.TensorType{i32(5)}, raw: map[int][]byte{0: i32bytes(3, 1, 3, 7, 1)},
			out: []ir.TensorType{i32(3), i32(5), i32(3)}},
		{op: "DynamicStitch", in: []ir.TensorType{i32(2), i32(3), f32(2, 4), f32(3, 4)}, raw: map[int][]byte{0: i32bytes(0, 4), 1: i32bytes(1, 2, 3)},
			out: []ir.TensorType{f32(5, 4)}},
		{op: "DynamicPartition", attrs: A().I("num_partitions", 3), in: []ir.TensorType{f32(5, 2), i32(5)}, raw: map[int][]byte{1: i32bytes(2, 0, 2, 2, 0)},
			out: []ir.TensorType{f32(2, 2), f32(0, 2), f32(3, 2)}},
		{op: "CheckNumerics", attrs: A().S("message", "m"), in: []ir.TensorType{f32(2)}, raw: map[int][]byte{0: f32bytes(1, 2)}, out: []ir.TensorType{f32(2)}},
		{op: "CheckNumericsV2", in: []ir.TensorType{f16(0)}, raw: map[int][]byte{0: {}}, out: []ir.TensorType{f16(0)}},
		{op: "DataFormatDimMap", in: []ir.TensorType{i32(4)}, out: []ir.TensorType{i32(4)}},
		{op: "DataFormatVecPermute", in: []ir.TensorType{i64(4, 2)}, out: []ir.TensorType{i64(4, 2)}},
		{op: "Bitcast", attrs: A().T("type", ir.U8), in: []ir.TensorType{f32(3)}, out: []ir.TensorType{u8(3, 4)}},
		{op: "Empty", attrs: A().T("dtype", ir.I64), in: []ir.TensorType{i32(2)}, host: h(0, v(2, 3)), out: []ir.TensorType{i64(2, 3)}},
		{op: "DeepCopy", in: []ir.TensorType{f32(3, 4)}, out: []ir.TensorType{f32(3, 4)}},
		{op: "InplaceAdd", in: []ir.TensorType{f32(5, 3), i32(2), f32(2, 3)}, out: []ir.TensorType{f32(5, 3)}},
		{op: "InplaceSub", in: []ir.TensorType{f32(5, 3), i32(2), f32(2, 3)}, out: []ir.TensorType{f32(5, 3)}},
		{op: "InplaceUpdate", in: []ir.TensorType{f32(5, 3), i32(2), f32(2, 3)}, out: []ir.TensorType{f32(5, 3)}},
		{op: "TensorStridedSliceUpdate", in: []ir.TensorType{f32(5, 4), i32(2), i32(2), i32(2), f32(2, 2)}, host: h(1, v(1, 0), 2, v(5, 4), 3, v(2, 2)),
			out: []ir.TensorType{f32(5, 4)}},
		{op: "Reverse", in: []ir.TensorType{f32(2, 3), boolT(2)}, host: h(1, v(0, 1)), out: []ir.TensorType{f32(2, 3)}},
		{op: "Gather", in: []ir.TensorType{f32(5, 3), i32(2, 4)}, out: []ir.TensorType{f32(2, 4, 3)}},
		{op: "FFTND", in: []ir.TensorType{c64(2, 3, 4), i32(2), i32(2)}, host: h(1, v(5, 4), 2, v(0, 2)), out: []ir.TensorType{c64(5, 3, 4)}},
		{name: "FFTND over 4 axes", op: "FFTND", in: []ir.TensorType{c64(2, 3, 4, 2), i32(4), i32(4)}, host: h(1, v(2, 3, 4, 2), 2, v(3, 1, 0, 2)),
			out: []ir.TensorType{c64(4, 3, 2, 2)}},
		{op: "IFFTND", in: []ir.TensorType{c64(2, 3, 4), i32(1), i32(1)}, host: h(1, v(2), 2, v(-2)), out: []ir.TensorType{c64(2, 2, 4)}},
		{op: "RFFTND", in: []ir.TensorType{f32(2, 3, 4), i32(2), i32(2)}, host: h(1, v(4, 2), 2, v(2, 0)), out: []ir.TensorType{c64(2, 3, 4)}},
		{op: "IRFFTND", in: []ir.TensorType{c64(2, 3, 4), i32(2), i32(2)}, host: h(1, v(3, 6), 2, v(0, 2)), out: []ir.TensorType{f32(3, 3, 6)}},
	}
}

// runRaw lowers op with read-input bytes and evaluates it.
func runRaw(t *testing.T, op string, a attrs, in []eval.Tensor, host map[int][]int64, raw map[int][]byte) ([]eval.Tensor, error) {
	t.Helper()
	k, _ := Lookup(op)
	types := make([]ir.TensorType, len(in))
	var args []eval.Tensor
	for i, x := range in {
		types[i] = x.Type
		if !k.IsHostInput(nil, i, len(in)) {
			args = append(args, x)
		}
	}
	l, err := buildRaw(t, op, a.Attrs, types, host, raw)
	if err != nil {
		return nil, err
	}
	return eval.Run(l.Program, args)
}

func TestDataDependentArrayOps(t *testing.T) {
	ids := val(ir.I32, ir.Shape{5}, 3, 1, 3, 7, 1)
	out, err := runRaw(t, "UniqueWithCounts", A(), []eval.Tensor{ids}, nil, map[int][]byte{0: ids.Bytes()})
	if err != nil {
		t.Fatal(err)
	}
	expectClose(t, "UniqueWithCounts y", out[0], []float64{3, 1, 7}, 0)
	expectClose(t, "UniqueWithCounts idx", out[1], []float64{0, 1, 0, 2, 1}, 0)
	expectClose(t, "UniqueWithCounts count", out[2], []float64{2, 2, 1}, 0)

	nan := math.NaN()
	fx := fv(ir.Shape{5}, 0, math.Copysign(0, -1), nan, nan, 1)
	out, err = runRaw(t, "UniqueWithCounts", A(), []eval.Tensor{fx}, nil, map[int][]byte{0: fx.Bytes()})
	if err != nil {
		t.Fatal(err)
	}
	expectClose(t, "UniqueWithCounts of zeros and NaNs", out[2], []float64{2, 1, 1, 1}, 0)
	hx := val(ir.F16, ir.Shape{3}, 0, math.Copysign(0, -1), 0)
	out, err = runRaw(t, "UniqueWithCounts", A(), []eval.Tensor{hx}, nil, map[int][]byte{0: hx.Bytes()})
	if err != nil {
		t.Fatal(err)
	}
	expectClose(t, "UniqueWithCounts of float16 zeros", out[2], []float64{2, 1}, 0)

	i0, i1 := val(ir.I32, ir.Shape{2}, 0, 4), val(ir.I32, ir.Shape{3}, 1, 4, 3)
	d0, d1 := fv(ir.Shape{2, 1}, 10, 11), fv(ir.Shape{3, 1}, 20, 21, 22)
	out, err = runRaw(t, "DynamicStitch", A(), []eval.Tensor{i0, i1, d0, d1}, nil, map[int][]byte{0: i0.Bytes(), 1: i1.Bytes()})
	if err != nil {
		t.Fatal(err)
	}
	// Row 4 is named twice: the later data wins; row 2 is named by none.
	expectClose(t, "DynamicStitch", out[0], []float64{10, 20, 0, 22, 21}, 0)

	p := val(ir.I32, ir.Shape{4}, 1, 0, 1, 1)
	out, err = runRaw(t, "DynamicPartition", A().I("num_partitions", 3), []eval.Tensor{fv(ir.Shape{4}, 1, 2, 3, 4), p}, nil, map[int][]byte{1: p.Bytes()})
	if err != nil {
		t.Fatal(err)
	}
	expectClose(t, "DynamicPartition 0", out[0], []float64{2}, 0)
	expectClose(t, "DynamicPartition 1", out[1], []float64{1, 3, 4}, 0)
	expectShape(t, "DynamicPartition 2", out[2], f32(0))
	bad := val(ir.I32, ir.Shape{4}, 1, 0, 3, 1)
	if _, err := runRaw(t, "DynamicPartition", A().I("num_partitions", 3), []eval.Tensor{fv(ir.Shape{4}, 1, 2, 3, 4), bad}, nil, map[int][]byte{1: bad.Bytes()}); err == nil || !strings.Contains(err.Error(), "partitions[2] = 3 is not in [0, 3)") {
		t.Errorf("DynamicPartition of an out-of-range partition: %v", err)
	}
}

func TestCheckNumericsMessages(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		op   string
		x    []float64
		want string
	}{
		{"CheckNumerics", []float64{1, math.NaN()}, "msg : Tensor had NaN values"},
		{"CheckNumerics", []float64{-inf, math.NaN()}, "msg : Tensor had Inf and NaN values"},
		{"CheckNumericsV2", []float64{-inf, inf, math.NaN()}, "msg : Tensor had -Inf, +Inf, and NaN values"},
		{"CheckNumericsV2", []float64{inf, -inf}, "msg : Tensor had -Inf and +Inf values"},
		{"CheckNumericsV2", []float64{1, 2}, ""},
	} {
		x := fv(ir.Shape{len(c.x)}, c.x...)
		out, err := runRaw(t, c.op, A().S("message", "msg"), []eval.Tensor{x}, nil, map[int][]byte{0: x.Bytes()})
		if c.want == "" {
			if err != nil {
				t.Errorf("%s %v: %v", c.op, c.x, err)
			} else {
				expectClose(t, c.op, out[0], c.x, 0)
			}
			continue
		}
		if err == nil || err.Error() != c.want {
			t.Errorf("%s %v: error %v, want %q", c.op, c.x, err, c.want)
		}
	}
}

func TestBitcastRoundTrip(t *testing.T) {
	x := fv(ir.Shape{3}, 1, -2.5, math.Inf(-1))
	bytes := run(t, "Bitcast", attrs{A().T("type", ir.U8).Attrs}, x)[0]
	expectClose(t, "Bitcast float32 -> uint8", bytes, []float64{0, 0, 0x80, 0x3f, 0, 0, 0x20, 0xc0, 0, 0, 0x80, 0xff}, 0)
	back := run(t, "Bitcast", attrs{A().T("type", ir.F32).Attrs}, bytes)[0]
	expectClose(t, "Bitcast uint8 -> float32", back, x.Floats(), 0)
	wide := run(t, "Bitcast", attrs{A().T("type", ir.I64).Attrs}, val(ir.I32, ir.Shape{1, 2}, -1, 1))[0]
	expectClose(t, "Bitcast int32 -> int64", wide, []float64{float64(int64(1)<<32 | 0xffffffff)}, 0)
}

func TestSearchAndCounting(t *testing.T) {
	nan := math.NaN()
	x := fv(ir.Shape{5}, nan, math.Inf(-1), math.Inf(1), 0, 1)
	expectClose(t, "Bucketize", run(t, "Bucketize", A().Fs("boundaries", 0, 1, 2), x)[0], []float64{3, 0, 3, 1, 2}, 0)
	sorted := fv(ir.Shape{1, 4}, 1, 2, 2, 5)
	vals := fv(ir.Shape{1, 4}, 0, 2, 3, 9)
	expectClose(t, "LowerBound", run(t, "LowerBound", A(), sorted, vals)[0], []float64{0, 1, 3, 4}, 0)
	expectClose(t, "UpperBound", run(t, "UpperBound", A(), sorted, vals)[0], []float64{0, 3, 3, 4}, 0)
	h := run(t, "HistogramFixedWidth", A(), fv(ir.Shape{7}, -1, 0, 0.5, 1, 5, math.Inf(1), math.Inf(-1)), fv(ir.Shape{2}, 0, 1), val(ir.I32, nil, 4))[0]
	expectClose(t, "HistogramFixedWidth", h, []float64{3, 0, 1, 3}, 0)
	db := run(t, "DenseBincount", A().B("binary_output", true), val(ir.I32, ir.Shape{4}, 0, 0, 1, 5), val(ir.I32, nil, 3), fv(ir.Shape{4}, 2, 3, 4, 5))[0]
	expectClose(t, "DenseBincount binary", db, []float64{1, 1, 0}, 0)
	vp := run(t, "DataFormatVecPermute", A().S("src_format", "NHWC").S("dst_format", "NWHC"), val(ir.I32, ir.Shape{2, 2}, 5, 6, 7, 8))[0]
	expectClose(t, "DataFormatVecPermute spatial", vp, []float64{7, 8, 5, 6}, 0)
	dm := run(t, "DataFormatDimMap", A(), val(ir.I32, ir.Shape{6}, -4, -1, 0, 1, 2, 3))[0]
	expectClose(t, "DataFormatDimMap", dm, []float64{0, 1, 0, 2, 3, 1}, 0)
}

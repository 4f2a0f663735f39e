package lower

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

// Numerical checks of lowerings through the reference interpreter
// (eval_test.go), against expectations written from TensorFlow's documented
// conventions or computed by independent naive code.

// val makes a value of dtype d and shape s.
func val(d ir.DType, s ir.Shape, xs ...float64) eval.Tensor {
	return eval.FromFloats(ir.TensorType{DType: d, Shape: s}, xs...)
}

func fv(s ir.Shape, xs ...float64) eval.Tensor { return val(ir.F32, s, xs...) }

// randVal is a value of small integers in [-k, k], exact in every float type.
func randVal(r *rand.Rand, d ir.DType, s ir.Shape, k int) eval.Tensor {
	xs := make([]float64, s.Size())
	for i := range xs {
		xs[i] = float64(r.IntN(2*k+1) - k)
	}
	return val(d, s, xs...)
}

// run lowers op for the given inputs and evaluates it; host inputs take
// their values from the integer inputs.
func run(t *testing.T, op string, a attrs, ins ...eval.Tensor) []eval.Tensor {
	t.Helper()
	out, err := tryRun(t, op, a, ins...)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	return out
}

func tryRun(t *testing.T, op string, a attrs, ins ...eval.Tensor) ([]eval.Tensor, error) {
	t.Helper()
	k, ok := Lookup(op)
	if !ok {
		t.Fatalf("%s is not registered", op)
	}
	types := make([]ir.TensorType, len(ins))
	host := map[int][]int64{}
	var args []eval.Tensor
	for i, in := range ins {
		types[i] = in.Type
		if k.IsHostInput(nil, i, len(ins)) {
			host[i] = slices.Clone(in.I)
			continue
		}
		args = append(args, in)
	}
	if a.Attrs == nil {
		a = A()
	}
	l, err := k.Build(a.Attrs, types, host, nil)
	if err != nil {
		return nil, err
	}
	return eval.Run(l.Program, args)
}

func near(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) <= tol*(1+math.Abs(b))
}

func expectClose(t *testing.T, what string, got eval.Tensor, want []float64, tol float64) {
	t.Helper()
	g := got.Floats()
	if len(g) != len(want) {
		t.Errorf("%s: %d values %v, want %d %v", what, len(g), g, len(want), want)
		return
	}
	for i := range g {
		if !near(g[i], want[i], tol) {
			t.Errorf("%s: element %d is %v, want %v\n got  %v\n want %v", what, i, g[i], want[i], g, want)
			return
		}
	}
}

func expectShape(t *testing.T, what string, got eval.Tensor, want ir.TensorType) {
	t.Helper()
	if got.Type.DType != want.DType || !got.Type.Shape.Equal(want.Shape) {
		t.Errorf("%s: %v, want %v", what, got.Type, want)
	}
}

func TestFloorDivModMatchPython(t *testing.T) {
	xs := []float64{-7, 7, -7, 7, 0, -1, 6, -6}
	ys := []float64{2, 2, -2, -2, 3, 3, 3, -3}
	var div, mod []float64
	for i := range xs {
		q := math.Floor(xs[i] / ys[i])
		div = append(div, q)
		mod = append(mod, xs[i]-q*ys[i])
	}
	s := ir.Shape{len(xs)}
	for _, d := range []ir.DType{ir.I32, ir.I64, ir.F32} {
		x, y := val(d, s, xs...), val(d, s, ys...)
		expectClose(t, "FloorDiv "+d.String(), run(t, "FloorDiv", A(), x, y)[0], div, 0)
		expectClose(t, "FloorMod "+d.String(), run(t, "FloorMod", A(), x, y)[0], mod, 0)
	}
	fx, fy := fv(ir.Shape{4}, -7.5, 7.5, -7.5, 7.5), fv(ir.Shape{4}, 2, 2, -2, -2)
	expectClose(t, "FloorMod float", run(t, "FloorMod", A(), fx, fy)[0], []float64{0.5, 1.5, -1.5, -0.5}, 0)
	expectClose(t, "FloorDiv float", run(t, "FloorDiv", A(), fx, fy)[0], []float64{-4, 3, 3, -4}, 0)
	// Div truncates integers; uint8 FloorDiv is plain division.
	expectClose(t, "Div int", run(t, "Div", A(), val(ir.I32, s, xs...), val(ir.I32, s, ys...))[0], []float64{-3, 3, 3, -3, 0, 0, 2, 2}, 0)
	expectClose(t, "FloorDiv uint8", run(t, "FloorDiv", A(), val(ir.U8, ir.Shape{2}, 7, 200), val(ir.U8, ir.Shape{2}, 2, 3))[0], []float64{3, 66}, 0)
}

func TestElementwiseConventions(t *testing.T) {
	s := ir.Shape{7}
	x := fv(s, 0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6)
	expectClose(t, "Round", run(t, "Round", A(), x)[0], []float64{0, 2, 2, 0, -2, 2, -3}, 0)
	n := fv(ir.Shape{5}, 1, math.NaN(), math.Inf(1), math.Inf(-1), -0.0)
	expectClose(t, "IsNan", run(t, "IsNan", A(), n)[0], []float64{0, 1, 0, 0, 0}, 0)
	expectClose(t, "IsInf", run(t, "IsInf", A(), n)[0], []float64{0, 0, 1, 1, 0}, 0)
	expectClose(t, "IsFinite", run(t, "IsFinite", A(), n)[0], []float64{1, 0, 0, 0, 1}, 0)
	a, b := fv(ir.Shape{3}, 1, 2, 0), fv(ir.Shape{3}, 0, 4, 0)
	expectClose(t, "DivNoNan", run(t, "DivNoNan", A(), a, b)[0], []float64{0, 0.5, 0}, 0)
	expectClose(t, "SquaredDifference", run(t, "SquaredDifference", A(), a, b)[0], []float64{1, 4, 0}, 0)
	expectClose(t, "Reciprocal", run(t, "Reciprocal", A(), fv(ir.Shape{2}, 4, -0.5))[0], []float64{0.25, -2}, 0)
	expectClose(t, "Sign", run(t, "Sign", A(), val(ir.I64, ir.Shape{3}, -4, 0, 9))[0], []float64{-1, 0, 1}, 0)
	expectClose(t, "Square int", run(t, "Square", A(), val(ir.I32, ir.Shape{2}, -3, 4))[0], []float64{9, 16}, 0)
	expectClose(t, "AddN", run(t, "AddN", A(), fv(ir.Shape{2}, 1, 2), fv(ir.Shape{2}, 3, 4), fv(ir.Shape{2}, 5, 6))[0], []float64{9, 12}, 0)
	expectClose(t, "ClipByValue", run(t, "ClipByValue", A(), fv(ir.Shape{4}, -5, 0.5, 3, 9), fv(nil, 0), fv(nil, 3))[0], []float64{0, 0.5, 3, 3}, 0)
	// Broadcasting.
	got := run(t, "Sub", A(), fv(ir.Shape{2, 1}, 10, 20), fv(ir.Shape{3}, 1, 2, 3))[0]
	expectClose(t, "Sub broadcast", got, []float64{9, 8, 7, 19, 18, 17}, 0)
}

// expectRel compares elementwise relative to each wanted value, for results
// near 0 that expectClose's tolerance would accept at any precision.
func expectRel(t *testing.T, what string, got eval.Tensor, want []float64, tol float64) {
	t.Helper()
	g := got.Floats()
	if len(g) != len(want) {
		t.Fatalf("%s: %d values %v, want %d %v", what, len(g), g, len(want), want)
	}
	for i := range g {
		if math.IsNaN(want[i]) {
			if !math.IsNaN(g[i]) {
				t.Errorf("%s: element %d is %v, want NaN", what, i, g[i])
			}
			continue
		}
		if math.IsInf(want[i], 0) || want[i] == 0 {
			if !near(g[i], want[i], 0) || math.Signbit(g[i]) != math.Signbit(want[i]) {
				t.Errorf("%s: element %d is %v, want %v", what, i, g[i], want[i])
			}
			continue
		}
		if math.Abs(g[i]/want[i]-1) > tol {
			t.Errorf("%s: element %d is %v, want %v (relative error %.2g)", what, i, g[i], want[i], math.Abs(g[i]/want[i]-1))
		}
	}
}

// TestHyperbolicAndTan checks Sinh, Cosh and Tan against Go's math across
// their range: near 0, where exp(x) - exp(-x) would cancel, and just below
// overflow, where exp(x) alone overflows though the answer does not.
func TestHyperbolicAndTan(t *testing.T) {
	xs := []float64{0, math.Copysign(0, -1), 1e-6, -3e-5, 0.01, -0.3, 1, -2.5, 7, -15, 19.5, 20.5, -30, 60, 88.9, -89.2, 90, math.Inf(1), math.Inf(-1), math.NaN()}
	apply := func(f func(float64) float64, xs []float64) []float64 {
		out := make([]float64, len(xs))
		for i, v := range xs {
			out[i] = float64(float32(f(float64(float32(v)))))
		}
		return out
	}
	x := fv(ir.Shape{len(xs)}, xs...)
	expectRel(t, "Sinh", run(t, "Sinh", A(), x)[0], apply(math.Sinh, xs), 1e-6)
	expectRel(t, "Cosh", run(t, "Cosh", A(), x)[0], apply(math.Cosh, xs), 1e-6)
	ts := []float64{0, math.Copysign(0, -1), 1e-6, -0.5, 1, -1.2, 1.5, 1.57, -1.5707, 3, -10}
	expectRel(t, "Tan", run(t, "Tan", A(), fv(ir.Shape{len(ts)}, ts...))[0], apply(math.Tan, ts), 1e-5)
	// The 16-bit floats compute in float32: sinh(11.5) is finite in float16
	// though exp(11.5) is not.
	hs := []float64{11.5, -11.5, 0.001, 12}
	for _, d := range []ir.DType{ir.F16, ir.BF16} {
		want := val(d, ir.Shape{len(hs)}, apply(math.Sinh, hs)...).Floats()
		got := run(t, "Sinh", A(), val(d, ir.Shape{len(hs)}, hs...))[0]
		expectShape(t, "Sinh "+d.String(), got, ir.TensorType{DType: d, Shape: ir.Shape{len(hs)}})
		expectRel(t, "Sinh "+d.String(), got, want, 0)
		want = val(d, ir.Shape{len(hs)}, apply(math.Cosh, hs)...).Floats()
		expectRel(t, "Cosh "+d.String(), run(t, "Cosh", A(), val(d, ir.Shape{len(hs)}, hs...))[0], want, 0)
	}
	expectClose(t, "Inv", run(t, "Inv", A(), fv(ir.Shape{3}, 4, -0.5, 0))[0], []float64{0.25, -2, math.Inf(1)}, 0)
}

// TestInverseTrigAndErfc checks the compositions of trig.go against Go's
// math, in float32, across their domains and at the IEEE specials.
func TestInverseTrigAndErfc(t *testing.T) {
	neg0, inf, nan := math.Copysign(0, -1), math.Inf(1), math.NaN()
	apply := func(f func(float64) float64, xs []float64) []float64 {
		out := make([]float64, len(xs))
		for i, v := range xs {
			out[i] = float64(float32(f(float64(float32(v)))))
		}
		return out
	}
	wide := []float64{0, neg0, 1e-7, -3e-5, 0.01, -0.3, 0.41, 0.42, -0.9, 1, -1, 2.4, 2.42, -7, 100, -3e4, 1e30, inf, -inf, nan}
	unit := []float64{0, neg0, 1e-7, -3e-5, 0.01, -0.3, 0.5, -0.7071, 0.9, -0.99, 0.99999, 1, -1, 1.5, -inf, nan}
	for _, c := range []struct {
		op  string
		f   func(float64) float64
		xs  []float64
		tol float64
	}{
		{"Atan", math.Atan, wide, 4e-7},
		{"Asinh", math.Asinh, wide, 4e-7},
		{"Asin", math.Asin, unit, 1e-6},
		{"Acos", math.Acos, unit, 1e-6},
		{"Atanh", math.Atanh, unit, 1e-6},
		{"Acosh", math.Acosh, []float64{1, 1 + 1e-6, 1.001, 1.5, 2, 10, 4095, 5000, 1e30, inf, 0.5, -1, nan}, 1e-6},
		{"Erfc", math.Erfc, []float64{0, neg0, -0.3, -2, -inf, 0.2, 0.49, 0.5, 0.51, 1, 2, 3.5, 5, 9, 9.5, 11, inf, nan}, 1e-6},
	} {
		expectRel(t, c.op, run(t, c.op, A(), fv(ir.Shape{len(c.xs)}, c.xs...))[0], apply(c.f, c.xs), c.tol)
	}
	// Atan2 at every pairing of zeros, infinities, NaN and finite values.
	vals := []float64{0, neg0, 1, -1, 0.3, -2.5, 1e30, -1e-30, inf, -inf, nan}
	var ys, xs, want []float64
	for _, y := range vals {
		for _, x := range vals {
			ys, xs = append(ys, y), append(xs, x)
			want = append(want, float64(float32(math.Atan2(float64(float32(y)), float64(float32(x))))))
		}
	}
	n := ir.Shape{len(ys)}
	expectRel(t, "Atan2", run(t, "Atan2", A(), fv(n, ys...), fv(n, xs...))[0], want, 4e-7)
	// The 16-bit floats compute in float32 and round once.
	hs := []float64{0.25, -0.75, 0.999}
	for _, d := range []ir.DType{ir.F16, ir.BF16} {
		x := val(d, ir.Shape{len(hs)}, hs...)
		want := val(d, ir.Shape{len(hs)}, apply(math.Asin, x.Floats())...).Floats()
		expectRel(t, "Asin "+d.String(), run(t, "Asin", A(), x)[0], want, 0)
	}
}

// TestBitwise checks the shifts' clamping and PopulationCount against
// math/bits at every width the device has.
func TestBitwise(t *testing.T) {
	xs := []int64{0, 1, -1, 5, -100, 127, math.MinInt32, math.MaxInt32}
	for _, d := range []ir.DType{ir.I32, ir.I64, ir.U8} {
		in := make([]int64, len(xs))
		want := make([]float64, len(xs))
		for i, x := range xs {
			switch d {
			case ir.I32:
				in[i] = int64(int32(x))
				want[i] = float64(bits.OnesCount32(uint32(x)))
			case ir.I64:
				in[i] = x * 0x100000001
				want[i] = float64(bits.OnesCount64(uint64(in[i])))
			case ir.U8:
				in[i] = int64(uint8(x))
				want[i] = float64(bits.OnesCount8(uint8(x)))
			}
		}
		x := eval.New(ir.TensorType{DType: d, Shape: ir.Shape{len(xs)}})
		copy(x.I, in)
		expectClose(t, "PopulationCount "+d.String(), run(t, "PopulationCount", A(), x)[0], want, 0)
	}
	x := val(ir.I32, ir.Shape{5}, -8, -8, 3, 3, 1)
	y := val(ir.I32, ir.Shape{5}, -1, 40, 1, 31, 32)
	expectClose(t, "RightShift", run(t, "RightShift", A(), x, y)[0], []float64{-8, -1, 1, 0, 0}, 0)
	expectClose(t, "LeftShift", run(t, "LeftShift", A(), x, y)[0], []float64{-8, 0, 6, math.MinInt32, math.MinInt32}, 0)
	u := val(ir.U8, ir.Shape{3}, 200, 200, 1)
	expectClose(t, "RightShift uint8", run(t, "RightShift", A(), u, val(ir.U8, ir.Shape{3}, 1, 9, 0))[0], []float64{100, 1, 1}, 0)
}

// TestSegments checks the segment reductions' empty segments and dropped
// ids against TensorFlow's documented values.
func TestSegments(t *testing.T) {
	data := fv(ir.Shape{5}, 1, -2, 4, 3, -5)
	ids := val(ir.I32, ir.Shape{5}, 0, 0, 2, 2, 3)
	raw := map[int][]byte{1: {0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0}}
	for op, want := range map[string][]float64{
		"SegmentSum": {-1, 0, 7, -5}, "SegmentMean": {-0.5, 0, 3.5, -5}, "SegmentProd": {-2, 1, 12, -5},
		"SegmentMin": {-2, 0, 3, -5}, "SegmentMax": {1, 0, 4, -5},
	} {
		k, _ := Lookup(op)
		l, err := k.Build(NewAttrs(), []ir.TensorType{data.Type, ids.Type}, nil, raw)
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		out, err := eval.Run(l.Program, []eval.Tensor{data, ids})
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		expectClose(t, op, out[0], want, 0)
	}
	uids := val(ir.I32, ir.Shape{5}, 3, -1, 0, 3, 0)
	for op, want := range map[string][]float64{
		"UnsortedSegmentSum": {-1, 0, 0, 4}, "UnsortedSegmentProd": {-20, 1, 1, 3},
		"UnsortedSegmentMin": {-5, math.MaxFloat32, math.MaxFloat32, 1}, "UnsortedSegmentMax": {4, -math.MaxFloat32, -math.MaxFloat32, 3},
	} {
		expectClose(t, op, run(t, op, A(), data, uids, val(ir.I32, nil, 4))[0], want, 0)
	}
}

// TestInTopKAndLinSpace checks InTopKV2's ties, bounds and non-finite
// rows, and LinSpace's exact ends.
func TestInTopKAndLinSpace(t *testing.T) {
	p := fv(ir.Shape{4, 3}, 1, 3, 3, 0, 5, 2, 1, 2, 3, math.NaN(), 1, 2)
	tg := val(ir.I32, ir.Shape{4}, 1, 2, 3, 2)
	expectClose(t, "InTopKV2", run(t, "InTopKV2", A(), p, tg, val(ir.I32, nil, 1))[0], []float64{1, 0, 0, 0}, 0)
	expectClose(t, "InTopKV2 k 2", run(t, "InTopKV2", A(), p, tg, val(ir.I32, nil, 2))[0], []float64{1, 1, 0, 0}, 0)
	expectClose(t, "LinSpace", run(t, "LinSpace", A(), fv(nil, -1), fv(nil, 2), val(ir.I32, nil, 4))[0], []float64{-1, 0, 1, 2}, 0)
	x := fv(ir.Shape{4}, 0, math.Log(3), -200, 1)
	want := []float64{0, math.Log(4), math.Log(4), math.Log(4 + math.E)}
	expectClose(t, "CumulativeLogsumexp", run(t, "CumulativeLogsumexp", A(), x, val(ir.I32, nil, 0))[0], want, 1e-6)
	want = []float64{math.Inf(-1), 0, math.Log(4), math.Log(4)}
	expectClose(t, "CumulativeLogsumexp exclusive", run(t, "CumulativeLogsumexp", A().B("exclusive", true), x, val(ir.I32, nil, 0))[0], want, 1e-6)
	expectClose(t, "LinSpace 1", run(t, "LinSpace", A(), fv(nil, 3), fv(nil, 5), val(ir.I32, nil, 1))[0], []float64{3}, 0)
}

// TestZeroGuardedBinary checks Xlogy, Xdivy and MulNoNan against plain loops:
// 0 where the guarding operand is 0 whatever the other is, and broadcasting.
func TestZeroGuardedBinary(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	xs := []float64{0, 0, 0, 0, 2, -3, 0.5, nan, inf}
	ys := []float64{0, nan, inf, -1, 0.25, 4, 0, 2, 0}
	want := func(f func(x, y float64) float64) []float64 {
		out := make([]float64, len(xs))
		for i := range xs {
			out[i] = float64(float32(f(xs[i], ys[i])))
		}
		return out
	}
	x, y := fv(ir.Shape{len(xs)}, xs...), fv(ir.Shape{len(ys)}, ys...)
	xlogy := func(x, y float64) float64 {
		if x == 0 {
			return 0
		}
		return x * math.Log(y)
	}
	xdivy := func(x, y float64) float64 {
		if x == 0 {
			return 0
		}
		return x / y
	}
	mulNoNan := func(x, y float64) float64 {
		if y == 0 {
			return 0
		}
		return x * y
	}
	expectClose(t, "Xlogy", run(t, "Xlogy", A(), x, y)[0], want(xlogy), 1e-6)
	expectClose(t, "Xdivy", run(t, "Xdivy", A(), x, y)[0], want(xdivy), 1e-6)
	expectClose(t, "MulNoNan", run(t, "MulNoNan", A(), x, y)[0], want(mulNoNan), 1e-6)
	// Broadcasting 2x1 with 3, in bfloat16.
	bx, by := []float64{0, 2}, []float64{0, 1, 4}
	for _, c := range []struct {
		op string
		f  func(x, y float64) float64
	}{{"Xlogy", xlogy}, {"Xdivy", xdivy}, {"MulNoNan", mulNoNan}} {
		var w []float64
		for _, a := range bx {
			for _, b := range by {
				w = append(w, c.f(a, b))
			}
		}
		got := run(t, c.op, A(), val(ir.BF16, ir.Shape{2, 1}, bx...), val(ir.BF16, ir.Shape{3}, by...))[0]
		expectShape(t, c.op+" broadcast", got, ir.TensorType{DType: ir.BF16, Shape: ir.Shape{2, 3}})
		expectClose(t, c.op+" broadcast", got, w, 1e-2)
	}
	if _, err := tryRun(t, "Xlogy", A(), fv(ir.Shape{2}, 1, 2), fv(ir.Shape{3}, 1, 2, 3)); err == nil || !strings.Contains(err.Error(), "Xlogy") {
		t.Errorf("Xlogy of [2] and [3]: error %v, want one naming the op", err)
	}
}

func TestComparisonsAndSelect(t *testing.T) {
	x, y := val(ir.I32, ir.Shape{2, 2}, 1, 2, 3, 4), val(ir.I32, ir.Shape{2}, 2, 2)
	expectClose(t, "Less", run(t, "Less", A(), x, y)[0], []float64{1, 0, 0, 0}, 0)
	expectClose(t, "GreaterEqual", run(t, "GreaterEqual", A(), x, y)[0], []float64{0, 1, 1, 1}, 0)
	expectClose(t, "NotEqual", run(t, "NotEqual", A(), x, y)[0], []float64{1, 0, 1, 1}, 0)
	ne := run(t, "NotEqual", A().B("incompatible_shape_error", false), fv(ir.Shape{2}, 1, 2), fv(ir.Shape{3}, 1, 2, 3))[0]
	expectClose(t, "NotEqual incompatible", ne, []float64{1}, 0)
	if _, err := tryRun(t, "Equal", A(), fv(ir.Shape{2}, 1, 2), fv(ir.Shape{3}, 1, 2, 3)); err == nil {
		t.Error("Equal of [2] and [3] with incompatible_shape_error did not fail")
	}
	cond := val(ir.Bool, ir.Shape{2}, 1, 0)
	tv, ev := fv(ir.Shape{2, 2}, 1, 2, 3, 4), fv(ir.Shape{2, 2}, 5, 6, 7, 8)
	expectClose(t, "Select rows", run(t, "Select", A(), cond, tv, ev)[0], []float64{1, 2, 7, 8}, 0)
	expectClose(t, "SelectV2 broadcast", run(t, "SelectV2", A(), cond, tv, ev)[0], []float64{1, 6, 3, 8}, 0)
	expectClose(t, "Cast to bool", run(t, "Cast", A().T("DstT", ir.Bool), fv(ir.Shape{3}, 0, -0.5, math.NaN()))[0], []float64{0, 1, 1}, 0)
	expectClose(t, "Cast to int", run(t, "Cast", A().T("DstT", ir.I32), fv(ir.Shape{3}, 2.7, -2.7, 0))[0], []float64{2, -2, 0}, 0)
	expectClose(t, "LogicalOr", run(t, "LogicalOr", A(), val(ir.Bool, ir.Shape{2, 1}, 0, 1), cond)[0], []float64{1, 0, 1, 1}, 0)
}

func TestReductions(t *testing.T) {
	x := fv(ir.Shape{2, 3}, 1, 2, 3, 4, 5, 6)
	ax := func(a ...float64) eval.Tensor { return val(ir.I32, ir.Shape{len(a)}, a...) }
	expectClose(t, "Sum", run(t, "Sum", A(), x, ax(-1))[0], []float64{6, 15}, 0)
	expectClose(t, "Mean", run(t, "Mean", A(), x, ax(0))[0], []float64{2.5, 3.5, 4.5}, 0)
	expectClose(t, "Prod", run(t, "Prod", A(), x, ax(0, 1))[0], []float64{720}, 0)
	expectClose(t, "Max", run(t, "Max", A(), x, ax(1))[0], []float64{3, 6}, 0)
	expectClose(t, "Min keep", run(t, "Min", A().B("keep_dims", true), x, ax(1))[0], []float64{1, 4}, 0)
	expectClose(t, "EuclideanNorm", run(t, "EuclideanNorm", A(), fv(ir.Shape{2, 2}, 3, 4, 6, 8), ax(1))[0], []float64{5, 10}, 1e-7)
	expectClose(t, "Mean int truncates", run(t, "Mean", A(), val(ir.I32, ir.Shape{2, 2}, 1, 2, -1, -2), ax(1))[0], []float64{1, -1}, 0)
	expectClose(t, "Mean empty", run(t, "Mean", A(), fv(ir.Shape{0, 2}), ax(0))[0], []float64{math.NaN(), math.NaN()}, 0)
	expectClose(t, "All", run(t, "All", A(), val(ir.Bool, ir.Shape{2, 2}, 1, 1, 1, 0), ax(1))[0], []float64{1, 0}, 0)
	expectClose(t, "Any", run(t, "Any", A(), val(ir.Bool, ir.Shape{2, 2}, 0, 0, 1, 0), ax(1))[0], []float64{0, 1}, 0)
	am := run(t, "ArgMax", A(), fv(ir.Shape{2, 3}, 1, 5, 5, 7, 2, 7), val(ir.I32, nil, 1))[0]
	expectShape(t, "ArgMax", am, i64(2))
	expectClose(t, "ArgMax ties", am, []float64{1, 0}, 0)
	expectClose(t, "ArgMin", run(t, "ArgMin", A().T("output_type", ir.I32), fv(ir.Shape{2, 3}, 1, 5, 5, 7, 2, 7), val(ir.I32, nil, 0))[0], []float64{0, 1, 0}, 0)
	expectClose(t, "L2Loss", run(t, "L2Loss", A(), fv(ir.Shape{3}, 1, 2, 3))[0], []float64{7}, 0)
	// float16 sums accumulate in float32: 2048 + 1 + 1 is 2050 (in half,
	// 2048+1 rounds back to 2048).
	h := val(ir.F16, ir.Shape{3}, 2048, 1, 1)
	expectClose(t, "Sum f16 accumulates in f32", run(t, "Sum", A(), h, ax(0))[0], []float64{2050}, 0)
}

func TestMatMul(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	a, b := randVal(r, ir.F32, ir.Shape{3, 4}, 3), randVal(r, ir.F32, ir.Shape{4, 5}, 3)
	want := naiveMatMul(a.Floats(), b.Floats(), 3, 4, 5)
	expectClose(t, "MatMul", run(t, "MatMul", A(), a, b)[0], want, 0)
	at := transpose2(a, 3, 4)
	bt := transpose2(b, 4, 5)
	expectClose(t, "MatMul transposed", run(t, "MatMul", A().B("transpose_a", true).B("transpose_b", true), at, bt)[0], want, 0)
	// Batched with broadcasting and adjoints.
	x := randVal(r, ir.F32, ir.Shape{2, 1, 3, 4}, 3)
	y := randVal(r, ir.F32, ir.Shape{3, 5, 4}, 3)
	got := run(t, "BatchMatMulV2", A().B("adj_y", true), x, y)[0]
	expectShape(t, "BatchMatMulV2", got, f32(2, 3, 3, 5))
	var w []float64
	for i := range 2 {
		for j := range 3 {
			xm := x.Floats()[i*12 : i*12+12]
			ym := transposeF(y.Floats()[j*20:j*20+20], 5, 4)
			w = append(w, naiveMatMul(xm, ym, 3, 4, 5)...)
		}
	}
	expectClose(t, "BatchMatMulV2 adj_y", got, w, 0)
	got = run(t, "BatchMatMulV3", A().T("Tout", ir.F32).B("adj_y", true), x, y)[0]
	expectClose(t, "BatchMatMulV3", got, w, 0)
}

func naiveMatMul(a, b []float64, m, k, n int) []float64 {
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			for p := range k {
				out[i*n+j] += a[i*k+p] * b[p*n+j]
			}
		}
	}
	return out
}

func transposeF(a []float64, m, n int) []float64 {
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			out[j*m+i] = a[i*n+j]
		}
	}
	return out
}

func transpose2(v eval.Tensor, m, n int) eval.Tensor {
	return val(v.Type.DType, ir.Shape{n, m}, transposeF(v.Floats(), m, n)...)
}

// naiveEinsum evaluates an explicit equation without ellipsis by looping
// over every assignment of the labels.
func naiveEinsum(eq string, ins []eval.Tensor) ([]float64, ir.Shape) {
	lhs, rhs, _ := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	size := map[byte]int{}
	var labels []byte
	for j, term := range terms {
		for i := range len(term) {
			if _, ok := size[term[i]]; !ok {
				labels = append(labels, term[i])
			}
			size[term[i]] = ins[j].Type.Shape[i]
		}
	}
	var outShape ir.Shape
	for i := range len(rhs) {
		outShape = append(outShape, size[rhs[i]])
	}
	all := make(ir.Shape, len(labels))
	for i, l := range labels {
		all[i] = size[l]
	}
	out := make([]float64, outShape.Size())
	for k := range all.Size() {
		asg := eval.Unravel(k, all)
		at := func(l byte) int { return asg[slices.Index(labels, l)] }
		p := 1.0
		for j, term := range terms {
			idx := make([]int, len(term))
			for i := range len(term) {
				idx[i] = at(term[i])
			}
			p *= ins[j].At(eval.Ravel(idx, ins[j].Type.Shape))
		}
		oi := make([]int, len(rhs))
		for i := range len(rhs) {
			oi[i] = at(rhs[i])
		}
		out[eval.Ravel(oi, outShape)] += p
	}
	return out, outShape
}

func TestEinsum(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		eq     string
		shapes []ir.Shape
	}{
		{"ij,jk->ik", []ir.Shape{{3, 4}, {4, 5}}},
		{"ij->ji", []ir.Shape{{3, 4}}},
		{"ii->i", []ir.Shape{{4, 4}}},
		{"ii->", []ir.Shape{{4, 4}}},
		{"ij->", []ir.Shape{{3, 4}}},
		{"ij->j", []ir.Shape{{3, 4}}},
		{"i,i->", []ir.Shape{{5}, {5}}},
		{"i,j->ij", []ir.Shape{{3}, {4}}},
		{"ij,ij->ij", []ir.Shape{{3, 4}, {3, 4}}},
		{"bij,bjk->bik", []ir.Shape{{2, 3, 4}, {2, 4, 5}}},
		{"abc,cd->abd", []ir.Shape{{2, 3, 4}, {4, 5}}},
		{"abcd,cde->abe", []ir.Shape{{2, 3, 4, 2}, {4, 2, 3}}},
		{"aecd,abcd->acbe", []ir.Shape{{2, 3, 4, 2}, {2, 5, 4, 2}}},
		{"acbe,aecd->abcd", []ir.Shape{{2, 4, 5, 3}, {2, 3, 4, 2}}},
		{"ijk,jil->kl", []ir.Shape{{2, 3, 4}, {3, 2, 5}}},
		{"iij,jk->ik", []ir.Shape{{3, 3, 2}, {2, 4}}},
		{"ij,jk", []ir.Shape{{3, 4}, {4, 5}}},
		{"ba", []ir.Shape{{3, 4}}},
		{"ab,ab", []ir.Shape{{3, 4}, {3, 4}}},
	} {
		ins := make([]eval.Tensor, len(c.shapes))
		for i, s := range c.shapes {
			ins[i] = randVal(r, ir.F32, s, 3)
		}
		eq := c.eq
		switch eq { // implicit outputs, as numpy forms them
		case "ij,jk":
			eq = "ij,jk->ik"
		case "ba":
			eq = "ba->ab"
		case "ab,ab":
			eq = "ab,ab->"
		}
		want, shape := naiveEinsum(eq, ins)
		got := run(t, "Einsum", A().S("equation", c.eq), ins...)[0]
		expectShape(t, c.eq, got, ir.TensorType{DType: ir.F32, Shape: shape})
		expectClose(t, c.eq, got, want, 0)
	}
	// Ellipsis broadcasting agrees with BatchMatMulV2.
	x := randVal(r, ir.F32, ir.Shape{2, 1, 3, 4}, 3)
	y := randVal(r, ir.F32, ir.Shape{5, 4, 6}, 3)
	want := run(t, "BatchMatMulV2", A(), x, y)[0]
	got := run(t, "Einsum", A().S("equation", "...ij,...jk->...ik"), x, y)[0]
	expectShape(t, "ellipsis", got, want.Type)
	expectClose(t, "ellipsis", got, want.Floats(), 0)
	got = run(t, "Einsum", A().S("equation", "...ij,jk->...ik"), x, randVal(r, ir.F32, ir.Shape{4, 6}, 3))[0]
	expectShape(t, "ellipsis one side", got, f32(2, 1, 3, 6))
	for _, bad := range []struct {
		eq string
		in []ir.TensorType
	}{
		{"ij,jk->ik", []ir.TensorType{f32(3, 4), f32(5, 6)}},
		{"ij->ik", []ir.TensorType{f32(3, 4)}},
		{"ij,jk,kl->il", []ir.TensorType{f32(3, 4), f32(4, 5), f32(5, 6)}},
		{"i.j->ij", []ir.TensorType{f32(3, 4)}},
		{"ijk->ijk", []ir.TensorType{f32(3, 4)}},
	} {
		if _, err := build(t, "Einsum", A().S("equation", bad.eq).Attrs, bad.in, nil); err == nil {
			t.Errorf("Einsum %q on %v did not fail", bad.eq, bad.in)
		}
	}
}

func TestActivations(t *testing.T) {
	xs := []float64{-20, -3, -0.5, 0, 0.5, 3, 20}
	x := fv(ir.Shape{len(xs)}, xs...)
	apply := func(f func(float64) float64) []float64 {
		out := make([]float64, len(xs))
		for i, v := range xs {
			out[i] = f(v)
		}
		return out
	}
	const alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
	expectClose(t, "Relu6", run(t, "Relu6", A(), fv(ir.Shape{3}, -1, 3, 7))[0], []float64{0, 3, 6}, 0)
	expectClose(t, "Elu", run(t, "Elu", A(), x)[0], apply(func(v float64) float64 {
		if v < 0 {
			return math.Exp(v) - 1
		}
		return v
	}), 1e-6)
	expectClose(t, "Selu", run(t, "Selu", A(), x)[0], apply(func(v float64) float64 {
		if v < 0 {
			return scale * alpha * (math.Exp(v) - 1)
		}
		return scale * v
	}), 1e-6)
	expectClose(t, "LeakyRelu", run(t, "LeakyRelu", A().F("alpha", 0.1), x)[0], apply(func(v float64) float64 { return math.Max(v, 0.1*v) }), 1e-6)
	expectClose(t, "LeakyRelu default", run(t, "LeakyRelu", A(), fv(ir.Shape{1}, -1))[0], []float64{-0.2}, 1e-6)
	expectClose(t, "Softplus", run(t, "Softplus", A(), x)[0], apply(func(v float64) float64 { return math.Log1p(math.Exp(v)) }), 1e-6)
	expectClose(t, "Softsign", run(t, "Softsign", A(), x)[0], apply(func(v float64) float64 { return v / (1 + math.Abs(v)) }), 1e-6)
	g := fv(ir.Shape{len(xs)}, 1, 2, 3, 4, 5, 6, 7)
	gs := g.Floats()
	grad := func(f func(g, v float64) float64) []float64 {
		out := make([]float64, len(xs))
		for i, v := range xs {
			out[i] = f(gs[i], v)
		}
		return out
	}
	expectClose(t, "ReluGrad", run(t, "ReluGrad", A(), g, x)[0], grad(func(g, v float64) float64 { return g * boolFloat(v > 0) }), 0)
	expectClose(t, "Relu6Grad", run(t, "Relu6Grad", A(), g, x)[0], grad(func(g, v float64) float64 { return g * boolFloat(v > 0 && v < 6) }), 0)
	expectClose(t, "LeakyReluGrad", run(t, "LeakyReluGrad", A().F("alpha", 0.3), g, x)[0], grad(func(g, v float64) float64 {
		if v > 0 {
			return g
		}
		return 0.3 * g
	}), 1e-6)
	// EluGrad and SeluGrad take the forward outputs.
	y := run(t, "Elu", A(), x)[0]
	expectClose(t, "EluGrad", run(t, "EluGrad", A(), g, y)[0], grad(func(g, v float64) float64 {
		if v < 0 {
			return g * math.Exp(v)
		}
		return g
	}), 1e-5)
	y = run(t, "Selu", A(), x)[0]
	expectClose(t, "SeluGrad", run(t, "SeluGrad", A(), g, y)[0], grad(func(g, v float64) float64 {
		if v < 0 {
			return g * scale * alpha * math.Exp(v)
		}
		return g * scale
	}), 1e-5)
	expectClose(t, "SoftplusGrad", run(t, "SoftplusGrad", A(), g, x)[0], grad(func(g, v float64) float64 { return g / (1 + math.Exp(-v)) }), 1e-6)
	expectClose(t, "SoftsignGrad", run(t, "SoftsignGrad", A(), g, x)[0], grad(func(g, v float64) float64 { return g / ((1 + math.Abs(v)) * (1 + math.Abs(v))) }), 1e-6)
	// SigmoidGrad(y, dy) and TanhGrad(y, dy) take the forward output first.
	yy := fv(ir.Shape{2}, 0.25, 0.5)
	dy := fv(ir.Shape{2}, 2, 4)
	expectClose(t, "SigmoidGrad", run(t, "SigmoidGrad", A(), yy, dy)[0], []float64{2 * 0.25 * 0.75, 4 * 0.5 * 0.5}, 1e-7)
	expectClose(t, "TanhGrad", run(t, "TanhGrad", A(), yy, dy)[0], []float64{2 * (1 - 0.0625), 4 * 0.75}, 1e-7)
	// RsqrtGrad, SqrtGrad, ReciprocalGrad and InvGrad are 0 where dy is 0,
	// even where y is 0, inf or NaN.
	ys := []float64{0.25, 2, -3, 0, math.Inf(1), math.NaN(), 0}
	dys := []float64{2, -1, 0.5, 0, 0, 0, 1}
	yGrad := func(f func(y, dy float64) float64) []float64 {
		out := make([]float64, len(ys))
		for i := range ys {
			if dys[i] != 0 {
				out[i] = f(ys[i], dys[i])
			}
		}
		return out
	}
	yv, dyv := fv(ir.Shape{len(ys)}, ys...), fv(ir.Shape{len(dys)}, dys...)
	expectClose(t, "RsqrtGrad", run(t, "RsqrtGrad", A(), yv, dyv)[0], yGrad(func(y, dy float64) float64 { return -0.5 * dy * y * y * y }), 1e-6)
	expectClose(t, "SqrtGrad", run(t, "SqrtGrad", A(), yv, dyv)[0], yGrad(func(y, dy float64) float64 { return 0.5 * dy / y }), 1e-6)
	for _, op := range []string{"ReciprocalGrad", "InvGrad"} {
		expectClose(t, op, run(t, op, A(), yv, dyv)[0], yGrad(func(y, dy float64) float64 { return -dy * y * y }), 1e-6)
	}
}

func TestSoftmaxAndCrossEntropy(t *testing.T) {
	logits := fv(ir.Shape{2, 3}, 1, 2, 3, 1000, 1000, 1000)
	sm := run(t, "Softmax", A(), logits)[0]
	e := []float64{math.Exp(-2), math.Exp(-1), 1}
	s := e[0] + e[1] + e[2]
	expectClose(t, "Softmax", sm, []float64{e[0] / s, e[1] / s, e[2] / s, 1. / 3, 1. / 3, 1. / 3}, 1e-6)
	ls := run(t, "LogSoftmax", A(), logits)[0]
	expectClose(t, "LogSoftmax", ls, []float64{-2 - math.Log(s), -1 - math.Log(s), -math.Log(s), -math.Log(3), -math.Log(3), -math.Log(3)}, 1e-6)
	labels := fv(ir.Shape{2, 3}, 0, 0, 1, 0.5, 0.25, 0.25)
	out := run(t, "SoftmaxCrossEntropyWithLogits", A(), logits, labels)
	lsv := ls.Floats()
	lab := labels.Floats()
	var loss []float64
	for i := range 2 {
		l := 0.0
		for j := range 3 {
			l -= lab[3*i+j] * lsv[3*i+j]
		}
		loss = append(loss, l)
	}
	expectClose(t, "xent loss", out[0], loss, 1e-6)
	smv := sm.Floats()
	back := make([]float64, 6)
	for i := range back {
		back[i] = smv[i] - lab[i]
	}
	expectClose(t, "xent backprop", out[1], back, 1e-6)
	sp := run(t, "SparseSoftmaxCrossEntropyWithLogits", A(), logits, val(ir.I32, ir.Shape{2}, 2, 7))
	expectClose(t, "sparse loss", sp[0], []float64{-lsv[2], math.NaN()}, 1e-6)
	expectClose(t, "sparse backprop", sp[1], []float64{smv[0], smv[1], smv[2] - 1, math.NaN(), math.NaN(), math.NaN()}, 1e-6)
}

func TestBiasAddAndGrad(t *testing.T) {
	x := fv(ir.Shape{2, 2, 3}, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3)
	b := fv(ir.Shape{3}, 10, 20, 30)
	expectClose(t, "BiasAdd", run(t, "BiasAdd", A(), x, b)[0], []float64{10, 20, 30, 11, 21, 31, 12, 22, 32, 13, 23, 33}, 0)
	xc := fv(ir.Shape{1, 3, 2}, 0, 1, 2, 3, 4, 5)
	expectClose(t, "BiasAdd NCHW", run(t, "BiasAdd", A().S("data_format", "NCHW"), xc, b)[0], []float64{10, 11, 22, 23, 34, 35}, 0)
	expectClose(t, "BiasAddGrad", run(t, "BiasAddGrad", A(), x)[0], []float64{6, 6, 6}, 0)
	expectClose(t, "BiasAddGrad NCHW", run(t, "BiasAddGrad", A().S("data_format", "NCHW"), xc)[0], []float64{1, 5, 9}, 0)
}

// pySlice resolves start:stop:step for a dim of size n as Python does
// (slice.indices): the reference for StridedSlice.
func pySlice(start, stop *int, step, n int) []int {
	var lo, hi int
	if step > 0 {
		lo, hi = 0, n
	} else {
		lo, hi = -1, n-1
	}
	canon := func(p *int, def int) int {
		if p == nil {
			return def
		}
		v := *p
		if v < 0 {
			v += n
			if v < lo {
				v = lo
			}
		} else if v > hi {
			v = hi
		}
		return v
	}
	var s, e int
	if step > 0 {
		s, e = canon(start, lo), canon(stop, hi)
	} else {
		s, e = canon(start, hi), canon(stop, lo)
	}
	var out []int
	for i := s; (step > 0 && i < e) || (step < 0 && i > e); i += step {
		out = append(out, i)
	}
	return out
}

func ip(v int) *int { return &v }

func TestStridedSlice(t *testing.T) {
	in := ir.Shape{4, 5, 6}
	x := eval.Iota(f32(in...))
	type dimSpec struct {
		start, stop *int
		step        int
	}
	all := dimSpec{nil, nil, 1}
	for _, c := range []struct {
		name                   string
		begin, end, strides    []int64
		bm, em, ell, nam, shrk int64
		// Expected: per input dim the python slice (nil entries mean an
		// integer index, taken from idx), then the output shape.
		dims  []dimSpec
		index map[int]int
		shape ir.Shape
	}{
		{name: "x[1:3, ::2, -1:0:-2]", begin: v(1, 0, -1), end: v(3, 0, 0), strides: v(1, 2, -2), bm: 2, em: 2,
			dims: []dimSpec{{ip(1), ip(3), 1}, {nil, nil, 2}, {ip(-1), ip(0), -2}}, shape: ir.Shape{2, 3, 3}},
		{name: "x[::-1]", begin: v(0), end: v(0), strides: v(-1), bm: 1, em: 1,
			dims: []dimSpec{{nil, nil, -1}, all, all}, shape: ir.Shape{4, 5, 6}},
		{name: "x[-10:10, 3]", begin: v(-10, 3), end: v(10, 4), strides: v(1, 1), shrk: 2,
			dims: []dimSpec{{ip(-10), ip(10), 1}, {}, all}, index: map[int]int{1: 3}, shape: ir.Shape{4, 6}},
		{name: "x[..., -1]", begin: v(0, -1), end: v(0, 0), strides: v(1, 1), ell: 1, shrk: 2,
			dims: []dimSpec{all, all, {}}, index: map[int]int{2: 5}, shape: ir.Shape{4, 5}},
		{name: "x[1, ..., None, 2:]", begin: v(1, 0, 0, 2), end: v(2, 0, 0, 0), strides: v(1, 1, 1, 1), ell: 2, nam: 4, shrk: 1, em: 8,
			dims: []dimSpec{{}, all, {ip(2), nil, 1}}, index: map[int]int{0: 1}, shape: ir.Shape{5, 1, 4}},
		{name: "x[None, 2, :, ::3]", begin: v(0, 2, 0, 0), end: v(0, 3, 0, 0), strides: v(1, 1, 1, 3), nam: 1, shrk: 2, bm: 12, em: 12,
			dims: []dimSpec{{}, all, {nil, nil, 3}}, index: map[int]int{0: 2}, shape: ir.Shape{1, 5, 2}},
		{name: "x[3:1]", begin: v(3), end: v(1), strides: v(1),
			dims: []dimSpec{{ip(3), ip(1), 1}, all, all}, shape: ir.Shape{0, 5, 6}},
		{name: "x[-1, -2, -3]", begin: v(-1, -2, -3), end: v(0, 0, 0), strides: v(1, 1, 1), shrk: 7,
			dims: []dimSpec{{}, {}, {}}, index: map[int]int{0: 3, 1: 3, 2: 3}, shape: nil},
		{name: "x[:, 4:-7:-2]", begin: v(0, 4), end: v(0, -7), strides: v(1, -2), bm: 1, em: 1,
			dims: []dimSpec{all, {ip(4), ip(-7), -2}, all}, shape: ir.Shape{4, 3, 6}},
	} {
		a := A().I("begin_mask", c.bm).I("end_mask", c.em).I("ellipsis_mask", c.ell).I("new_axis_mask", c.nam).I("shrink_axis_mask", c.shrk)
		n := len(c.begin)
		hv := func(xs []int64) eval.Tensor {
			f := make([]float64, len(xs))
			for i, x := range xs {
				f[i] = float64(x)
			}
			return val(ir.I64, ir.Shape{n}, f...)
		}
		got := run(t, "StridedSlice", a, x, hv(c.begin), hv(c.end), hv(c.strides))[0]
		expectShape(t, c.name, got, ir.TensorType{DType: ir.F32, Shape: c.shape})
		// Reference: the python-sliced index lists per dim.
		lists := make([][]int, 3)
		for d := range 3 {
			if i, ok := c.index[d]; ok {
				lists[d] = []int{i}
				continue
			}
			ds := c.dims[d]
			lists[d] = pySlice(ds.start, ds.stop, ds.step, in[d])
		}
		var want []float64
		var pos []int
		for _, i := range lists[0] {
			for _, j := range lists[1] {
				for _, k := range lists[2] {
					want = append(want, float64(eval.Ravel([]int{i, j, k}, in)))
					pos = append(pos, eval.Ravel([]int{i, j, k}, in))
				}
			}
		}
		expectClose(t, c.name, got, want, 0)
		// The gradient scatters dy back to those positions.
		dy := eval.Iota(got.Type)
		for k := range dy.F {
			dy.F[k]++
		}
		g := run(t, "StridedSliceGrad", a, val(ir.I32, ir.Shape{3}, 4, 5, 6), hv(c.begin), hv(c.end), hv(c.strides), dy)[0]
		gw := make([]float64, in.Size())
		for k, p := range pos {
			gw[p] = float64(k + 1)
		}
		expectClose(t, c.name+" grad", g, gw, 0)
	}
	for _, bad := range []struct {
		begin, end, strides []int64
		shrk, ell           int64
	}{
		{v(0), v(1), v(0), 0, 0},                            // zero stride
		{v(7), v(8), v(1), 1, 0},                            // shrink out of range
		{v(0, 0, 0, 0), v(1, 1, 1, 1), v(1, 1, 1, 1), 0, 0}, // too many dims
		{v(0, 0), v(1, 1), v(1, 1), 0, 3},                   // two ellipses
	} {
		a := A().I("shrink_axis_mask", bad.shrk).I("ellipsis_mask", bad.ell)
		n := len(bad.begin)
		host := map[int][]int64{1: bad.begin, 2: bad.end, 3: bad.strides}
		_, err := build(t, "StridedSlice", a.Attrs, []ir.TensorType{f32(4, 5, 6), i32(n), i32(n), i32(n)}, host)
		if err == nil {
			t.Errorf("StridedSlice begin %v end %v strides %v did not fail", bad.begin, bad.end, bad.strides)
		}
	}
}

func TestMovement(t *testing.T) {
	x := eval.Iota(f32(2, 3))
	i32v := func(xs ...float64) eval.Tensor { return val(ir.I32, ir.Shape{len(xs)}, xs...) }
	mat := func(xs ...float64) eval.Tensor { return val(ir.I32, ir.Shape{len(xs) / 2, 2}, xs...) }
	expectClose(t, "Pad", run(t, "Pad", A(), x, mat(1, 0, 0, 1))[0], []float64{0, 0, 0, 0, 0, 1, 2, 0, 3, 4, 5, 0}, 0)
	expectClose(t, "PadV2", run(t, "PadV2", A(), x, mat(0, 0, 1, 1), fv(nil, 9))[0], []float64{9, 0, 1, 2, 9, 9, 3, 4, 5, 9}, 0)
	r := eval.Iota(f32(3))
	expectClose(t, "MirrorPad REFLECT", run(t, "MirrorPad", A().S("mode", "REFLECT"), r, mat(2, 2))[0], []float64{2, 1, 0, 1, 2, 1, 0}, 0)
	expectClose(t, "MirrorPad SYMMETRIC", run(t, "MirrorPad", A().S("mode", "SYMMETRIC"), r, mat(2, 3))[0], []float64{1, 0, 0, 1, 2, 2, 1, 0}, 0)
	if _, err := tryRun(t, "MirrorPad", A().S("mode", "REFLECT"), r, mat(3, 0)); err == nil {
		t.Error("REFLECT by 3 of a dim of 3 did not fail")
	}
	m2 := run(t, "MirrorPad", A().S("mode", "REFLECT"), x, mat(1, 1, 2, 0))[0]
	expectShape(t, "MirrorPad 2-D", m2, f32(4, 5))
	expectClose(t, "MirrorPad 2-D", m2, []float64{5, 4, 3, 4, 5, 2, 1, 0, 1, 2, 5, 4, 3, 4, 5, 2, 1, 0, 1, 2}, 0)
	expectClose(t, "Tile", run(t, "Tile", A(), x, i32v(2, 2))[0], []float64{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}, 0)
	expectClose(t, "Slice", run(t, "Slice", A(), x, i32v(1, 1), i32v(-1, 2))[0], []float64{4, 5}, 0)
	sp := run(t, "SplitV", A().I("num_split", 2), x, i32v(-1, 2), val(ir.I32, nil, 1))
	expectClose(t, "SplitV 0", sp[0], []float64{0, 3}, 0)
	expectClose(t, "SplitV 1", sp[1], []float64{1, 2, 4, 5}, 0)
	s := run(t, "Split", A().I("num_split", 3), val(ir.I32, nil, -1), x)
	expectClose(t, "Split 2", s[2], []float64{2, 5}, 0)
	pk := run(t, "Pack", A().I("axis", -1), fv(ir.Shape{2}, 1, 2), fv(ir.Shape{2}, 3, 4))[0]
	expectShape(t, "Pack", pk, f32(2, 2))
	expectClose(t, "Pack", pk, []float64{1, 3, 2, 4}, 0)
	up := run(t, "Unpack", A().I("num", 3).I("axis", 1), x)
	expectClose(t, "Unpack 1", up[1], []float64{1, 4}, 0)
	cc := run(t, "ConcatV2", A(), x, eval.Iota(f32(2, 1)), val(ir.I64, nil, -1))[0]
	expectClose(t, "ConcatV2", cc, []float64{0, 1, 2, 0, 3, 4, 5, 1}, 0)
	expectClose(t, "Range", run(t, "Range", A().T("Tidx", ir.I32), val(ir.I32, nil, 3), val(ir.I32, nil, 10), val(ir.I32, nil, 3))[0], []float64{3, 6, 9}, 0)
	expectClose(t, "Range down", run(t, "Range", A().T("Tidx", ir.I64), val(ir.I64, nil, 5), val(ir.I64, nil, 0), val(ir.I64, nil, -2))[0], []float64{5, 3, 1}, 0)
	expectClose(t, "Fill", run(t, "Fill", A(), i32v(2, 2), fv(nil, 7))[0], []float64{7, 7, 7, 7}, 0)
	expectClose(t, "OnesLike bool", run(t, "OnesLike", A(), val(ir.Bool, ir.Shape{2}, 0, 1))[0], []float64{1, 1}, 0)
	expectClose(t, "BroadcastTo", run(t, "BroadcastTo", A(), fv(ir.Shape{2, 1}, 1, 2), i32v(2, 3))[0], []float64{1, 1, 1, 2, 2, 2}, 0)
	expectClose(t, "ReverseV2", run(t, "ReverseV2", A(), x, i32v(-1, 0))[0], []float64{5, 4, 3, 2, 1, 0}, 0)
	sq := run(t, "Squeeze", A().Is("squeeze_dims", 0), eval.Iota(f32(1, 2, 1)))[0]
	expectShape(t, "Squeeze", sq, f32(2, 1))
	if _, err := tryRun(t, "Squeeze", A().Is("squeeze_dims", 1), eval.Iota(f32(1, 2, 1))); err == nil {
		t.Error("squeezing a dim of 2 did not fail")
	}
}

func TestIndexing(t *testing.T) {
	params := eval.Iota(f32(3, 4))
	ids := val(ir.I32, ir.Shape{2, 2}, 2, 0, 5, -1)
	g := run(t, "GatherV2", A(), params, ids, val(ir.I32, nil, 0))[0]
	expectShape(t, "GatherV2", g, f32(2, 2, 4))
	expectClose(t, "GatherV2 (out of range gives zeros)", g, []float64{8, 9, 10, 11, 0, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0}, 0)
	g = run(t, "GatherV2", A(), params, val(ir.I64, ir.Shape{3}, 3, 0, 3), val(ir.I32, nil, -1))[0]
	expectClose(t, "GatherV2 axis 1", g, []float64{3, 0, 3, 7, 4, 7, 11, 8, 11}, 0)
	// batch_dims 1: out[b, i, ...] = params[b, idx[b, i], ...].
	p3 := eval.Iota(f32(2, 3, 2))
	g = run(t, "GatherV2", A().I("batch_dims", 1), p3, val(ir.I32, ir.Shape{2, 2}, 2, 0, 1, 1), val(ir.I32, nil, 1))[0]
	expectShape(t, "GatherV2 batch_dims", g, f32(2, 2, 2))
	expectClose(t, "GatherV2 batch_dims", g, []float64{4, 5, 0, 1, 8, 9, 8, 9}, 0)
	// batch_dims 1 with axis 2: out[b, j, i] = params[b, j, idx[b, i]].
	g = run(t, "GatherV2", A().I("batch_dims", -1), p3, val(ir.I32, ir.Shape{2, 3}, 1, 1, 0, 0, 1, 1), val(ir.I32, nil, 2))[0]
	expectShape(t, "GatherV2 batch_dims axis 2", g, f32(2, 3, 3))
	expectClose(t, "GatherV2 batch_dims axis 2", g, []float64{1, 1, 0, 3, 3, 2, 5, 5, 4, 6, 7, 7, 8, 9, 9, 10, 11, 11}, 0)
	nd := run(t, "GatherNd", A(), params, val(ir.I64, ir.Shape{3, 2}, 1, 2, 0, 3, 3, 0))[0]
	expectClose(t, "GatherNd", nd, []float64{6, 3, 0}, 0)
	rows := run(t, "GatherNd", A(), params, val(ir.I32, ir.Shape{2, 1}, 2, 1))[0]
	expectClose(t, "GatherNd rows", rows, []float64{8, 9, 10, 11, 4, 5, 6, 7}, 0)
	sc := run(t, "ScatterNd", A(), val(ir.I32, ir.Shape{3, 1}, 1, 3, 1), fv(ir.Shape{3}, 5, 6, 7), val(ir.I32, ir.Shape{1}, 5))[0]
	expectClose(t, "ScatterNd sums duplicates", sc, []float64{0, 12, 0, 6, 0}, 0)
	tu := run(t, "TensorScatterUpdate", A(), eval.Iota(f32(2, 3)), val(ir.I32, ir.Shape{1, 2}, 1, 0), fv(ir.Shape{1}, 9))[0]
	expectClose(t, "TensorScatterUpdate", tu, []float64{0, 1, 2, 9, 4, 5}, 0)
	ta := run(t, "TensorScatterAdd", A(), eval.Iota(f32(2, 3)), val(ir.I32, ir.Shape{2, 1}, 1, 1), fv(ir.Shape{2, 3}, 1, 1, 1, 2, 2, 2))[0]
	expectClose(t, "TensorScatterAdd", ta, []float64{0, 1, 2, 6, 7, 8}, 0)
	oh := run(t, "OneHot", A(), val(ir.I32, ir.Shape{3}, 0, 2, 5), val(ir.I32, nil, 3), fv(nil, 1), fv(nil, -1))[0]
	expectClose(t, "OneHot", oh, []float64{1, -1, -1, -1, -1, 1, -1, -1, -1}, 0)
	oh = run(t, "OneHot", A().I("axis", 0), val(ir.I64, ir.Shape{2}, 1, 0), val(ir.I32, nil, 2), fv(nil, 1), fv(nil, 0))[0]
	expectClose(t, "OneHot axis 0", oh, []float64{0, 1, 1, 0}, 0)
	x := fv(ir.Shape{2, 4}, 1, 2, 3, 4, 5, 6, 7, 8)
	ax := val(ir.I32, nil, 1)
	expectClose(t, "Cumsum", run(t, "Cumsum", A(), x, ax)[0], []float64{1, 3, 6, 10, 5, 11, 18, 26}, 0)
	expectClose(t, "Cumsum exclusive", run(t, "Cumsum", A().B("exclusive", true), x, ax)[0], []float64{0, 1, 3, 6, 0, 5, 11, 18}, 0)
	expectClose(t, "Cumsum reverse", run(t, "Cumsum", A().B("reverse", true), x, ax)[0], []float64{10, 9, 7, 4, 26, 21, 15, 8}, 0)
	expectClose(t, "Cumsum exclusive reverse", run(t, "Cumsum", A().B("reverse", true).B("exclusive", true), x, ax)[0], []float64{9, 7, 4, 0, 21, 15, 8, 0}, 0)
	expectClose(t, "Cumsum axis 0", run(t, "Cumsum", A(), x, val(ir.I32, nil, 0))[0], []float64{1, 2, 3, 4, 6, 8, 10, 12}, 0)
	expectClose(t, "Cumprod", run(t, "Cumprod", A(), x, ax)[0], []float64{1, 2, 6, 24, 5, 30, 210, 1680}, 0)
	expectClose(t, "Cumprod exclusive reverse", run(t, "Cumprod", A().B("reverse", true).B("exclusive", true), x, ax)[0], []float64{24, 12, 4, 1, 336, 56, 8, 1}, 0)
	cp := run(t, "Cumprod", A(), val(ir.I64, ir.Shape{11}, 1, 2, 1, 3, 1, 1, 2, 1, 1, 1, 2), val(ir.I32, nil, 0))[0]
	expectClose(t, "Cumprod long", cp, []float64{1, 2, 2, 6, 6, 6, 12, 12, 12, 12, 24}, 0)
	tk := run(t, "TopKV2", A(), fv(ir.Shape{2, 5}, 3, 1, 4, 1, 5, 9, 2, 6, 5, 3), val(ir.I32, nil, 3))
	expectClose(t, "TopK values", tk[0], []float64{5, 4, 3, 9, 6, 5}, 0)
	expectClose(t, "TopK indices", tk[1], []float64{4, 2, 0, 0, 2, 3}, 0)
	tk = run(t, "TopKV2", A(), fv(ir.Shape{4}, 1, 2, 2, 1), val(ir.I32, nil, 4))
	expectClose(t, "TopK ties keep the lower index first", tk[1], []float64{1, 2, 0, 3}, 0)
}

func TestWhere(t *testing.T) {
	in := ir.TensorType{DType: ir.F32, Shape: ir.Shape{2, 3}}
	raw := f32bytes(0, 1, float32(math.Copysign(0, -1)), float32(math.NaN()), 0, -2)
	l, err := buildRaw(t, "Where", nil, []ir.TensorType{in}, nil, map[int][]byte{0: raw})
	if err != nil {
		t.Fatal(err)
	}
	out, err := eval.Run(l.Program, []eval.Tensor{eval.New(in)})
	if err != nil {
		t.Fatal(err)
	}
	expectShape(t, "Where", out[0], i64(3, 2))
	expectClose(t, "Where", out[0], []float64{0, 1, 1, 0, 1, 2}, 0)
	if _, err := buildRaw(t, "Where", nil, []ir.TensorType{in}, nil, nil); err == nil {
		t.Error("Where without the input's bytes did not fail")
	}
	l, err = buildRaw(t, "Where", nil, []ir.TensorType{boolT()}, nil, map[int][]byte{0: {1}})
	if err != nil || !l.Program.ResultTypes()[0].Shape.Equal(ir.Shape{1, 0}) {
		t.Errorf("Where of a true scalar: %v, %v", l, err)
	}
}

// TestBoundedRandomIntegers checks the mapping of uniform bits to [lo, hi)
// against uint64 arithmetic, at the awkward spans.
func TestBoundedRandomIntegers(t *testing.T) {
	bits64 := []int64{0, 1, 12345, math.MaxInt64, math.MinInt64, -1, -2, -123456789, math.MinInt64 + 7}
	for _, c := range []struct{ lo, hi int64 }{
		{0, 10}, {-5, 5}, {0, 1 << 62}, {-1 << 62, 1 << 62}, {math.MinInt64, math.MaxInt64}, {math.MinInt64, 0},
		{math.MinInt64, 1}, {-3, math.MaxInt64}, {0, 7}, {0, 1 << 40},
	} {
		b := ir.NewBuilder()
		p := b.Parameter(i64(len(bits64)))
		prog, err := b.Build(bounded(b, p, c.lo, c.hi))
		if err != nil {
			t.Fatal(err)
		}
		arg := eval.New(i64(len(bits64)))
		copy(arg.I, bits64)
		out, err := eval.Run(prog, []eval.Tensor{arg})
		if err != nil {
			t.Fatal(err)
		}
		span := uint64(c.hi) - uint64(c.lo)
		for i, x := range bits64 {
			want := c.lo + int64(uint64(x)%span)
			if out[0].I[i] != want {
				t.Errorf("[%d, %d) bits %d: got %d, want %d", c.lo, c.hi, x, out[0].I[i], want)
			}
		}
	}
	bits32 := []int64{0, 1, math.MaxInt32, math.MinInt32, -1, -7}
	for _, c := range []struct{ lo, hi int64 }{{0, 10}, {-5, 5}, {math.MinInt32, math.MaxInt32}, {-1 << 30, 1 << 30}} {
		b := ir.NewBuilder()
		p := b.Parameter(i32(len(bits32)))
		prog, err := b.Build(bounded(b, p, c.lo, c.hi))
		if err != nil {
			t.Fatal(err)
		}
		arg := eval.New(i32(len(bits32)))
		copy(arg.I, bits32)
		out, err := eval.Run(prog, []eval.Tensor{arg})
		if err != nil {
			t.Fatal(err)
		}
		span := uint32(c.hi) - uint32(c.lo)
		for i, x := range bits32 {
			want := int64(int32(c.lo) + int32(uint32(x)%span))
			if out[0].I[i] != want {
				t.Errorf("int32 [%d, %d) bits %d: got %d, want %d", c.lo, c.hi, x, out[0].I[i], want)
			}
		}
	}
}

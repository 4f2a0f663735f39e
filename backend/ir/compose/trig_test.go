package compose

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

// ulps is the distance between two float32s in units in the last place,
// counted along the line of float32 values (so across zero too).
func ulps(a, b float32) int64 {
	key := func(f float32) int64 {
		v := int64(int32(math.Float32bits(f)))
		if v < 0 {
			v = math.MinInt32 - v
		}
		return v
	}
	d := key(a) - key(b)
	if d < 0 {
		d = -d
	}
	return d
}

// values are float32 operands: the specials (signed zeros, infinities, NaN,
// the smallest subnormal and normal, the largest finite), then values
// spread over many binades.
func values(n int) []float64 {
	vs := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1e-45, -1e-45,
		1.1754944e-38, -1.1754944e-38, 3.4028235e38, -3.4028235e38, 1, -1, 0.5, 2, 0.41421357, 2.4142137}
	r := rand.New(rand.NewPCG(1, 2))
	for range n {
		v := float64(float32(math.Ldexp(r.Float64()+0.5, r.IntN(80)-40)))
		if r.IntN(2) == 0 {
			v = -v
		}
		vs = append(vs, v)
	}
	for i, v := range vs {
		vs[i] = float64(float32(v)) // the operands are float32s
	}
	return vs
}

// run evaluates f over float32 operands with the IR's reference semantics.
func run(t *testing.T, f func(b *ir.Builder, xs []ir.Value) ir.Value, args ...[]float64) []float64 {
	t.Helper()
	var ins []eval.Tensor
	for _, a := range args {
		ins = append(ins, eval.FromFloats(ir.TensorType{DType: ir.F32, Shape: ir.Shape{len(a)}}, a...))
	}
	return evaluate(t, f, ins...).F
}

// evaluate builds f over parameters of the inputs' types and runs it with
// the IR's reference semantics.
func evaluate(t *testing.T, f func(b *ir.Builder, xs []ir.Value) ir.Value, ins ...eval.Tensor) eval.Tensor {
	t.Helper()
	b := ir.NewBuilder()
	var ps []ir.Value
	for _, in := range ins {
		ps = append(ps, b.Parameter(in.Type))
	}
	p, err := b.Build(f(b, ps))
	if err != nil {
		t.Fatal(err)
	}
	out, err := eval.Run(p, ins)
	if err != nil {
		t.Fatal(err)
	}
	return out[0]
}

// check compares got with want (float64, rounded to float32 here): NaN
// where want is, the same bits where want is an exact special (a zero, an
// infinity, ±pi, ±pi/2, ±pi/4, ±3pi/4), else within maxULP.
func check(t *testing.T, name string, in []string, got, want []float64, maxULP int64) {
	t.Helper()
	worst := int64(0)
	for i := range want {
		g, w := float32(got[i]), float32(want[i])
		switch {
		case math.IsNaN(float64(w)):
			if !math.IsNaN(float64(g)) {
				t.Errorf("%s(%s) = %v, want NaN", name, in[i], g)
			}
			continue
		case w == 0 || math.IsInf(float64(w), 0):
			if math.Float32bits(g) != math.Float32bits(w) {
				t.Errorf("%s(%s) = %v, want %v bit for bit", name, in[i], g, w)
			}
			continue
		}
		d := ulps(g, w)
		worst = max(worst, d)
		if d > maxULP {
			t.Errorf("%s(%s) = %v, want %v: %d ulp", name, in[i], g, w, d)
		}
	}
	t.Logf("%s: %d values, worst %d ulp", name, len(want), worst)
}

func TestAtanAccuracy(t *testing.T) {
	xs := values(4000)
	got := run(t, func(b *ir.Builder, v []ir.Value) ir.Value { return Atan(b, v[0]) }, xs)
	want := make([]float64, len(xs))
	in := make([]string, len(xs))
	for i, x := range xs {
		want[i], in[i] = math.Atan(x), ftoa(x)
	}
	check(t, "atan", in, got, want, 2)
}

func TestAtan2Accuracy(t *testing.T) {
	vs := values(120)
	var ys, xs, want []float64
	var in []string
	for _, y := range vs {
		for _, x := range vs {
			ys, xs = append(ys, y), append(xs, x)
			want = append(want, math.Atan2(y, x))
			in = append(in, ftoa(y)+", "+ftoa(x))
		}
	}
	got := run(t, func(b *ir.Builder, v []ir.Value) ir.Value { return Atan2(b, v[0], v[1]) }, ys, xs)
	check(t, "atan2", in, got, want, 3)
}

func ftoa(v float64) string {
	if v == 0 && math.Signbit(v) {
		return "-0"
	}
	return strconv.FormatFloat(v, 'g', 9, 64)
}

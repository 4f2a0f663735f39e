package lower

import (
	"math"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	familyShapeCases = append(familyShapeCases, func() []shapeCase {
		fqa := A().F("min", -1).F("max", 2)
		pc := A()
		return []shapeCase{
			{op: "FakeQuantWithMinMaxArgs", attrs: fqa, in: []ir.TensorType{f32(4, 5)}, out: []ir.TensorType{f32(4, 5)}},
			{op: "FakeQuantWithMinMaxArgsGradient", attrs: fqa, in: []ir.TensorType{f32(4, 5), f32(4, 5)}, out: []ir.TensorType{f32(4, 5)}},
			{op: "FakeQuantWithMinMaxVars", in: []ir.TensorType{f32(4, 5), f32(), f32()}, out: []ir.TensorType{f32(4, 5)}},
			{op: "FakeQuantWithMinMaxVarsGradient", in: []ir.TensorType{f32(4, 5), f32(4, 5), f32(), f32()},
				out: []ir.TensorType{f32(4, 5), f32(), f32()}},
			{op: "FakeQuantWithMinMaxVarsPerChannel", attrs: pc, in: []ir.TensorType{f32(2, 3, 4, 5), f32(5), f32(5)}, out: []ir.TensorType{f32(2, 3, 4, 5)}},
			{op: "FakeQuantWithMinMaxVarsPerChannelGradient", in: []ir.TensorType{f32(3, 5), f32(3, 5), f32(5), f32(5)},
				out: []ir.TensorType{f32(3, 5), f32(5), f32(5)}},
			{op: "QuantizeAndDequantizeV2", in: []ir.TensorType{f32(4, 5), f32(), f32()}, out: []ir.TensorType{f32(4, 5)}},
			{op: "QuantizeAndDequantizeV4", attrs: A().I("axis", 1), in: []ir.TensorType{f32(4, 5), f32(5), f32(5)}, out: []ir.TensorType{f32(4, 5)}},
			{op: "QuantizeAndDequantizeV3", in: []ir.TensorType{f32(4, 5), f32(), f32(), i32()}, host: h(3, 6), out: []ir.TensorType{f32(4, 5)}},
			{op: "QuantizeAndDequantizeV4Grad", attrs: A().I("axis", 0), in: []ir.TensorType{f32(4, 5), f32(4, 5), f32(4), f32(4)},
				out: []ir.TensorType{f32(4, 5), f32(4), f32(4)}},
		}
	})
}

// nudgeRef is fake_quant_ops_functor.h's Nudge in Go float32, each step
// rounded (the conversions keep Go from fusing a multiply and an add).
func nudgeRef(min, max, qmin, qmax float32) (nmin, nmax, scale float32) {
	scale = float32(max-min) / float32(qmax-qmin)
	zpf := qmin - float32(min/scale)
	var zp float32
	switch {
	case zpf < qmin:
		zp = qmin
	case zpf > qmax:
		zp = qmax
	default:
		zp = float32(math.Round(float64(zpf)))
	}
	return float32(qmin-zp) * scale, float32(qmax-zp) * scale, scale
}

// The lowering agrees bit for bit with Nudge and the Vars functor
// transcribed into Go, over ranges whose zero points round both ways.
func TestFakeQuantMatchesFunctor(t *testing.T) {
	xs := []float64{-12, -3.3, -0.1, 0, 0.049, 0.5, 2.7, 9, 100, 0.0123, -0.77, 1e-3}
	for _, r := range []struct {
		min, max float32
		bits     int64
		narrow   bool
	}{{-1, 2, 8, false}, {-10, 0.001, 16, false}, {-3, 7, 16, false}, {-5, 1, 9, true}, {0.5, 4, 4, false}, {-0.37, 0.81, 8, true}} {
		a := A().I("num_bits", r.bits).B("narrow_range", r.narrow)
		got := run(t, "FakeQuantWithMinMaxVars", a, fv(ir.Shape{len(xs)}, xs...), fv(nil, float64(r.min)), fv(nil, float64(r.max)))[0]
		var qmin float32
		if r.narrow {
			qmin = 1
		}
		nmin, nmax, scale := nudgeRef(r.min, r.max, qmin, float32(int(1)<<r.bits-1))
		want := make([]float64, len(xs))
		for i, x := range xs {
			c := float32(math.Max(math.Min(float64(float32(x)), float64(nmax)), float64(nmin)))
			q := float32(math.Floor(float64(float32(float32(c-nmin)/scale) + 0.5)))
			want[i] = float64(float32(q*scale) + nmin)
		}
		expectClose(t, "FakeQuantWithMinMaxVars", got, want, 0)
	}
}

func TestQuantBadInput(t *testing.T) {
	for _, c := range []struct {
		op   string
		a    attrs
		in   []ir.TensorType
		want string
	}{
		{"FakeQuantWithMinMaxArgs", A().F("min", 1).F("max", 1), []ir.TensorType{f32(3)}, "smaller than max"},
		{"FakeQuantWithMinMaxVars", A().I("num_bits", 17), []ir.TensorType{f32(3), f32(), f32()}, "num_bits"},
		{"FakeQuantWithMinMaxVarsPerChannel", A(), []ir.TensorType{f32(3, 4), f32(3), f32(3)}, "per channel"},
		{"QuantizeAndDequantizeV2", A().B("range_given", true).I("axis", 1), []ir.TensorType{f32(3, 4), f32(4), f32(4)}, "without an axis"},
		{"QuantizeAndDequantizeV4", A().S("round_mode", "UP"), []ir.TensorType{f32(3, 4), f32(), f32()}, "round_mode"},
		{"QuantizeAndDequantizeV2", A().I("axis", 2), []ir.TensorType{f32(3, 4), f32(), f32()}, "axis"},
		{"QuantizeAndDequantizeV4Grad", A().I("axis", 0), []ir.TensorType{f32(3, 4), f32(3, 4), f32(4), f32(4)}, "3 values"},
	} {
		k, _ := Lookup(c.op)
		_, err := k.Build(c.a.Attrs, c.in, nil, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.op) {
			t.Errorf("%s %v: error %v, want one naming the op and %q", c.op, c.in, err, c.want)
		}
	}
}

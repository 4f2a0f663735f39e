package lower

import (
	"math"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

var specialUnary = []string{"Lgamma", "Digamma", "Ndtri", "Erfinv", "BesselI0", "BesselI0e", "BesselI1", "BesselI1e", "BesselK0",
	"BesselK0e", "BesselK1", "BesselK1e", "BesselJ0", "BesselJ1", "BesselY0", "BesselY1", "Dawsn", "Expint", "FresnelCos", "FresnelSin", "Spence"}

func init() {
	familyShapeCases = append(familyShapeCases, func() []shapeCase {
		var cs []shapeCase
		for _, op := range specialUnary {
			cs = append(cs, shapeCase{op: op, in: []ir.TensorType{f32(3, 7)}, out: []ir.TensorType{f32(3, 7)}})
		}
		for _, op := range []string{"Zeta", "Polygamma", "NextAfter"} {
			cs = append(cs, shapeCase{op: op, in: []ir.TensorType{f32(4, 1, 3), f32(5, 1)}, out: []ir.TensorType{f32(4, 5, 3)}})
		}
		return cs
	})
}

// The compositions against Go's math package (float64, correctly rounded
// or nearly) over each function's domain, at float32's precision.
func TestSpecialFunctionsMatchGo(t *testing.T) {
	xs := []float64{1e-6, 0.01, 0.3, 0.5, 0.999, 1, 1.5, 2, 2.5, 3.7, 7.9, 8, 8.1, 12.5, 31, 97.3, 1e4}
	neg := []float64{-0.3, -0.5, -1.5, -2.7, -10.1, -33.9}
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	for _, c := range []struct {
		op   string
		xs   []float64
		f    func(float64) float64
		abs  bool
		skip func(float64) bool
	}{
		{"Lgamma", append(append([]float64{}, xs...), neg...), lg, true, nil},
		{"BesselJ0", append(append([]float64{}, xs[:15]...), neg...), math.J0, true, nil},
		{"BesselJ1", append(append([]float64{}, xs[:15]...), neg...), math.J1, true, nil},
		{"BesselY0", xs[:15], math.Y0, true, nil},
		{"BesselY1", xs[1:15], math.Y1, true, nil},
		{"Erfinv", []float64{-0.999, -0.5, -0.01, 0, 0.2, 0.7, 0.9999}, math.Erfinv, false, nil},
	} {
		got := run(t, c.op, A(), fv(ir.Shape{len(c.xs)}, c.xs...))[0]
		for i, x := range c.xs {
			want := c.f(float64(float32(x)))
			g := got.F[i]
			tol := 2e-6 * math.Max(1, math.Abs(want))
			if !c.abs {
				tol = 2e-6 * math.Abs(want)
			}
			if math.Abs(g-want) > tol+1e-12 {
				t.Errorf("%s(%v) = %v, want %v", c.op, x, g, want)
			}
		}
	}
	// Poles and specials.
	inf, nan := math.Inf(1), math.NaN()
	expectClose(t, "Lgamma poles", run(t, "Lgamma", A(), fv(ir.Shape{5}, 0, -1, -7, inf, math.Inf(-1)))[0], []float64{inf, inf, inf, inf, inf}, 0)
	expectClose(t, "Digamma poles", run(t, "Digamma", A(), fv(ir.Shape{3}, 0, -2, nan))[0], []float64{nan, nan, nan}, 0)
	expectClose(t, "Digamma(1)", run(t, "Digamma", A(), fv(ir.Shape{2}, 1, -0.5))[0], []float64{-0.5772156649015329, 0.03648997397857652}, 1e-6)
	expectClose(t, "Ndtri ends", run(t, "Ndtri", A(), fv(ir.Shape{4}, 0, 1, -0.1, 0.5))[0], []float64{math.Inf(-1), inf, nan, 0}, 1e-7)
	expectClose(t, "Zeta(2, 1)", run(t, "Zeta", A(), fv(ir.Shape{3}, 2, 1, 0.5), fv(ir.Shape{3}, 1, 3, 2))[0], []float64{math.Pi * math.Pi / 6, inf, nan}, 1e-6)
	expectClose(t, "Polygamma(1, 1)", run(t, "Polygamma", A(), fv(ir.Shape{2}, 1, 0.5), fv(ir.Shape{2}, 1, 1))[0], []float64{math.Pi * math.Pi / 6, nan}, 1e-6)
	na := run(t, "NextAfter", A(), fv(ir.Shape{4}, 1, 1, 0, -2), fv(ir.Shape{4}, 2, 0, -1, -2))[0]
	want := []float64{float64(math.Nextafter32(1, 2)), float64(math.Nextafter32(1, 0)), float64(math.Nextafter32(0, -1)), -2}
	for i := range want {
		if na.F[i] != want[i] {
			t.Errorf("NextAfter: element %d is %v, want %v", i, na.F[i], want[i])
		}
	}
}

func init() {
	familyShapeCases = append(familyShapeCases, func() []shapeCase {
		return []shapeCase{
			{op: "ApproxTopK", attrs: A().I("k", 3), in: []ir.TensorType{f32(4, 7)}, out: []ir.TensorType{f32(4, 3), tt(ir.I32, 4, 3)}},
			{name: "ApproxTopK dim 0", op: "ApproxTopK", attrs: A().I("k", 2).I("reduction_dimension", 0), in: []ir.TensorType{f32(5, 7)},
				out: []ir.TensorType{f32(2, 7), tt(ir.I32, 2, 7)}},
		}
	})
}

func TestApproxTopKIsExact(t *testing.T) {
	x := fv(ir.Shape{2, 4}, 3, -1, 7, 7, 0, 5, -2, 5)
	out := run(t, "ApproxTopK", A().I("k", 2), x)
	expectClose(t, "values", out[0], []float64{7, 7, 5, 5}, 0)
	expectClose(t, "indices", out[1], []float64{2, 3, 1, 3}, 0)
	out = run(t, "ApproxTopK", A().I("k", 1).I("reduction_dimension", 0).B("is_max_k", false), x)
	expectClose(t, "min values", out[0], []float64{0, -1, -2, 5}, 0)
	expectClose(t, "min indices", out[1], []float64{1, 0, 1, 1}, 0)
}

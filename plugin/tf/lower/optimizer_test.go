package lower

import (
	"math"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

// The optimizers' reference: TensorFlow's update rules (training_ops.cc and
// its GPU functors), one element at a time, in float64.
func refOptimizer(op string, nesterov bool, v []float64, s [][]float64, sc map[string]float64, g []float64) (outs [][]float64) {
	n := len(v)
	nv := make([]float64, n)
	slots := make([][]float64, len(s))
	for i := range slots {
		slots[i] = make([]float64, n)
	}
	for k := range n {
		switch op {
		case "ResourceApplyGradientDescent":
			nv[k] = v[k] - sc["alpha"]*g[k]
		case "ResourceApplyMomentum":
			a := s[0][k]*sc["momentum"] + g[k]
			slots[0][k] = a
			if nesterov {
				nv[k] = v[k] - (g[k]*sc["lr"] + a*sc["momentum"]*sc["lr"])
			} else {
				nv[k] = v[k] - sc["lr"]*a
			}
		case "ResourceApplyKerasMomentum":
			a := s[0][k]*sc["momentum"] - g[k]*sc["lr"]
			slots[0][k] = a
			if nesterov {
				nv[k] = v[k] + a*sc["momentum"] - g[k]*sc["lr"]
			} else {
				nv[k] = v[k] + a
			}
		case "ResourceApplyAdam":
			lrT := sc["lr"] * math.Sqrt(1-sc["beta2_power"]) / (1 - sc["beta1_power"])
			m := s[0][k] + (1-sc["beta1"])*(g[k]-s[0][k])
			vv := s[1][k] + (1-sc["beta2"])*(g[k]*g[k]-s[1][k])
			slots[0][k], slots[1][k] = m, vv
			num := m
			if nesterov {
				num = m*sc["beta1"] + (1-sc["beta1"])*g[k]
			}
			nv[k] = v[k] - lrT*num/(sc["epsilon"]+math.Sqrt(vv))
		case "ResourceApplyRMSProp":
			ms := s[0][k] + (1-sc["rho"])*(g[k]*g[k]-s[0][k])
			mom := s[1][k]*sc["momentum"] + sc["lr"]*g[k]/math.Sqrt(sc["epsilon"]+ms)
			slots[0][k], slots[1][k] = ms, mom
			nv[k] = v[k] - mom
		}
	}
	return append([][]float64{nv}, slots...)
}

func TestOptimizersMatchTensorFlowsRules(t *testing.T) {
	scalars := map[string]float64{"alpha": 0.1, "lr": 0.01, "momentum": 0.9, "beta1_power": 0.81, "beta2_power": 0.998,
		"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-7, "rho": 0.9}
	shape := ir.Shape{2, 3}
	n := shape.Size()
	series := func(seed float64) []float64 {
		x := make([]float64, n)
		for k := range x {
			x[k] = math.Sin(seed+float64(k)) * 0.5
		}
		return x
	}
	for op, inputs := range OptimizerInputs {
		for _, nesterov := range []bool{false, true} {
			for _, dt := range Floats {
				types := make([]ir.TensorType, len(inputs))
				args := make([]eval.Tensor, len(inputs))
				var slots [][]float64
				var v, g []float64
				for i, name := range inputs {
					full := i == 0 || name == "grad" || name == "delta" || (i > 0 && i < varSlots(op))
					t := ir.TensorType{DType: dt, Shape: shape}
					if !full {
						t.Shape = ir.Shape{}
					}
					types[i] = t
					args[i] = eval.New(t)
					switch {
					case !full:
						args[i].F[0] = eval.Round(dt, scalars[name])
					case name == "grad" || name == "delta":
						g = fill(args[i], series(3))
					case i == 0:
						v = fill(args[i], series(1))
					default:
						// Slots that go under a square root stay positive.
						s := series(float64(5 + i))
						for k := range s {
							s[k] = math.Abs(s[k])
						}
						slots = append(slots, fill(args[i], s))
					}
				}
				sc := map[string]float64{}
				for i, name := range inputs {
					if types[i].Shape.Rank() == 0 {
						sc[name] = args[i].F[0]
					}
				}
				p, err := Optimizer(op, types, nesterov)
				if err != nil {
					t.Fatalf("%s %v: %v", op, dt, err)
				}
				got, err := eval.Run(p, args)
				if err != nil {
					t.Fatalf("%s %v: %v", op, dt, err)
				}
				want := refOptimizer(op, nesterov, v, slots, sc, g)
				if len(got) != len(want) {
					t.Fatalf("%s: %d outputs, want %d", op, len(got), len(want))
				}
				// One rounding to the variable's dtype, after float32 math.
				tol := map[ir.DType]float64{ir.F32: 1e-5, ir.F16: 2e-3, ir.BF16: 1.6e-2}[dt]
				for o := range want {
					for k := range want[o] {
						if d := math.Abs(got[o].F[k] - want[o][k]); d > tol*math.Max(1, math.Abs(want[o][k])) {
							t.Errorf("%s nesterov=%v %v: output %d element %d = %g, want %g", op, nesterov, dt, o, k, got[o].F[k], want[o][k])
						}
					}
				}
			}
		}
	}
}

// varSlots is how many leading inputs an optimizer updates (var and slots).
func varSlots(op string) int {
	return map[string]int{"ResourceApplyGradientDescent": 1, "ResourceApplyMomentum": 2, "ResourceApplyKerasMomentum": 2,
		"ResourceApplyAdam": 3, "ResourceApplyRMSProp": 3}[op]
}

// fill sets v's elements from x rounded to its dtype and returns what it set.
func fill(v eval.Tensor, x []float64) []float64 {
	for k := range x {
		v.F[k] = eval.Round(v.Type.DType, x[k])
	}
	return v.F
}

func TestOptimizerRefusesWhatItIsNot(t *testing.T) {
	f := ir.TensorType{DType: ir.F32, Shape: ir.Shape{2}}
	if _, err := Optimizer("ResourceApplyFtrl", []ir.TensorType{f}, false); err == nil {
		t.Error("an optimizer the device lacks was built")
	}
	if _, err := Optimizer("ResourceApplyAdam", []ir.TensorType{f, f}, false); err == nil {
		t.Error("Adam with two inputs was built")
	}
}

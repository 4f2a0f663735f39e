package lower

import (
	"fmt"
	"math"
	"slices"
	"strings"
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
	for _, o := range optimizers {
		op, inputs := o.op, o.inputs
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
				attrs := NewAttrs()
				attrs.Types["T"] = dt
				attrs.Bools["use_nesterov"] = nesterov
				got, err := runVar(op, attrs, args)
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
	k, _ := Lookup(op)
	return k.Variables.N
}

// fill sets v's elements from x rounded to its dtype and returns what it set.
func fill(v eval.Tensor, x []float64) []float64 {
	for k := range x {
		v.F[k] = eval.Round(v.Type.DType, x[k])
	}
	return v.F
}

// runVar builds op's kernel for the args' types and interprets it.
func runVar(op string, attrs *Attrs, args []eval.Tensor) ([]eval.Tensor, error) {
	k, ok := Lookup(op)
	if !ok {
		return nil, fmt.Errorf("%s is not registered", op)
	}
	types := make([]ir.TensorType, len(args))
	for i, a := range args {
		types[i] = a.Type
	}
	l, err := k.Build(attrs, types, nil, nil)
	if err != nil {
		return nil, err
	}
	return eval.Run(l.Program, args)
}

func TestOptimizerRefusesWhatItIsNot(t *testing.T) {
	f := ir.TensorType{DType: ir.F32, Shape: ir.Shape{2}}
	k, _ := Lookup("ResourceApplyAdam")
	attrs := NewAttrs()
	attrs.Types["T"] = ir.F32
	if _, err := k.Build(attrs, []ir.TensorType{f, f}, nil, nil); err == nil {
		t.Error("Adam with two inputs was built")
	}
	in := make([]ir.TensorType, len(k.Inputs))
	for i := range in {
		in[i] = ir.TensorType{DType: ir.F32}
	}
	in[0], in[1], in[2], in[9] = f, f, f, ir.TensorType{DType: ir.F32, Shape: ir.Shape{3}}
	if _, err := k.Build(attrs, in, nil, nil); err == nil || !strings.Contains(err.Error(), "same shape") {
		t.Errorf("Adam with a gradient of another shape: %v", err)
	}
	in[9] = f
	attrs.Types["T"] = ir.F16
	if _, err := k.Build(attrs, in, nil, nil); err == nil || !strings.Contains(err.Error(), "but T is") {
		t.Errorf("Adam on float32 tensors with T=float16: %v", err)
	}
}

// TestVariableOpsMatchPlainLoops: the gather, the scatter update and the
// assign updates against loops over the same elements.
func TestVariableOpsMatchPlainLoops(t *testing.T) {
	attrs := func(d ir.DType, batchDims int) *Attrs {
		a := NewAttrs()
		a.Types["dtype"] = d
		a.Ints["batch_dims"] = []int64{int64(batchDims)}
		return a
	}
	v := eval.FromFloats(ir.TensorType{DType: ir.F32, Shape: ir.Shape{4, 2}}, 0, 1, 10, 11, 20, 21, 30, 31)
	idx := eval.FromFloats(ir.TensorType{DType: ir.I64, Shape: ir.Shape{3}}, 2, 7, 0)

	got, err := runVar("ResourceGather", attrs(ir.F32, 0), []eval.Tensor{v, idx})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{20, 21, 0, 0, 0, 1} // index 7 is out of range: zeros, as on TensorFlow's GPU
	if !slices.Equal(got[0].F, want) || !got[0].Type.Shape.Equal(ir.Shape{3, 2}) {
		t.Errorf("ResourceGather: %v %v, want [3 2] %v", got[0].Type, got[0].F, want)
	}

	upd := eval.FromFloats(ir.TensorType{DType: ir.F32, Shape: ir.Shape{3, 2}}, -1, -2, -3, -4, -5, -6)
	rep := eval.FromFloats(ir.TensorType{DType: ir.I64, Shape: ir.Shape{3}}, 1, 9, 1)
	got, err = runVar("ResourceScatterUpdate", attrs(ir.F32, 0), []eval.Tensor{v, rep, upd})
	if err != nil {
		t.Fatal(err)
	}
	want = []float64{0, 1, -5, -6, 20, 21, 30, 31} // 9 is skipped; of the two writes to row 1 the last wins
	if !slices.Equal(got[0].F, want) {
		t.Errorf("ResourceScatterUpdate: %v, want %v", got[0].F, want)
	}
	got, err = runVar("ResourceScatterUpdate", attrs(ir.F32, 0), []eval.Tensor{v, rep, eval.FromFloats(ir.TensorType{DType: ir.F32}, 7)})
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{0, 1, 7, 7, 20, 21, 30, 31}; !slices.Equal(got[0].F, want) {
		t.Errorf("ResourceScatterUpdate of a scalar: %v, want %v", got[0].F, want)
	}

	x := eval.FromFloats(ir.TensorType{DType: ir.I64, Shape: ir.Shape{3}}, 5, -2, 1<<40)
	y := eval.FromFloats(ir.TensorType{DType: ir.I64, Shape: ir.Shape{3}}, 3, 4, 1)
	for op, want := range map[string][]int64{"AssignAddVariableOp": {8, 2, 1<<40 + 1}, "AssignSubVariableOp": {2, -6, 1<<40 - 1}} {
		got, err := runVar(op, attrs(ir.I64, 0), []eval.Tensor{x, y})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got[0].I, want) {
			t.Errorf("%s: %v, want %v", op, got[0].I, want)
		}
	}
	if _, err := runVar("AssignAddVariableOp", attrs(ir.I64, 0), []eval.Tensor{x, eval.FromFloats(ir.TensorType{DType: ir.I64, Shape: ir.Shape{2}}, 1, 2)}); err == nil {
		t.Error("AssignAddVariableOp of a value of another shape was built")
	}
	if _, err := runVar("ResourceGather", attrs(ir.F16, 0), []eval.Tensor{v, idx}); err == nil {
		t.Error("ResourceGather of a float32 variable with dtype float16 was built")
	}
	if k, _ := Lookup("AssignVariableOp"); k.Lower != nil || k.Variables.Access != VarAssign {
		t.Error("AssignVariableOp should be TensorFlow's to compute")
	}
	if ops := VariableOps(); len(ops) != 10 || !slices.IsSorted(ops) {
		t.Errorf("VariableOps: %v", ops)
	}
}

package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

// The resource-variable and optimizer ops. Their leading inputs are resource
// variables (Kernel.Variables): the kernel glue fetches each variable's
// tensor under the variable's lock, and the lowering sees it as an ordinary
// device input, whose type is the variable's. They are registered only where
// TensorFlow exports tensorflow/c/kernels_experimental.h.

// Variables says how an op uses resource variables.
type Variables struct {
	// N is the number of leading inputs that are resource variables.
	N      int
	Access VarAccess
	// Sparse is TensorFlow's sparse locking mode (gathers and scatters read
	// a copy-on-write variable without copying it first).
	Sparse bool
	// Lock always takes the variables' locks for the compute; otherwise the
	// use_locking attribute decides, as in TensorFlow's kernels.
	Lock bool
}

// VarAccess is how the kernel glue runs a variable op.
type VarAccess uint8

const (
	VarNone VarAccess = iota // an ordinary op
	// VarRead: the program reads the variables; its results are the op's
	// outputs (ResourceGather).
	VarRead
	// VarUpdate: the program's results replace the N variables, in place
	// on the kernel's stream (ResourceApply*, ResourceScatterUpdate).
	VarUpdate
	// VarAssign: TensorFlow itself assigns the value input
	// (TF_AssignVariable); there is no program.
	VarAssign
	// VarAssignUpdate: TensorFlow's copy-on-write update
	// (TF_AssignUpdateVariable) hands back the variable and the value; the
	// program's one result replaces the variable (AssignAddVariableOp).
	VarAssignUpdate
)

// The dtypes a variable on the device can have: TensorFlow's DEVICE_DEFAULT
// VarHandleOp (like its GPU one) takes the GPU types and int64, not int32 or
// uint8; of those, the ones the device computes with. TensorFlow's GPU
// registers the Assign ops for the same set (AssignAdd and AssignSub without
// bool).
var (
	variableDTypes   = []ir.DType{ir.F32, ir.F16, ir.BF16, ir.I64, ir.Bool}
	arithmeticDTypes = []ir.DType{ir.F32, ir.F16, ir.BF16, ir.I64}
)

// optimizers are the dense ResourceApply* ops: their inputs in op order
// (first the variable and its slots, which the update writes) and how many
// of them the update writes.
var optimizers = []struct {
	op     string
	inputs []string
	vars   int
}{
	{"ResourceApplyGradientDescent", []string{"var", "alpha", "delta"}, 1},
	{"ResourceApplyMomentum", []string{"var", "accum", "lr", "grad", "momentum"}, 2},
	{"ResourceApplyKerasMomentum", []string{"var", "accum", "lr", "grad", "momentum"}, 2},
	{"ResourceApplyAdam", []string{"var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"}, 3},
	{"ResourceApplyRMSProp", []string{"var", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad"}, 3},
}

// dtypeAttr is the variable's dtype, which the ops check the variable
// against.
var dtypeAttr = AttrSpec{Name: "dtype", Kind: AttrType}

func init() {
	register(Kernel{Op: "AssignVariableOp", Constraints: []Constraint{{"dtype", variableDTypes}}, Inputs: []string{"resource", "value"},
		Variables: Variables{N: 1, Access: VarAssign}, Attrs: []AttrSpec{dtypeAttr, {Name: "validate_shape", Kind: AttrBool, Optional: true}}})
	for _, op := range []struct {
		name string
		bop  ir.Op
	}{{"AssignAddVariableOp", ir.OpAdd}, {"AssignSubVariableOp", ir.OpSub}} {
		register(Kernel{Op: op.name, Constraints: []Constraint{{"dtype", arithmeticDTypes}}, Inputs: []string{"resource", "value"},
			Variables: Variables{N: 1, Access: VarAssignUpdate, Lock: true}, Attrs: []AttrSpec{dtypeAttr},
			Lower: lowerAssignUpdate(op.bop)})
	}
	for _, o := range optimizers {
		register(Kernel{Op: o.op, Constraints: T(Floats), Inputs: o.inputs, Variables: Variables{N: o.vars, Access: VarUpdate},
			Attrs: []AttrSpec{{Name: "T", Kind: AttrType}, {Name: "use_locking", Kind: AttrBool, Optional: true}, {Name: "use_nesterov", Kind: AttrBool, Optional: true}},
			Lower: lowerOptimizer(o.vars)})
	}
	register(Kernel{Op: "ResourceGather", Constraints: []Constraint{{"dtype", variableDTypes}, {"Tindices", Indices}},
		Inputs: []string{"resource", "indices"}, Variables: Variables{N: 1, Access: VarRead, Sparse: true},
		Attrs: []AttrSpec{dtypeAttr, {Name: "batch_dims", Kind: AttrInt, Optional: true}},
		Lower: lowerResourceGather})
	register(Kernel{Op: "ResourceScatterUpdate", Constraints: []Constraint{{"dtype", variableDTypes}, {"Tindices", Indices}},
		Inputs: []string{"resource", "indices", "updates"}, Variables: Variables{N: 1, Access: VarUpdate, Sparse: true, Lock: true},
		Attrs: []AttrSpec{dtypeAttr}, Lower: lowerResourceScatterUpdate})
}

// VariableOps lists the ops whose kernels need kernels_experimental.h,
// sorted.
func VariableOps() []string {
	var ops []string
	for _, k := range Kernels() {
		if k.Variables.Access != VarNone {
			ops = append(ops, k.Op)
		}
	}
	return ops
}

// lowerAssignUpdate is the update AssignAddVariableOp and
// AssignSubVariableOp apply: variable op value.
func lowerAssignUpdate(op ir.Op) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(2); err != nil {
			return err
		}
		vt, valt := c.Type(0), c.Type(1)
		want := c.Attrs.Type("dtype", vt.DType)
		if vt.DType != valt.DType || vt.DType != want || !vt.Shape.Equal(valt.Shape) {
			return c.Errorf("cannot update variable %v with value %v (dtype %v); shapes and dtypes must be equal", vt, valt, want)
		}
		c.Out = []ir.Value{c.B.Binary(op, c.In[0], c.In[1])}
		return nil
	}
}

// lowerOptimizer builds the dense update of a ResourceApply* op from the
// op's inputs to the new variable and its vars-1 slots. It computes in
// float32 and rounds once to the variable's dtype. The math follows
// TensorFlow's GPU functors (training_ops_gpu.cu.cc).
func lowerOptimizer(vars int) func(c *Call) error {
	return func(c *Call) error {
		k, _ := Lookup(c.Op)
		if err := c.arity(len(k.Inputs)); err != nil {
			return err
		}
		shape := c.Type(0).Shape
		dt := c.Attrs.Type("T", c.Type(0).DType)
		full := map[string]bool{"delta": true, "grad": true}
		for i, name := range k.Inputs {
			t := c.Type(i)
			switch {
			case t.DType != dt:
				return c.Errorf("%s is %v but T is %v (inputs %s)", name, t, dt, c.Inputs())
			case (i < vars || full[name]) && !t.Shape.Equal(shape):
				return c.Errorf("%s %v and var %v do not have the same shape (inputs %s)", name, t, c.Type(0), c.Inputs())
			case i >= vars && !full[name] && t.Shape.Rank() != 0:
				return c.Errorf("%s is not a scalar: %v (inputs %s)", name, t, c.Inputs())
			}
		}
		b, p := c.B, c.In
		f := func(v ir.Value) ir.Value { return b.Convert(v, ir.F32) }
		bc := func(scalar ir.Value) ir.Value { return b.BroadcastInDim(scalar, shape, nil) }
		add := func(x, y ir.Value) ir.Value { return b.Binary(ir.OpAdd, x, y) }
		sub := func(x, y ir.Value) ir.Value { return b.Binary(ir.OpSub, x, y) }
		mul := func(x, y ir.Value) ir.Value { return b.Binary(ir.OpMul, x, y) }
		div := func(x, y ir.Value) ir.Value { return b.Binary(ir.OpDiv, x, y) }
		sqrt := func(x ir.Value) ir.Value { return b.Unary(ir.OpSqrt, x) }
		one := b.Scalar(ir.F32, 1)
		nesterov := c.Attrs.Bool("use_nesterov")
		var outs []ir.Value
		switch c.Op {
		case "ResourceApplyGradientDescent": // var, alpha, delta
			outs = []ir.Value{sub(f(p[0]), mul(bc(f(p[1])), f(p[2])))}
		case "ResourceApplyMomentum": // var, accum, lr, grad, momentum
			lr, g, m := bc(f(p[2])), f(p[3]), bc(f(p[4]))
			accum := add(mul(f(p[1]), m), g)
			step := mul(lr, accum)
			if nesterov {
				step = add(mul(g, lr), mul(mul(accum, m), lr))
			}
			outs = []ir.Value{sub(f(p[0]), step), accum}
		case "ResourceApplyKerasMomentum": // var, accum, lr, grad, momentum
			lr, g, m := bc(f(p[2])), f(p[3]), bc(f(p[4]))
			accum := sub(mul(f(p[1]), m), mul(g, lr))
			step := accum
			if nesterov {
				step = sub(mul(accum, m), mul(g, lr))
			}
			outs = []ir.Value{add(f(p[0]), step), accum}
		case "ResourceApplyAdam": // var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad
			b1p, b2p, lr, b1, b2, eps := f(p[3]), f(p[4]), f(p[5]), f(p[6]), f(p[7]), f(p[8])
			g := f(p[9])
			lrT := div(mul(lr, sqrt(sub(one, b2p))), sub(one, b1p))
			oneMinusB1 := bc(sub(one, b1))
			m := add(f(p[1]), mul(oneMinusB1, sub(g, f(p[1]))))
			v := add(f(p[2]), mul(bc(sub(one, b2)), sub(mul(g, g), f(p[2]))))
			num := m
			if nesterov {
				num = add(mul(m, bc(b1)), mul(oneMinusB1, g))
			}
			outs = []ir.Value{sub(f(p[0]), div(mul(bc(lrT), num), add(bc(eps), sqrt(v)))), m, v}
		case "ResourceApplyRMSProp": // var, ms, mom, lr, rho, momentum, epsilon, grad
			lr, rho, momentum, eps, g := f(p[3]), f(p[4]), f(p[5]), f(p[6]), f(p[7])
			ms := add(f(p[1]), mul(bc(sub(one, rho)), sub(mul(g, g), f(p[1]))))
			mom := add(mul(f(p[2]), bc(momentum)), div(mul(bc(lr), g), sqrt(add(bc(eps), ms))))
			outs = []ir.Value{sub(f(p[0]), mom), ms, mom}
		default:
			return c.Errorf("is not an optimizer this device implements")
		}
		for i := range outs {
			outs[i] = b.Convert(outs[i], dt)
		}
		c.Out = outs
		return nil
	}
}

// lowerResourceGather is GatherV2 of the variable along axis batch_dims.
// Out-of-range indices give zeros, as on TensorFlow's GPU.
func lowerResourceGather(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	params, indices := c.Type(0), c.Type(1)
	bd := int(c.Attrs.Int("batch_dims", 0))
	if want := c.Attrs.Type("dtype", params.DType); params.DType != want || params.Shape.Rank() < 1 || bd < 0 || bd > params.Shape.Rank()-1 {
		return c.Errorf("variable %v (dtype attribute %v) must be at least 1-dimensional with more dims than batch_dims %d (indices %v)",
			params, want, bd, indices)
	}
	// GatherV2's lowering, with its axis (a host input there) fixed.
	gather := &Call{Op: c.Op, B: c.B, Attrs: c.Attrs, In: []ir.Value{c.In[0], c.In[1], -1},
		Host: map[int][]int64{2: {int64(bd)}}, types: []ir.TensorType{params, indices, {DType: ir.I32}}}
	if err := lowerGatherV2(gather); err != nil {
		return err
	}
	c.Out = gather.Out
	return nil
}

// lowerResourceScatterUpdate is variable[indices, ...] = updates. Out-of-range
// indices are skipped, as on TensorFlow's GPU; where indices repeat, the
// last update wins.
func lowerResourceScatterUpdate(c *Call) error {
	if err := c.arity(3); err != nil {
		return err
	}
	vt, it, ut := c.Type(0), c.Type(1), c.Type(2)
	if want := c.Attrs.Type("dtype", vt.DType); vt.DType != want || ut.DType != vt.DType || vt.Shape.Rank() < 1 {
		return c.Errorf("variable %v and updates %v must both be %v, the variable at least 1-dimensional (indices %v)", vt, ut, want, it)
	}
	want := append(it.Shape.Clone(), vt.Shape[1:]...)
	if !ut.Shape.Equal(want) && ut.Shape.Rank() != 0 {
		return c.Errorf("updates %v must have shape %v (indices %v, variable %v) or be a scalar", ut, want, it, vt)
	}
	b := c.B
	u := c.In[2]
	if ut.Shape.Rank() == 0 && len(want) > 0 {
		u = b.BroadcastInDim(u, want, nil)
	}
	r := it.Shape.Rank()
	window := make([]int, 0, len(want)-r)
	for d := r; d < len(want); d++ {
		window = append(window, d)
	}
	c.Out = []ir.Value{b.Scatter(c.In[0], c.In[1], u, ir.ScatterDims{UpdateWindowDims: window, InsertedWindowDims: []int{0},
		ScatterDimsToOperandDims: []int{0}, IndexVectorDim: r, Kind: ir.ScatterReplace})}
	return nil
}

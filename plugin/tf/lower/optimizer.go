package lower

import (
	"fmt"

	"github.com/metalplug/metalplug/backend/ir"
)

// OptimizerInputs are the inputs of each dense optimizer op, in op order:
// first the variable and its slots, which the update writes.
var OptimizerInputs = map[string][]string{
	"ResourceApplyGradientDescent": {"var", "alpha", "delta"},
	"ResourceApplyMomentum":        {"var", "accum", "lr", "grad", "momentum"},
	"ResourceApplyKerasMomentum":   {"var", "accum", "lr", "grad", "momentum"},
	"ResourceApplyAdam":            {"var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"},
	"ResourceApplyRMSProp":         {"var", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad"},
}

// Optimizer builds the dense update of a ResourceApply* op from the op's
// inputs (in op order: the variable and its slots, then the rest) to the new
// variable and slots. It computes in float32 and rounds once to the
// variable's dtype. The math follows TensorFlow's GPU functors
// (training_ops_gpu.cu.cc).
func Optimizer(op string, in []ir.TensorType, nesterov bool) (*ir.Program, error) {
	if want, ok := OptimizerInputs[op]; !ok {
		return nil, fmt.Errorf("%s is not an optimizer this device implements", op)
	} else if len(in) != len(want) {
		return nil, fmt.Errorf("%s: %d inputs, want %d (%v)", op, len(in), len(want), want)
	}
	b := ir.NewBuilder()
	p := make([]ir.Value, len(in))
	for i, t := range in {
		p[i] = b.Parameter(t)
	}
	shape := in[0].Shape
	f := func(v ir.Value) ir.Value { return b.Convert(v, ir.F32) }
	bc := func(scalar ir.Value) ir.Value { return b.BroadcastInDim(scalar, shape, nil) }
	add := func(x, y ir.Value) ir.Value { return b.Binary(ir.OpAdd, x, y) }
	sub := func(x, y ir.Value) ir.Value { return b.Binary(ir.OpSub, x, y) }
	mul := func(x, y ir.Value) ir.Value { return b.Binary(ir.OpMul, x, y) }
	div := func(x, y ir.Value) ir.Value { return b.Binary(ir.OpDiv, x, y) }
	sqrt := func(x ir.Value) ir.Value { return b.Unary(ir.OpSqrt, x) }
	one := b.Scalar(ir.F32, 1)
	var outs []ir.Value
	switch op {
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
	}
	for i := range outs {
		outs[i] = b.Convert(outs[i], in[0].DType)
	}
	return b.Build(outs...)
}

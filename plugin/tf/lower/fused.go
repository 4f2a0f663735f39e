package lower

import (
	"fmt"
	"sort"
	"strings"

	"github.com/metalplug/metalplug/backend/ir"
)

// The fused ops TensorFlow's remapper (and this plugin's graph pass) makes of
// a Conv2D or MatMul, its BiasAdd and an optional activation: _FusedConv2D
// (conv_ops_fused_impl.h) and _FusedMatMul (matmul_op_fused.cc). Each step is
// the unfused op's own lowering: convolve or matMul, then biasAdd, then the
// activation's. Only fused_ops ["BiasAdd"] and ["BiasAdd", activation] are
// lowered; the batch-norm and Add fusions are the caller's error here.

// fusedActivations are the activations a fused op may apply after its
// BiasAdd, by the name fused_ops gives them. LeakyRelu's slope is the fused
// ops' leakyrelu_alpha attribute.
var fusedActivations = map[string]func(c *Call, x ir.Value) ir.Value{
	"Relu":      relu,
	"Relu6":     relu6,
	"Elu":       elu,
	"LeakyRelu": leakyRelu("leakyrelu_alpha"),
	"Tanh":      tanh,
	"Sigmoid":   sigmoid,
}

func init() {
	fused := []AttrSpec{{Name: "num_args", Kind: AttrInt, Optional: true}, {Name: "fused_ops", Kind: AttrStrings, Optional: true},
		{Name: "leakyrelu_alpha", Kind: AttrFloat, Optional: true}}
	// TensorFlow's op definition allows _FusedConv2D half, float, double and
	// int8: not bfloat16, which Conv2D has.
	register(Kernel{Op: "_FusedConv2D", Constraints: T([]ir.DType{ir.F32, ir.F16}), Inputs: []string{"input", "filter", "args", "host_args"},
		Attrs: append(append(convAttrs(true), fused...), AttrSpec{Name: "num_host_args", Kind: AttrInt, Optional: true},
			AttrSpec{Name: "filter_format", Kind: AttrString, Optional: true}),
		Lower: lowerFused(func(c *Call, x, k ir.Value) (ir.Value, error) {
			if f := c.Attrs.String("filter_format", "HWIO"); f != "HWIO" {
				return 0, c.Errorf("filter_format %q is not supported; use HWIO (inputs %s)", f, c.Inputs())
			}
			return convolve(c, 2, false, x, k)
		})})
	register(Kernel{Op: "_FusedMatMul", Constraints: T(Floats), Inputs: []string{"a", "b", "args"},
		Attrs: append(append([]AttrSpec(nil), matMulAttrs...), fused...), Lower: lowerFused(matMul)})
}

// fusedOpsString renders the node's fused_ops for messages: [BiasAdd, Relu].
func fusedOpsString(c *Call) string {
	return "[" + strings.Join(c.Attrs.StringList("fused_ops"), ", ") + "]"
}

// fusedActivation is the activation fused_ops ends with (nil for
// ["BiasAdd"] alone), or an error for any other fusion.
func fusedActivation(c *Call) (func(c *Call, x ir.Value) ir.Value, error) {
	ops := c.Attrs.StringList("fused_ops")
	if len(ops) == 1 && ops[0] == "BiasAdd" {
		return nil, nil
	}
	if len(ops) == 2 && ops[0] == "BiasAdd" {
		if f, ok := fusedActivations[ops[1]]; ok {
			return f, nil
		}
	}
	names := make([]string, 0, len(fusedActivations))
	for n := range fusedActivations {
		names = append(names, n)
	}
	sort.Strings(names)
	return nil, c.Errorf("fused_ops %s is not supported: this device fuses [BiasAdd] or [BiasAdd, X] with X one of %s (inputs %s)",
		fusedOpsString(c), strings.Join(names, ", "), c.Inputs())
}

// lowerFused lowers a fused op whose first two inputs go to product, the
// third is the bias, and the rest (host_args) must be absent.
func lowerFused(product func(c *Call, x, y ir.Value) (ir.Value, error)) func(c *Call) error {
	return func(c *Call) error {
		act, err := fusedActivation(c)
		if err != nil {
			return err
		}
		args := c.Attrs.Int("num_args", int64(len(c.In)-2))
		host := c.Attrs.Int("num_host_args", 0)
		if args != 1 || host != 0 {
			return c.Errorf("num_args %d and num_host_args %d are not supported: fused_ops %s takes one argument, the bias (inputs %s)",
				args, host, fusedOpsString(c), c.Inputs())
		}
		// The steps' errors name the op and its inputs; add the fusion.
		wrap := func(err error) error { return fmt.Errorf("%w (fused_ops %s)", err, fusedOpsString(c)) }
		if err := c.arity(3); err != nil {
			return wrap(err)
		}
		y, err := product(c, c.In[0], c.In[1])
		if err != nil {
			return wrap(err)
		}
		if y, err = biasAdd(c, y, c.In[2]); err != nil {
			return wrap(err)
		}
		if act != nil {
			y = act(c, y)
		}
		c.Out = []ir.Value{y}
		return nil
	}
}

package stablehlo

import (
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// customCalls are the custom_call targets translated to IR, beside the
// one-device no-ops.
var customCalls = map[string]func(*env, *mlir.Operation) ([]ir.Value, error){
	"ApproxTopK": approxTopK,
	"dce_sink":   dceSink,
}

// approxTopK is jax's lax.approx_max_k and approx_min_k off TPU: a
// custom_call "ApproxTopK" of (operand, its iota along the reduction dim,
// the init value, the init index) with the comparator as its called
// computation, which XLA answers off TPU by its fallback: a sort by the
// comparator, sliced to the result's size. That is the exact top k, which
// meets any recall target. The sort is stable, so ties keep the lower
// index, as XLA's does.
func approxTopK(e *env, op *mlir.Operation) ([]ir.Value, error) {
	if len(op.Operands) != 4 || len(op.Results) != 2 {
		return nil, invalid(op, "ApproxTopK has %d operands and %d results, want 4 (operand, iota, init value, init index) and 2", len(op.Operands), len(op.Results))
	}
	vs, err := e.operands(op)
	if err != nil {
		return nil, err
	}
	cfg, err := attr(op, "mhlo.backend_config")
	if err != nil {
		return nil, err
	}
	dict, ok := cfg.(*mlir.DictAttr)
	if !ok {
		return nil, invalid(op, "ApproxTopK's mhlo.backend_config is %s, not a dictionary", cfg)
	}
	da, ok := dict.Get("reduction_dim")
	ia, isInt := da.(*mlir.IntegerAttr)
	if !ok || !isInt {
		return nil, invalid(op, "ApproxTopK's backend_config has no integer reduction_dim")
	}
	x := e.b.Type(vs[0])
	dim := int(ia.Value)
	if dim < 0 {
		dim += x.Shape.Rank()
	}
	if dim < 0 || dim >= x.Shape.Rank() {
		return nil, invalid(op, "ApproxTopK's reduction_dim %d is outside the operand %v", ia.Value, x)
	}
	cc, err := attr(op, "called_computations")
	if err != nil {
		return nil, err
	}
	arr, ok := cc.(*mlir.ArrayAttr)
	if !ok || len(arr.Elems) != 1 {
		return nil, invalid(op, "ApproxTopK's called_computations is %s, not one comparator", cc)
	}
	var name string
	switch a := arr.Elems[0].(type) {
	case *mlir.StringAttr: // VHLO's form
		name = a.Value
	case *mlir.SymbolRefAttr:
		if len(a.Nested) == 0 {
			name = a.Root
		}
	}
	if name == "" {
		return nil, invalid(op, "ApproxTopK's comparator is %s, not a function's name", arr.Elems[0])
	}
	fn, ok := e.t.funcs[name]
	if !ok {
		return nil, invalid(op, "ApproxTopK calls %q, which the module does not define", name)
	}
	if len(fn.Regions) != 1 {
		return nil, invalid(op, "ApproxTopK's comparator %q has %d regions", name, len(fn.Regions))
	}
	cmp, err := e.region(fn, fn.Regions[0], nil, nil, true, false)
	if err != nil {
		return nil, err
	}
	sorted := e.b.SortWith(cmp, dim, vs[0], vs[1])
	if len(sorted) != 2 {
		return nil, nil // the builder's error says why
	}
	out := make([]ir.Value, 2)
	for i, v := range sorted {
		rt, err := resultType(op, i)
		if err != nil {
			return nil, err
		}
		shape := e.b.Type(v).Shape
		if rt.Shape.Rank() != shape.Rank() {
			return nil, invalid(op, "ApproxTopK's result %d is %v for the operand %v", i, rt, x)
		}
		start := make([]int, shape.Rank())
		limit := make([]int, shape.Rank())
		strides := make([]int, shape.Rank())
		for d := range limit {
			limit[d], strides[d] = rt.Shape[d], 1
			if d != dim && rt.Shape[d] != shape[d] || rt.Shape[d] > shape[d] {
				return nil, invalid(op, "ApproxTopK's result %d is %v for the operand %v along dim %d", i, rt, x, dim)
			}
		}
		out[i] = e.b.Slice(v, start, limit, strides)
	}
	return out, nil
}

package stablehlo

import (
	"strconv"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// HostCallTarget is the custom_call target jax_plugins.metalplug lowers
// jax's Python callbacks to (jax.debug.print and debug.callback,
// pure_callback, io_callback): backend_config is the callback's id in
// that module's table, in decimal; the operands are the callback's,
// after a token when the callback is ordered, and so are the results.
const HostCallTarget = "metalplug_host_callback"

func init() { customCalls[HostCallTarget] = hostCallback }

// hostCallback translates the call to ir.OpHostCall, which runs the
// callback through backend/hostcall when the program reaches it.
func hostCallback(e *env, op *mlir.Operation) ([]ir.Value, error) {
	cfg, err := stringAttr(op, "backend_config")
	if err != nil {
		return nil, err
	}
	id, err := strconv.ParseUint(cfg, 10, 64)
	if err != nil {
		return nil, invalid(op, "%s's backend_config is %q, not a callback id", HostCallTarget, cfg)
	}
	vs, err := e.operands(op)
	if err != nil {
		return nil, err
	}
	isToken := func(t mlir.Type) bool { _, ok := t.(*mlir.TokenType); return ok }
	b := e.b
	args, tokenIn := vs, len(op.Operands) > 0 && isToken(op.Operands[0].Type)
	tok := b.Constant(tokenType, nil) // unordered: it follows nothing
	if tokenIn {
		tok, args = vs[0], vs[1:]
	}
	for i, o := range op.Operands {
		if _, narrow := narrowOf(o.Type); narrow {
			return nil, unsupported(op, "operand %d is %s: a callback's operands of 8 bits or fewer per float, or under 8 bits per integer, are held wider inside a program", i, o.Type)
		}
		if i > 0 && isToken(o.Type) {
			return nil, invalid(op, "operand %d is a token: only the first operand may be", i)
		}
	}
	tokenOut := len(op.Results) > 0 && isToken(op.Results[0].Type)
	var types []ir.TensorType
	for i, r := range op.Results {
		if _, narrow := narrowOf(r.Type); narrow {
			return nil, unsupported(op, "result %d is %s: a callback's results of 8 bits or fewer per float, or under 8 bits per integer, are held wider inside a program", i, r.Type)
		}
		if i == 0 && tokenOut {
			continue
		}
		if isToken(r.Type) {
			return nil, invalid(op, "result %d is a token: only the first result may be", i)
		}
		t, err := resultType(op, i)
		if err != nil {
			return nil, err
		}
		types = append(types, t)
	}
	e.t.hostCalls++
	rs := b.Results(b.HostCall(id, tok, args, types))
	if tokenOut {
		return rs, nil
	}
	return rs[1:], nil
}

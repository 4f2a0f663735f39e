package stablehlo

// complex64 arithmetic is composed once, for both frontends, in
// backend/ir/compose; what stays here is StableHLO's side of it: which
// result types a complex contraction may have.

import (
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/compose"
	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// complexContract is a contraction (dot_general, convolution) with a
// complex64 operand or result, composed of real ones of the parts.
func complexContract(e *env, op *mlir.Operation, x, y ir.Value, contract func(p, q ir.Value) ir.Value) ([]ir.Value, error) {
	rt, err := resultType(op, 0)
	if err != nil {
		return nil, err
	}
	if rt.DType != ir.C64 {
		return nil, unsupported(op, "complex operands with a %v result", rt.DType)
	}
	return one(compose.ComplexContract(e.b, x, y, contract)), nil
}

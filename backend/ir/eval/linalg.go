package eval

// The linear algebra ops, through backend/ir/lapack (gonum's LAPACK in
// float64), rounded to the result dtypes: the same path as the host
// driver's, so the conformance suite checks both against each op's
// defining properties rather than against each other alone.

import (
	"slices"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/lapack"
)

func isLinalg(op ir.Op) bool { return slices.Contains(lapack.Ops(), op) }

// linalg runs a linear algebra instruction; it returns its one result, or
// its tuple's.
func linalg(in ir.Instr, ins []Tensor) ([]Tensor, error) {
	if len(ins) > 0 && ins[0].Type.DType == ir.C64 {
		return complexLinalg(in, ins)
	}
	types := make([]ir.TensorType, len(ins))
	args := make([][]float64, len(ins))
	for i, x := range ins {
		types[i], args[i] = x.Type, x.Floats()
	}
	rs, err := lapack.Apply(in, types, args)
	if err != nil {
		return nil, err
	}
	outTypes := in.Tuple
	if outTypes == nil {
		outTypes = []ir.TensorType{in.Type}
	}
	outs := make([]Tensor, len(rs))
	for i, r := range rs {
		outs[i] = FromFloats(outTypes[i], r...)
	}
	return outs, nil
}

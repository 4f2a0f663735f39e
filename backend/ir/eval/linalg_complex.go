package eval

import (
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/lapack"
)

// complexLinalg runs a linear algebra instruction on complex64 operands
// through lapack.ApplyComplex, the host driver's path, rounding each
// result to its dtype (eigh's eigenvalues and tridiagonal's d and e are
// float32).
func complexLinalg(in ir.Instr, ins []Tensor) ([]Tensor, error) {
	types := make([]ir.TensorType, len(ins))
	args := make([][]complex128, len(ins))
	for i, x := range ins {
		types[i], args[i] = x.Type, x.C
	}
	rs, err := lapack.ApplyComplex(in, types, args)
	if err != nil {
		return nil, err
	}
	outTypes := in.Tuple
	if outTypes == nil {
		outTypes = []ir.TensorType{in.Type}
	}
	outs := make([]Tensor, len(rs))
	for i, r := range rs {
		outs[i] = New(outTypes[i])
		for k, z := range r {
			if outs[i].C != nil {
				outs[i].C[k] = roundC(z)
			} else {
				outs[i].Set(k, real(z))
			}
		}
	}
	return outs, nil
}

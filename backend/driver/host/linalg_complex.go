package host

import (
	"slices"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/lapack"
)

// complexLinalgKernel runs the complex64 linear algebra ops
// (lapack.ComplexOps) through lapack.ApplyComplex in complex128, each
// result rounded once to its dtype (eigh's eigenvalues and tridiagonal's
// d and e to float32).
func complexLinalgKernel(in ir.Instr, at []ir.TensorType) (multiKernel, error) {
	if !slices.Contains(lapack.ComplexOps(), in.Op) {
		return nil, errUnsupported(in, at)
	}
	for _, t := range at {
		if t.DType != ir.C64 {
			return nil, errUnsupported(in, at)
		}
	}
	types := in.Tuple
	if types == nil {
		types = []ir.TensorType{in.Type}
	}
	return func(outs [][]byte, ins [][]byte) {
		args := make([][]complex128, len(ins))
		for i, b := range ins {
			src := view[complex64](b)
			args[i] = make([]complex128, len(src))
			for k, z := range src {
				args[i][k] = complex128(z)
			}
		}
		rs, err := lapack.ApplyComplex(in, at, args)
		if err != nil {
			panic(err) // the verifier admitted the instruction: a bug, recovered by the step
		}
		for i, r := range rs {
			switch types[i].DType {
			case ir.C64:
				out := view[complex64](outs[i])
				for k, z := range r {
					out[k] = complex64(z)
				}
			default: // eigh's eigenvalues, tridiagonal's d and e
				out := view[float32](outs[i])
				for k, z := range r {
					out[k] = float32(real(z))
				}
			}
		}
	}, nil
}

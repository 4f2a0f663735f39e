package host

import (
	"fmt"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/lapack"
)

// The linear algebra ops run through gonum's pure-Go LAPACK
// (backend/ir/lapack), in float64 whatever the stored precision (float32
// or float64), each result rounded once at the end. A well-kept LAPACK's
// pivoting, scaling and convergence tests beat a hand-written
// decomposition; the evaluator shares the same path, and the conformance
// suite checks both against each op's defining properties.

func init() {
	single := opKernel{make: func(in ir.Instr, at []ir.TensorType) (kernel, error) {
		mk, err := linalgKernel(in, at)
		if err != nil {
			return nil, err
		}
		return func(out []byte, ins [][]byte) { mk([][]byte{out}, ins) }, nil
	}, work: linalgWork}
	register(single, ir.OpCholesky, ir.OpTriangularSolve, ir.OpHouseholderProduct)
	register(opKernel{makeMulti: linalgKernel, work: linalgWork}, ir.OpQr, ir.OpEigh, ir.OpLu, ir.OpSvd,
		ir.OpEig, ir.OpHessenberg, ir.OpTridiagonal, ir.OpQrPivoted, ir.OpSchur)
}

// linalgWork is about n^3 per matrix: the decompositions' flop counts,
// with the iterative ones (eigh, svd, eig, schur) weighed ten times over.
func linalgWork(in ir.Instr, at []ir.TensorType) int {
	s := at[0].Shape
	r := s.Rank()
	if r < 2 {
		return 0
	}
	m, n := s[r-2], s[r-1]
	w := s.Size() * min(m, n)
	if len(at) > 1 && in.Op == ir.OpTriangularSolve {
		w = at[1].Shape.Size() * n
	}
	if in.Op == ir.OpEigh || in.Op == ir.OpSvd || in.Op == ir.OpEig || in.Op == ir.OpSchur {
		w *= 10
	}
	return w
}

// linalgKernel reads the operands as float64, runs lapack.Apply and writes
// each result in its dtype (int32 for lu's pivots and permutation and
// qr_pivoted's flags and permutation).
func linalgKernel(in ir.Instr, at []ir.TensorType) (multiKernel, error) {
	if len(at) > 0 && at[0].DType == ir.C64 {
		return complexLinalgKernel(in, at)
	}
	for i, t := range at {
		if t.DType != ir.F32 && t.DType != ir.F64 && (in.Op != ir.OpQrPivoted || i != 1 || t.DType != ir.I32) {
			return nil, errUnsupported(in, at)
		}
	}
	types := in.Tuple
	if types == nil {
		types = []ir.TensorType{in.Type}
	}
	return func(outs [][]byte, ins [][]byte) {
		args := make([][]float64, len(ins))
		for i, b := range ins {
			args[i] = toFloat64(at[i].DType, b)
		}
		rs, err := lapack.Apply(in, at, args)
		if err != nil {
			panic(err) // the verifier admitted the instruction: a bug, recovered by the step
		}
		for i, r := range rs {
			fromFloat64(types[i].DType, outs[i], r)
		}
	}, nil
}

func toFloat64(d ir.DType, b []byte) []float64 {
	switch d {
	case ir.F32:
		src := view[float32](b)
		out := make([]float64, len(src))
		for i, v := range src {
			out[i] = float64(v)
		}
		return out
	case ir.F64:
		return append([]float64(nil), view[float64](b)...)
	case ir.I32:
		src := view[int32](b)
		out := make([]float64, len(src))
		for i, v := range src {
			out[i] = float64(v)
		}
		return out
	}
	panic(fmt.Sprintf("host: linear algebra on %v", d))
}

func fromFloat64(d ir.DType, dst []byte, src []float64) {
	switch d {
	case ir.F32:
		out := view[float32](dst)
		for i, v := range src {
			out[i] = float32(v)
		}
	case ir.F64:
		copy(view[float64](dst), src)
	case ir.I32:
		out := view[int32](dst)
		for i, v := range src {
			out[i] = int32(v)
		}
	default:
		panic(fmt.Sprintf("host: linear algebra result of %v", d))
	}
}

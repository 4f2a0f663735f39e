package lapack

import (
	"fmt"

	"github.com/metalplug/metalplug/backend/ir"
)

// Apply computes the linear algebra instruction in on its operands, given
// as float64 elements of the operand types argTypes, batch by batch; it
// returns the results (in.Type's, or in.Tuple's in order) as float64
// elements too (the int32 pivots and permutations as whole numbers), for
// the caller to round to the result dtypes.
func Apply(in ir.Instr, argTypes []ir.TensorType, args [][]float64) ([][]float64, error) {
	types := in.Tuple
	if types == nil {
		types = []ir.TensorType{in.Type}
	}
	outs := make([][]float64, len(types))
	for i, t := range types {
		outs[i] = make([]float64, t.Shape.Size())
	}
	if len(args) == 0 || len(argTypes) != len(args) {
		return nil, fmt.Errorf("lapack: %s: %d operands of %d types", in.Op, len(args), len(argTypes))
	}
	at := argTypes[0].Shape
	r := at.Rank()
	if r < 2 {
		return nil, fmt.Errorf("lapack: %s: operand %v is not a matrix", in.Op, argTypes[0])
	}
	m, n := at[r-2], at[r-1]
	batches := at[:r-2].Size()
	var attrs ir.LinalgAttrs
	if in.Linalg != nil {
		attrs = *in.Linalg
	}
	// per is each operand's and result's element count per batch.
	per := func(x []float64) int {
		if batches == 0 {
			return 0
		}
		return len(x) / batches
	}
	part := func(x []float64, b int) []float64 {
		k := per(x)
		return x[b*k : (b+1)*k]
	}
	for b := range batches {
		switch in.Op {
		case ir.OpCholesky:
			l := part(outs[0], b)
			copy(l, part(args[0], b))
			Cholesky(l, n, attrs.Lower)
		case ir.OpTriangularSolve:
			rhs := argTypes[1].Shape
			x := part(outs[0], b)
			copy(x, part(args[1], b))
			TriangularSolve(part(args[0], b), x, rhs[r-2], rhs[r-1], attrs)
		case ir.OpQr:
			qr := part(outs[0], b)
			copy(qr, part(args[0], b))
			Qr(qr, m, n, part(outs[1], b))
		case ir.OpHouseholderProduct:
			q := part(outs[0], b)
			copy(q, part(args[0], b))
			HouseholderProduct(q, m, n, part(args[1], b))
		case ir.OpEigh:
			v := part(outs[0], b)
			copy(v, part(args[0], b))
			Eigh(v, n, attrs.Lower, part(outs[1], b))
		case ir.OpLu:
			lu := part(outs[0], b)
			copy(lu, part(args[0], b))
			piv, perm := make([]int, min(m, n)), make([]int, m)
			Lu(lu, m, n, piv, perm)
			for i, p := range piv {
				part(outs[1], b)[i] = float64(p)
			}
			for i, p := range perm {
				part(outs[2], b)[i] = float64(p)
			}
		case ir.OpSvd:
			a := append([]float64(nil), part(args[0], b)...)
			Svd(a, m, n, attrs.FullMatrices, part(outs[0], b), part(outs[1], b), part(outs[2], b))
		case ir.OpEig:
			a := append([]float64(nil), part(args[0], b)...)
			Eig(a, n, part(outs[0], b), part(outs[1], b), part(outs[2], b), part(outs[3], b), part(outs[4], b), part(outs[5], b))
		case ir.OpHessenberg:
			h := part(outs[0], b)
			copy(h, part(args[0], b))
			Hessenberg(h, n, part(outs[1], b))
		case ir.OpTridiagonal:
			t := part(outs[0], b)
			copy(t, part(args[0], b))
			Tridiagonal(t, n, attrs.Lower, part(outs[1], b), part(outs[2], b), part(outs[3], b))
		case ir.OpQrPivoted:
			qr := part(outs[0], b)
			copy(qr, part(args[0], b))
			jpvt := make([]int, n)
			for j, p := range part(args[1], b) {
				jpvt[j] = int(p)
			}
			QrPivoted(qr, m, n, jpvt, part(outs[2], b))
			for j, p := range jpvt {
				part(outs[1], b)[j] = float64(p)
			}
		case ir.OpSchur:
			t := part(outs[0], b)
			copy(t, part(args[0], b))
			Schur(t, n, part(outs[1], b), part(outs[2], b), part(outs[3], b))
		default:
			return nil, fmt.Errorf("lapack: %s is not a linear algebra op", in.Op)
		}
	}
	return outs, nil
}

// Ops are the IR ops Apply computes.
func Ops() []ir.Op {
	return []ir.Op{ir.OpCholesky, ir.OpTriangularSolve, ir.OpQr, ir.OpHouseholderProduct, ir.OpEigh, ir.OpLu, ir.OpSvd,
		ir.OpEig, ir.OpHessenberg, ir.OpTridiagonal, ir.OpQrPivoted, ir.OpSchur}
}

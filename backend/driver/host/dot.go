package host

import (
	"slices"

	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	// A dot costs a multiply-add per result element and contracted index.
	register(opKernel{make: dotKernel, work: func(in ir.Instr, argTypes []ir.TensorType) int {
		k := 1
		for _, d := range in.Dot.LhsContract {
			k *= argTypes[0].Shape[d]
		}
		return in.Type.Shape.Size() * k
	}}, ir.OpDotGeneral)
}

// parallelWork is the number of multiply-adds below which contractions stay
// on one goroutine.
const parallelWork = 1 << 16

// dotPlan is dot_general brought to a batched matmul: the lhs is gathered
// into [B, M, K] (batch, free, contracting dims) and the rhs into [B, K, N];
// the result [batch..., lhs free..., rhs free...] is then [B, M, N] row-major.
type dotPlan struct {
	b, m, k, n int
	lhs, rhs   gatherPlan
}

// gatherPlan is a transpose into canonical order; identity means the operand
// already is in that order and is used in place.
type gatherPlan struct {
	identity  bool
	shape     []int // operand dims in canonical order
	outStride []int
	inStride  []int
}

func newGatherPlan(s ir.Shape, perm []int) gatherPlan {
	st := s.Strides()
	g := gatherPlan{identity: true}
	for i, p := range perm {
		if p != i {
			g.identity = false
		}
		g.shape = append(g.shape, s[p])
		g.inStride = append(g.inStride, st[p])
	}
	g.outStride = ir.Shape(g.shape).Strides()
	return g
}

func (g gatherPlan) apply(src []byte, scratch func(n int) []byte, gather func(dst, src []byte)) []byte {
	if g.identity {
		return src
	}
	dst := scratch(len(src))
	gather(dst, src)
	return dst
}

func newDotPlan(lhs, rhs ir.Shape, d *ir.DotDims) dotPlan {
	free := func(rank int, batch, contract []int) []int {
		var f []int
		for i := range rank {
			if !slices.Contains(batch, i) && !slices.Contains(contract, i) {
				f = append(f, i)
			}
		}
		return f
	}
	prod := func(s ir.Shape, dims []int) int {
		n := 1
		for _, i := range dims {
			n *= s[i]
		}
		return n
	}
	lf, rf := free(len(lhs), d.LhsBatch, d.LhsContract), free(len(rhs), d.RhsBatch, d.RhsContract)
	return dotPlan{
		b:   prod(lhs, d.LhsBatch),
		m:   prod(lhs, lf),
		k:   prod(lhs, d.LhsContract),
		n:   prod(rhs, rf),
		lhs: newGatherPlan(lhs, slices.Concat(d.LhsBatch, lf, d.LhsContract)),
		rhs: newGatherPlan(rhs, slices.Concat(d.RhsBatch, d.RhsContract, rf)),
	}
}

func dotKernel(in ir.Instr, at []ir.TensorType) (kernel, error) {
	p := newDotPlan(at[0].Shape, at[1].Shape, in.Dot)
	switch at[0].DType {
	case ir.F32, ir.F64, ir.F16, ir.BF16:
		// Half operands are widened first, so they accumulate in float32.
		return forFloat(in, at, true, dotOf[float32](p), dotOf[float64](p))
	case ir.I8:
		return dotOf[int8](p), nil
	case ir.I16:
		return dotOf[int16](p), nil
	case ir.I32:
		return dotOf[int32](p), nil
	case ir.I64:
		return dotOf[int64](p), nil
	case ir.U8:
		return dotOf[uint8](p), nil
	case ir.U32:
		return dotOf[uint32](p), nil
	}
	return nil, errUnsupported(in, at)
}

func dotOf[T numT](p dotPlan) kernel {
	gather := func(g gatherPlan) func(dst, src []byte) {
		return func(dst, src []byte) {
			copyStrided(view[T](dst), 0, g.outStride, view[T](src), 0, g.inStride, g.shape)
		}
	}
	gl, gr := gather(p.lhs), gather(p.rhs)
	return func(out []byte, ins [][]byte) {
		a := view[T](p.lhs.apply(ins[0], newBuffer, gl))
		b := view[T](p.rhs.apply(ins[1], newBuffer, gr))
		if c, ok := any(view[T](out)).([]float32); ok {
			matmulF32(c, any(a).([]float32), any(b).([]float32), p.b, p.m, p.k, p.n)
			return
		}
		matmul(view[T](out), a, b, p.b, p.m, p.k, p.n)
	}
}

// matmul computes c[bi] = a[bi] x b[bi] for row-major [M,K] x [K,N] blocks,
// accumulating in T. The i-k-j order streams rows of b and c, and taking four
// k at once cuts the loads and stores of c by four. Rows (over all batches)
// are split across goroutines when the work is large.
func matmul[T numT](c, a, b []T, B, M, K, N int) {
	rows := B * M
	if rows == 0 || N == 0 {
		return
	}
	grain := max(1, parallelWork/max(K*N, 1))
	parallelFor(rows, grain, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			bi := r / M
			arow := a[r*K : r*K+K]
			crow := c[r*N : r*N+N]
			clear(crow)
			bb := b[bi*K*N : (bi+1)*K*N]
			k := 0
			for ; k+4 <= K; k += 4 {
				a0, a1, a2, a3 := arow[k], arow[k+1], arow[k+2], arow[k+3]
				b0 := bb[k*N : k*N+N]
				b1 := bb[(k+1)*N : (k+1)*N+N]
				b2 := bb[(k+2)*N : (k+2)*N+N]
				b3 := bb[(k+3)*N : (k+3)*N+N]
				b1, b2, b3, crow = b1[:len(b0)], b2[:len(b0)], b3[:len(b0)], crow[:len(b0)]
				for j, v := range b0 {
					crow[j] += a0*v + a1*b1[j] + a2*b2[j] + a3*b3[j]
				}
			}
			for ; k < K; k++ {
				ak := arow[k]
				bk := bb[k*N : k*N+N]
				crow = crow[:len(bk)]
				for j, v := range bk {
					crow[j] += ak * v
				}
			}
		}
	})
}

package host

import (
	"github.com/metalplug/metalplug/backend/ir"
)

// windowPlan holds, per dimension and output coordinate, the input range the
// window covers once clipped to the operand. Padding only ever contributes the
// identity, so clipping it away is exact, and with no window dilation what is
// left is a box whose innermost rows are contiguous.
type windowPlan struct {
	inShape  []int
	inStride []int
	outShape []int
	ranges   [][][2]int // [dim][out coord] -> [lo, hi) in the operand
	work     int
}

func newWindowPlan(in, out ir.Shape, w *ir.WindowAttrs) *windowPlan {
	p := &windowPlan{inShape: in, inStride: in.Strides(), outShape: out, work: 1}
	p.ranges = make([][][2]int, len(in))
	for d := range in {
		p.work *= w.Dims[d]
		p.ranges[d] = make([][2]int, out[d])
		for o := range out[d] {
			start := o*w.Strides[d] - w.Padding[d][0]
			lo, hi := max(start, 0), min(start+w.Dims[d], in[d])
			p.ranges[d][o] = [2]int{lo, max(hi, lo)}
		}
	}
	return p
}

func reduceWindowKernel(in ir.Instr, at []ir.TensorType) (kernel, error) {
	p := newWindowPlan(at[0].Shape, in.Type.Shape, in.Window)
	kind := in.Reduce
	switch at[0].DType {
	case ir.F32, ir.F64, ir.F16, ir.BF16:
		return forFloat(in, at, true, windowOf[float32](p, kind), windowOf[float64](p, kind))
	case ir.I8:
		return windowOf[int8](p, kind), nil
	case ir.I16:
		return windowOf[int16](p, kind), nil
	case ir.I32:
		return windowOf[int32](p, kind), nil
	case ir.I64:
		return windowOf[int64](p, kind), nil
	case ir.U8:
		return windowOf[uint8](p, kind), nil
	}
	return nil, errUnsupported(in, at)
}

func windowOf[T numT](p *windowPlan, kind ir.ReduceKind) kernel {
	id := identity[T](kind)
	rank := len(p.inShape)
	return func(out []byte, ins [][]byte) {
		z, x := view[T](out), view[T](ins[0])
		if rank == 0 { // a scalar's only window is itself
			z[0] = fold(kind, id, x)
			return
		}
		parallelFor(len(z), max(1, grainMath/p.work), func(lo, hi int) {
			oidx := make([]int, rank)
			box := make([][2]int, rank)
			idx := make([]int, rank)
			for pos := lo; pos < hi; pos++ {
				rem := pos
				for d := rank - 1; d >= 0; d-- {
					oidx[d] = rem % p.outShape[d]
					rem /= p.outShape[d]
				}
				acc := id
				empty := false
				for d := range rank {
					box[d] = p.ranges[d][oidx[d]]
					idx[d] = box[d][0]
					empty = empty || box[d][0] == box[d][1]
				}
				if !empty {
					last := rank - 1
					for {
						off := 0
						for d := range last {
							off += idx[d] * p.inStride[d]
						}
						acc = fold(kind, acc, x[off+box[last][0]:off+box[last][1]])
						d := last - 1
						for ; d >= 0; d-- {
							if idx[d]++; idx[d] < box[d][1] {
								break
							}
							idx[d] = box[d][0]
						}
						if d < 0 {
							break
						}
					}
				}
				z[pos] = acc
			}
		})
	}
}

package host

import (
	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	register(opKernel{make: reduceWindowKernel, work: heavyWork}, ir.OpReduceWindow)
	register(opKernel{make: selectAndScatterKernel, work: heavyWork}, ir.OpSelectAndScatter)
}

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
	// The trailing dims from outer on have a window of 1, stride 1 and no
	// padding (the channels of NHWC pooling): inner elements of the output
	// are then a contiguous row combined from contiguous input rows.
	outer, inner int
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
	p.outer, p.inner = len(in), 1
	for d := len(in) - 1; d >= 0; d-- {
		if w.Dims[d] != 1 || w.Strides[d] != 1 || w.Padding[d] != [2]int{} {
			break
		}
		p.outer, p.inner = d, p.inner*in[d]
	}
	return p
}

// windowRows is windowOf when p.inner is large: for each output row, fold
// the input rows of its window into it elementwise.
func windowRows[T numT](p *windowPlan, kind ir.ReduceKind, id T, z, x []T) {
	rank, inner := p.outer, p.inner
	rows := len(z) / inner
	parallelFor(rows, max(1, grainMath/max(1, p.work*inner)), func(lo, hi int) {
		oidx := make([]int, rank)
		box := make([][2]int, rank)
		idx := make([]int, rank)
		for pos := lo; pos < hi; pos++ {
			zr := z[pos*inner : pos*inner+inner]
			for i := range zr {
				zr[i] = id
			}
			rem := pos
			for d := rank - 1; d >= 0; d-- {
				oidx[d] = rem % p.outShape[d]
				rem /= p.outShape[d]
			}
			empty := false
			for d := range rank {
				box[d] = p.ranges[d][oidx[d]]
				idx[d] = box[d][0]
				empty = empty || box[d][0] == box[d][1]
			}
			if empty {
				continue
			}
			for {
				off := 0
				for d := range rank {
					off += idx[d] * p.inStride[d]
				}
				foldInto(kind, zr, x[off:off+inner])
				d := rank - 1
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
	})
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
	case ir.U32:
		return windowOf[uint32](p, kind), nil
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
		if p.inner >= 8 && p.outer > 0 {
			windowRows(p, kind, id, z, x)
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

// selectAndScatterKernel is max pooling's gradient. Each window of the
// operand (clipped to it: padding never wins) selects a position the way
// XLA's select_and_scatter folds its select function, in row-major window
// order: the first real element starts as the choice and a later element e
// replaces it unless select(choice, e) holds. With GE that is the first
// maximum, with LE the first minimum. The source element of the window is
// then added at the choice.
func selectAndScatterKernel(in ir.Instr, at []ir.TensorType) (kernel, error) {
	p := newWindowPlan(at[0].Shape, at[1].Shape, in.Window)
	ge := in.Compare == ir.CmpGE
	switch at[0].DType {
	case ir.F32, ir.F64, ir.F16, ir.BF16:
		return forFloat(in, at, true, selectScatterOf[float32](p, ge), selectScatterOf[float64](p, ge))
	case ir.I8:
		return selectScatterOf[int8](p, ge), nil
	case ir.I16:
		return selectScatterOf[int16](p, ge), nil
	case ir.I32:
		return selectScatterOf[int32](p, ge), nil
	case ir.I64:
		return selectScatterOf[int64](p, ge), nil
	case ir.U8:
		return selectScatterOf[uint8](p, ge), nil
	case ir.U32:
		return selectScatterOf[uint32](p, ge), nil
	}
	return nil, errUnsupported(in, at)
}

// selectScatterOf selects in parallel (windows only read the operand), then
// adds serially in source order, since overlapping windows may choose the
// same position and a fixed order keeps float sums reproducible.
func selectScatterOf[T numT](p *windowPlan, ge bool) kernel {
	rank := len(p.inShape)
	return func(out []byte, ins [][]byte) {
		z, x, src := view[T](out), view[T](ins[0]), view[T](ins[1])
		for i := range z {
			z[i] = 0
		}
		chosen := make([]int, len(src)) // operand offset per window, -1 if all padding
		if p.inner >= 8 && p.outer > 0 {
			selectRows(p, ge, x, chosen)
		} else {
			selectEach(p, ge, x, chosen, rank)
		}
		for pos, off := range chosen {
			if off >= 0 {
				z[off] += src[pos]
			}
		}
	}
}

// selectRows is selectEach when p.inner is large: the windows of one output
// row's elements differ only in their offset within the row, so they are
// walked together, row by row.
func selectRows[T numT](p *windowPlan, ge bool, x []T, chosen []int) {
	rank, inner := p.outer, p.inner
	rows := len(chosen) / inner
	parallelFor(rows, max(1, grainMath/max(1, p.work*inner)), func(lo, hi int) {
		oidx := make([]int, rank)
		box := make([][2]int, rank)
		idx := make([]int, rank)
		best := make([]T, inner)
		for pos := lo; pos < hi; pos++ {
			sel := chosen[pos*inner : pos*inner+inner]
			for i := range sel {
				sel[i] = -1
			}
			rem := pos
			for d := rank - 1; d >= 0; d-- {
				oidx[d] = rem % p.outShape[d]
				rem /= p.outShape[d]
			}
			empty := false
			for d := range rank {
				box[d] = p.ranges[d][oidx[d]]
				idx[d] = box[d][0]
				empty = empty || box[d][0] == box[d][1]
			}
			if empty {
				continue
			}
			first := true
			for {
				off := 0
				for d := range rank {
					off += idx[d] * p.inStride[d]
				}
				row := x[off : off+inner]
				if first {
					copy(best, row)
					for c := range sel {
						sel[c] = off + c
					}
					first = false
				} else if ge {
					for c, v := range row {
						if !(best[c] >= v) {
							best[c], sel[c] = v, off+c
						}
					}
				} else {
					for c, v := range row {
						if !(best[c] <= v) {
							best[c], sel[c] = v, off+c
						}
					}
				}
				d := rank - 1
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
	})
}

// selectEach chooses, for every window, the operand offset it selects.
func selectEach[T numT](p *windowPlan, ge bool, x []T, chosen []int, rank int) {
	parallelFor(len(chosen), max(1, grainMath/max(p.work, 1)), func(lo, hi int) {
		oidx := make([]int, rank)
		idx := make([]int, rank)
		for pos := lo; pos < hi; pos++ {
			rem := pos
			for d := rank - 1; d >= 0; d-- {
				oidx[d] = rem % p.outShape[d]
				rem /= p.outShape[d]
			}
			empty := false
			for d := range rank {
				r := p.ranges[d][oidx[d]]
				idx[d] = r[0]
				empty = empty || r[0] == r[1]
			}
			chosen[pos] = -1
			if empty {
				continue
			}
			sel := -1
			var sv T
			for {
				off := 0
				for d := range rank {
					off += idx[d] * p.inStride[d]
				}
				v := x[off]
				if sel < 0 || (ge && !(sv >= v)) || (!ge && !(sv <= v)) {
					sel, sv = off, v
				}
				d := rank - 1
				for ; d >= 0; d-- {
					if idx[d]++; idx[d] < p.ranges[d][oidx[d]][1] {
						break
					}
					idx[d] = p.ranges[d][oidx[d]][0]
				}
				if d < 0 {
					break
				}
			}
			chosen[pos] = sel
		}
	})
}

package host

import (
	"fmt"
	"slices"

	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	register(opKernel{make: gatherKernel, work: heavyWork}, ir.OpGather)
	register(opKernel{make: scatterKernel, work: heavyWork}, ir.OpScatter)
}

// Gather and scatter walk the batch of index vectors; for each, the window
// they address is one strided box of the operand, so the per-element work is
// the same strided walk the movement kernels use, with bases that depend on
// the indices. Both move elements by width, like data movement, except that
// scatter's combining kinds look at values.

// indexLayout says where the batch of index vectors lives in the start
// indices: the batch dims' sizes and strides (in indices order, which is also
// the order the batch dims take in the gather result or the updates) and the
// stride between the entries of one vector.
type indexLayout struct {
	batch     []int
	strides   []int
	vecStride int // 0 when IndexVectorDim is the indices' rank: scalar indices
	vecLen    int
}

func newIndexLayout(ti ir.Shape, ivd int) indexLayout {
	st := ti.Strides()
	l := indexLayout{vecLen: 1}
	for d, n := range ti {
		if d == ivd {
			l.vecStride, l.vecLen = st[d], n
			continue
		}
		l.batch = append(l.batch, n)
		l.strides = append(l.strides, st[d])
	}
	return l
}

// readIndices widens int32 or int64 start indices to int64.
func readIndices(d ir.DType, b []byte) []int64 {
	if d == ir.I64 {
		return view[int64](b)
	}
	s := view[int32](b)
	out := make([]int64, len(s))
	for i, v := range s {
		out[i] = int64(v)
	}
	return out
}

// box is a coalesced strided walk of a window: shape and, per side, strides.
type box struct {
	shape    []int
	sa, sb   []int
	elements int
}

func newBox(shape, sa, sb []int) box {
	sh, st := coalesce(shape, sa, sb)
	return box{shape: sh, sa: st[0], sb: st[1], elements: ir.Shape(shape).Size()}
}

// walk calls fn for every innermost run of the box: the offsets of its first
// element on both sides, its length and its strides.
func (bx *box) walk(baseA, baseB int, fn func(a, b, n, sa, sb int)) {
	if bx.elements == 0 {
		return
	}
	if len(bx.shape) == 0 {
		fn(baseA, baseB, 1, 0, 0)
		return
	}
	last := len(bx.shape) - 1
	it := newStrideIter(bx.shape[:last], bx.sa[:last], bx.sb[:last])
	for {
		fn(baseA+it.off[0], baseB+it.off[1], bx.shape[last], bx.sa[last], bx.sb[last])
		if !it.next() {
			return
		}
	}
}

// clampIndex is min(max(v, 0), hi) for an index of any size.
func clampIndex(v int64, hi int) int {
	switch {
	case v < 0:
		return 0
	case v > int64(hi):
		return hi
	}
	return int(v)
}

// gatherOpPlan holds what does not depend on the start indices.
type gatherOpPlan struct {
	idx      indexLayout
	idxType  ir.DType
	outBatch []int // result stride of each batch dim
	startMap []int // operand dim of each index vector entry
	maxStart []int // per operand dim: the largest start that keeps the slice inside
	opStride []int
	window   box // a = result, b = operand
	batchN   int
}

func gatherKernel(in ir.Instr, at []ir.TensorType) (kernel, error) {
	g := in.Gather
	op, out := at[0].Shape, in.Type.Shape
	for _, d := range g.CollapsedSliceDims {
		if g.SliceSizes[d] == 0 {
			// The builder allows it (so does XLA's shape inference), but then
			// each result element would come from an empty slice: there is
			// nothing to gather, and the result is zeros.
			return func(out []byte, _ [][]byte) { clear(out) }, nil
		}
	}
	p := &gatherOpPlan{
		idx:      newIndexLayout(at[1].Shape, g.IndexVectorDim),
		idxType:  at[1].DType,
		startMap: g.StartIndexMap,
		opStride: op.Strides(),
		maxStart: make([]int, len(op)),
	}
	for d := range op {
		p.maxStart[d] = op[d] - g.SliceSizes[d]
	}
	outStrides := out.Strides()
	var wShape, wOut, wIn []int
	j := 0
	for d := range op {
		if slices.Contains(g.CollapsedSliceDims, d) {
			continue
		}
		wShape = append(wShape, g.SliceSizes[d])
		wOut = append(wOut, outStrides[g.OffsetDims[j]])
		wIn = append(wIn, p.opStride[d])
		j++
	}
	p.window = newBox(wShape, wOut, wIn)
	for d := range out {
		if !slices.Contains(g.OffsetDims, d) {
			p.outBatch = append(p.outBatch, outStrides[d])
		}
	}
	p.batchN = ir.Shape(p.idx.batch).Size()
	switch in.Type.DType.Size() {
	case 1:
		return gatherOf[uint8](p), nil
	case 2:
		return gatherOf[uint16](p), nil
	case 4:
		return gatherOf[uint32](p), nil
	case 8:
		return gatherOf[uint64](p), nil
	}
	return nil, errUnsupported(in, at)
}

func gatherOf[T any](p *gatherOpPlan) kernel {
	return func(out []byte, ins [][]byte) {
		z, x := view[T](out), view[T](ins[0])
		idx := readIndices(p.idxType, ins[1])
		grain := max(1, grainCheap/max(p.window.elements, 1))
		parallelFor(p.batchN, grain, func(lo, hi int) {
			pos := make([]int, len(p.idx.batch))
			for b := lo; b < hi; b++ {
				rem := b
				for d := len(pos) - 1; d >= 0; d-- {
					pos[d] = rem % p.idx.batch[d]
					rem /= p.idx.batch[d]
				}
				outBase, idxBase := 0, 0
				for d, i := range pos {
					outBase += i * p.outBatch[d]
					idxBase += i * p.idx.strides[d]
				}
				inBase := 0
				for k, d := range p.startMap {
					inBase += clampIndex(idx[idxBase+k*p.idx.vecStride], p.maxStart[d]) * p.opStride[d]
				}
				p.window.walk(outBase, inBase, func(o, i, n, os, is int) {
					if os == 1 && is == 1 {
						copy(z[o:o+n], x[i:i+n])
						return
					}
					for j := range n {
						z[o+j*os] = x[i+j*is]
					}
				})
			}
		})
	}
}

// scatterPlan mirrors gatherOpPlan; the window walks the operand (a) and the
// updates (b).
type scatterPlan struct {
	idx      indexLayout
	idxType  ir.DType
	updBatch []int // updates stride of each batch (scatter) dim
	startMap []int // operand dim of each index vector entry
	maxStart []int // per operand dim: the largest start that keeps the window inside
	opStride []int
	window   box
	batchN   int
	never    bool // some operand dim is smaller than its window: every update is skipped
}

// newScatterPlan lays out a scatter of updates (shape upd) into an
// operand (shape op) by indices of type it.
func newScatterPlan(s *ir.ScatterDims, op ir.Shape, it ir.TensorType, upd ir.Shape) *scatterPlan {
	p := &scatterPlan{
		idx:      newIndexLayout(it.Shape, s.IndexVectorDim),
		idxType:  it.DType,
		startMap: s.ScatterDimsToOperandDims,
		opStride: op.Strides(),
		maxStart: make([]int, len(op)),
	}
	updStrides := upd.Strides()
	var wShape, wOp, wUpd []int
	j := 0
	for d := range op {
		size := 1 // inserted dims are windows of one element
		if !slices.Contains(s.InsertedWindowDims, d) {
			u := s.UpdateWindowDims[j]
			j++
			size = upd[u]
			wShape = append(wShape, size)
			wOp = append(wOp, p.opStride[d])
			wUpd = append(wUpd, updStrides[u])
		}
		p.maxStart[d] = op[d] - size
		p.never = p.never || p.maxStart[d] < 0
	}
	p.window = newBox(wShape, wOp, wUpd)
	for d := range upd {
		if !slices.Contains(s.UpdateWindowDims, d) {
			p.updBatch = append(p.updBatch, updStrides[d])
		}
	}
	p.batchN = ir.Shape(p.idx.batch).Size()
	return p
}

func scatterKernel(in ir.Instr, at []ir.TensorType) (kernel, error) {
	s := in.Scatter
	p := newScatterPlan(s, at[0].Shape, at[1], at[2].Shape)
	d := in.Type.DType
	if s.Kind == ir.ScatterReplace {
		switch d.Size() {
		case 1:
			return scatterOf[uint8](p, nil), nil
		case 2:
			return scatterOf[uint16](p, nil), nil
		case 4:
			return scatterOf[uint32](p, nil), nil
		case 8:
			return scatterOf[uint64](p, nil), nil
		}
		return nil, errUnsupported(in, at)
	}
	kind := s.Kind
	switch d {
	case ir.F32:
		return scatterOf(p, combineNum[float32](kind)), nil
	case ir.F64:
		return scatterOf(p, combineNum[float64](kind)), nil
	case ir.F16, ir.BF16:
		// Each update rounds to the half type, as a device computing in it would.
		f := combineNum[float32](kind)
		to, from := ir.F32ToBF16, ir.BF16ToF32
		if d == ir.F16 {
			to, from = ir.F32ToF16, ir.F16ToF32
		}
		return scatterOf(p, func(a, b uint16) uint16 { return to(f(from(a), from(b))) }), nil
	case ir.I8:
		return scatterOf(p, combineNum[int8](kind)), nil
	case ir.I16:
		return scatterOf(p, combineNum[int16](kind)), nil
	case ir.I32:
		return scatterOf(p, combineNum[int32](kind)), nil
	case ir.I64:
		return scatterOf(p, combineNum[int64](kind)), nil
	case ir.U8:
		return scatterOf(p, combineNum[uint8](kind)), nil
	case ir.U32:
		return scatterOf(p, combineNum[uint32](kind)), nil
	case ir.Bool:
		// As on XLA's pred: add and max are or, mul and min are and.
		if kind == ir.ScatterAdd || kind == ir.ScatterMax {
			return scatterOf(p, func(a, b uint8) uint8 { return b2u(a != 0 || b != 0) }), nil
		}
		return scatterOf(p, func(a, b uint8) uint8 { return b2u(a != 0 && b != 0) }), nil
	}
	return nil, fmt.Errorf("scatter %v is not implemented for %v", kind, d)
}

// combineNum is how a scatter kind folds an update b into a; max and min
// propagate NaN like OpMax and OpMin, and integers wrap.
func combineNum[T numT](kind ir.ScatterKind) func(a, b T) T {
	switch kind {
	case ir.ScatterAdd:
		return func(a, b T) T { return a + b }
	case ir.ScatterMul:
		return func(a, b T) T { return a * b }
	case ir.ScatterMax:
		return func(a, b T) T { return max(a, b) }
	}
	return func(a, b T) T { return min(a, b) }
}

// scatterOf applies the updates one index vector at a time, in row-major
// order of the batch, so that with repeated indices the last replace wins and
// sums add in a fixed order. comb nil means replace. A window that would
// leave the operand anywhere is skipped whole, as the IR says; this also
// keeps huge or negative indices from ever reaching an address.
func scatterOf[T any](p *scatterPlan, comb func(a, b T) T) kernel {
	return func(out []byte, ins [][]byte) {
		copy(out, ins[0])
		z, u := view[T](out), view[T](ins[2])
		p.eachWindow(ins[1], func(outBase, updBase int) {
			p.window.walk(outBase, updBase, func(o, i, n, os, is int) {
				if comb == nil {
					for j := range n {
						z[o+j*os] = u[i+j*is]
					}
					return
				}
				for j := range n {
					z[o+j*os] = comb(z[o+j*os], u[i+j*is])
				}
			})
		})
	}
}

// eachWindow calls fn with the first operand and update elements of each
// update window that lies inside the operand, one index vector at a time in
// row-major order of the batch.
func (p *scatterPlan) eachWindow(indices []byte, fn func(outBase, updBase int)) {
	if p.never {
		return
	}
	idx := readIndices(p.idxType, indices)
	pos := make([]int, len(p.idx.batch))
	for b := range p.batchN {
		if b > 0 { // advance the batch position row-major
			for d := len(pos) - 1; d >= 0; d-- {
				if pos[d]++; pos[d] < p.idx.batch[d] {
					break
				}
				pos[d] = 0
			}
		}
		updBase, idxBase := 0, 0
		for d, i := range pos {
			updBase += i * p.updBatch[d]
			idxBase += i * p.idx.strides[d]
		}
		outBase, inside := 0, true
		for k, d := range p.startMap {
			v := idx[idxBase+k*p.idx.vecStride]
			if v < 0 || v > int64(p.maxStart[d]) {
				inside = false
				break
			}
			outBase += int(v) * p.opStride[d]
		}
		if inside {
			fn(outBase, updBase)
		}
	}
}

package eval

// Gathers, scatters, windows and sorts.

import (
	"math"
	"slices"
	"sort"

	"github.com/metalplug/metalplug/backend/ir"
)

func batchIndexShape(ti ir.Shape, ivd int) (ir.Shape, int) {
	if ivd == len(ti) {
		return ti.Clone(), 1
	}
	var b ir.Shape
	for i, d := range ti {
		if i != ivd {
			b = append(b, d)
		}
	}
	return b, ti[ivd]
}

// indexVector reads the index vector of indices at batch position bi.
func indexVector(ind Tensor, ivd int, bi []int) []int {
	ti := ind.Type.Shape
	_, vec := batchIndexShape(ti, ivd)
	out := make([]int, vec)
	for v := range vec {
		full := make([]int, 0, len(ti))
		full = append(full, bi[:min(ivd, len(bi))]...)
		if ivd < len(ti) {
			full = append(full, v)
		}
		full = append(full, bi[min(ivd, len(bi)):]...)
		out[v] = int(ind.I[Ravel(full, ti)])
	}
	return out
}

func init() {
	register(func(in ir.Instr, a []Tensor, out Tensor) (Tensor, error) {
		evalGather(in, a[0], a[1], out)
		return out, nil
	}, ir.OpGather)
	register(func(in ir.Instr, a []Tensor, out Tensor) (Tensor, error) {
		evalScatter(in, a[0], a[1], a[2], out)
		return out, nil
	}, ir.OpScatter)
	register(func(in ir.Instr, a []Tensor, out Tensor) (Tensor, error) { evalSort(in, a[0], out); return out, nil }, ir.OpSort, ir.OpArgSort)
}

func evalGather(in ir.Instr, x, ind, out Tensor) {
	g := in.Gather
	xs := x.Type.Shape
	for k := range out.Type.Shape.Size() {
		o := Unravel(k, out.Type.Shape)
		var bi, off []int
		for i, v := range o {
			if slices.Contains(g.OffsetDims, i) {
				off = append(off, v)
			} else {
				bi = append(bi, v)
			}
		}
		vec := indexVector(ind, g.IndexVectorDim, bi)
		start := make([]int, len(xs))
		for j, d := range g.StartIndexMap {
			start[d] = min(max(vec[j], 0), xs[d]-g.SliceSizes[d])
		}
		full := slices.Clone(start)
		oi := 0
		for d := range xs {
			if slices.Contains(g.CollapsedSliceDims, d) {
				continue
			}
			full[d] += off[oi]
			oi++
		}
		copyElem(out, k, x, Ravel(full, xs))
	}
}

func evalScatter(in ir.Instr, x, ind, upd, out Tensor) {
	s := in.Scatter
	copy(out.F, x.F)
	copy(out.I, x.I)
	copy(out.C, x.C)
	for k, p := range scatterTargets(s, x.Type.Shape, ind, upd.Type.Shape) {
		if p < 0 {
			continue
		}
		v := upd.At(k)
		switch s.Kind {
		case ir.ScatterReplace:
			copyElem(out, p, upd, k)
		case ir.ScatterAdd, ir.ScatterMul:
			if out.I != nil {
				a, u := out.I[p], upd.I[k]
				if s.Kind == ir.ScatterAdd {
					out.I[p] = out.Type.DType.Wrap(a + u)
				} else {
					out.I[p] = out.Type.DType.Wrap(a * u)
				}
			} else if s.Kind == ir.ScatterAdd {
				out.Set(p, out.F[p]+v)
			} else {
				out.Set(p, out.F[p]*v)
			}
		case ir.ScatterMax, ir.ScatterMin:
			kind := map[ir.ScatterKind]ir.ReduceKind{ir.ScatterMax: ir.ReduceMax, ir.ScatterMin: ir.ReduceMin}[s.Kind]
			if out.I != nil {
				out.I[p] = foldInt(kind, out.I[p], upd.I[k])
			} else {
				out.Set(p, fold(kind, out.F[p], v))
			}
		}
	}
}

// scatterTargets is, for each update element in row-major order, the
// operand element it lands on, or -1 when its window leaves the operand
// (the whole window is skipped).
func scatterTargets(s *ir.ScatterDims, xs ir.Shape, ind Tensor, us ir.Shape) []int {
	var winOperand []int
	for d := range xs {
		if !slices.Contains(s.InsertedWindowDims, d) {
			winOperand = append(winOperand, d)
		}
	}
	targets := make([]int, us.Size())
	for k := range targets {
		u := Unravel(k, us)
		var bi, wi []int
		for i, v := range u {
			if slices.Contains(s.UpdateWindowDims, i) {
				wi = append(wi, v)
			} else {
				bi = append(bi, v)
			}
		}
		vec := indexVector(ind, s.IndexVectorDim, bi)
		start := make([]int, len(xs))
		for j, d := range s.ScatterDimsToOperandDims {
			start[d] = vec[j]
		}
		fits := true
		for d := range xs {
			size := 1
			if j := slices.Index(winOperand, d); j >= 0 {
				size = us[s.UpdateWindowDims[j]]
			}
			if start[d] < 0 || start[d]+size > xs[d] {
				fits = false
			}
		}
		targets[k] = -1
		if fits {
			full := slices.Clone(start)
			for j, d := range winOperand {
				full[d] += wi[j]
			}
			targets[k] = Ravel(full, xs)
		}
	}
	return targets
}

// windowPositions is, for the window at output index idx, the operand
// element at each window position in row-major order, or -1 for a
// position in the padding.
func windowPositions(w *ir.WindowAttrs, xs ir.Shape, idx []int) []int {
	wshape := ir.Shape(w.Dims)
	pos := make([]int, wshape.Size())
	src := make([]int, len(idx))
	for m := range pos {
		off := Unravel(m, wshape)
		for d := range idx {
			src[d] = idx[d]*w.Strides[d] + off[d] - w.Padding[d][0]
		}
		pos[m] = -1
		if inBounds(src, xs) {
			pos[m] = Ravel(src, xs)
		}
	}
	return pos
}

func evalSort(in ir.Instr, x, out Tensor) {
	dim := in.Sort.Dim
	s := x.Type.Shape
	n := s[dim]
	for k := range s.Size() {
		idx := Unravel(k, s)
		if idx[dim] != 0 {
			continue
		}
		pos := make([]int, n)
		for j := range n {
			idx[dim] = j
			pos[j] = Ravel(idx, s)
		}
		order := seq(n)
		less := func(a, b float64) bool {
			if math.IsNaN(b) {
				return !math.IsNaN(a)
			}
			return a < b
		}
		sort.SliceStable(order, func(a, b int) bool {
			pa, pb := pos[order[a]], pos[order[b]]
			if in.Sort.Descending {
				pa, pb = pb, pa
			}
			if x.I != nil { // integers as they are: int64 past 2^53 has no float64
				return x.I[pa] < x.I[pb]
			}
			return less(x.At(pa), x.At(pb))
		})
		for j := range n {
			if in.Op == ir.OpArgSort {
				out.I[pos[j]] = int64(order[j])
			} else {
				copyElem(out, pos[j], x, pos[order[j]])
			}
		}
	}
}

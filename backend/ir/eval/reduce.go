package eval

import (
	"math"
	"slices"

	"github.com/metalplug/metalplug/backend/ir"
)

// Reductions: over axes, over windows, the windows' scatter of the
// selected element, and the index of the extreme.

func init() {
	register(evalReduce, ir.OpReduce)
	register(evalReduceWindow, ir.OpReduceWindow)
	register(evalSelectAndScatter, ir.OpSelectAndScatter)
	register(evalArgReduce, ir.OpArgReduce)
}

func evalReduce(in ir.Instr, args []Tensor, out Tensor) (Tensor, error) {
	x := args[0]
	acc := make([]float64, out.Type.Shape.Size())
	acci := make([]int64, out.Type.Shape.Size())
	for k := range acc {
		acc[k] = identityOf(in.Reduce, x.Type.DType)
		acci[k] = identityInt(in.Reduce, x.Type.DType)
	}
	for k := range x.Type.Shape.Size() {
		idx := Unravel(k, x.Type.Shape)
		var o []int
		for d, v := range idx {
			if !slices.Contains(in.Axes, d) {
				o = append(o, v)
			}
		}
		j := Ravel(o, out.Type.Shape)
		if x.I != nil {
			acci[j] = foldInt(in.Reduce, acci[j], x.I[k])
		} else {
			acc[j] = fold(in.Reduce, acc[j], x.F[k])
		}
	}
	for k := range acc {
		if out.I != nil {
			out.I[k] = out.Type.DType.Wrap(acci[k])
		} else {
			out.Set(k, acc[k])
		}
	}
	return out, nil
}

func evalReduceWindow(in ir.Instr, args []Tensor, out Tensor) (Tensor, error) {
	x := args[0]
	for k := range out.Type.Shape.Size() {
		acc := identityOf(in.Reduce, x.Type.DType)
		for _, p := range windowPositions(in.Window, x.Type.Shape, Unravel(k, out.Type.Shape)) {
			if p >= 0 {
				acc = fold(in.Reduce, acc, x.At(p))
			}
		}
		out.Set(k, acc)
	}
	return out, nil
}

func evalSelectAndScatter(in ir.Instr, args []Tensor, out Tensor) (Tensor, error) {
	x, src := args[0], args[1]
	for k := range src.Type.Shape.Size() {
		best, bestAt := 0.0, -1
		for _, p := range windowPositions(in.Window, x.Type.Shape, Unravel(k, src.Type.Shape)) {
			if p < 0 {
				continue
			}
			v := x.At(p)
			if bestAt < 0 || (in.Compare == ir.CmpGE && v > best) || (in.Compare == ir.CmpLE && v < best) {
				best, bestAt = v, p
			}
		}
		if bestAt >= 0 {
			out.Set(bestAt, out.At(bestAt)+src.At(k))
		}
	}
	return out, nil
}

func evalArgReduce(in ir.Instr, args []Tensor, out Tensor) (Tensor, error) {
	x := args[0]
	ax := in.Axes[0]
	for k := range out.Type.Shape.Size() {
		o := Unravel(k, out.Type.Shape)
		idx := append(append(slices.Clone(o[:ax]), 0), o[ax:]...)
		best, bestI, at := 0.0, int64(0), -1
		for j := range x.Type.Shape[ax] {
			idx[ax] = j
			if x.I != nil { // integers as they are: int64 past 2^53 has no float64
				v := x.I[Ravel(idx, x.Type.Shape)]
				if at < 0 || (in.Reduce == ir.ReduceMax && v > bestI) || (in.Reduce == ir.ReduceMin && v < bestI) {
					bestI, at = v, j
				}
				continue
			}
			v := x.At(Ravel(idx, x.Type.Shape))
			// NaN counts as both the max and the min: the first NaN wins.
			switch {
			case at < 0, math.IsNaN(v) && !math.IsNaN(best):
				best, at = v, j
			case math.IsNaN(best):
			case (in.Reduce == ir.ReduceMax && v > best) || (in.Reduce == ir.ReduceMin && v < best):
				best, at = v, j
			}
		}
		out.I[k] = int64(at)
	}
	return out, nil
}

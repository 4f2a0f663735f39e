package eval

import (
	"github.com/metalplug/metalplug/backend/ir"
)

// Sources and data movement: what each output element copies from where.

func init() {
	register(evalConstant, ir.OpConstant)
	register(evalIota, ir.OpIota)
	register(evalBroadcastInDim, ir.OpBroadcastInDim)
	register(evalReshape, ir.OpReshape)
	register(evalTranspose, ir.OpTranspose)
	register(evalSlice, ir.OpSlice)
	register(evalConcat, ir.OpConcat)
	register(evalPad, ir.OpPad)
	register(evalReverse, ir.OpReverse)
}

func evalConstant(in ir.Instr, _ []Tensor, _ Tensor) (Tensor, error) {
	return decodeLiteral(in.Type, in.Literal), nil
}

func evalIota(in ir.Instr, _ []Tensor, out Tensor) (Tensor, error) {
	for k := range out.Type.Shape.Size() {
		out.Set(k, float64(Unravel(k, out.Type.Shape)[in.Axes[0]]))
	}
	return out, nil
}

func evalBroadcastInDim(in ir.Instr, args []Tensor, out Tensor) (Tensor, error) {
	x := args[0]
	for k := range out.Type.Shape.Size() {
		idx := Unravel(k, out.Type.Shape)
		src := make([]int, len(in.Axes))
		for i, d := range in.Axes {
			if x.Type.Shape[i] != 1 {
				src[i] = idx[d]
			}
		}
		copyElem(out, k, x, Ravel(src, x.Type.Shape))
	}
	return out, nil
}

// evalReshape shares the operand's elements: row-major order is unchanged.
func evalReshape(_ ir.Instr, args []Tensor, out Tensor) (Tensor, error) {
	out.F, out.I, out.C = args[0].F, args[0].I, args[0].C
	return out, nil
}

func evalTranspose(in ir.Instr, args []Tensor, out Tensor) (Tensor, error) {
	x := args[0]
	for k := range out.Type.Shape.Size() {
		idx := Unravel(k, out.Type.Shape)
		src := make([]int, len(idx))
		for i, p := range in.Axes {
			src[p] = idx[i]
		}
		copyElem(out, k, x, Ravel(src, x.Type.Shape))
	}
	return out, nil
}

func evalSlice(in ir.Instr, args []Tensor, out Tensor) (Tensor, error) {
	x := args[0]
	for k := range out.Type.Shape.Size() {
		idx := Unravel(k, out.Type.Shape)
		for d := range idx {
			idx[d] = in.Slice.Start[d] + idx[d]*in.Slice.Strides[d]
		}
		copyElem(out, k, x, Ravel(idx, x.Type.Shape))
	}
	return out, nil
}

func evalConcat(in ir.Instr, args []Tensor, out Tensor) (Tensor, error) {
	ax := in.Axes[0]
	for k := range out.Type.Shape.Size() {
		idx := Unravel(k, out.Type.Shape)
		j := idx[ax]
		for _, x := range args {
			if j < x.Type.Shape[ax] {
				idx[ax] = j
				copyElem(out, k, x, Ravel(idx, x.Type.Shape))
				break
			}
			j -= x.Type.Shape[ax]
		}
	}
	return out, nil
}

func evalPad(in ir.Instr, args []Tensor, out Tensor) (Tensor, error) {
	x, pv := args[0], args[1]
	for k := range out.Type.Shape.Size() {
		idx := Unravel(k, out.Type.Shape)
		src := make([]int, len(idx))
		ok := true
		for d := range idx {
			j := idx[d] - in.Pad.Low[d]
			step := in.Pad.Interior[d] + 1
			if j < 0 || j%step != 0 || j/step >= x.Type.Shape[d] {
				ok = false
				break
			}
			src[d] = j / step
		}
		if ok {
			copyElem(out, k, x, Ravel(src, x.Type.Shape))
		} else {
			copyElem(out, k, pv, 0)
		}
	}
	return out, nil
}

func evalReverse(in ir.Instr, args []Tensor, out Tensor) (Tensor, error) {
	x := args[0]
	for k := range out.Type.Shape.Size() {
		idx := Unravel(k, out.Type.Shape)
		for _, d := range in.Axes {
			idx[d] = out.Type.Shape[d] - 1 - idx[d]
		}
		copyElem(out, k, x, Ravel(idx, x.Type.Shape))
	}
	return out, nil
}

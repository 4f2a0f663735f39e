package eval

import (
	"fmt"

	"github.com/metalplug/metalplug/backend/ir"
)

// The ops with an arbitrary body run it on scalars, one call per element,
// in row-major order.

// scalarOf is element k of t as a scalar tensor.
func scalarOf(t Tensor, k int) Tensor {
	s := New(ir.TensorType{DType: t.Type.DType})
	copyElem(s, 0, t, k)
	return s
}

// scatterRegion applies the update body for each update element, in
// row-major order, to the operands' elements it lands on.
func scatterRegion(in ir.Instr, ins []Tensor) ([]Tensor, error) {
	n := len(ins) / 2
	ops, ind, upd := ins[:n], ins[n], ins[n+1:]
	outs := make([]Tensor, n)
	for i, x := range ops {
		outs[i] = New(x.Type)
		for k := range x.Type.Shape.Size() {
			copyElem(outs[i], k, x, k)
		}
	}
	args := make([]Tensor, 2*n)
	for k, p := range scatterTargets(in.Scatter, ops[0].Type.Shape, ind, upd[0].Type.Shape) {
		if p < 0 {
			continue
		}
		for i := range n {
			args[i], args[n+i] = scalarOf(outs[i], p), scalarOf(upd[i], k)
		}
		r, err := Run(in.Regions[0], args)
		if err != nil {
			return nil, fmt.Errorf("update body: %w", err)
		}
		for i := range n {
			copyElem(outs[i], p, r[i], 0)
		}
	}
	return outs, nil
}

// reduceWindowRegion folds each window's positions, in row-major order and
// padding positions as the inits, into accumulators that start at the
// inits.
func reduceWindowRegion(in ir.Instr, ins []Tensor) ([]Tensor, error) {
	n := len(ins) / 2
	xs, inits := ins[:n], ins[n:]
	outs := make([]Tensor, n)
	for i := range outs {
		outs[i] = New(in.Tuple[i])
	}
	args := make([]Tensor, 2*n)
	for k := range outs[0].Type.Shape.Size() {
		acc := make([]Tensor, n)
		for i := range n {
			acc[i] = scalarOf(inits[i], 0)
		}
		for _, p := range windowPositions(in.Window, xs[0].Type.Shape, Unravel(k, outs[0].Type.Shape)) {
			for i := range n {
				args[i] = acc[i]
				if p < 0 {
					args[n+i] = scalarOf(inits[i], 0)
				} else {
					args[n+i] = scalarOf(xs[i], p)
				}
			}
			var err error
			if acc, err = Run(in.Regions[0], args); err != nil {
				return nil, fmt.Errorf("body: %w", err)
			}
		}
		for i := range n {
			copyElem(outs[i], k, acc[i], 0)
		}
	}
	return outs, nil
}

// selectAndScatterRegion picks each window's position with the select
// body (the first position inside the operand to start, then each later one
// the select does not keep the pick over) and folds the source element into
// the result there with the scatter body.
func selectAndScatterRegion(in ir.Instr, ins []Tensor) ([]Tensor, error) {
	x, src, init := ins[0], ins[1], ins[2]
	out := New(in.Tuple[0])
	for k := range out.Type.Shape.Size() {
		copyElem(out, k, init, 0)
	}
	for k := range src.Type.Shape.Size() {
		at := -1
		for _, p := range windowPositions(in.Window, x.Type.Shape, Unravel(k, src.Type.Shape)) {
			if p < 0 {
				continue
			}
			if at < 0 {
				at = p
				continue
			}
			keep, err := Run(in.Regions[0], []Tensor{scalarOf(x, at), scalarOf(x, p)})
			if err != nil {
				return nil, fmt.Errorf("select body: %w", err)
			}
			if keep[0].I[0] == 0 {
				at = p
			}
		}
		if at < 0 {
			continue
		}
		r, err := Run(in.Regions[1], []Tensor{scalarOf(out, at), scalarOf(src, k)})
		if err != nil {
			return nil, fmt.Errorf("scatter body: %w", err)
		}
		copyElem(out, at, r[0], 0)
	}
	return []Tensor{out}, nil
}

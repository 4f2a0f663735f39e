package eval

// Control flow, and reductions and sorts by a body.

import (
	"fmt"

	"github.com/metalplug/metalplug/backend/ir"
)

// runRegions runs a region instruction (while, case, call) on its operands.
func runRegions(in ir.Instr, ins []Tensor) ([]Tensor, error) {
	switch in.Op {
	case ir.OpWhile:
		vals := ins
		for {
			c, err := Run(in.Regions[0], vals)
			if err != nil {
				return nil, fmt.Errorf("cond: %w", err)
			}
			if c[0].I[0] == 0 {
				return vals, nil
			}
			if vals, err = Run(in.Regions[1], vals); err != nil {
				return nil, fmt.Errorf("body: %w", err)
			}
		}
	case ir.OpCase:
		k := int(ins[0].I[0])
		if k < 0 || k >= len(in.Regions) {
			k = len(in.Regions) - 1 // StableHLO: out of range runs the last branch
		}
		return Run(in.Regions[k], ins[1:])
	case ir.OpCall:
		return Run(in.Regions[0], ins)
	case ir.OpReduceRegion:
		return reduceRegion(in, ins)
	case ir.OpSortRegion:
		return sortRegion(in, ins)
	case ir.OpScatterRegion:
		return scatterRegion(in, ins)
	case ir.OpReduceWindowRegion:
		return reduceWindowRegion(in, ins)
	case ir.OpSelectAndScatterRegion:
		return selectAndScatterRegion(in, ins)
	}
	return nil, fmt.Errorf("Run: %v is not supported", in.Op)
}

// reduceRegion folds each operand element, in row-major order, into the
// accumulators of its output element with the body.
func reduceRegion(in ir.Instr, ins []Tensor) ([]Tensor, error) {
	n := len(ins) / 2
	xs, inits := ins[:n], ins[n:]
	outs := make([]Tensor, n)
	for i := range outs {
		outs[i] = New(in.Tuple[i])
		for k := range outs[i].Type.Shape.Size() {
			copyElem(outs[i], k, inits[i], 0)
		}
	}
	reduced := make([]bool, xs[0].Type.Shape.Rank())
	for _, a := range in.Axes {
		reduced[a] = true
	}
	args := make([]Tensor, 2*n)
	for k := range xs[0].Type.Shape.Size() {
		idx := Unravel(k, xs[0].Type.Shape)
		var o []int
		for d, v := range idx {
			if !reduced[d] {
				o = append(o, v)
			}
		}
		ok := Ravel(o, outs[0].Type.Shape)
		for i := range n {
			args[i] = New(ir.TensorType{DType: outs[i].Type.DType})
			copyElem(args[i], 0, outs[i], ok)
			args[n+i] = New(ir.TensorType{DType: xs[i].Type.DType})
			copyElem(args[n+i], 0, xs[i], k)
		}
		acc, err := Run(in.Regions[0], args)
		if err != nil {
			return nil, fmt.Errorf("body: %w", err)
		}
		for i := range n {
			copyElem(outs[i], ok, acc[i], 0)
		}
	}
	return outs, nil
}

// sortRegion sorts each line along Sort.Dim with a stable insertion sort
// that asks the comparator (slow, and plainly right).
func sortRegion(in ir.Instr, ins []Tensor) ([]Tensor, error) {
	shape, dim := ins[0].Type.Shape, in.Sort.Dim
	outs := make([]Tensor, len(ins))
	for i, x := range ins {
		outs[i] = New(x.Type)
	}
	n := shape[dim]
	args := make([]Tensor, 2*len(ins))
	for k := range shape.Size() {
		idx := Unravel(k, shape)
		if idx[dim] != 0 {
			continue // one line per start
		}
		line := make([]int, n) // element numbers of the line, in sorted order
		for j := range n {
			idx[dim] = j
			line[j] = Ravel(idx, shape)
		}
		var err error
		less := func(a, b int) bool {
			for i, x := range ins {
				args[2*i], args[2*i+1] = New(ir.TensorType{DType: x.Type.DType}), New(ir.TensorType{DType: x.Type.DType})
				copyElem(args[2*i], 0, x, a)
				copyElem(args[2*i+1], 0, x, b)
			}
			r, e := Run(in.Regions[0], args)
			if e != nil && err == nil {
				err = e
			}
			return e == nil && r[0].I[0] != 0
		}
		for j := 1; j < n; j++ { // insertion: stable
			for m := j; m > 0 && less(line[m], line[m-1]); m-- {
				line[m], line[m-1] = line[m-1], line[m]
			}
		}
		if err != nil {
			return nil, fmt.Errorf("comparator: %w", err)
		}
		for j, src := range line {
			idx[dim] = j
			dst := Ravel(idx, shape)
			for i, x := range ins {
				copyElem(outs[i], dst, x, src)
			}
		}
	}
	return outs, nil
}

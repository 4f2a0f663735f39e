package metal

import (
	"github.com/metalplug/metalplug/backend/ir"
)

// Region bodies (of reduce_window_region and scatter_region) are programs
// of scalars. The lowerings here read them in two ways: as a fixed form
// (a monoid, a choice between the operand and the update), which a
// primitive computes whatever the order, or as elementwise arithmetic,
// inlined over whole tensors where the order of application is the IR's.

// bodyReads is, for each result of body, which of its parameters it
// depends on.
func bodyReads(body *ir.Program) [][]bool {
	reads := make([][]bool, len(body.Instrs)) // per instruction
	for i, in := range body.Instrs {
		r := make([]bool, len(body.Params))
		if in.Op == ir.OpParameter {
			r[in.Param] = true
		}
		for _, a := range in.Args {
			for p, ok := range reads[a] {
				r[p] = r[p] || ok
			}
		}
		reads[i] = r
	}
	out := make([][]bool, len(body.Results))
	for j, v := range body.Results {
		out[j] = reads[v]
	}
	return out
}

// separable reports whether each result i of a body of 2n parameters
// (n accumulators or operands, then n elements or updates) reads
// parameters i and n+i only: the operands are then folded or scattered
// each on its own.
func separable(body *ir.Program, n int) bool {
	for i, r := range bodyReads(body) {
		for p, ok := range r {
			if ok && p != i && p != n+i {
				return false
			}
		}
	}
	return true
}

// monoidOf recognises result i of a body of 2n parameters as a fixed
// monoid of parameters i and n+i, in either order: sum, product, max, min,
// and on bool and and or (as max and min are there). Floats' max and min
// propagate NaN, as the IR's do.
func monoidOf(body *ir.Program, i, n int) (ir.ReduceKind, bool) {
	r := body.Instrs[body.Results[i]]
	if len(r.Args) != 2 {
		return 0, false
	}
	x, y := body.Instrs[r.Args[0]], body.Instrs[r.Args[1]]
	if x.Op != ir.OpParameter || y.Op != ir.OpParameter || x.Param == y.Param ||
		(x.Param != i && x.Param != n+i) || (y.Param != i && y.Param != n+i) {
		return 0, false
	}
	kinds := map[ir.Op]ir.ReduceKind{ir.OpAdd: ir.ReduceSum, ir.OpMul: ir.ReduceProd, ir.OpMax: ir.ReduceMax, ir.OpMin: ir.ReduceMin}
	if r.Type.DType == ir.Bool {
		kinds = map[ir.Op]ir.ReduceKind{ir.OpAnd: ir.ReduceAnd, ir.OpOr: ir.ReduceOr, ir.OpMin: ir.ReduceAnd, ir.OpMax: ir.ReduceOr}
	}
	k, ok := kinds[r.Op]
	return k, ok
}

// inlinable reports whether every instruction results want of body depend
// on is elementwise, so that the body can be applied to whole tensors; if
// not, it names the first that is not.
func inlinable(body *ir.Program, want []int) (ir.Op, bool) {
	need := bodyNeeds(body, want)
	for i, in := range body.Instrs {
		if need[i] && !elementwiseInBody(in) {
			return in.Op, false
		}
	}
	return 0, true
}

// bodyNeeds marks the instructions results want of body depend on.
func bodyNeeds(body *ir.Program, want []int) []bool {
	need := make([]bool, len(body.Instrs))
	var mark func(v int)
	mark = func(v int) {
		if need[v] {
			return
		}
		need[v] = true
		for _, a := range body.Instrs[v].Args {
			mark(int(a))
		}
	}
	for _, r := range want {
		mark(int(body.Results[r]))
	}
	return need
}

// elementwiseInBody: the ops a scalar body applies elementwise when its
// scalars become tensors (a broadcast or reshape of a scalar to a scalar
// is the identity).
func elementwiseInBody(in ir.Instr) bool {
	switch {
	case in.Op.IsUnary(), in.Op.IsBinary():
		return true
	}
	switch in.Op {
	case ir.OpParameter, ir.OpConstant, ir.OpCompare, ir.OpSelect, ir.OpConvert, ir.OpBitcastConvert,
		ir.OpReal, ir.OpImag, ir.OpComplex: // complex64 taken apart and put together, as the frontends compose its arithmetic
		return true
	case ir.OpBroadcastInDim, ir.OpReshape:
		return in.Type.Shape.Rank() == 0
	}
	return false
}

// inlineBody applies body elementwise to whole tensors of shape: params
// holds the values of the parameters that results want read (each of its
// parameter's dtype and of shape), and the results are those results'
// values. Each instruction is lowered as the program's own would be (half
// types rounded after each), so the body computes what the IR's
// interpreter does element by element. Callers check inlinable first.
func (l *lowering) inlineBody(body *ir.Program, params []val, shape ir.Shape, want []int) ([]val, error) {
	need := bodyNeeds(body, want)
	vals := make([]val, len(body.Instrs))
	for i, in := range body.Instrs {
		if !need[i] {
			continue
		}
		t := ir.TensorType{DType: in.Type.DType, Shape: shape.Clone()}
		switch in.Op {
		case ir.OpParameter:
			vals[i] = params[in.Param]
			continue
		case ir.OpConstant: // a scalar, broadcast
			c, err := lowerConstant(l, in, nil)
			if err != nil {
				return nil, err
			}
			vals[i] = val{t: l.broadcastTo(c, physShape(t)), typ: t}
			continue
		case ir.OpBroadcastInDim, ir.OpReshape: // of a scalar to a scalar
			vals[i] = vals[in.Args[0]]
			continue
		}
		args := make([]val, len(in.Args))
		for j, a := range in.Args {
			args[j] = vals[a]
		}
		wide := in
		wide.Type = t
		v, err := l.lowerInstr(wide, args)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	out := make([]val, len(want))
	for j, r := range want {
		out[j] = vals[body.Results[r]]
	}
	return out, nil
}

// isConstantOf reports whether value v of the program is a constant scalar
// holding x (an init that is a monoid's identity).
func (l *lowering) isConstantOf(v int, x float64) bool {
	in := l.p.Instrs[v]
	if in.Op != ir.OpConstant || in.Type.Shape.Rank() != 0 {
		return false
	}
	want, err := ir.EncodeScalar(in.Type.DType, x)
	return err == nil && string(want) == string(in.Literal)
}

package metal

import (
	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
	"github.com/metalplug/metalplug/backend/ir"
)

func init() { registerTupleLowering(lowerReduceWindowRegion, ir.OpReduceWindowRegion) }

// lowerReduceWindowRegion is reduce_window with a body, as jax writes its
// cumulative reductions (cumsum, cumprod, cummax, cummin, cumlogsumexp:
// reduce_window over the whole axis, padded by its length less one at the
// low end, or the high end for reverse) and windowed folds whose body or
// init no fixed reduce_window has. Each operand is folded on its own when
// each result of the body reads only its own accumulator and element; a
// body that mixes the operands (a windowed argmax, jax's
// select_and_gather_add for the tangent of a max pool) folds them all
// together, position by position.
//
// A cumulative reduction by a monoid is a scan (scanAlong), of any length.
// Any other window, and any other elementwise body, is unrolled as the
// fixed reduce_window is, one strided slice of the padded operand per
// window position, the body inlined between them in the IR's order, from
// the init: exact, whatever the body.
func lowerReduceWindowRegion(l *lowering, in ir.Instr, args []val) ([]val, error) {
	n := len(args) / 2
	body := in.Regions[0]
	parts := resultParts(in)
	if parts[0].empty {
		return parts, nil
	}
	if !separable(body, n) {
		// The results read each other's operands (a windowed argmax, jax's
		// select_and_gather_add): all of them fold together.
		all := make([]int, n)
		for i := range all {
			all[i] = i
			if args[i].typ.DType == ir.C64 {
				return nil, fallback(in.Op, "windowed folds of complex64")
			}
		}
		if op, ok := inlinable(body, all); !ok {
			return nil, fallback(in.Op, "a body with %v: only elementwise bodies are lowered", op)
		}
		rs, err := l.unrolledWindow(body, all, args[:n], args[n:], in.Window, in.Tuple)
		if err != nil {
			return nil, err
		}
		for i, r := range rs {
			parts[i].t = r
		}
		return parts, nil
	}
	for i := range n {
		x, init := args[i], args[n+i]
		t := x.typ
		if t.DType == ir.C64 {
			return nil, fallback(in.Op, "windowed folds of complex64")
		}
		axis, reverse, cumulative := cumulativeAxis(in.Window, t.Shape)
		if kind, ok := monoidOf(body, i, n); ok && cumulative && !x.empty && l.scanInit(kind, int(in.Args[n+i]), t.DType) {
			r, err := l.cumulative(x.t, init.t, t, kind, axis, reverse)
			if err != nil {
				return nil, err
			}
			parts[i].t = r
			continue
		}
		if op, ok := inlinable(body, []int{i}); !ok {
			return nil, fallback(in.Op, "a body with %v: only elementwise bodies are lowered", op)
		}
		r, err := l.unrolledWindow(body, []int{i}, args[:n], args[n:], in.Window, in.Tuple)
		if err != nil {
			return nil, err
		}
		parts[i].t = r[0]
	}
	return parts, nil
}

// cumulativeAxis recognises a cumulative window: along one axis the window
// is the whole axis (of two or more elements), padded by one less at the
// low end (or at the high end: reverse), and every other axis has windows
// of one element, stride 1 and no padding. Each output element then folds
// the elements up to its own (from it on, for reverse).
func cumulativeAxis(w *ir.WindowAttrs, shape ir.Shape) (axis int, reverse, ok bool) {
	axis = -1
	for d, n := range shape {
		if w.Strides[d] != 1 {
			return 0, false, false
		}
		pad := w.Padding[d]
		switch {
		case w.Dims[d] == 1 && pad == [2]int{}:
		case axis < 0 && n > 1 && w.Dims[d] == n && (pad == [2]int{n - 1, 0} || pad == [2]int{0, n - 1}):
			axis, reverse = d, pad[1] > 0
		default:
			return 0, false, false
		}
	}
	return axis, reverse, axis >= 0
}

// scanInit reports whether a scan of kind gives the fold from init: max,
// min, and and or fold the init in once, whatever it is, as repeating it
// changes nothing; a sum or product's init must be its identity (0 or 1),
// since the padding holds one copy of it per position the window hangs
// over the operand's end.
func (l *lowering) scanInit(kind ir.ReduceKind, init int, d ir.DType) bool {
	switch kind {
	case ir.ReduceSum:
		return l.isConstantOf(init, 0)
	case ir.ReduceProd:
		return l.isConstantOf(init, 1)
	}
	return d != ir.C64
}

// cumulative is the inclusive scan of x (of IR type t) by kind along axis,
// folded into init (the fold of the window's padding, by scanInit; none for
// a fixed reduce_window, whose padding is the identity), and rounded to t's
// half type. Sums use MPSGraph's cumulativeSum where its
// contract takes the type (narrow integers sum in int32 and wrap back),
// the rest scanAlong.
func (l *lowering) cumulative(x, init tensor, t ir.TensorType, kind ir.ReduceKind, axis int, reverse bool) (tensor, error) {
	d := t.DType
	if reverse {
		x = l.reverse(x, []int{axis})
	}
	combine, err := l.combiner(kind, d)
	if err != nil {
		return tensor{}, err
	}
	var s tensor
	switch {
	case kind == ir.ReduceSum && isNarrow(d):
		s = l.narrow(l.cumsum(l.cast(x, i32), axis), d)
	case kind == ir.ReduceSum && l.g.Accepts(gpu.OpCumulativeSum, x.DType):
		s = l.cumsum(x, axis)
	default:
		s = l.scanAlong(x, axis, t.Shape[axis], combine)
	}
	if reverse {
		s = l.reverse(s, []int{axis})
	}
	// The IR's fold starts from the init. Folding it in last is the same
	// for these monoids; a sum or product's identity changes nothing but a
	// float sum's -0, which 0 + -0 makes +0.
	switch {
	case kind == ir.ReduceSum && d.IsFloat() && !init.Valid():
		s = combine(l.scalar(0, s.DType), s)
	case init.Valid() && ((kind != ir.ReduceSum && kind != ir.ReduceProd) || (kind == ir.ReduceSum && d.IsFloat())):
		s = combine(init, s)
	}
	return l.roundHalf(s, d)
}

// combiner is kind's elementwise op on physical values of dtype d: floats'
// max and min propagate NaN; and and or on bool's 0/1 bytes are min and max.
func (l *lowering) combiner(kind ir.ReduceKind, d ir.DType) (func(a, b tensor) tensor, error) {
	switch kind {
	case ir.ReduceSum:
		return l.add, nil
	case ir.ReduceProd:
		return l.mul, nil
	case ir.ReduceMax, ir.ReduceOr:
		if d.IsFloat() {
			return l.maxNaN, nil
		}
		return l.maximum, nil
	case ir.ReduceMin, ir.ReduceAnd:
		if d.IsFloat() {
			return l.minNaN, nil
		}
		return l.minimum, nil
	}
	return nil, fallback(ir.OpReduceWindowRegion, "reduction %v", kind)
}

// scanAlong is the inclusive scan of x along axis (of length n) by an
// associative op, in ceil(log2 n) steps: at step s each element from s on
// takes in the one s before it (Hillis and Steele's scan). Only slices,
// concatenation and the op, so every release runs it; the earlier operand
// comes first.
func (l *lowering) scanAlong(x tensor, axis, n int, combine func(a, b tensor) tensor) tensor {
	r := x.Rank()
	part := func(x tensor, from, to int) tensor {
		starts, ends := make([]int, r), append([]int(nil), x.Shape...)
		starts[axis], ends[axis] = from, to
		return l.slice(x, starts, ends, ones(r))
	}
	for s := 1; s < n; s *= 2 {
		x = l.concat([]tensor{part(x, 0, s), combine(part(x, 0, n-s), part(x, s, n))}, axis)
	}
	return x
}

// unrolledWindow folds the windows of the operands idx by body, together,
// unrolled over the window's positions as lowerReduceWindow does: the
// padding holds each operand's init, the fold starts from the inits and
// takes the positions in row-major order, each by the body inlined. One
// operand at a time where the body folds each on its own; all of them at
// once where its results read each other's (a windowed argmax, jax's
// select_and_gather_add). Results are in idx's order.
func (l *lowering) unrolledWindow(body *ir.Program, idx []int, xs, inits []val, win *ir.WindowAttrs, rts []ir.TensorType) ([]tensor, error) {
	n := len(xs)
	t := xs[idx[0]].typ // every operand has the same shape
	params := make([]val, 2*n)
	for _, i := range idx {
		params[i] = val{t: l.broadcastTo(inits[i].t, physShape(rts[i])), typ: rts[i]}
	}
	fold := func(at func(i int) tensor) error {
		for _, i := range idx {
			params[n+i] = val{t: at(i), typ: rts[i]}
		}
		r, err := l.inlineBody(body, params, rts[idx[0]].Shape, idx)
		if err != nil {
			return err
		}
		for k, i := range idx {
			params[i] = r[k]
		}
		return nil
	}
	out := func() []tensor {
		ts := make([]tensor, len(idx))
		for k, i := range idx {
			ts[k] = params[i].t
		}
		return ts
	}
	if t.Shape.Rank() == 0 { // one window of one element
		err := fold(func(i int) tensor { return xs[i].t })
		return out(), err
	}
	w := newWindow(win, t.Shape)
	if w.count > maxWindowElements {
		return nil, fallback(ir.OpReduceWindowRegion, "a window of %d elements that is not a cumulative fold by a monoid (window positions are unrolled)", w.count)
	}
	padded := make([]tensor, n)
	var inside tensor
	for _, i := range idx {
		x, init := xs[i], inits[i]
		switch {
		case x.empty: // every position is padding
			padded[i] = l.broadcastTo(init.t, w.padded)
		case isZero(w.lo) && isZero(w.hi):
			padded[i] = x.t
		default:
			// The padding holds the init, a value of the program: a zero
			// pad, then the init selected into it.
			if !inside.Valid() {
				inside = l.pred(l.padGeneral(l.full(1, w.in, gpu.UInt8), w.in, w.lo, w.hi, make([]int, len(w.in)), 0))
			}
			padded[i] = l.sel(inside, l.padGeneral(x.t, w.in, w.lo, w.hi, make([]int, len(w.in)), 0), init.t)
		}
	}
	var err error
	w.offsets(func(_ int, o []int) {
		if err == nil {
			err = fold(func(i int) tensor { return l.at(padded[i], w, o) })
		}
	})
	return out(), err
}

func isZero(xs []int) bool {
	for _, x := range xs {
		if x != 0 {
			return false
		}
	}
	return true
}

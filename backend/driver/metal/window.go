package metal

import (
	"github.com/metalplug/metalplug/backend/driver/metal/gpu"

	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	registerLowering(lowerReduceWindow, ir.OpReduceWindow)
	registerLowering(lowerSelectAndScatter, ir.OpSelectAndScatter)
}

// maxWindowElements bounds the unrolled window positions; a larger window
// runs on the CPU.
const maxWindowElements = 1024

// window is a WindowAttrs with defaults filled, over an operand shape.
type window struct {
	dims, strides []int
	lo, hi        []int
	in, padded    []int // operand shape, and with padding
	out           []int // one entry per window position
	count         int   // window elements
}

func newWindow(w *ir.WindowAttrs, shape ir.Shape) window {
	r := shape.Rank()
	wn := window{dims: w.Dims, strides: w.Strides, in: []int(shape.Clone())}
	if wn.strides == nil {
		wn.strides = ones(r)
	}
	wn.lo, wn.hi = make([]int, r), make([]int, r)
	for i := range r {
		if w.Padding != nil {
			wn.lo[i], wn.hi[i] = w.Padding[i][0], w.Padding[i][1]
		}
	}
	wn.count = 1
	for i := range r {
		p := shape[i] + wn.lo[i] + wn.hi[i]
		wn.padded = append(wn.padded, p)
		o := 0
		if p >= wn.dims[i] {
			o = (p-wn.dims[i])/wn.strides[i] + 1
		}
		wn.out = append(wn.out, o)
		wn.count *= wn.dims[i]
	}
	return wn
}

// offsets calls fn with every position inside the window, row-major, and its
// ordinal.
func (w window) offsets(fn func(k int, o []int)) {
	o := make([]int, len(w.dims))
	for k := range w.count {
		fn(k, o)
		for d := len(o) - 1; d >= 0; d-- {
			if o[d]++; o[d] < w.dims[d] {
				break
			}
			o[d] = 0
		}
	}
}

// at is the strided slice of a padded tensor that window position o sees at
// every output position.
func (l *lowering) at(xp tensor, w window, o []int) tensor {
	ends := make([]int, len(o))
	for d := range o {
		ends[d] = o[d] + (w.out[d]-1)*w.strides[d] + 1
	}
	return l.slice(xp, o, ends, w.strides)
}

// padWith pads x (of IR type t) with the identity of the reduction. Pad
// takes its value as a double, which holds every identity but int64's
// highest value (2^63 - 1 rounds to 2^63, out of range: MPSGraph's
// conversion is undefined there): int64 windows pad with 0 and select the
// exact identity into the padding.
func (l *lowering) padWith(x tensor, t ir.TensorType, lo, hi []int, k ir.ReduceKind) tensor {
	shape, interior := physShape(t), make([]int, len(lo))
	if t.DType != ir.I64 || (k != ir.ReduceMax && k != ir.ReduceMin) {
		return l.padGeneral(x, shape, lo, hi, interior, reduceIdentity(k, t.DType))
	}
	xp := l.padGeneral(x, shape, lo, hi, interior, 0)
	inside := l.padGeneral(l.full(1, shape, gpu.UInt8), shape, lo, hi, interior, 0)
	return l.sel(l.ne(inside, l.scalar(0, gpu.UInt8)), xp, l.extremeConst(t.DType, k == ir.ReduceMin))
}

// lowerReduceWindow folds each window by unrolling the window's positions:
// one strided slice of the padded operand per position, combined
// elementwise. Windows are small in practice (pooling); MPSGraph's pooling
// ops cover only 2-D and 4-D float windows with their own padding rules.
func lowerReduceWindow(l *lowering, in ir.Instr, args []val) (tensor, error) {
	t := args[0].typ
	if axis, reverse, ok := cumulativeAxis(in.Window, t.Shape); ok && t.DType != ir.C64 {
		// jax's cumsum, cummax and cummin: a scan, of any length.
		return l.cumulative(args[0].t, tensor{}, t, in.Reduce, axis, reverse)
	}
	w := newWindow(in.Window, t.Shape)
	if w.count > maxWindowElements {
		return tensor{}, fallback(in.Op, "a window of %d elements", w.count)
	}
	if t.Shape.Rank() == 0 {
		return l.identity(args[0].t), nil
	}
	xp := l.padWith(args[0].t, t, w.lo, w.hi, in.Reduce)
	var acc tensor
	var err error
	w.offsets(func(k int, o []int) {
		v := l.at(xp, w, o)
		if k == 0 {
			acc = v
			return
		}
		switch in.Reduce {
		case ir.ReduceSum:
			acc = l.add(acc, v)
		case ir.ReduceMax:
			if t.DType.IsFloat() {
				acc = l.maxNaN(acc, v)
			} else {
				acc = l.maximum(acc, v)
			}
		case ir.ReduceMin:
			if t.DType.IsFloat() {
				acc = l.minNaN(acc, v)
			} else {
				acc = l.minimum(acc, v)
			}
		default:
			err = fallback(in.Op, "reduction %v in a window", in.Reduce)
		}
	})
	return acc, err
}

// lowerSelectAndScatter is max pooling's gradient, composed so that its
// choice is exactly XLA's (and the host driver's): in each window, clipped to
// the operand so that padding never wins, the first real element is the
// choice and a later element e replaces it unless select(choice, e) holds
// (choice >= e for GE, <= for LE). MPSGraph's pooling gradients pick their
// own positions among ties. The source element of each window is then added
// at its choice: for every window position, the sources whose choice it is
// are spread back onto the operand's grid by an interior pad (the inverse of
// the strided slice), and the spreads are summed.
func lowerSelectAndScatter(l *lowering, in ir.Instr, args []val) (tensor, error) {
	t := args[0].typ
	w := newWindow(in.Window, t.Shape)
	if w.count > maxWindowElements {
		return tensor{}, fallback(in.Op, "a window of %d elements", w.count)
	}
	r := t.Shape.Rank()
	if r == 0 {
		return l.identity(args[1].t), nil
	}
	zeros := make([]int, r)
	xp := l.padGeneral(args[0].t, w.in, w.lo, w.hi, zeros, 0)
	valid := l.padGeneral(l.full(1, w.in, gpu.UInt8), w.in, w.lo, w.hi, zeros, 0)
	var best, idx, has tensor
	w.offsets(func(k int, o []int) {
		v := l.at(xp, w, o)
		m := l.pred(l.at(valid, w, o))
		kk := l.scalar(float64(k), i32)
		if k == 0 {
			best, has = v, m
			idx = l.sel(m, l.full(0, w.out, i32), l.full(-1, w.out, i32))
			return
		}
		var keep tensor // select(choice, e)
		if in.Compare == ir.CmpGE {
			keep = l.ge(best, v)
		} else {
			keep = l.le(best, v)
		}
		replace := l.land(m, l.lor(l.lnot(has), l.lnot(keep)))
		best = l.sel(replace, v, best)
		idx = l.sel(replace, l.broadcastTo(kk, w.out), idx)
		has = l.lor(has, m)
	})
	dt := mustPhys(t.DType)
	src := args[1].t
	zero := l.full(0, w.out, dt)
	var acc tensor
	w.offsets(func(k int, o []int) {
		mine := l.sel(l.eq(idx, l.scalar(float64(k), i32)), src, zero)
		low, high, interior := make([]int, r), make([]int, r), make([]int, r)
		for d := range r {
			last := o[d] + (w.out[d]-1)*w.strides[d]
			low[d], high[d], interior[d] = o[d], w.padded[d]-1-last, w.strides[d]-1
		}
		spread := l.padGeneral(mine, w.out, low, high, interior, 0)
		if k == 0 {
			acc = spread
		} else {
			acc = l.add(acc, spread)
		}
	})
	ends := make([]int, r)
	for d := range r {
		ends[d] = w.lo[d] + w.in[d]
	}
	return l.slice(acc, w.lo, ends, ones(r)), nil
}

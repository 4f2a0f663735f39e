package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

// Sliding windows taken apart, one window position ("tap") at a time. Each
// tap is a strided slice of the padded operand holding, for every window,
// the element at that position of the window; which of those lie in the
// padding, and where in the operand the others are, follows from the
// geometry alone and is a constant. Ops whose window fold is not a monoid
// (an argmax with TensorFlow's tie-breaking, a morphological dilation, the
// gradients that route to a window's chosen element) fold the taps in
// row-major window order with elementwise ops; the patch extractions
// concatenate them.

// windowGeom is a window over the spatial dims of a channels-last operand
// [N, S..., C].
type windowGeom struct {
	in, win, strides, rates []int
	pad                     [][2]int
	out                     []int
}

// newGeom fills in the output sizes; rates nil means 1.
func newGeom(in, win, strides, rates []int, pad [][2]int) windowGeom {
	if rates == nil {
		rates = filled(len(in), 1)
	}
	g := windowGeom{in: in, win: win, strides: strides, rates: rates, pad: pad, out: make([]int, len(in))}
	for i := range in {
		g.out[i] = windowOut(in[i], pad[i], win[i], strides[i], rates[i])
	}
	return g
}

// tap is one window position: the operand's element at that position of
// every window ([N, O..., C]), which windows reach a real element there
// (nil if all do), and that element's row-major spatial index in the
// operand, per window (row-major over O).
type tap struct {
	v     ir.Value
	valid []bool
	flat  []int64
}

// taps slices x, [N, S..., C] with S = g.in, into the window's positions in
// row-major order, padding with the scalar fill.
func (g windowGeom) taps(b *ir.Builder, x, fill ir.Value) []tap {
	ns := len(g.in)
	xs := b.Type(x).Shape
	low, high := make([]int, ns+2), make([]int, ns+2)
	for i := range ns {
		low[1+i] = g.pad[i][0]
		need := 0
		if g.out[i] > 0 {
			need = (g.out[i]-1)*g.strides[i] + (g.win[i]-1)*g.rates[i] + 1
		}
		high[1+i] = max(0, need-g.in[i]-g.pad[i][0])
	}
	p := b.Pad(x, fill, low, high, make([]int, ns+2))
	nOut := 1
	for _, o := range g.out {
		nOut *= o
	}
	nTaps := 1
	for _, w := range g.win {
		nTaps *= w
	}
	var out []tap
	k := make([]int, ns)
	for range nTaps {
		start, limit, strides := make([]int, ns+2), xs.Clone(), make([]int, ns+2)
		strides[0], strides[ns+1] = 1, 1
		for i := range ns {
			start[1+i] = k[i] * g.rates[i]
			limit[1+i] = start[1+i] + max(0, (g.out[i]-1)*g.strides[i]+1)
			strides[1+i] = g.strides[i]
		}
		t := tap{v: b.Slice(p, start, limit, strides), flat: make([]int64, nOut)}
		valid := make([]bool, nOut)
		all := true
		o := make([]int, ns)
		for j := range nOut {
			in, flat := true, 0
			for i := range ns {
				y := o[i]*g.strides[i] + k[i]*g.rates[i] - g.pad[i][0]
				in = in && y >= 0 && y < g.in[i]
				flat = flat*g.in[i] + y
			}
			valid[j], t.flat[j] = in, int64(flat)
			all = all && in
			for i := ns - 1; i >= 0; i-- {
				if o[i]++; o[i] < g.out[i] {
					break
				}
				o[i] = 0
			}
		}
		if !all {
			t.valid = valid
		}
		out = append(out, t)
		for i := ns - 1; i >= 0; i-- {
			if k[i]++; k[i] < g.win[i] {
				break
			}
			k[i] = 0
		}
	}
	return out
}

// boolConstant is a bool tensor of the given shape.
func boolConstant(b *ir.Builder, shape ir.Shape, v []bool) ir.Value {
	buf := make([]byte, len(v))
	for i, x := range v {
		if x {
			buf[i] = 1
		}
	}
	return b.Constant(ir.TensorType{DType: ir.Bool, Shape: shape}, buf)
}

// spread broadcasts a constant over the windows ([O...]) to [N, O..., C].
func spread(b *ir.Builder, v ir.Value, full ir.Shape) ir.Value {
	return b.BroadcastInDim(v, full, rangeInts(1, full.Rank()-1))
}

// validMask is where tap t reaches a real element, shaped as full
// ([N, O..., C]); ok is false when it always does.
func (g windowGeom) validMask(b *ir.Builder, t tap, full ir.Shape) (ir.Value, bool) {
	if t.valid == nil {
		return 0, false
	}
	return spread(b, boolConstant(b, ir.Shape(g.out).Clone(), t.valid), full), true
}

// flatIndex is tap t's spatial index of the operand, as int64 shaped full.
func (g windowGeom) flatIndex(b *ir.Builder, t tap, full ir.Shape) ir.Value {
	return spread(b, i64Constant(b, ir.Shape(g.out).Clone(), t.flat), full)
}

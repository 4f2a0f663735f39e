package lower

import (
	"math"

	"github.com/metalplug/metalplug/backend/ir"
)

// Fake quantization (fake_quant_ops.cc, fake_quant_ops_functor.h) and
// quantize-and-dequantize (quantize_and_dequantize_op.cc and .h), float32
// only, each step in the CPU's order and float32 rounding so that the
// results agree bit for bit: the range is nudged so that 0 is exactly
// representable, inputs are clamped to it, scaled to the integer grid,
// rounded and scaled back.
//
// Every range is data here (a program cannot branch on it), so the
// CPU's scalar branches (which zero point, which side of the range sets
// the scale) are selects over the range tensors; the ranges given as
// attributes (FakeQuantWithMinMaxArgs) are constants of the same program.

func init() {
	fq := []AttrSpec{{Name: "num_bits", Kind: AttrInt, Optional: true}, {Name: "narrow_range", Kind: AttrBool, Optional: true}}
	fqArgs := append([]AttrSpec{{Name: "min", Kind: AttrFloat, Optional: true}, {Name: "max", Kind: AttrFloat, Optional: true}}, fq...)
	reg := func(op string, inputs []string, attrs []AttrSpec, f func(c *Call) error) {
		register(Kernel{Op: op, Inputs: inputs, Attrs: attrs, Lower: f})
	}
	reg("FakeQuantWithMinMaxArgs", []string{"inputs"}, fqArgs, lowerFakeQuantArgs(false))
	reg("FakeQuantWithMinMaxArgsGradient", []string{"gradients", "inputs"}, fqArgs, lowerFakeQuantArgs(true))
	reg("FakeQuantWithMinMaxVars", []string{"inputs", "min", "max"}, fq, lowerFakeQuantVars(false, false))
	reg("FakeQuantWithMinMaxVarsGradient", []string{"gradients", "inputs", "min", "max"}, fq, lowerFakeQuantVars(false, true))
	reg("FakeQuantWithMinMaxVarsPerChannel", []string{"inputs", "min", "max"}, fq, lowerFakeQuantVars(true, false))
	reg("FakeQuantWithMinMaxVarsPerChannelGradient", []string{"gradients", "inputs", "min", "max"}, fq, lowerFakeQuantVars(true, true))

	qdq := []AttrSpec{{Name: "signed_input", Kind: AttrBool, Optional: true}, {Name: "range_given", Kind: AttrBool, Optional: true},
		{Name: "narrow_range", Kind: AttrBool, Optional: true}, {Name: "axis", Kind: AttrInt, Optional: true}}
	withBits := append([]AttrSpec{{Name: "num_bits", Kind: AttrInt, Optional: true}, {Name: "round_mode", Kind: AttrString, Optional: true}}, qdq...)
	f32 := T([]ir.DType{ir.F32})
	register(Kernel{Op: "QuantizeAndDequantizeV2", Constraints: f32, Inputs: []string{"input", "input_min", "input_max"},
		Attrs: withBits, Lower: lowerQDQ(false)})
	register(Kernel{Op: "QuantizeAndDequantizeV4", Constraints: f32, Inputs: []string{"input", "input_min", "input_max"},
		Attrs: withBits, Lower: lowerQDQ(false)})
	// V3's num_bits is an int32 scalar input, in host memory as on
	// TensorFlow's GPU; its rounding is always half to even.
	register(Kernel{Op: "QuantizeAndDequantizeV3", Constraints: f32, Inputs: []string{"input", "input_min", "input_max", "num_bits"},
		HostInputs: []string{"num_bits"}, Attrs: qdq, Lower: lowerQDQ(true)})
	register(Kernel{Op: "QuantizeAndDequantizeV4Grad", Constraints: f32, Inputs: []string{"gradients", "input", "input_min", "input_max"},
		Attrs: []AttrSpec{{Name: "axis", Kind: AttrInt, Optional: true}}, Lower: lowerQDQGrad})
}

// fakeQuantBits reads num_bits and narrow_range: the integer grid is
// [narrow_range ? 1 : 0, 2^num_bits - 1], num_bits in [2, 16].
func fakeQuantBits(c *Call) (qmin, qmax float64, err error) {
	bits := c.Attrs.Int("num_bits", 8)
	if bits < 2 || bits > 16 {
		return 0, 0, c.Errorf("num_bits must be between 2 and 16, inclusive, got %d", bits)
	}
	if c.Attrs.Bool("narrow_range") {
		qmin = 1
	}
	return qmin, float64(int64(1)<<bits - 1), nil
}

// nudged is a fake-quantization range after Nudge: its ends and its step.
type nudged struct{ min, max, scale ir.Value }

// nudge is fake_quant_ops_functor.h's Nudge, elementwise over min and max
// (float32 of one shape): scale = (max - min) / (qmax - qmin); the zero point
// qmin - min/scale clamped to [qmin, qmax] and rounded half away from zero;
// the ends (qmin - zp) * scale and (qmax - zp) * scale.
func nudge(b *ir.Builder, min, max ir.Value, qmin, qmax float64) nudged {
	qlo, qhi := like(b, min, qmin), like(b, min, qmax)
	scale := b.Binary(ir.OpDiv, b.Binary(ir.OpSub, max, min), like(b, min, qmax-qmin))
	zp := b.Binary(ir.OpSub, qlo, b.Binary(ir.OpDiv, min, scale))
	zp = b.Select(b.Compare(ir.CmpLT, zp, qlo), qlo, b.Select(b.Compare(ir.CmpGT, zp, qhi), qhi, roundHalfAway(b, zp)))
	return nudged{
		min:   b.Binary(ir.OpMul, b.Binary(ir.OpSub, qlo, zp), scale),
		max:   b.Binary(ir.OpMul, b.Binary(ir.OpSub, qhi, zp), scale),
		scale: scale,
	}
}

// fakeQuant is floor((clamp(x) - min) op scale + 0.5) * scale + min, where
// op multiplies by 1/scale (the Args functor) or divides by scale (the Vars
// functors); n's values have x's shape.
func fakeQuant(b *ir.Builder, x ir.Value, n nudged, reciprocal bool) ir.Value {
	clamped := b.Binary(ir.OpMax, b.Binary(ir.OpMin, x, n.max), n.min)
	shifted := b.Binary(ir.OpSub, clamped, n.min)
	var q ir.Value
	if reciprocal {
		q = b.Binary(ir.OpMul, shifted, b.Binary(ir.OpDiv, like(b, x, 1), n.scale))
	} else {
		q = b.Binary(ir.OpDiv, shifted, n.scale)
	}
	q = b.Unary(ir.OpFloor, b.Binary(ir.OpAdd, q, like(b, x, 0.5)))
	return b.Binary(ir.OpAdd, b.Binary(ir.OpMul, q, n.scale), n.min)
}

// maskedBy is g * (pred ? 1 : 0), as the CPU multiplies (so NaN and
// infinite gradients outside the mask give NaN, and negative ones -0).
func maskedBy(b *ir.Builder, g, pred ir.Value) ir.Value {
	return b.Binary(ir.OpMul, g, b.Select(pred, like(b, g, 1), like(b, g, 0)))
}

// within is lo <= x <= hi.
func within(b *ir.Builder, x, lo, hi ir.Value) ir.Value {
	return b.Binary(ir.OpAnd, b.Compare(ir.CmpGE, x, lo), b.Compare(ir.CmpLE, x, hi))
}

func lowerFakeQuantArgs(grad bool) func(c *Call) error {
	return func(c *Call) error {
		n := 1
		if grad {
			n = 2
		}
		if err := c.arity(n); err != nil {
			return err
		}
		for i := range n {
			if c.Type(i).DType != ir.F32 {
				return c.Errorf("inputs must be float32, got %s", c.Inputs())
			}
		}
		x := c.In[n-1]
		if grad && !c.Type(0).Shape.Equal(c.Type(1).Shape) {
			return c.Errorf("gradients and inputs must have one shape, got %s", c.Inputs())
		}
		lo, hi := c.Attrs.Float("min", -6), c.Attrs.Float("max", 6)
		if !(lo < hi) {
			return c.Errorf("min has to be smaller than max, was: %v >= %v", lo, hi)
		}
		qmin, qmax, err := fakeQuantBits(c)
		if err != nil {
			return err
		}
		b := c.B
		nd := nudge(b, like(b, x, float64(lo)), like(b, x, float64(hi)), qmin, qmax)
		if grad {
			c.Out = []ir.Value{maskedBy(b, c.In[0], within(b, x, nd.min, nd.max))}
			return nil
		}
		c.Out = []ir.Value{fakeQuant(b, x, nd, true)}
		return nil
	}
}

// lowerFakeQuantVars lowers the Vars ops, whose min and max are scalars,
// or for the per-channel ops vectors over the innermost dim of the inputs.
// The gradients also give the gradients' sums below min and above max,
// over every element (per channel: over every element of the channel).
func lowerFakeQuantVars(perChannel, grad bool) func(c *Call) error {
	return func(c *Call) error {
		off := 0
		if grad {
			off = 1
		}
		if err := c.arity(3 + off); err != nil {
			return err
		}
		for i := range 3 + off {
			if c.Type(i).DType != ir.F32 {
				return c.Errorf("inputs must be float32, got %s", c.Inputs())
			}
		}
		t := c.Type(off)
		if grad && !c.Type(0).Shape.Equal(t.Shape) {
			return c.Errorf("gradients and inputs must have one shape, got %s", c.Inputs())
		}
		tmin, tmax := c.Type(off+1), c.Type(off+2)
		r := t.Shape.Rank()
		if perChannel {
			if r < 1 || r > 4 || tmin.Shape.Rank() != 1 || !tmin.Shape.Equal(tmax.Shape) || tmin.Shape[0] != t.Shape[r-1] {
				return c.Errorf("inputs must have rank 1 to 4 and min and max one value per channel (the innermost dim), got %s", c.Inputs())
			}
		} else if tmin.Shape.Rank() != 0 || tmax.Shape.Rank() != 0 {
			return c.Errorf("min and max must be scalars, got %s", c.Inputs())
		}
		qmin, qmax, err := fakeQuantBits(c)
		if err != nil {
			return err
		}
		b := c.B
		x := c.In[off]
		nd := nudge(b, c.In[off+1], c.In[off+2], qmin, qmax)
		wide := nudged{b.BroadcastInDim(nd.min, t.Shape, nil), b.BroadcastInDim(nd.max, t.Shape, nil), b.BroadcastInDim(nd.scale, t.Shape, nil)}
		if !grad {
			c.Out = []ir.Value{fakeQuant(b, x, wide, false)}
			return nil
		}
		g := c.In[0]
		axes := seq(r)
		if perChannel {
			axes = seq(r - 1)
		}
		sumWhere := func(pred ir.Value) ir.Value { return b.Reduce(maskedBy(b, g, pred), ir.ReduceSum, axes) }
		c.Out = []ir.Value{
			maskedBy(b, g, within(b, x, wide.min, wide.max)),
			sumWhere(b.Compare(ir.CmpLT, x, wide.min)),
			sumWhere(b.Compare(ir.CmpGT, x, wide.max)),
		}
		return nil
	}
}

// qdqAxis reads axis: -1 (one range for the whole input) or a dim of it
// (a range per index along it).
func qdqAxis(c *Call, t ir.TensorType) (int, error) {
	a := c.Attrs.Int("axis", -1)
	if a < -1 || a >= int64(t.Shape.Rank()) {
		return 0, c.Errorf("axis must be -1 or a dim of the input, got %d for %v", a, t)
	}
	return int(a), nil
}

// qdqRangeOK checks that min and max are scalars (axis -1) or vectors of
// the axis' size.
func qdqRangeOK(c *Call, t, tmin, tmax ir.TensorType, axis int) error {
	if axis < 0 {
		if tmin.Shape.Rank() != 0 || tmax.Shape.Rank() != 0 {
			return c.Errorf("input_min and input_max must be scalars when axis is -1, got %s", c.Inputs())
		}
		return nil
	}
	d := t.Shape[axis]
	if tmin.Shape.Rank() != 1 || tmax.Shape.Rank() != 1 || tmin.Shape[0] != d || tmax.Shape[0] != d {
		return c.Errorf("input_min and input_max must have %d values, one per index of axis %d, got %s", d, axis, c.Inputs())
	}
	return nil
}

// lowerQDQ lowers QuantizeAndDequantizeV2, V3 (num_bits an input) and V4.
func lowerQDQ(bitsInput bool) func(c *Call) error {
	return func(c *Call) error {
		n := 3
		if bitsInput {
			n = 4
		}
		if err := c.arity(n); err != nil {
			return err
		}
		t := c.Type(0)
		if t.DType != ir.F32 || c.Type(1).DType != ir.F32 || c.Type(2).DType != ir.F32 {
			return c.Errorf("input, input_min and input_max must be float32, got %s", c.Inputs())
		}
		axis, err := qdqAxis(c, t)
		if err != nil {
			return err
		}
		signed := c.Attrs.BoolOr("signed_input", true)
		given := c.Attrs.Bool("range_given")
		bits := c.Attrs.Int("num_bits", 8)
		mode := c.Attrs.String("round_mode", "HALF_TO_EVEN")
		if bitsInput {
			if bits, err = c.hostScalar(3, "num_bits"); err != nil {
				return err
			}
			mode = "HALF_TO_EVEN"
		}
		if limit := int64(63); bits <= 0 || signed && bits >= limit-1 || !signed && bits >= limit {
			return c.Errorf("num_bits is out of range: %d with signed_input %v", bits, signed)
		}
		if mode != "HALF_TO_EVEN" && mode != "HALF_UP" {
			return c.Errorf("round_mode must be 'HALF_UP' or 'HALF_TO_EVEN', is %q", mode)
		}
		b := c.B
		x := c.In[0]
		// The range, per channel or for the whole input, and the dims of
		// x that it maps to.
		var lo, hi ir.Value
		var dims []int
		reduced := seq(t.Shape.Rank())
		if axis >= 0 {
			dims = []int{axis}
			reduced = append(seq(axis), rangeInts(axis+1, t.Shape.Rank())...)
		}
		if given {
			// TensorFlow 2.21's V2 and V4 kernels take a given range
			// only as scalars and only without an axis; V3 takes one per
			// channel too.
			if !bitsInput && (axis >= 0 || c.Type(1).Shape.Rank() != 0 || c.Type(2).Shape.Rank() != 0) {
				return c.Errorf("a given range must be scalar input_min and input_max, without an axis (axis %d, inputs %s)", axis, c.Inputs())
			}
			if err := qdqRangeOK(c, t, c.Type(1), c.Type(2), axis); err != nil {
				return err
			}
			lo, hi = c.In[1], c.In[2]
		} else {
			lo, hi = b.Reduce(x, ir.ReduceMin, reduced), b.Reduce(x, ir.ReduceMax, reduced)
		}
		// ComputeQuantizationRange: the integer grid [qmin, qmax], then the
		// largest scale that keeps both ends of the range on it, adjusting
		// the other end.
		var qmin, qmax float64
		if signed {
			qmin, qmax = -float64(int64(1)<<(bits-1)), float64(int64(1)<<(bits-1)-1)
			if c.Attrs.Bool("narrow_range") {
				qmin++
			}
		} else {
			qmax = float64(int64(1)<<bits - 1)
		}
		qlo, qhi := like(b, lo, float64(float32(qmin))), like(b, lo, float64(float32(qmax)))
		big := like(b, lo, math.MaxFloat32)
		zero := like(b, lo, 0)
		fromMin := b.Select(b.Compare(ir.CmpGT, b.Binary(ir.OpMul, qlo, lo), zero), b.Binary(ir.OpDiv, qlo, lo), big)
		fromMax := b.Select(b.Compare(ir.CmpGT, b.Binary(ir.OpMul, qhi, hi), zero), b.Binary(ir.OpDiv, qhi, hi), big)
		byMin := b.Compare(ir.CmpLT, fromMin, fromMax)
		scale := b.Select(byMin, fromMin, fromMax)
		inv := b.Select(byMin, b.Binary(ir.OpDiv, lo, qlo), b.Binary(ir.OpDiv, hi, qhi))
		hi = b.Select(byMin, b.Binary(ir.OpMul, qhi, inv), hi)
		lo = b.Select(byMin, lo, b.Binary(ir.OpMul, qlo, inv))
		wide := func(v ir.Value) ir.Value { return b.BroadcastInDim(v, t.Shape, dims) }
		if given {
			x = b.Binary(ir.OpMax, b.Binary(ir.OpMin, x, wide(hi)), wide(lo))
		}
		q := b.Binary(ir.OpMul, x, wide(scale))
		if mode == "HALF_UP" {
			q = b.Unary(ir.OpFloor, b.Binary(ir.OpAdd, q, like(b, q, 0.5)))
		} else {
			q = b.Unary(ir.OpRound, q)
		}
		c.Out = []ir.Value{b.Binary(ir.OpMul, q, wide(inv))}
		return nil
	}
}

// lowerQDQGrad is the straight-through gradient: the gradient where the
// input is within [input_min, input_max] (as given, not adjusted), 0
// elsewhere; the range's own gradients are 0.
func lowerQDQGrad(c *Call) error {
	if err := c.arity(4); err != nil {
		return err
	}
	t := c.Type(1)
	for i := range 4 {
		if c.Type(i).DType != ir.F32 {
			return c.Errorf("inputs must be float32, got %s", c.Inputs())
		}
	}
	if !c.Type(0).Shape.Equal(t.Shape) {
		return c.Errorf("gradients and input must have one shape, got %s", c.Inputs())
	}
	axis, err := qdqAxis(c, t)
	if err != nil {
		return err
	}
	tmin, tmax := c.Type(2), c.Type(3)
	if err := qdqRangeOK(c, t, tmin, tmax, axis); err != nil {
		return err
	}
	b := c.B
	var dims []int
	if axis >= 0 {
		dims = []int{axis}
	}
	lo, hi := b.BroadcastInDim(c.In[2], t.Shape, dims), b.BroadcastInDim(c.In[3], t.Shape, dims)
	c.Out = []ir.Value{maskedBy(b, c.In[0], within(b, c.In[1], lo, hi)), zeros(b, tmin), zeros(b, tmax)}
	return nil
}

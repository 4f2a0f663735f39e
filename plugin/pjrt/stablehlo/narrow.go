package stablehlo

// Narrow types: the 8-, 6- and 4-bit floats and the 4- and 2-bit integers,
// which the IR has no dtypes for. jax hands a PJRT plugin their host data
// one byte per element, as ml_dtypes stores them (measured with jaxlib
// 0.12: a uint4 array of 7 elements arrives as 7 bytes, int4 -1 as 0x0f,
// float4_e2m1fn 1.0 as 0x02), so a buffer holds one byte per element.
//
// Inside a program a narrow float is held as float32 (every value of every
// format is exact in float32) and a narrow integer as int8 (signed,
// sign-extended) or uint8 (unsigned): after every op whose result type is
// narrow, the value is brought back into the type (round). At main's
// boundary a narrow float is its byte (IR U8): decoded to float32 by a
// gather from the format's table, encoded back from the float32 bits; a
// narrow integer is its byte with the value in the low bits.

import (
	"math"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// special is how a float format spends its top codes.
type special uint8

const (
	ieee   special = 0 // the top exponent is inf (mantissa 0) and NaN; overflow is inf
	fn     special = 1 // no inf: S.1111.111 is NaN; overflow is NaN
	fnuz   special = 2 // no inf, no -0: 0x80 is NaN; overflow is NaN
	e8m0   special = 3 // an unsigned exponent: 2^(c-127), 0xFF is NaN; no zero
	finite special = 4 // no inf and no NaN (f6, f4): overflow saturates
)

// narrowType is one narrow element type.
type narrowType struct {
	name  string // PJRT's (XLA's) name of the element type: f8e4m3fn, s4
	bits  int
	float bool
	// Floats: exponent and mantissa widths, the exponent bias, and the
	// specials; table holds every code's value.
	exp, mant, bias int
	spec            special
	table           []float32
	maxFinite       float32
	// flush: values that round below the smallest normal are zeros
	// (XLA's reduce_precision), not subnormals.
	flush bool
	// Integers: whether signed.
	signed bool
}

var narrowFloats = map[mlir.FloatKind]*narrowType{
	mlir.F8E5M2:        newNarrowFloat("f8e5m2", 8, 5, 2, 15, ieee),
	mlir.F8E4M3:        newNarrowFloat("f8e4m3", 8, 4, 3, 7, ieee),
	mlir.F8E3M4:        newNarrowFloat("f8e3m4", 8, 3, 4, 3, ieee),
	mlir.F8E4M3FN:      newNarrowFloat("f8e4m3fn", 8, 4, 3, 7, fn),
	mlir.F8E4M3FNUZ:    newNarrowFloat("f8e4m3fnuz", 8, 4, 3, 8, fnuz),
	mlir.F8E5M2FNUZ:    newNarrowFloat("f8e5m2fnuz", 8, 5, 2, 16, fnuz),
	mlir.F8E4M3B11FNUZ: newNarrowFloat("f8e4m3b11fnuz", 8, 4, 3, 11, fnuz),
	mlir.F8E8M0FNU:     newNarrowFloat("f8e8m0fnu", 8, 8, 0, 127, e8m0),
	mlir.F6E2M3FN:      newNarrowFloat("f6e2m3fn", 6, 2, 3, 1, finite),
	mlir.F6E3M2FN:      newNarrowFloat("f6e3m2fn", 6, 3, 2, 3, finite),
	mlir.F4E2M1FN:      newNarrowFloat("f4e2m1fn", 4, 2, 1, 1, finite),
}

var narrowInts = map[[2]int]*narrowType{ // by width and signedness (1: unsigned)
	{4, 0}: {name: "s4", bits: 4, signed: true},
	{4, 1}: {name: "u4", bits: 4},
	{2, 0}: {name: "s2", bits: 2, signed: true},
	{2, 1}: {name: "u2", bits: 2},
}

func newNarrowFloat(name string, bits, exp, mant, bias int, spec special) *narrowType {
	n := &narrowType{name: name, bits: bits, float: true, exp: exp, mant: mant, bias: bias, spec: spec}
	n.table = make([]float32, 1<<bits)
	for c := range n.table {
		v := n.value(uint32(c))
		n.table[c] = v
		if !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) && v > n.maxFinite {
			n.maxFinite = v
		}
	}
	return n
}

// value is what code c of a float format stands for. NaN is the quiet
// float32 NaN, negative where the code's sign bit is set (as ml_dtypes
// decodes it) in the formats that have signed NaNs, and with the code's
// mantissa as its payload in the IEEE formats.
func (n *narrowType) value(c uint32) float32 {
	if n.spec == e8m0 {
		if c == 0xFF {
			return math.Float32frombits(0x7FC00000)
		}
		return float32(math.Ldexp(1, int(c)-127))
	}
	sign := c >> (n.bits - 1) & 1
	e := int(c >> n.mant & (1<<n.exp - 1))
	m := c & (1<<n.mant - 1)
	top := 1<<n.exp - 1
	nan := math.Float32frombits(0x7FC00000 | sign<<31)
	if n.spec == ieee {
		// The mantissa is the payload of a quiet NaN, below the quiet
		// bit (a signaling NaN would not survive float32 arithmetic or
		// the interpreter's float64): a bitcast of the held value gives
		// the code back.
		nan = math.Float32frombits(0x7FC00000 | sign<<31 | m<<(22-n.mant))
	}
	switch {
	case n.spec == ieee && e == top && m == 0:
		return float32(math.Inf(1 - 2*int(sign)))
	case n.spec == ieee && e == top, n.spec == fn && e == top && m == 1<<n.mant-1:
		return nan
	case n.spec == fnuz && c == 1<<(n.bits-1):
		return math.Float32frombits(0x7FC00000)
	}
	var v float64
	if e == 0 {
		v = math.Ldexp(float64(m), 1-n.bias-n.mant)
	} else {
		v = math.Ldexp(float64(m|1<<n.mant), e-n.bias-n.mant)
	}
	if sign == 1 {
		v = -v
	}
	return float32(v)
}

// narrowOf is the narrow type of t (a tensor or element type), if it is one.
func narrowOf(t mlir.Type) (*narrowType, bool) {
	switch et := mlir.ElementType(t).(type) {
	case *mlir.FloatType:
		n, ok := narrowFloats[et.Kind]
		return n, ok
	case *mlir.IntegerType:
		u := 0
		if et.Signedness == mlir.Unsigned {
			u = 1
		}
		n, ok := narrowInts[[2]int{et.Width, u}]
		return n, ok
	}
	return nil, false
}

// held is the IR dtype a narrow type is held in inside a program.
func (n *narrowType) held() ir.DType {
	switch {
	case n.float:
		return ir.F32
	case n.signed:
		return ir.I8
	}
	return ir.U8
}

// boundary is the IR dtype of a narrow type at main's boundary: its byte.
func (n *narrowType) boundary() ir.DType {
	if n.float {
		return ir.U8
	}
	return n.held()
}

// fromBits makes a held value from codes (any 1-byte integer dtype, the
// code in the low bits).
func (n *narrowType) fromBits(b *ir.Builder, x ir.Value) ir.Value {
	t := b.Type(x)
	if !n.float {
		if t.DType != n.held() {
			x = b.BitcastConvert(x, n.held())
		}
		return n.wrap(b, x)
	}
	if t.DType != ir.U8 {
		x = b.BitcastConvert(x, ir.U8)
	}
	if n.bits < 8 {
		x = b.Binary(ir.OpAnd, x, intConst(b, ir.U8, t.Shape, 1<<n.bits-1))
	}
	table := make([]byte, 4*len(n.table))
	for i, v := range n.table {
		u := math.Float32bits(v)
		table[4*i], table[4*i+1], table[4*i+2], table[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
	tab := b.Constant(ir.TensorType{DType: ir.F32, Shape: ir.Shape{len(n.table)}}, table)
	r := t.Shape.Rank()
	return b.Gather(tab, b.Convert(x, ir.I32), ir.GatherDims{
		OffsetDims: []int{}, CollapsedSliceDims: []int{0}, StartIndexMap: []int{0}, IndexVectorDim: r, SliceSizes: []int{1}})
}

// toBits is the codes of held values, as the boundary dtype (the code in
// the low bits, the others clear).
func (n *narrowType) toBits(b *ir.Builder, x ir.Value) ir.Value {
	s := b.Type(x).Shape
	if !n.float {
		return b.Binary(ir.OpAnd, x, intConst(b, n.held(), s, 1<<n.bits-1))
	}
	c := func(v int64) ir.Value { return intConst(b, ir.I32, s, v) }
	bitsV := b.BitcastConvert(x, ir.I32)
	abs := b.Binary(ir.OpAnd, bitsV, c(0x7FFFFFFF))
	nan := b.Compare(ir.CmpGT, abs, c(0x7F800000))
	inf := b.Compare(ir.CmpEQ, abs, c(0x7F800000))
	e := b.Binary(ir.OpShiftRightLogical, abs, c(23))
	var code ir.Value
	if n.spec == e8m0 {
		// 2^-127, code 0, is a float32 subnormal: exponent field 0.
		code = b.Select(b.Binary(ir.OpOr, b.Binary(ir.OpOr, nan, inf), b.Compare(ir.CmpLT, bitsV, c(0))), c(0xFF), e)
		return b.Convert(code, ir.U8)
	}
	ef := b.Binary(ir.OpAdd, e, c(int64(n.bias-127)))
	m := b.Binary(ir.OpShiftRightLogical, b.Binary(ir.OpAnd, abs, c(0x7FFFFF)), c(int64(23-n.mant)))
	normal := b.Binary(ir.OpOr, b.Binary(ir.OpShiftLeft, ef, c(int64(n.mant))), m)
	scale := math.Ldexp(1, n.bias-1+n.mant)
	sub := b.Convert(b.Binary(ir.OpMul, b.BitcastConvert(abs, ir.F32), floatConst(b, ir.F32, s, scale)), ir.I32)
	mag := b.Select(b.Compare(ir.CmpGE, ef, c(1)), normal, sub)
	signBit := b.Binary(ir.OpShiftLeft, b.Binary(ir.OpShiftRightLogical, bitsV, c(31)), c(int64(n.bits-1)))
	code = b.Binary(ir.OpOr, mag, signBit)
	topExp := int64(1<<n.exp - 1)
	switch n.spec {
	case ieee:
		code = b.Select(inf, b.Binary(ir.OpOr, signBit, c(topExp<<n.mant)), code)
		// A NaN keeps its payload when it has one the format holds
		// whole (a decoded code's), else is the canonical quiet NaN.
		low := b.Binary(ir.OpAnd, abs, c(1<<(22-n.mant)-1))
		pm := b.Binary(ir.OpAnd, b.Binary(ir.OpShiftRightLogical, abs, c(int64(22-n.mant))), c(1<<n.mant-1))
		kept := b.Binary(ir.OpAnd, b.Compare(ir.CmpEQ, low, c(0)), b.Compare(ir.CmpNE, pm, c(0)))
		payload := b.Select(kept, pm, c(1<<(n.mant-1)))
		code = b.Select(nan, b.Binary(ir.OpOr, signBit, b.Binary(ir.OpOr, c(topExp<<n.mant), payload)), code)
	case fn:
		code = b.Select(b.Binary(ir.OpOr, nan, inf), b.Binary(ir.OpOr, signBit, c(topExp<<n.mant|(1<<n.mant-1))), code)
	case fnuz:
		code = b.Select(b.Compare(ir.CmpEQ, mag, c(0)), c(0), code)
		code = b.Select(b.Binary(ir.OpOr, nan, inf), c(1<<(n.bits-1)), code)
	}
	return b.Convert(code, ir.U8)
}

// hold brings a value computed in the held dtype back into the narrow
// type: a float rounded to the format (to nearest, ties to even, as XLA and
// ml_dtypes convert float32), an integer wrapped to its width.
func (n *narrowType) hold(b *ir.Builder, x ir.Value) ir.Value {
	if !n.float {
		return n.wrap(b, x)
	}
	return roundToFormat(b, x, n)
}

// wrap keeps the low bits of a held integer, sign-extended when signed.
func (n *narrowType) wrap(b *ir.Builder, x ir.Value) ir.Value {
	t := b.Type(x)
	if n.signed {
		sh := intConst(b, t.DType, t.Shape, int64(8-n.bits))
		return b.Binary(ir.OpShiftRightArithmetic, b.Binary(ir.OpShiftLeft, x, sh), sh)
	}
	return b.Binary(ir.OpAnd, x, intConst(b, t.DType, t.Shape, 1<<n.bits-1))
}

// roundToFormat rounds float32 values to the nearest value of format n,
// as float32. Normal values round at the format's mantissa width by
// integer arithmetic on the bits (adding half a unit less one, plus the
// kept lowest bit, carries ties to even and into the exponent); values
// below the format's smallest normal are scaled to its fixed quantum and
// rounded by IR round (ties to even). Beyond the largest finite value the
// result is the format's overflow: inf, NaN, or the largest finite value
// (f6, f4). As ml_dtypes: FNUZ formats have no -0; E8M0 rounds ties away
// from zero, has no zero (0, negatives, inf and NaN are NaN) and takes a
// float32 subnormal below 1.5 * 2^-127 to its smallest value 2^-127; NaN in a format without
// NaN is a zero of the opposite sign.
func roundToFormat(b *ir.Builder, x ir.Value, n *narrowType) ir.Value {
	s := b.Type(x).Shape
	c := func(v int64) ir.Value { return intConst(b, ir.I32, s, v) }
	bitsV := b.BitcastConvert(x, ir.I32)
	abs := b.Binary(ir.OpAnd, bitsV, c(0x7FFFFFFF))
	sign := b.Binary(ir.OpAnd, bitsV, c(math.MinInt32))
	nan := b.Compare(ir.CmpGT, abs, c(0x7F800000))
	maxBits := int64(math.Float32bits(n.maxFinite))
	qnan := c(0x7FC00000)
	if n.spec == e8m0 {
		r := b.Binary(ir.OpAnd, b.Binary(ir.OpAdd, abs, c(1<<22)), c(0x7F800000))
		// ml_dtypes rounds a float32 subnormal as 2^-127 times 1.m:
		// from 1.5 * 2^-127 up to 2^-126, below to 2^-127.
		sub := b.Select(b.Compare(ir.CmpGE, abs, c(0x00600000)), c(0x00800000), c(0x00400000))
		r = b.Select(b.Compare(ir.CmpLT, abs, c(0x00800000)), sub, r)
		bad := b.Binary(ir.OpOr, b.Compare(ir.CmpLT, bitsV, c(0)), b.Compare(ir.CmpEQ, abs, c(0)))
		bad = b.Binary(ir.OpOr, bad, nan)
		bad = b.Binary(ir.OpOr, bad, b.Compare(ir.CmpGT, r, c(maxBits)))
		return b.BitcastConvert(b.Select(bad, qnan, r), ir.F32)
	}
	shift := int64(23 - n.mant)
	lsb := b.Binary(ir.OpAnd, b.Binary(ir.OpShiftRightLogical, abs, c(shift)), c(1))
	r := b.Binary(ir.OpAdd, b.Binary(ir.OpAdd, abs, c(1<<(shift-1)-1)), lsb)
	r = b.Binary(ir.OpAnd, r, c(^(1<<shift - 1)))
	scale := math.Ldexp(1, n.bias-1+n.mant)
	ax := b.BitcastConvert(abs, ir.F32)
	sub := b.Binary(ir.OpMul, b.Unary(ir.OpRound, b.Binary(ir.OpMul, ax, floatConst(b, ir.F32, s, scale))), floatConst(b, ir.F32, s, 1/scale))
	minNormal := int64(127+1-n.bias) << 23
	if n.flush {
		r = b.Select(b.Compare(ir.CmpLT, r, c(minNormal)), c(0), r)
	} else {
		r = b.Select(b.Compare(ir.CmpLT, abs, c(minNormal)), b.BitcastConvert(sub, ir.I32), r)
	}
	// An add past the top (a NaN's payload) wraps negative: NaN is
	// selected below whatever r is.
	over := b.Binary(ir.OpOr, b.Compare(ir.CmpGT, r, c(maxBits)), b.Compare(ir.CmpLT, r, c(0)))
	switch n.spec {
	case ieee:
		r = b.Select(over, c(0x7F800000), r)
	case fn, fnuz:
		r = b.Select(over, qnan, r)
	case finite:
		r = b.Select(over, c(maxBits), r)
	}
	out := b.Binary(ir.OpOr, r, sign)
	switch n.spec {
	case ieee:
		out = b.Select(nan, bitsV, out) // its code is made by toBits
	case fn:
		out = b.Select(nan, b.Binary(ir.OpOr, qnan, sign), out)
	case fnuz:
		out = b.Select(b.Compare(ir.CmpEQ, r, c(0)), c(0), out)
		out = b.Select(b.Binary(ir.OpOr, nan, b.Compare(ir.CmpEQ, r, qnan)), qnan, out)
	case finite:
		out = b.Select(nan, b.Binary(ir.OpXor, sign, c(math.MinInt32)), out)
	}
	return b.BitcastConvert(out, ir.F32)
}

// keepsNarrow are the ops whose results are values of their operands
// (moved, selected or carried): nothing to round.
var keepsNarrow = map[string]bool{
	"vhlo.reshape_v1": true, "vhlo.transpose_v1": true, "vhlo.broadcast_in_dim_v1": true, "vhlo.slice_v1": true,
	"vhlo.concatenate_v1": true, "vhlo.reverse_v1": true, "vhlo.pad_v1": true, "vhlo.gather_v1": true, "vhlo.gather_v2": true,
	"vhlo.dynamic_slice_v1": true, "vhlo.dynamic_update_slice_v1": true, "vhlo.select_v1": true, "vhlo.while_v1": true,
	"vhlo.case_v1": true, "vhlo.if_v1": true, "vhlo.call_v1": true, "vhlo.sort_v1": true, "vhlo.optimization_barrier_v1": true,
	"vhlo.bitcast_convert_v1": true, "vhlo.constant_v1": true, "vhlo.maximum_v1": true, "vhlo.minimum_v1": true,
	"vhlo.composite_v1": true, "vhlo.composite_v2": true,
}

// narrowResults holds every narrow-typed result of op in its type. In the
// scalar body of a reduce too: every step of a sum of f8 values rounds, as
// in XLA's CPU (whose order of the steps is its own, measured: a sum of 33
// f8e4m3fn values is neither the float32 sum rounded once nor the
// sequential one).
func (e *env) narrowResults(op *mlir.Operation, outs []ir.Value) {
	if keepsNarrow[op.Name] {
		return
	}
	for i, r := range op.Results {
		if n, ok := narrowOf(r.Type); ok && i < len(outs) {
			outs[i] = n.hold(e.b, outs[i])
		}
	}
}

// narrowOp translates the ops that take narrow types apart from their
// handlers: constants (codes, decoded), and the integer ops that see the
// bits beyond a narrow integer's width (logical shifts right, popcnt,
// count_leading_zeros), which are given the operand's low bits. ok is
// false for every other op.
func (e *env) narrowOp(op *mlir.Operation) (outs []ir.Value, ok bool, err error) {
	switch op.Name {
	case "vhlo.constant_v1":
		if len(op.Results) != 1 {
			return nil, false, nil
		}
		n, isNarrow := narrowOf(op.Results[0].Type)
		if !isNarrow {
			return nil, false, nil
		}
		v, err := narrowConstant(e.b, op, n)
		return one(v), true, err
	case "vhlo.shift_right_logical_v1", "vhlo.popcnt_v1", "vhlo.count_leading_zeros_v1":
		if len(op.Operands) == 0 {
			return nil, false, nil
		}
		n, isNarrow := narrowOf(op.Operands[0].Type)
		if !isNarrow || n.float {
			return nil, false, nil
		}
		vs, err := e.operands(op)
		if err != nil {
			return nil, true, err
		}
		b := e.b
		low := func(x ir.Value) ir.Value { // the low bits as U8
			return b.Binary(ir.OpAnd, b.BitcastConvert(x, ir.U8), intConst(b, ir.U8, b.Type(x).Shape, 1<<n.bits-1))
		}
		x := low(vs[0])
		var r ir.Value
		switch op.Name {
		case "vhlo.shift_right_logical_v1":
			if len(vs) != 2 {
				return nil, true, invalid(op, "has %d operands, want 2", len(vs))
			}
			y := vs[1]
			// Amounts from the width on give 0; negative ones are huge.
			big := b.Compare(ir.CmpGE, low(y), intConst(b, ir.U8, b.Type(y).Shape, int64(n.bits)))
			if n.signed {
				big = b.Binary(ir.OpOr, big, b.Compare(ir.CmpLT, y, intConst(b, ir.I8, b.Type(y).Shape, 0)))
			}
			r = b.Select(big, intConst(b, ir.U8, b.Type(y).Shape, 0), b.Binary(ir.OpShiftRightLogical, x, low(y)))
		case "vhlo.popcnt_v1":
			r = popcount(b, x)
		default:
			r = b.Binary(ir.OpSub, countLeadingZeros8(b, x), intConst(b, ir.U8, b.Type(x).Shape, int64(8-n.bits)))
		}
		if b.Type(vs[0]).DType != ir.U8 {
			r = b.BitcastConvert(r, b.Type(vs[0]).DType)
		}
		return one(n.wrap(b, r)), true, nil
	}
	return nil, false, nil
}

// popcount counts the set bits of U8 values.
func popcount(b *ir.Builder, x ir.Value) ir.Value {
	s := b.Type(x).Shape
	c := func(v int64) ir.Value { return intConst(b, ir.U8, s, v) }
	x = b.Binary(ir.OpSub, x, b.Binary(ir.OpAnd, b.Binary(ir.OpShiftRightLogical, x, c(1)), c(0x55)))
	x = b.Binary(ir.OpAdd, b.Binary(ir.OpAnd, x, c(0x33)), b.Binary(ir.OpAnd, b.Binary(ir.OpShiftRightLogical, x, c(2)), c(0x33)))
	return b.Binary(ir.OpAnd, b.Binary(ir.OpAdd, x, b.Binary(ir.OpShiftRightLogical, x, c(4))), c(0x0F))
}

// countLeadingZeros8 counts the leading zeros of U8 values (8 for 0).
func countLeadingZeros8(b *ir.Builder, x ir.Value) ir.Value {
	s := b.Type(x).Shape
	c := func(v int64) ir.Value { return intConst(b, ir.U8, s, v) }
	n := c(0)
	for _, k := range []int64{4, 2, 1} {
		small := b.Compare(ir.CmpLT, x, c(1<<(8-k)))
		n = b.Select(small, b.Binary(ir.OpAdd, n, c(k)), n)
		x = b.Select(small, b.Binary(ir.OpShiftLeft, x, c(k)), x)
	}
	zero := b.Compare(ir.CmpEQ, x, c(0))
	return b.Select(zero, c(8), n)
}

// narrowConstant is a dense constant of a narrow type: one byte per
// element (MLIR stores sub-byte elements a byte each), decoded.
func narrowConstant(b *ir.Builder, op *mlir.Operation, n *narrowType) (ir.Value, error) {
	rt, err := resultType(op, 0)
	if err != nil {
		return 0, err
	}
	a, err := attr(op, "value")
	if err != nil {
		return 0, err
	}
	d, ok := a.(*mlir.DenseAttr)
	if !ok {
		return 0, unsupported(op, "a constant held as %T (only dense elements)", a)
	}
	if k := d.NumElements(); k != int64(rt.Shape.Size()) {
		return 0, invalid(op, "its value has %d elements for %v", k, rt)
	}
	if w := mlir.ElementBytes(d.Elem()); w != 1 {
		return 0, invalid(op, "its value's elements (%s) are %d bytes, not one", d.Elem(), w)
	}
	codes := ir.TensorType{DType: ir.U8, Shape: rt.Shape}
	var v ir.Value
	switch {
	case d.Splat && len(d.Data) >= 1:
		v = b.BroadcastInDim(b.Constant(ir.TensorType{DType: ir.U8}, d.Data[:1]), rt.Shape, []int{})
	case len(d.Data) == codes.Bytes():
		v = b.Constant(codes, d.Data)
	default:
		return 0, invalid(op, "its value has %d bytes for %v", len(d.Data), rt)
	}
	return n.fromBits(b, v), nil
}

// narrowBitcast is bitcast_convert from or to a narrow type: through its
// codes (a byte each). Between types of different widths the codes are
// joined or split as XLA does (shape_inference: the narrower side has an
// extra last dim of wide/narrow elements, the first the least significant
// bits), a sub-byte type's too: s4[16,4] to s16[16], u32[] to u4[8]. The
// wider width must be a multiple of the narrower (f6 bitcasts only to f6).
func narrowBitcast(b *ir.Builder, op *mlir.Operation, x ir.Value, rt ir.TensorType) (ir.Value, error) {
	from, nf := narrowOf(op.Operands[0].Type)
	to, nt := narrowOf(op.Results[0].Type)
	wf, wt := 8*mlir.ElementBytes(mlir.ElementType(op.Operands[0].Type)), 8*mlir.ElementBytes(mlir.ElementType(op.Results[0].Type))
	if nf {
		wf = from.bits
	}
	if nt {
		wt = to.bits
	}
	if max(wf, wt)%min(wf, wt) != 0 {
		return 0, unsupported(op, "a bitcast from %s to %s (%d bits to %d: one width must be a multiple of the other)", op.Operands[0].Type, op.Results[0].Type, wf, wt)
	}
	if b.Type(x).DType == ir.Bool || rt.DType == ir.Bool {
		return 0, unsupported(op, "a bitcast from %s to %s (not of bool)", op.Operands[0].Type, op.Results[0].Type)
	}
	v := x
	if nf {
		v = from.toBits(b, x) // the codes, in the low bits
	}
	// v is now codes or a wider value; make the codes of the result (U8,
	// in the low bits), or the result itself when it is not narrow.
	target := rt.DType
	if nt {
		target = ir.U8
	}
	switch {
	case wf == wt:
		if b.Type(v).DType != target {
			v = b.BitcastConvert(v, target)
		}
	case wf < wt:
		if k := b.Type(v).Shape.Rank(); k == 0 || b.Type(v).Shape[k-1] != wt/wf {
			return 0, invalid(op, "a bitcast from %s to %s needs a last dim of %d", op.Operands[0].Type, op.Results[0].Type, wt/wf)
		}
		v = bitcastJoin(b, v, wf, wt, target)
	default:
		v = bitcastSplit(b, v, wf, wt, target)
	}
	if nt {
		v = to.fromBits(b, v)
	}
	return v, nil
}

// narrowNames lists the narrow types, for messages.
func narrowNames() string {
	return "f8E5M2, f8E4M3, f8E3M4, f8E4M3FN, f8E4M3FNUZ, f8E5M2FNUZ, f8E4M3B11FNUZ, f8E8M0FNU, f6E2M3FN, f6E3M2FN, f4E2M1FN, i4, ui4, i2, ui2"
}

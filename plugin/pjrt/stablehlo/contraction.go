package stablehlo

// dot_general and convolution.

import (
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// computeType is the dtype a contraction of operands of dtype in into a
// result of dtype out runs in: out when it is at least as wide (jax's
// preferred_element_type: bf16 operands summed into f32, int8 into int32),
// so that nothing is rounded to the narrower type on the way; in
// otherwise, converted after.
func computeType(op *mlir.Operation, in, out ir.DType) (ir.DType, error) {
	switch {
	case in == ir.C64 || out == ir.C64:
		return 0, unsupported(op, "complex operands (the IR has no complex arithmetic)")
	case in == ir.Bool && out != ir.Bool:
		return out, nil // counted in the result's type
	case in == ir.Bool || out == ir.Bool:
		return 0, unsupported(op, "bool operands")
	case in == out:
		return in, nil
	case in.IsFloat() && out.IsInt():
		return 0, unsupported(op, "float operands with an integer result")
	case out.Size() > in.Size() || (in.IsInt() && out.IsFloat()):
		return out, nil
	case out.Size() == in.Size() && in.IsFloat():
		return ir.F32, nil // bf16 into f16 or the reverse
	}
	return in, nil
}

// contractOperands converts both operands to the dtype the contraction
// computes in.
func contractOperands(e *env, op *mlir.Operation, x, y ir.Value) (ir.Value, ir.Value, ir.DType, error) {
	rt, err := resultType(op, 0)
	if err != nil {
		return 0, 0, 0, err
	}
	b := e.b
	dx, dy := b.Type(x).DType, b.Type(y).DType
	in := dx
	if dx != dy {
		// Mixed operands (f32 x bf16): both go to the wider.
		if dy.Size() > dx.Size() || (dx.IsInt() && dy.IsFloat()) {
			in = dy
		}
	}
	d, err := computeType(op, in, rt.DType)
	if err != nil {
		return 0, 0, 0, err
	}
	return b.Convert(x, d), b.Convert(y, d), rt.DType, nil
}

// isComplexContraction reports whether an operand or the result is
// complex64, which complexContract composes from real contractions.
func isComplexContraction(e *env, op *mlir.Operation, x, y ir.Value) bool {
	rt, err := resultType(op, 0)
	return e.b.Type(x).DType == ir.C64 || e.b.Type(y).DType == ir.C64 || (err == nil && rt.DType == ir.C64)
}

// dotGeneral ignores precision_config (the drivers compute in the operand
// type) and the algorithm fields of v2, which are hints about how to
// reach at most that precision.
func dotGeneral(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, y, err := twoOperands(e, op)
	if err != nil {
		return nil, err
	}
	var d ir.DotDims
	if d.LhsBatch, err = optInts(op, "lhs_batching_dimensions", nil); err != nil {
		return nil, err
	}
	if d.RhsBatch, err = optInts(op, "rhs_batching_dimensions", nil); err != nil {
		return nil, err
	}
	if d.LhsContract, err = optInts(op, "lhs_contracting_dimensions", nil); err != nil {
		return nil, err
	}
	if d.RhsContract, err = optInts(op, "rhs_contracting_dimensions", nil); err != nil {
		return nil, err
	}
	return contractDot(e, op, x, y, d)
}

// contractDot is the dot_general of x and y by d: complex operands from
// their parts, bool ones (XLA's OR of ANDs) as a count of the pairs both
// true, others in the dtype contractOperands picks.
func contractDot(e *env, op *mlir.Operation, x, y ir.Value, d ir.DotDims) ([]ir.Value, error) {
	b := e.b
	dot := func(p, q ir.Value) ir.Value { return b.DotGeneral(p, q, d) }
	if isComplexContraction(e, op, x, y) {
		return complexContract(e, op, x, y, dot)
	}
	rt, err := resultType(op, 0)
	if err != nil {
		return nil, err
	}
	if b.Type(x).DType == ir.Bool && b.Type(y).DType == ir.Bool && rt.DType == ir.Bool {
		n := dot(b.Convert(x, ir.I32), b.Convert(y, ir.I32))
		return one(b.Compare(ir.CmpNE, n, intConst(b, ir.I32, b.Type(n).Shape, 0))), nil
	}
	x, y, out, err := contractOperands(e, op, x, y)
	if err != nil {
		return nil, err
	}
	return one(b.Convert(dot(x, y), out)), nil
}

// dot is the old dot_v1: a vector or matrix product, the last dim of lhs
// with the first of rhs.
func dot(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, y, err := twoOperands(e, op)
	if err != nil {
		return nil, err
	}
	rl := e.b.Type(x).Shape.Rank()
	if rl < 1 || rl > 2 || e.b.Type(y).Shape.Rank() < 1 || e.b.Type(y).Shape.Rank() > 2 {
		return nil, invalid(op, "operands %v and %v are not vectors or matrices", e.b.Type(x), e.b.Type(y))
	}
	d := ir.DotDims{LhsContract: []int{rl - 1}, RhsContract: []int{0}}
	return contractDot(e, op, x, y, d)
}

// convolution maps StableHLO's dimension numbers onto the IR's
// channels-last layout by transposing the input to [N, spatial..., C], the
// kernel to [spatial..., I, O] and the result back. window_reversal
// reverses the kernel's spatial dims; batch_group_count B (the kernel
// gradient of a grouped convolution) is B feature groups over the input
// with its batch split into B groups moved into the channels. precision
// is ignored, as dot_general's.
func convolution(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, k, err := twoOperands(e, op)
	if err != nil {
		return nil, err
	}
	b := e.b
	get := func(name string) int {
		if err != nil {
			return 0
		}
		var v int
		v, err = smallInt(op, name)
		return v
	}
	list := func(name string) []int {
		if err != nil {
			return nil
		}
		var v []int
		v, err = optInts(op, name, nil)
		return v
	}
	inB, inF, inS := get("input_batch_dimension"), get("input_feature_dimension"), list("input_spatial_dimensions")
	kI, kO, kS := get("kernel_input_feature_dimension"), get("kernel_output_feature_dimension"), list("kernel_spatial_dimensions")
	outB, outF, outS := get("output_batch_dimension"), get("output_feature_dimension"), list("output_spatial_dimensions")
	groups, batchGroups := get("feature_group_count"), get("batch_group_count")
	if err != nil {
		return nil, err
	}
	ns := len(inS)
	if len(kS) != ns || len(outS) != ns {
		return nil, invalid(op, "spatial dims %v, %v, %v differ in number", inS, kS, outS)
	}
	var a ir.ConvAttrs
	if a.Strides, err = optInts(op, "window_strides", filled(ns, 1)); err != nil {
		return nil, err
	}
	if a.LhsDilation, err = optInts(op, "lhs_dilation", filled(ns, 1)); err != nil {
		return nil, err
	}
	if a.RhsDilation, err = optInts(op, "rhs_dilation", filled(ns, 1)); err != nil {
		return nil, err
	}
	if a.Padding, err = pairs(op, "padding", ns); err != nil {
		return nil, err
	}
	reversal, err := optInts(op, "window_reversal", make([]int, ns))
	if err != nil {
		return nil, err
	}
	if len(a.Strides) != ns || len(a.LhsDilation) != ns || len(a.RhsDilation) != ns || len(reversal) != ns {
		return nil, invalid(op, "window attributes do not have one entry per spatial dim (%d)", ns)
	}
	xr, kr := b.Type(x).Shape.Rank(), b.Type(k).Shape.Rank()
	inPerm := append(append([]int{inB}, inS...), inF)
	kPerm := append(append(append([]int{}, kS...), kI), kO)
	if !ir.IsPermutation(inPerm, xr) || !ir.IsPermutation(kPerm, kr) {
		return nil, invalid(op, "dimension numbers do not fit input %v and kernel %v", b.Type(x), b.Type(k))
	}
	complexConv := isComplexContraction(e, op, x, k)
	out := ir.C64
	rt, err := resultType(op, 0)
	if err != nil {
		return nil, err
	}
	// Bool operands into a bool result: XLA's OR of ANDs, as a float32
	// count of the pairs both true, compared with 0 (a sum of ones and
	// zeros is 0 only when every term is, however float32 rounds it).
	boolConv := b.Type(x).DType == ir.Bool && b.Type(k).DType == ir.Bool && rt.DType == ir.Bool
	switch {
	case boolConv:
		x, k, out = b.Convert(x, ir.F32), b.Convert(k, ir.F32), ir.Bool
	case !complexConv:
		if x, k, out, err = contractOperands(e, op, x, k); err != nil {
			return nil, err
		}
	}
	intConv := !complexConv && b.Type(x).DType.IsInt()
	if d := b.Type(x).DType; !d.IsFloat() && !complexConv && !intConv {
		return nil, unsupported(op, "a convolution of %v", d)
	}
	if d := b.Type(x).DType; intConv && d.Size() > 4 {
		return nil, unsupported(op, "a convolution of %v (integers are convolved exactly in float64 up to 32 bits)", d)
	}
	x, k = b.Transpose(x, inPerm), b.Transpose(k, kPerm)
	var rev []int
	for i, r := range reversal {
		if r != 0 {
			rev = append(rev, i)
		}
	}
	k = b.Reverse(k, rev)
	// No spatial dims (jax's conv of [N, C] by [O, I]: a matmul with
	// feature groups): one spatial dim of size 1 is put in, and taken out
	// of the result.
	unit := ns == 0
	if unit {
		xs, ks := b.Type(x).Shape, b.Type(k).Shape
		x = b.Reshape(x, ir.Shape{xs[0], 1, xs[1]})
		k = b.Reshape(k, ir.Shape{1, ks[0], ks[1]})
		ns = 1
		a.Strides, a.LhsDilation, a.RhsDilation, a.Padding = []int{1}, []int{1}, []int{1}, make([][2]int, 1)
	}
	a.FeatureGroups = groups
	if batchGroups < 1 || groups < 1 {
		return nil, invalid(op, "feature_group_count %d, batch_group_count %d", groups, batchGroups)
	}
	if batchGroups > 1 {
		if groups != 1 {
			return nil, invalid(op, "both feature_group_count %d and batch_group_count %d above 1", groups, batchGroups)
		}
		s := b.Type(x).Shape
		n, c := s[0], s[ns+1]
		if n%batchGroups != 0 {
			return nil, invalid(op, "batch %d not divisible by batch_group_count %d", n, batchGroups)
		}
		split := append(ir.Shape{batchGroups, n / batchGroups}, s[1:]...)
		x = b.Reshape(x, split)
		perm := []int{1}
		for i := range ns {
			perm = append(perm, 2+i)
		}
		perm = append(perm, 0, ns+2)
		x = b.Transpose(x, perm)
		merged := append(ir.Shape{n / batchGroups}, s[1:ns+1]...)
		x = b.Reshape(x, append(merged, batchGroups*c))
		a.FeatureGroups = batchGroups
	}
	var y ir.Value
	conv := func(p, q ir.Value) ir.Value { return b.Convolution(p, q, a) }
	switch {
	case complexConv:
		ys, err := complexContract(e, op, x, k, conv)
		if err != nil {
			return nil, err
		}
		y = ys[0]
	case intConv:
		y = intConvolution(b, x, k, conv)
	default:
		y = conv(x, k)
	}
	if err := e.built(op); err != nil {
		return nil, err // the window does not fit the input, say
	}
	if unit {
		ys := b.Type(y).Shape
		y = b.Reshape(y, ir.Shape{ys[0], ys[2]})
		ns = 0
	}
	outPerm := make([]int, ns+2)
	if !ir.IsPermutation(append(append([]int{outB}, outS...), outF), ns+2) {
		return nil, invalid(op, "output dimension numbers %d, %v, %d", outB, outS, outF)
	}
	outPerm[outB], outPerm[outF] = 0, ns+1
	for i, d := range outS {
		outPerm[d] = 1 + i
	}
	y = b.Transpose(y, outPerm)
	if boolConv {
		return one(b.Compare(ir.CmpNE, y, floatConst(b, ir.F32, b.Type(y).Shape, 0))), nil
	}
	return one(b.Convert(y, out)), nil
}

// intConvolution convolves integers exactly, with XLA's wrapping, through
// float64 convolutions (the IR convolves floats only): 8- and 16-bit
// operands directly (every product and partial sum is an integer below
// 2^53), 32-bit ones split into 16-bit halves, x = h 2^16 + l, so that
// x k = l_x l_k + 2^16 (h_x l_k + l_x h_k) mod 2^32, three convolutions of
// exact sums joined in int64. The Metal driver refuses float64, so there
// integer convolutions are refused too.
func intConvolution(b *ir.Builder, x, k ir.Value, conv func(p, q ir.Value) ir.Value) ir.Value {
	d := b.Type(x).DType
	exact := func(p, q ir.Value) ir.Value {
		return b.Convert(conv(b.Convert(p, ir.F64), b.Convert(q, ir.F64)), ir.I64)
	}
	if d.Size() <= 2 {
		return b.Convert(exact(x, k), d) // int64 to narrower wraps
	}
	halves := func(v ir.Value) (hi, lo ir.Value) {
		w := b.Convert(v, ir.I64) // sign- or zero-extends, as v's type is
		s := b.Type(w).Shape
		return b.Binary(ir.OpShiftRightArithmetic, w, intConst(b, ir.I64, s, 16)), b.Binary(ir.OpAnd, w, intConst(b, ir.I64, s, 0xFFFF))
	}
	xh, xl := halves(x)
	kh, kl := halves(k)
	low := exact(xl, kl)
	mid := b.Binary(ir.OpAdd, exact(xh, kl), exact(xl, kh))
	s := b.Type(low).Shape
	return b.Convert(b.Binary(ir.OpAdd, low, b.Binary(ir.OpShiftLeft, mid, intConst(b, ir.I64, s, 16))), d)
}

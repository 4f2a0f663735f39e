//go:build darwin

package metal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/progrium/darwinkit/macos/mps"
	"github.com/progrium/darwinkit/macos/mpsgraph"

	"github.com/metalplug/metalplug/backend/ir"
)

// tensor is an MPSGraph tensor: a symbolic value of the graph being built.
type tensor = mpsgraph.Tensor

// How IR values live in the graph ("physical" form):
//
//   - float16 and bfloat16 compute in float32, rounded back to their type
//     after every op that could produce more precision (roundHalf), which is
//     what the host driver does; they are converted at the edges only.
//     bfloat16 travels as int16 bits, since darwinkit's SDK (and MPSGraph
//     before macOS 14) has no bfloat16 type.
//   - complex64 is float32 with a trailing dimension of 2 (real, imaginary):
//     exactly its memory layout, so data movement works unchanged and FFT
//     works on real arithmetic.
//   - bool is uint8 holding 0 or 1: every MPSGraph op handles uint8, not all
//     handle MPSDataTypeBool; a stray nonzero byte from the frontend
//     becomes 1 when loaded, as on the host driver.
//   - a scalar (rank 0) has shape [1]: MPSGraph tensors and tensor data want
//     at least one dimension.
//   - a value with no elements has no tensor at all (val.empty): MPSGraph
//     rejects empty tensors, and ops whose result is not empty although an
//     operand is (pad, reduce over an empty axis, concat) handle it.

// val is a lowered IR value.
type val struct {
	t     tensor
	typ   ir.TensorType
	empty bool
}

// lowering builds one MPSGraph from one IR program.
type lowering struct {
	d     *Driver
	g     mpsgraph.Graph
	p     *ir.Program
	vals  []val
	feat  features
	instr int // the instruction being lowered, for errors
}

// fallbackError says an instruction cannot be lowered exactly, so the
// program must run on the CPU.
type fallbackError struct {
	op     ir.Op
	reason string
}

func (e *fallbackError) Error() string { return fmt.Sprintf("%s: %s", e.op, e.reason) }

func fallback(op ir.Op, format string, args ...any) error {
	return &fallbackError{op: op, reason: fmt.Sprintf(format, args...)}
}

func isFallback(err error) bool {
	var fb *fallbackError
	return errors.As(err, &fb)
}

// physType is the MPS data type a value computes in.
func physType(d ir.DType) (mps.DataType, error) {
	switch d {
	case ir.F32, ir.F16, ir.BF16, ir.C64:
		return mps.DataTypeFloat32, nil
	case ir.I8:
		return mps.DataTypeInt8, nil
	case ir.I16:
		return mps.DataTypeInt16, nil
	case ir.I32:
		return mps.DataTypeInt32, nil
	case ir.I64:
		return mps.DataTypeInt64, nil
	case ir.U8, ir.Bool:
		return mps.DataTypeUInt8, nil
	case ir.U32:
		return mps.DataTypeUInt32, nil
	}
	return 0, fmt.Errorf("dtype %v is not supported by Metal", d)
}

// storageType is the MPS data type of a value's bytes in memory.
func storageType(d ir.DType) (mps.DataType, error) {
	switch d {
	case ir.F16:
		return mps.DataTypeFloat16, nil
	case ir.BF16:
		return mps.DataTypeInt16, nil
	}
	return physType(d)
}

// physShape is the shape of a value's tensor.
func physShape(t ir.TensorType) []int {
	s := []int(t.Shape.Clone())
	if t.DType == ir.C64 {
		s = append(s, 2)
	}
	if len(s) == 0 {
		s = []int{1}
	}
	return s
}

// mustPhys is physType for dtypes already validated.
func mustPhys(d ir.DType) mps.DataType {
	t, err := physType(d)
	if err != nil {
		panic(err)
	}
	return t
}

// --- graph operations -------------------------------------------------------
//
// Thin wrappers, so that lowerings read as arithmetic. darwinkit's generated
// methods are used where v0.5.0 converts their arguments correctly (tensors,
// numbers, strings, slices of objects); msg sends the rest (see objc.go).

func (l *lowering) add(a, b tensor) tensor {
	return l.g.AdditionWithPrimaryTensorSecondaryTensorName(a, b, "")
}
func (l *lowering) sub(a, b tensor) tensor {
	return l.g.SubtractionWithPrimaryTensorSecondaryTensorName(a, b, "")
}
func (l *lowering) mul(a, b tensor) tensor {
	return l.g.MultiplicationWithPrimaryTensorSecondaryTensorName(a, b, "")
}
func (l *lowering) div(a, b tensor) tensor {
	return l.g.DivisionWithPrimaryTensorSecondaryTensorName(a, b, "")
}
func (l *lowering) floorMod(a, b tensor) tensor {
	return l.g.FloorModuloWithPrimaryTensorSecondaryTensorName(a, b, "")
}
func (l *lowering) maxNaN(a, b tensor) tensor {
	return l.g.MaximumWithNaNPropagationWithPrimaryTensorSecondaryTensorName(a, b, "")
}
func (l *lowering) minNaN(a, b tensor) tensor {
	return l.g.MinimumWithNaNPropagationWithPrimaryTensorSecondaryTensorName(a, b, "")
}
func (l *lowering) maximum(a, b tensor) tensor {
	return l.g.MaximumWithPrimaryTensorSecondaryTensorName(a, b, "")
}
func (l *lowering) minimum(a, b tensor) tensor {
	return l.g.MinimumWithPrimaryTensorSecondaryTensorName(a, b, "")
}
func (l *lowering) pow(a, b tensor) tensor {
	return l.g.PowerWithPrimaryTensorSecondaryTensorName(a, b, "")
}
func (l *lowering) eq(a, b tensor) tensor {
	return l.g.EqualWithPrimaryTensorSecondaryTensorName(a, b, "")
}
func (l *lowering) ne(a, b tensor) tensor {
	return l.g.NotEqualWithPrimaryTensorSecondaryTensorName(a, b, "")
}
func (l *lowering) lt(a, b tensor) tensor {
	return l.g.LessThanWithPrimaryTensorSecondaryTensorName(a, b, "")
}
func (l *lowering) le(a, b tensor) tensor {
	return l.g.LessThanOrEqualToWithPrimaryTensorSecondaryTensorName(a, b, "")
}
func (l *lowering) gt(a, b tensor) tensor {
	return l.g.GreaterThanWithPrimaryTensorSecondaryTensorName(a, b, "")
}
func (l *lowering) ge(a, b tensor) tensor {
	return l.g.GreaterThanOrEqualToWithPrimaryTensorSecondaryTensorName(a, b, "")
}

// land, lor and lnot are logical ops on MPSDataTypeBool tensors.
func (l *lowering) land(a, b tensor) tensor {
	return l.g.LogicalANDWithPrimaryTensorSecondaryTensorName(a, b, "")
}
func (l *lowering) lor(a, b tensor) tensor {
	return l.g.LogicalORWithPrimaryTensorSecondaryTensorName(a, b, "")
}
func (l *lowering) lnot(a tensor) tensor { return l.g.NotWithTensorName(a, "") }
func (l *lowering) lxor(a, b tensor) tensor {
	return l.g.LogicalXORWithPrimaryTensorSecondaryTensorName(a, b, "")
}

// sel picks a where the MPSDataTypeBool predicate p holds, else b.
func (l *lowering) sel(p, a, b tensor) tensor {
	return l.g.SelectWithPredicateTensorTruePredicateTensorFalsePredicateTensorName(p, a, b, "")
}

func (l *lowering) neg(x tensor) tensor      { return l.g.NegativeWithTensorName(x, "") }
func (l *lowering) absf(x tensor) tensor     { return l.g.AbsoluteWithTensorName(x, "") }
func (l *lowering) exp(x tensor) tensor      { return l.g.ExponentWithTensorName(x, "") }
func (l *lowering) log(x tensor) tensor      { return l.g.LogarithmWithTensorName(x, "") }
func (l *lowering) floor(x tensor) tensor    { return l.g.FloorWithTensorName(x, "") }
func (l *lowering) ceil(x tensor) tensor     { return l.g.CeilWithTensorName(x, "") }
func (l *lowering) isNaN(x tensor) tensor    { return l.g.IsNaNWithTensorName(x, "") }
func (l *lowering) isFinite(x tensor) tensor { return l.g.IsFiniteWithTensorName(x, "") }
func (l *lowering) identity(x tensor) tensor { return l.g.IdentityWithTensorName(x, "") }

func (l *lowering) cast(x tensor, dt mps.DataType) tensor {
	if x.DataType() == dt {
		return x
	}
	return l.g.CastTensorToTypeName(x, dt, "")
}

// scalar is a constant that broadcasts against any shape. float64 holds every
// value up to 2^53 exactly; intConst covers the rest of int64.
func (l *lowering) scalar(v float64, dt mps.DataType) tensor {
	return l.g.ConstantWithScalarDataType(v, dt)
}

// intConst is an exact integer constant of shape [1].
func (l *lowering) intConst(v int64, dt mps.DataType) tensor {
	if dt != mps.DataTypeInt64 || (v > -(1<<53) && v < 1<<53) {
		return l.scalar(float64(v), dt)
	}
	b := binary.LittleEndian.AppendUint64(nil, uint64(v))
	return l.constBytes(b, []int{1}, dt)
}

// full is a constant of the given shape with every element v.
func (l *lowering) full(v float64, shape []int, dt mps.DataType) tensor {
	return msg[tensor](l.g, "constantWithScalar:shape:dataType:", v, nsInts(shape), dt)
}

// constBytes is a constant from row-major little-endian bytes.
func (l *lowering) constBytes(data []byte, shape []int, dt mps.DataType) tensor {
	return msg[tensor](l.g, "constantWithData:shape:dataType:", data, nsInts(shape), dt)
}

func (l *lowering) placeholder(shape []int, dt mps.DataType) tensor {
	return msg[tensor](l.g, "placeholderWithShape:dataType:name:", nsInts(shape), dt, nil)
}

func (l *lowering) reshape(x tensor, shape []int) tensor {
	return msg[tensor](l.g, "reshapeTensor:withShape:name:", x, nsInts(shape), nil)
}

func (l *lowering) broadcastTo(x tensor, shape []int) tensor {
	return msg[tensor](l.g, "broadcastTensor:toShape:name:", x, nsInts(shape), nil)
}

// transpose makes result dim i operand dim perm[i], by swapping pairs of
// dimensions: transposeTensor:permutation: is macOS 13, the swap is 11.
func (l *lowering) transpose(x tensor, perm []int) tensor {
	cur := make([]int, len(perm))
	for i := range cur {
		cur[i] = i
	}
	for i, want := range perm {
		j := i
		for cur[j] != want {
			j++
		}
		if j != i {
			x = l.g.TransposeTensorDimensionWithDimensionName(x, uint(i), uint(j), "")
			cur[i], cur[j] = cur[j], cur[i]
		}
	}
	return x
}

func (l *lowering) slice(x tensor, starts, ends, strides []int) tensor {
	return l.g.SliceTensorStartsEndsStridesName(x, numbers(starts), numbers(ends), numbers(strides), "")
}

func (l *lowering) concat(xs []tensor, axis int) tensor {
	if len(xs) == 1 {
		return xs[0]
	}
	its := make([]mpsgraph.ITensor, len(xs))
	for i, x := range xs {
		its[i] = x
	}
	return l.g.ConcatTensorsDimensionName(its, axis, "")
}

// padConst pads with non-negative low and high amounts and a constant.
func (l *lowering) padConst(x tensor, low, high []int, v float64) tensor {
	return msg[tensor](l.g, "padTensor:withPaddingMode:leftPadding:rightPadding:constantValue:name:",
		x, mpsgraph.PaddingModeConstant, nsInts(low), nsInts(high), v, nil)
}

func (l *lowering) reverse(x tensor, axes []int) tensor {
	return l.g.ReverseTensorAxesName(x, numbers(axes), "")
}

func (l *lowering) matmul(a, b tensor) tensor {
	return l.g.MatrixMultiplicationWithPrimaryTensorSecondaryTensorName(a, b, "")
}

// Reductions keep the reduced dimensions with size 1.
func (l *lowering) reduceSum(x tensor, axes []int) tensor {
	return l.g.ReductionSumWithTensorAxesName(x, numbers(axes), "")
}
func (l *lowering) reduceProd(x tensor, axes []int) tensor {
	return l.g.ReductionProductWithTensorAxesName(x, numbers(axes), "")
}
func (l *lowering) reduceMaxNaN(x tensor, axes []int) tensor {
	return l.g.ReductionMaximumPropagateNaNWithTensorAxesName(x, numbers(axes), "")
}
func (l *lowering) reduceMinNaN(x tensor, axes []int) tensor {
	return l.g.ReductionMinimumPropagateNaNWithTensorAxesName(x, numbers(axes), "")
}
func (l *lowering) reduceMax(x tensor, axes []int) tensor {
	return l.g.ReductionMaximumWithTensorAxesName(x, numbers(axes), "")
}
func (l *lowering) reduceMin(x tensor, axes []int) tensor {
	return l.g.ReductionMinimumWithTensorAxesName(x, numbers(axes), "")
}

// Methods of newer macOS releases than darwinkit's SDK, sent by selector;
// callers check l.feat first.

func (l *lowering) band(a, b tensor) tensor {
	return msg[tensor](l.g, "bitwiseANDWithPrimaryTensor:secondaryTensor:name:", a, b, nil)
}
func (l *lowering) bor(a, b tensor) tensor {
	return msg[tensor](l.g, "bitwiseORWithPrimaryTensor:secondaryTensor:name:", a, b, nil)
}
func (l *lowering) bxor(a, b tensor) tensor {
	return msg[tensor](l.g, "bitwiseXORWithPrimaryTensor:secondaryTensor:name:", a, b, nil)
}
func (l *lowering) shl(a, b tensor) tensor {
	return msg[tensor](l.g, "bitwiseLeftShiftWithPrimaryTensor:secondaryTensor:name:", a, b, nil)
}
func (l *lowering) shr(a, b tensor) tensor {
	return msg[tensor](l.g, "bitwiseRightShiftWithPrimaryTensor:secondaryTensor:name:", a, b, nil)
}
func (l *lowering) reinterpret(x tensor, dt mps.DataType) tensor {
	return msg[tensor](l.g, "reinterpretCastTensor:toType:name:", x, dt, nil)
}
func (l *lowering) argSort(x tensor, axis int) tensor {
	return msg[tensor](l.g, "argSortWithTensor:axis:descending:name:", x, axis, false, nil)
}
func (l *lowering) cumsum(x tensor, axis int) tensor {
	return msg[tensor](l.g, "cumulativeSumWithTensor:axis:name:", x, axis, nil)
}

// --- value conversions --------------------------------------------------------

// load converts a placeholder of storage type into the physical form.
func (l *lowering) load(x tensor, d ir.DType) (tensor, error) {
	switch d {
	case ir.F16:
		return l.cast(x, mps.DataTypeFloat32), nil
	case ir.BF16:
		if !l.feat.reinterpret {
			return x, fallback(ir.OpParameter, "bfloat16 needs reinterpretCastTensor (macOS 13.2)")
		}
		// The bits, zero-extended, become the upper half of a float32.
		w := l.cast(x, mps.DataTypeInt32)
		w = l.sel(l.lt(w, l.scalar(0, mps.DataTypeInt32)), l.add(w, l.scalar(65536, mps.DataTypeInt32)), w)
		w = l.mul(w, l.scalar(65536, mps.DataTypeInt32)) // wraps into the sign bit, as intended
		return l.reinterpret(w, mps.DataTypeFloat32), nil
	case ir.Bool:
		return l.boolToU8(l.ne(x, l.scalar(0, mps.DataTypeUInt8))), nil
	}
	return x, nil
}

// store converts a physical value into its storage type.
func (l *lowering) store(x tensor, d ir.DType) (tensor, error) {
	switch d {
	case ir.F16:
		return l.cast(x, mps.DataTypeFloat16), nil
	case ir.BF16:
		if !l.feat.reinterpret || !l.feat.bitwise {
			return x, fallback(ir.OpParameter, "bfloat16 needs reinterpretCastTensor and bitwise ops (macOS 13.2)")
		}
		bits := l.bf16RoundBits(x)
		// The upper half, as a signed 16-bit value, is in int16's range:
		// the cast is exact.
		hi := l.shr(bits, l.scalar(16, mps.DataTypeInt32))
		return l.cast(hi, mps.DataTypeInt16), nil
	}
	return l.identity(x), nil
}

// bf16RoundBits is the float32 bit pattern of x rounded to bfloat16's 8
// significant bits, to nearest even, with NaN kept a quiet NaN (what
// ir.F32ToBF16 does): bits + 0x7fff + (bit 16), low half cleared.
func (l *lowering) bf16RoundBits(x tensor) tensor {
	i32 := mps.DataTypeInt32
	bits := l.reinterpret(x, i32)
	lsb := l.band(l.shr(bits, l.scalar(16, i32)), l.scalar(1, i32))
	r := l.add(l.add(bits, l.scalar(0x7fff, i32)), lsb)
	r = l.band(r, l.intConst(-65536, i32)) // 0xffff0000
	nan := l.bor(l.band(bits, l.intConst(-65536, i32)), l.scalar(0x00400000, i32))
	return l.sel(l.isNaN(x), nan, r)
}

// roundHalf rounds a float32 value to what a half type holds, after an op
// that may have produced more precision, so that values match the host
// driver's (which stores every result in its dtype).
func (l *lowering) roundHalf(x tensor, d ir.DType) (tensor, error) {
	switch d {
	case ir.F16:
		return l.cast(l.cast(x, mps.DataTypeFloat16), mps.DataTypeFloat32), nil
	case ir.BF16:
		if !l.feat.reinterpret || !l.feat.bitwise {
			return x, fallback(ir.OpConvert, "bfloat16 needs reinterpretCastTensor and bitwise ops (macOS 13.2)")
		}
		return l.reinterpret(l.bf16RoundBits(x), mps.DataTypeFloat32), nil
	}
	return x, nil
}

// boolToU8 turns an MPSDataTypeBool tensor (what comparisons give) into the
// physical bool, uint8 0 or 1.
func (l *lowering) boolToU8(b tensor) tensor { return l.cast(b, mps.DataTypeUInt8) }

// pred turns a physical bool into an MPSDataTypeBool predicate.
func (l *lowering) pred(x tensor) tensor { return l.ne(x, l.scalar(0, mps.DataTypeUInt8)) }

// zeros is a tensor of zeros of an IR type, in physical form.
func (l *lowering) zeros(t ir.TensorType) tensor { return l.full(0, physShape(t), mustPhys(t.DType)) }

// fill is a tensor of an IR type with every element v (physical form).
func (l *lowering) fill(t ir.TensorType, v float64) tensor {
	return l.full(v, physShape(t), mustPhys(t.DType))
}

// toShape reshapes a physical value to an IR type's physical shape.
func (l *lowering) toShape(x tensor, t ir.TensorType) tensor { return l.reshape(x, physShape(t)) }

// --- the program -------------------------------------------------------------

// lowerInstr lowers one instruction; args are its operands' values.
func (l *lowering) lowerInstr(in ir.Instr, args []val) (val, error) {
	out := val{typ: in.Type}
	if in.Type.Shape.Size() == 0 {
		out.empty = true
		return out, nil
	}
	for _, a := range args {
		if a.empty {
			t, err := l.lowerWithEmpty(in, args)
			out.t = t
			return out, err
		}
	}
	lower, ok := lowerings[in.Op]
	if !ok {
		return out, fallback(in.Op, "no lowering")
	}
	t, err := lower(l, in, args)
	if err != nil {
		return out, err
	}
	if !exactOnHalves[in.Op] && (in.Type.DType == ir.F16 || in.Type.DType == ir.BF16) {
		t, err = l.roundHalf(t, in.Type.DType)
	}
	out.t = t
	return out, err
}

// exactOnHalves are ops whose results are operand elements (or exact
// functions of them), so a half-typed result needs no rounding.
var exactOnHalves = map[ir.Op]bool{
	ir.OpParameter: true, ir.OpConstant: true, ir.OpNeg: true, ir.OpAbs: true,
	ir.OpFloor: true, ir.OpCeil: true, ir.OpSign: true, ir.OpRound: true, ir.OpMax: true, ir.OpMin: true,
	ir.OpSelect: true, ir.OpBroadcastInDim: true, ir.OpReshape: true, ir.OpTranspose: true, ir.OpSlice: true,
	ir.OpConcat: true, ir.OpPad: true, ir.OpReverse: true, ir.OpGather: true, ir.OpSort: true,
	ir.OpCompare: true, ir.OpArgSort: true, ir.OpArgReduce: true,
}

// lowerWithEmpty handles an instruction with an empty operand and a
// non-empty result.
func (l *lowering) lowerWithEmpty(in ir.Instr, args []val) (tensor, error) {
	switch in.Op {
	case ir.OpConcat:
		var xs []tensor
		for _, a := range args {
			if !a.empty {
				xs = append(xs, a.t)
			}
		}
		return l.concat(xs, in.Axes[0]), nil
	case ir.OpPad: // all padding
		if args[1].empty {
			break
		}
		return l.broadcastTo(args[1].t, physShape(in.Type)), nil
	case ir.OpReduce, ir.OpReduceWindow: // folds of nothing: the identity
		if d := in.Type.DType; d.IsInt() && (in.Reduce == ir.ReduceMax || in.Reduce == ir.ReduceMin) {
			// Exact: int64's highest value has no float64 form.
			return l.broadcastTo(l.extremeConst(d, in.Reduce == ir.ReduceMin), physShape(in.Type)), nil
		}
		return l.fill(in.Type, reduceIdentity(in.Reduce, in.Type.DType)), nil
	case ir.OpDotGeneral, ir.OpConvolution: // empty sums
		return l.zeros(in.Type), nil
	case ir.OpScatter: // no updates: the operand
		if !args[0].empty {
			return l.identity(args[0].t), nil
		}
	case ir.OpSelectAndScatter: // no windows: nothing to add
		return l.zeros(in.Type), nil
	}
	return tensor{}, fallback(in.Op, "an empty operand with a non-empty result")
}

// reduceIdentity is the value a fold of nothing gives.
func reduceIdentity(k ir.ReduceKind, d ir.DType) float64 {
	switch k {
	case ir.ReduceSum, ir.ReduceOr:
		return 0
	case ir.ReduceProd, ir.ReduceAnd:
		return 1
	case ir.ReduceMax:
		lo, _ := d.Range()
		return lo
	case ir.ReduceMin:
		_, hi := d.Range()
		return hi
	}
	return 0
}

// extremeConst is the exact lowest or highest value of d as a constant.
func (l *lowering) extremeConst(d ir.DType, high bool) tensor {
	dt := mustPhys(d)
	if d == ir.I64 {
		if high {
			return l.intConst(math.MaxInt64, dt)
		}
		return l.intConst(math.MinInt64, dt)
	}
	lo, hi := d.Range()
	if high {
		return l.scalar(hi, dt)
	}
	return l.scalar(lo, dt)
}

// describe names an instruction with its operand and result types, for
// errors.
func describe(p *ir.Program, i int) string {
	in := p.Instrs[i]
	parts := make([]string, len(in.Args))
	for j, a := range in.Args {
		parts[j] = p.Instrs[a].Type.String()
	}
	return fmt.Sprintf("instruction %%%d: %s(%s) -> %v", i, in.Op, strings.Join(parts, ", "), in.Type)
}

// lowerFunc lowers one instruction whose operands and result are not empty.
type lowerFunc func(l *lowering, in ir.Instr, args []val) (tensor, error)

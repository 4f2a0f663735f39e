package metal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
	"github.com/metalplug/metalplug/backend/ir"
)

// tensor is a value of the graph being built, its shape and type known in Go.
type tensor = gpu.Tensor

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

// val is a lowered IR value. An instruction that yields several results
// (Instr.Tuple: reduce_region, sort_region) is a val holding one per
// result, which get_result takes apart.
type val struct {
	t     tensor
	typ   ir.TensorType
	empty bool
	parts []val // the results of an instruction of several, which get_result takes apart (tuple.go)
}

// lowering builds one MPSGraph from one IR program.
type lowering struct {
	d     *Driver
	g     *gpu.Graph
	p     *ir.Program
	vals  []val
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
func physType(d ir.DType) (gpu.DataType, error) {
	switch d {
	case ir.F32, ir.F16, ir.BF16, ir.C64:
		return gpu.Float32, nil
	case ir.I8:
		return gpu.Int8, nil
	case ir.I16:
		return gpu.Int16, nil
	case ir.I32:
		return gpu.Int32, nil
	case ir.I64:
		return gpu.Int64, nil
	case ir.U8, ir.Bool:
		return gpu.UInt8, nil
	case ir.U32:
		return gpu.UInt32, nil
	}
	return 0, fmt.Errorf("dtype %v is not supported by Metal", d)
}

// storageType is the MPS data type of a value's bytes in memory.
func storageType(d ir.DType) (gpu.DataType, error) {
	switch d {
	case ir.F16:
		return gpu.Float16, nil
	case ir.BF16:
		return gpu.Int16, nil
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
func mustPhys(d ir.DType) gpu.DataType {
	t, err := physType(d)
	if err != nil {
		panic(err)
	}
	return t
}

// --- graph operations -------------------------------------------------------
//
// Thin wrappers over the primitives, so that lowerings read as arithmetic.
// Every call is checked against MPSGraph's contract (package gpu); the
// first violation is the lowering's error.

func (l *lowering) add(a, b tensor) tensor      { return l.g.Addition(a, b) }
func (l *lowering) sub(a, b tensor) tensor      { return l.g.Subtraction(a, b) }
func (l *lowering) mul(a, b tensor) tensor      { return l.g.Multiplication(a, b) }
func (l *lowering) div(a, b tensor) tensor      { return l.g.Division(a, b) }
func (l *lowering) floorMod(a, b tensor) tensor { return l.g.FloorModulo(a, b) }
func (l *lowering) maxNaN(a, b tensor) tensor   { return l.g.MaximumNaN(a, b) }
func (l *lowering) minNaN(a, b tensor) tensor   { return l.g.MinimumNaN(a, b) }
func (l *lowering) maximum(a, b tensor) tensor  { return l.g.Maximum(a, b) }
func (l *lowering) minimum(a, b tensor) tensor  { return l.g.Minimum(a, b) }
func (l *lowering) pow(a, b tensor) tensor      { return l.g.Power(a, b) }
func (l *lowering) eq(a, b tensor) tensor       { return l.g.Equal(a, b) }
func (l *lowering) ne(a, b tensor) tensor       { return l.g.NotEqual(a, b) }
func (l *lowering) lt(a, b tensor) tensor       { return l.g.LessThan(a, b) }
func (l *lowering) le(a, b tensor) tensor       { return l.g.LessThanOrEqual(a, b) }
func (l *lowering) gt(a, b tensor) tensor       { return l.g.GreaterThan(a, b) }
func (l *lowering) ge(a, b tensor) tensor       { return l.g.GreaterThanOrEqual(a, b) }

// land, lor, lxor and lnot are logical ops on bool tensors.
func (l *lowering) land(a, b tensor) tensor { return l.g.LogicalAND(a, b) }
func (l *lowering) lor(a, b tensor) tensor  { return l.g.LogicalOR(a, b) }
func (l *lowering) lxor(a, b tensor) tensor { return l.g.LogicalXOR(a, b) }
func (l *lowering) lnot(a tensor) tensor    { return l.g.Not(a) }

// sel picks a where the bool predicate p holds, else b.
func (l *lowering) sel(p, a, b tensor) tensor { return l.g.Select(p, a, b) }

func (l *lowering) neg(x tensor) tensor      { return l.g.Negative(x) }
func (l *lowering) absf(x tensor) tensor     { return l.g.Absolute(x) }
func (l *lowering) exp(x tensor) tensor      { return l.g.Exponent(x) }
func (l *lowering) log(x tensor) tensor      { return l.g.Logarithm(x) }
func (l *lowering) floor(x tensor) tensor    { return l.g.Floor(x) }
func (l *lowering) ceil(x tensor) tensor     { return l.g.Ceil(x) }
func (l *lowering) isNaN(x tensor) tensor    { return l.g.IsNaN(x) }
func (l *lowering) isFinite(x tensor) tensor { return l.g.IsFinite(x) }
func (l *lowering) identity(x tensor) tensor { return l.g.Identity(x) }

func (l *lowering) cast(x tensor, dt gpu.DataType) tensor {
	if x.DType == dt {
		return x
	}
	return l.g.Cast(x, dt)
}

// scalar is a constant that broadcasts against any shape. float64 holds every
// value up to 2^53 exactly; intConst covers the rest of int64.
func (l *lowering) scalar(v float64, dt gpu.DataType) tensor { return l.g.Scalar(v, dt) }

// intConst is an exact integer constant of shape [1].
func (l *lowering) intConst(v int64, dt gpu.DataType) tensor {
	if dt != gpu.Int64 || (v > -(1<<53) && v < 1<<53) {
		return l.scalar(float64(v), dt)
	}
	b := binary.LittleEndian.AppendUint64(nil, uint64(v))
	return l.constBytes(b, []int{1}, dt)
}

// full is a constant of the given shape with every element v.
func (l *lowering) full(v float64, shape []int, dt gpu.DataType) tensor {
	return l.g.Fill(v, shape, dt)
}

// constBytes is a constant from row-major little-endian bytes.
func (l *lowering) constBytes(data []byte, shape []int, dt gpu.DataType) tensor {
	return l.g.Constant(data, shape, dt)
}

func (l *lowering) placeholder(shape []int, dt gpu.DataType) tensor {
	return l.g.Placeholder(shape, dt)
}

func (l *lowering) reshape(x tensor, shape []int) tensor     { return l.g.Reshape(x, shape) }
func (l *lowering) broadcastTo(x tensor, shape []int) tensor { return l.g.BroadcastTo(x, shape) }

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
			x = l.g.Transpose(x, i, j)
			cur[i], cur[j] = cur[j], cur[i]
		}
	}
	return x
}

func (l *lowering) slice(x tensor, starts, ends, strides []int) tensor {
	return l.g.Slice(x, starts, ends, strides)
}

func (l *lowering) concat(xs []tensor, axis int) tensor {
	if len(xs) == 1 {
		return xs[0]
	}
	return l.g.Concat(xs, axis)
}

// padConst pads with non-negative low and high amounts and a constant.
func (l *lowering) padConst(x tensor, low, high []int, v float64) tensor {
	return l.g.Pad(x, low, high, v)
}

func (l *lowering) reverse(x tensor, axes []int) tensor { return l.g.Reverse(x, axes) }
func (l *lowering) matmul(a, b tensor) tensor           { return l.g.MatMul(a, b) }

// Reductions keep the reduced dimensions with size 1.
func (l *lowering) reduceSum(x tensor, axes []int) tensor    { return l.g.ReductionSum(x, axes) }
func (l *lowering) reduceProd(x tensor, axes []int) tensor   { return l.g.ReductionProduct(x, axes) }
func (l *lowering) reduceMaxNaN(x tensor, axes []int) tensor { return l.g.ReductionMaximumNaN(x, axes) }
func (l *lowering) reduceMinNaN(x tensor, axes []int) tensor { return l.g.ReductionMinimumNaN(x, axes) }
func (l *lowering) reduceMax(x tensor, axes []int) tensor    { return l.g.ReductionMaximum(x, axes) }
func (l *lowering) reduceMin(x tensor, axes []int) tensor    { return l.g.ReductionMinimum(x, axes) }

// Methods of newer macOS releases: callers check l.has first.

func (l *lowering) band(a, b tensor) tensor { return l.g.BitwiseAND(a, b) }
func (l *lowering) bor(a, b tensor) tensor  { return l.g.BitwiseOR(a, b) }
func (l *lowering) bxor(a, b tensor) tensor { return l.g.BitwiseXOR(a, b) }
func (l *lowering) shl(a, b tensor) tensor  { return l.g.BitwiseLeftShift(a, b) }
func (l *lowering) shr(a, b tensor) tensor  { return l.g.BitwiseRightShift(a, b) }
func (l *lowering) reinterpret(x tensor, dt gpu.DataType) tensor {
	return l.g.ReinterpretCast(x, dt)
}
func (l *lowering) argSort(x tensor, axis int) tensor { return l.g.ArgSort(x, axis) }
func (l *lowering) cumsum(x tensor, axis int) tensor  { return l.g.CumulativeSum(x, axis) }

// --- value conversions --------------------------------------------------------

// load converts a placeholder of storage type into the physical form.
func (l *lowering) load(x tensor, d ir.DType) (tensor, error) {
	switch d {
	case ir.F16:
		return l.cast(x, gpu.Float32), nil
	case ir.BF16:
		if !l.g.Has(gpu.OpReinterpretCast) {
			return x, fallback(ir.OpParameter, "bfloat16 needs reinterpretCastTensor (macOS 13.2)")
		}
		// The bits, zero-extended, become the upper half of a float32.
		w := l.cast(x, gpu.Int32)
		w = l.sel(l.lt(w, l.scalar(0, gpu.Int32)), l.add(w, l.scalar(65536, gpu.Int32)), w)
		w = l.mul(w, l.scalar(65536, gpu.Int32)) // wraps into the sign bit, as intended
		return l.reinterpret(w, gpu.Float32), nil
	case ir.Bool:
		return l.boolToU8(l.ne(x, l.scalar(0, gpu.UInt8))), nil
	}
	return x, nil
}

// store converts a physical value into its storage type.
func (l *lowering) store(x tensor, d ir.DType) (tensor, error) {
	switch d {
	case ir.F16:
		return l.cast(x, gpu.Float16), nil
	case ir.BF16:
		if !l.g.Has(gpu.OpReinterpretCast) {
			return x, fallback(ir.OpParameter, "bfloat16 needs reinterpretCastTensor (macOS 13.2)")
		}
		bits := l.bf16RoundBits(x)
		// The upper half, as a signed 16-bit value, is in int16's range:
		// the cast is exact.
		hi := l.shr(bits, l.scalar(16, gpu.Int32))
		return l.cast(hi, gpu.Int16), nil
	}
	return l.identity(x), nil
}

// bf16RoundBits is the float32 bit pattern of x rounded to bfloat16's 8
// significant bits, to nearest even: bits + 0x7fff + (bit 16), low half
// cleared. A NaN keeps its sign and the top of its payload, made quiet only
// if nothing of the payload is left (which would be an infinity), so that a
// bfloat16 NaN's bits (a signalling one's, bitcast from integers) survive.
func (l *lowering) bf16RoundBits(x tensor) tensor {
	i32 := gpu.Int32
	bits := l.reinterpret(x, i32)
	lsb := l.band(l.shr(bits, l.scalar(16, i32)), l.scalar(1, i32))
	r := l.add(l.add(bits, l.scalar(0x7fff, i32)), lsb)
	r = l.band(r, l.intConst(-65536, i32)) // 0xffff0000
	top := l.band(bits, l.intConst(-65536, i32))
	empty := l.eq(l.band(bits, l.scalar(0x007f0000, i32)), l.scalar(0, i32))
	nan := l.sel(empty, l.bor(top, l.scalar(0x00400000, i32)), top)
	return l.sel(l.isNaN(x), nan, r)
}

// roundHalf rounds a float32 value to what a half type holds, after an op
// that may have produced more precision, so that values match the host
// driver's (which stores every result in its dtype).
func (l *lowering) roundHalf(x tensor, d ir.DType) (tensor, error) {
	switch d {
	case ir.F16:
		return l.cast(l.cast(x, gpu.Float16), gpu.Float32), nil
	case ir.BF16:
		if !l.g.Has(gpu.OpReinterpretCast) {
			return x, fallback(ir.OpConvert, "bfloat16 needs reinterpretCastTensor (macOS 13.2)")
		}
		return l.reinterpret(l.bf16RoundBits(x), gpu.Float32), nil
	}
	return x, nil
}

// boolToU8 turns an MPSDataTypeBool tensor (what comparisons give) into the
// physical bool, uint8 0 or 1.
func (l *lowering) boolToU8(b tensor) tensor { return l.cast(b, gpu.UInt8) }

// pred turns a physical bool into an MPSDataTypeBool predicate.
func (l *lowering) pred(x tensor) tensor { return l.ne(x, l.scalar(0, gpu.UInt8)) }

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
	if f, ok := tupleLowerings[in.Op]; ok {
		parts, err := f(l, in, args)
		out.parts = parts
		return out, err
	}
	if in.Tuple != nil {
		// An op of several results with no lowering is the host's, even
		// when its results are empty: a host callback's are, and it runs
		// for its effect.
		return out, fallback(in.Op, "%s", notLoweredWhy(in.Op))
	}
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
		return out, fallback(in.Op, "%s", notLoweredWhy(in.Op))
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
	ir.OpCompare: true, ir.OpArgSort: true, ir.OpArgReduce: true, ir.OpSortRegion: true, ir.OpGetResult: true,
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
	case ir.OpScatter:
		// No updates: the operand. Empty indices with updates are an
		// index vector of no components: one window at the origin; where
		// it is the whole operand (jax's x.at[()].set(y)), the updates
		// combine with the operand element by element. Other such
		// windows go to the CPU below.
		if !args[0].empty && args[2].empty {
			return l.identity(args[0].t), nil
		}
		if !args[0].empty && !args[2].empty && args[1].typ.Shape.Size() == 0 &&
			args[2].typ.Shape.Equal(args[0].typ.Shape) && len(in.Scatter.InsertedWindowDims) == 0 {
			op, ok := map[ir.ScatterKind]ir.Op{ir.ScatterAdd: ir.OpAdd, ir.ScatterMul: ir.OpMul, ir.ScatterMax: ir.OpMax, ir.ScatterMin: ir.OpMin}[in.Scatter.Kind]
			if in.Scatter.Kind == ir.ScatterReplace {
				return l.identity(args[2].t), nil
			}
			if ok {
				return lowerBinary(l, ir.Instr{Op: op, Type: in.Type}, []val{args[0], args[2]})
			}
		}
	case ir.OpSelectAndScatter: // no windows: nothing to add
		return l.zeros(in.Type), nil
	case ir.OpGather:
		if !args[0].empty && args[1].typ.Shape.Size() == 0 {
			return l.gatherAtOrigin(in, args[0]), nil
		}
	}
	return tensor{}, fallback(in.Op, "an empty operand with a non-empty result")
}

// gatherAtOrigin is a gather whose index vectors have no components
// (indices [..., 0]): every start is the origin, so each batch element of
// the result is the slice of x there, its collapsed dims dropped.
func (l *lowering) gatherAtOrigin(in ir.Instr, x val) tensor {
	g, t := in.Gather, x.typ
	w := x.t
	if t.Shape.Rank() > 0 {
		zero, one := make([]int, t.Shape.Rank()), make([]int, t.Shape.Rank())
		for d := range one {
			one[d] = 1
		}
		w = l.slice(w, withComplex(t, zero, 0), withComplex(t, g.SliceSizes, 2), withComplex(t, one, 1))
	}
	// The window's dims, in the operand's order, are the result's offset
	// dims in theirs; the batch dims are 1 until broadcast.
	var window []int
	for d, s := range g.SliceSizes {
		if !slices.Contains(g.CollapsedSliceDims, d) {
			window = append(window, s)
		}
	}
	shape := make(ir.Shape, in.Type.Shape.Rank())
	for i := range shape {
		shape[i] = 1
		if k := slices.Index(g.OffsetDims, i); k >= 0 {
			shape[i] = window[k]
		}
	}
	w = l.toShape(w, ir.TensorType{DType: in.Type.DType, Shape: shape})
	return l.broadcastTo(w, physShape(in.Type))
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

// notLoweredWhy is NotLowered's reason for op, what a user reads when the
// op runs on the CPU.
func notLoweredWhy(op ir.Op) string {
	if why, ok := NotLowered[op]; ok {
		return why
	}
	return "no lowering"
}

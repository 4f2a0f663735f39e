// Package eval is the reference semantics of the IR: a slow, plain
// interpreter of programs, written from the IR's documented rules and
// independently of any driver, that the IR's tests, the lowering tests and
// the driver conformance suite share: the suite compares every driver with
// it, and its own tests hold it to the literal answers of the corpus in
// backend/ir/testdata. Floats are held as float64 (rounded to the dtype
// after each op), integers as int64 (wrapped to the dtype), bools as 0/1 in
// the integer slice, complex64 as complex128 (each part rounded to float32).
package eval

import (
	"fmt"
	"math"
	"slices"

	"github.com/metalplug/metalplug/backend/ir"
)

// Tensor is a value of the interpreter.
type Tensor struct {
	Type ir.TensorType
	F    []float64    // float dtypes
	I    []int64      // integer dtypes and bool
	C    []complex128 // complex64
}

func isIntLike(d ir.DType) bool { return d.IsInt() || d == ir.Bool }

func New(t ir.TensorType) Tensor {
	v := Tensor{Type: ir.TensorType{DType: t.DType, Shape: t.Shape.Clone()}}
	switch {
	case isIntLike(t.DType):
		v.I = make([]int64, t.Shape.Size())
	case t.DType == ir.C64:
		v.C = make([]complex128, t.Shape.Size())
	default:
		v.F = make([]float64, t.Shape.Size())
	}
	return v
}

// At is element k as a float64 (a complex64's real part).
func (v Tensor) At(k int) float64 {
	switch {
	case v.I != nil || isIntLike(v.Type.DType):
		return float64(v.I[k])
	case v.C != nil:
		return real(v.C[k])
	}
	return v.F[k]
}

// roundC rounds both parts of a complex number to float32.
func roundC(z complex128) complex128 {
	return complex(float64(float32(real(z))), float64(float32(imag(z))))
}

func Round(d ir.DType, x float64) float64 {
	switch d {
	case ir.F32:
		return float64(float32(x))
	case ir.F16:
		return float64(ir.F16ToF32(ir.F32ToF16(float32(x))))
	case ir.BF16:
		return float64(ir.BF16ToF32(ir.F32ToBF16(float32(x))))
	}
	return x
}

// setF stores a float result (float dtypes) or converts (integer dtypes).
func (v Tensor) Set(k int, x float64) {
	if isIntLike(v.Type.DType) {
		if v.Type.DType == ir.Bool {
			v.I[k] = ir.Bool.Wrap(int64(boolFloat(x != 0)))
		} else {
			v.I[k] = v.Type.DType.Wrap(int64(x))
		}
		return
	}
	v.F[k] = Round(v.Type.DType, x)
}

// index helpers
// Unravel is the row-major index of element k of shape s.
func Unravel(k int, s ir.Shape) []int {
	idx := make([]int, len(s))
	for d := len(s) - 1; d >= 0; d-- {
		if s[d] > 0 {
			idx[d] = k % s[d]
			k /= s[d]
		}
	}
	return idx
}

// Ravel is the element number of index idx in shape s, row-major.
func Ravel(idx []int, s ir.Shape) int {
	k := 0
	for d := range s {
		k = k*s[d] + idx[d]
	}
	return k
}

func inBounds(idx []int, s ir.Shape) bool {
	for d := range s {
		if idx[d] < 0 || idx[d] >= s[d] {
			return false
		}
	}
	return true
}

func identityOf(kind ir.ReduceKind, d ir.DType) float64 {
	switch kind {
	case ir.ReduceSum, ir.ReduceOr:
		return 0
	case ir.ReduceProd, ir.ReduceAnd:
		return 1
	case ir.ReduceMax:
		if isIntLike(d) {
			lo, _, _ := d.IntRange()
			return float64(lo)
		}
		return math.Inf(-1)
	case ir.ReduceMin:
		if isIntLike(d) {
			_, hi, _ := d.IntRange()
			return float64(hi)
		}
		return math.Inf(1)
	}
	panic("bad reduce")
}

func fold(kind ir.ReduceKind, a, b float64) float64 {
	switch kind {
	case ir.ReduceSum:
		return a + b
	case ir.ReduceProd:
		return a * b
	case ir.ReduceMax:
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.NaN()
		}
		return math.Max(a, b)
	case ir.ReduceMin:
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.NaN()
		}
		return math.Min(a, b)
	case ir.ReduceAnd:
		return boolFloat(a != 0 && b != 0)
	case ir.ReduceOr:
		return boolFloat(a != 0 || b != 0)
	}
	panic("bad reduce")
}

// foldInt folds integer values exactly.
func foldInt(kind ir.ReduceKind, a, b int64) int64 {
	switch kind {
	case ir.ReduceSum:
		return a + b
	case ir.ReduceProd:
		return a * b
	case ir.ReduceMax:
		return max(a, b)
	case ir.ReduceMin:
		return min(a, b)
	case ir.ReduceAnd:
		return int64(boolFloat(a != 0 && b != 0))
	case ir.ReduceOr:
		return int64(boolFloat(a != 0 || b != 0))
	}
	panic("bad reduce")
}

func identityInt(kind ir.ReduceKind, d ir.DType) int64 {
	lo, hi, _ := d.IntRange()
	switch kind {
	case ir.ReduceProd, ir.ReduceAnd:
		return 1
	case ir.ReduceMax:
		return lo
	case ir.ReduceMin:
		return hi
	}
	return 0
}

// Run runs p on the given arguments.
func Run(p *ir.Program, args []Tensor) ([]Tensor, error) {
	if len(args) != len(p.Params) {
		return nil, fmt.Errorf("%d args for %d params", len(args), len(p.Params))
	}
	vals := make([]Tensor, len(p.Instrs))
	tuples := map[int][]Tensor{} // the results of region instructions
	for n, in := range p.Instrs {
		arg := func(j int) Tensor { return vals[in.Args[j]] }
		if in.Op == ir.OpHostCall {
			rs, err := hostCall(in, func(j int) Tensor { return vals[in.Args[j]] })
			if err != nil {
				return nil, err
			}
			tuples[n] = rs
			continue
		}
		if isLinalg(in.Op) {
			ins := make([]Tensor, len(in.Args))
			for j := range ins {
				ins[j] = arg(j)
			}
			rs, err := linalg(in, ins)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", in.Op, err)
			}
			if in.Tuple != nil {
				tuples[n] = rs
			} else {
				vals[n] = rs[0]
			}
			continue
		}
		if in.Tuple != nil {
			ins := make([]Tensor, len(in.Args))
			for j := range ins {
				ins[j] = arg(j)
			}
			rs, err := runRegions(in, ins)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", in.Op, err)
			}
			tuples[n] = rs
			continue
		}
		out := New(in.Type)
		switch in.Op {
		case ir.OpGetResult:
			out = tuples[int(in.Args[0])][in.Param]
		case ir.OpParameter:
			a := args[in.Param]
			if a.Type.DType != in.Type.DType || !a.Type.Shape.Equal(in.Type.Shape) {
				return nil, fmt.Errorf("arg %d is %v, param is %v", in.Param, a.Type, in.Type)
			}
			out = a
		case ir.OpConstant:
			out = decodeLiteral(in.Type, in.Literal)
		case ir.OpIota:
			for k := range out.Type.Shape.Size() {
				out.Set(k, float64(Unravel(k, out.Type.Shape)[in.Axes[0]]))
			}
		case ir.OpCompare:
			x, y := arg(0), arg(1)
			for k := range out.I {
				var a, b float64
				if x.I != nil {
					ai, bi := x.I[k], y.I[k]
					out.I[k] = int64(boolFloat(ir.Compare(in.Compare, ai, bi)))
					continue
				}
				if x.C != nil { // complex64 compares EQ or NE only
					out.I[k] = int64(boolFloat((x.C[k] == y.C[k]) == (in.Compare == ir.CmpEQ)))
					continue
				}
				a, b = x.F[k], y.F[k]
				out.I[k] = int64(boolFloat(ir.Compare(in.Compare, a, b)))
			}
		case ir.OpSelect:
			pr, x, y := arg(0), arg(1), arg(2)
			for k := range out.Type.Shape.Size() {
				src := y
				if pr.I[k] != 0 {
					src = x
				}
				copyElem(out, k, src, k)
			}
		case ir.OpConvert:
			x := arg(0)
			for k := range out.Type.Shape.Size() {
				if x.I != nil && out.I != nil {
					out.I[k] = out.Type.DType.Wrap(x.I[k])
					continue
				}
				if out.F != nil {
					out.F[k] = convertFloat(out.Type.DType, x, k)
					continue
				}
				f := x.At(k)
				if out.I != nil && out.Type.DType != ir.Bool {
					// Floats to integers truncate toward zero and saturate
					// at the integer type's range; NaN gives 0.
					lo, hi, _ := out.Type.DType.IntRange()
					switch {
					case math.IsNaN(f):
						f = 0
					case f <= float64(lo):
						out.I[k] = lo
						continue
					case f >= float64(hi):
						out.I[k] = hi
						continue
					default:
						f = math.Trunc(f)
					}
				}
				out.Set(k, f)
			}
		case ir.OpBitcastConvert:
			out = FromBytes(in.Type, arg(0).Bytes())
		case ir.OpReal, ir.OpImag: // the parts are held exactly: moved, not computed
			for k, z := range arg(0).C {
				if in.Op == ir.OpReal {
					out.F[k] = real(z)
				} else {
					out.F[k] = imag(z)
				}
			}
		case ir.OpComplex:
			re, im := arg(0), arg(1)
			for k := range out.C {
				out.C[k] = complex(re.F[k], im.F[k])
			}
		case ir.OpBroadcastInDim:
			x := arg(0)
			for k := range out.Type.Shape.Size() {
				idx := Unravel(k, out.Type.Shape)
				src := make([]int, len(in.Axes))
				for i, d := range in.Axes {
					if x.Type.Shape[i] != 1 {
						src[i] = idx[d]
					}
				}
				copyElem(out, k, x, Ravel(src, x.Type.Shape))
			}
		case ir.OpReshape:
			x := arg(0)
			out.F, out.I, out.C = x.F, x.I, x.C
		case ir.OpTranspose:
			x := arg(0)
			for k := range out.Type.Shape.Size() {
				idx := Unravel(k, out.Type.Shape)
				src := make([]int, len(idx))
				for i, p := range in.Axes {
					src[p] = idx[i]
				}
				copyElem(out, k, x, Ravel(src, x.Type.Shape))
			}
		case ir.OpSlice:
			x := arg(0)
			for k := range out.Type.Shape.Size() {
				idx := Unravel(k, out.Type.Shape)
				for d := range idx {
					idx[d] = in.Slice.Start[d] + idx[d]*in.Slice.Strides[d]
				}
				copyElem(out, k, x, Ravel(idx, x.Type.Shape))
			}
		case ir.OpConcat:
			ax := in.Axes[0]
			for k := range out.Type.Shape.Size() {
				idx := Unravel(k, out.Type.Shape)
				j := idx[ax]
				for _, a := range in.Args {
					x := vals[a]
					if j < x.Type.Shape[ax] {
						idx[ax] = j
						copyElem(out, k, x, Ravel(idx, x.Type.Shape))
						break
					}
					j -= x.Type.Shape[ax]
				}
			}
		case ir.OpPad:
			x, pv := arg(0), arg(1)
			for k := range out.Type.Shape.Size() {
				idx := Unravel(k, out.Type.Shape)
				src := make([]int, len(idx))
				ok := true
				for d := range idx {
					j := idx[d] - in.Pad.Low[d]
					step := in.Pad.Interior[d] + 1
					if j < 0 || j%step != 0 || j/step >= x.Type.Shape[d] {
						ok = false
						break
					}
					src[d] = j / step
				}
				if ok {
					copyElem(out, k, x, Ravel(src, x.Type.Shape))
				} else {
					copyElem(out, k, pv, 0)
				}
			}
		case ir.OpReverse:
			x := arg(0)
			for k := range out.Type.Shape.Size() {
				idx := Unravel(k, out.Type.Shape)
				for _, d := range in.Axes {
					idx[d] = out.Type.Shape[d] - 1 - idx[d]
				}
				copyElem(out, k, x, Ravel(idx, x.Type.Shape))
			}
		case ir.OpReduce:
			x := arg(0)
			acc := make([]float64, out.Type.Shape.Size())
			acci := make([]int64, out.Type.Shape.Size())
			for k := range acc {
				acc[k] = identityOf(in.Reduce, x.Type.DType)
				acci[k] = identityInt(in.Reduce, x.Type.DType)
			}
			for k := range x.Type.Shape.Size() {
				idx := Unravel(k, x.Type.Shape)
				var o []int
				for d, v := range idx {
					if !slices.Contains(in.Axes, d) {
						o = append(o, v)
					}
				}
				j := Ravel(o, out.Type.Shape)
				if x.I != nil {
					acci[j] = foldInt(in.Reduce, acci[j], x.I[k])
				} else {
					acc[j] = fold(in.Reduce, acc[j], x.F[k])
				}
			}
			for k := range acc {
				if out.I != nil {
					out.I[k] = out.Type.DType.Wrap(acci[k])
				} else {
					out.Set(k, acc[k])
				}
			}
		case ir.OpReduceWindow:
			x := arg(0)
			for k := range out.Type.Shape.Size() {
				acc := identityOf(in.Reduce, x.Type.DType)
				for _, p := range windowPositions(in.Window, x.Type.Shape, Unravel(k, out.Type.Shape)) {
					if p >= 0 {
						acc = fold(in.Reduce, acc, x.At(p))
					}
				}
				out.Set(k, acc)
			}
		case ir.OpSelectAndScatter:
			x, src := arg(0), arg(1)
			for k := range src.Type.Shape.Size() {
				best, bestAt := 0.0, -1
				for _, p := range windowPositions(in.Window, x.Type.Shape, Unravel(k, src.Type.Shape)) {
					if p < 0 {
						continue
					}
					v := x.At(p)
					if bestAt < 0 || (in.Compare == ir.CmpGE && v > best) || (in.Compare == ir.CmpLE && v < best) {
						best, bestAt = v, p
					}
				}
				if bestAt >= 0 {
					out.Set(bestAt, out.At(bestAt)+src.At(k))
				}
			}
		case ir.OpDotGeneral:
			evalDot(in, arg(0), arg(1), out)
		case ir.OpConvolution:
			evalConv(in, arg(0), arg(1), out)
		case ir.OpGather:
			evalGather(in, arg(0), arg(1), out)
		case ir.OpScatter:
			evalScatter(in, arg(0), arg(1), arg(2), out)
		case ir.OpSort, ir.OpArgSort:
			evalSort(in, arg(0), out)
		case ir.OpRng:
			if err := evalRng(in, arg(0), arg(1), out); err != nil {
				return nil, err
			}
		case ir.OpFFT:
			evalFFT(in, arg(0), out)
		case ir.OpArgReduce:
			x := arg(0)
			ax := in.Axes[0]
			for k := range out.Type.Shape.Size() {
				o := Unravel(k, out.Type.Shape)
				idx := append(append(slices.Clone(o[:ax]), 0), o[ax:]...)
				best, bestI, at := 0.0, int64(0), -1
				for j := range x.Type.Shape[ax] {
					idx[ax] = j
					if x.I != nil { // integers as they are: int64 past 2^53 has no float64
						v := x.I[Ravel(idx, x.Type.Shape)]
						if at < 0 || (in.Reduce == ir.ReduceMax && v > bestI) || (in.Reduce == ir.ReduceMin && v < bestI) {
							bestI, at = v, j
						}
						continue
					}
					v := x.At(Ravel(idx, x.Type.Shape))
					// NaN counts as both the max and the min: the first NaN wins.
					switch {
					case at < 0, math.IsNaN(v) && !math.IsNaN(best):
						best, at = v, j
					case math.IsNaN(best):
					case (in.Reduce == ir.ReduceMax && v > best) || (in.Reduce == ir.ReduceMin && v < best):
						best, at = v, j
					}
				}
				out.I[k] = int64(at)
			}
		default:
			if in.Op.IsUnary() {
				evalUnary(in.Op, arg(0), out)
			} else if in.Op.IsBinary() {
				if err := evalBinary(in.Op, arg(0), arg(1), out); err != nil {
					return nil, err
				}
			} else {
				return nil, fmt.Errorf("Run: %v is not supported", in.Op)
			}
		}
		vals[n] = out
	}
	res := make([]Tensor, len(p.Results))
	for i, r := range p.Results {
		res[i] = vals[r]
	}
	return res, nil
}

func copyElem(dst Tensor, k int, src Tensor, j int) {
	switch {
	case dst.I != nil:
		dst.I[k] = src.I[j]
	case dst.C != nil:
		dst.C[k] = src.C[j]
	default:
		dst.F[k] = src.F[j]
	}
}

func decodeLiteral(t ir.TensorType, lit []byte) Tensor {
	v := New(t)
	n := t.Shape.Size()
	for k := range n {
		switch t.DType {
		case ir.F32:
			v.F[k] = float64(math.Float32frombits(le32(lit[4*k:])))
		case ir.F16:
			v.F[k] = float64(ir.F16ToF32(le16(lit[2*k:])))
		case ir.BF16:
			v.F[k] = float64(ir.BF16ToF32(le16(lit[2*k:])))
		case ir.F64:
			v.F[k] = math.Float64frombits(le64(lit[8*k:]))
		case ir.I32:
			v.I[k] = int64(int32(le32(lit[4*k:])))
		case ir.U32:
			v.I[k] = int64(le32(lit[4*k:]))
		case ir.I64:
			v.I[k] = int64(le64(lit[8*k:]))
		case ir.U8, ir.Bool:
			v.I[k] = int64(lit[k])
		case ir.I8:
			v.I[k] = int64(int8(lit[k]))
		case ir.I16:
			v.I[k] = int64(int16(le16(lit[2*k:])))
		case ir.C64:
			v.C[k] = complex(float64(math.Float32frombits(le32(lit[8*k:]))), float64(math.Float32frombits(le32(lit[8*k+4:]))))
		}
	}
	return v
}

func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }
func le32(b []byte) uint32 { return uint32(le16(b)) | uint32(le16(b[2:]))<<16 }
func le64(b []byte) uint64 { return uint64(le32(b)) | uint64(le32(b[4:]))<<32 }

// FromFloats makes a value of type t from float64s (rounded or truncated).
func FromFloats(t ir.TensorType, xs ...float64) Tensor {
	v := New(t)
	if len(xs) != t.Shape.Size() {
		panic(fmt.Sprintf("%d values for %v", len(xs), t))
	}
	for k, x := range xs {
		v.Set(k, x)
	}
	return v
}

// Iota is 0, 1, 2, ... of type t.
func Iota(t ir.TensorType) Tensor {
	xs := make([]float64, t.Shape.Size())
	for i := range xs {
		xs[i] = float64(i)
	}
	return FromFloats(t, xs...)
}

// floats reads a value as float64s.
func (v Tensor) Floats() []float64 {
	out := make([]float64, v.Type.Shape.Size())
	for k := range out {
		out[k] = v.At(k)
	}
	return out
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// seq is 0, 1, ..., n-1.
func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func filled(n, v int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// convertFloat is element k of x converted to the float dtype d, rounded
// once, as IEEE conversion rounds: an int64 past 2^53 rounded first to
// float64, or a float64 to float32 on its way to a half type, could land
// on a tie the exact value is not on and round it the wrong way.
func convertFloat(d ir.DType, x Tensor, k int) float64 {
	if x.I != nil {
		v := x.I[k]
		switch d {
		case ir.F32:
			return float64(float32(v))
		case ir.F16:
			v = roundInt(v, 11)
		case ir.BF16:
			v = roundInt(v, 8)
		}
		return Round(d, float64(v)) // exact in float64 and float32 now, but for overflow
	}
	f := x.At(k)
	if d == ir.F16 || d == ir.BF16 {
		f = float64(toOddFloat32(f))
	}
	return Round(d, f)
}

// roundInt rounds v to the nearest integer of at most bits significant
// bits, ties to even.
func roundInt(v int64, bits int) int64 {
	neg := v < 0
	u := uint64(v)
	if neg {
		u = -u
	}
	n := 64 - bits
	for n > 0 && u>>(bits+n-1) == 0 {
		n--
	}
	if n > 0 {
		half, rest := uint64(1)<<(n-1), u&(1<<n-1)
		u >>= n
		if rest > half || (rest == half && u&1 == 1) {
			u++
		}
		u <<= n // 2^64 wraps to 0 only for MinInt64's magnitude, which never rounds up
	}
	if neg {
		return -int64(u)
	}
	return int64(u)
}

// toOddFloat32 is x rounded to float32 toward the odd neighbour when
// inexact (round to odd): a half type rounding it to nearest then gets
// the float64's own correct rounding, which a nearest float32 can spoil.
func toOddFloat32(x float64) float32 {
	f := float32(x)
	if float64(f) == x || math.IsNaN(x) || math.IsInf(float64(f), 0) {
		return f
	}
	if math.Float32bits(f)&1 == 0 {
		f = math.Nextafter32(f, float32(math.Copysign(math.Inf(1), x-float64(f))))
	}
	return f
}

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

// kernel computes one instruction from its operands' values into out, a
// zero tensor of the instruction's type, and returns the result (out, or a
// tensor of its own: a reshape shares its operand's elements).
type kernel func(in ir.Instr, args []Tensor, out Tensor) (Tensor, error)

// kernels are the ops' reference semantics, registered by the files that
// define them, as the drivers register theirs. Parameters, a region op's
// results, the region ops themselves, host calls and the decompositions
// are the program's structure or tuples, and Run handles them.
var kernels = ir.Kernels[kernel]{}

func register(k kernel, ops ...ir.Op) { kernels.Register("eval", k, ops...) }

// Run runs p on the given arguments.
func Run(p *ir.Program, args []Tensor) ([]Tensor, error) {
	if len(args) != len(p.Params) {
		return nil, fmt.Errorf("%d args for %d params", len(args), len(p.Params))
	}
	vals := make([]Tensor, len(p.Instrs))
	tuples := map[int][]Tensor{} // the results of region instructions
	for n, in := range p.Instrs {
		switch in.Op {
		case ir.OpGetResult:
			vals[n] = tuples[int(in.Args[0])][in.Param]
			continue
		case ir.OpParameter:
			a := args[in.Param]
			if a.Type.DType != in.Type.DType || !a.Type.Shape.Equal(in.Type.Shape) {
				return nil, fmt.Errorf("arg %d is %v, param is %v", in.Param, a.Type, in.Type)
			}
			vals[n] = a
			continue
		}
		ins := make([]Tensor, len(in.Args))
		for j, a := range in.Args {
			ins[j] = vals[a]
		}
		if k := kernels[in.Op]; k != nil {
			out, err := k(in, ins, New(in.Type))
			if err != nil {
				return nil, err
			}
			vals[n] = out
			continue
		}
		// What yields a tuple, or comes from another package's semantics.
		var rs []Tensor
		var err error
		switch {
		case in.Op == ir.OpHostCall:
			rs, err = hostCall(in, func(j int) Tensor { return ins[j] })
		case isLinalg(in.Op):
			rs, err = linalg(in, ins)
		case in.Tuple != nil:
			rs, err = runRegions(in, ins)
		default:
			return nil, fmt.Errorf("Run: %v is not supported", in.Op)
		}
		switch {
		case err != nil && in.Op == ir.OpHostCall:
			return nil, err
		case err != nil:
			return nil, fmt.Errorf("%s: %w", in.Op, err)
		case in.Tuple != nil:
			tuples[n] = rs
		default:
			vals[n] = rs[0]
		}
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

// convertFloat is element k of x converted to the float dtype d. A
// conversion to float32 or float64 rounds once (an int64 straight to
// float32, not through float64, as XLA's CPU does); a half type is reached
// through float32, as XLA's CPU and Eigen (TensorFlow's) convert float64
// and integers to float16 and bfloat16, so a value near a half type's tie
// can round twice, and does on both frameworks' CPUs.
func convertFloat(d ir.DType, x Tensor, k int) float64 {
	if x.I != nil {
		v := x.I[k]
		if d == ir.F64 {
			return float64(v)
		}
		return Round(d, float64(float32(v)))
	}
	return Round(d, x.At(k))
}

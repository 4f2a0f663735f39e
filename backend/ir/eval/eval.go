// Package eval is the reference semantics of the IR: a slow, plain
// interpreter of programs, written from the IR's documented rules and
// independently of any driver, that the IR's tests, the lowering tests and
// the driver conformance suite share: every conformance case whose ops and
// dtypes it has is checked against it as well as against the suite's own
// loops. Floats are held as float64 (rounded to the dtype after each op),
// integers as int64 (wrapped to the dtype), bools as 0/1 in the integer
// slice, complex64 as complex128 (each part rounded to float32).
package eval

import (
	"fmt"
	"math"
	"slices"
	"sort"

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

func wrapInt(d ir.DType, x int64) int64 {
	switch d {
	case ir.I32:
		return int64(int32(x))
	case ir.U8:
		return int64(uint8(x))
	case ir.I8:
		return int64(int8(x))
	case ir.I16:
		return int64(int16(x))
	case ir.Bool:
		if x != 0 {
			return 1
		}
	}
	return x
}

// setF stores a float result (float dtypes) or converts (integer dtypes).
func (v Tensor) Set(k int, x float64) {
	if isIntLike(v.Type.DType) {
		if v.Type.DType == ir.Bool {
			v.I[k] = wrapInt(ir.Bool, int64(boolFloat(x != 0)))
		} else {
			v.I[k] = wrapInt(v.Type.DType, int64(x))
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
					out.I[k] = int64(boolFloat(cmpInt(in.Compare, ai, bi)))
					continue
				}
				if x.C != nil { // complex64 compares EQ or NE only
					out.I[k] = int64(boolFloat((x.C[k] == y.C[k]) == (in.Compare == ir.CmpEQ)))
					continue
				}
				a, b = x.F[k], y.F[k]
				out.I[k] = int64(boolFloat(cmpFloat(in.Compare, a, b)))
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
					out.I[k] = wrapInt(out.Type.DType, x.I[k])
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
					out.I[k] = wrapInt(out.Type.DType, acci[k])
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
				best, at := 0.0, -1
				for j := range x.Type.Shape[ax] {
					idx[ax] = j
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

func cmpInt(dir ir.CompareDir, a, b int64) bool {
	switch dir {
	case ir.CmpEQ:
		return a == b
	case ir.CmpNE:
		return a != b
	case ir.CmpLT:
		return a < b
	case ir.CmpLE:
		return a <= b
	case ir.CmpGT:
		return a > b
	}
	return a >= b
}

func cmpFloat(dir ir.CompareDir, a, b float64) bool {
	switch dir {
	case ir.CmpEQ:
		return a == b
	case ir.CmpNE:
		return a != b
	case ir.CmpLT:
		return a < b
	case ir.CmpLE:
		return a <= b
	case ir.CmpGT:
		return a > b
	}
	return a >= b
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

func evalUnary(op ir.Op, x, out Tensor) {
	for k := range out.Type.Shape.Size() {
		if x.I != nil {
			a := x.I[k]
			var r int64
			switch op {
			case ir.OpNeg:
				r = -a
			case ir.OpAbs:
				r = a
				if a < 0 {
					r = -a
				}
			case ir.OpSign:
				r = int64(boolFloat(a > 0)) - int64(boolFloat(a < 0))
			case ir.OpNot:
				r = ^a
				if x.Type.DType == ir.Bool {
					r = 1 - a
				}
			}
			out.I[k] = wrapInt(out.Type.DType, r)
			continue
		}
		a := x.F[k]
		var r float64
		switch op {
		case ir.OpNeg:
			r = -a
		case ir.OpAbs:
			r = math.Abs(a)
		case ir.OpExp:
			r = math.Exp(a)
		case ir.OpLog:
			r = math.Log(a)
		case ir.OpSqrt:
			r = math.Sqrt(a)
		case ir.OpRsqrt:
			r = 1 / math.Sqrt(a)
		case ir.OpTanh:
			r = math.Tanh(a)
		case ir.OpLogistic:
			r = 1 / (1 + math.Exp(-a))
		case ir.OpFloor:
			r = math.Floor(a)
		case ir.OpCeil:
			r = math.Ceil(a)
		case ir.OpSign:
			switch {
			case a > 0:
				r = 1
			case a < 0:
				r = -1
			default:
				r = a
			}
		case ir.OpErf:
			r = math.Erf(a)
		case ir.OpLog1p:
			r = math.Log1p(a)
		case ir.OpExpm1:
			r = math.Expm1(a)
		case ir.OpRound:
			r = math.RoundToEven(a)
		case ir.OpSin:
			r = math.Sin(a)
		case ir.OpCos:
			r = math.Cos(a)
		}
		out.Set(k, r)
	}
}

func evalBinary(op ir.Op, x, y, out Tensor) error {
	for k := range out.Type.Shape.Size() {
		if x.I != nil {
			a, b := x.I[k], y.I[k]
			var r int64
			switch op {
			case ir.OpAdd:
				r = a + b
			case ir.OpSub:
				r = a - b
			case ir.OpMul:
				r = a * b
			case ir.OpDiv:
				if b == 0 {
					return fmt.Errorf("integer division by zero")
				}
				r = a / b
			case ir.OpRem:
				if b == 0 {
					return fmt.Errorf("integer remainder by zero")
				}
				r = a % b
			case ir.OpMax:
				r = max(a, b)
			case ir.OpMin:
				r = min(a, b)
			case ir.OpPow:
				r = intPow(a, b)
			case ir.OpAnd:
				r = a & b
			case ir.OpOr:
				r = a | b
			}
			out.I[k] = wrapInt(out.Type.DType, r)
			continue
		}
		a, b := x.F[k], y.F[k]
		var r float64
		switch op {
		case ir.OpAdd:
			r = a + b
		case ir.OpSub:
			r = a - b
		case ir.OpMul:
			r = a * b
		case ir.OpDiv:
			r = a / b
		case ir.OpRem:
			r = math.Mod(a, b)
		case ir.OpMax:
			r = math.Max(a, b)
		case ir.OpMin:
			r = math.Min(a, b)
		case ir.OpPow:
			r = math.Pow(a, b)
		default:
			return fmt.Errorf("%v on floats", op)
		}
		out.Set(k, r)
	}
	return nil
}

func evalDot(in ir.Instr, x, y, out Tensor) {
	d := in.Dot
	tx, ty := x.Type.Shape, y.Type.Shape
	xfree := freeOf(tx, d.LhsBatch, d.LhsContract)
	yfree := freeOf(ty, d.RhsBatch, d.RhsContract)
	cshape := make(ir.Shape, len(d.LhsContract))
	for i, a := range d.LhsContract {
		cshape[i] = tx[a]
	}
	for k := range out.Type.Shape.Size() {
		o := Unravel(k, out.Type.Shape)
		xi, yi := make([]int, len(tx)), make([]int, len(ty))
		p := 0
		for i := range d.LhsBatch {
			xi[d.LhsBatch[i]], yi[d.RhsBatch[i]] = o[p], o[p]
			p++
		}
		for _, a := range xfree {
			xi[a] = o[p]
			p++
		}
		for _, a := range yfree {
			yi[a] = o[p]
			p++
		}
		sum := 0.0
		for m := range cshape.Size() {
			ci := Unravel(m, cshape)
			for i := range ci {
				xi[d.LhsContract[i]], yi[d.RhsContract[i]] = ci[i], ci[i]
			}
			sum += x.At(Ravel(xi, tx)) * y.At(Ravel(yi, ty))
		}
		out.Set(k, sum)
	}
}

func freeOf(s ir.Shape, batch, contract []int) []int {
	var f []int
	for i := range s {
		if !slices.Contains(batch, i) && !slices.Contains(contract, i) {
			f = append(f, i)
		}
	}
	return f
}

func evalConv(in ir.Instr, x, k, out Tensor) {
	a := in.Conv
	xs, ks, os := x.Type.Shape, k.Type.Shape, out.Type.Shape
	ns := len(xs) - 2
	strides, pad, ld, rd := ones(a.Strides, ns), a.Padding, ones(a.LhsDilation, ns), ones(a.RhsDilation, ns)
	if pad == nil {
		pad = make([][2]int, ns)
	}
	g := max(a.FeatureGroups, 1)
	cg := xs[ns+1] / g
	og := ks[ns+1] / g
	win := ks[:ns]
	for n := range os.Size() {
		o := Unravel(n, os)
		oc := o[ns+1]
		grp := oc / og
		sum := 0.0
		for m := range win.Size() {
			w := Unravel(m, win)
			xi := make([]int, ns+2)
			xi[0] = o[0]
			ok := true
			for i := range ns {
				j := o[1+i]*strides[i] + w[i]*rd[i] - pad[i][0]
				if j < 0 || j%ld[i] != 0 || j/ld[i] >= xs[1+i] {
					ok = false
					break
				}
				xi[1+i] = j / ld[i]
			}
			if !ok {
				continue
			}
			for ci := range cg {
				xi[ns+1] = grp*cg + ci
				ki := append(slices.Clone(w), ci, oc)
				sum += x.At(Ravel(xi, xs)) * k.At(Ravel(ki, ks))
			}
		}
		out.Set(n, sum)
	}
}

func ones(s []int, n int) []int {
	if s != nil {
		return s
	}
	return filled(n, 1)
}

func batchIndexShape(ti ir.Shape, ivd int) (ir.Shape, int) {
	if ivd == len(ti) {
		return ti.Clone(), 1
	}
	var b ir.Shape
	for i, d := range ti {
		if i != ivd {
			b = append(b, d)
		}
	}
	return b, ti[ivd]
}

// indexVector reads the index vector of indices at batch position bi.
func indexVector(ind Tensor, ivd int, bi []int) []int {
	ti := ind.Type.Shape
	_, vec := batchIndexShape(ti, ivd)
	out := make([]int, vec)
	for v := range vec {
		full := make([]int, 0, len(ti))
		full = append(full, bi[:min(ivd, len(bi))]...)
		if ivd < len(ti) {
			full = append(full, v)
		}
		full = append(full, bi[min(ivd, len(bi)):]...)
		out[v] = int(ind.I[Ravel(full, ti)])
	}
	return out
}

func evalGather(in ir.Instr, x, ind, out Tensor) {
	g := in.Gather
	xs := x.Type.Shape
	for k := range out.Type.Shape.Size() {
		o := Unravel(k, out.Type.Shape)
		var bi, off []int
		for i, v := range o {
			if slices.Contains(g.OffsetDims, i) {
				off = append(off, v)
			} else {
				bi = append(bi, v)
			}
		}
		vec := indexVector(ind, g.IndexVectorDim, bi)
		start := make([]int, len(xs))
		for j, d := range g.StartIndexMap {
			start[d] = min(max(vec[j], 0), xs[d]-g.SliceSizes[d])
		}
		full := slices.Clone(start)
		oi := 0
		for d := range xs {
			if slices.Contains(g.CollapsedSliceDims, d) {
				continue
			}
			full[d] += off[oi]
			oi++
		}
		copyElem(out, k, x, Ravel(full, xs))
	}
}

func evalScatter(in ir.Instr, x, ind, upd, out Tensor) {
	s := in.Scatter
	copy(out.F, x.F)
	copy(out.I, x.I)
	copy(out.C, x.C)
	for k, p := range scatterTargets(s, x.Type.Shape, ind, upd.Type.Shape) {
		if p < 0 {
			continue
		}
		v := upd.At(k)
		switch s.Kind {
		case ir.ScatterReplace:
			copyElem(out, p, upd, k)
		case ir.ScatterAdd, ir.ScatterMul:
			if out.I != nil {
				a, u := out.I[p], upd.I[k]
				if s.Kind == ir.ScatterAdd {
					out.I[p] = wrapInt(out.Type.DType, a+u)
				} else {
					out.I[p] = wrapInt(out.Type.DType, a*u)
				}
			} else if s.Kind == ir.ScatterAdd {
				out.Set(p, out.F[p]+v)
			} else {
				out.Set(p, out.F[p]*v)
			}
		case ir.ScatterMax, ir.ScatterMin:
			kind := map[ir.ScatterKind]ir.ReduceKind{ir.ScatterMax: ir.ReduceMax, ir.ScatterMin: ir.ReduceMin}[s.Kind]
			if out.I != nil {
				out.I[p] = foldInt(kind, out.I[p], upd.I[k])
			} else {
				out.Set(p, fold(kind, out.F[p], v))
			}
		}
	}
}

// scatterTargets is, for each update element in row-major order, the
// operand element it lands on, or -1 when its window leaves the operand
// (the whole window is skipped).
func scatterTargets(s *ir.ScatterDims, xs ir.Shape, ind Tensor, us ir.Shape) []int {
	var winOperand []int
	for d := range xs {
		if !slices.Contains(s.InsertedWindowDims, d) {
			winOperand = append(winOperand, d)
		}
	}
	targets := make([]int, us.Size())
	for k := range targets {
		u := Unravel(k, us)
		var bi, wi []int
		for i, v := range u {
			if slices.Contains(s.UpdateWindowDims, i) {
				wi = append(wi, v)
			} else {
				bi = append(bi, v)
			}
		}
		vec := indexVector(ind, s.IndexVectorDim, bi)
		start := make([]int, len(xs))
		for j, d := range s.ScatterDimsToOperandDims {
			start[d] = vec[j]
		}
		fits := true
		for d := range xs {
			size := 1
			if j := slices.Index(winOperand, d); j >= 0 {
				size = us[s.UpdateWindowDims[j]]
			}
			if start[d] < 0 || start[d]+size > xs[d] {
				fits = false
			}
		}
		targets[k] = -1
		if fits {
			full := slices.Clone(start)
			for j, d := range winOperand {
				full[d] += wi[j]
			}
			targets[k] = Ravel(full, xs)
		}
	}
	return targets
}

// windowPositions is, for the window at output index idx, the operand
// element at each window position in row-major order, or -1 for a
// position in the padding.
func windowPositions(w *ir.WindowAttrs, xs ir.Shape, idx []int) []int {
	wshape := ir.Shape(w.Dims)
	pos := make([]int, wshape.Size())
	src := make([]int, len(idx))
	for m := range pos {
		off := Unravel(m, wshape)
		for d := range idx {
			src[d] = idx[d]*w.Strides[d] + off[d] - w.Padding[d][0]
		}
		pos[m] = -1
		if inBounds(src, xs) {
			pos[m] = Ravel(src, xs)
		}
	}
	return pos
}

func evalSort(in ir.Instr, x, out Tensor) {
	dim := in.Sort.Dim
	s := x.Type.Shape
	n := s[dim]
	for k := range s.Size() {
		idx := Unravel(k, s)
		if idx[dim] != 0 {
			continue
		}
		pos := make([]int, n)
		for j := range n {
			idx[dim] = j
			pos[j] = Ravel(idx, s)
		}
		order := seq(n)
		less := func(a, b float64) bool {
			if math.IsNaN(b) {
				return !math.IsNaN(a)
			}
			return a < b
		}
		sort.SliceStable(order, func(a, b int) bool {
			va, vb := x.At(pos[order[a]]), x.At(pos[order[b]])
			if in.Sort.Descending {
				return less(vb, va)
			}
			return less(va, vb)
		})
		for j := range n {
			if in.Op == ir.OpArgSort {
				out.I[pos[j]] = int64(order[j])
			} else {
				copyElem(out, pos[j], x, pos[order[j]])
			}
		}
	}
}

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

// runRegions runs a region instruction (while, case, call) on its operands.
func runRegions(in ir.Instr, ins []Tensor) ([]Tensor, error) {
	switch in.Op {
	case ir.OpWhile:
		vals := ins
		for {
			c, err := Run(in.Regions[0], vals)
			if err != nil {
				return nil, fmt.Errorf("cond: %w", err)
			}
			if c[0].I[0] == 0 {
				return vals, nil
			}
			if vals, err = Run(in.Regions[1], vals); err != nil {
				return nil, fmt.Errorf("body: %w", err)
			}
		}
	case ir.OpCase:
		k := int(ins[0].I[0])
		if k < 0 || k >= len(in.Regions) {
			k = len(in.Regions) - 1 // StableHLO: out of range runs the last branch
		}
		return Run(in.Regions[k], ins[1:])
	case ir.OpCall:
		return Run(in.Regions[0], ins)
	case ir.OpReduceRegion:
		return reduceRegion(in, ins)
	case ir.OpSortRegion:
		return sortRegion(in, ins)
	case ir.OpScatterRegion:
		return scatterRegion(in, ins)
	case ir.OpReduceWindowRegion:
		return reduceWindowRegion(in, ins)
	case ir.OpSelectAndScatterRegion:
		return selectAndScatterRegion(in, ins)
	}
	return nil, fmt.Errorf("Run: %v is not supported", in.Op)
}

// reduceRegion folds each operand element, in row-major order, into the
// accumulators of its output element with the body.
func reduceRegion(in ir.Instr, ins []Tensor) ([]Tensor, error) {
	n := len(ins) / 2
	xs, inits := ins[:n], ins[n:]
	outs := make([]Tensor, n)
	for i := range outs {
		outs[i] = New(in.Tuple[i])
		for k := range outs[i].Type.Shape.Size() {
			copyElem(outs[i], k, inits[i], 0)
		}
	}
	reduced := make([]bool, xs[0].Type.Shape.Rank())
	for _, a := range in.Axes {
		reduced[a] = true
	}
	args := make([]Tensor, 2*n)
	for k := range xs[0].Type.Shape.Size() {
		idx := Unravel(k, xs[0].Type.Shape)
		var o []int
		for d, v := range idx {
			if !reduced[d] {
				o = append(o, v)
			}
		}
		ok := Ravel(o, outs[0].Type.Shape)
		for i := range n {
			args[i] = New(ir.TensorType{DType: outs[i].Type.DType})
			copyElem(args[i], 0, outs[i], ok)
			args[n+i] = New(ir.TensorType{DType: xs[i].Type.DType})
			copyElem(args[n+i], 0, xs[i], k)
		}
		acc, err := Run(in.Regions[0], args)
		if err != nil {
			return nil, fmt.Errorf("body: %w", err)
		}
		for i := range n {
			copyElem(outs[i], ok, acc[i], 0)
		}
	}
	return outs, nil
}

// sortRegion sorts each line along Sort.Dim with a stable insertion sort
// that asks the comparator (slow, and plainly right).
func sortRegion(in ir.Instr, ins []Tensor) ([]Tensor, error) {
	shape, dim := ins[0].Type.Shape, in.Sort.Dim
	outs := make([]Tensor, len(ins))
	for i, x := range ins {
		outs[i] = New(x.Type)
	}
	n := shape[dim]
	args := make([]Tensor, 2*len(ins))
	for k := range shape.Size() {
		idx := Unravel(k, shape)
		if idx[dim] != 0 {
			continue // one line per start
		}
		line := make([]int, n) // element numbers of the line, in sorted order
		for j := range n {
			idx[dim] = j
			line[j] = Ravel(idx, shape)
		}
		var err error
		less := func(a, b int) bool {
			for i, x := range ins {
				args[2*i], args[2*i+1] = New(ir.TensorType{DType: x.Type.DType}), New(ir.TensorType{DType: x.Type.DType})
				copyElem(args[2*i], 0, x, a)
				copyElem(args[2*i+1], 0, x, b)
			}
			r, e := Run(in.Regions[0], args)
			if e != nil && err == nil {
				err = e
			}
			return e == nil && r[0].I[0] != 0
		}
		for j := 1; j < n; j++ { // insertion: stable
			for m := j; m > 0 && less(line[m], line[m-1]); m-- {
				line[m], line[m-1] = line[m-1], line[m]
			}
		}
		if err != nil {
			return nil, fmt.Errorf("comparator: %w", err)
		}
		for j, src := range line {
			idx[dim] = j
			dst := Ravel(idx, shape)
			for i, x := range ins {
				copyElem(outs[i], dst, x, src)
			}
		}
	}
	return outs, nil
}

// intPow is a**b with the wrapping of repeated multiplication; a negative
// exponent gives 1 for 1, +-1 for -1 and 0 otherwise, as integer division
// of 1 by a**-b would.
func intPow(a, b int64) int64 {
	if b < 0 {
		switch a {
		case 1:
			return 1
		case -1:
			if b%2 == 0 {
				return 1
			}
			return -1
		}
		return 0
	}
	r := int64(1)
	for ; b > 0; b-- {
		r *= a
	}
	return r
}

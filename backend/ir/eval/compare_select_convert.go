package eval

import (
	"math"

	"github.com/metalplug/metalplug/backend/ir"
)

// Comparison, selection, conversions between types and complex64's parts.

func init() {
	register(evalCompare, ir.OpCompare)
	register(evalSelect, ir.OpSelect)
	register(evalConvert, ir.OpConvert)
	register(evalBitcastConvert, ir.OpBitcastConvert)
	register(evalPart, ir.OpReal, ir.OpImag)
	register(evalComplex, ir.OpComplex)
}

func evalCompare(in ir.Instr, args []Tensor, out Tensor) (Tensor, error) {
	x, y := args[0], args[1]
	for k := range out.I {
		switch {
		case x.I != nil:
			out.I[k] = int64(boolFloat(ir.Compare(in.Compare, x.I[k], y.I[k])))
		case x.C != nil: // complex64 compares EQ or NE only
			out.I[k] = int64(boolFloat((x.C[k] == y.C[k]) == (in.Compare == ir.CmpEQ)))
		default:
			out.I[k] = int64(boolFloat(ir.Compare(in.Compare, x.F[k], y.F[k])))
		}
	}
	return out, nil
}

func evalSelect(_ ir.Instr, args []Tensor, out Tensor) (Tensor, error) {
	pr, x, y := args[0], args[1], args[2]
	for k := range out.Type.Shape.Size() {
		src := y
		if pr.I[k] != 0 {
			src = x
		}
		copyElem(out, k, src, k)
	}
	return out, nil
}

func evalConvert(_ ir.Instr, args []Tensor, out Tensor) (Tensor, error) {
	x := args[0]
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
			// Floats to integers truncate toward zero and saturate at the
			// integer type's range; NaN gives 0.
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
	return out, nil
}

func evalBitcastConvert(in ir.Instr, args []Tensor, _ Tensor) (Tensor, error) {
	return FromBytes(in.Type, args[0].Bytes()), nil
}

// evalPart moves complex64's real or imaginary part: the parts are held
// exactly, so nothing is computed.
func evalPart(in ir.Instr, args []Tensor, out Tensor) (Tensor, error) {
	for k, z := range args[0].C {
		if in.Op == ir.OpReal {
			out.F[k] = real(z)
		} else {
			out.F[k] = imag(z)
		}
	}
	return out, nil
}

func evalComplex(_ ir.Instr, args []Tensor, out Tensor) (Tensor, error) {
	re, im := args[0], args[1]
	for k := range out.C {
		out.C[k] = complex(re.F[k], im.F[k])
	}
	return out, nil
}

package stablehlo

import (
	"fmt"
	"math"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// dtypeOf maps an element type to the IR's. f64 maps to ir.F64 (the IR and
// the host driver have it; the Metal driver refuses it, by policy). What the
// IR has no dtype for is an error naming the op, what it is and the type.
func dtypeOf(op *mlir.Operation, t mlir.Type, what string) (ir.DType, error) {
	if n, ok := narrowOf(t); ok {
		return n.held(), nil // see narrow.go
	}
	switch t := t.(type) {
	case *mlir.IntegerType:
		unsigned := t.Signedness == mlir.Unsigned
		switch {
		case t.Width == 1:
			return ir.Bool, nil
		case t.Width == 8 && unsigned:
			return ir.U8, nil
		case t.Width == 8:
			return ir.I8, nil
		case t.Width == 16:
			// ui16 is held as int16 bits (jax draws 16-bit random floats
			// from ui16); see heldUnsigned.
			return ir.I16, nil
		case t.Width == 32 && unsigned:
			return ir.U32, nil
		case t.Width == 32:
			return ir.I32, nil
		case t.Width == 64:
			// ui64 is held as int64 bits (jax's threefry counts in ui64);
			// see heldUnsigned.
			return ir.I64, nil
		}
	case *mlir.FloatType:
		switch t.Kind {
		case mlir.F32:
			return ir.F32, nil
		case mlir.F16:
			return ir.F16, nil
		case mlir.BF16:
			return ir.BF16, nil
		case mlir.F64:
			return ir.F64, nil
		}
	case *mlir.ComplexType:
		if ft, ok := t.Elem.(*mlir.FloatType); ok && ft.Kind == mlir.F32 {
			return ir.C64, nil
		}
	}
	return ir.Invalid, unsupported(op, "%s has element type %s, which metalplug has no dtype for (it has f32, f16, bf16, f64, i8, i16, i32, i64, ui8, ui16, ui32, ui64, i1, complex<f32> and %s)", what, t, narrowNames())
}

// heldUnsigned reports whether t (a tensor or element type) is ui16 or
// ui64, which the IR has no dtype for and holds as the bits of int16 and
// int64: the translation of every op whose result depends on signedness
// (compare, max, min, division, conversions, indices) asks, and composes
// the unsigned result; at main's boundary the Signature marks them.
func heldUnsigned(t mlir.Type) bool {
	it, ok := mlir.ElementType(t).(*mlir.IntegerType)
	return ok && (it.Width == 64 || it.Width == 16) && it.Signedness == mlir.Unsigned
}

// boundaryType is tensorType for main's arguments and results. A ui16 or
// ui64 there is int16 or int64 bits to the program, as inside it; a narrow
// float is its byte (U8), a narrow integer its byte with the value in the
// low bits (narrow.go). The Signature says which are (Arg.Held,
// Result.Held), so that the PJRT layer gives those buffers their own
// element type.
func boundaryType(op *mlir.Operation, t mlir.Type, what string) (ir.TensorType, error) {
	tt, err := tensorType(op, t, what)
	if n, ok := narrowOf(t); ok && err == nil {
		tt.DType = n.boundary()
	}
	return tt, err
}

// heldName is PJRT's name of the element type of t when the IR dtype at
// main's boundary is not its own (ui16, ui64 and the narrow types), or "".
func heldName(t mlir.Type) string {
	if n, ok := narrowOf(t); ok {
		return n.name
	}
	if heldUnsigned(t) {
		return map[int]string{16: "u16", 64: "u64"}[mlir.ElementType(t).(*mlir.IntegerType).Width]
	}
	return ""
}

// tensorType maps a ranked tensor type of static shape to the IR's.
func tensorType(op *mlir.Operation, t mlir.Type, what string) (ir.TensorType, error) {
	tt, ok := t.(*mlir.TensorType)
	if !ok {
		switch t.(type) {
		case *mlir.UnrankedTensorType:
			return ir.TensorType{}, unsupported(op, "%s is %s: unranked tensors (dynamic shapes)", what, t)
		case *mlir.TupleType:
			return ir.TensorType{}, unsupported(op, "%s is the tuple %s", what, t)
		case *mlir.TokenType:
			// A token orders side effects; it carries no data. On one
			// device with no effects the program runs in order anyway, so
			// a token is an empty bool tensor, which is also what jax
			// holds behind a core.Token.
			return tokenType, nil
		}
		return ir.TensorType{}, unsupported(op, "%s is %s, not a tensor", what, t)
	}
	shape := make(ir.Shape, len(tt.Shape))
	for i, d := range tt.Shape {
		if d < 0 {
			return ir.TensorType{}, unsupported(op, "%s is %s: dynamic shapes", what, t)
		}
		if d > math.MaxInt32 {
			return ir.TensorType{}, unsupported(op, "%s is %s: a dimension above 2^31", what, t)
		}
		shape[i] = int(d)
	}
	d, err := dtypeOf(op, tt.Elem, what)
	if err != nil {
		return ir.TensorType{}, err
	}
	return ir.TensorType{DType: d, Shape: shape}, nil
}

// tokenType is what a !stablehlo.token is in the IR: no data, the IR's
// own token (ir.TokenType, what its host calls take and give).
var tokenType = ir.TokenType

// newToken is create_token and after_all: a token, whatever it joins.
func newToken(e *env, op *mlir.Operation) ([]ir.Value, error) {
	if len(op.Results) != 1 {
		return nil, invalid(op, "has %d results", len(op.Results))
	}
	if _, err := e.operands(op); err != nil {
		return nil, err
	}
	return one(e.b.Constant(tokenType, nil)), nil
}

// resultType is the IR type of op's i-th result.
func resultType(op *mlir.Operation, i int) (ir.TensorType, error) {
	if i >= len(op.Results) {
		return ir.TensorType{}, invalid(op, "has %d results, want at least %d", len(op.Results), i+1)
	}
	return tensorType(op, op.Results[i].Type, fmt.Sprintf("result %d", i))
}

// Attribute readers. Each names the op and the attribute when it is
// missing or of the wrong kind.

func attr(op *mlir.Operation, name string) (mlir.Attr, error) {
	a, ok := op.Attr(name)
	if !ok {
		return nil, invalid(op, "has no attribute %s", name)
	}
	return a, nil
}

func intAttr(op *mlir.Operation, name string) (int64, error) {
	a, err := attr(op, name)
	if err != nil {
		return 0, err
	}
	switch a := a.(type) {
	case *mlir.IntegerAttr:
		if a.Big != nil {
			return 0, invalid(op, "attribute %s = %s does not fit 64 bits", name, a)
		}
		return a.Value, nil
	case *mlir.DenseAttr:
		if v, err := a.Int64s(); err == nil && len(v) == 1 {
			return v[0], nil
		}
	}
	return 0, invalid(op, "attribute %s is %s, not an integer", name, a)
}

// smallInt is intAttr checked to fit an int32, as every dimension and
// count does.
func smallInt(op *mlir.Operation, name string) (int, error) {
	v, err := intAttr(op, name)
	if err != nil {
		return 0, err
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, invalid(op, "attribute %s = %d is out of range", name, v)
	}
	return int(v), nil
}

func boolAttr(op *mlir.Operation, name string) (bool, error) {
	a, err := attr(op, name)
	if err != nil {
		return false, err
	}
	switch a := a.(type) {
	case *mlir.BoolAttr:
		return a.Value, nil
	case *mlir.IntegerAttr:
		return a.Value != 0, nil
	case *mlir.UnitAttr:
		return true, nil
	}
	return false, invalid(op, "attribute %s is %s, not a bool", name, a)
}

func optBoolAttr(op *mlir.Operation, name string) (bool, error) {
	if _, ok := op.Attr(name); !ok {
		return false, nil
	}
	return boolAttr(op, name)
}

func stringAttr(op *mlir.Operation, name string) (string, error) {
	a, err := attr(op, name)
	if err != nil {
		return "", err
	}
	switch a := a.(type) {
	case *mlir.StringAttr:
		return a.Value, nil
	case *mlir.SymbolRefAttr:
		if len(a.Nested) == 0 {
			return a.Root, nil
		}
	}
	return "", invalid(op, "attribute %s is %s, not a string", name, a)
}

func optStringAttr(op *mlir.Operation, name string) (string, error) {
	if _, ok := op.Attr(name); !ok {
		return "", nil
	}
	return stringAttr(op, name)
}

func enumAttr(op *mlir.Operation, name string) (string, error) {
	a, err := attr(op, name)
	if err != nil {
		return "", err
	}
	if e, ok := a.(*mlir.EnumAttr); ok {
		return e.Name, nil
	}
	return "", invalid(op, "attribute %s is %s, not an enum", name, a)
}

// ints reads a list of integers: VHLO 1.x writes every dimension list as a
// tensor<Nxi64> (DenseAttr); builtin arrays and arrays of integers read too.
func ints(op *mlir.Operation, name string) ([]int, error) {
	a, err := attr(op, name)
	if err != nil {
		return nil, err
	}
	v, ok := intList(a)
	if !ok {
		return nil, invalid(op, "attribute %s is %s, not a list of integers", name, a)
	}
	out := make([]int, len(v))
	for i, x := range v {
		if x < math.MinInt32 || x > math.MaxInt32 {
			return nil, invalid(op, "attribute %s holds %d, out of range", name, x)
		}
		out[i] = int(x)
	}
	return out, nil
}

// optInts is ints, or def (copied) when the attribute is absent or empty.
func optInts(op *mlir.Operation, name string, def []int) ([]int, error) {
	if _, ok := op.Attr(name); ok {
		v, err := ints(op, name)
		if err != nil || len(v) > 0 {
			return v, err
		}
	}
	return append([]int(nil), def...), nil
}

func intList(a mlir.Attr) ([]int64, bool) {
	switch a := a.(type) {
	case *mlir.DenseAttr:
		v, err := a.Int64s()
		return v, err == nil
	case *mlir.DenseArrayAttr:
		w := mlir.ElementBytes(a.Elem)
		if _, ok := a.Elem.(*mlir.IntegerType); !ok || w == 0 || len(a.Data) != a.Size*w {
			return nil, false
		}
		out := make([]int64, a.Size)
		for i := range out {
			var u uint64
			for j := w - 1; j >= 0; j-- {
				u = u<<8 | uint64(a.Data[i*w+j])
			}
			if w < 8 && u>>(8*w-1) == 1 {
				u |= ^uint64(0) << (8 * w)
			}
			out[i] = int64(u)
		}
		return out, true
	case *mlir.ArrayAttr:
		out := make([]int64, len(a.Elems))
		for i, el := range a.Elems {
			n, ok := el.(*mlir.IntegerAttr)
			if !ok {
				return nil, false
			}
			out[i] = n.Value
		}
		return out, true
	}
	return nil, false
}

// pairs reads an Nx2 list (padding): N pairs of low, high.
func pairs(op *mlir.Operation, name string, n int) ([][2]int, error) {
	if _, ok := op.Attr(name); !ok {
		return make([][2]int, n), nil
	}
	v, err := ints(op, name)
	if err != nil {
		return nil, err
	}
	if len(v) == 0 {
		return make([][2]int, n), nil
	}
	if len(v) != 2*n {
		return nil, invalid(op, "attribute %s has %d entries, want %d pairs", name, len(v), n)
	}
	out := make([][2]int, n)
	for i := range out {
		out[i] = [2]int{v[2*i], v[2*i+1]}
	}
	return out, nil
}

// checkAccuracy accepts the result_accuracy of the v2 transcendental ops
// when it asks for no tolerance: mode DEFAULT, or HIGHEST, which picks the
// most accurate of a backend's implementations and, where there is only
// one, is that one (jax's lax.exp: "if mode is specified and there are no
// multiple implementations available, the default implementation will be
// used"). Each op here has one implementation, so HIGHEST is DEFAULT, as
// on XLA's CPU (measured with jaxlib 0.12: tanh and exp with HIGHEST give
// the DEFAULT bits). A tolerance (mode TOLERANCE) is refused: jax says a
// compiler that cannot meet one returns an error, and the drivers'
// functions are whatever their platform's are, so none can be promised.
// XLA's CPU accepts any tolerance and ignores it (even atol = rtol =
// 1e-60, which its TPU backend refuses); refusing keeps jax's contract.
func checkAccuracy(op *mlir.Operation) error {
	a, ok := op.Attr("result_accuracy")
	if !ok {
		return nil
	}
	ra, ok := a.(*mlir.ResultAccuracyAttr)
	if !ok {
		return invalid(op, "result_accuracy is %s", a)
	}
	mode := ""
	if m, ok := ra.Mode.(*mlir.EnumAttr); ok {
		mode = m.Name
	}
	if mode != "DEFAULT" && mode != "HIGHEST" {
		return unsupported(op, "result_accuracy %s (only DEFAULT and HIGHEST, which is DEFAULT: metalplug cannot promise a tolerance)", a)
	}
	return nil
}

// intConst is a constant of integer (or bool) dtype d and shape s holding
// v, exactly (ir.Builder.Scalar goes through float64, which cannot hold
// every int64).
func intConst(b *ir.Builder, d ir.DType, s ir.Shape, v int64) ir.Value {
	w := d.Size()
	one := make([]byte, w)
	for i := range w {
		one[i] = byte(uint64(v) >> (8 * i))
	}
	c := b.Constant(ir.TensorType{DType: d}, one)
	return b.BroadcastInDim(c, s, []int{})
}

// floatConst is a constant of float dtype d and shape s holding v.
func floatConst(b *ir.Builder, d ir.DType, s ir.Shape, v float64) ir.Value {
	return b.BroadcastInDim(b.Scalar(d, v), s, []int{})
}

// bits is the width of a dtype in bits.
func bits(d ir.DType) int { return 8 * d.Size() }

// sameWidthInt is the integer dtype of d's width that is signed (or
// unsigned when unsigned is set), if the IR has one.
func sameWidthInt(d ir.DType, unsigned bool) (ir.DType, bool) {
	switch {
	case d.Size() == 1 && unsigned:
		return ir.U8, true
	case d.Size() == 1:
		return ir.I8, true
	case d.Size() == 2 && !unsigned:
		return ir.I16, true
	case d.Size() == 4 && unsigned:
		return ir.U32, true
	case d.Size() == 4:
		return ir.I32, true
	case d.Size() == 8 && !unsigned:
		return ir.I64, true
	}
	return ir.Invalid, false
}

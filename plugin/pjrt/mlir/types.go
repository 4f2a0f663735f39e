package mlir

import (
	"strconv"
	"strings"
)

// Type is an MLIR type. VHLO types (!vhlo.tensor_v1<2x!vhlo.f32_v1>) and
// builtin types (tensor<2xf32>) decode to the same Go values, so a consumer
// never cares which dialect encoded them; String prints the builtin spelling.
// Types read from one buffer are shared: the same type entry is the same
// pointer. Compare types with Equal, or by String.
type Type interface {
	String() string
	isType()
}

// Dynamic marks a dimension whose size is not known statically.
const Dynamic = -1

// TensorType is a ranked tensor. Shape holds Dynamic for unknown dims.
// Encoding is nil unless the type carries one (VHLO stores bounds of
// bounded-dynamic dims there as a TypeExtensionsAttr).
type TensorType struct {
	Shape    []int64
	Elem     Type
	Encoding Attr
}

// UnrankedTensorType is tensor<*xT>.
type UnrankedTensorType struct{ Elem Type }

// Signedness of an integer type. VHLO's i32_v1 is signless, like builtin i32.
type Signedness uint8

const (
	Signless Signedness = iota
	Signed
	Unsigned
)

// IntegerType is iN, siN or uiN. Booleans are i1 (VHLO bool_v1 reads as i1).
type IntegerType struct {
	Width      int
	Signedness Signedness
}

// FloatKind names a floating-point format. The value is the MLIR spelling.
type FloatKind string

const (
	F16           FloatKind = "f16"
	BF16          FloatKind = "bf16"
	F32           FloatKind = "f32"
	F64           FloatKind = "f64"
	F80           FloatKind = "f80"
	F128          FloatKind = "f128"
	TF32          FloatKind = "tf32"
	F8E4M3FN      FloatKind = "f8E4M3FN"
	F8E5M2        FloatKind = "f8E5M2"
	F8E4M3        FloatKind = "f8E4M3"
	F8E3M4        FloatKind = "f8E3M4"
	F8E4M3FNUZ    FloatKind = "f8E4M3FNUZ"
	F8E5M2FNUZ    FloatKind = "f8E5M2FNUZ"
	F8E4M3B11FNUZ FloatKind = "f8E4M3B11FNUZ"
	F8E8M0FNU     FloatKind = "f8E8M0FNU"
	F6E2M3FN      FloatKind = "f6E2M3FN"
	F6E3M2FN      FloatKind = "f6E3M2FN"
	F4E2M1FN      FloatKind = "f4E2M1FN"
)

// FloatType is a floating-point element type.
type FloatType struct{ Kind FloatKind }

// Bits is the storage width of one value.
func (t *FloatType) Bits() int {
	switch t.Kind {
	case F16, BF16:
		return 16
	case F32:
		return 32
	case F64:
		return 64
	case F80:
		return 80
	case F128:
		return 128
	case TF32:
		return 19
	case F6E2M3FN, F6E3M2FN:
		return 6
	case F4E2M1FN:
		return 4
	}
	return 8
}

// ComplexType is complex<T>.
type ComplexType struct{ Elem Type }

// IndexType is index.
type IndexType struct{}

// NoneType is none; VHLO uses none_v1 in attributes that are "unset".
type NoneType struct{}

// TokenType is the StableHLO token (vhlo token_v1).
type TokenType struct{}

// WitnessType is the shape dialect's witness (vhlo witness_v1).
type WitnessType struct{}

// TupleType is tuple<...>.
type TupleType struct{ Elems []Type }

// FutureType is the StableHLO future (vhlo future_v1) of async ops.
type FutureType struct{ Types []Type }

// FunctionType is (inputs) -> results.
type FunctionType struct{ Inputs, Results []Type }

// BufferType is VHLO's ranked buffer (buffer_v1).
type BufferType struct {
	Shape []int64
	Elem  Type
}

// VectorType is a builtin vector; Scalable is nil unless some dim is scalable.
type VectorType struct {
	Shape    []int64
	Elem     Type
	Scalable []bool
}

// MemRefType is a builtin memref; Layout and MemorySpace may be nil.
type MemRefType struct {
	Shape       []int64
	Elem        Type
	Layout      Attr
	MemorySpace Attr
	Ranked      bool
}

// QuantizedType is a uniform quantized type (vhlo quant_v1 and
// quant_per_axis_v1). PerAxis types have Axis >= 0 and one scale and zero
// point per slice; per-tensor types have Axis -1 and one of each.
type QuantizedType struct {
	Flags      uint64
	Storage    Type
	Expressed  Type
	Axis       int64
	Scales     []float64
	ZeroPoints []int64
	StorageMin int64
	StorageMax int64
}

// OpaqueType is a type of a dialect this package does not decode, or one
// written in textual form that it does not parse. Reading never fails on one.
type OpaqueType struct {
	Dialect string
	Text    string // the textual form, when the writer used it
	Data    []byte // the dialect's own encoding, when it used that
}

func (*TensorType) isType()         {}
func (*UnrankedTensorType) isType() {}
func (*IntegerType) isType()        {}
func (*FloatType) isType()          {}
func (*ComplexType) isType()        {}
func (*IndexType) isType()          {}
func (*NoneType) isType()           {}
func (*TokenType) isType()          {}
func (*WitnessType) isType()        {}
func (*TupleType) isType()          {}
func (*FutureType) isType()         {}
func (*FunctionType) isType()       {}
func (*BufferType) isType()         {}
func (*VectorType) isType()         {}
func (*MemRefType) isType()         {}
func (*QuantizedType) isType()      {}
func (*OpaqueType) isType()         {}

// NumElements is the product of the dims, or -1 if one is dynamic or the
// product overflows.
func (t *TensorType) NumElements() int64 { return numElements(t.Shape) }

func numElements(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return -1
		}
		if d != 0 && n > (1<<62)/d {
			return -1
		}
		n *= d
	}
	return n
}

func writeShape(b *strings.Builder, shape []int64) {
	for _, d := range shape {
		if d == Dynamic {
			b.WriteByte('?')
		} else {
			b.WriteString(strconv.FormatInt(d, 10))
		}
		b.WriteByte('x')
	}
}

func (t *TensorType) String() string {
	var b strings.Builder
	b.WriteString("tensor<")
	writeShape(&b, t.Shape)
	b.WriteString(typeString(t.Elem))
	if t.Encoding != nil {
		b.WriteString(", ")
		b.WriteString(attrString(t.Encoding))
	}
	b.WriteByte('>')
	return b.String()
}

func (t *UnrankedTensorType) String() string { return "tensor<*x" + typeString(t.Elem) + ">" }

func (t *IntegerType) String() string {
	prefix := "i"
	switch t.Signedness {
	case Signed:
		prefix = "si"
	case Unsigned:
		prefix = "ui"
	}
	return prefix + strconv.Itoa(t.Width)
}

func (t *FloatType) String() string   { return string(t.Kind) }
func (t *ComplexType) String() string { return "complex<" + typeString(t.Elem) + ">" }
func (*IndexType) String() string     { return "index" }
func (*NoneType) String() string      { return "none" }
func (*TokenType) String() string     { return "!stablehlo.token" }
func (*WitnessType) String() string   { return "!shape.witness" }
func (t *TupleType) String() string   { return "tuple<" + typeList(t.Elems) + ">" }
func (t *FutureType) String() string  { return "!stablehlo.future<" + typeList(t.Types) + ">" }
func (t *OpaqueType) String() string  { return opaqueText(t.Dialect, "!", t.Text, t.Data) }
func (t *FunctionType) String() string {
	return "(" + typeList(t.Inputs) + ") -> " + resultList(t.Results)
}
func (t *BufferType) String() string    { return shapedString("!stablehlo.buffer<", t.Shape, t.Elem) }
func (t *QuantizedType) String() string { return quantString(t) }

func (t *VectorType) String() string {
	var b strings.Builder
	b.WriteString("vector<")
	for i, d := range t.Shape {
		if i < len(t.Scalable) && t.Scalable[i] {
			b.WriteString("[" + strconv.FormatInt(d, 10) + "]x")
		} else {
			b.WriteString(strconv.FormatInt(d, 10) + "x")
		}
	}
	b.WriteString(typeString(t.Elem) + ">")
	return b.String()
}

func (t *MemRefType) String() string {
	var b strings.Builder
	b.WriteString("memref<")
	if t.Ranked {
		writeShape(&b, t.Shape)
	} else {
		b.WriteString("*x")
	}
	b.WriteString(typeString(t.Elem))
	if t.Layout != nil {
		b.WriteString(", " + attrString(t.Layout))
	}
	if t.MemorySpace != nil {
		b.WriteString(", " + attrString(t.MemorySpace))
	}
	b.WriteByte('>')
	return b.String()
}

func shapedString(prefix string, shape []int64, elem Type) string {
	var b strings.Builder
	b.WriteString(prefix)
	writeShape(&b, shape)
	b.WriteString(typeString(elem) + ">")
	return b.String()
}

// quantString follows the quant dialect's spelling,
// !quant.uniform<i8<-127:127>:f32:1, {0.5:0,0.25:0}>; the flags' low bit
// says the storage is signed.
func quantString(t *QuantizedType) string {
	var b strings.Builder
	storage := typeString(t.Storage)
	if it, ok := t.Storage.(*IntegerType); ok {
		storage = "u" + strconv.Itoa(it.Width)
		if t.Flags&1 == 1 {
			storage = "i" + strconv.Itoa(it.Width)
		}
	}
	b.WriteString("!quant.uniform<" + storage + "<" + strconv.FormatInt(t.StorageMin, 10) + ":" +
		strconv.FormatInt(t.StorageMax, 10) + ">:" + typeString(t.Expressed))
	scale := func(i int) string {
		return formatFloat64(t.Scales[i]) + ":" + strconv.FormatInt(t.ZeroPoints[i], 10)
	}
	if t.Axis >= 0 {
		b.WriteString(":" + strconv.FormatInt(t.Axis, 10) + ", {")
		for i := range t.Scales {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(scale(i))
		}
		b.WriteString("}>")
		return b.String()
	}
	b.WriteString(", " + scale(0) + ">")
	return b.String()
}

func typeString(t Type) string {
	if t == nil {
		return "<<nil type>>"
	}
	return t.String()
}

func typeList(ts []Type) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = typeString(t)
	}
	return strings.Join(parts, ", ")
}

// resultList prints function results the way MLIR does: a lone non-function
// result bare, anything else in parentheses.
func resultList(ts []Type) string {
	if len(ts) == 1 {
		if _, isFn := ts[0].(*FunctionType); !isFn {
			return typeString(ts[0])
		}
	}
	return "(" + typeList(ts) + ")"
}

// Equal reports whether two types are the same type.
func Equal(a, b Type) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	return a.String() == b.String()
}

// ElementType is the element type of a tensor, unranked tensor, vector,
// memref or buffer, and the type itself otherwise.
func ElementType(t Type) Type {
	switch t := t.(type) {
	case *TensorType:
		return t.Elem
	case *UnrankedTensorType:
		return t.Elem
	case *VectorType:
		return t.Elem
	case *MemRefType:
		return t.Elem
	case *BufferType:
		return t.Elem
	}
	return t
}

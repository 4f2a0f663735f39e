package lower

import (
	"fmt"

	"github.com/metalplug/metalplug/backend/ir"
)

// AttrKind is how an attribute is read from TensorFlow.
type AttrKind int

const (
	AttrType AttrKind = iota
	AttrInt
	AttrInts
	AttrString
	AttrBool
	AttrFloat
	AttrStrings // list(string), such as the fused ops' fused_ops
	AttrFloats  // list(float), such as Bucketize's boundaries
)

// AttrSpec names one attribute a kernel reads; an optional one may be absent
// (older graphs), and Default holds its value then.
type AttrSpec struct {
	Name     string
	Kind     AttrKind
	Optional bool
}

// Attrs are the attribute values of one node.
type Attrs struct {
	Types   map[string]ir.DType
	Ints    map[string][]int64
	Strings map[string]string
	Bools   map[string]bool
	Floats  map[string]float32
	// StringLists holds the list(string) attributes (AttrStrings).
	StringLists map[string][]string
	// FloatLists holds the list(float) attributes (AttrFloats).
	FloatLists map[string][]float32
}

// NewAttrs makes an empty attribute set.
func NewAttrs() *Attrs {
	return &Attrs{Types: map[string]ir.DType{}, Ints: map[string][]int64{}, Strings: map[string]string{},
		Bools: map[string]bool{}, Floats: map[string]float32{}, StringLists: map[string][]string{},
		FloatLists: map[string][]float32{}}
}

// String returns attribute name, or def if it was not set.
func (a *Attrs) String(name, def string) string {
	if v, ok := a.Strings[name]; ok {
		return v
	}
	return def
}

// Bool returns attribute name, or false.
func (a *Attrs) Bool(name string) bool { return a.Bools[name] }

// IntList returns attribute name as ints, or def.
func (a *Attrs) IntList(name string, def []int) []int {
	v, ok := a.Ints[name]
	if !ok {
		return def
	}
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

// StringList returns the list(string) attribute name, or nil if it was not set.
func (a *Attrs) StringList(name string) []string { return a.StringLists[name] }

// FloatList returns the list(float) attribute name, or nil if it was not set.
func (a *Attrs) FloatList(name string) []float32 { return a.FloatLists[name] }

// Int returns the single-int attribute name (AttrInt), or def.
func (a *Attrs) Int(name string, def int64) int64 {
	if v, ok := a.Ints[name]; ok && len(v) == 1 {
		return v[0]
	}
	return def
}

// BoolOr returns attribute name, or def if it was not set.
func (a *Attrs) BoolOr(name string, def bool) bool {
	if v, ok := a.Bools[name]; ok {
		return v
	}
	return def
}

// Float returns attribute name, or def if it was not set.
func (a *Attrs) Float(name string, def float32) float32 {
	if v, ok := a.Floats[name]; ok {
		return v
	}
	return def
}

// Type returns the type attribute name, or def if it was not set.
func (a *Attrs) Type(name string, def ir.DType) ir.DType {
	if v, ok := a.Types[name]; ok {
		return v
	}
	return def
}

// Key is a canonical text of the attributes, for cache keys.
func (a *Attrs) Key() string {
	return fmt.Sprint(a.Types, a.Ints, a.Strings, a.Bools, a.Floats, a.StringLists, a.FloatLists)
}

// TensorFlow's TF_DataType numbers, from tensorflow/c/tf_datatype.h.
const (
	tfFloat    = 1
	tfDouble   = 2
	tfInt32    = 3
	tfUint8    = 4
	tfInt16    = 5
	tfInt8     = 6
	tfComplex  = 8 // complex64
	tfInt64    = 9
	tfBool     = 10
	tfBfloat16 = 14
	tfHalf     = 19
)

var fromTF = map[int]ir.DType{
	tfFloat: ir.F32, tfDouble: ir.F64, tfInt32: ir.I32, tfUint8: ir.U8, tfInt16: ir.I16,
	tfInt8: ir.I8, tfInt64: ir.I64, tfBool: ir.Bool, tfBfloat16: ir.BF16, tfHalf: ir.F16,
	tfComplex: ir.C64,
}

// FromTF maps a TF_DataType to the IR's dtype; ok is false for dtypes the IR
// does not have (strings, complex128, quantized, unsigned beyond uint8).
func FromTF(t int) (ir.DType, bool) {
	d, ok := fromTF[t]
	return d, ok
}

// ToTF maps an IR dtype back to TensorFlow's number.
func ToTF(d ir.DType) int {
	for t, v := range fromTF {
		if v == d {
			return t
		}
	}
	return 0
}

package mlir

import (
	"encoding/hex"
	"math/big"
	"strconv"
	"strings"
)

// Attr is an MLIR attribute. Like types, VHLO attributes (#vhlo.integer_v1,
// #vhlo.array_v1, #vhlo.tensor_v1, ...) and their builtin counterparts
// decode to the same Go values; String prints the builtin spelling. What
// exists only in VHLO (enums, result accuracy, output-operand aliases,
// sharding attributes) keeps its VHLO spelling.
type Attr interface {
	String() string
	isAttr()
}

// NamedAttr is one entry of an attribute dictionary or of an op's
// properties.
type NamedAttr struct {
	Name  string
	Value Attr
}

// IntegerAttr is an integer of a given type. Value holds the bits as a
// two's-complement int64 (read a ui64 with Uint64); Big is set instead
// for integers wider than 64 bits.
type IntegerAttr struct {
	Type  Type
	Value int64
	Big   *big.Int
}

// Uint64 is the value read as unsigned.
func (a *IntegerAttr) Uint64() uint64 { return uint64(a.Value) }

// FloatAttr is a float of a given type. Bits is the value in the type's own
// format; Value is it converted to float64 (exact for every format up to
// f64).
type FloatAttr struct {
	Type  Type
	Value float64
	Bits  uint64
}

// BoolAttr is vhlo bool_v1 (builtin writes booleans as i1 IntegerAttrs,
// which stay IntegerAttrs).
type BoolAttr struct{ Value bool }

// StringAttr is a string; Type is set only for a builtin typed string.
type StringAttr struct {
	Value string
	Type  Type
}

// ArrayAttr is a list of attributes.
type ArrayAttr struct{ Elems []Attr }

// DictAttr is an attribute dictionary, in stored order.
type DictAttr struct{ Entries []NamedAttr }

// Get finds an entry by name.
func (a *DictAttr) Get(name string) (Attr, bool) {
	for _, e := range a.Entries {
		if e.Name == name {
			return e.Value, true
		}
	}
	return nil, false
}

// TypeAttr holds a type (vhlo type_v1, builtin TypeAttr).
type TypeAttr struct{ Type Type }

// UnitAttr is the builtin unit attribute.
type UnitAttr struct{}

// SymbolRefAttr is @root::@nested...
type SymbolRefAttr struct {
	Root   string
	Nested []string
}

// DenseArrayAttr is builtin array<i64: 1, 2>: Size elements of Elem packed
// in Data.
type DenseArrayAttr struct {
	Elem Type
	Size int
	Data []byte
}

// DenseStringAttr is a tensor of strings.
type DenseStringAttr struct {
	Type   Type
	Values []string
	Splat  bool
}

// SparseAttr is builtin sparse<indices, values>.
type SparseAttr struct {
	Type    Type
	Indices Attr
	Values  Attr
}

// ResourceAttr is builtin dense_resource<key>: the data lives in the
// bytecode's resource section.
type ResourceAttr struct {
	Type    Type
	Dialect string
	Key     string
	Data    []byte // the blob, without its alignment; nil if not a blob
}

// DistinctAttr is builtin distinct[n]<attr>.
type DistinctAttr struct{ Referenced Attr }

// EnumKind names a VHLO enumeration.
type EnumKind string

const (
	EnumComparisonDirection  EnumKind = "comparison_direction_v1"
	EnumComparisonType       EnumKind = "comparison_type_v1"
	EnumCustomCallAPIVersion EnumKind = "api_version_v1"
	EnumFftType              EnumKind = "fft_type_v1"
	EnumPrecision            EnumKind = "precision_v1"
	EnumRngAlgorithm         EnumKind = "rng_algorithm_v1"
	EnumRngDistribution      EnumKind = "rng_distribution_v1"
	EnumTranspose            EnumKind = "transpose_v1"
	EnumResultAccuracyMode   EnumKind = "result_accuracy_mode_v1"
)

// EnumAttr is a VHLO enum attribute: Value is the stored number and Name
// its case (ComparisonDirection EQ is 0, ...).
type EnumAttr struct {
	Kind  EnumKind
	Value uint64
	Name  string
}

// OutputOperandAliasAttr is vhlo output_operand_alias_v1 (custom_call's
// output_operand_aliases).
type OutputOperandAliasAttr struct {
	OutputTupleIndices  []int64
	OperandIndex        int64
	OperandTupleIndices []int64
}

// TypeExtensionsAttr is vhlo type_extensions_v1, the encoding of a tensor
// with bounded dynamic dims: one bound per dim, Dynamic where unbounded.
type TypeExtensionsAttr struct{ Bounds []int64 }

// ResultAccuracyAttr is vhlo result_accuracy_v1 (of exp, log, tanh, ... at
// v2). Mode is an EnumAttr of kind EnumResultAccuracyMode.
type ResultAccuracyAttr struct {
	Atol, Rtol float64
	Ulps       int64
	Mode       Attr
}

// SubAxisInfoAttr, AxisRefAttr, ReplicaGroupMeshAxesAttr, MeshAxisAttr and
// MeshAttr are the VHLO 1.16 sharding attributes of collectives.
type SubAxisInfoAttr struct{ PreSize, Size int64 }

type AxisRefAttr struct {
	Name        Attr
	SubAxisInfo Attr // nil if absent
}

type ReplicaGroupMeshAxesAttr struct{ Mesh, Axes Attr }

type MeshAxisAttr struct {
	Name Attr
	Size int64
}

type MeshAttr struct {
	Axes      Attr
	DeviceIDs Attr // nil if absent
}

// OpaqueAttr is an attribute of a dialect this package does not decode
// (sdy, mhlo, ...), or one it cannot parse from textual form. Data is the
// dialect's own encoding, Text the textual form when the writer used that.
type OpaqueAttr struct {
	Dialect string
	Text    string
	Data    []byte
}

func (*IntegerAttr) isAttr()              {}
func (*FloatAttr) isAttr()                {}
func (*BoolAttr) isAttr()                 {}
func (*StringAttr) isAttr()               {}
func (*ArrayAttr) isAttr()                {}
func (*DictAttr) isAttr()                 {}
func (*TypeAttr) isAttr()                 {}
func (*UnitAttr) isAttr()                 {}
func (*SymbolRefAttr) isAttr()            {}
func (*DenseAttr) isAttr()                {}
func (*DenseArrayAttr) isAttr()           {}
func (*DenseStringAttr) isAttr()          {}
func (*SparseAttr) isAttr()               {}
func (*ResourceAttr) isAttr()             {}
func (*DistinctAttr) isAttr()             {}
func (*EnumAttr) isAttr()                 {}
func (*OutputOperandAliasAttr) isAttr()   {}
func (*TypeExtensionsAttr) isAttr()       {}
func (*ResultAccuracyAttr) isAttr()       {}
func (*SubAxisInfoAttr) isAttr()          {}
func (*AxisRefAttr) isAttr()              {}
func (*ReplicaGroupMeshAxesAttr) isAttr() {}
func (*MeshAxisAttr) isAttr()             {}
func (*MeshAttr) isAttr()                 {}
func (*OpaqueAttr) isAttr()               {}
func (*LocAttr) isAttr()                  {}

func attrString(a Attr) string {
	if a == nil {
		return "<<nil attr>>"
	}
	return a.String()
}

func attrList(as []Attr) string {
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = attrString(a)
	}
	return strings.Join(parts, ", ")
}

func (a *IntegerAttr) String() string {
	if it, ok := a.Type.(*IntegerType); ok && it.Width == 1 {
		if a.Value != 0 {
			return "true"
		}
		return "false"
	}
	return a.valueString() + " : " + typeString(a.Type)
}

func (a *IntegerAttr) valueString() string {
	if a.Big != nil {
		return a.Big.String()
	}
	if it, ok := a.Type.(*IntegerType); ok && it.Signedness == Unsigned {
		return strconv.FormatUint(uint64(a.Value), 10)
	}
	return strconv.FormatInt(a.Value, 10)
}

func (a *FloatAttr) String() string {
	return formatFloatBits(a.Type, a.Bits) + " : " + typeString(a.Type)
}

func (a *BoolAttr) String() string { return strconv.FormatBool(a.Value) }

func (a *StringAttr) String() string {
	if a.Type != nil {
		return quote(a.Value) + " : " + typeString(a.Type)
	}
	return quote(a.Value)
}

func (a *ArrayAttr) String() string { return "[" + attrList(a.Elems) + "]" }

func (a *DictAttr) String() string { return "{" + namedList(a.Entries) + "}" }

func namedList(entries []NamedAttr) string {
	parts := make([]string, len(entries))
	for i, e := range entries {
		if _, unit := e.Value.(*UnitAttr); unit {
			parts[i] = keyString(e.Name)
			continue
		}
		parts[i] = keyString(e.Name) + " = " + attrString(e.Value)
	}
	return strings.Join(parts, ", ")
}

func (a *TypeAttr) String() string { return typeString(a.Type) }
func (*UnitAttr) String() string   { return "unit" }

func (a *SymbolRefAttr) String() string {
	var b strings.Builder
	b.WriteString(symbolString(a.Root))
	for _, n := range a.Nested {
		b.WriteString("::" + symbolString(n))
	}
	return b.String()
}

func symbolString(s string) string {
	if isBareIdent(s) {
		return "@" + s
	}
	return "@" + quote(s)
}

func (a *DenseArrayAttr) String() string {
	var b strings.Builder
	b.WriteString("array<" + typeString(a.Elem))
	w := ElementBytes(a.Elem)
	if a.Size > 0 && w > 0 && len(a.Data) == a.Size*w {
		b.WriteString(": ")
		for i := 0; i < a.Size; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(elementString(a.Elem, a.Data[i*w:(i+1)*w]))
		}
	}
	b.WriteByte('>')
	return b.String()
}

func (a *DenseStringAttr) String() string {
	parts := make([]string, len(a.Values))
	for i, v := range a.Values {
		parts[i] = quote(v)
	}
	inner := strings.Join(parts, ", ")
	if !a.Splat {
		inner = "[" + inner + "]"
	}
	return "dense<" + inner + "> : " + typeString(a.Type)
}

func (a *SparseAttr) String() string {
	return "sparse<" + attrString(a.Indices) + ", " + attrString(a.Values) + "> : " + typeString(a.Type)
}

func (a *ResourceAttr) String() string {
	return "dense_resource<" + a.Key + "> : " + typeString(a.Type)
}

func (a *DistinctAttr) String() string { return "distinct[0]<" + attrString(a.Referenced) + ">" }

func (a *EnumAttr) String() string { return "#vhlo<" + string(a.Kind) + " " + a.Name + ">" }

func (a *OutputOperandAliasAttr) String() string {
	return "#vhlo.output_operand_alias_v1<outputTupleIndices = " + intList(a.OutputTupleIndices) +
		", operandIndex = " + strconv.FormatInt(a.OperandIndex, 10) +
		", operandTupleIndices = " + intList(a.OperandTupleIndices) + ">"
}

func (a *TypeExtensionsAttr) String() string {
	return "#vhlo.type_extensions_v1<bounds = " + dimList(a.Bounds) + ">"
}

func (a *ResultAccuracyAttr) String() string {
	return "#vhlo.result_accuracy_v1<atol = " + formatFloatBits(&FloatType{Kind: F64}, f64bits(a.Atol)) +
		", rtol = " + formatFloatBits(&FloatType{Kind: F64}, f64bits(a.Rtol)) +
		", ulps = " + strconv.FormatInt(a.Ulps, 10) + ", mode = " + attrString(a.Mode) + ">"
}

func (a *SubAxisInfoAttr) String() string {
	return "#vhlo.sub_axis_info_v1<pre_size = " + strconv.FormatInt(a.PreSize, 10) +
		", size = " + strconv.FormatInt(a.Size, 10) + ">"
}

func (a *AxisRefAttr) String() string {
	s := "#vhlo.axis_ref_v1<name = " + attrString(a.Name)
	if a.SubAxisInfo != nil {
		s += ", sub_axis_info = " + attrString(a.SubAxisInfo)
	}
	return s + ">"
}

func (a *ReplicaGroupMeshAxesAttr) String() string {
	return "#vhlo.replica_group_mesh_axes_v1<mesh = " + attrString(a.Mesh) + ", axes = " + attrString(a.Axes) + ">"
}

func (a *MeshAxisAttr) String() string {
	return "#vhlo.mesh_axis_v1<name = " + attrString(a.Name) + ", size = " + strconv.FormatInt(a.Size, 10) + ">"
}

func (a *MeshAttr) String() string {
	s := "#vhlo.mesh_v1<axes = " + attrString(a.Axes)
	if a.DeviceIDs != nil {
		s += ", device_ids = " + attrString(a.DeviceIDs)
	}
	return s + ">"
}

func (a *OpaqueAttr) String() string { return opaqueText(a.Dialect, "#", a.Text, a.Data) }

// opaqueText prints what a foreign dialect wrote: its textual form if it
// used one, otherwise its encoding in hex, marked so it cannot pass for a
// decoded value.
func opaqueText(dialect, sigil, text string, data []byte) string {
	if text != "" {
		return text
	}
	return sigil + dialect + "<opaque \"0x" + strings.ToUpper(hex.EncodeToString(data)) + "\">"
}

func intList(v []int64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.FormatInt(x, 10)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func dimList(v []int64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		if x == Dynamic {
			parts[i] = "?"
		} else {
			parts[i] = strconv.FormatInt(x, 10)
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// isBareIdent reports whether MLIR prints s unquoted as a dictionary key or
// symbol name.
func isBareIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if i == 0 && !letter {
			return false
		}
		if !letter && !(c >= '0' && c <= '9') && c != '$' && c != '.' {
			return false
		}
	}
	return true
}

func keyString(s string) string {
	if isBareIdent(s) {
		return s
	}
	return quote(s)
}

// quote escapes like MLIR's printEscapedString: printable ASCII as is,
// backslash and quote escaped, everything else as \XX.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '"':
			b.WriteString(`\"`)
		case c >= 0x20 && c < 0x7F:
			b.WriteByte(c)
		default:
			b.WriteByte('\\')
			b.WriteString(strings.ToUpper(hex.EncodeToString([]byte{c})))
		}
	}
	b.WriteByte('"')
	return b.String()
}

package mlir

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// DenseAttr is a tensor constant: vhlo tensor_v1 and builtin dense
// elements. Data holds the elements little-endian, each in
// ElementBytes(elem) bytes (i1 as one byte 0 or 1, i4 in a byte, complex
// as real then imaginary); a splat holds just one element. This is the
// layout a constant op's result buffer wants, except that a splat must be
// repeated.
type DenseAttr struct {
	Type  Type // a *TensorType in practice
	Data  []byte
	Splat bool
}

// Elem is the element type.
func (a *DenseAttr) Elem() Type { return ElementType(a.Type) }

// NumElements is the number of elements of the type (not of Data).
func (a *DenseAttr) NumElements() int64 {
	if t, ok := a.Type.(*TensorType); ok {
		return t.NumElements()
	}
	if t, ok := a.Type.(*VectorType); ok {
		return numElements(t.Shape)
	}
	return -1
}

// Element returns the raw bytes of element i, taking splats into account.
func (a *DenseAttr) Element(i int) []byte {
	w := ElementBytes(a.Elem())
	if a.Splat {
		return a.Data[:w]
	}
	return a.Data[i*w : (i+1)*w]
}

// maxExpand bounds what Int64s and Float64s will allocate: they are meant
// for dimension lists and small constants, not for expanding a splat of a
// billion elements.
const maxExpand = 1 << 24

// Int64s returns the elements of an integer (or index, or i1) tensor,
// sign-extending signless and signed types and zero-extending unsigned
// ones. VHLO keeps dimension lists (broadcast_dimensions, the dims of
// dot_general, ...) as i64 tensors, so this is how to read them.
func (a *DenseAttr) Int64s() ([]int64, error) {
	n := a.NumElements()
	if n < 0 || n > maxExpand {
		return nil, fmt.Errorf("dense attribute of type %s has no static element count of at most %d", typeString(a.Type), maxExpand)
	}
	elem := a.Elem()
	out := make([]int64, n)
	for i := range out {
		v, ok := intElement(elem, a.Element(i))
		if !ok {
			return nil, fmt.Errorf("dense attribute of type %s is not an integer tensor", typeString(a.Type))
		}
		out[i] = v
	}
	return out, nil
}

// Float64s returns the elements of a float tensor converted to float64.
func (a *DenseAttr) Float64s() ([]float64, error) {
	n := a.NumElements()
	ft, ok := a.Elem().(*FloatType)
	if n < 0 || n > maxExpand || !ok {
		return nil, fmt.Errorf("dense attribute of type %s is not a static float tensor of at most %d elements", typeString(a.Type), maxExpand)
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = floatValue(ft.Kind, leUint(a.Element(i)))
	}
	return out, nil
}

// ElementBytes is the size of one element in a DenseAttr's Data: MLIR
// stores every element in whole bytes (i1 and i4 take one, tf32 three,
// index eight). It is 0 for types that are not dense element types.
func ElementBytes(t Type) int {
	switch t := t.(type) {
	case *IntegerType:
		return (t.Width + 7) / 8
	case *IndexType:
		return 8
	case *FloatType:
		return (t.Bits() + 7) / 8
	case *ComplexType:
		return 2 * ElementBytes(t.Elem)
	}
	return 0
}

func leUint(b []byte) uint64 {
	var buf [8]byte
	copy(buf[:], b)
	return binary.LittleEndian.Uint64(buf[:])
}

func intElement(t Type, b []byte) (int64, bool) {
	switch t := t.(type) {
	case *IndexType:
		return int64(leUint(b)), true
	case *IntegerType:
		if t.Width > 64 {
			return 0, false
		}
		u := leUint(b)
		if t.Width < 64 {
			u &= 1<<t.Width - 1
			if t.Signedness != Unsigned && t.Width > 1 && u>>(t.Width-1) == 1 {
				u |= ^uint64(0) << t.Width
			}
		}
		return int64(u), true
	}
	return 0, false
}

// elementString prints one element as MLIR does inside dense<...>.
func elementString(t Type, b []byte) string {
	switch t := t.(type) {
	case *IntegerType:
		if t.Width == 1 {
			return strconv.FormatBool(b[0] != 0)
		}
		v, ok := intElement(t, b)
		if !ok {
			return "0x" + strings.ToUpper(hex.EncodeToString(b))
		}
		if t.Signedness == Unsigned {
			return strconv.FormatUint(uint64(v), 10)
		}
		return strconv.FormatInt(v, 10)
	case *IndexType:
		return strconv.FormatInt(int64(leUint(b)), 10)
	case *FloatType:
		return formatFloatBits(t, leUint(b))
	case *ComplexType:
		h := len(b) / 2
		return "(" + elementString(t.Elem, b[:h]) + "," + elementString(t.Elem, b[h:]) + ")"
	}
	return "?"
}

// hexThreshold: above this many elements MLIR prints dense data as hex.
const hexThreshold = 100

func (a *DenseAttr) String() string {
	var b strings.Builder
	b.WriteString("dense<")
	elem := a.Elem()
	w := ElementBytes(elem)
	n := a.NumElements()
	switch {
	case w == 0 || n < 0:
		b.WriteString("\"0x" + strings.ToUpper(hex.EncodeToString(a.Data)) + "\"")
	case a.Splat:
		b.WriteString(elementString(elem, a.Data[:w]))
	case n == 0:
	case n > hexThreshold:
		b.WriteString("\"0x" + strings.ToUpper(hex.EncodeToString(a.Data)) + "\"")
	default:
		var shape []int64
		if t, ok := a.Type.(*TensorType); ok {
			shape = t.Shape
		} else if t, ok := a.Type.(*VectorType); ok {
			shape = t.Shape
		}
		next := 0
		writeNested(&b, shape, func() string {
			s := elementString(elem, a.Data[next*w:(next+1)*w])
			next++
			return s
		})
	}
	b.WriteString("> : ")
	b.WriteString(typeString(a.Type))
	return b.String()
}

// writeNested prints elements in row-major order with one bracket level
// per dimension, as MLIR does for non-splat dense attributes.
func writeNested(b *strings.Builder, shape []int64, elem func() string) {
	if len(shape) == 0 {
		b.WriteString(elem())
		return
	}
	b.WriteByte('[')
	for i := int64(0); i < shape[0]; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		writeNested(b, shape[1:], elem)
	}
	b.WriteByte(']')
}

// newDense checks raw element data against its type and builds the
// attribute: len(data) must be one element (a splat) or all of them.
// Booleans may arrive bit-packed (VHLO packs them; builtin did before MLIR
// moved to a byte per i1), so they are unpacked to a byte each first.
func newDense(t Type, data []byte, at int, vhlo bool) (*DenseAttr, error) {
	elem := ElementType(t)
	w := ElementBytes(elem)
	var n int64 = -1
	switch tt := t.(type) {
	case *TensorType:
		n = tt.NumElements()
	case *VectorType:
		n = numElements(tt.Shape)
	}
	if w == 0 || n < 0 {
		return nil, errorAt(at, "expected a static tensor of integers, floats or complex numbers for dense data, got %s", describe(t))
	}
	if it, ok := elem.(*IntegerType); ok && it.Width == 1 {
		data = unpackBools(data, n, vhlo)
		// MLIR keeps an all-equal boolean buffer as a splat (a packed
		// splat false, 0x00, unpacks to n zeros); so do we.
		if n > 1 && int64(len(data)) == n && allEqual(data) {
			data = data[:1]
		}
	}
	switch {
	case len(data) == w:
		// A splat, also of an empty tensor (jax's decompositions splat
		// their constants over whatever shape they are given, 0 included).
		return &DenseAttr{Type: t, Data: data, Splat: true}, nil
	case n <= int64(len(data)) && int64(len(data)) == n*int64(w):
		return &DenseAttr{Type: t, Data: data}, nil
	}
	return nil, errorAt(at, "expected dense data of %d elements of %d bytes (or one, a splat) for %s, got %d bytes",
		n, w, describe(t), len(data))
}

// unpackBools mirrors StableHLO's reader for VHLO: a single 0xFF is a true
// splat, ceil(n/8) bytes (when that differs from n) is one bit per element,
// and anything else is already a byte per element. Builtin data is a byte
// per element (or one byte, a splat) unless its size says it is packed.
func unpackBools(data []byte, n int64, vhlo bool) []byte {
	if len(data) == 1 && (data[0] == 0xFF || !vhlo) {
		return []byte{data[0] & 1}
	}
	packed := (n + 7) / 8
	if int64(len(data)) == packed && packed != n {
		out := make([]byte, n)
		for i := range out {
			out[i] = data[i/8] >> (i % 8) & 1
		}
		return out
	}
	return data
}

func allEqual(b []byte) bool {
	for _, c := range b {
		if c != b[0] {
			return false
		}
	}
	return true
}

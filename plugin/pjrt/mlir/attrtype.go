package mlir

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"strings"
)

// maxNesting bounds how deeply attributes, types and regions may nest, so
// that hostile input cannot exhaust the stack. jax's deepest structures
// (call-site chains of a traceback, nested loops) stay far below it.
const maxNesting = 512

// entry is one attribute or type in the attribute/type section. It is
// decoded on first use, as the C++ reader does, and cached.
type entry struct {
	dialect *dialect
	custom  bool // dialect's own encoding; otherwise NUL-terminated text
	data    []byte
	base    int
	state   uint8 // 0 not read, 1 being read, 2 done
	attr    Attr
	typ     Type
}

const (
	entryUnread = iota
	entryReading
	entryDone
)

// attr resolves attribute index idx. at is where the reference was read,
// for the error message.
func (p *parser) attr(idx uint64, at int) (Attr, error) {
	if idx >= uint64(len(p.attrs)) {
		return nil, errorAt(at, "expected an attribute index below %d, got %d", len(p.attrs), idx)
	}
	e := &p.attrs[idx]
	switch e.state {
	case entryDone:
		return e.attr, nil
	case entryReading:
		return nil, errorAt(at, "attribute %d refers to itself", idx)
	}
	if p.depth >= maxNesting {
		return nil, errorAt(at, "attributes and types nest deeper than %d", maxNesting)
	}
	p.depth++
	e.state = entryReading
	a, err := p.decodeAttr(e)
	p.depth--
	if err != nil {
		e.state = entryUnread
		return nil, err
	}
	e.attr, e.state = a, entryDone
	return a, nil
}

// typ resolves type index idx.
func (p *parser) typ(idx uint64, at int) (Type, error) {
	if idx >= uint64(len(p.types)) {
		return nil, errorAt(at, "expected a type index below %d, got %d", len(p.types), idx)
	}
	e := &p.types[idx]
	switch e.state {
	case entryDone:
		return e.typ, nil
	case entryReading:
		return nil, errorAt(at, "type %d refers to itself", idx)
	}
	if p.depth >= maxNesting {
		return nil, errorAt(at, "attributes and types nest deeper than %d", maxNesting)
	}
	p.depth++
	e.state = entryReading
	t, err := p.decodeType(e)
	p.depth--
	if err != nil {
		e.state = entryUnread
		return nil, err
	}
	e.typ, e.state = t, entryDone
	return t, nil
}

func (p *parser) decodeAttr(e *entry) (Attr, error) {
	d := newDecoder(e.data, e.base)
	if !e.custom {
		text, err := d.cstring("attribute text")
		if err != nil {
			return nil, err
		}
		if !d.empty() {
			return nil, d.errorf("expected the end of an attribute entry after its text, found %d more bytes", d.remaining())
		}
		return textAttr(e.dialect.name, text), nil
	}
	var a Attr
	var err error
	switch e.dialect.name {
	case "builtin":
		a, err = p.builtinAttr(d)
	case "vhlo":
		a, err = p.vhloAttr(d)
	default:
		return &OpaqueAttr{Dialect: e.dialect.name, Data: e.data}, nil
	}
	if err != nil {
		return nil, err
	}
	if !d.empty() {
		return nil, d.errorf("expected the end of a %s attribute entry, found %d more bytes", e.dialect.name, d.remaining())
	}
	return a, nil
}

func (p *parser) decodeType(e *entry) (Type, error) {
	d := newDecoder(e.data, e.base)
	if !e.custom {
		text, err := d.cstring("type text")
		if err != nil {
			return nil, err
		}
		if !d.empty() {
			return nil, d.errorf("expected the end of a type entry after its text, found %d more bytes", d.remaining())
		}
		return textType(e.dialect.name, text), nil
	}
	var t Type
	var err error
	switch e.dialect.name {
	case "builtin":
		t, err = p.builtinType(d)
	case "vhlo":
		t, err = p.vhloType(d)
	default:
		return &OpaqueType{Dialect: e.dialect.name, Data: e.data}, nil
	}
	if err != nil {
		return nil, err
	}
	if !d.empty() {
		return nil, d.errorf("expected the end of a %s type entry, found %d more bytes", e.dialect.name, d.remaining())
	}
	return t, nil
}

// The helpers below are the DialectBytecodeReader of the C++ reader: how a
// dialect's encoding refers to other entries and to strings.

func (p *parser) readAttr(d *decoder, what string) (Attr, error) {
	at := d.offset()
	idx, err := d.varint(what)
	if err != nil {
		return nil, err
	}
	return p.attr(idx, at)
}

// readOptionalAttr reads a reference whose low bit says whether it is
// present.
func (p *parser) readOptionalAttr(d *decoder, what string) (Attr, error) {
	at := d.offset()
	idx, present, err := d.varintFlag(what)
	if err != nil || !present {
		return nil, err
	}
	return p.attr(idx, at)
}

func (p *parser) readType(d *decoder, what string) (Type, error) {
	at := d.offset()
	idx, err := d.varint(what)
	if err != nil {
		return nil, err
	}
	return p.typ(idx, at)
}

func (p *parser) readTypes(d *decoder, what string) ([]Type, error) {
	n, err := d.count("number of "+what, 1)
	if err != nil {
		return nil, err
	}
	ts := make([]Type, n)
	for i := range ts {
		if ts[i], err = p.readType(d, what); err != nil {
			return nil, err
		}
	}
	return ts, nil
}

func (p *parser) readAttrs(d *decoder, what string) ([]Attr, error) {
	n, err := d.count("number of "+what, 1)
	if err != nil {
		return nil, err
	}
	as := make([]Attr, n)
	for i := range as {
		if as[i], err = p.readAttr(d, what); err != nil {
			return nil, err
		}
	}
	return as, nil
}

func (p *parser) readString(d *decoder, what string) (string, error) {
	at := d.offset()
	idx, err := d.varint(what)
	if err != nil {
		return "", err
	}
	return p.stringAt(idx, at)
}

func (p *parser) stringAt(idx uint64, at int) (string, error) {
	if idx >= uint64(len(p.strings)) {
		return "", errorAt(at, "expected a string index below %d, got %d", len(p.strings), idx)
	}
	return p.strings[idx], nil
}

func readSignedList(d *decoder, what string) ([]int64, error) {
	n, err := d.count("number of "+what, 1)
	if err != nil {
		return nil, err
	}
	v := make([]int64, n)
	for i := range v {
		if v[i], err = d.svarint(what); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func readBlob(d *decoder, what string) ([]byte, int, error) {
	size, err := d.varint(what + " size")
	if err != nil {
		return nil, 0, err
	}
	at := d.offset()
	b, err := d.bytes(size, what)
	return b, at, err
}

// apInt reads an integer of a known bit width: a byte up to 8 bits, a
// zigzag varint up to 64, and a list of zigzag words beyond. The result is
// the low 64 bits, and the whole value when wider.
func readAPInt(d *decoder, width int, what string) (uint64, *big.Int, error) {
	switch {
	case width <= 8:
		b, err := d.byte1(what)
		return uint64(b), nil, err
	case width <= 64:
		u, err := d.varint(what)
		if err != nil {
			return 0, nil, err
		}
		// The writer zigzag-encodes the bits as if they were signed.
		return uint64(int64(u>>1) ^ -int64(u&1)), nil, nil
	}
	n, err := d.count("number of words of "+what, 1)
	if err != nil {
		return 0, nil, err
	}
	if n > (width+63)/64 {
		return 0, nil, d.errorf("expected at most %d words for a %d-bit %s, got %d", (width+63)/64, width, what, n)
	}
	// Words come least significant first; SetBytes wants big-endian bytes.
	be := make([]byte, 8*n)
	var low uint64
	for i := 0; i < n; i++ {
		w, err := d.svarint(what)
		if err != nil {
			return 0, nil, err
		}
		if i == 0 {
			low = uint64(w)
		}
		binary.BigEndian.PutUint64(be[8*(n-1-i):], uint64(w))
	}
	return low, new(big.Int).SetBytes(be), nil
}

// truncBits keeps the low width bits, as APInt does when it takes a value.
func truncBits(u uint64, width int) uint64 {
	if width >= 64 || width <= 0 {
		return u
	}
	return u & (1<<width - 1)
}

// intAttr builds an IntegerAttr from the bits read for its type, holding
// the value sign-extended unless the type is unsigned.
func intAttr(t Type, width int, low uint64, wide *big.Int) *IntegerAttr {
	if width > 64 {
		return &IntegerAttr{Type: t, Value: int64(low), Big: wide}
	}
	u := truncBits(low, width)
	signed := true
	if it, ok := t.(*IntegerType); ok && (it.Signedness == Unsigned || it.Width == 1) {
		signed = false
	}
	if signed && width < 64 && u>>(width-1)&1 == 1 {
		u |= ^uint64(0) << width
	}
	return &IntegerAttr{Type: t, Value: int64(u)}
}

// floatAttr builds a FloatAttr from the bits read for its float type.
func floatAttr(t Type, low uint64, wide *big.Int, at int) (*FloatAttr, error) {
	ft, ok := t.(*FloatType)
	if !ok {
		return nil, errorAt(at, "expected a float type for a float attribute, got %s", describe(t))
	}
	bits := truncBits(low, ft.Bits())
	return &FloatAttr{Type: t, Bits: bits, Value: floatValue(ft.Kind, bits)}, nil
}

// intWidth is the storage width of an integer attribute's type.
func intWidth(t Type, at int) (int, error) {
	switch t := t.(type) {
	case *IntegerType:
		return t.Width, nil
	case *IndexType:
		return 64, nil
	}
	return 0, errorAt(at, "expected an integer or index type for an integer attribute, got %s", describe(t))
}

// describe names a type or attribute for an error message without printing
// it whole: attributes share entries, so hostile input can make the full
// text exponentially long. Simple types print as text, the rest by kind.
func describe(x any) string {
	switch x := x.(type) {
	case *IntegerType, *FloatType, *IndexType, *NoneType:
		return x.(Type).String()
	case *TensorType:
		switch x.Elem.(type) {
		case *IntegerType, *FloatType, *IndexType:
			if x.Encoding == nil {
				return x.String()
			}
		}
	case *StringAttr:
		if len(x.Value) < 64 && x.Type == nil {
			return x.String()
		}
	case nil:
		return "nothing"
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", x), "*mlir.")
}

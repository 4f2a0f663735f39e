package mlir

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Error is a malformed or unsupported input. Offset is absolute, from the
// first byte of the buffer given to Read, so a hex dump finds the spot.
type Error struct {
	Offset int
	Msg    string
}

func (e *Error) Error() string {
	return fmt.Sprintf("mlir bytecode: offset %d (0x%x): %s", e.Offset, e.Offset, e.Msg)
}

// decoder reads the primitives of the bytecode format from one window of
// the buffer (a section, an attribute entry, a properties blob). base is
// the window's offset in the whole buffer, so errors stay absolute.
type decoder struct {
	data []byte
	base int
	pos  int
}

func newDecoder(data []byte, base int) *decoder {
	return &decoder{data: data, base: base}
}

// offset is the absolute position of the next byte.
func (d *decoder) offset() int { return d.base + d.pos }

func (d *decoder) remaining() int { return len(d.data) - d.pos }

func (d *decoder) empty() bool { return d.pos >= len(d.data) }

// errorf builds an Error at the current position.
func (d *decoder) errorf(format string, args ...any) error {
	return &Error{Offset: d.offset(), Msg: fmt.Sprintf(format, args...)}
}

// errorAt builds an Error at an absolute offset recorded earlier.
func errorAt(offset int, format string, args ...any) error {
	return &Error{Offset: offset, Msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) byte1(what string) (byte, error) {
	if d.empty() {
		return 0, d.errorf("expected %s (a byte), found the end of the data", what)
	}
	b := d.data[d.pos]
	d.pos++
	return b, nil
}

func (d *decoder) bytes(n uint64, what string) ([]byte, error) {
	if n > uint64(d.remaining()) {
		return nil, d.errorf("expected %s of %d bytes, only %d remain", what, n, d.remaining())
	}
	b := d.data[d.pos : d.pos+int(n)]
	d.pos += int(n)
	return b, nil
}

// varint reads a PrefixVarInt: the count of trailing zero bits of the first
// byte is the number of bytes that follow; a zero first byte means eight
// full bytes follow.
func (d *decoder) varint(what string) (uint64, error) {
	start := d.pos
	first, err := d.byte1(what)
	if err != nil {
		return 0, err
	}
	if first&1 == 1 {
		return uint64(first >> 1), nil
	}
	if first == 0 {
		b, err := d.bytes(8, what)
		if err != nil {
			d.pos = start
			return 0, d.errorf("expected %s (a 9-byte varint), found the end of the data", what)
		}
		return binary.LittleEndian.Uint64(b), nil
	}
	extra := bits.TrailingZeros8(first)
	b, err := d.bytes(uint64(extra), what)
	if err != nil {
		d.pos = start
		return 0, d.errorf("expected %s (a %d-byte varint), found the end of the data", what, extra+1)
	}
	v := uint64(first)
	for i, c := range b {
		v |= uint64(c) << (8 * (i + 1))
	}
	return v >> (extra + 1), nil
}

// svarint reads a zigzag-encoded signed varint.
func (d *decoder) svarint(what string) (int64, error) {
	u, err := d.varint(what)
	if err != nil {
		return 0, err
	}
	return int64(u>>1) ^ -int64(u&1), nil
}

// varintFlag reads a varint whose low bit is a flag: (value << 1) | flag.
func (d *decoder) varintFlag(what string) (uint64, bool, error) {
	u, err := d.varint(what)
	if err != nil {
		return 0, false, err
	}
	return u >> 1, u&1 == 1, nil
}

// count reads a varint that sizes a list whose entries each take at least
// minBytes bytes, and rejects counts the remaining data cannot hold, so a
// corrupt count never turns into a huge allocation.
func (d *decoder) count(what string, minBytes int) (int, error) {
	at := d.offset()
	n, err := d.varint(what)
	if err != nil {
		return 0, err
	}
	if minBytes > 0 && n > uint64(d.remaining()/minBytes) {
		return 0, errorAt(at, "%s %d exceeds what the remaining %d bytes can hold", what, n, d.remaining())
	}
	if minBytes == 0 && n > 1<<24 {
		return 0, errorAt(at, "%s %d is implausibly large", what, n)
	}
	return int(n), nil
}

// cstring reads a NUL-terminated string.
func (d *decoder) cstring(what string) (string, error) {
	for i := d.pos; i < len(d.data); i++ {
		if d.data[i] == 0 {
			s := string(d.data[d.pos:i])
			d.pos = i + 1
			return s, nil
		}
	}
	return "", d.errorf("expected %s (a NUL-terminated string), found no NUL before the end of the data", what)
}

// alignTo skips 0xCB padding bytes until the absolute offset is a multiple
// of alignment. Offsets are taken from the start of the buffer, which is
// what the writer aligned against.
func (d *decoder) alignTo(alignment uint64, what string) error {
	if alignment == 0 || alignment&(alignment-1) != 0 || alignment > 1<<32 {
		return d.errorf("expected a power-of-two alignment for %s, got %d", what, alignment)
	}
	for uint64(d.offset())&(alignment-1) != 0 {
		b, err := d.byte1("alignment padding")
		if err != nil {
			return err
		}
		if b != 0xCB {
			d.pos--
			return d.errorf("expected alignment padding 0xCB before %s, got 0x%02X", what, b)
		}
	}
	return nil
}

// Section IDs of the bytecode format.
const (
	secString          = 0
	secDialect         = 1
	secAttrType        = 2
	secAttrTypeOffset  = 3
	secIR              = 4
	secResource        = 5
	secResourceOffset  = 6
	secDialectVersions = 7
	secProperties      = 8
	numSections        = 9
)

var sectionNames = [numSections]string{
	"string", "dialect", "attribute/type", "attribute/type offset", "IR",
	"resource", "resource offset", "dialect versions", "properties",
}

// section is one section's payload and where it starts.
type section struct {
	id   int
	data []byte
	base int
}

func (s section) decoder() *decoder { return newDecoder(s.data, s.base) }

// section reads a section header (an ID byte whose high bit announces an
// alignment, a length, the optional alignment and its padding) and returns
// the section's payload.
func (d *decoder) section(what string) (section, error) {
	at := d.offset()
	idByte, err := d.byte1(what + " ID")
	if err != nil {
		return section{}, err
	}
	id := int(idByte & 0x7F)
	if id >= numSections {
		return section{}, errorAt(at, "expected a %s ID below %d, got %d", what, numSections, id)
	}
	length, err := d.varint(what + " length")
	if err != nil {
		return section{}, err
	}
	if idByte&0x80 != 0 {
		alignment, err := d.varint(what + " alignment")
		if err != nil {
			return section{}, err
		}
		if err := d.alignTo(alignment, sectionNames[id]+" section"); err != nil {
			return section{}, err
		}
	}
	base := d.offset()
	data, err := d.bytes(length, sectionNames[id]+" section payload")
	if err != nil {
		return section{}, err
	}
	return section{id: id, data: data, base: base}, nil
}

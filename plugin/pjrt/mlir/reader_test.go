package mlir

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// putVarint writes a PrefixVarInt as the MLIR writer does: the value
// shifted past a marker of n-1 zero bits and a one, in n bytes; nine bytes
// (a zero first byte) above 56 bits.
func putVarint(b []byte, v uint64) []byte {
	if v >= 1<<56 {
		b = append(b, 0)
		for i := 0; i < 8; i++ {
			b = append(b, byte(v>>(8*i)))
		}
		return b
	}
	n := 1
	for v >= 1<<(7*n) {
		n++
	}
	enc := (v<<1 | 1) << (n - 1)
	for i := 0; i < n; i++ {
		b = append(b, byte(enc>>(8*i)))
	}
	return b
}

func TestVarintKnownBytes(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		want uint64
	}{
		{[]byte{0x01}, 0},
		{[]byte{0x03}, 1},
		{[]byte{0xFF}, 127},
		{[]byte{0x02, 0x02}, 128},
		{[]byte{0xFE, 0xFF}, 1<<14 - 1},
		{[]byte{0x04, 0x00, 0x02}, 1 << 14},
		{[]byte{0x80, 1, 0, 0, 0, 0, 0, 0}, 1},
		{[]byte{0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, math.MaxUint64},
	} {
		d := newDecoder(c.in, 0)
		got, err := d.varint("test value")
		if err != nil || got != c.want || !d.empty() {
			t.Errorf("varint(% x) = %d, %v (%d bytes left); want %d", c.in, got, err, d.remaining(), c.want)
		}
	}
}

func TestVarintRoundTrip(t *testing.T) {
	var values []uint64
	for shift := 0; shift < 64; shift++ {
		v := uint64(1) << shift
		values = append(values, v-1, v, v+1)
	}
	values = append(values, math.MaxUint64)
	var buf []byte
	for _, v := range values {
		buf = putVarint(buf, v)
	}
	d := newDecoder(buf, 0)
	for _, v := range values {
		got, err := d.varint("value")
		if err != nil || got != v {
			t.Fatalf("varint: got %d, %v; want %d", got, err, v)
		}
	}
	if !d.empty() {
		t.Errorf("%d bytes left over", d.remaining())
	}
}

func TestSignedAndFlaggedVarints(t *testing.T) {
	for _, c := range []struct {
		zigzag uint64
		want   int64
	}{{0, 0}, {1, -1}, {2, 1}, {3, -2}, {4, 2}, {math.MaxUint64, math.MinInt64}, {math.MaxUint64 - 1, math.MaxInt64}} {
		got, err := newDecoder(putVarint(nil, c.zigzag), 0).svarint("value")
		if err != nil || got != c.want {
			t.Errorf("svarint(%d) = %d, %v; want %d", c.zigzag, got, err, c.want)
		}
	}
	v, flag, err := newDecoder(putVarint(nil, 41<<1|1), 0).varintFlag("value")
	if err != nil || v != 41 || !flag {
		t.Errorf("varintFlag = %d, %v, %v; want 41, true", v, flag, err)
	}
}

func wantError(t *testing.T, err error, offset int, substr string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want an *Error", err)
	}
	if e.Offset != offset || !strings.Contains(e.Error(), substr) || !strings.Contains(e.Error(), "offset") {
		t.Errorf("got %q (offset %d), want offset %d and %q", e.Error(), e.Offset, offset, substr)
	}
}

func TestTruncatedVarintNamesOffset(t *testing.T) {
	d := newDecoder([]byte{0x01, 0x04, 0x00}, 100) // a 3-byte varint with one byte missing
	if _, err := d.varint("first"); err != nil {
		t.Fatal(err)
	}
	_, err := d.varint("op name")
	wantError(t, err, 101, "expected op name (a 3-byte varint)")
	_, err = newDecoder(nil, 7).varint("op name")
	wantError(t, err, 7, "found the end of the data")
}

func TestCount(t *testing.T) {
	d := newDecoder(append(putVarint(nil, 1000), 1, 2, 3), 0)
	_, err := d.count("number of things", 1)
	wantError(t, err, 0, "exceeds what the remaining 3 bytes can hold")
	n, err := newDecoder(append(putVarint(nil, 3), 1, 2, 3), 0).count("number of things", 1)
	if err != nil || n != 3 {
		t.Errorf("count = %d, %v; want 3", n, err)
	}
}

func TestSection(t *testing.T) {
	// An unaligned IR section, then a string section aligned to 8.
	buf := []byte{0xAA, 0xAA} // something before, to be skipped
	buf = append(buf, secIR)
	buf = putVarint(buf, 2)
	buf = append(buf, 'h', 'i')
	second := len(buf)
	buf = append(buf, secString|0x80)
	buf = putVarint(buf, 3)
	buf = putVarint(buf, 8)
	for len(buf)%8 != 0 {
		buf = append(buf, 0xCB)
	}
	start := len(buf)
	buf = append(buf, 'a', 'b', 'c')

	d := newDecoder(buf, 0)
	d.pos = 2
	s, err := d.section("section")
	if err != nil || s.id != secIR || string(s.data) != "hi" || s.base != 4 {
		t.Fatalf("first section: %+v, %v", s, err)
	}
	s, err = d.section("section")
	if err != nil || s.id != secString || string(s.data) != "abc" || s.base != start {
		t.Fatalf("aligned section: %+v, %v", s, err)
	}

	bad := append([]byte(nil), buf...)
	if start-second < 4 {
		t.Fatalf("no padding in the test data (%d, %d)", second, start)
	}
	bad[start-1] = 0x00 // padding must be 0xCB
	d = newDecoder(bad, 0)
	d.pos = second
	_, err = d.section("section")
	wantError(t, err, start-1, "expected alignment padding 0xCB")

	_, err = newDecoder([]byte{0x0F, 0x01}, 0).section("top-level section")
	wantError(t, err, 0, "expected a top-level section ID below 9, got 15")

	_, err = newDecoder([]byte{secIR, 0x09, 'x'}, 0).section("top-level section")
	wantError(t, err, 2, "expected IR section payload of 4 bytes, only 1 remain")
}

func TestStringSection(t *testing.T) {
	// Sizes come in reverse order and count the NUL.
	data := putVarint(nil, 2)
	data = putVarint(data, 3) // "bc\0", the last string
	data = putVarint(data, 2) // "a\0"
	data = append(data, "a\x00bc\x00"...)
	p := &parser{}
	if err := p.readStrings(section{id: secString, data: data}); err != nil {
		t.Fatal(err)
	}
	if len(p.strings) != 2 || p.strings[0] != "a" || p.strings[1] != "bc" {
		t.Errorf("strings = %q", p.strings)
	}
	data[len(data)-1] = 'x'
	wantError(t, p.readStrings(section{id: secString, data: data, base: 10}), 10+len(data)-1, "to end with NUL")
}

func TestReadRejectsOtherFiles(t *testing.T) {
	_, err := Read([]byte("not bytecode"))
	wantError(t, err, 0, "magic")
	_, err = Read([]byte("ML\xEFR\x0F"))
	wantError(t, err, 4, "expected a bytecode version of at most 6, got 7")
	_, err = Read(nil)
	wantError(t, err, 0, "magic")
}

package philox

import (
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

// TestKnownAnswers checks the generator against Random123's published
// known-answer vectors for Philox4x32-10 (kat_vectors).
func TestKnownAnswers(t *testing.T) {
	for _, c := range []struct {
		ctr  [4]uint32
		key  [2]uint32
		want [4]uint32
	}{
		{[4]uint32{}, [2]uint32{}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0},
			[4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	} {
		ctr := Counter{Lo: uint64(c.ctr[0]) | uint64(c.ctr[1])<<32, Hi: uint64(c.ctr[2]) | uint64(c.ctr[3])<<32}
		key := uint64(c.key[0]) | uint64(c.key[1])<<32
		if got := Block(ctr, key); got != c.want {
			t.Errorf("Block(%x, %x) = %x, want %x", c.ctr, c.key, got, c.want)
		}
	}
}

// TestCounterCarries checks the 128-bit addition across the halves.
func TestCounterCarries(t *testing.T) {
	if got := (Counter{Lo: ^uint64(0), Hi: 7}).Add(2); got != (Counter{Lo: 1, Hi: 8}) {
		t.Errorf("carry: %+v", got)
	}
}

// TestTruncatedNormalInRange draws many values and checks each lies in
// (-2, 2), and that groups start 256 blocks apart.
func TestTruncatedNormalInRange(t *testing.T) {
	d, err := Of(ir.RngTruncatedNormal, ir.F32)
	if err != nil {
		t.Fatal(err)
	}
	if d.Skip != 256 || d.Group != 4 {
		t.Fatalf("truncated normal: group %d skip %d, want 4 and 256", d.Group, d.Skip)
	}
	f := make([]float32, 4)
	for g := range 2000 {
		d.Floats(f, d.Stream(42, Counter{}, g))
		for _, x := range f {
			if !(x > -2 && x < 2) {
				t.Fatalf("group %d: %v outside (-2, 2)", g, x)
			}
		}
	}
	if _, err := Of(ir.RngNormal, ir.I32); err == nil {
		t.Error("normal int32 numbers were accepted")
	}
}

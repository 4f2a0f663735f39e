package eval

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

// TestComplexParts: real, imag and complex move the parts' bits, NaN
// payloads and signs, signed zeros and infinities included. (Signaling
// NaNs are left out: the interpreter holds floats as float64, and widening
// float32 quiets them.)
func TestComplexParts(t *testing.T) {
	re := []uint32{0x3fc00000, 0x80000000, 0x7fc12345, 0xffc00001, 0x7f800000, 0x00000001}
	im := []uint32{0xc0000000, 0xff800000, 0x00000000, 0x7fc00000, 0xffd00bad, 0x80000000}
	words := func(ws []uint32) []byte {
		var b []byte
		for _, w := range ws {
			b = binary.LittleEndian.AppendUint32(b, w)
		}
		return b
	}
	var z []uint32
	for i := range re {
		z = append(z, re[i], im[i])
	}
	n := len(re)
	b := ir.NewBuilder()
	x := b.Parameter(ir.TensorType{DType: ir.C64, Shape: ir.Shape{2, n / 2}})
	r, i := b.Parameter(f32(2, n/2)), b.Parameter(f32(2, n/2))
	p, err := b.Build(b.Real(x), b.Imag(x), b.Complex(r, i))
	if err != nil {
		t.Fatal(err)
	}
	args := []Tensor{FromBytes(p.Params[0], words(z)), FromBytes(p.Params[1], words(re)), FromBytes(p.Params[2], words(im))}
	got, err := Run(p, args)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range [][]byte{words(re), words(im), words(z)} {
		if g := got[k].Bytes(); !bytes.Equal(g, want) {
			t.Errorf("%s: % x, want % x", p.Instrs[p.Results[k]].Op, g, want)
		}
	}
}

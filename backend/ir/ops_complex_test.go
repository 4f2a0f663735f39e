package ir

import "testing"

// TestComplexPartsFold: a part of a number just put together is the
// operand it was made of, and a number put back together from its own
// parts is that number; other pairings are built as written.
func TestComplexPartsFold(t *testing.T) {
	b := NewBuilder()
	re, im := b.Parameter(tensorOf(F32, 3)), b.Parameter(tensorOf(F32, 3))
	z := b.Complex(re, im)
	if got := b.Real(z); got != re {
		t.Errorf("real(complex(re, im)) = %%%d, want re (%%%d)", got, re)
	}
	if got := b.Imag(z); got != im {
		t.Errorf("imag(complex(re, im)) = %%%d, want im (%%%d)", got, im)
	}
	w := b.Parameter(tensorOf(C64, 3))
	wr, wi := b.Real(w), b.Imag(w)
	if got := b.Complex(wr, wi); got != w {
		t.Errorf("complex(real(w), imag(w)) = %%%d, want w (%%%d)", got, w)
	}
	n := len(b.prog.Instrs)
	swapped := b.Complex(wi, wr)
	mixed := b.Complex(wr, b.Imag(z))
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
	if swapped == w || b.prog.Instrs[swapped].Op != OpComplex || b.prog.Instrs[mixed].Op != OpComplex || len(b.prog.Instrs) != n+2 {
		t.Errorf("complex of parts that are not one number's, in order, was folded:\n%v", b.prog.Instrs[n:])
	}
	p, err := b.Build(swapped, mixed)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(p); err != nil {
		t.Error(err)
	}
}

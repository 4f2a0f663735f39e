package ir

import (
	"strings"
	"testing"
)

// TestHostCall: the result tuple is the token then the declared results,
// whatever the operands; the program verifies (its results read from the
// tuple); the function's id tells two programs apart; a token that is not
// an empty bool, or no results at all, is refused.
func TestHostCall(t *testing.T) {
	build := func(id uint64) *Program {
		b := NewBuilder()
		x := b.Parameter(tensorOf(F32, 2, 3))
		tok := b.Constant(TokenType, nil)
		c := b.HostCall(id, tok, []Value{x, x}, []TensorType{tensorOf(I32, 4), tensorOf(F32)})
		rs := b.Results(c)
		if len(rs) != 3 {
			t.Fatalf("%d results, want the token and 2", len(rs))
		}
		for i, want := range []TensorType{TokenType, tensorOf(I32, 4), tensorOf(F32)} {
			if got := b.Type(rs[i]); got.DType != want.DType || !got.Shape.Equal(want.Shape) {
				t.Errorf("result %d is %v, want %v", i, got, want)
			}
		}
		p, err := b.Build(rs[1], rs[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := Verify(p); err != nil {
			t.Fatalf("does not verify: %v", err)
		}
		return p
	}
	a, b := build(7), build(8)
	if !strings.Contains(a.String(), "host=7") {
		t.Errorf("the program's text does not name the function:\n%s", a)
	}
	if a.Key() == b.Key() {
		t.Error("two programs calling different host functions have the same key")
	}

	bad := NewBuilder()
	x := bad.Parameter(tensorOf(F32, 2))
	bad.HostCall(1, x, nil, nil)
	if err := bad.Err(); err == nil || !strings.Contains(err.Error(), "token") {
		t.Errorf("a float token: %v, want an error naming the token", err)
	}
	// The table refuses an instruction without the token result.
	p := &Program{Params: []TensorType{TokenType}, Instrs: []Instr{
		{Op: OpParameter, Type: TokenType},
		{Op: OpHostCall, Args: []Value{0}, Host: &HostCallAttrs{ID: 1}, Tuple: []TensorType{}},
	}}
	if _, _, err := Normalize(p); err == nil {
		t.Error("a host call declaring no results verified")
	}
}

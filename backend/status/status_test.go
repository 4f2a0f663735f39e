package status

import (
	"errors"
	"fmt"
	"testing"
)

func TestClasses(t *testing.T) {
	base := errors.New("MatMul: shapes [2,3] and [4,5] do not match")
	cases := []struct {
		name string
		err  error
		want Code
	}{
		{"unclassified is internal", base, Internal},
		{"invalid", Invalid(base), InvalidArgument},
		{"invalidf", Invalidf("Sum: axis %d out of range", 3), InvalidArgument},
		{"exhausted", Exhausted(base), ResourceExhausted},
		{"wrapped keeps its class", fmt.Errorf("context: %w", Exhausted(base)), ResourceExhausted},
		{"or classifies the unclassified", Or(base, InvalidArgument), InvalidArgument},
		{"or keeps internal", Or(InternalError(base), InvalidArgument), Internal},
		{"or keeps exhausted", Or(fmt.Errorf("x: %w", Exhausted(base)), InvalidArgument), ResourceExhausted},
		{"unsupported", fmt.Errorf("op foo: %w", Unsupported), Unimplemented},
		{"or keeps unsupported", Or(fmt.Errorf("op foo: %w", Unsupported), InvalidArgument), Unimplemented},
		{"errorf", Errorf(FailedPrecondition, "the event is set already"), FailedPrecondition},
	}
	for _, c := range cases {
		if got := CodeOf(c.err); got != c.want {
			t.Errorf("%s: CodeOf = %v, want %v", c.name, got, c.want)
		}
	}
	if Invalid(nil) != nil || Or(nil, InvalidArgument) != nil {
		t.Error("classifying nil must give nil")
	}
	if got := Invalid(base).Error(); got != base.Error() {
		t.Errorf("message %q, want %q", got, base.Error())
	}
	if !errors.Is(Invalid(base), base) {
		t.Error("a classified error must unwrap to its cause")
	}
}

// TestCodeNames: each code prints its canonical name, and nothing else
// prints as one.
func TestCodeNames(t *testing.T) {
	if len(Codes) != 16 || Codes[0] != 1 || Codes[15] != 16 {
		t.Fatalf("Codes = %v, want the 16 canonical codes 1..16", Codes)
	}
	for i, c := range Codes {
		if int(c) != i+1 || c.String() != codeNames[i+1] {
			t.Errorf("code %d: %d %q", i+1, c, c)
		}
	}
	if InvalidArgument.String() != "INVALID_ARGUMENT" || Code(0).String() != "INTERNAL" || Code(99).String() != "INTERNAL" {
		t.Error("names of INVALID_ARGUMENT, 0 and 99")
	}
}

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

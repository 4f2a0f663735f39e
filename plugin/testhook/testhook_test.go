package testhook

import "testing"

// TestCounts: name panics always, name@N for the first N calls, a bad count
// is ignored, other names never.
func TestCounts(t *testing.T) {
	defer Arm("a, b@2, c@x")()
	panics := func(name string) (p bool) {
		defer func() { p = recover() != nil }()
		Check(name)
		return false
	}
	for i, want := range []bool{true, true, true} {
		if got := panics("a"); got != want {
			t.Errorf("a, call %d: panicked %v", i, got)
		}
	}
	for i, want := range []bool{true, true, false, false} {
		if got := panics("b"); got != want {
			t.Errorf("b@2, call %d: panicked %v", i, got)
		}
	}
	if panics("c") || panics("d") {
		t.Error("a bad count or an unnamed function panicked")
	}
}

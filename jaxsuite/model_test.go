package jaxsuite

import (
	"reflect"
	"strings"
	"testing"
)

// gapLine is a compile error of the model for a while loop, as jax shows
// it.
const gapLine = `jaxlib._jax.XlaRuntimeError: UNIMPLEMENTED: metal-model: compile: while: control flow is not lowered yet (...) (a part of the program needs the host, and METALPLUG_NO_CPU_FALLBACK=1 forbids it)`

func TestGapRule(t *testing.T) {
	for _, line := range []string{
		gapLine,
		strings.Replace(gapLine, "=1 ", "=unplanned ", 1),
		// after the plugin's own prefix, on a Mac's driver
		`jax.errors.JaxRuntimeError: UNIMPLEMENTED: metalplug: PJRT_Client_Compile: metal: compile: bitcast_convert: not lowered yet (a part of the program needs the host, and METALPLUG_NO_CPU_FALLBACK=unplanned forbids it)`,
		// a reason that says what a later rule looks for
		`jax.errors.JaxRuntimeError: UNIMPLEMENTED: metalplug: PJRT_Client_Compile: metal-model: compile: reduce: complex64 operands (a part of the program needs the host, and METALPLUG_NO_CPU_FALLBACK=unplanned forbids it)`,
	} {
		if got := Classify("tests/lax_test.py::T::testWhile", line, false); got.Name != GapRule.Name || got.Class != ClassOurs {
			t.Errorf("%s\nis classified %s by %q", line, got.Class, got.Name)
		}
		if got := Classify("tests/lax_test.py::T::testWhile", line, true); got.Name != CPURule.Name {
			t.Errorf("failing on CPU too, it is classified by %q", got.Name)
		}
	}
	if g := Gaps(gapLine); !reflect.DeepEqual(g, []Gap{{"while", "control flow is not lowered yet (...)"}}) {
		t.Errorf("Gaps: %+v", g)
	}
	// Several parts, one of whose reasons holds "; " and a colon.
	line := `E: metal-model: compile: reduce_region: a reduction by an arbitrary body is not lowered: the program runs on the CPU; the fixed monoids are reduce, which is; ` +
		`bitcast_convert: not lowered yet: inside a graph (a part of the program needs the host, and METALPLUG_NO_CPU_FALLBACK=unplanned forbids it) and more`
	want := []Gap{
		{"reduce_region", "a reduction by an arbitrary body is not lowered: the program runs on the CPU; the fixed monoids are reduce, which is"},
		{"bitcast_convert", "not lowered yet: inside a graph"},
	}
	if g := Gaps(line); !reflect.DeepEqual(g, want) {
		t.Errorf("Gaps: %+v", g)
	}
	if g := Gaps("AssertionError: Not equal to tolerance"); g != nil {
		t.Errorf("Gaps of another failure: %+v", g)
	}
	// The report keeps a gap's line whole, however long its reasons.
	long := strings.Replace(gapLine, "(...)", strings.Repeat("x", 400), 1)
	if got := ErrorLine(long + "\nsecond line"); got != long+" second line" {
		t.Errorf("ErrorLine cut a gap's line: %q", got)
	}
	if got := ErrorLine(strings.Repeat("y", 400)); len(got) != 303 {
		t.Errorf("ErrorLine keeps %d bytes of another line", len(got))
	}
}

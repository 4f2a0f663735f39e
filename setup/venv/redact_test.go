package venv

import (
	"strings"
	"testing"
)

func TestRedactHome(t *testing.T) {
	t.Setenv("HOME", "/home/someone")
	got := string(RedactHome([]byte(`{"python": "/home/someone/.cache/v/bin/python", "other": "/home/someoneelse/x"}`)))
	want := `{"python": "~/.cache/v/bin/python", "other": "/home/someoneelse/x"}`
	if got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestRedactPaths(t *testing.T) {
	t.Setenv("HOME", "/home/someone")
	got := string(RedactPaths([]byte(`"/src/tree/build/lib.so" "/home/someone/x"`), "/src/tree"))
	if want := `"build/lib.so" "~/x"`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestFindPython finds an interpreter of at least the asked minor, and
// refuses a minor no interpreter has.
func TestFindPython(t *testing.T) {
	t.Setenv("METALPLUG_JAX_PYTHON", "")
	p, err := FindPython(9)
	if err != nil {
		t.Skipf("no Python 3.9+: %v", err)
	}
	if m := minorOf(p); m < 9 {
		t.Errorf("FindPython(9) = %s, Python 3.%d", p, m)
	}
	if _, err := FindPython(99); err == nil || !strings.Contains(err.Error(), "METALPLUG_JAX_PYTHON") {
		t.Errorf("FindPython(99): %v", err)
	}
}

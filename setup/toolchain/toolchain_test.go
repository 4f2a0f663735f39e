package toolchain

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/metalplug/metalplug/setup/probe"
)

func TestLibraryPath(t *testing.T) {
	abs := filepath.Join(t.TempDir(), "lib.so")
	for _, c := range []struct{ root, out, want string }{
		{".", "build/libmetalplug.so", "build/libmetalplug.so"},
		{"/src/tree", "build/jax/libmetalplug.so", "/src/tree/build/jax/libmetalplug.so"},
		{"/src/tree", abs, abs},
	} {
		if got := (Options{Root: c.root, Out: c.out}).out(); got != c.want {
			t.Errorf("root %s, out %s: %s, want %s", c.root, c.out, got, c.want)
		}
	}
}

// TestBuildNeedsAFramework: a venv with neither framework gets the build's
// own refusal, naming the interpreter, before anything compiles.
func TestBuildNeedsAFramework(t *testing.T) {
	r := &probe.Report{Interpreter: probe.Interpreter{Path: "/venv/bin/python"}}
	_, err := Build(r, Options{Root: t.TempDir(), Out: "lib.so"})
	var nf *probe.NoFrameworkError
	if !errors.As(err, &nf) || nf.Python != "/venv/bin/python" {
		t.Errorf("Build = %v, want a NoFrameworkError naming the interpreter", err)
	}
}

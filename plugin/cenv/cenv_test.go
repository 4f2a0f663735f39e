package cenv

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/metalplug/metalplug/plugin/cenv/internal/cenvtest"
)

// TestSeesTheLiveEnvironment sets a variable behind Go's back, as Python's
// os.environ does in a process that loaded the library, and reads it.
func TestSeesTheLiveEnvironment(t *testing.T) {
	const name = "METALPLUG_CENV_TEST"
	if _, ok := Lookup(name); ok {
		t.Fatalf("%s is already set", name)
	}
	if err := cenvtest.Setenv(name, "from C"); err != nil {
		t.Fatal(err)
	}
	defer cenvtest.Unsetenv(name)
	if got, ok := Lookup(name); !ok || got != "from C" {
		t.Fatalf("Lookup(%s) = %q, %v; want \"from C\", true", name, got, ok)
	}
	if v, ok := syscall.Getenv(name); ok && v != "from C" {
		t.Fatalf("Go's copy holds %q", v)
	}
	if Get("METALPLUG_CENV_TEST_UNSET") != "" {
		t.Fatal("an unset variable must read as empty")
	}
}

// TestHarnessStaysInTheTests: only test files import cenvtest, so the
// library never links it (Go's internal rule already keeps it within
// plugin/cenv).
func TestHarnessStaysInTheTests(t *testing.T) {
	const harness = "github.com/metalplug/metalplug/plugin/cenv/internal/cenvtest"
	files := 0
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		if strings.HasPrefix(filepath.ToSlash(p), "internal/cenvtest/") {
			return nil
		}
		files++
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == harness {
				t.Errorf("%s imports %s: only tests may", p, harness)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 1 {
		t.Fatal("found no non-test Go file under plugin/cenv")
	}
}

package tf

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// The tests get what they need of C from internal/tfharness (a test file
// cannot use cgo), as unsafe.Pointer values.

// paramsOf converts p, registration tables the harness made, to the type
// of init's first parameter: a test file cannot name cgo's types, but type
// inference can read one off the init function it is for.
func paramsOf[P any](p unsafe.Pointer, init func(*P, statusT)) *P { return (*P)(p) }

// TestHarnessStaysInTheTests: only test files import the harness, so the
// library never links it (Go's internal rule already keeps it within
// plugin/tf).
func TestHarnessStaysInTheTests(t *testing.T) {
	const harness = "github.com/metalplug/metalplug/plugin/tf/internal/tfharness"
	files := 0
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		if strings.HasPrefix(filepath.ToSlash(p), "internal/tfharness/") {
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
	if files < 20 {
		t.Fatalf("found only %d non-test Go files under plugin/tf", files)
	}
}

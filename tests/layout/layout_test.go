// Package layout holds the repository to the layering of DESIGN.md: the
// library (plugin/, backend/) never depends on the tooling around it.
package layout

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/metalplug/metalplug/"

// tooling is every top-level directory the library must not import.
var tooling = []string{"setup", "matrix", "tests", "sweep", "wheels", "ci", "bench"}

// TestImportsRunOneWay: nothing in plugin/ or backend/ (tests included)
// imports the tooling, so the library builds from what it needs alone.
func TestImportsRunOneWay(t *testing.T) {
	root := filepath.Join("..", "..")
	checked := 0
	for _, top := range []string{"plugin", "backend"} {
		err := filepath.Walk(filepath.Join(root, top), func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || !strings.HasSuffix(p, ".go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			checked++
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				rest, ok := strings.CutPrefix(path, module)
				if !ok {
					continue
				}
				first, _, _ := strings.Cut(rest, "/")
				for _, bad := range tooling {
					if first == bad {
						t.Errorf("%s imports %s: the library must not depend on the tooling (%s/)", p, path, bad)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 50 {
		t.Fatalf("checked only %d files under plugin/ and backend/", checked)
	}
}

// Package layout holds the repository to the rules of DESIGN.md that no one
// package can check of itself: the library (plugin/, backend/) never
// depends on the tooling around it, the tooling's bottom layer (setup/)
// never on its pipelines and commands, and the library reads its settings
// from the live C environment.
package layout

import (
	"go/ast"
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
var tooling = []string{"setup", "matrix", "tests", "sweep", "wheels", "ci", "bench", "jaxsuite", "tasks", "cmd"}

// aboveSetup is the tooling built on setup/ (the pipelines, the Mage
// tasks, the commands), which setup/ must not import.
var aboveSetup = []string{"matrix", "tests", "sweep", "wheels", "ci", "bench", "jaxsuite", "tasks", "cmd"}

// libraryFile is one parsed Go file of plugin/ or backend/.
type libraryFile struct {
	path string
	test bool
	f    *ast.File
}

// libraryFiles parses every Go file under plugin/ and backend/.
func libraryFiles(t *testing.T) []libraryFile {
	t.Helper()
	root := filepath.Join("..", "..")
	var files []libraryFile
	for _, top := range []string{"plugin", "backend"} {
		err := filepath.Walk(filepath.Join(root, top), func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || !strings.HasSuffix(p, ".go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
			if err != nil {
				return err
			}
			files = append(files, libraryFile{path: p, test: strings.HasSuffix(p, "_test.go"), f: f})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) < 50 {
		t.Fatalf("found only %d files under plugin/ and backend/", len(files))
	}
	return files
}

// TestImportsRunOneWay: nothing in plugin/ or backend/ (tests included)
// imports the tooling, so the library builds from what it needs alone.
func TestImportsRunOneWay(t *testing.T) {
	for _, lf := range libraryFiles(t) {
		for _, imp := range lf.f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			rest, ok := strings.CutPrefix(path, module)
			if !ok {
				continue
			}
			first, _, _ := strings.Cut(rest, "/")
			for _, bad := range tooling {
				if first == bad {
					t.Errorf("%s imports %s: the library must not depend on the tooling (%s/)", lf.path, path, bad)
				}
			}
		}
	}
}

// TestSettingsReadFromTheLiveEnvironment: no code of the library reads the
// environment through Go's start-up copy (os.Getenv and friends), which
// never sees what Python set after the process started; plugin/cenv does.
// Tests and drivertest (a test harness go test runs, never loaded by
// Python) may.
func TestSettingsReadFromTheLiveEnvironment(t *testing.T) {
	for _, lf := range libraryFiles(t) {
		if lf.test || strings.Contains(lf.path, "drivertest") {
			continue
		}
		ast.Inspect(lf.f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "os" {
				switch sel.Sel.Name {
				case "Getenv", "LookupEnv", "Environ", "ExpandEnv":
					t.Errorf("%s: os.%s reads Go's start-up copy of the environment; use plugin/cenv", lf.path, sel.Sel.Name)
				}
			}
			return true
		})
	}
}

// TestSetupIsTheBottomLayer: setup/ (probe, build, install, venvs, docs,
// darwincheck, the Mac report) imports only the library and itself; the
// pipelines (wheels, matrix, jaxsuite, sweep, bench, ci) and the commands
// (tasks, cmd) stand on it, so its imports too run one way.
func TestSetupIsTheBottomLayer(t *testing.T) {
	root := filepath.Join("..", "..", "setup")
	n := 0
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		n++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			rest, ok := strings.CutPrefix(path, module)
			if !ok {
				continue
			}
			first, _, _ := strings.Cut(rest, "/")
			for _, bad := range aboveSetup {
				if first == bad {
					t.Errorf("%s imports %s: setup/ is the tooling's bottom layer and must not import %s/", p, path, bad)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 20 {
		t.Fatalf("found only %d Go files under setup/", n)
	}
}

// Package layout holds the repository to the rules of DESIGN.md that no one
// package can check of itself: the library (plugin/, backend/) never
// depends on the tooling around it, the tooling's bottom layer (setup/)
// never on its pipelines and commands, the library reads its settings
// from the live C environment, and the modules only the tooling needs stay
// in the tools module (tools/), out of the root module.
package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/metalplug/metalplug/"

// tooling is every top-level directory the library must not import.
var tooling = []string{"setup", "matrix", "tests", "sweep", "wheels", "ci", "bench", "jaxsuite", "tasks", "cmd", "tools"}

// aboveSetup is the tooling built on setup/ (the pipelines, the Mage
// tasks, the commands, the tools module), which setup/ must not import.
var aboveSetup = []string{"matrix", "tests", "sweep", "wheels", "ci", "bench", "jaxsuite", "tasks", "cmd", "tools"}

// toolsModule is the tools module's directory: a module of its own, holding
// what needs the modules in toolsOnly.
const toolsModule = "tools"

// toolsOnly are the modules only the tools module requires: the root
// module, which the library builds from, lists none of them.
var toolsOnly = []string{"github.com/google/go-github/", "gonum.org/v1/plot", "github.com/rhysd/actionlint"}

// goFile is one parsed Go file.
type goFile struct {
	path string
	test bool
	f    *ast.File
}

// goFiles parses every Go file under the repository's top directories tops,
// failing unless there are at least min.
func goFiles(t *testing.T, min int, tops ...string) []goFile {
	t.Helper()
	root := filepath.Join("..", "..")
	var files []goFile
	for _, top := range tops {
		err := filepath.Walk(filepath.Join(root, top), func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || !strings.HasSuffix(p, ".go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
			if err != nil {
				return err
			}
			files = append(files, goFile{path: p, test: strings.HasSuffix(p, "_test.go"), f: f})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) < min {
		t.Fatalf("found only %d Go files under %v", len(files), tops)
	}
	return files
}

// libraryFiles parses every Go file under plugin/ and backend/.
func libraryFiles(t *testing.T) []goFile { return goFiles(t, 50, "plugin", "backend") }

// importsOf lists the module's own packages f imports, each as its top
// directory and its path.
func importsOf(f *ast.File) (tops, paths []string) {
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if rest, ok := strings.CutPrefix(path, module); ok {
			first, _, _ := strings.Cut(rest, "/")
			tops, paths = append(tops, first), append(paths, path)
		}
	}
	return tops, paths
}

// TestImportsRunOneWay: nothing in plugin/ or backend/ (tests included)
// imports the tooling, so the library builds from what it needs alone.
func TestImportsRunOneWay(t *testing.T) {
	for _, lf := range libraryFiles(t) {
		tops, paths := importsOf(lf.f)
		for k, first := range tops {
			if slices.Contains(tooling, first) {
				t.Errorf("%s imports %s: the library must not depend on the tooling (%s/)", lf.path, paths[k], first)
			}
		}
	}
}

// testSupport are the library's packages that exist for tests: the C
// harnesses (Go test files cannot use cgo), the conformance suite and the
// IR's corpus reader.
var testSupport = []string{
	"plugin/pjrt/internal/pjrtharness", "plugin/tf/internal/tfharness", "plugin/cenv/internal/cenvtest",
	"backend/driver/drivertest", "backend/ir/irtest",
}

// TestTestSupportStaysInTests: only test files (and the test-support
// packages themselves) import test support, so none of it is built into
// the library.
func TestTestSupportStaysInTests(t *testing.T) {
	for _, lf := range libraryFiles(t) {
		if lf.test || slices.ContainsFunc(testSupport, func(dir string) bool { return strings.Contains(filepath.ToSlash(lf.path), "/"+dir+"/") }) {
			continue
		}
		_, paths := importsOf(lf.f)
		for _, p := range paths {
			if slices.Contains(testSupport, strings.TrimPrefix(p, module)) {
				t.Errorf("%s imports %s, which only tests may", lf.path, p)
			}
		}
	}
}

// TestNoDriverImportsAnother: a driver (backend/driver/<name>) builds on
// the driver interface alone; where a program runs on two drivers, the
// split layer (backend/split) composes them.
func TestNoDriverImportsAnother(t *testing.T) {
	const drivers = module + "backend/driver/"
	for _, lf := range libraryFiles(t) {
		slash := filepath.ToSlash(lf.path)
		_, rest, ok := strings.Cut(slash, "/backend/driver/")
		own, _, inDriver := strings.Cut(rest, "/")
		if lf.test || !ok || !inDriver {
			continue
		}
		_, paths := importsOf(lf.f)
		for _, p := range paths {
			other, _, _ := strings.Cut(strings.TrimPrefix(p, drivers), "/")
			if strings.HasPrefix(p, drivers) && other != own && !slices.Contains(testSupport, strings.TrimPrefix(p, module)) && other != "fuzzrun" {
				t.Errorf("%s imports %s: a driver must not build on another (backend/split composes them)", lf.path, p)
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
	for _, sf := range goFiles(t, 20, "setup") {
		tops, paths := importsOf(sf.f)
		for k, first := range tops {
			if slices.Contains(aboveSetup, first) {
				t.Errorf("%s imports %s: setup/ is the tooling's bottom layer and must not import %s/", sf.path, paths[k], first)
			}
		}
	}
}

// TestToolsModuleStandsApart: tools/ is a module of its own, and the root
// module neither requires the modules only it needs nor has a file that
// imports them; the root's code runs the tools' commands (setup/toolmod).
func TestToolsModuleStandsApart(t *testing.T) {
	root := filepath.Join("..", "..")
	mod, err := os.ReadFile(filepath.Join(root, toolsModule, "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module "+module+toolsModule+"\n") {
		t.Fatalf("%s/go.mod does not make %s a module of its own (%v)", toolsModule, toolsModule, err)
	}
	rootMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range toolsOnly {
		if strings.Contains(string(rootMod), m) {
			t.Errorf("go.mod lists %s, which only the tools module needs: import it from %s/ and run go mod tidy", m, toolsModule)
		}
	}
	n := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel == toolsModule || rel == "build" || rel == "dist" || rel == "vendor" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		n++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, m := range toolsOnly {
				if strings.HasPrefix(path, m) {
					t.Errorf("%s imports %s: code that needs it lives in the tools module (%s/)", rel, path, toolsModule)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("found only %d Go files in the root module", n)
	}
}

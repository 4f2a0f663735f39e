package darwincheck

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// repoRoot is the module root, two levels up from this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}

// TestRepositoryTypeChecks is the check CI relies on: every darwin-only
// package of ours, the Metal driver first, type-checks for darwin/arm64.
func TestRepositoryTypeChecks(t *testing.T) {
	rep, err := Run(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("checked %v (%d packages loaded) in %v", rep.Packages, rep.Loaded, rep.Elapsed)
	found := false
	for _, p := range rep.Packages {
		found = found || p == "github.com/metalplug/metalplug/backend/driver/metal"
	}
	if !found {
		t.Errorf("backend/driver/metal was not selected; selected %v", rep.Packages)
	}
	for _, e := range rep.Errors {
		t.Errorf("%v", e)
	}
	for _, e := range rep.Tolerated {
		t.Logf("tolerated (in a dependency): %v", e)
	}
}

// darwinkitVersion is the darwinkit requirement of this repository, so that
// the planted module resolves darwinkit to the copy already in the module
// cache.
func darwinkitVersion(t *testing.T) string {
	t.Helper()
	m, err := readModule(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	v, ok := m.requires["github.com/progrium/darwinkit"]
	if !ok {
		t.Fatal("go.mod does not require github.com/progrium/darwinkit")
	}
	return v
}

// plant writes a module with one darwin-only package (and a Linux file, so
// that darwin selection is what picks the package) and returns its root.
func plant(t *testing.T, body string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/planted\n\ngo 1.26\n\nrequire github.com/progrium/darwinkit " + darwinkitVersion(t) + "\n",
		"gpu/gpu_darwin.go": `package gpu

// #cgo LDFLAGS: -framework Metal
// void *createDevice(void);
import "C"

import (
	"unsafe"

	"github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/objc"
)

` + body,
		"gpu/gpu_linux.go": "package gpu\n\nconst Name = \"none\"\n",
		"plain/plain.go":   "package plain\n\nvar X int = \"not checked: builds on Linux too\"\n",
	}
	for name, src := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestPlantedErrorIsReported(t *testing.T) {
	root := plant(t, `// Device wraps the system device the way the Metal driver does.
func Device() metal.DeviceObject {
	return metal.DeviceObject{Object: objc.ObjectFrom(unsafe.Pointer(C.createDevice()))}
}

func Misuse() int {
	var n int = Device() // line 20: a DeviceObject is not an int
	return n
}
`)
	rep, err := Run(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Packages) != 1 || rep.Packages[0] != "example.com/planted/gpu" {
		t.Errorf("selected %v, want only the darwin-only package example.com/planted/gpu", rep.Packages)
	}
	if len(rep.Errors) != 1 {
		t.Fatalf("got %d errors, want 1: %v", len(rep.Errors), rep.Errors)
	}
	msg := rep.Errors[0].Error()
	want := filepath.Join(root, "gpu", "gpu_darwin.go") + ":20:"
	if !strings.HasPrefix(msg, want) || !strings.Contains(msg, "metal.DeviceObject") {
		t.Errorf("error %q, want one at %s naming metal.DeviceObject", msg, want)
	}
	if errs, err := Check(root, "./gpu"); err != nil || len(errs) != 1 {
		t.Errorf("Check(./gpu) = %v, %v; want the same one error", errs, err)
	}
}

func TestCleanPlantedPackage(t *testing.T) {
	root := plant(t, `func Device() metal.DeviceObject {
	return metal.DeviceObject{Object: objc.ObjectFrom(unsafe.Pointer(C.createDevice()))}
}
`)
	errs, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) != 0 {
		t.Errorf("clean package reported %v", errs)
	}
}

func TestUnresolvableImportFails(t *testing.T) {
	root := plant(t, `var _ = metal.DeviceObject{}
var _ = objc.Object{}
var _ unsafe.Pointer
`)
	extra := "package gpu\n\nimport _ \"example.org/not/required\"\n"
	if err := os.WriteFile(filepath.Join(root, "gpu", "extra_darwin.go"), []byte(extra), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Check(root)
	if err == nil || !strings.Contains(err.Error(), "example.org/not/required") {
		t.Errorf("Check = %v, want an error naming the unresolvable import", err)
	}
}

func TestEscapePath(t *testing.T) {
	if got := escapePath("github.com/Masterminds/semver"); got != filepath.FromSlash("github.com/!masterminds/semver") {
		t.Errorf("escapePath = %q", got)
	}
}

func TestTargetContext(t *testing.T) {
	ctxt := targetContext(build.Default.GOROOT, TargetGOOS, TargetGOARCH)
	for _, tag := range ctxt.ToolTags {
		if strings.HasPrefix(tag, "amd64.") {
			t.Errorf("darwin/arm64 context keeps the host's %s tag", tag)
		}
	}
	if !ctxt.CgoEnabled || ctxt.GOOS != "darwin" || ctxt.GOARCH != "arm64" {
		t.Errorf("context is %s/%s cgo=%v", ctxt.GOOS, ctxt.GOARCH, ctxt.CgoEnabled)
	}
}

// TestEmptyModuleCache is the check on a machine that never built the
// project: no Linux package imports darwinkit, so nothing else has put it in
// the module cache, and the check must fetch what it reads itself.
func TestEmptyModuleCache(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads modules through the module proxy")
	}
	cache := t.TempDir()
	t.Setenv("GOMODCACHE", cache)
	// The module cache is read-only by default, which would stop TempDir
	// removing it.
	t.Setenv("GOFLAGS", strings.TrimSpace(os.Getenv("GOFLAGS")+" -modcacherw"))
	rep, err := Run(repoRoot(t))
	if err != nil {
		t.Fatalf("darwincheck with an empty module cache: %v", err)
	}
	for _, e := range rep.Errors {
		t.Errorf("%v", e)
	}
	if !slices.Contains(rep.Packages, "github.com/metalplug/metalplug/backend/driver/metal") {
		t.Errorf("backend/driver/metal was not checked; checked %v", rep.Packages)
	}
	matches, _ := filepath.Glob(filepath.Join(cache, "github.com", "progrium", "darwinkit@*"))
	if len(matches) == 0 {
		t.Errorf("darwinkit was not downloaded into the empty cache %s", cache)
	}
	t.Logf("checked %d packages from an empty module cache in %v", rep.Loaded, rep.Elapsed)
}

func TestUndeclaredC(t *testing.T) {
	const src = `package p

// static int metalplugKnown(int x) { return x; }
// #define metalplugMacro 3
// typedef struct { int a; } metalplugType;
import "C"

func f() {
	_ = C.metalplugKnown(1)
	_ = C.metalplugMacro
	var _ C.metalplugType
	_ = C.metalplugKnownNot(2)
	_ = C.free
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	// Another file of the package does not see the first one's preamble.
	other, err := parser.ParseFile(fset, "q.go", "package p\n\n// #include <stdlib.h>\nimport \"C\"\n\nfunc g() { _ = C.metalplugKnown(2) }\n", parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	errs := undeclaredC(fset, []*ast.File{f, other})
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "C.metalplugKnownNot is not declared") ||
		!strings.Contains(errs[1].Error(), "q.go") {
		t.Errorf("undeclaredC = %v, want errors naming C.metalplugKnownNot and q.go's C.metalplugKnown", errs)
	}
}

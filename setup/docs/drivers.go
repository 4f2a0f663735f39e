package docs

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"

	"github.com/metalplug/metalplug/backend/ir"
)

// DriversPath is where the IR-op-by-driver table lives.
const DriversPath = "docs/drivers.md"

// MetalCoverage is what the Metal driver says of each IR op, read from its
// source: the package builds only on darwin, so a Linux machine cannot
// import it, but it can read its registrations and tables.
type MetalCoverage struct {
	Lowered    map[string]bool   // op names with an MPSGraph lowering
	NotLowered map[string]string // op name -> why it has none
	Fallbacks  map[string]string // op name -> the cases that run on the CPU
}

// ReadMetalCoverage reads the Metal driver's lowerings (the
// registerLowering calls of every file of root/backend/driver/metal) and
// its NotLowered and Fallbacks tables (ops.go).
func ReadMetalCoverage(root string) (*MetalCoverage, error) {
	dir := filepath.Join(root, "backend", "driver", "metal")
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	c := &MetalCoverage{Lowered: map[string]bool{}, NotLowered: map[string]string{}, Fallbacks: map[string]string{}}
	found := map[string]bool{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return nil, err
		}
		if err := readRegistrations(path, f, c, found); err != nil {
			return nil, err
		}
		if err := readTables(path, f, c, found); err != nil {
			return nil, err
		}
	}
	for _, want := range []string{"registerLowering", "NotLowered", "Fallbacks"} {
		if !found[want] {
			return nil, fmt.Errorf("%s: found no %s", dir, want)
		}
	}
	// compile lowers parameters itself, as placeholders.
	c.Lowered[ir.OpParameter.String()] = true
	return c, nil
}

// readRegistrations finds registerLowering(f, ops...) calls, whose ops are
// ir.OpX selectors or ir.UnaryOps()... / ir.BinaryOps()....
func readRegistrations(path string, f *ast.File, c *MetalCoverage, found map[string]bool) error {
	var err error
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || err != nil {
			return err == nil
		}
		if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "registerLowering" || len(call.Args) < 2 {
			return true
		}
		found["registerLowering"] = true
		for _, a := range call.Args[1:] {
			if inner, ok := a.(*ast.CallExpr); ok && call.Ellipsis.IsValid() {
				sel, _ := inner.Fun.(*ast.SelectorExpr)
				var ops []ir.Op
				switch {
				case sel != nil && sel.Sel.Name == "UnaryOps":
					ops = ir.UnaryOps()
				case sel != nil && sel.Sel.Name == "BinaryOps":
					ops = ir.BinaryOps()
				default:
					err = fmt.Errorf("%s: registerLowering with ops it cannot read", path)
					return false
				}
				for _, op := range ops {
					c.Lowered[op.String()] = true
				}
				continue
			}
			op, e := opName(a)
			if e != nil {
				err = fmt.Errorf("%s: registerLowering: %v", path, e)
				return false
			}
			c.Lowered[op] = true
		}
		return true
	})
	return err
}

// readTables reads the NotLowered and Fallbacks map literals.
func readTables(path string, f *ast.File, c *MetalCoverage, found map[string]bool) error {
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			if len(vs.Names) != 1 || len(vs.Values) != 1 {
				continue
			}
			name := vs.Names[0].Name
			if name != "NotLowered" && name != "Fallbacks" {
				continue
			}
			lit, ok := vs.Values[0].(*ast.CompositeLit)
			if !ok {
				return fmt.Errorf("%s: %s is not a map literal", path, name)
			}
			for _, e := range lit.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok {
					return fmt.Errorf("%s: %s has an element that is not key: value", path, name)
				}
				op, err := opName(kv.Key)
				if err != nil {
					return fmt.Errorf("%s: %s: %v", path, name, err)
				}
				why, err := stringValue(kv.Value)
				if err != nil {
					return fmt.Errorf("%s: %s[%s]: %v", path, name, op, err)
				}
				if name == "NotLowered" {
					c.NotLowered[op] = why
				} else {
					c.Fallbacks[op] = why
				}
			}
			found[name] = true
		}
	}
	return nil
}

// opName turns the selector ir.OpAdd into the op's name, "add".
func opName(e ast.Expr) (string, error) {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return "", fmt.Errorf("key %T is not ir.OpX", e)
	}
	for _, op := range ir.Ops() {
		if "Op"+goName(op) == sel.Sel.Name {
			return op.String(), nil
		}
	}
	return "", fmt.Errorf("%s is not an op of backend/ir", sel.Sel.Name)
}

// goName recovers the identifier suffix of an op from the ir package's own
// table, by matching the String of every exported constant.
func goName(op ir.Op) string { return opIdents[op] }

// opIdents maps each op to its constant's name without the Op prefix. It is
// derived from the ir source so a renamed op cannot slip past.
var opIdents = func() map[ir.Op]string {
	m := map[ir.Op]string{}
	fset := token.NewFileSet()
	path := filepath.Join(moduleRoot(), "backend", "ir", "op.go")
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		return m
	}
	i := ir.Op(0)
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			n := vs.Names[0].Name
			if !strings.HasPrefix(n, "Op") {
				break
			}
			if n == "OpInvalid" {
				i = 0
			}
			m[i] = strings.TrimPrefix(n, "Op")
			i++
		}
	}
	return m
}()

func stringValue(e ast.Expr) (string, error) {
	switch v := e.(type) {
	case *ast.BasicLit:
		cv := constant.MakeFromLiteral(v.Value, v.Kind, 0)
		if cv.Kind() != constant.String {
			return "", fmt.Errorf("not a string")
		}
		return constant.StringVal(cv), nil
	case *ast.BinaryExpr:
		a, err := stringValue(v.X)
		if err != nil {
			return "", err
		}
		b, err := stringValue(v.Y)
		return a + b, err
	case *ast.ParenExpr:
		return stringValue(v.X)
	}
	return "", fmt.Errorf("%T is not a string constant", e)
}

// moduleRoot finds the directory holding go.mod, from the working directory up.
func moduleRoot() string {
	dir, _ := os.Getwd()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// Drivers renders docs/drivers.md: every IR op, and what each driver does
// with it.
func Drivers(root string) (string, error) {
	c, err := ReadMetalCoverage(root)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# IR ops by driver\n\n")
	fmt.Fprintf(&b, "Generated by `go tool mage kernels` from `backend/ir` and the Metal driver's registrations and tables (`backend/driver/metal`); CI fails when this file is stale.\n\n")
	fmt.Fprintf(&b, "The host driver runs every op and is tested against reference loops by `backend/driver/drivertest`. ")
	fmt.Fprintf(&b, "The Metal driver is **type-checked only** (`go tool mage darwincheck`): none of it has run here, and the same conformance suite runs against it on a Mac (`go test ./backend/driver/metal`).\n\n")
	lowered, fallback := 0, 0
	var rows strings.Builder
	for _, op := range ir.Ops() {
		n := op.String()
		metal := ""
		switch {
		case c.Lowered[n] && c.Fallbacks[n] != "":
			metal = "MPSGraph; on the CPU for " + c.Fallbacks[n]
			lowered++
			fallback++
		case c.Lowered[n]:
			metal = "MPSGraph"
			lowered++
		case c.NotLowered[n] != "":
			metal = "not lowered: " + c.NotLowered[n]
		default:
			metal = "MISSING: neither lowered nor listed"
		}
		fmt.Fprintf(&rows, "| %s | yes | %s |\n", n, strings.ReplaceAll(metal, "|", "\\|"))
	}
	fmt.Fprintf(&b, "%d IR ops: host driver %d; Metal driver %d lowered to MPSGraph (%d of them with CPU fallbacks for some cases), %d listed as not lowered.\n\n",
		len(ir.Ops()), len(ir.Ops()), lowered, fallback, len(c.NotLowered))
	fmt.Fprintf(&b, "| IR op | host | Metal |\n| --- | --- | --- |\n")
	b.WriteString(rows.String())
	return b.String(), nil
}

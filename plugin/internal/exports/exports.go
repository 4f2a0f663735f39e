// Package exports reads a package's functions exported to C, for the
// frontends' tests that hold every export to its boundary's shape
// (plugin/tf and plugin/pjrt each check their own shape with these).
// Only tests import it.
package exports

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
)

// Functions parses dir's non-test Go files and returns each function with
// a //export line, by its exported name.
func Functions(dir string) (map[string]*ast.FuncDecl, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	out := map[string]*ast.FuncDecl{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Doc == nil {
				continue
			}
			for _, c := range fn.Doc.List {
				if name, ok := strings.CutPrefix(c.Text, "//export "); ok {
					out[strings.TrimSpace(name)] = fn
				}
			}
		}
	}
	return out, nil
}

// CallsWith reports whether c calls the function fn with the string
// literal name as its first argument.
func CallsWith(c *ast.CallExpr, fn, name string) bool {
	id, ok := c.Fun.(*ast.Ident)
	if !ok || id.Name != fn || len(c.Args) == 0 {
		return false
	}
	lit, ok := c.Args[0].(*ast.BasicLit)
	if !ok {
		return false
	}
	s, err := strconv.Unquote(lit.Value)
	return err == nil && s == name
}

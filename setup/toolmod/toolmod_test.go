package toolmod

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const root = "../.."

// TestCommandsExist: every command the root's code runs is a main package
// of the tools module, which is a module of its own.
func TestCommandsExist(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join(root, Dir, "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module github.com/metalplug/metalplug/tools\n") {
		t.Fatalf("%s/go.mod is not the tools module's (%v)", Dir, err)
	}
	for _, name := range Commands {
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, Dir, "cmd", name, "main.go"), nil, parser.PackageClauseOnly)
		if err != nil || f.Name.Name != "main" {
			t.Errorf("%s/cmd/%s is not a command (%v)", Dir, name, err)
		}
	}
}

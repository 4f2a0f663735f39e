package workflows

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/rhysd/actionlint"

	"github.com/metalplug/metalplug/ci"
)

// root is the source root, seen from tools/workflows.
const root = "../.."

// TestWorkflowsLint runs actionlint over every workflow.
func TestWorkflowsLint(t *testing.T) {
	ps, err := ci.Workflows(root)
	if err != nil || len(ps) == 0 {
		t.Fatalf("no workflows (%v)", err)
	}
	var out bytes.Buffer
	l, err := actionlint.NewLinter(&out, &actionlint.LinterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.LintFiles(ps, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Errorf("%s:%d:%d: %s [%s]", e.Filepath, e.Line, e.Column, e.Message, e.Kind)
	}
}

// TestActionlintCatchesMistakes proves the lint can fail: a workflow with an
// undefined job dependency and a bad expression must be reported.
func TestActionlintCatchesMistakes(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yml")
	os.WriteFile(bad, []byte("on: push\njobs:\n  a:\n    needs: nope\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo ${{ matrix.missing }}\n"), 0o644)
	l, err := actionlint.NewLinter(&bytes.Buffer{}, &actionlint.LinterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.LintFiles([]string{bad}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) < 2 {
		t.Fatalf("actionlint found %d problems in a broken workflow, want at least 2", len(errs))
	}
}

package ci

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const root = ".."

// TestWorkflowsInstalled: .github/workflows holds exactly ci/workflows.
func TestWorkflowsInstalled(t *testing.T) {
	ps, _ := Workflows(root)
	installed, _ := filepath.Glob(filepath.Join(root, InstalledDir, "*.yml"))
	if len(installed) != len(ps) {
		t.Fatalf("%d workflows installed, %d in %s: run `go tool mage workflows`", len(installed), len(ps), WorkflowDir)
	}
	for _, p := range ps {
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(root, InstalledDir, filepath.Base(p)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is not installed as is (%v): run `go tool mage workflows`", p, err)
		}
	}
}

// TestStepsAreMageTargets: every `run:` step calls `go tool mage <target>`
// with a target the magefile defines, so CI runs what contributors run.
func TestStepsAreMageTargets(t *testing.T) {
	mf, err := os.ReadFile(filepath.Join(root, "magefile.go"))
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^func ([A-Z]\w*)\(`).FindAllSubmatch(mf, -1) {
		targets[strings.ToLower(string(m[1]))] = true
	}
	ps, _ := Workflows(root)
	run := regexp.MustCompile(`(?m)^\s*run:\s*(.+)$`)
	for _, p := range ps {
		b, _ := os.ReadFile(p)
		for _, m := range run.FindAllSubmatch(b, -1) {
			cmd := strings.TrimSpace(string(m[1]))
			f := strings.Fields(cmd)
			if len(f) < 4 || f[0] != "go" || f[1] != "tool" || f[2] != "mage" || !targets[strings.ToLower(f[3])] {
				t.Errorf("%s: step %q is not `go tool mage <target>` with a target of magefile.go", filepath.Base(p), cmd)
			}
		}
	}
}

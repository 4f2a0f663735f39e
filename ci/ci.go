// Package ci holds the project's GitHub Actions workflows (ci/workflows,
// installed as .github/workflows, where GitHub reads them) and the code that
// checks them; their lint (actionlint) is the tools module's, in
// tools/workflows. Every workflow step calls a Mage target, so what CI runs
// is what a contributor runs.
package ci

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// WorkflowDir is where the workflows are kept, InstalledDir where GitHub
// reads them.
const (
	WorkflowDir  = "ci/workflows"
	InstalledDir = ".github/workflows"
)

// Install copies every workflow into InstalledDir under root, removing
// installed ones that no longer exist.
func Install(root string) error {
	src, err := filepath.Glob(filepath.Join(root, WorkflowDir, "*.yml"))
	if err != nil {
		return err
	}
	if len(src) == 0 {
		return fmt.Errorf("no workflows in %s", filepath.Join(root, WorkflowDir))
	}
	dst := filepath.Join(root, InstalledDir)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, p := range src {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		keep[filepath.Base(p)] = true
		if err := os.WriteFile(filepath.Join(dst, filepath.Base(p)), b, 0o644); err != nil {
			return err
		}
	}
	old, _ := filepath.Glob(filepath.Join(dst, "*.yml"))
	for _, p := range old {
		if !keep[filepath.Base(p)] {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// Workflows lists the workflow files under root, sorted.
func Workflows(root string) ([]string, error) {
	ps, err := filepath.Glob(filepath.Join(root, WorkflowDir, "*.yml"))
	sort.Strings(ps)
	return ps, err
}

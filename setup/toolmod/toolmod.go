// Package toolmod runs the commands of the tools module (tools/ at the
// source root). The code that needs modules the library's build does
// without (go-github for the release, gonum's plot for the benchmark plot,
// actionlint for the workflows' lint) lives there, in a module of its own,
// so that the root module's go.mod does not list them; the Mage targets
// reach it through here, and `go tool mage <target>` stays the one way in.
package toolmod

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Dir is the tools module's directory, relative to the source root.
const Dir = "tools"

// The commands of the tools module, each tools/cmd/<name>.
const (
	// Release is the release (package ci/release) with GitHub reached
	// through go-github: release [-root dir] <tag> <publish>.
	Release = "release"
	// BenchPlot draws the benchmark plot of a report package bench saved:
	// benchplot <report.json> <plot.png>.
	BenchPlot = "benchplot"
)

// Commands are all of them.
var Commands = []string{Release, BenchPlot}

// Run builds tools/cmd/<name> of the source tree at root and runs it with
// args in the current directory, on this process's standard input, output
// and error. Ending ctx ends it.
func Run(ctx context.Context, root, name string, args ...string) error {
	tmp, err := os.MkdirTemp("", "metalplug-tools-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	exe := filepath.Join(tmp, name)
	build := exec.CommandContext(ctx, "go", "-C", filepath.Join(root, Dir), "build", "-o", exe, "./cmd/"+name)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building %s/cmd/%s: %w", Dir, name, err)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s/cmd/%s: %w", Dir, name, err)
	}
	return nil
}

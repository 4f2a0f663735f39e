// Package venv makes and reuses Python virtual environments with a given set
// of packages, for tests, the demo and the matrix. Environments live under
// the user cache directory, keyed by name, so a second run reuses them.
package venv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Dir is where named environments live: $METALPLUG_VENV_DIR, else
// <user cache>/metalplug/venvs.
func Dir() (string, error) {
	if d := os.Getenv("METALPLUG_VENV_DIR"); d != "" {
		return d, nil
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for venvs (set METALPLUG_VENV_DIR): %w", err)
	}
	return filepath.Join(c, "metalplug", "venvs"), nil
}

// Python is the interpreter of the environment at dir.
func Python(dir string) string { return filepath.Join(dir, "bin", "python") }

// Ensure returns the interpreter of environment name, creating it with base
// (python3 when empty) and installing requirements when it is new or a
// previous install did not finish.
func Ensure(name, base string, requirements []string, log func(string, ...any)) (string, error) {
	root, err := Dir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, name)
	return dir, EnsureAt(dir, base, requirements, log)
}

// EnsureAt is Ensure for an explicit directory.
func EnsureAt(dir, base string, requirements []string, log func(string, ...any)) error {
	if base == "" {
		base = "python3"
	}
	marker := filepath.Join(dir, ".metalplug-ready")
	want := strings.Join(requirements, "\n")
	if got, err := os.ReadFile(marker); err == nil && string(got) == want {
		return nil
	}
	if _, err := os.Stat(Python(dir)); err != nil {
		log("creating venv %s", dir)
		if err := run(base, "-m", "venv", dir); err != nil {
			return fmt.Errorf("creating venv %s with %s: %w", dir, base, err)
		}
	}
	if len(requirements) > 0 {
		log("installing %s into %s", strings.Join(requirements, " "), dir)
		args := append([]string{"-m", "pip", "install", "--disable-pip-version-check", "-q"}, requirements...)
		if err := run(Python(dir), args...); err != nil {
			return fmt.Errorf("installing %s into %s: %w", strings.Join(requirements, " "), dir, err)
		}
	}
	return os.WriteFile(marker, []byte(want), 0o644)
}

func run(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

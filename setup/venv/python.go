package venv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// FindPython finds an interpreter of at least Python 3.minMinor, for the
// frameworks that have left older ones behind (jax 0.11 and later need
// 3.12): $METALPLUG_JAX_PYTHON, else python3.N on PATH (newest first), else
// python3 if it is new enough, else pyenv's versions under $PYENV_ROOT or
// ~/.pyenv (which its shims do not put on PATH unless selected).
func FindPython(minMinor int) (string, error) {
	if p := os.Getenv("METALPLUG_JAX_PYTHON"); p != "" {
		return p, nil
	}
	var candidates []string
	for m := 20; m >= minMinor; m-- {
		candidates = append(candidates, fmt.Sprintf("python3.%d", m))
	}
	candidates = append(candidates, "python3")
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil && minorOf(p) >= minMinor {
			return p, nil
		}
	}
	root := os.Getenv("PYENV_ROOT")
	if root == "" {
		home, _ := os.UserHomeDir()
		root = filepath.Join(home, ".pyenv")
	}
	matches, _ := filepath.Glob(filepath.Join(root, "versions", "3.*", "bin", "python3"))
	sort.Slice(matches, func(i, j int) bool { return minorOf(matches[i]) > minorOf(matches[j]) })
	for _, p := range matches {
		if minorOf(p) >= minMinor {
			return p, nil
		}
	}
	return "", fmt.Errorf("no Python 3.%d or newer found (jax needs it): install one, or set METALPLUG_JAX_PYTHON to its path", minMinor)
}

// minorOf asks an interpreter for its minor version; -1 when it cannot say.
func minorOf(python string) int {
	out, err := exec.Command(python, "-c", "import sys; print(sys.version_info[0], sys.version_info[1])").Output()
	if err != nil {
		return -1
	}
	f := strings.Fields(string(out))
	if len(f) != 2 || f[0] != "3" {
		return -1
	}
	m, err := strconv.Atoi(f[1])
	if err != nil {
		return -1
	}
	return m
}

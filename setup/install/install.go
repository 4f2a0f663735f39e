// Package install puts a built library where TensorFlow finds it: the
// tensorflow-plugins directory of the site-packages that holds TensorFlow.
package install

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/metalplug/metalplug/setup/probe"
)

// PluginDir is site-packages/tensorflow-plugins next to the probed TensorFlow.
func PluginDir(r *probe.Report) string {
	return filepath.Join(filepath.Dir(r.TensorFlow.PackageDir), "tensorflow-plugins")
}

// Library copies lib into PluginDir atomically: a failed copy leaves whatever
// was installed before, never half a library.
func Library(lib string, r *probe.Report) (string, error) {
	dir := PluginDir(r)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	dst := filepath.Join(dir, filepath.Base(lib))
	src, err := os.Open(lib)
	if err != nil {
		return "", fmt.Errorf("%w: run `go tool mage build` first", err)
	}
	defer src.Close()
	tmp, err := os.CreateTemp(dir, ".metalplug-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, src); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return dst, os.Rename(tmp.Name(), dst)
}

// Package install puts a built library where the frameworks find it: the
// tensorflow-plugins directory of the site-packages that holds TensorFlow,
// and the jax_plugins.metalplug module in the one that holds jaxlib (with
// the library next to it when there is no TensorFlow: one copy, so that a
// process importing both loads one Go runtime); and the metalplug module
// (metalplug.stats()) in each of them.
package install

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	jaxplugin "github.com/metalplug/metalplug/plugin/pjrt/python"
	"github.com/metalplug/metalplug/plugin/python"
	"github.com/metalplug/metalplug/setup/probe"
)

// PluginDir is site-packages/tensorflow-plugins next to the probed TensorFlow.
func PluginDir(r *probe.Report) string {
	return filepath.Join(filepath.Dir(r.TensorFlow.PackageDir), "tensorflow-plugins")
}

// JaxModuleDir is site-packages/jax_plugins/metalplug next to the probed
// jaxlib.
func JaxModuleDir(r *probe.Report) string {
	return filepath.Join(filepath.Dir(r.Jax.JaxlibDir), "jax_plugins", "metalplug")
}

// SitePackages are the site-packages directories that hold the probed
// TensorFlow and jaxlib, each once.
func SitePackages(r *probe.Report) []string {
	var dirs []string
	if r.HasTensorFlow() {
		dirs = append(dirs, filepath.Dir(r.TensorFlow.PackageDir))
	}
	if r.HasJax() {
		if d := filepath.Dir(r.Jax.JaxlibDir); len(dirs) == 0 || dirs[0] != d {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// Install puts lib, built for r, where its frameworks find it, with the
// metalplug module in every site-packages of SitePackages, and returns the
// paths it wrote.
func Install(lib string, r *probe.Report) ([]string, error) {
	var wrote []string
	if r.HasTensorFlow() {
		dst, err := Library(lib, r)
		if err != nil {
			return nil, err
		}
		wrote = append(wrote, dst)
	}
	if r.HasJax() {
		dir := JaxModuleDir(r)
		if !r.HasTensorFlow() {
			dst, err := copyAtomic(lib, dir, 0o755)
			if err != nil {
				return nil, err
			}
			wrote = append(wrote, dst)
		}
		dst := filepath.Join(dir, filepath.Base(jaxplugin.ModulePath))
		if err := writeAtomic(dst, jaxplugin.Module); err != nil {
			return nil, err
		}
		wrote = append(wrote, dst)
	}
	for _, site := range SitePackages(r) {
		dst := filepath.Join(site, filepath.FromSlash(python.ModulePath))
		if err := writeAtomic(dst, python.Module); err != nil {
			return nil, err
		}
		wrote = append(wrote, dst)
	}
	return wrote, nil
}

// Library copies lib into PluginDir atomically: a failed copy leaves whatever
// was installed before, never half a library.
func Library(lib string, r *probe.Report) (string, error) {
	return copyAtomic(lib, PluginDir(r), 0o755)
}

// writeAtomic writes data to path through a temporary file.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// copyAtomic copies lib into dir atomically with the given mode.
func copyAtomic(lib, dir string, mode os.FileMode) (string, error) {
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
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return dst, os.Rename(tmp.Name(), dst)
}

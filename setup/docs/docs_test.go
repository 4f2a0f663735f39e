package docs

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDocsAreCurrent fails when a generated table under docs/ differs from
// what the code renders: run `go tool mage kernels` and commit the result.
func TestDocsAreCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, d := range []struct {
		path   string
		render func() (string, error)
	}{
		{KernelsPath, func() (string, error) { return Kernels(root), nil }},
		{CoveragePath, func() (string, error) { return Coverage(root) }},
		{DriversPath, func() (string, error) { return Drivers(root) }},
		{JaxPath, func() (string, error) { return Jax(), nil }},
	} {
		want, err := d.render()
		if err != nil {
			t.Errorf("%s: %v", d.path, err)
			continue
		}
		got, err := os.ReadFile(filepath.Join(root, d.path))
		if err != nil || string(got) != want {
			t.Errorf("%s is stale or missing (%v): run `go tool mage kernels` and commit it", d.path, err)
		}
	}
}

package docs

import (
	"os"
	"path/filepath"
	"testing"
)

// TestKernelsDocIsCurrent fails when docs/kernels.md differs from what the
// registry renders: run `go tool mage kernels` and commit the result.
func TestKernelsDocIsCurrent(t *testing.T) {
	got, err := os.ReadFile(filepath.Join("..", "..", KernelsPath))
	if err != nil {
		t.Fatalf("%v: run `go tool mage kernels`", err)
	}
	if string(got) != Kernels(filepath.Join("..", "..")) {
		t.Fatalf("%s is stale: run `go tool mage kernels` and commit it", KernelsPath)
	}
}

func TestDriversDocIsCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	want, err := Drivers(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, DriversPath))
	if err != nil || string(got) != want {
		t.Fatalf("%s is stale or missing (%v): run `go tool mage kernels` and commit it", DriversPath, err)
	}
}

func TestJaxDocIsCurrent(t *testing.T) {
	got, err := os.ReadFile(filepath.Join("..", "..", JaxPath))
	if err != nil || string(got) != Jax() {
		t.Fatalf("%s is stale or missing (%v): run `go tool mage kernels` and commit it", JaxPath, err)
	}
}

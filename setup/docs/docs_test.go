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
	if string(got) != Kernels() {
		t.Fatalf("%s is stale: run `go tool mage kernels` and commit it", KernelsPath)
	}
}

package docs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
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

// TestEveryIROpHasAMetalAnswer fails when the IR (and so the host driver,
// whose conformance suite covers every IR op) gains an op that the Metal
// driver neither lowers nor lists as not lowered with a reason.
func TestEveryIROpHasAMetalAnswer(t *testing.T) {
	c, err := ReadMetalCoverage(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range ir.Ops() {
		n := op.String()
		if !c.Lowered[n] && c.NotLowered[n] == "" {
			t.Errorf("IR op %s is neither lowered by the Metal driver nor listed in its NotLowered table", n)
		}
	}
	for n := range c.Fallbacks {
		if !c.Lowered[n] {
			t.Errorf("Fallbacks names %s, which the Metal driver does not lower", n)
		}
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

package ir

import (
	"bytes"
	"os"
	"testing"

	"github.com/metalplug/metalplug/backend/ir/internal/opgen"
)

// TestOpsGenCurrent holds ops_gen.go to the family files: an op added,
// moved or documented there without go generate fails here.
func TestOpsGenCurrent(t *testing.T) {
	want, err := opgen.Generate(".")
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile(opgen.Output)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Fatalf("%s is stale: run go generate ./backend/ir", opgen.Output)
	}
}

// TestEveryOpDefinedOnce: the families hold one definition per constant
// (TestEveryOpHasATableEntry checks each entry).
func TestEveryOpDefinedOnce(t *testing.T) {
	seen := map[Op]bool{}
	for _, fam := range opFamilies {
		for _, d := range fam {
			if seen[d.op] {
				t.Errorf("%v is defined twice", d.op)
			}
			seen[d.op] = true
		}
	}
	if len(seen) != len(Ops()) {
		t.Errorf("%d definitions for %d ops", len(seen), len(Ops()))
	}
}

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

// TestEveryOpDefinedOnce checks the table opgen's families fill: every
// constant has the entry of its own definition, named, with an inference.
func TestEveryOpDefinedOnce(t *testing.T) {
	names := map[string]Op{}
	n := 0
	for _, fam := range opFamilies {
		for _, d := range fam {
			n++
			if d.info.Name == "" || d.info.infer == nil {
				t.Errorf("%d: no name or inference", d.op)
			}
			if prev, dup := names[d.info.Name]; dup {
				t.Errorf("%v and %v share the name %q", prev, d.op, d.info.Name)
			}
			names[d.info.Name] = d.op
		}
	}
	if n != len(Ops()) {
		t.Errorf("%d definitions for %d ops", n, len(Ops()))
	}
	for _, o := range Ops() {
		if info, _ := o.Info(); info.infer == nil {
			t.Errorf("op %d has no table entry", o)
		}
	}
}

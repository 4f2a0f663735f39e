package eval

import (
	"testing"

	"github.com/metalplug/metalplug/backend/ir/irtest"
)

// TestCorpus runs every case of backend/ir/testdata and compares its
// outputs with the literal ones bit for bit (any NaN matching any NaN).
func TestCorpus(t *testing.T) {
	cases, err := irtest.Load(irtest.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		args := make([]Tensor, len(c.Inputs))
		for i, in := range c.Inputs {
			args[i] = FromBytes(c.Program.Params[i], in)
		}
		got, err := Run(c.Program, args)
		if err != nil {
			t.Errorf("%s: %v", c, err)
			continue
		}
		for i, want := range c.Outputs {
			for _, d := range irtest.Diff(got[i].Type, got[i].Bytes(), want, c.ULPs) {
				t.Errorf("%s: result %d: %s", c, i, d)
			}
		}
	}
}

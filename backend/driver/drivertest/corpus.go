package drivertest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/ir/irtest"
)

// knownDeviations are the corpus cases a driver is known to get wrong, by
// the driver's Name and the case, with the reason. Such a case is skipped
// when it fails and an error when it passes, so that a fixed driver takes
// its entry off the list rather than leave a case unchecked.
var knownDeviations = map[string]map[string]string{}

// testCorpus runs every case of the IR's corpus (backend/ir/testdata) and
// compares each output with the literal one bit for bit, any NaN matching
// any NaN: the edges of the IR's semantics, written down once as values,
// which the reference interpreter is held to as well.
func testCorpus(t *testing.T, d driver.Driver) {
	cases, err := irtest.Load(irtest.Dir())
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, d)
	known := knownDeviations[d.Name()]
	listed := map[string]bool{}
	for _, c := range cases {
		t.Run(c.File+"/"+c.Name, func(t *testing.T) {
			if dt, ok := declined(d, c.Program); ok {
				t.Skipf("the driver declines %v", dt)
			}
			args := make([]tensor, len(c.Inputs))
			for i, in := range c.Inputs {
				args[i] = tensor{T: c.Program.Params[i], Raw: in}
			}
			why, isKnown := known[c.String()]
			if !isKnown {
				got := h.runBytes(t, c.Program, args...)
				for i, rt := range c.Program.ResultTypes() {
					compareBits(t, fmt.Sprintf("%s, result %d", c, i), rt, got[i], c.Outputs[i], c.ULPs, "as the corpus has it")
				}
				return
			}
			listed[c.String()] = true
			if _, err := d.Compile(c.Program); err != nil {
				t.Skipf("a known deviation of %s (%s): %v", d.Name(), why, err)
			}
			got := h.runBytes(t, c.Program, args...)
			var diffs []string
			for i, rt := range c.Program.ResultTypes() {
				diffs = append(diffs, irtest.Diff(rt, got[i], c.Outputs[i], c.ULPs)...)
			}
			if len(diffs) == 0 {
				t.Errorf("listed as a known deviation of %s (%s), but it passes: take it off knownDeviations", d.Name(), why)
				return
			}
			t.Skipf("a known deviation of %s (%s): %s", d.Name(), why, strings.Join(diffs, "; "))
		})
	}
	for name := range known {
		if !listed[name] {
			t.Errorf("knownDeviations lists %q for %s, which is no corpus case", name, d.Name())
		}
	}
}

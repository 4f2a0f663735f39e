package stablehlo

import (
	"bytes"
	"testing"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/driver/drivertest"
	"github.com/metalplug/metalplug/backend/driver/host"
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/split"
)

// cutHost is the host driver made to decline every other instruction, so
// that backend/split cuts each program into parts, run by the host driver
// on both sides: the cut program must give the whole program's bytes.
type cutHost struct{ *host.Driver }

func (c cutHost) Place(p *ir.Program) ([]*driver.Unsupported, error) {
	places := make([]*driver.Unsupported, len(p.Instrs))
	n := 0
	for i, in := range p.Instrs {
		switch in.Op {
		case ir.OpParameter, ir.OpConstant, ir.OpGetResult:
			continue
		}
		if n++; n%2 == 0 {
			places[i] = &driver.Unsupported{Instr: i, Op: in.Op, Reason: "declined by the test"}
		}
	}
	return places, nil
}

// TestFixturesCutIntoParts runs every jax program of testdata whole on the
// host driver and cut into parts by backend/split (with its rewrites:
// calls inlined, counted loops unrolled or replayed, cases as selects,
// the other loops driven from the host), and requires the same bytes.
func TestFixturesCutIntoParts(t *testing.T) {
	whole := host.New(host.Options{})
	cut := split.New(cutHost{host.New(host.Options{})}, host.New(host.Options{}), split.Options{SmallWork: -1})
	parts := 0
	for _, file := range loadFixtures(t) {
		name, p := fixtureProgram(t, file)
		if hasHostCall(p) {
			continue // needs jax's callbacks
		}
		var args [][]byte
		for _, in := range fixtureInputs(t, file) {
			args = append(args, in.Bytes())
		}
		want := drivertest.RunBytes(t, whole, p, args...)
		got := drivertest.RunBytes(t, cut, p, args...)
		for r := range want {
			if !bytes.Equal(got[r], want[r]) {
				t.Errorf("%s: result %d cut into parts differs from the whole program's", name, r)
			}
		}
		exe, err := cut.Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		parts += len(exe.(*split.Executable).Segments())
	}
	if parts < 500 {
		t.Errorf("the fixtures were cut into %d parts in all: the test no longer cuts them", parts)
	}
	t.Logf("the fixtures ran in %d parts", parts)
}

func hasHostCall(p *ir.Program) bool {
	for _, in := range p.Instrs {
		if in.Op == ir.OpHostCall {
			return true
		}
		for _, r := range in.Regions {
			if hasHostCall(r) {
				return true
			}
		}
	}
	return false
}

package stablehlo

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

// otherForms are the fixtures holding region bodies of no form backend/ir
// recognises, and why: a driver that runs only those forms (the Metal
// driver) hands these to the CPU.
var otherForms = map[string]string{
	"narrow_arith":    "a sum of float8 rounds to the format after every add; a sort of float8 canonicalizes with +0 and NaN looked up in the format's decoding table",
	"window_dilation": "a dilated window's int32 sum by or(add(a, b), and(a, 0))",
}

// TestRegionFormsOfTheFixtures: every sort_region comparator and
// reduce_region body that real jax's programs translate to is of a form
// backend/ir recognises (ir.SortKeysOf, ir.ArgReduceOf, ir.MonoidsOf), so
// that a driver that runs only those forms (the Metal driver) runs them;
// otherForms lists the exceptions.
func TestRegionFormsOfTheFixtures(t *testing.T) {
	counts := map[string]int{}
	other := map[string]int{}
	for _, path := range artifacts(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".mlir.bc")
		if _, refused := expectedErrors[name]; refused {
			continue
		}
		p, err := Translate(readModule(t, path))
		if err != nil {
			continue // TestEveryArtifactTranslates reports it
		}
		var walk func(p *ir.Program)
		walk = func(p *ir.Program) {
			for i, in := range p.Instrs {
				switch in.Op {
				case ir.OpSortRegion:
					keys, ok := ir.SortKeysOf(in.Regions[0])
					switch {
					case !ok && otherForms[name] != "":
						other[name]++
					case !ok:
						t.Errorf("%s: instruction %%%d: a comparator of no form ir.SortKeysOf knows:\n%s", name, i, in.Regions[0])
					}
					counts["sort_region"]++
					for _, k := range keys {
						counts[k.Order.String()]++
					}
				case ir.OpReduceRegion:
					_, arg := ir.ArgReduceOf(in.Regions[0])
					_, monoids := ir.MonoidsOf(in.Regions[0])
					switch {
					case !arg && !monoids && otherForms[name] != "":
						other[name]++
					case !arg && !monoids:
						t.Errorf("%s: instruction %%%d: a body of no form ir.ArgReduceOf or ir.MonoidsOf knows:\n%s", name, i, in.Regions[0])
					}
					counts["reduce_region"]++
				}
				for _, r := range in.Regions {
					walk(r)
				}
			}
		}
		walk(p)
	}
	for name, why := range otherForms {
		if other[name] == 0 {
			t.Errorf("otherForms lists %s (%s), whose regions are all of known forms now", name, why)
		}
	}
	t.Logf("%v", counts)
	if counts["sort_region"] == 0 || counts["reduce_region"] == 0 {
		t.Errorf("the fixtures hold %d sort_region and %d reduce_region: the test sees none", counts["sort_region"], counts["reduce_region"])
	}
}

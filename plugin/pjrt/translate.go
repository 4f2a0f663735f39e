package pjrt

import (
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/plugin/pjrt/stablehlo"
)

// jax's programs go through the StableHLO reader and translator: the MLIR
// bytecode of a portable artifact, read (plugin/pjrt/mlir) and translated to
// the IR (plugin/pjrt/stablehlo). What the translation does not support is
// UNIMPLEMENTED; a malformed artifact INVALID_ARGUMENT.
func init() {
	tr := stablehlo.SignedTranslator()
	Translate = func(code []byte, format string) (*ir.Program, Marks, error) {
		p, sig, err := tr(code, format)
		var u Marks
		if sig != nil {
			for i, a := range sig.Args {
				u.Params = append(u.Params, heldType(a.Held))
				u.Donated = append(u.Donated, sig.Donated(i))
			}
			for _, r := range sig.Results {
				u.Results = append(u.Results, heldType(r.Held))
			}
			if p != nil {
				u.Hidden = len(p.Results) - len(sig.Results)
			}
		}
		return p, u, err
	}
}

// heldType is the PJRT type the signature names (0 for none: the IR
// dtype's own).
func heldType(name string) bufType {
	t, _ := typeNamed(name) // every name the translation gives is XLA's
	return t
}

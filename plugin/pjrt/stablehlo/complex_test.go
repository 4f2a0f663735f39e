package stablehlo

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

// TestComplexPartsWithoutBits: no artifact's translation reinterprets
// complex64 bits; the parts are the IR's real, imag and complex, which
// every driver runs (the Metal driver lowers no bitcast_convert, and a
// program taking its complex numbers apart through the bits left the GPU).
func TestComplexPartsWithoutBits(t *testing.T) {
	for _, path := range artifacts(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".mlir.bc")
		p, err := Translate(readModule(t, path))
		if err != nil {
			continue // TestEveryArtifactTranslates says which fail, and why
		}
		var walk func(p *ir.Program)
		walk = func(p *ir.Program) {
			for i, in := range p.Instrs {
				if in.Op == ir.OpBitcastConvert && (in.Type.DType == ir.C64 || p.Type(in.Args[0]).DType == ir.C64) {
					t.Errorf("%s: instruction %%%d bitcasts %v to %v", name, i, p.Type(in.Args[0]), in.Type)
				}
				for _, r := range in.Regions {
					walk(r)
				}
			}
		}
		walk(p)
	}
}

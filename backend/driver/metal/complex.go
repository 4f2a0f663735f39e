package metal

import (
	"slices"

	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	registerLowering(lowerPart, ir.OpReal, ir.OpImag)
	registerLowering(lowerComplex, ir.OpComplex)
}

// A complex64 is held as float32 with a trailing dimension of 2 (real,
// imaginary): taking it apart is a slice of that dimension and putting it
// together a concatenation along it, moves of the parts that compute
// nothing on them, on every release.

// lowerPart slices the real (entry 0) or imaginary (entry 1) parts out of
// the trailing dimension.
func lowerPart(l *lowering, in ir.Instr, args []val) (tensor, error) {
	ps := physShape(args[0].typ)
	r := len(ps)
	starts, ends := make([]int, r), slices.Clone(ps)
	if in.Op == ir.OpImag {
		starts[r-1] = 1
	} else {
		ends[r-1] = 1
	}
	return l.toShape(l.slice(args[0].t, starts, ends, ones(r)), in.Type), nil
}

// lowerComplex concatenates the parts along a new trailing dimension.
func lowerComplex(l *lowering, in ir.Instr, args []val) (tensor, error) {
	return l.joinComplex(args[0].t, args[1].t, in.Type.Shape), nil
}

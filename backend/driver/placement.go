package driver

import (
	"errors"
	"fmt"

	"github.com/metalplug/metalplug/backend/ir"
)

// Unsupported is what a driver's Compile returns when it cannot run an
// instruction of the program (or the case of it the program asks for): a
// layer above the drivers (backend/split) runs that part on the host
// instead. It is not the caller's fault, so it is no InvalidArgument.
type Unsupported struct {
	Instr  int    // the instruction's index in the program, -1 for the program as a whole
	Op     ir.Op  // its op
	Reason string // why the driver cannot run it, in a sentence a user can act on
	// Planned is set where the op's home is the host by design (matrix
	// decompositions, which MPSGraph has not; host callbacks; float64,
	// which Apple GPUs have not): running it there is the plan, not a gap
	// in the driver, so nobody is warned unless Tell is set.
	Planned bool
	// Tell is set on a planned host part the user should still hear of,
	// once: one chosen by the program's own types (float64), which a user
	// may not know the GPU lacks.
	Tell bool
}

func (e *Unsupported) Error() string {
	if e.Instr < 0 {
		return fmt.Sprintf("%s: %s", e.Op, e.Reason)
	}
	return fmt.Sprintf("instruction %%%d: %s: %s", e.Instr, e.Op, e.Reason)
}

// AsUnsupported finds an Unsupported in err's chain.
func AsUnsupported(err error) (*Unsupported, bool) {
	var u *Unsupported
	ok := errors.As(err, &u)
	return u, ok
}

// Placer is a driver that can say, before compiling, which instructions of
// a program it cannot run: Place returns one entry per instruction, nil
// where the driver runs it. A program whose parameters the driver cannot
// take at all (a type the running release lacks) is one Unsupported with
// Instr -1 as the error.
type Placer interface {
	Place(p *ir.Program) ([]*Unsupported, error)
}

package ir

import (
	"errors"
	"fmt"
	"slices"
)

// Builder appends instructions to a Program, inferring and checking each
// result type. The first error sticks: later calls return a dummy value, and
// Build reports the error, so a lowering reads as straight-line code.
type Builder struct {
	prog Program
	err  error
	loc  string // given to every instruction emitted (SetLoc)
}

// SetLoc makes loc the source location of the instructions emitted from
// now on: a frontend sets it to the position of the op it translates, so
// that what the device cannot run is named by the user's source line.
func (b *Builder) SetLoc(loc string) { b.loc = loc }

// NewBuilder starts an empty program.
func NewBuilder() *Builder { return &Builder{} }

// Err is the first error recorded, if any.
func (b *Builder) Err() error { return b.err }

// Build finishes the program with the given results.
func (b *Builder) Build(results ...Value) (*Program, error) {
	if b.err != nil {
		return nil, b.err
	}
	if len(results) == 0 {
		return nil, errors.New("ir: program has no results")
	}
	for _, r := range results {
		if int(r) < 0 || int(r) >= len(b.prog.Instrs) {
			return nil, fmt.Errorf("ir: result %%%d does not exist", r)
		}
		if b.isTuple(r) {
			return nil, fmt.Errorf("ir: result %%%d is a tuple: take it apart with GetResult", r)
		}
	}
	return &Program{Params: b.prog.Params, Instrs: b.prog.Instrs, Results: slices.Clone(results)}, nil
}

// Type is the type of a value built so far.
func (b *Builder) Type(v Value) TensorType {
	if int(v) < 0 || int(v) >= len(b.prog.Instrs) {
		return TensorType{}
	}
	return b.prog.Instrs[v].Type
}

func (b *Builder) fail(op Op, format string, args ...any) Value {
	if b.err == nil {
		b.err = fmt.Errorf("ir: %s: %s", op, fmt.Sprintf(format, args...))
	}
	return 0
}

func (b *Builder) emit(in Instr) Value {
	if b.err != nil {
		return 0
	}
	if err := in.Type.validate(); err != nil {
		return b.fail(in.Op, "%v", err)
	}
	for _, a := range in.Args {
		if int(a) < 0 || int(a) >= len(b.prog.Instrs) {
			return b.fail(in.Op, "operand %%%d does not exist", a)
		}
	}
	if in.Loc == "" {
		in.Loc = b.loc
	}
	b.prog.Instrs = append(b.prog.Instrs, in)
	return Value(len(b.prog.Instrs) - 1)
}

// distinctIn reports whether every index is in [0,rank) and none repeats.
func distinctIn(rank int, lists ...[]int) bool {
	seen := make([]bool, rank)
	for _, l := range lists {
		for _, v := range l {
			if v < 0 || v >= rank || seen[v] {
				return false
			}
			seen[v] = true
		}
	}
	return true
}

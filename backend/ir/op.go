package ir

import (
	"fmt"
	"slices"
)

//go:generate go run ./internal/opgen/cmd/opgen

// Op names one IR operation. Each op family has one file, ops_<family>.go,
// that defines its ops (an opDefs variable: each op's constant, documented
// there, and its table entry), its attribute types and its Builder methods;
// opgen numbers the constants from those files into ops_gen.go. The
// reference semantics are backend/ir/eval's file of the same family, and
// the values every driver must give are backend/ir/testdata's.
type Op uint16

// OpInfo is everything the IR knows of one op, in one place: its name, how
// many operands it takes, which attribute fields of Instr it reads, and how
// its result type follows from its operands (by replaying it through the
// Builder, whose checks are the IR's rules).
type OpInfo struct {
	Name  string
	Arity int      // operand count, or Variadic
	Attrs []string // Instr fields read beyond Args and Type
	class opClass  // elementwise ops: unary, binary or bitwise
	// infer rebuilds in on b from its rebuilt operands; the builder checks
	// the operands and attributes and infers the result type.
	infer func(b *Builder, p *Program, in Instr, args []Value) (Value, error)
}

// Ops lists every IR op, for drivers and tests that must cover them all.
func Ops() []Op {
	ops := make([]Op, 0, numOps-1)
	for o := OpInvalid + 1; o < numOps; o++ {
		ops = append(ops, o)
	}
	return ops
}

// HasRegions reports whether o's instructions hold sub-programs (and yield a
// tuple).
func (o Op) HasRegions() bool {
	info, ok := o.Info()
	return ok && slices.Contains(info.Attrs, "Regions")
}

// YieldsTuple reports whether o's instructions yield a tuple of results
// (the region ops, and the decompositions with several results), which
// OpGetResult takes apart.
func (o Op) YieldsTuple() bool {
	info, ok := o.Info()
	return ok && slices.Contains(info.Attrs, "Tuple")
}

// Variadic is the Arity of an op that takes one or more operands.
const Variadic = -1

// Info is o's table entry; ok is false for an op the IR does not have.
func (o Op) Info() (OpInfo, bool) {
	if o <= OpInvalid || o >= numOps {
		return OpInfo{}, false
	}
	return opTable[o], true
}

// String is the op's StableHLO-style name.
func (o Op) String() string {
	if info, ok := o.Info(); ok {
		return info.Name
	}
	return fmt.Sprintf("op(%d)", uint16(o))
}

// missing is the error of an instruction that lacks an attribute its op needs.
func missing(what string) error { return fmt.Errorf("missing %s", what) }

// singleAxis is Axes[0] of an op that takes one axis, or -1 (which the
// builder rejects) when there is not exactly one.
func singleAxis(in Instr) int {
	if len(in.Axes) != 1 {
		return -1
	}
	return in.Axes[0]
}

// opDef is one op's definition in its family file: its constant (which
// opgen numbers) and its table entry.
type opDef struct {
	op   Op
	info OpInfo
}

// opDefs are the definitions of one family, in the order opgen numbers
// them; the comment above each is its constant's documentation.
type opDefs []opDef

// opTable is filled by init: the region ops' inference verifies their
// regions, which reads the table.
var opTable [numOps]OpInfo

func init() {
	for _, fam := range opFamilies {
		for _, d := range fam {
			opTable[d.op] = d.info
		}
	}
}

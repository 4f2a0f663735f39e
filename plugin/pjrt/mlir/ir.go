package mlir

import (
	"fmt"
	"strconv"
	"strings"
)

// Module is a read bytecode file.
type Module struct {
	// Producer is the writer's string; StableHLO writes "StableHLO_v1.22.0"
	// with the VHLO version it targeted.
	Producer string
	// Version is the bytecode format version (0 to 6).
	Version uint64
	// Body is the top-level builtin.module op.
	Body *Operation
	// Dialects lists the dialects the file uses, with their version
	// entries (raw) where the writer recorded one.
	Dialects []Dialect
}

// Dialect is a dialect named in the file.
type Dialect struct {
	Name    string
	Version []byte // the dialect's own version encoding; nil if none
}

// Operation is one op in generic form.
type Operation struct {
	Name     string // "vhlo.add_v1"
	Operands []*Value
	Results  []*Value
	// Attrs holds the op's properties first (its inherent attributes: for
	// VHLO every attribute VhloOps.td declares, sorted by name), then its
	// discardable attribute dictionary as stored (sorted by name too, as
	// MLIR keeps dictionaries). Files older than bytecode version 5 keep
	// everything in the dictionary; the reader moves the inherent ones to
	// the front, as MLIR does on load, so both look the same.
	Attrs []NamedAttr
	// NumProperties is how many of Attrs came from properties.
	NumProperties int
	Regions       []*Region
	Successors    []*Block
	Loc           Location
	// Block is the block the op is in (nil for the top-level op).
	Block *Block
	// IsolatedFromAbove is the writer's flag for the op's regions: values
	// from outside cannot be used inside (vhlo.func_v1).
	IsolatedFromAbove bool
}

// Attr finds an attribute (property or discardable) by name.
func (op *Operation) Attr(name string) (Attr, bool) {
	for _, a := range op.Attrs {
		if a.Name == name {
			return a.Value, true
		}
	}
	return nil, false
}

// Value is an SSA value: an op result or a block argument.
type Value struct {
	Type Type
	// Op is the defining op of a result; nil for a block argument.
	Op *Operation
	// Block is the owner of a block argument; nil for a result.
	Block *Block
	// Index is the result number or the argument number.
	Index int
	// Loc is the location of a block argument (results share their op's).
	Loc Location
	// ID numbers values in definition order across the module, for printing.
	ID int

	pending bool // a forward reference not yet defined
	usedAt  int  // where a pending reference was first read
}

// Name is how print.go refers to the value: %N or %argN.
func (v *Value) Name() string {
	if v.Op == nil {
		return fmt.Sprintf("%%arg%d", v.ID)
	}
	return fmt.Sprintf("%%%d", v.ID)
}

// Region is a list of blocks; the first is the entry block.
type Region struct {
	Blocks []*Block
	Op     *Operation // the op that holds the region
}

// Block is a basic block.
type Block struct {
	Args   []*Value
	Ops    []*Operation
	Region *Region
	ID     int // numbers blocks within their region, for printing
}

// Walk visits op and every op nested in its regions, in pre-order (the
// order of the file and of printed text). It stops when fn returns false.
func (op *Operation) Walk(fn func(*Operation) bool) bool {
	if !fn(op) {
		return false
	}
	for _, r := range op.Regions {
		for _, b := range r.Blocks {
			for _, o := range b.Ops {
				if !o.Walk(fn) {
					return false
				}
			}
		}
	}
	return true
}

// Walk visits every op of the module in pre-order.
func (m *Module) Walk(fn func(*Operation) bool) {
	if m.Body != nil {
		m.Body.Walk(fn)
	}
}

// Errorf builds an error that names the op and where jax says it came
// from, for translators that meet an op or attribute they cannot handle.
func (op *Operation) Errorf(format string, args ...any) error {
	return fmt.Errorf("%s at %s: %s", op.Name, op.Loc, fmt.Sprintf(format, args...))
}

// VHLOVersion parses the VHLO version StableHLO writes into the producer
// string ("StableHLO_v1.22.0"): the opset the artifact was downgraded to.
func (m *Module) VHLOVersion() (major, minor, patch int, ok bool) {
	rest, found := strings.CutPrefix(m.Producer, "StableHLO_v")
	if !found {
		return 0, 0, 0, false
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 {
		return 0, 0, 0, false
	}
	var v [3]int
	for i, s := range parts {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return 0, 0, 0, false
		}
		v[i] = n
	}
	return v[0], v[1], v[2], true
}

package mlir

// Bits of an op's encoding mask: which parts of the op follow.
const (
	maskAttrs         = 0x01
	maskResults       = 0x02
	maskOperands      = 0x04
	maskSuccessors    = 0x08
	maskRegions       = 0x10
	maskUseListOrders = 0x20
	maskProperties    = 0x40
)

// valueScope numbers the values of one isolated-from-above region tree.
// Operands refer to values by their index in definition order within the
// scope; each region reserves its slots when it opens, so nested regions
// see the values of the regions around them.
type valueScope struct {
	values []*Value
	next   []int // next slot to define, per open region
	sizes  []int // slots each open region reserved
}

type irState struct {
	scopes      []*valueScope
	nextArg     int
	nextResult  int
	regionDepth int
	reserved    int // value slots of the open regions
}

func (s *valueScope) open(n int) {
	s.next = append(s.next, len(s.values))
	s.sizes = append(s.sizes, n)
	for i := 0; i < n; i++ {
		s.values = append(s.values, nil)
	}
}

// close drops the region's slots; a forward reference still pending in one
// was a use of a value that never got defined.
func (s *valueScope) close(at int) error {
	n := s.sizes[len(s.sizes)-1]
	for _, v := range s.values[len(s.values)-n:] {
		if v != nil && v.pending {
			return errorAt(at, "expected every used value to be defined, a value used at offset %d never was", v.usedAt)
		}
	}
	s.values = s.values[:len(s.values)-n]
	s.next = s.next[:len(s.next)-1]
	s.sizes = s.sizes[:len(s.sizes)-1]
	return nil
}

func (p *parser) scope() *valueScope { return p.ir.scopes[len(p.ir.scopes)-1] }

// define gives v the next slot of the innermost open region. If the slot
// holds a forward reference, that Value becomes the definition, so the ops
// that used it early already point at the right thing.
func (p *parser) define(v *Value, at int) (*Value, error) {
	s := p.scope()
	if len(s.next) == 0 {
		return nil, errorAt(at, "expected values to be defined inside a region")
	}
	id := s.next[len(s.next)-1]
	if id >= len(s.values) {
		return nil, errorAt(at, "expected at most %d values in the region, this defines value %d", len(s.values), id)
	}
	s.next[len(s.next)-1]++
	if old := s.values[id]; old != nil {
		if !old.pending {
			return nil, errorAt(at, "value %d is defined twice", id)
		}
		*old = Value{Type: v.Type, Op: v.Op, Block: v.Block, Index: v.Index, Loc: v.Loc}
		v = old
	} else {
		s.values[id] = v
	}
	if v.Op == nil {
		v.ID = p.ir.nextArg
		p.ir.nextArg++
	} else {
		v.ID = p.ir.nextResult
		p.ir.nextResult++
	}
	return v, nil
}

func (p *parser) operand(d *decoder) (*Value, error) {
	at := d.offset()
	idx, err := d.varint("operand")
	if err != nil {
		return nil, err
	}
	s := p.scope()
	if idx >= uint64(len(s.values)) {
		return nil, errorAt(at, "expected an operand index below %d, got %d", len(s.values), idx)
	}
	if s.values[idx] == nil {
		s.values[idx] = &Value{pending: true, usedAt: at}
	}
	return s.values[idx], nil
}

// readIR reads the IR section: one block (without arguments) whose ops are
// the top level of the file, which for StableHLO is one builtin.module.
func (p *parser) readIR(s section) (*Operation, error) {
	d := s.decoder()
	p.ir.scopes = []*valueScope{{}}
	p.scope().open(0)
	top := &Block{}
	if err := p.readBlock(d, top, nil); err != nil {
		return nil, err
	}
	if err := p.scope().close(d.offset()); err != nil {
		return nil, err
	}
	if len(top.Ops) != 1 {
		return nil, errorAt(s.base, "expected one top-level op, found %d", len(top.Ops))
	}
	body := top.Ops[0]
	body.Block = nil
	if body.Name != "builtin.module" {
		return nil, errorAt(s.base, "expected the top-level op to be builtin.module, got %s", body.Name)
	}
	return body, nil
}

// readBlock reads a block header (op count, arguments and their use-list
// orders) and then the block's ops. blocks are the blocks of the enclosing
// region, which successors refer to.
func (p *parser) readBlock(d *decoder, b *Block, blocks []*Block) error {
	at := d.offset()
	numOps, hasArgs, err := d.varintFlag("block header")
	if err != nil {
		return err
	}
	if numOps > uint64(d.remaining()/3) {
		return errorAt(at, "expected at most %d ops in a block (each takes 3 bytes or more), the header says %d", d.remaining()/3, numOps)
	}
	if hasArgs {
		if err := p.readBlockArgs(d, b); err != nil {
			return err
		}
		if p.version >= vUseListOrdering {
			flag, err := d.byte1("block argument use-list flag")
			if err != nil {
				return err
			}
			if flag != 0 {
				if err := skipUseListOrders(d, len(b.Args)); err != nil {
					return err
				}
			}
		}
	}
	for i := uint64(0); i < numOps; i++ {
		op, err := p.readOp(d, blocks)
		if err != nil {
			return err
		}
		op.Block = b
		b.Ops = append(b.Ops, op)
	}
	return nil
}

func (p *parser) readBlockArgs(d *decoder, b *Block) error {
	n, err := d.count("number of block arguments", 1)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		at := d.offset()
		var t Type
		loc := &LocAttr{Kind: LocUnknown}
		if p.version >= vElideUnknownBlockArgLo {
			idx, hasLoc, err := d.varintFlag("block argument type")
			if err != nil {
				return err
			}
			if t, err = p.typ(idx, at); err != nil {
				return err
			}
			if hasLoc {
				if loc, err = p.readLoc(d, "block argument location"); err != nil {
					return err
				}
			}
		} else {
			if t, err = p.readType(d, "block argument type"); err != nil {
				return err
			}
			if loc, err = p.readLoc(d, "block argument location"); err != nil {
				return err
			}
		}
		v, err := p.define(&Value{Type: t, Block: b, Index: i, Loc: summarize(loc)}, at)
		if err != nil {
			return err
		}
		b.Args = append(b.Args, v)
	}
	return nil
}

// skipUseListOrders reads the use-list order of n values and drops it: the
// order of uses matters to in-place rewrites, not to reading the program.
func skipUseListOrders(d *decoder, n int) error {
	count := 1
	var err error
	if n > 1 {
		if count, err = d.count("number of use-list orders", 1); err != nil {
			return err
		}
	}
	for i := 0; i < count; i++ {
		if n > 1 {
			if _, err := d.varint("use-list value index"); err != nil {
				return err
			}
		}
		k, _, err := d.varintFlag("use-list length")
		if err != nil {
			return err
		}
		if k > uint64(d.remaining()) {
			return d.errorf("expected %d use-list indices, only %d bytes remain", k, d.remaining())
		}
		for j := uint64(0); j < k; j++ {
			if _, err := d.varint("use-list index"); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *parser) readOp(d *decoder, blocks []*Block) (*Operation, error) {
	at := d.offset()
	idx, err := d.varint("op name")
	if err != nil {
		return nil, err
	}
	if idx >= uint64(len(p.opNames)) {
		return nil, errorAt(at, "expected an op name index below %d, got %d", len(p.opNames), idx)
	}
	name := p.opNames[idx]
	op := &Operation{Name: name.name}
	mask, err := d.byte1("op encoding mask of " + op.Name)
	if err != nil {
		return nil, err
	}
	loc, err := p.readLoc(d, "location of "+op.Name)
	if err != nil {
		return nil, err
	}
	op.Loc = summarize(loc)
	// Errors from here on name the op and where it came from.
	fail := func(err error) (*Operation, error) {
		if e, ok := err.(*Error); ok {
			return nil, &Error{Offset: e.Offset, Msg: e.Msg + " (in " + op.Name + " at " + op.Loc.String() + ")"}
		}
		return nil, err
	}

	var dict *DictAttr
	if mask&maskAttrs != 0 {
		dat := d.offset()
		a, err := p.readAttr(d, "attribute dictionary of "+op.Name)
		if err != nil {
			return fail(err)
		}
		var ok bool
		if dict, ok = a.(*DictAttr); !ok {
			return fail(errorAt(dat, "expected a dictionary for the attributes, got %s", describe(a)))
		}
	}
	if mask&maskProperties != 0 {
		if err := p.readOpProperties(d, op, name, at); err != nil {
			return fail(err)
		}
	}
	op.NumProperties = len(op.Attrs)
	if dict != nil {
		if p.version < vNativeProperties {
			splitInherent(op, dict.Entries)
		} else {
			op.Attrs = append(op.Attrs, dict.Entries...)
		}
	}

	var resultTypes []Type
	if mask&maskResults != 0 {
		if resultTypes, err = p.readTypes(d, "result type"); err != nil {
			return fail(err)
		}
	}
	if mask&maskOperands != 0 {
		n, err := d.count("number of operands", 1)
		if err != nil {
			return fail(err)
		}
		op.Operands = make([]*Value, n)
		for i := range op.Operands {
			if op.Operands[i], err = p.operand(d); err != nil {
				return fail(err)
			}
		}
	}
	if mask&maskSuccessors != 0 {
		n, err := d.count("number of successors", 1)
		if err != nil {
			return fail(err)
		}
		for i := 0; i < n; i++ {
			sat := d.offset()
			b, err := d.varint("successor")
			if err != nil {
				return fail(err)
			}
			if b >= uint64(len(blocks)) {
				return fail(errorAt(sat, "expected a successor block index below %d, got %d", len(blocks), b))
			}
			op.Successors = append(op.Successors, blocks[b])
		}
	}
	if p.version >= vUseListOrdering && mask&maskUseListOrders != 0 {
		if err := skipUseListOrders(d, len(resultTypes)); err != nil {
			return fail(err)
		}
	}
	numRegions := 0
	if mask&maskRegions != 0 {
		n, isolated, err := d.varintFlag("number of regions")
		if err != nil {
			return fail(err)
		}
		if n > uint64(d.remaining()) {
			return fail(d.errorf("expected at most %d regions, got %d", d.remaining(), n))
		}
		numRegions, op.IsolatedFromAbove = int(n), isolated
	}

	// Results are numbered in the enclosing region, before the op's own
	// regions open; the top-level block reserves no values, so ops there
	// (the module) define none.
	s := p.scope()
	if len(resultTypes) > 0 && s.sizes[len(s.sizes)-1] > 0 {
		for i, t := range resultTypes {
			v, err := p.define(&Value{Type: t, Op: op, Index: i}, at)
			if err != nil {
				return fail(err)
			}
			op.Results = append(op.Results, v)
		}
	} else {
		for i, t := range resultTypes {
			op.Results = append(op.Results, &Value{Type: t, Op: op, Index: i, ID: -1})
		}
	}

	if numRegions > 0 {
		if err := p.readRegions(d, op, numRegions); err != nil {
			return nil, err
		}
	}
	return op, nil
}

// readRegions reads an op's regions: inline, or, for isolated-from-above
// ops from version 2 on, inside a nested IR section (which is what lets
// MLIR load function bodies lazily; here they are read at once). An
// isolated op starts a fresh value numbering.
func (p *parser) readRegions(d *decoder, op *Operation, n int) error {
	if p.ir.regionDepth >= maxNesting {
		return d.errorf("expected regions to nest at most %d deep", maxNesting)
	}
	p.ir.regionDepth++
	defer func() { p.ir.regionDepth-- }()
	rd := d
	if op.IsolatedFromAbove {
		if p.version >= vLazyLoading {
			at := d.offset()
			s, err := d.section("region section of " + op.Name)
			if err != nil {
				return err
			}
			if s.id != secIR {
				return errorAt(at, "expected an IR section holding the regions of %s, got a %s section", op.Name, sectionNames[s.id])
			}
			rd = s.decoder()
		}
		p.ir.scopes = append(p.ir.scopes, &valueScope{})
		defer func() { p.ir.scopes = p.ir.scopes[:len(p.ir.scopes)-1] }()
	}
	for i := 0; i < n; i++ {
		r := &Region{Op: op}
		if err := p.readRegion(rd, r); err != nil {
			return err
		}
		op.Regions = append(op.Regions, r)
	}
	return nil
}

func (p *parser) readRegion(d *decoder, r *Region) error {
	numBlocks, err := d.count("number of blocks", 1)
	if err != nil || numBlocks == 0 {
		return err
	}
	at := d.offset()
	numValues, err := d.count("number of values in the region", 1)
	if err != nil {
		return err
	}
	// Every value reserved by the open regions is defined by bytes of its
	// own, so together they cannot outnumber the bytes of the file.
	if p.ir.reserved+numValues > len(p.buf) {
		return errorAt(at, "expected the open regions to hold at most %d values, this one adds %d to %d", len(p.buf), numValues, p.ir.reserved)
	}
	p.ir.reserved += numValues
	defer func() { p.ir.reserved -= numValues }()
	r.Blocks = make([]*Block, numBlocks)
	for i := range r.Blocks {
		r.Blocks[i] = &Block{Region: r, ID: i}
	}
	p.scope().open(numValues)
	for _, b := range r.Blocks {
		if err := p.readBlock(d, b, r.Blocks); err != nil {
			return err
		}
	}
	return p.scope().close(d.offset())
}

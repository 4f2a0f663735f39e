package mlir

import (
	"fmt"
)

// Bytecode format versions whose changes the reader follows
// (mlir/include/mlir/Bytecode/Encoding.h).
const (
	vDialectVersioning      = 1 // dialects may carry a version
	vLazyLoading            = 2 // isolated regions are nested sections
	vUseListOrdering        = 3 // use-list orders are recorded
	vElideUnknownBlockArgLo = 4 // block args say whether they have a location
	vNativeProperties       = 5 // ops carry properties; op names say if registered
	vNativeSegmentSizes     = 6 // ODS segment sizes are native properties
	newestVersion           = 6
)

var magic = []byte{'M', 'L', 0xEF, 'R'}

type dialect struct {
	name    string
	version []byte
}

type opName struct {
	dialect    *dialect
	name       string // full name, "vhlo.add_v1"
	registered bool   // known only from version 5 on
}

type resource struct {
	dialect string
	key     string
	kind    byte // 0 blob, 1 bool, 2 string
	blob    []byte
}

type propBlob struct {
	data []byte
	base int
}

// parser holds everything read from the sections, for the IR section to
// refer to.
type parser struct {
	buf       []byte
	version   uint64
	producer  string
	strings   []string
	dialects  []*dialect
	opNames   []opName
	attrs     []entry
	types     []entry
	props     []propBlob
	resources []resource
	depth     int
	ir        irState
}

// Read parses an MLIR bytecode buffer (a StableHLO portable artifact, as
// PJRT_Client_Compile receives it with format "mlir") into an op tree. It
// reads bytecode versions 0 to 6. Errors are *Error values that give the
// byte offset and what was expected there; it does not panic, whatever the
// input.
func Read(data []byte) (m *Module, err error) {
	defer func() {
		// Every path is bounds-checked; this only keeps a bug from taking
		// down the process that loaded the plugin.
		if r := recover(); r != nil {
			m, err = nil, &Error{Offset: -1, Msg: fmt.Sprintf("internal error: %v", r)}
		}
	}()
	p := &parser{buf: data}
	return p.read()
}

func (p *parser) read() (*Module, error) {
	d := newDecoder(p.buf, 0)
	if len(p.buf) < len(magic) || string(p.buf[:len(magic)]) != string(magic) {
		return nil, d.errorf("expected the MLIR bytecode magic \"ML\\xEFR\"")
	}
	d.pos = len(magic)
	at := d.offset()
	v, err := d.varint("bytecode version")
	if err != nil {
		return nil, err
	}
	if v > newestVersion {
		return nil, errorAt(at, "expected a bytecode version of at most %d, got %d", newestVersion, v)
	}
	p.version = v
	if p.producer, err = d.cstring("producer string"); err != nil {
		return nil, err
	}

	var secs [numSections]*section
	for !d.empty() {
		at := d.offset()
		s, err := d.section("top-level section")
		if err != nil {
			return nil, err
		}
		if secs[s.id] != nil {
			return nil, errorAt(at, "expected each section once, found a second %s section", sectionNames[s.id])
		}
		secs[s.id] = &s
	}
	for id, s := range secs {
		optional := id == secResource || id == secResourceOffset || id == secDialectVersions ||
			(id == secProperties && p.version < vNativeProperties)
		if s == nil && !optional {
			return nil, errorAt(len(p.buf), "expected a %s section, the file has none", sectionNames[id])
		}
	}

	if err := p.readStrings(*secs[secString]); err != nil {
		return nil, err
	}
	if secs[secProperties] != nil {
		if err := p.readProperties(*secs[secProperties]); err != nil {
			return nil, err
		}
	}
	if err := p.readDialects(*secs[secDialect]); err != nil {
		return nil, err
	}
	if (secs[secResource] == nil) != (secs[secResourceOffset] == nil) {
		return nil, errorAt(len(p.buf), "expected the resource and resource offset sections together, found only one")
	}
	if secs[secResource] != nil {
		if err := p.readResources(*secs[secResource], *secs[secResourceOffset]); err != nil {
			return nil, err
		}
	}
	if err := p.readAttrTypeOffsets(*secs[secAttrType], *secs[secAttrTypeOffset]); err != nil {
		return nil, err
	}
	body, err := p.readIR(*secs[secIR])
	if err != nil {
		return nil, err
	}
	m := &Module{Producer: p.producer, Version: p.version, Body: body}
	for _, dl := range p.dialects {
		m.Dialects = append(m.Dialects, Dialect{Name: dl.name, Version: dl.version})
	}
	return m, nil
}

// readStrings reads the string table: a count, the sizes of the strings in
// reverse order, then the strings (NUL-terminated) back to back.
func (p *parser) readStrings(s section) error {
	d := s.decoder()
	n, err := d.count("number of strings", 2)
	if err != nil {
		return err
	}
	p.strings = make([]string, n)
	end := len(s.data)
	for i := n - 1; i >= 0; i-- {
		at := d.offset()
		size, err := d.varint("string size")
		if err != nil {
			return err
		}
		if size == 0 || size > uint64(end-d.pos) {
			return errorAt(at, "expected a string size between 1 and %d, got %d", end-d.pos, size)
		}
		start := end - int(size)
		if s.data[end-1] != 0 {
			return errorAt(s.base+end-1, "expected string %d to end with NUL", i)
		}
		p.strings[i] = string(s.data[start : end-1])
		end = start
	}
	if d.pos != end {
		return errorAt(d.offset(), "expected the string data to start right after the sizes, %d bytes in between", end-d.pos)
	}
	return nil
}

// readProperties indexes the properties section: a count, then that many
// blobs (a size and the bytes), which ops refer to by number.
func (p *parser) readProperties(s section) error {
	if len(s.data) == 0 {
		return nil
	}
	d := s.decoder()
	n, err := d.count("number of property blobs", 1)
	if err != nil {
		return err
	}
	p.props = make([]propBlob, n)
	for i := range p.props {
		size, err := d.varint("property blob size")
		if err != nil {
			return err
		}
		base := d.offset()
		b, err := d.bytes(size, "property blob")
		if err != nil {
			return err
		}
		p.props[i] = propBlob{data: b, base: base}
	}
	if !d.empty() {
		return d.errorf("expected the end of the properties section after %d blobs, found %d more bytes", n, d.remaining())
	}
	return nil
}

func (p *parser) dialectRef(d *decoder) (*dialect, error) {
	at := d.offset()
	idx, err := d.varint("dialect index")
	if err != nil {
		return nil, err
	}
	if idx >= uint64(len(p.dialects)) {
		return nil, errorAt(at, "expected a dialect index below %d, got %d", len(p.dialects), idx)
	}
	return p.dialects[idx], nil
}

// readDialects reads the dialect names (with version entries from version
// 1 on) and the op names, grouped by dialect.
func (p *parser) readDialects(s section) error {
	d := s.decoder()
	n, err := d.count("number of dialects", 1)
	if err != nil {
		return err
	}
	p.dialects = make([]*dialect, n)
	for i := range p.dialects {
		at := d.offset()
		idx, hasVersion := uint64(0), false
		if p.version < vDialectVersioning {
			idx, err = d.varint("dialect name")
		} else {
			idx, hasVersion, err = d.varintFlag("dialect name")
		}
		if err != nil {
			return err
		}
		name, err := p.stringAt(idx, at)
		if err != nil {
			return err
		}
		dl := &dialect{name: name}
		if hasVersion {
			vat := d.offset()
			vs, err := d.section("dialect version")
			if err != nil {
				return err
			}
			if vs.id != secDialectVersions {
				return errorAt(vat, "expected a dialect version section for %s, got a %s section", name, sectionNames[vs.id])
			}
			dl.version = vs.data
		}
		p.dialects[i] = dl
	}
	if p.version >= vElideUnknownBlockArgLo {
		if _, err := d.count("number of op names", 1); err != nil {
			return err
		}
	}
	for !d.empty() {
		dl, err := p.dialectRef(d)
		if err != nil {
			return err
		}
		count, err := d.count("number of op names in "+dl.name, 1)
		if err != nil {
			return err
		}
		for i := 0; i < count; i++ {
			at := d.offset()
			idx, registered := uint64(0), false
			if p.version < vNativeProperties {
				idx, err = d.varint("op name")
			} else {
				idx, registered, err = d.varintFlag("op name")
			}
			if err != nil {
				return err
			}
			name, err := p.stringAt(idx, at)
			if err != nil {
				return err
			}
			full := dl.name + "." + name
			if name == "" {
				full = dl.name // old files allowed names without a dot
			}
			p.opNames = append(p.opNames, opName{dialect: dl, name: full, registered: registered})
		}
	}
	return nil
}

// readResources reads the resource offset section, which says where each
// resource's bytes are in the resource section. External resource groups
// are skipped; dialect resources become the handles that dense_resource
// attributes refer to, in order.
func (p *parser) readResources(data, offsets section) error {
	rd := data.decoder()
	od := offsets.decoder()
	external, err := od.count("number of external resource groups", 1)
	if err != nil {
		return err
	}
	group := func(owner string, keep bool) error {
		n, err := od.count("number of resources", 3)
		if err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			key, err := p.readString(od, "resource key")
			if err != nil {
				return err
			}
			size, err := od.varint("resource size")
			if err != nil {
				return err
			}
			kind, err := od.byte1("resource kind")
			if err != nil {
				return err
			}
			base := rd.offset()
			b, err := rd.bytes(size, "resource "+key)
			if err != nil {
				return err
			}
			if !keep {
				continue
			}
			r := resource{dialect: owner, key: key, kind: kind}
			if kind == 0 && len(b) > 0 {
				bd := newDecoder(b, base)
				align, err := bd.varint("resource alignment")
				if err != nil {
					return err
				}
				size, err := bd.varint("resource blob size")
				if err != nil {
					return err
				}
				if err := bd.alignTo(align, "resource "+key); err != nil {
					return err
				}
				if r.blob, err = bd.bytes(size, "resource blob"); err != nil {
					return err
				}
			}
			p.resources = append(p.resources, r)
		}
		return nil
	}
	for i := 0; i < external; i++ {
		if _, err := p.readString(od, "external resource group key"); err != nil {
			return err
		}
		if err := group("", false); err != nil {
			return err
		}
	}
	for !od.empty() {
		dl, err := p.dialectRef(od)
		if err != nil {
			return err
		}
		if err := group(dl.name, true); err != nil {
			return err
		}
	}
	return nil
}

// readAttrTypeOffsets splits the attribute/type section into entries. The
// offset section gives, per dialect group, each entry's size and whether it
// uses the dialect's own encoding; attributes come first, then types.
func (p *parser) readAttrTypeOffsets(data, offsets section) error {
	d := offsets.decoder()
	nAttrs, err := d.count("number of attributes", 1)
	if err != nil {
		return err
	}
	nTypes, err := d.count("number of types", 1)
	if err != nil {
		return err
	}
	if nAttrs+nTypes > d.remaining() {
		return d.errorf("expected offsets for %d attributes and types, only %d bytes remain", nAttrs+nTypes, d.remaining())
	}
	p.attrs = make([]entry, nAttrs)
	p.types = make([]entry, nTypes)
	cur := 0
	fill := func(entries []entry, what string) error {
		for i := 0; i < len(entries); {
			dl, err := p.dialectRef(d)
			if err != nil {
				return err
			}
			at := d.offset()
			n, err := d.varint("number of " + what + "s in the group")
			if err != nil {
				return err
			}
			if n > uint64(len(entries)-i) {
				return errorAt(at, "expected at most %d more %ss, the group has %d", len(entries)-i, what, n)
			}
			for j := uint64(0); j < n; j++ {
				at := d.offset()
				size, custom, err := d.varintFlag(what + " size")
				if err != nil {
					return err
				}
				if size > uint64(len(data.data)-cur) {
					return errorAt(at, "expected a %s size of at most %d (the rest of the attribute/type section), got %d",
						what, len(data.data)-cur, size)
				}
				entries[i] = entry{dialect: dl, custom: custom, data: data.data[cur : cur+int(size)], base: data.base + cur}
				cur += int(size)
				i++
			}
		}
		return nil
	}
	if err := fill(p.attrs, "attribute"); err != nil {
		return err
	}
	if err := fill(p.types, "type"); err != nil {
		return err
	}
	if !d.empty() {
		return d.errorf("expected the end of the attribute/type offset section, found %d more bytes", d.remaining())
	}
	return nil
}

package mlir

//go:generate go run ./internal/vhlogen -o gen_vhloops.go -from openxla/stablehlo@$STABLEHLO_COMMIT $STABLEHLO/stablehlo/dialect/VhloOps.td

// vhloOp is an entry of the generated VHLO op table.
type vhloOp struct {
	minVersion, maxVersion string
	attrs                  []string
}

// propField is one attribute of an op's properties; optional ones are
// written as a reference with a presence flag.
type propField struct {
	name     string
	optional bool
}

// otherProps lists the properties of the non-VHLO ops seen in StableHLO
// artifacts from jax, as ODS generates them: attributes sorted by name,
// optional ones with a presence flag. Shardy changes faster than VHLO and
// builtin, so if an sdy op's blob does not decode this way it is kept
// opaque instead of failing the read.
var otherProps = map[string][]propField{
	"builtin.module":          {{"sym_name", true}, {"sym_visibility", true}},
	"sdy.mesh":                {{"mesh", false}, {"sym_name", false}},
	"sdy.sharding_constraint": {{"sharding", false}},
}

// splitInherent handles files older than version 5, whose ops keep every
// attribute in the dictionary: like MLIR on load, it moves the op's own
// (inherent) attributes to the properties, in properties order, so the tree
// looks the same whatever version wrote it.
func splitInherent(op *Operation, entries []NamedAttr) {
	var names []string
	if v, ok := vhloOps[op.Name]; ok {
		names = v.attrs
	} else if f, ok := otherProps[op.Name]; ok {
		for _, pf := range f {
			names = append(names, pf.name)
		}
	}
	used := make([]bool, len(entries))
	for _, n := range names {
		for i, e := range entries {
			if !used[i] && e.Name == n {
				op.Attrs = append(op.Attrs, e)
				used[i] = true
				break
			}
		}
	}
	op.NumProperties = len(op.Attrs)
	for i, e := range entries {
		if !used[i] {
			op.Attrs = append(op.Attrs, e)
		}
	}
}

// readOpProperties reads an op's properties. A registered op refers to a
// blob of the properties section, laid out by the op's own (ODS) code: for
// VHLO and the ops above that is one attribute reference per attribute, by
// name. An op that was unregistered when written stores a dictionary
// attribute instead. Properties of ops we have no table for are kept
// whole, as one opaque "properties" attribute, so reading does not fail.
func (p *parser) readOpProperties(d *decoder, op *Operation, name opName, opAt int) error {
	if p.version < vNativeProperties {
		return d.errorf("expected no properties before bytecode version %d", vNativeProperties)
	}
	if !name.registered {
		a, err := p.readAttr(d, "properties of "+op.Name)
		if err != nil {
			return err
		}
		if dict, ok := a.(*DictAttr); ok {
			op.Attrs = append(op.Attrs, dict.Entries...)
		} else {
			op.Attrs = append(op.Attrs, NamedAttr{Name: "properties", Value: a})
		}
		return nil
	}
	at := d.offset()
	idx, err := d.varint("properties index of " + op.Name)
	if err != nil {
		return err
	}
	if idx >= uint64(len(p.props)) {
		return errorAt(at, "expected a properties index below %d, got %d", len(p.props), idx)
	}
	blob := p.props[idx]
	pd := newDecoder(blob.data, blob.base)
	opaque := NamedAttr{Name: "properties", Value: &OpaqueAttr{Dialect: name.dialect.name, Data: blob.data}}
	if v, ok := vhloOps[op.Name]; ok {
		fields := make([]propField, len(v.attrs))
		for i, a := range v.attrs {
			fields[i] = propField{name: a}
		}
		return p.readPropFields(pd, op, fields)
	}
	if f, ok := otherProps[op.Name]; ok {
		if name.dialect.name == "builtin" {
			return p.readPropFields(pd, op, f)
		}
		keep := len(op.Attrs)
		if err := p.readPropFields(pd, op, f); err != nil {
			op.Attrs = append(op.Attrs[:keep], opaque)
		}
		return nil
	}
	op.Attrs = append(op.Attrs, opaque)
	return nil
}

// readPropFields reads a properties blob as one attribute reference per
// field, and insists on using it all up.
func (p *parser) readPropFields(pd *decoder, op *Operation, fields []propField) error {
	var err error
	for _, f := range fields {
		var a Attr
		if f.optional {
			a, err = p.readOptionalAttr(pd, f.name+" of "+op.Name)
		} else {
			a, err = p.readAttr(pd, f.name+" of "+op.Name)
		}
		if err != nil {
			return err
		}
		if a != nil {
			op.Attrs = append(op.Attrs, NamedAttr{Name: f.name, Value: a})
		}
	}
	if !pd.empty() {
		return pd.errorf("expected the end of the properties of %s after %d attributes, found %d more bytes",
			op.Name, len(fields), pd.remaining())
	}
	return nil
}

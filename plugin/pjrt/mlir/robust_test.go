package mlir

import (
	"strings"
	"testing"
	"time"
)

// tinyAttr is an attribute entry of a tiny file: a custom encoding of one
// of its dialects (0 is builtin, 1 is sdy).
type tinyAttr struct {
	dialect int
	data    []byte
}

// tinyFile writes a minimal version-6 file: one builtin.module op with no
// properties and no regions, whose location is attribute locIdx and, if
// dictIdx >= 0, whose attribute dictionary is attribute dictIdx. Its
// strings are "builtin", "module", "sdy" and "x".
func tinyFile(attrs []tinyAttr, locIdx, dictIdx int) []byte {
	strs := []string{"builtin", "module", "sdy", "x"}
	sec := func(b []byte, id byte, data []byte) []byte {
		b = append(b, id)
		b = putVarint(b, uint64(len(data)))
		return append(b, data...)
	}
	var strData, sizes []byte
	sizes = putVarint(sizes, uint64(len(strs)))
	for i := len(strs) - 1; i >= 0; i-- {
		sizes = putVarint(sizes, uint64(len(strs[i])+1))
	}
	for _, s := range strs {
		strData = append(strData, s...)
		strData = append(strData, 0)
	}
	// Dialects "builtin" and "sdy" (no versions), then the op name group.
	dialects := enc(2, 0<<1, 2<<1, 1, 0, 1, 1<<1|1)
	var attrData []byte
	offsets := enc(uint64(len(attrs)), 0)
	for _, a := range attrs {
		attrData = append(attrData, a.data...)
		offsets = append(offsets, enc(uint64(a.dialect), 1, uint64(len(a.data))<<1|1)...)
	}
	ir := enc(1<<1, 0) // top block: one op, no arguments; op name 0
	if dictIdx >= 0 {
		ir = append(ir, maskAttrs)
		ir = append(ir, enc(uint64(locIdx), uint64(dictIdx))...)
	} else {
		ir = append(ir, 0)
		ir = append(ir, enc(uint64(locIdx))...)
	}

	b := append([]byte(nil), magic...)
	b = putVarint(b, 6)
	b = append(b, "test\x00"...)
	b = sec(b, secString, append(sizes, strData...))
	b = sec(b, secDialect, dialects)
	b = sec(b, secAttrType, attrData)
	b = sec(b, secAttrTypeOffset, offsets)
	b = sec(b, secIR, ir)
	b = sec(b, secProperties, nil)
	return b
}

func builtinAttrs(es ...[]byte) []tinyAttr {
	out := make([]tinyAttr, len(es))
	for i, e := range es {
		out[i] = tinyAttr{0, e}
	}
	return out
}

func enc(vs ...uint64) []byte {
	var b []byte
	for _, v := range vs {
		b = putVarint(b, v)
	}
	return b
}

func TestTinyFile(t *testing.T) {
	m, err := Read(tinyFile(builtinAttrs(enc(bUnknownLoc)), 0, -1))
	if err != nil {
		t.Fatal(err)
	}
	if m.Body.Name != "builtin.module" || m.Producer != "test" || m.Body.Loc.Attr.Kind != LocUnknown {
		t.Errorf("got %s", m)
	}
}

// TestSharedLocationsStayLinear builds fused locations that each list the
// previous one twice: 2^60 paths through 61 entries. Reading must take
// time in the entries, not the paths.
func TestSharedLocationsStayLinear(t *testing.T) {
	attrs := builtinAttrs(enc(bUnknownLoc))
	for k := 1; k <= 60; k++ {
		attrs = append(attrs, tinyAttr{0, enc(bFusedLoc, 2, uint64(k-1), uint64(k-1))})
	}
	start := time.Now()
	m, err := Read(tinyFile(attrs, 60, -1))
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("took %v", el)
	}
	if m.Body.Loc.File != "" {
		t.Errorf("location %+v", m.Body.Loc)
	}
}

func TestDeepNestingIsAnError(t *testing.T) {
	attrs := builtinAttrs(enc(bUnknownLoc))
	for k := 1; k <= 2*maxNesting; k++ {
		attrs = append(attrs, tinyAttr{0, enc(bFusedLoc, 1, uint64(k-1))})
	}
	_, err := Read(tinyFile(attrs, len(attrs)-1, -1))
	if err == nil || !strings.Contains(err.Error(), "nest deeper than") {
		t.Fatalf("got %v", err)
	}
}

func TestSelfReferenceIsAnError(t *testing.T) {
	_, err := Read(tinyFile(builtinAttrs(enc(bFusedLoc, 1, 0)), 0, -1))
	if err == nil || !strings.Contains(err.Error(), "refers to itself") {
		t.Fatalf("got %v", err)
	}
}

// TestUnknownDialectIsOpaque gives the module an attribute of a dialect
// the reader does not decode, in that dialect's own encoding: it must
// read, with the attribute kept opaque and its bytes intact.
func TestUnknownDialectIsOpaque(t *testing.T) {
	attrs := []tinyAttr{
		{0, enc(bUnknownLoc)},
		{0, enc(bString, 3)},           // "x"
		{1, []byte{0xDE, 0xAD, 0xBE}},  // an sdy attribute
		{0, enc(bDictionary, 1, 1, 2)}, // {x = <sdy>}
	}
	m, err := Read(tinyFile(attrs, 0, 3))
	if err != nil {
		t.Fatal(err)
	}
	a, ok := m.Body.Attr("x")
	o, isOpaque := a.(*OpaqueAttr)
	if !ok || !isOpaque || o.Dialect != "sdy" || string(o.Data) != "\xDE\xAD\xBE" {
		t.Fatalf("x = %v", a)
	}
	if got := m.String(); !strings.Contains(got, `{x = #sdy<opaque "0xDEADBE">}`) {
		t.Errorf("printed as %s", got)
	}
}

package mlir

import (
	"strconv"
	"strings"
)

// Builtin attribute codes, in the order of BuiltinDialectAttributes in
// mlir/include/mlir/IR/BuiltinDialectBytecode.td (the order is the format).
const (
	bArray = iota
	bDictionary
	bString
	bStringWithType
	bFlatSymbolRef
	bSymbolRef
	bTypeAttr
	bUnit
	bInteger
	bFloat
	bCallSiteLoc
	bFileLineColLoc
	bFusedLoc
	bFusedLocWithMetadata
	bNameLoc
	bUnknownLoc
	bDenseResourceElements
	bDenseArray
	bDenseIntOrFPElements
	bDenseStringElements
	bSparseElements
	bDistinct
	bFileLineColRange
)

// Builtin type codes, in the order of BuiltinDialectTypes.
const (
	tInteger = iota
	tIndex
	tFunction
	tBF16
	tF16
	tF32
	tF64
	tF80
	tF128
	tComplex
	tMemRef
	tMemRefWithMemSpace
	tNone
	tRankedTensor
	tRankedTensorWithEncoding
	tTuple
	tUnrankedMemRef
	tUnrankedMemRefWithMemSpace
	tUnrankedTensor
	tVector
	tVectorWithScalableDims
)

func (p *parser) builtinAttr(d *decoder) (Attr, error) {
	at := d.offset()
	code, err := d.varint("builtin attribute code")
	if err != nil {
		return nil, err
	}
	switch code {
	case bArray:
		elems, err := p.readAttrs(d, "array element")
		if err != nil {
			return nil, err
		}
		return &ArrayAttr{Elems: elems}, nil
	case bDictionary:
		n, err := d.count("number of dictionary entries", 2)
		if err != nil {
			return nil, err
		}
		dict := &DictAttr{Entries: make([]NamedAttr, n)}
		for i := range dict.Entries {
			name, err := p.readStringAttr(d, "dictionary key")
			if err != nil {
				return nil, err
			}
			v, err := p.readAttr(d, "dictionary value")
			if err != nil {
				return nil, err
			}
			dict.Entries[i] = NamedAttr{Name: name, Value: v}
		}
		return dict, nil
	case bString:
		s, err := p.readString(d, "string")
		if err != nil {
			return nil, err
		}
		return &StringAttr{Value: s}, nil
	case bStringWithType:
		s, err := p.readString(d, "string")
		if err != nil {
			return nil, err
		}
		t, err := p.readType(d, "string type")
		if err != nil {
			return nil, err
		}
		return &StringAttr{Value: s, Type: t}, nil
	case bFlatSymbolRef:
		root, err := p.readStringAttr(d, "symbol name")
		if err != nil {
			return nil, err
		}
		return &SymbolRefAttr{Root: root}, nil
	case bSymbolRef:
		root, err := p.readStringAttr(d, "symbol name")
		if err != nil {
			return nil, err
		}
		nested, err := p.readAttrs(d, "nested symbol")
		if err != nil {
			return nil, err
		}
		ref := &SymbolRefAttr{Root: root}
		for _, n := range nested {
			s, ok := n.(*SymbolRefAttr)
			if !ok || len(s.Nested) > 0 {
				return nil, errorAt(at, "expected flat symbol references in a symbol reference, got %s", describe(n))
			}
			ref.Nested = append(ref.Nested, s.Root)
		}
		return ref, nil
	case bTypeAttr:
		t, err := p.readType(d, "type of a type attribute")
		if err != nil {
			return nil, err
		}
		return &TypeAttr{Type: t}, nil
	case bUnit:
		return &UnitAttr{}, nil
	case bInteger:
		tat := d.offset()
		t, err := p.readType(d, "integer attribute type")
		if err != nil {
			return nil, err
		}
		w, err := intWidth(t, tat)
		if err != nil {
			return nil, err
		}
		low, wide, err := readAPInt(d, w, "integer value")
		if err != nil {
			return nil, err
		}
		return intAttr(t, w, low, wide), nil
	case bFloat:
		tat := d.offset()
		t, err := p.readType(d, "float attribute type")
		if err != nil {
			return nil, err
		}
		ft, ok := t.(*FloatType)
		if !ok {
			return nil, errorAt(tat, "expected a float type for a float attribute, got %s", describe(t))
		}
		low, wide, err := readAPInt(d, ft.Bits(), "float value")
		if err != nil {
			return nil, err
		}
		return floatAttr(t, low, wide, tat)
	case bCallSiteLoc:
		callee, err := p.readLoc(d, "call site callee")
		if err != nil {
			return nil, err
		}
		caller, err := p.readLoc(d, "call site caller")
		if err != nil {
			return nil, err
		}
		return &LocAttr{Kind: LocCallSite, Children: []*LocAttr{callee, caller}}, nil
	case bFileLineColLoc:
		file, err := p.readStringAttr(d, "file name")
		if err != nil {
			return nil, err
		}
		line, err := d.varint("line")
		if err != nil {
			return nil, err
		}
		col, err := d.varint("column")
		if err != nil {
			return nil, err
		}
		return &LocAttr{Kind: LocFile, File: file, Line: int(line), Col: int(col), HasCol: true}, nil
	case bFileLineColRange:
		file, err := p.readStringAttr(d, "file name")
		if err != nil {
			return nil, err
		}
		n, err := d.count("number of line/column values", 1)
		if err != nil {
			return nil, err
		}
		if n > 4 {
			return nil, errorAt(at, "expected at most 4 line/column values in a file range, got %d", n)
		}
		var v [4]int
		for i := 0; i < n; i++ {
			u, err := d.varint("line or column")
			if err != nil {
				return nil, err
			}
			v[i] = int(u)
		}
		// Three values are line, column and end column (a range on one
		// line); four are start line, start column, end line, end column,
		// which is the order jaxlib 0.12's MLIR writes. (Some llvm-project
		// revisions write the end column before the end line and swap them
		// back on reading; no StableHLO release has been seen doing so.)
		l := &LocAttr{Kind: LocFile, File: file, Line: v[0]}
		switch n {
		case 2:
			l.Col, l.HasCol = v[1], true
		case 3:
			l.Col, l.HasCol, l.EndCol, l.HasEnd = v[1], true, v[2], true
		case 4:
			l.Col, l.HasCol, l.EndLine, l.EndCol, l.HasEnd, l.HasEndLine = v[1], true, v[2], v[3], true, true
		}
		return l, nil
	case bFusedLoc, bFusedLocWithMetadata:
		l := &LocAttr{Kind: LocFused}
		n, err := d.count("number of fused locations", 1)
		if err != nil {
			return nil, err
		}
		for i := 0; i < n; i++ {
			c, err := p.readLoc(d, "fused location")
			if err != nil {
				return nil, err
			}
			l.Children = append(l.Children, c)
		}
		if code == bFusedLocWithMetadata {
			if l.Metadata, err = p.readAttr(d, "fused location metadata"); err != nil {
				return nil, err
			}
		}
		return l, nil
	case bNameLoc:
		name, err := p.readStringAttr(d, "location name")
		if err != nil {
			return nil, err
		}
		child, err := p.readLoc(d, "named location child")
		if err != nil {
			return nil, err
		}
		return &LocAttr{Kind: LocName, Name: name, Children: []*LocAttr{child}}, nil
	case bUnknownLoc:
		return &LocAttr{Kind: LocUnknown}, nil
	case bDenseResourceElements:
		t, err := p.readType(d, "resource elements type")
		if err != nil {
			return nil, err
		}
		hat := d.offset()
		idx, err := d.varint("resource handle")
		if err != nil {
			return nil, err
		}
		if idx >= uint64(len(p.resources)) {
			return nil, errorAt(hat, "expected a resource handle below %d, got %d", len(p.resources), idx)
		}
		r := p.resources[idx]
		return &ResourceAttr{Type: t, Dialect: r.dialect, Key: r.key, Data: r.blob}, nil
	case bDenseArray:
		t, err := p.readType(d, "dense array element type")
		if err != nil {
			return nil, err
		}
		size, err := d.varint("dense array size")
		if err != nil {
			return nil, err
		}
		data, dat, err := readBlob(d, "dense array data")
		if err != nil {
			return nil, err
		}
		w := ElementBytes(t)
		if w == 0 || size > uint64(len(data)) || uint64(len(data)) != size*uint64(w) {
			return nil, errorAt(dat, "expected %d elements of %s in a dense array, got %d bytes", size, describe(t), len(data))
		}
		return &DenseArrayAttr{Elem: t, Size: int(size), Data: data}, nil
	case bDenseIntOrFPElements:
		t, err := p.readType(d, "dense elements type")
		if err != nil {
			return nil, err
		}
		data, dat, err := readBlob(d, "dense elements data")
		if err != nil {
			return nil, err
		}
		return newDense(t, data, dat, false)
	case bDenseStringElements:
		tat := d.offset()
		t, err := p.readType(d, "dense string elements type")
		if err != nil {
			return nil, err
		}
		splat, err := d.varint("splat flag")
		if err != nil {
			return nil, err
		}
		n := int64(1)
		if splat == 0 {
			tt, ok := t.(*TensorType)
			if !ok || tt.NumElements() < 0 {
				return nil, errorAt(tat, "expected a static tensor type for dense strings, got %s", describe(t))
			}
			n = tt.NumElements()
		}
		if n > int64(d.remaining()) {
			return nil, d.errorf("expected %d strings, only %d bytes remain", n, d.remaining())
		}
		a := &DenseStringAttr{Type: t, Splat: splat != 0, Values: make([]string, n)}
		for i := range a.Values {
			if a.Values[i], err = p.readString(d, "dense string element"); err != nil {
				return nil, err
			}
		}
		return a, nil
	case bSparseElements:
		t, err := p.readType(d, "sparse elements type")
		if err != nil {
			return nil, err
		}
		indices, err := p.readAttr(d, "sparse indices")
		if err != nil {
			return nil, err
		}
		values, err := p.readAttr(d, "sparse values")
		if err != nil {
			return nil, err
		}
		return &SparseAttr{Type: t, Indices: indices, Values: values}, nil
	case bDistinct:
		ref, err := p.readAttr(d, "distinct attribute")
		if err != nil {
			return nil, err
		}
		return &DistinctAttr{Referenced: ref}, nil
	}
	// A code from a newer MLIR: the entry's size is known, so keep it whole.
	return &OpaqueAttr{Dialect: "builtin", Data: d.data}, skipRest(d)
}

func skipRest(d *decoder) error {
	d.pos = len(d.data)
	return nil
}

// readStringAttr reads a reference to a string attribute (used where the
// builtin encoding says StringAttr rather than String).
func (p *parser) readStringAttr(d *decoder, what string) (string, error) {
	at := d.offset()
	a, err := p.readAttr(d, what)
	if err != nil {
		return "", err
	}
	s, ok := a.(*StringAttr)
	if !ok {
		return "", errorAt(at, "expected a string attribute for %s, got %s", what, describe(a))
	}
	return s.Value, nil
}

func (p *parser) readLoc(d *decoder, what string) (*LocAttr, error) {
	at := d.offset()
	a, err := p.readAttr(d, what)
	if err != nil {
		return nil, err
	}
	return asLoc(a, what, at)
}

// asLoc accepts builtin locations, and keeps a foreign dialect's location
// as an opaque one rather than failing.
func asLoc(a Attr, what string, at int) (*LocAttr, error) {
	switch a := a.(type) {
	case *LocAttr:
		return a, nil
	case *OpaqueAttr:
		return &LocAttr{Kind: LocOpaque, Opaque: a}, nil
	}
	return nil, errorAt(at, "expected a location for %s, got %s", what, describe(a))
}

func (p *parser) builtinType(d *decoder) (Type, error) {
	code, err := d.varint("builtin type code")
	if err != nil {
		return nil, err
	}
	switch code {
	case tInteger:
		ws, err := d.varint("integer width and signedness")
		if err != nil {
			return nil, err
		}
		if ws>>2 > 1<<24 || ws&3 == 3 {
			return nil, d.errorf("expected an integer width and signedness, got %d", ws)
		}
		return &IntegerType{Width: int(ws >> 2), Signedness: Signedness(ws & 3)}, nil
	case tIndex:
		return &IndexType{}, nil
	case tFunction:
		in, err := p.readTypes(d, "function input")
		if err != nil {
			return nil, err
		}
		out, err := p.readTypes(d, "function result")
		if err != nil {
			return nil, err
		}
		return &FunctionType{Inputs: in, Results: out}, nil
	case tBF16:
		return &FloatType{Kind: BF16}, nil
	case tF16:
		return &FloatType{Kind: F16}, nil
	case tF32:
		return &FloatType{Kind: F32}, nil
	case tF64:
		return &FloatType{Kind: F64}, nil
	case tF80:
		return &FloatType{Kind: F80}, nil
	case tF128:
		return &FloatType{Kind: F128}, nil
	case tComplex:
		e, err := p.readType(d, "complex element type")
		if err != nil {
			return nil, err
		}
		return &ComplexType{Elem: e}, nil
	case tMemRef, tMemRefWithMemSpace:
		m := &MemRefType{Ranked: true}
		if code == tMemRefWithMemSpace {
			if m.MemorySpace, err = p.readAttr(d, "memref memory space"); err != nil {
				return nil, err
			}
		}
		if m.Shape, err = readShape(d); err != nil {
			return nil, err
		}
		if m.Elem, err = p.readType(d, "memref element type"); err != nil {
			return nil, err
		}
		if m.Layout, err = p.readAttr(d, "memref layout"); err != nil {
			return nil, err
		}
		return m, nil
	case tNone:
		return &NoneType{}, nil
	case tRankedTensor, tRankedTensorWithEncoding:
		t := &TensorType{}
		if code == tRankedTensorWithEncoding {
			if t.Encoding, err = p.readAttr(d, "tensor encoding"); err != nil {
				return nil, err
			}
		}
		if t.Shape, err = readShape(d); err != nil {
			return nil, err
		}
		if t.Elem, err = p.readType(d, "tensor element type"); err != nil {
			return nil, err
		}
		return t, nil
	case tTuple:
		ts, err := p.readTypes(d, "tuple element")
		if err != nil {
			return nil, err
		}
		return &TupleType{Elems: ts}, nil
	case tUnrankedMemRef, tUnrankedMemRefWithMemSpace:
		m := &MemRefType{}
		if code == tUnrankedMemRefWithMemSpace {
			if m.MemorySpace, err = p.readAttr(d, "memref memory space"); err != nil {
				return nil, err
			}
		}
		if m.Elem, err = p.readType(d, "memref element type"); err != nil {
			return nil, err
		}
		return m, nil
	case tUnrankedTensor:
		e, err := p.readType(d, "tensor element type")
		if err != nil {
			return nil, err
		}
		return &UnrankedTensorType{Elem: e}, nil
	case tVector, tVectorWithScalableDims:
		v := &VectorType{}
		if code == tVectorWithScalableDims {
			n, err := d.count("number of scalable flags", 1)
			if err != nil {
				return nil, err
			}
			v.Scalable = make([]bool, n)
			for i := range v.Scalable {
				b, err := d.byte1("scalable flag")
				if err != nil {
					return nil, err
				}
				v.Scalable[i] = b != 0
			}
		}
		if v.Shape, err = readShape(d); err != nil {
			return nil, err
		}
		if v.Elem, err = p.readType(d, "vector element type"); err != nil {
			return nil, err
		}
		return v, nil
	}
	return &OpaqueType{Dialect: "builtin", Data: d.data}, skipRest(d)
}

// readShape reads a list of dims, mapping MLIR's dynamic marker (the most
// negative int64) to Dynamic.
func readShape(d *decoder) ([]int64, error) {
	at := d.offset()
	shape, err := readSignedList(d, "dimension")
	if err != nil {
		return nil, err
	}
	for i, s := range shape {
		switch {
		case s == -1<<63:
			shape[i] = Dynamic
		case s < 0:
			return nil, errorAt(at, "expected dims of at least 0, got %d", s)
		}
	}
	return shape, nil
}

// textType parses the textual form a writer falls back to for a type
// without a bytecode encoding. Only builtin scalar spellings are
// understood (newer float kinds are written this way); anything else
// stays opaque, with its text.
func textType(dialect, text string) Type {
	if dialect == "builtin" {
		switch text {
		case "index":
			return &IndexType{}
		case "none":
			return &NoneType{}
		}
		if _, ok := floatFormats[FloatKind(text)]; ok || text == "f80" || text == "f128" {
			return &FloatType{Kind: FloatKind(text)}
		}
		for prefix, s := range map[string]Signedness{"i": Signless, "si": Signed, "ui": Unsigned} {
			if w, err := strconv.Atoi(strings.TrimPrefix(text, prefix)); err == nil && strings.HasPrefix(text, prefix) &&
				w > 0 && w <= 1<<24 && text == prefix+strconv.Itoa(w) {
				return &IntegerType{Width: w, Signedness: s}
			}
		}
	}
	return &OpaqueType{Dialect: dialect, Text: text}
}

// textAttr keeps an attribute written in textual form; none of the
// attributes this package decodes are ever written that way.
func textAttr(dialect, text string) Attr {
	return &OpaqueAttr{Dialect: dialect, Text: text}
}

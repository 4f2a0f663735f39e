package mlir

// VHLO attribute and type codes, from the vhlo_encoding enums of
// openxla/stablehlo stablehlo/dialect/VhloBytecode.cpp. VHLO promises never
// to renumber them, which is what lets a reader of today read 0.9.0 files.
const (
	vArray                = 1
	vBoolean              = 2
	vComparisonDirection  = 3
	vComparisonType       = 4
	vCustomCallAPIVersion = 5
	vDictionary           = 6
	vFftType              = 7
	vFloat                = 8
	vInteger              = 9
	vOutputOperandAlias   = 10
	vPrecision            = 11
	vRngAlgorithm         = 12
	vRngDistribution      = 13
	vString               = 14
	vTensor               = 15
	vTranspose            = 16
	vTypeAttr             = 17
	vTypeExtensions       = 18
	vResultAccuracyMode   = 19
	vResultAccuracy       = 20
	vSubAxisInfo          = 21
	vAxisRef              = 22
	vReplicaGroupMeshAxes = 23
	vMeshAxis             = 24
	vMesh                 = 25
)

// enumCases lists each VHLO enum's cases by stored value (VhloEnums.td).
var enumCases = map[uint64]struct {
	kind  EnumKind
	cases map[uint64]string
}{
	vComparisonDirection: {EnumComparisonDirection, map[uint64]string{0: "EQ", 1: "NE", 2: "GE", 3: "GT", 4: "LE", 5: "LT"}},
	vComparisonType:      {EnumComparisonType, map[uint64]string{0: "NOTYPE", 1: "FLOAT", 2: "TOTALORDER", 3: "SIGNED", 4: "UNSIGNED"}},
	vCustomCallAPIVersion: {EnumCustomCallAPIVersion, map[uint64]string{0: "API_VERSION_UNSPECIFIED", 1: "API_VERSION_ORIGINAL",
		2: "API_VERSION_STATUS_RETURNING", 3: "API_VERSION_STATUS_RETURNING_UNIFIED", 4: "API_VERSION_TYPED_FFI"}},
	vFftType:            {EnumFftType, map[uint64]string{0: "FFT", 1: "IFFT", 2: "RFFT", 3: "IRFFT"}},
	vPrecision:          {EnumPrecision, map[uint64]string{0: "DEFAULT", 1: "HIGH", 2: "HIGHEST"}},
	vRngAlgorithm:       {EnumRngAlgorithm, map[uint64]string{0: "DEFAULT", 1: "THREE_FRY", 2: "PHILOX"}},
	vRngDistribution:    {EnumRngDistribution, map[uint64]string{1: "UNIFORM", 2: "NORMAL"}},
	vTranspose:          {EnumTranspose, map[uint64]string{0: "TRANSPOSE_INVALID", 1: "NO_TRANSPOSE", 2: "TRANSPOSE", 3: "ADJOINT"}},
	vResultAccuracyMode: {EnumResultAccuracyMode, map[uint64]string{0: "DEFAULT", 1: "HIGHEST", 2: "TOLERANCE"}},
}

func (p *parser) vhloAttr(d *decoder) (Attr, error) {
	at := d.offset()
	code, err := d.varint("vhlo attribute code")
	if err != nil {
		return nil, err
	}
	if e, ok := enumCases[code]; ok {
		vat := d.offset()
		v, err := d.varint(string(e.kind) + " value")
		if err != nil {
			return nil, err
		}
		name, ok := e.cases[v]
		if !ok {
			return nil, errorAt(vat, "expected a %s case, got %d", e.kind, v)
		}
		return &EnumAttr{Kind: e.kind, Value: v, Name: name}, nil
	}
	switch code {
	case vArray:
		elems, err := p.readAttrs(d, "array element")
		if err != nil {
			return nil, err
		}
		return &ArrayAttr{Elems: elems}, nil
	case vBoolean:
		v, err := d.varint("boolean")
		if err != nil {
			return nil, err
		}
		if v > 1 {
			return nil, errorAt(at, "expected a boolean of 0 or 1, got %d", v)
		}
		return &BoolAttr{Value: v == 1}, nil
	case vDictionary:
		n, err := d.count("number of dictionary entries", 2)
		if err != nil {
			return nil, err
		}
		dict := &DictAttr{Entries: make([]NamedAttr, n)}
		for i := range dict.Entries {
			kat := d.offset()
			k, err := p.readAttr(d, "dictionary key")
			if err != nil {
				return nil, err
			}
			// VHLO keys are attributes; every writer uses strings.
			ks, ok := k.(*StringAttr)
			if !ok {
				return nil, errorAt(kat, "expected a string dictionary key, got %s", describe(k))
			}
			v, err := p.readAttr(d, "dictionary value")
			if err != nil {
				return nil, err
			}
			dict.Entries[i] = NamedAttr{Name: ks.Value, Value: v}
		}
		return dict, nil
	case vFloat:
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
	case vInteger:
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
	case vOutputOperandAlias:
		a := &OutputOperandAliasAttr{}
		if a.OutputTupleIndices, err = readSignedList(d, "output tuple index"); err != nil {
			return nil, err
		}
		if a.OperandIndex, err = d.svarint("operand index"); err != nil {
			return nil, err
		}
		if a.OperandTupleIndices, err = readSignedList(d, "operand tuple index"); err != nil {
			return nil, err
		}
		return a, nil
	case vString:
		s, err := p.readString(d, "string")
		if err != nil {
			return nil, err
		}
		return &StringAttr{Value: s}, nil
	case vTensor:
		t, err := p.readType(d, "tensor attribute type")
		if err != nil {
			return nil, err
		}
		data, dat, err := readBlob(d, "tensor data")
		if err != nil {
			return nil, err
		}
		return newDense(t, data, dat, true)
	case vTypeAttr:
		t, err := p.readType(d, "type of a type attribute")
		if err != nil {
			return nil, err
		}
		return &TypeAttr{Type: t}, nil
	case vTypeExtensions:
		bounds, err := readSignedList(d, "bound")
		if err != nil {
			return nil, err
		}
		for i, b := range bounds {
			if b == -1<<63 {
				bounds[i] = Dynamic
			}
		}
		return &TypeExtensionsAttr{Bounds: bounds}, nil
	case vResultAccuracy:
		atol, _, err := readAPInt(d, 64, "atol")
		if err != nil {
			return nil, err
		}
		rtol, _, err := readAPInt(d, 64, "rtol")
		if err != nil {
			return nil, err
		}
		ulps, err := d.svarint("ulps")
		if err != nil {
			return nil, err
		}
		mode, err := p.readAttr(d, "result accuracy mode")
		if err != nil {
			return nil, err
		}
		return &ResultAccuracyAttr{Atol: floatValue(F64, atol), Rtol: floatValue(F64, rtol), Ulps: ulps, Mode: mode}, nil
	case vSubAxisInfo:
		pre, err := d.svarint("sub-axis pre-size")
		if err != nil {
			return nil, err
		}
		size, err := d.svarint("sub-axis size")
		if err != nil {
			return nil, err
		}
		return &SubAxisInfoAttr{PreSize: pre, Size: size}, nil
	case vAxisRef:
		name, err := p.readAttr(d, "axis name")
		if err != nil {
			return nil, err
		}
		has, err := d.varint("sub-axis flag")
		if err != nil {
			return nil, err
		}
		a := &AxisRefAttr{Name: name}
		if has != 0 {
			if a.SubAxisInfo, err = p.readAttr(d, "sub-axis info"); err != nil {
				return nil, err
			}
		}
		return a, nil
	case vReplicaGroupMeshAxes:
		mesh, err := p.readAttr(d, "mesh")
		if err != nil {
			return nil, err
		}
		axes, err := p.readAttr(d, "axes")
		if err != nil {
			return nil, err
		}
		return &ReplicaGroupMeshAxesAttr{Mesh: mesh, Axes: axes}, nil
	case vMeshAxis:
		name, err := p.readAttr(d, "mesh axis name")
		if err != nil {
			return nil, err
		}
		size, err := d.svarint("mesh axis size")
		if err != nil {
			return nil, err
		}
		return &MeshAxisAttr{Name: name, Size: size}, nil
	case vMesh:
		axes, err := p.readAttr(d, "mesh axes")
		if err != nil {
			return nil, err
		}
		ids, err := p.readOptionalAttr(d, "mesh device ids")
		if err != nil {
			return nil, err
		}
		return &MeshAttr{Axes: axes, DeviceIDs: ids}, nil
	}
	// A code from a newer VHLO: keep the entry whole rather than fail; an op
	// that needs it fails in translation, naming the op.
	return &OpaqueAttr{Dialect: "vhlo", Data: d.data}, skipRest(d)
}

// vhloScalar maps the VHLO element types without payload.
var vhloScalar = map[uint64]func() Type{
	0:  func() Type { return &IntegerType{Width: 1} }, // bool_v1
	2:  func() Type { return &FloatType{Kind: BF16} },
	3:  func() Type { return &FloatType{Kind: F16} },
	4:  func() Type { return &FloatType{Kind: F32} },
	5:  func() Type { return &FloatType{Kind: F64} },
	6:  func() Type { return &FloatType{Kind: F8E4M3FN} },
	7:  func() Type { return &FloatType{Kind: F8E5M2} },
	9:  func() Type { return &IndexType{} },
	10: func() Type { return &IntegerType{Width: 4} },
	11: func() Type { return &IntegerType{Width: 8} },
	12: func() Type { return &IntegerType{Width: 16} },
	13: func() Type { return &IntegerType{Width: 32} },
	14: func() Type { return &IntegerType{Width: 64} },
	15: func() Type { return &IntegerType{Width: 4, Signedness: Unsigned} },
	16: func() Type { return &IntegerType{Width: 8, Signedness: Unsigned} },
	17: func() Type { return &IntegerType{Width: 16, Signedness: Unsigned} },
	18: func() Type { return &IntegerType{Width: 32, Signedness: Unsigned} },
	19: func() Type { return &IntegerType{Width: 64, Signedness: Unsigned} },
	22: func() Type { return &TokenType{} },
	26: func() Type { return &WitnessType{} },
	27: func() Type { return &FloatType{Kind: F8E4M3FNUZ} },
	28: func() Type { return &FloatType{Kind: F8E5M2FNUZ} },
	29: func() Type { return &FloatType{Kind: F8E4M3B11FNUZ} },
	31: func() Type { return &IntegerType{Width: 2} },
	32: func() Type { return &IntegerType{Width: 2, Signedness: Unsigned} },
	33: func() Type { return &NoneType{} },
	34: func() Type { return &FloatType{Kind: TF32} },
	35: func() Type { return &FloatType{Kind: F8E4M3} },
	36: func() Type { return &FloatType{Kind: F8E3M4} },
	37: func() Type { return &FloatType{Kind: F4E2M1FN} },
	38: func() Type { return &FloatType{Kind: F6E2M3FN} },
	39: func() Type { return &FloatType{Kind: F6E3M2FN} },
	40: func() Type { return &FloatType{Kind: F8E8M0FNU} },
}

// VHLO type codes with payload.
const (
	vtComplex                 = 1
	vtFunction                = 8
	vtRankedTensor            = 20
	vtRankedTensorWithEncoder = 21
	vtTuple                   = 23
	vtUniformQuantized        = 24
	vtUnrankedTensor          = 25
	vtUniformQuantizedPerAxis = 30
	vtRankedBuffer            = 41
	vtFuture                  = 42
)

func (p *parser) vhloType(d *decoder) (Type, error) {
	at := d.offset()
	code, err := d.varint("vhlo type code")
	if err != nil {
		return nil, err
	}
	if mk, ok := vhloScalar[code]; ok {
		return mk(), nil
	}
	switch code {
	case vtComplex:
		e, err := p.readType(d, "complex element type")
		if err != nil {
			return nil, err
		}
		return &ComplexType{Elem: e}, nil
	case vtFunction:
		in, err := p.readTypes(d, "function input")
		if err != nil {
			return nil, err
		}
		out, err := p.readTypes(d, "function result")
		if err != nil {
			return nil, err
		}
		return &FunctionType{Inputs: in, Results: out}, nil
	case vtRankedTensor, vtRankedTensorWithEncoder:
		t := &TensorType{}
		if code == vtRankedTensorWithEncoder {
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
	case vtTuple:
		ts, err := p.readTypes(d, "tuple element")
		if err != nil {
			return nil, err
		}
		return &TupleType{Elems: ts}, nil
	case vtFuture:
		ts, err := p.readTypes(d, "future element")
		if err != nil {
			return nil, err
		}
		return &FutureType{Types: ts}, nil
	case vtUnrankedTensor:
		e, err := p.readType(d, "tensor element type")
		if err != nil {
			return nil, err
		}
		return &UnrankedTensorType{Elem: e}, nil
	case vtRankedBuffer:
		shape, err := readShape(d)
		if err != nil {
			return nil, err
		}
		e, err := p.readType(d, "buffer element type")
		if err != nil {
			return nil, err
		}
		return &BufferType{Shape: shape, Elem: e}, nil
	case vtUniformQuantized, vtUniformQuantizedPerAxis:
		return p.vhloQuantized(d, code == vtUniformQuantizedPerAxis, at)
	}
	return &OpaqueType{Dialect: "vhlo", Data: d.data}, skipRest(d)
}

func (p *parser) vhloQuantized(d *decoder, perAxis bool, at int) (Type, error) {
	q := &QuantizedType{Axis: -1}
	var err error
	if q.Flags, err = d.varint("quantized flags"); err != nil {
		return nil, err
	}
	if q.Storage, err = p.readType(d, "quantized storage type"); err != nil {
		return nil, err
	}
	if q.Expressed, err = p.readType(d, "quantized expressed type"); err != nil {
		return nil, err
	}
	if !perAxis {
		scale, _, err := readAPInt(d, 64, "quantized scale")
		if err != nil {
			return nil, err
		}
		zp, err := d.svarint("quantized zero point")
		if err != nil {
			return nil, err
		}
		q.Scales, q.ZeroPoints = []float64{floatValue(F64, scale)}, []int64{zp}
		if q.StorageMin, err = d.svarint("quantized storage min"); err != nil {
			return nil, err
		}
		if q.StorageMax, err = d.svarint("quantized storage max"); err != nil {
			return nil, err
		}
		return q, nil
	}
	axis, err := d.varint("quantized dimension")
	if err != nil {
		return nil, err
	}
	if axis > 1<<31 {
		return nil, errorAt(at, "expected a quantized dimension, got %d", axis)
	}
	q.Axis = int64(axis)
	if q.StorageMin, err = d.svarint("quantized storage min"); err != nil {
		return nil, err
	}
	if q.StorageMax, err = d.svarint("quantized storage max"); err != nil {
		return nil, err
	}
	n, err := d.count("number of quantized scales", 1)
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		s, _, err := readAPInt(d, 64, "quantized scale")
		if err != nil {
			return nil, err
		}
		q.Scales = append(q.Scales, floatValue(F64, s))
	}
	if q.ZeroPoints, err = readSignedList(d, "quantized zero point"); err != nil {
		return nil, err
	}
	if len(q.ZeroPoints) != len(q.Scales) {
		return nil, errorAt(at, "expected as many zero points as scales in a per-axis quantized type, got %d and %d",
			len(q.ZeroPoints), len(q.Scales))
	}
	return q, nil
}

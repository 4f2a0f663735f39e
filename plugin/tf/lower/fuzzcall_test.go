package lower

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

// The byte format FuzzKernel reads a call in: any bytes decode to some
// call, and encodeCall writes the shape cases in it, so that the fuzzer
// starts from calls the lowerings accept. It keeps what TensorFlow
// guarantees before Build (a host input's dtype and value count, a read
// input's byte count, a constrained type attribute's registered dtype,
// every required attribute present) and leaves the rest to the fuzzer:
// shapes, input dtypes, attribute values, host values.

// fuzzDTypes are the dtypes TensorFlow can give the device, as inputs or
// type attributes; the index of one is its byte in the format.
var fuzzDTypes = []ir.DType{ir.F32, ir.F16, ir.BF16, ir.I32, ir.I64, ir.U8, ir.Bool, ir.C64, ir.F64, ir.I8, ir.I16}

const (
	fuzzMaxInputs = 8       // inputs of a call
	fuzzMaxRank   = 5       // dims of an input
	fuzzMaxElems  = 1 << 16 // elements of an input: the lowering builds, it does not compute
	fuzzMaxHost   = 64      // values of a host input (shapes, axes, paddings)
	fuzzMaxList   = 8       // entries of a list attribute
)

// fuzzCall is one call of a kernel, as Build takes it, and the bytes of
// its device inputs.
type fuzzCall struct {
	k     *Kernel
	combo int
	attrs *Attrs
	in    []ir.TensorType
	host  map[int][]int64
	raw   map[int][]byte
	data  []byte
}

// reader hands out bytes, then zeros when they run out.
type reader struct{ b []byte }

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) n(k int) int { return int(r.byte()) % k }

func (r *reader) bytes(n int) []byte {
	out := make([]byte, n)
	m := copy(out, r.b)
	r.b = r.b[m:]
	return out
}

// varint is a zigzag varint: small magnitudes of either sign in a byte,
// and any int64 in ten.
func (r *reader) varint() int64 {
	v, m := binary.Varint(r.b)
	if m <= 0 {
		r.byte()
		return 0
	}
	r.b = r.b[m:]
	return v
}

func (r *reader) length(limit int) int {
	v, m := binary.Uvarint(r.b)
	if m <= 0 {
		r.byte()
		return 0
	}
	r.b = r.b[m:]
	return int(min(v, uint64(limit)))
}

// fuzzKernel is the kernel op names: itself when registered, otherwise
// one picked by the name's hash, so that a mutated name still lowers
// something while a regression seed keeps naming its kernel as kernels
// are added.
func fuzzKernel(op string) *Kernel {
	if k, ok := Lookup(op); ok {
		return k
	}
	ks := Kernels()
	h := fnv.New32a()
	h.Write([]byte(op))
	return ks[h.Sum32()%uint32(len(ks))]
}

// decodeCall reads a call; ok is false for one TensorFlow would refuse
// before the lowering (a float host input) or one too large to build
// quickly.
func decodeCall(op string, combo uint16, sig, vals, attrBytes []byte) (c fuzzCall, ok bool) {
	c.k = fuzzKernel(op)
	combos := c.k.Combinations()
	c.combo = int(combo) % len(combos)
	c.attrs = decodeAttrs(c.k, combos[c.combo], &reader{attrBytes})
	r := &reader{sig}
	c.in = make([]ir.TensorType, r.n(fuzzMaxInputs+1))
	for i := range c.in {
		t := ir.TensorType{DType: fuzzDTypes[r.n(len(fuzzDTypes))], Shape: make(ir.Shape, r.n(fuzzMaxRank+1))}
		for j := range t.Shape {
			t.Shape[j] = int(r.byte())
		}
		if t.Shape.Size() > fuzzMaxElems {
			return c, false
		}
		c.in[i] = t
	}
	v := &reader{vals}
	c.host = map[int][]int64{}
	for i, t := range c.in {
		if !c.k.IsHostInput(c.attrs, i, len(c.in)) {
			continue
		}
		if t.DType != ir.I32 && t.DType != ir.I64 && t.DType != ir.Bool || t.Shape.Size() > fuzzMaxHost {
			return c, false // TensorFlow's glue reads only these (plugin/tf hostValues)
		}
		xs := make([]int64, t.Shape.Size())
		for j := range xs {
			switch x := v.varint(); t.DType {
			case ir.I32:
				xs[j] = int64(int32(x))
			case ir.Bool:
				xs[j] = x & 1
			default:
				xs[j] = x
			}
		}
		c.host[i] = xs
	}
	c.raw = map[int][]byte{}
	for _, i := range c.k.ReadPositions(len(c.in)) {
		if i >= 0 && i < len(c.in) {
			c.raw[i] = v.bytes(c.in[i].Bytes())
		}
	}
	c.data = v.b
	return c, true
}

func decodeAttrs(k *Kernel, combo map[string]ir.DType, r *reader) *Attrs {
	a := NewAttrs()
	for _, s := range k.Attrs {
		if present := r.byte(); s.Optional && present%4 == 0 {
			continue
		}
		switch s.Kind {
		case AttrType:
			d := fuzzDTypes[r.n(len(fuzzDTypes))]
			if cd, ok := combo[s.Name]; ok {
				d = cd // TensorFlow runs this kernel only for its registered dtypes
			}
			a.Types[s.Name] = d
		case AttrInt:
			a.Ints[s.Name] = []int64{r.varint()}
		case AttrInts:
			xs := make([]int64, r.n(fuzzMaxList+1))
			for i := range xs {
				xs[i] = r.varint()
			}
			a.Ints[s.Name] = xs
		case AttrString:
			a.Strings[s.Name] = string(r.bytes(r.length(1 << 16)))
		case AttrBool:
			a.Bools[s.Name] = r.byte()&1 != 0
		case AttrFloat:
			a.Floats[s.Name] = math.Float32frombits(binary.LittleEndian.Uint32(r.bytes(4)))
		case AttrFloats:
			xs := make([]float32, r.n(fuzzMaxList+1))
			for i := range xs {
				xs[i] = math.Float32frombits(binary.LittleEndian.Uint32(r.bytes(4)))
			}
			a.FloatLists[s.Name] = xs
		case AttrStrings:
			xs := make([]string, r.n(fuzzMaxList+1))
			for i := range xs {
				xs[i] = string(r.bytes(r.length(1 << 16)))
			}
			a.StringLists[s.Name] = xs
		}
	}
	return a
}

// encodeCall writes c in the format decodeCall reads; ok is false when
// the format cannot hold it (a dimension above 255, host values that do
// not fill their input, a type attribute outside fuzzDTypes).
func encodeCall(c fuzzCall) (op string, combo uint16, sig, vals, attrBytes []byte, ok bool) {
	index := func(d ir.DType) (byte, bool) {
		for i, x := range fuzzDTypes {
			if x == d {
				return byte(i), true
			}
		}
		return 0, false
	}
	if len(c.in) > fuzzMaxInputs {
		return
	}
	sig = append(sig, byte(len(c.in)))
	for _, t := range c.in {
		d, found := index(t.DType)
		if !found || t.Shape.Rank() > fuzzMaxRank {
			return
		}
		sig = append(sig, d, byte(t.Shape.Rank()))
		for _, n := range t.Shape {
			if n > 255 {
				return
			}
			sig = append(sig, byte(n))
		}
	}
	for i, t := range c.in {
		if !c.k.IsHostInput(c.attrs, i, len(c.in)) {
			continue
		}
		if len(c.host[i]) != t.Shape.Size() {
			return
		}
		for _, x := range c.host[i] {
			vals = binary.AppendVarint(vals, x)
		}
	}
	for _, i := range c.k.ReadPositions(len(c.in)) {
		if i >= 0 && i < len(c.in) {
			b := make([]byte, c.in[i].Bytes())
			copy(b, c.raw[i])
			vals = append(vals, b...)
		}
	}
	vals = append(vals, c.data...)
	for _, s := range c.k.Attrs {
		present := attrPresent(c.attrs, s)
		if !present {
			if !s.Optional {
				return
			}
			attrBytes = append(attrBytes, 0)
			continue
		}
		attrBytes = append(attrBytes, 1)
		switch s.Kind {
		case AttrType:
			d, found := index(c.attrs.Types[s.Name])
			if !found {
				return
			}
			attrBytes = append(attrBytes, d)
		case AttrInt:
			attrBytes = binary.AppendVarint(attrBytes, c.attrs.Ints[s.Name][0])
		case AttrInts:
			xs := c.attrs.Ints[s.Name]
			if len(xs) > fuzzMaxList {
				return
			}
			attrBytes = append(attrBytes, byte(len(xs)))
			for _, x := range xs {
				attrBytes = binary.AppendVarint(attrBytes, x)
			}
		case AttrString:
			str := c.attrs.Strings[s.Name]
			attrBytes = append(binary.AppendUvarint(attrBytes, uint64(len(str))), str...)
		case AttrBool:
			b := byte(0)
			if c.attrs.Bools[s.Name] {
				b = 1
			}
			attrBytes = append(attrBytes, b)
		case AttrFloat:
			attrBytes = binary.LittleEndian.AppendUint32(attrBytes, math.Float32bits(c.attrs.Floats[s.Name]))
		case AttrFloats:
			xs := c.attrs.FloatLists[s.Name]
			if len(xs) > fuzzMaxList {
				return
			}
			attrBytes = append(attrBytes, byte(len(xs)))
			for _, x := range xs {
				attrBytes = binary.LittleEndian.AppendUint32(attrBytes, math.Float32bits(x))
			}
		case AttrStrings:
			xs := c.attrs.StringLists[s.Name]
			if len(xs) > fuzzMaxList {
				return
			}
			attrBytes = append(attrBytes, byte(len(xs)))
			for _, str := range xs {
				attrBytes = append(binary.AppendUvarint(attrBytes, uint64(len(str))), str...)
			}
		}
	}
	return c.k.Op, uint16(c.combo), sig, vals, attrBytes, true
}

// attrPresent reports whether a holds the attribute s names, with a value
// the format can hold (an int attribute has exactly one).
func attrPresent(a *Attrs, s AttrSpec) bool {
	var ok bool
	switch s.Kind {
	case AttrType:
		_, ok = a.Types[s.Name]
	case AttrInt:
		ok = len(a.Ints[s.Name]) == 1
	case AttrInts:
		_, ok = a.Ints[s.Name]
	case AttrString:
		_, ok = a.Strings[s.Name]
	case AttrBool:
		_, ok = a.Bools[s.Name]
	case AttrFloat:
		_, ok = a.Floats[s.Name]
	case AttrFloats:
		_, ok = a.FloatLists[s.Name]
	case AttrStrings:
		_, ok = a.StringLists[s.Name]
	}
	return ok
}

// TestFuzzCallRoundTrip holds encodeCall to decodeCall's format on every
// seed FuzzKernel starts from: a seed that decoded to another call would
// start the fuzzer somewhere no test looked.
func TestFuzzCallRoundTrip(t *testing.T) {
	seeds := fuzzSeeds(t)
	if len(seeds) < len(Kernels()) {
		t.Fatalf("%d seeds for %d kernels", len(seeds), len(Kernels()))
	}
	for _, want := range seeds {
		op, combo, sig, vals, attrBytes, ok := encodeCall(want)
		if !ok {
			t.Fatalf("%s: a seed the format cannot hold", want.k.Op)
		}
		got, ok := decodeCall(op, combo, sig, vals, attrBytes)
		if !ok {
			t.Errorf("%s %v: the encoded seed does not decode", want.k.Op, want.in)
			continue
		}
		// Attributes the kernel does not read are not encoded.
		wantAttrs := decodeAttrs(want.k, want.k.Combinations()[want.combo], &reader{})
		for _, s := range want.k.Attrs {
			copyAttr(wantAttrs, want.attrs, s)
		}
		// Printed, nil and empty lists and maps are alike, as they are
		// to a lowering.
		same := func(x, y any) bool { return fmt.Sprint(x) == fmt.Sprint(y) }
		if got.k != want.k || got.combo != want.combo || !same(got.in, want.in) || !same(got.host, want.host) ||
			!same(got.raw, want.raw) || string(got.data) != string(want.data) || !same(got.attrs, wantAttrs) {
			t.Errorf("%s: encoded %+v\ndecoded %+v", want.k.Op, want, got)
		}
	}
}

// copyAttr sets s in dst as src has it, or leaves it out.
func copyAttr(dst, src *Attrs, s AttrSpec) {
	delete(dst.Types, s.Name)
	delete(dst.Ints, s.Name)
	delete(dst.Strings, s.Name)
	delete(dst.Bools, s.Name)
	delete(dst.Floats, s.Name)
	delete(dst.FloatLists, s.Name)
	delete(dst.StringLists, s.Name)
	if !attrPresent(src, s) {
		return
	}
	switch s.Kind {
	case AttrType:
		dst.Types[s.Name] = src.Types[s.Name]
	case AttrInt, AttrInts:
		dst.Ints[s.Name] = src.Ints[s.Name]
	case AttrString:
		dst.Strings[s.Name] = src.Strings[s.Name]
	case AttrBool:
		dst.Bools[s.Name] = src.Bools[s.Name]
	case AttrFloat:
		dst.Floats[s.Name] = src.Floats[s.Name]
	case AttrFloats:
		dst.FloatLists[s.Name] = src.FloatLists[s.Name]
	case AttrStrings:
		dst.StringLists[s.Name] = src.StringLists[s.Name]
	}
}

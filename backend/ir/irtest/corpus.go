// Package irtest reads the corpus of IR programs with literal answers in
// backend/ir/testdata, which the reference interpreter's tests and every
// driver's conformance suite run, so that the IR's semantics at its edges
// (NaN, infinities, signed zeros, integer extremes, empty shapes) are
// written down once, as values, rather than recomputed by each test.
//
// A corpus file is JSON: {"cases": [case, ...]}. A case is
//
//	{
//	  "name":    "add f32 signed zeros",
//	  "inputs":  [{"type": "f32[2]", "values": ["-0", 1]}, ...],
//	  "program": [{"op": "add", "args": [0, 0], "type": "f32[2]"}, ...],
//	  "results": [1],
//	  "outputs": [{"type": "f32[2]", "values": ["-0", 2]}]
//	}
//
// Values are numbered as the program's inputs first (value i is input i),
// then its instructions in order; "results" defaults to the last
// instruction. An instruction names its op as the IR prints it (add,
// compare, dot_general, ...), its operands by number, its result type, and
// the attributes its op reads, spelled as ir.Instr's fields: "axes",
// "reduce" (sum, prod, max, min, and, or), "compare" (EQ, NE, LT, LE, GT,
// GE), "param" (get_result), "values" (constant), and "dot", "conv",
// "window", "slice", "pad", "gather", "scatter" (its "kind" one of replace,
// add, mul, max, min), "sort", "rng" (its "distribution" one of uniform,
// normal, truncated_normal), "fft" (its "kind" one of fft, ifft, rfft,
// irfft, and "length") and "linalg" as the ir structs of those names in
// JSON (field names in any case). The region ops and the decompositions
// list their results' types in "tuple", and a region op its sub-programs
// in "regions": [{"params": ["f32[]", ...], "program": [...], "results":
// [...]}], whose values are numbered from their own parameters.
//
// Types are written "f32[2,3]" (a scalar "f32[]"), with the dtypes f32,
// f16, bf16, f64, i8, i16, i32, i64, u8, u32, bool and c64. Values are
// listed flat, row-major: floats as JSON numbers or the strings "nan",
// "inf", "-inf" and "-0" (any decimal string is read too, rounded to the
// dtype); integers as JSON numbers or decimal strings, exactly (a value
// outside the dtype's range is an error, not wrapped); bools as true and
// false; complex64 elements as [real, imaginary] pairs of floats.
package irtest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/metalplug/metalplug/backend/ir"
)

// Case is one program of the corpus with its inputs and its expected
// outputs, each as the little-endian bytes a driver reads and writes.
type Case struct {
	File    string // the corpus file's base name
	Name    string
	Program *ir.Program
	Inputs  [][]byte
	Outputs [][]byte
	// ULPs is how many units in the last place a float output may be off
	// the literal (transcendentals, whose last bit IEEE leaves open); NaN,
	// infinities and signs must still match exactly.
	ULPs int
}

// String names the case for messages: its file and name.
func (c Case) String() string { return c.File + ": " + c.Name }

// Dir is the corpus directory, backend/ir/testdata, found from this
// package's source so that tests of any package can read it.
func Dir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return filepath.Join("backend", "ir", "testdata")
	}
	return filepath.Join(filepath.Dir(file), "..", "testdata")
}

// Load reads every corpus file (*.json) in dir, in name order.
func Load(dir string) ([]Case, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("irtest: no corpus files in %s", dir)
	}
	var all []Case
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		cs, err := Parse(filepath.Base(f), data)
		if err != nil {
			return nil, err
		}
		all = append(all, cs...)
	}
	return all, nil
}

type fileJSON struct {
	Cases []caseJSON `json:"cases"`
}

type caseJSON struct {
	Name    string      `json:"name"`
	Inputs  []valueJSON `json:"inputs"`
	Program []instrJSON `json:"program"`
	Results []int       `json:"results"`
	Outputs []valueJSON `json:"outputs"`
	ULPs    int         `json:"ulps"`
}

type valueJSON struct {
	Type   string            `json:"type"`
	Values []json.RawMessage `json:"values"`
}

type instrJSON struct {
	Op      string            `json:"op"`
	Args    []int             `json:"args"`
	Type    string            `json:"type"`
	Values  []json.RawMessage `json:"values"`
	Axes    []int             `json:"axes"`
	Reduce  string            `json:"reduce"`
	Compare string            `json:"compare"`
	Param   *int              `json:"param"`
	Dot     *ir.DotDims       `json:"dot"`
	Conv    *ir.ConvAttrs     `json:"conv"`
	Window  *ir.WindowAttrs   `json:"window"`
	Slice   *ir.SliceAttrs    `json:"slice"`
	Pad     *ir.PadAttrs      `json:"pad"`
	Gather  *ir.GatherDims    `json:"gather"`
	Scatter *scatterJSON      `json:"scatter"`
	Sort    *ir.SortAttrs     `json:"sort"`
	Rng     *rngJSON          `json:"rng"`
	Linalg  *ir.LinalgAttrs   `json:"linalg"`
	FFT     *fftJSON          `json:"fft"`
	Tuple   []string          `json:"tuple"`
	Regions []regionJSON      `json:"regions"`
}

// regionJSON is a sub-program: its parameters' types, its instructions
// (values numbered from its parameters, as a case's are from its inputs)
// and its results (by default the last instruction).
type regionJSON struct {
	Params  []string    `json:"params"`
	Program []instrJSON `json:"program"`
	Results []int       `json:"results"`
}

// fftJSON is ir.FFTAttrs with its kind by name (fft, ifft, rfft, irfft).
type fftJSON struct {
	Kind   string `json:"kind"`
	Length []int  `json:"length"`
}

// scatterJSON is ir.ScatterDims with its kind by name; the outer Kind
// hides the embedded one.
type scatterJSON struct {
	ir.ScatterDims
	Kind string `json:"kind"`
}

type rngJSON struct {
	Distribution string `json:"distribution"`
}

// Parse reads one corpus file's contents; file names it in errors. Every
// case's program is verified (ir.Verify) and its values checked against
// their types.
func Parse(file string, data []byte) ([]Case, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f fileJSON
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("irtest: %s: %w", file, err)
	}
	if len(f.Cases) == 0 {
		return nil, fmt.Errorf("irtest: %s: no cases", file)
	}
	seen := map[string]bool{}
	cases := make([]Case, 0, len(f.Cases))
	for i, cj := range f.Cases {
		name := cj.Name
		if name == "" {
			name = fmt.Sprintf("case %d", i)
		}
		c, err := cj.build(file)
		if err == nil && seen[cj.Name] {
			err = fmt.Errorf("a second case of this name")
		}
		if err != nil {
			return nil, fmt.Errorf("irtest: %s: %q: %w", file, name, err)
		}
		seen[cj.Name] = true
		cases = append(cases, c)
	}
	return cases, nil
}

func (cj caseJSON) build(file string) (Case, error) {
	c := Case{File: file, Name: cj.Name, ULPs: cj.ULPs}
	if cj.ULPs < 0 {
		return c, fmt.Errorf("negative ulps")
	}
	if cj.Name == "" {
		return c, fmt.Errorf("no name")
	}
	if len(cj.Program) == 0 {
		return c, fmt.Errorf("no program")
	}
	var params []ir.TensorType
	for i, v := range cj.Inputs {
		t, data, err := v.parse()
		if err != nil {
			return c, fmt.Errorf("input %d: %w", i, err)
		}
		params = append(params, t)
		c.Inputs = append(c.Inputs, data)
	}
	p, err := program(params, cj.Program, cj.Results)
	if err != nil {
		return c, err
	}
	if err := ir.Verify(p); err != nil {
		return c, err
	}
	rts := p.ResultTypes()
	if len(cj.Outputs) != len(rts) {
		return c, fmt.Errorf("%d outputs for %d results", len(cj.Outputs), len(rts))
	}
	for i, v := range cj.Outputs {
		t, data, err := v.parse()
		if err != nil {
			return c, fmt.Errorf("output %d: %w", i, err)
		}
		if t.String() != rts[i].String() {
			return c, fmt.Errorf("output %d is %v, but the program's result is %v", i, t, rts[i])
		}
		c.Outputs = append(c.Outputs, data)
	}
	c.Program = p
	return c, nil
}

// program assembles a program of the given parameters (values 0 to
// len(params)-1) and instructions; results nil means the last instruction.
func program(params []ir.TensorType, instrs []instrJSON, results []int) (*ir.Program, error) {
	p := &ir.Program{Params: params}
	for i, t := range params {
		p.Instrs = append(p.Instrs, ir.Instr{Op: ir.OpParameter, Param: i, Type: t})
	}
	for i, ij := range instrs {
		in, err := ij.instr()
		if err != nil {
			return nil, fmt.Errorf("instruction %d (value %d, %s): %w", i, len(params)+i, ij.Op, err)
		}
		p.Instrs = append(p.Instrs, in)
	}
	if results == nil {
		p.Results = []ir.Value{ir.Value(len(p.Instrs) - 1)}
	}
	for _, r := range results {
		p.Results = append(p.Results, ir.Value(r))
	}
	return p, nil
}

func (v valueJSON) parse() (ir.TensorType, []byte, error) {
	t, err := ParseType(v.Type)
	if err != nil {
		return t, nil, err
	}
	data, err := Encode(t, v.Values)
	return t, data, err
}

func (ij instrJSON) instr() (ir.Instr, error) {
	op, ok := opByName[ij.Op]
	if !ok || op == ir.OpParameter {
		return ir.Instr{}, fmt.Errorf("no op %q (inputs are the parameters)", ij.Op)
	}
	in := ir.Instr{Op: op, Axes: ij.Axes, Dot: ij.Dot, Conv: ij.Conv, Window: ij.Window, Slice: ij.Slice,
		Pad: ij.Pad, Gather: ij.Gather, Sort: ij.Sort, Linalg: ij.Linalg}
	for _, a := range ij.Args {
		in.Args = append(in.Args, ir.Value(a))
	}
	if ij.Type != "" {
		t, err := ParseType(ij.Type)
		if err != nil {
			return in, err
		}
		in.Type = t
	}
	for _, s := range ij.Tuple {
		t, err := ParseType(s)
		if err != nil {
			return in, err
		}
		in.Tuple = append(in.Tuple, t)
	}
	if ij.Type == "" && ij.Tuple == nil {
		return in, fmt.Errorf("no result type")
	}
	if ij.Param != nil {
		in.Param = *ij.Param
	}
	if ij.Values != nil {
		if op != ir.OpConstant {
			return in, fmt.Errorf("values on an op that is not a constant")
		}
		lit, err := Encode(in.Type, ij.Values)
		if err != nil {
			return in, err
		}
		in.Literal = lit
	} else if op == ir.OpConstant {
		return in, fmt.Errorf("a constant without values")
	}
	var err error
	if ij.Reduce != "" {
		in.Reduce, err = byName(ij.Reduce, []ir.ReduceKind{ir.ReduceSum, ir.ReduceProd, ir.ReduceMax, ir.ReduceMin, ir.ReduceAnd, ir.ReduceOr})
	}
	if ij.Compare != "" && err == nil {
		in.Compare, err = byName(ij.Compare, []ir.CompareDir{ir.CmpEQ, ir.CmpNE, ir.CmpLT, ir.CmpLE, ir.CmpGT, ir.CmpGE})
	}
	if ij.Scatter != nil && err == nil {
		s := ij.Scatter.ScatterDims
		s.Kind, err = byName(ij.Scatter.Kind, []ir.ScatterKind{ir.ScatterReplace, ir.ScatterAdd, ir.ScatterMul, ir.ScatterMax, ir.ScatterMin})
		in.Scatter = &s
	}
	if ij.FFT != nil && err == nil {
		var k ir.FFTKind
		k, err = byName(ij.FFT.Kind, []ir.FFTKind{ir.FFTForward, ir.FFTInverse, ir.FFTReal, ir.FFTInverseReal})
		in.FFT = &ir.FFTAttrs{Kind: k, Length: ij.FFT.Length}
	}
	for i, r := range ij.Regions {
		if err != nil {
			break
		}
		params := make([]ir.TensorType, len(r.Params))
		for j, s := range r.Params {
			if params[j], err = ParseType(s); err != nil {
				break
			}
		}
		var q *ir.Program
		if err == nil {
			q, err = program(params, r.Program, r.Results)
		}
		if err != nil {
			err = fmt.Errorf("region %d: %w", i, err)
			break
		}
		in.Regions = append(in.Regions, q)
	}
	if ij.Rng != nil && err == nil {
		var d ir.RngDistribution
		d, err = byName(ij.Rng.Distribution, []ir.RngDistribution{ir.RngUniform, ir.RngNormal, ir.RngTruncatedNormal})
		in.Rng = &ir.RngAttrs{Distribution: d}
	}
	return in, err
}

// byName is the one of kinds that prints as name.
func byName[K fmt.Stringer](name string, kinds []K) (K, error) {
	for _, k := range kinds {
		if k.String() == name {
			return k, nil
		}
	}
	var zero K
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.String()
	}
	return zero, fmt.Errorf("%q is none of %s", name, strings.Join(names, ", "))
}

var opByName = func() map[string]ir.Op {
	m := map[string]ir.Op{}
	for _, o := range ir.Ops() {
		m[o.String()] = o
	}
	return m
}()

// dtypeNames are the corpus's short dtype names.
var dtypeNames = map[string]ir.DType{
	"f32": ir.F32, "f16": ir.F16, "bf16": ir.BF16, "f64": ir.F64,
	"i8": ir.I8, "i16": ir.I16, "i32": ir.I32, "i64": ir.I64, "u8": ir.U8, "u32": ir.U32,
	"bool": ir.Bool, "c64": ir.C64,
}

// ParseType reads a type written "f32[2,3]" ("f32[]" a scalar).
func ParseType(s string) (ir.TensorType, error) {
	name, dims, ok := strings.Cut(s, "[")
	d, known := dtypeNames[name]
	if !ok || !known || !strings.HasSuffix(dims, "]") {
		return ir.TensorType{}, fmt.Errorf("type %q is not a dtype (f32, i64, bool, ...) and [dims]", s)
	}
	shape := ir.Shape{}
	if dims = strings.TrimSuffix(dims, "]"); dims != "" {
		for _, f := range strings.Split(dims, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 0 {
				return ir.TensorType{}, fmt.Errorf("type %q: bad dimension %q", s, f)
			}
			shape = append(shape, n)
		}
	}
	return ir.TensorType{DType: d, Shape: shape}, nil
}

// Encode writes the corpus values vs, one per element of t, as t's
// little-endian bytes.
func Encode(t ir.TensorType, vs []json.RawMessage) ([]byte, error) {
	if n := t.Shape.Size(); len(vs) != n {
		return nil, fmt.Errorf("%d values for %v, which has %d elements", len(vs), t, n)
	}
	out := make([]byte, 0, t.Bytes())
	for i, raw := range vs {
		b, err := encodeElem(t.DType, raw)
		if err != nil {
			return nil, fmt.Errorf("value %d (%s) of %v: %w", i, raw, t, err)
		}
		out = append(out, b...)
	}
	return out, nil
}

func encodeElem(d ir.DType, raw json.RawMessage) ([]byte, error) {
	le := binary.LittleEndian
	switch {
	case d == ir.Bool:
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, fmt.Errorf("not true or false")
		}
		if b {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	case d == ir.C64:
		var parts []json.RawMessage
		if err := json.Unmarshal(raw, &parts); err != nil || len(parts) != 2 {
			return nil, fmt.Errorf("not a [real, imaginary] pair")
		}
		re, err := encodeElem(ir.F32, parts[0])
		if err != nil {
			return nil, err
		}
		im, err := encodeElem(ir.F32, parts[1])
		return append(re, im...), err
	}
	text, err := scalarText(raw)
	if err != nil {
		return nil, err
	}
	if d.IsFloat() {
		bits := 64
		if d == ir.F32 {
			bits = 32 // rounded from the decimal once, not through float64
		}
		f, err := strconv.ParseFloat(text, bits)
		if err != nil {
			return nil, fmt.Errorf("not a number, nan, inf, -inf or -0")
		}
		switch d {
		case ir.F32:
			return le.AppendUint32(nil, math.Float32bits(float32(f))), nil
		case ir.F64:
			return le.AppendUint64(nil, math.Float64bits(f)), nil
		case ir.F16:
			return le.AppendUint16(nil, ir.F32ToF16(float32(f))), nil
		default:
			return le.AppendUint16(nil, ir.F32ToBF16(float32(f))), nil
		}
	}
	var v int64
	if d.IsUnsigned() {
		u, err := strconv.ParseUint(text, 10, 64)
		if err != nil || u > math.MaxUint32 {
			return nil, fmt.Errorf("not a %v", d)
		}
		v = int64(u)
	} else {
		v, err = strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("not an integer of 64 bits")
		}
	}
	if lo, hi, _ := d.IntRange(); v < lo || v > hi {
		return nil, fmt.Errorf("outside %v's range [%d, %d]", d, lo, hi)
	}
	b := le.AppendUint64(nil, uint64(v))
	return b[:d.Size()], nil
}

// scalarText is a JSON number's text or a string's contents.
func scalarText(raw json.RawMessage) (string, error) {
	s := string(bytes.TrimSpace(raw))
	switch {
	case strings.HasPrefix(s, `"`):
		var t string
		err := json.Unmarshal(raw, &t)
		return t, err
	case s == "" || s == "true" || s == "false" || s == "null" || strings.ContainsAny(s[:1], "[{"):
		return "", fmt.Errorf("not a number")
	}
	return s, nil
}

// Diff compares got with want, both t's bytes, bit for bit, except that
// a NaN matches any NaN (a NaN's sign and payload are left to the
// implementation) and a finite float may be ulps units in the last place
// off a finite want of its sign; each part of a complex64 is compared on
// its own. It returns one line per element that differs.
func Diff(t ir.TensorType, got, want []byte, ulps int) []string {
	if len(got) != len(want) || len(want) != t.Bytes() {
		return []string{fmt.Sprintf("%d bytes, want %d (%v)", len(got), len(want), t)}
	}
	d, size := t.DType, t.DType.Size()
	if d == ir.C64 {
		d, size = ir.F32, 4
	}
	var diffs []string
	for k := 0; k*size < len(want); k++ {
		g, w := got[k*size:(k+1)*size], want[k*size:(k+1)*size]
		if bytes.Equal(g, w) || (isNaN(d, g) && isNaN(d, w)) || withinULPs(d, g, w, ulps) {
			continue
		}
		at := fmt.Sprint(k)
		if t.DType == ir.C64 {
			at = fmt.Sprintf("%d (%s part)", k/2, []string{"real", "imaginary"}[k%2])
		}
		diffs = append(diffs, fmt.Sprintf("element %s is %s, want %s", at, Format(d, g), Format(d, w)))
	}
	return diffs
}

func isNaN(d ir.DType, b []byte) bool {
	le := binary.LittleEndian
	switch d {
	case ir.F32:
		return math.IsNaN(float64(math.Float32frombits(le.Uint32(b))))
	case ir.F64:
		return math.IsNaN(math.Float64frombits(le.Uint64(b)))
	case ir.F16:
		return le.Uint16(b)&0x7c00 == 0x7c00 && le.Uint16(b)&0x3ff != 0
	case ir.BF16:
		return le.Uint16(b)&0x7f80 == 0x7f80 && le.Uint16(b)&0x7f != 0
	}
	return false
}

// Format prints one element's bytes as its dtype's value, with its bits
// for floats (which tell -0 from 0 and one NaN from another).
func Format(d ir.DType, b []byte) string {
	le := binary.LittleEndian
	switch d {
	case ir.F32:
		return fmt.Sprintf("%v (%#08x)", math.Float32frombits(le.Uint32(b)), le.Uint32(b))
	case ir.F64:
		return fmt.Sprintf("%v (%#016x)", math.Float64frombits(le.Uint64(b)), le.Uint64(b))
	case ir.F16:
		return fmt.Sprintf("%v (%#04x)", ir.F16ToF32(le.Uint16(b)), le.Uint16(b))
	case ir.BF16:
		return fmt.Sprintf("%v (%#04x)", ir.BF16ToF32(le.Uint16(b)), le.Uint16(b))
	case ir.I8:
		return fmt.Sprint(int8(b[0]))
	case ir.U8:
		return fmt.Sprint(b[0])
	case ir.I16:
		return fmt.Sprint(int16(le.Uint16(b)))
	case ir.I32:
		return fmt.Sprint(int32(le.Uint32(b)))
	case ir.I64:
		return fmt.Sprint(int64(le.Uint64(b)))
	case ir.U32:
		return fmt.Sprint(le.Uint32(b))
	case ir.Bool:
		return fmt.Sprint(b[0] != 0)
	}
	return fmt.Sprint(slices.Clone(b))
}

// withinULPs reports whether the floats g and w, both finite and of one
// sign, are at most ulps apart: their bit patterns, read as integers,
// count the representable values between them.
func withinULPs(d ir.DType, g, w []byte, ulps int) bool {
	if ulps == 0 || !d.IsFloat() {
		return false
	}
	var gb, wb, exp, sign uint64
	le := binary.LittleEndian
	switch d {
	case ir.F32:
		gb, wb, exp, sign = uint64(le.Uint32(g)), uint64(le.Uint32(w)), 0x7f800000, 1<<31
	case ir.F64:
		gb, wb, exp, sign = le.Uint64(g), le.Uint64(w), 0x7ff0000000000000, 1<<63
	case ir.F16:
		gb, wb, exp, sign = uint64(le.Uint16(g)), uint64(le.Uint16(w)), 0x7c00, 1<<15
	default:
		gb, wb, exp, sign = uint64(le.Uint16(g)), uint64(le.Uint16(w)), 0x7f80, 1<<15
	}
	if gb&exp == exp || wb&exp == exp || gb&sign != wb&sign {
		return false // NaN, infinity, or signs that differ
	}
	diff := int64(gb) - int64(wb)
	return diff <= int64(ulps) && -diff <= int64(ulps)
}

package irtest

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

func TestParse(t *testing.T) {
	src := `{"cases": [{
		"name": "mixed",
		"inputs": [
			{"type": "f32[5]", "values": [1.5, "nan", "inf", "-inf", "-0"]},
			{"type": "i64[2]", "values": ["-9223372036854775808", 9223372036854775807]}
		],
		"program": [
			{"op": "constant", "type": "bool[2]", "values": [true, false]},
			{"op": "reduce", "args": [0], "type": "f32[]", "reduce": "max", "axes": [0]},
			{"op": "compare", "args": [1, 1], "type": "bool[2]", "compare": "LT"},
			{"op": "scatter", "args": [0, 6, 7], "type": "f32[5]",
			 "scatter": {"updateWindowDims": [], "insertedWindowDims": [0], "scatterDimsToOperandDims": [0], "indexVectorDim": 1, "kind": "add"}},
			{"op": "constant", "type": "i32[1,1]", "values": [2]},
			{"op": "constant", "type": "f32[1]", "values": [0.25]}
		],
		"results": [2, 3, 4],
		"outputs": [
			{"type": "bool[2]", "values": [true, false]},
			{"type": "f32[]", "values": ["nan"]},
			{"type": "bool[2]", "values": [false, false]}
		]
	}]}`
	// Value 5, the scatter, takes the constants after it.
	if _, err := Parse("x.json", []byte(src)); err == nil || !strings.Contains(err.Error(), "not an earlier instruction") {
		t.Fatalf("operands after their user: err = %v", err)
	}

	src = `{"cases": [{
		"name": "mixed",
		"inputs": [
			{"type": "f32[5]", "values": [1.5, "nan", "inf", "-inf", "-0"]},
			{"type": "i64[2]", "values": ["-9223372036854775808", 9223372036854775807]},
			{"type": "c64[]", "values": [["-0", "inf"]]}
		],
		"program": [
			{"op": "constant", "type": "i32[1,1]", "values": [2]},
			{"op": "constant", "type": "f32[1]", "values": [0.25]},
			{"op": "scatter", "args": [0, 3, 4], "type": "f32[5]",
			 "scatter": {"updateWindowDims": [], "insertedWindowDims": [0], "scatterDimsToOperandDims": [0], "indexVectorDim": 1, "kind": "add"}},
			{"op": "reduce", "args": [0], "type": "f32[]", "reduce": "max", "axes": [0]},
			{"op": "compare", "args": [1, 1], "type": "bool[2]", "compare": "LT"}
		],
		"results": [5, 6, 7, 2],
		"outputs": [
			{"type": "f32[5]", "values": [1.5, "nan", "inf", "-inf", "-0"]},
			{"type": "f32[]", "values": ["nan"]},
			{"type": "bool[2]", "values": [false, false]},
			{"type": "c64[]", "values": [["-0", "inf"]]}
		]
	}, {
		"name": "last instruction by default",
		"inputs": [{"type": "u8[0,3]", "values": []}],
		"program": [{"op": "not", "args": [0], "type": "u8[0,3]"}],
		"outputs": [{"type": "u8[0,3]", "values": []}]
	}]}`
	cs, err := Parse("x.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].String() != "x.json: mixed" {
		t.Fatalf("cases %v", cs)
	}
	c := cs[0]
	le := binary.LittleEndian
	in0 := c.Inputs[0]
	if math.Float32frombits(le.Uint32(in0[0:])) != 1.5 || !math.IsNaN(float64(math.Float32frombits(le.Uint32(in0[4:])))) ||
		!math.IsInf(float64(math.Float32frombits(le.Uint32(in0[8:]))), 1) || !math.IsInf(float64(math.Float32frombits(le.Uint32(in0[12:]))), -1) ||
		le.Uint32(in0[16:]) != 0x80000000 {
		t.Errorf("float input % x", in0)
	}
	if int64(le.Uint64(c.Inputs[1])) != math.MinInt64 || int64(le.Uint64(c.Inputs[1][8:])) != math.MaxInt64 {
		t.Errorf("int64 input % x", c.Inputs[1])
	}
	if le.Uint32(c.Inputs[2]) != 0x80000000 || le.Uint32(c.Inputs[2][4:]) != 0x7f800000 {
		t.Errorf("complex64 input % x", c.Inputs[2])
	}
	sc := c.Program.Instrs[5]
	if sc.Op != ir.OpScatter || sc.Scatter.Kind != ir.ScatterAdd || sc.Scatter.IndexVectorDim != 1 || len(sc.Scatter.InsertedWindowDims) != 1 {
		t.Errorf("scatter instruction %+v", sc)
	}
	if r := c.Program.Instrs[6]; r.Reduce != ir.ReduceMax || r.Axes[0] != 0 {
		t.Errorf("reduce instruction %+v", r)
	}
	if c.Program.Instrs[7].Compare != ir.CmpLT || c.Program.Results[3] != 2 {
		t.Errorf("program %s", c.Program)
	}
	if !bytes.Equal(c.Outputs[3], c.Inputs[2]) || len(cs[1].Outputs[0]) != 0 || cs[1].Program.Results[0] != 1 {
		t.Errorf("outputs %v, %v", c.Outputs, cs[1].Program.Results)
	}
}

// TestParseErrors: a malformed case is named, with its file, in the error.
func TestParseErrors(t *testing.T) {
	wrap := func(inputs, program, outputs string) string {
		return `{"cases": [{"name": "fine", "inputs": [{"type": "i8[]", "values": [1]}],
			"program": [{"op": "negate", "args": [0], "type": "i8[]"}], "outputs": [{"type": "i8[]", "values": [-1]}]},
			{"name": "broken", "inputs": [` + inputs + `], "program": [` + program + `], "outputs": [` + outputs + `]}]}`
	}
	okIn, okProg, okOut := `{"type": "i8[2]", "values": [1, 2]}`, `{"op": "negate", "args": [0], "type": "i8[2]"}`, `{"type": "i8[2]", "values": [-1, -2]}`
	if _, err := Parse("neg.json", []byte(wrap(okIn, okProg, okOut))); err != nil {
		t.Fatalf("the well-formed file: %v", err)
	}
	for _, c := range []struct{ name, in, prog, out, want string }{
		{"value out of range", `{"type": "i8[2]", "values": [1, 128]}`, okProg, okOut, "outside int8's range"},
		{"too few values", `{"type": "i8[2]", "values": [1]}`, okProg, okOut, "1 values for int8[2]"},
		{"float for an integer", okIn, okProg, `{"type": "i8[2]", "values": [-1, 1.5]}`, "not an integer"},
		{"unknown dtype", `{"type": "q8[2]", "values": [1, 2]}`, okProg, okOut, `type "q8[2]"`},
		{"unknown op", okIn, `{"op": "negative", "args": [0], "type": "i8[2]"}`, okOut, `no op "negative"`},
		{"wrong result type", okIn, `{"op": "negate", "args": [0], "type": "i8[3]"}`, okOut, "declares result int8[3]"},
		{"output type", okIn, okProg, `{"type": "i16[2]", "values": [-1, -2]}`, "output 0 is int16[2]"},
		{"unknown field", okIn, `{"op": "negate", "args": [0], "type": "i8[2]", "axis": 0}`, okOut, `unknown field "axis"`},
		{"bad kind", okIn, `{"op": "reduce", "args": [0], "type": "i8[]", "reduce": "mean", "axes": [0]}`, `{"type": "i8[]", "values": [3]}`, `"mean" is none of`},
	} {
		_, err := Parse("neg.json", []byte(wrap(c.in, c.prog, c.out)))
		if err == nil {
			t.Errorf("%s: parsed", c.name)
			continue
		}
		// Unknown fields fail the whole file's decoding, before any case.
		where := `neg.json: "broken": `
		if c.name == "unknown field" {
			where = "neg.json: "
		}
		if !strings.Contains(err.Error(), where) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want it to name %q and say %q", c.name, err, where, c.want)
		}
	}
}

func TestDiff(t *testing.T) {
	f32 := func(xs ...uint32) []byte {
		var b []byte
		for _, x := range xs {
			b = binary.LittleEndian.AppendUint32(b, x)
		}
		return b
	}
	ty := ir.TensorType{DType: ir.F32, Shape: ir.Shape{4}}
	// Any NaN matches any NaN; -0 is not 0; a NaN is not infinity.
	if d := Diff(ty, f32(0x7fc00000, 0, 1, 0xffc00001), f32(0x7f800001, 0, 1, 0x7fc00000), 0); len(d) != 0 {
		t.Errorf("NaNs: %v", d)
	}
	if d := Diff(ty, f32(0x80000000, 0, 0x7fc00000, 0), f32(0, 0, 0x7f800000, 0), 0); len(d) != 2 || !strings.Contains(d[0], "element 0") || !strings.Contains(d[1], "element 2") {
		t.Errorf("signed zero and NaN for infinity: %v", d)
	}
	c := ir.TensorType{DType: ir.C64, Shape: ir.Shape{1}}
	if d := Diff(c, f32(0, 0x7fc00000), f32(0, 0x7f800000), 0); len(d) != 1 || !strings.Contains(d[0], "imaginary") {
		t.Errorf("complex64: %v", d)
	}
	h := ir.TensorType{DType: ir.F16, Shape: ir.Shape{2}}
	if d := Diff(h, []byte{0x01, 0x7e, 0, 0x80}, []byte{0x00, 0x7e, 0, 0}, 0); len(d) != 1 {
		t.Errorf("float16: %v", d)
	}
	if d := Diff(ty, f32(0), f32(0, 0, 0, 0), 0); len(d) != 1 {
		t.Errorf("short result: %v", d)
	}
	// Within one ulp: the neighbours of 1 and of the largest finite float;
	// not infinity for the largest float, not -0 for 0, not two ulps.
	if d := Diff(ty, f32(0x3f800001, 0x3f7fffff, 0x7f7ffffe, 0x80000001), f32(0x3f800000, 0x3f800000, 0x7f7fffff, 0x80000000), 1); len(d) != 0 {
		t.Errorf("one ulp: %v", d)
	}
	if d := Diff(ty, f32(0x7f800000, 0x80000000, 0x3f800002, 0xbf800000), f32(0x7f7fffff, 0, 0x3f800000, 0x3f800000), 1); len(d) != 4 {
		t.Errorf("beyond one ulp: %v", d)
	}
}

func TestCorpusLoads(t *testing.T) {
	cs, err := Load(Dir())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]int{}
	for _, c := range cs {
		files[c.File]++
	}
	if len(files) == 0 {
		t.Fatal("no corpus files")
	}
}

// notInCorpus are the ops the corpus cannot hold, with why.
var notInCorpus = map[ir.Op]string{
	ir.OpHostCall: "it runs a function the host process registers; drivertest's host-call tests register one",
}

// TestCorpusCoversEveryOp: every op has at least one case of literal
// values, in a region or not, and every dtype is computed by one.
func TestCorpusCoversEveryOp(t *testing.T) {
	cases, err := Load(Dir())
	if err != nil {
		t.Fatal(err)
	}
	used := map[ir.Op]bool{}
	dtypes := map[ir.DType]bool{}
	var walk func(p *ir.Program)
	walk = func(p *ir.Program) {
		for _, in := range p.Instrs {
			used[in.Op] = true
			dtypes[in.Type.DType] = true
			for _, r := range in.Regions {
				walk(r)
			}
		}
	}
	for _, c := range cases {
		walk(c.Program)
	}
	for _, op := range ir.Ops() {
		why, excused := notInCorpus[op]
		switch {
		case used[op] && excused:
			t.Errorf("%v is in the corpus: take it off notInCorpus (%s)", op, why)
		case !used[op] && !excused:
			t.Errorf("no corpus case uses %v: write one in backend/ir/testdata", op)
		}
	}
	for d := ir.Invalid + 1; d.Valid(); d++ {
		if !dtypes[d] {
			t.Errorf("no corpus case computes a %v: write one in backend/ir/testdata", d)
		}
	}
}

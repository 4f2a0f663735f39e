package lower

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

func tt(d ir.DType, shape ...int) ir.TensorType { return ir.TensorType{DType: d, Shape: shape} }
func f32(shape ...int) ir.TensorType            { return tt(ir.F32, shape...) }
func i32(shape ...int) ir.TensorType            { return tt(ir.I32, shape...) }
func i64(shape ...int) ir.TensorType            { return tt(ir.I64, shape...) }
func boolT(shape ...int) ir.TensorType          { return tt(ir.Bool, shape...) }

// attrs builds an attribute set fluently.
type attrs struct{ *Attrs }

func A() attrs { return attrs{NewAttrs()} }

func (a attrs) S(name, v string) attrs { a.Strings[name] = v; return a }
func (a attrs) B(name string, v bool) attrs {
	a.Bools[name] = v
	return a
}
func (a attrs) Is(name string, v ...int64) attrs { a.Ints[name] = v; return a }
func (a attrs) I(name string, v int64) attrs     { a.Ints[name] = []int64{v}; return a }
func (a attrs) T(name string, d ir.DType) attrs  { a.Types[name] = d; return a }
func (a attrs) F(name string, v float32) attrs   { a.Floats[name] = v; return a }
func (a attrs) Ss(name string, v ...string) attrs {
	a.StringLists[name] = v
	return a
}

func build(t *testing.T, op string, a *Attrs, in []ir.TensorType, host map[int][]int64) (*ir.Program, error) {
	t.Helper()
	l, err := buildRaw(t, op, a, in, host, nil)
	if err != nil {
		return nil, err
	}
	return l.Program, nil
}

func buildRaw(t *testing.T, op string, a *Attrs, in []ir.TensorType, host map[int][]int64, raw map[int][]byte) (*Lowered, error) {
	t.Helper()
	k, ok := Lookup(op)
	if !ok {
		t.Fatalf("%s is not registered", op)
	}
	if a == nil {
		a = NewAttrs()
	}
	return k.Build(a, in, host, raw)
}

func TestBroadcastShapes(t *testing.T) {
	if s, ok := ir.BroadcastShapes(ir.Shape{4, 1, 3}, ir.Shape{5, 1}); !ok || !s.Equal(ir.Shape{4, 5, 3}) {
		t.Errorf("got %v %v", s, ok)
	}
	if _, ok := ir.BroadcastShapes(ir.Shape{2, 3}, ir.Shape{4}); ok {
		t.Error("[2,3] and [4] broadcast")
	}
}

func TestSamePaddingMatchesTensorFlow(t *testing.T) {
	// in, window, stride, dilation -> low, high, from TensorFlow's GetWindowedOutputSize.
	for _, c := range []struct{ in, w, s, d, lo, hi int }{
		{9, 3, 1, 1, 1, 1}, {9, 3, 2, 1, 1, 1}, {10, 3, 2, 1, 0, 1}, {10, 4, 2, 1, 1, 1}, {9, 3, 1, 2, 2, 2}, {5, 1, 1, 1, 0, 0},
	} {
		if p := samePadding(c.in, c.w, c.s, c.d); p != [2]int{c.lo, c.hi} {
			t.Errorf("samePadding(%d,%d,%d,%d) = %v, want [%d %d]", c.in, c.w, c.s, c.d, p, c.lo, c.hi)
		}
	}
}

func TestEveryKernelRegistersSomeDType(t *testing.T) {
	if len(Kernels()) < 150 {
		t.Fatalf("%d kernels registered, want the GPU op set", len(Kernels()))
	}
	for _, k := range Kernels() {
		if len(k.Combinations()) == 0 || k.File == "" {
			t.Errorf("%s: %d dtype combinations, file %q", k.Op, len(k.Combinations()), k.File)
		}
		for _, combo := range k.Combinations() {
			for attr, d := range combo {
				if d == ir.F64 || !d.Valid() {
					t.Errorf("%s registers %s=%v, which the device does not have", k.Op, attr, d)
				}
				// complex64 arithmetic is compose's (the elementwise
				// math and comparisons); elsewhere it is parts and FFTs.
				if d == ir.C64 && !strings.Contains(k.Op, "FFT") && !slices.Contains([]string{"plugin/tf/lower/complex.go", "plugin/tf/lower/math.go", "plugin/tf/lower/compare.go"}, k.File) {
					t.Errorf("%s registers complex64 outside the FFT, complex, elementwise math and comparison ops", k.Op)
				}
				if d == ir.I8 || d == ir.I16 {
					t.Errorf("%s registers %v, which the device does not support", k.Op, d)
				}
				if ToTF(d) == 0 {
					t.Errorf("%s: %v has no TensorFlow number", k.Op, d)
				}
			}
		}
		seen := map[string]bool{}
		for _, c := range k.Constraints {
			if seen[c.Attr] || len(c.DTypes) == 0 {
				t.Errorf("%s: constraint %s repeated or empty", k.Op, c.Attr)
			}
			seen[c.Attr] = true
		}
	}
}

func TestHostInputsMatchOpInputs(t *testing.T) {
	for _, k := range Kernels() {
		if err := k.checkInputs(); err != nil {
			t.Error(err)
		}
		if len(k.HostInputs) != len(k.HostInputIndex) {
			t.Errorf("%s: %d host input names, %d indices", k.Op, len(k.HostInputs), len(k.HostInputIndex))
		}
		names := map[string]bool{}
		for _, h := range k.HostInputs {
			if names[h] {
				t.Errorf("%s: host input %s listed twice", k.Op, h)
			}
			names[h] = true
		}
		// Every host input is marked host at its position, for a call with
		// exactly the listed inputs.
		n := len(k.Inputs)
		for j, i := range k.HostInputIndex {
			p := i
			if p < 0 {
				p += n
			}
			if !k.IsHostInput(nil, p, n) || k.Inputs[p] != k.HostInputs[j] {
				t.Errorf("%s: host input %s at %d is not input %d of %v", k.Op, k.HostInputs[j], i, p, k.Inputs)
			}
		}
		attrNames := map[string]bool{}
		for _, a := range k.Attrs {
			if attrNames[a.Name] {
				t.Errorf("%s: attribute %s listed twice", k.Op, a.Name)
			}
			attrNames[a.Name] = true
		}
	}
}

func TestRegisterRejectsMisnamedHostInputs(t *testing.T) {
	k := Kernel{Op: "X", Inputs: []string{"a", "b"}, HostInputs: []string{"a"}, HostInputIndex: []int{1}}
	if k.checkInputs() == nil {
		t.Error("host input a at index 1 accepted")
	}
	k = Kernel{Op: "X", Inputs: []string{"a", "b"}, HostInputs: []string{"c"}}
	k.deriveHostInputIndex()
	if k.checkInputs() == nil {
		t.Error("host input c, no input of [a b], accepted")
	}
	k = Kernel{Op: "X", Inputs: []string{"a", "b"}, HostInputs: []string{"b"}}
	k.deriveHostInputIndex()
	if err := k.checkInputs(); err != nil || k.HostInputIndex[0] != 1 {
		t.Errorf("host input b of [a b]: position %v, %v", k.HostInputIndex, err)
	}
	k = Kernel{Op: "X", Inputs: []string{"values", "axis"}, HostInputs: []string{"axis"}, HostInputIndex: []int{-1}}
	if err := k.checkInputs(); err != nil {
		t.Error(err)
	}
}

// TestKernelFilesAreAccurate checks that each kernel's File exists and names
// the op, so the generated table points at the lowering.
func TestKernelFilesAreAccurate(t *testing.T) {
	cache := map[string]string{}
	for _, k := range Kernels() {
		if !strings.HasPrefix(k.File, "plugin/tf/lower/") {
			t.Errorf("%s: file %q is not in plugin/tf/lower", k.Op, k.File)
			continue
		}
		src, ok := cache[k.File]
		if !ok {
			b, err := os.ReadFile(filepath.Base(k.File))
			if err != nil {
				t.Errorf("%s: %v", k.Op, err)
				continue
			}
			src = string(b)
			cache[k.File] = src
		}
		name := k.Op
		// The FFT family registers its names from a loop over suffixes.
		for _, s := range []string{"2D", "3D"} {
			name = strings.TrimSuffix(name, s)
		}
		if !strings.Contains(src, `"`+name+`"`) && !strings.Contains(src, `"`+name) {
			t.Errorf("%s: %s does not name the op", k.Op, k.File)
		}
	}
}

func TestTable(t *testing.T) {
	rows := Table()
	if n := len(Kernels()) - len(VariableOps()); len(rows) != n {
		t.Fatalf("%d rows for %d kernels that are not variable ops", len(rows), n)
	}
	if !slices.IsSortedFunc(rows, func(a, b Row) int { return strings.Compare(a.Op, b.Op) }) {
		t.Error("rows are not sorted by op")
	}
	byOp := map[string]Row{}
	pairs := 0
	for _, r := range rows {
		byOp[r.Op] = r
		pairs += len(r.DTypes)
		if len(r.DTypes) == 0 || r.File == "" {
			t.Errorf("%s: row %+v", r.Op, r)
		}
	}
	if got := byOp["Cast"].DTypes; !slices.Contains(got, "SrcT=float32,DstT=int32") || len(got) != 49 {
		t.Errorf("Cast: %d combinations, %v", len(got), got[:min(3, len(got))])
	}
	if got := byOp["AddV2"].DTypes; !slices.Equal(got, []string{"T=float32", "T=float16", "T=bfloat16", "T=int32", "T=int64", "T=uint8", "T=complex64"}) {
		t.Errorf("AddV2: %v", got)
	}
	if got := byOp["LogicalAnd"].DTypes; !slices.Equal(got, []string{"(none)"}) {
		t.Errorf("LogicalAnd: %v", got)
	}
	if got := byOp["Conv2DBackpropInput"].HostInputs; !slices.Equal(got, []string{"input_sizes"}) {
		t.Errorf("Conv2DBackpropInput host inputs: %v", got)
	}
	t.Logf("%d ops, %d (op, dtypes) registrations", len(rows), pairs)
}

func TestFromTFRoundTrips(t *testing.T) {
	for _, d := range []ir.DType{ir.F32, ir.F16, ir.BF16, ir.I32, ir.I64, ir.U8, ir.Bool, ir.C64} {
		if got, ok := FromTF(ToTF(d)); !ok || got != d {
			t.Errorf("%v -> %d -> %v", d, ToTF(d), got)
		}
	}
	if ToTF(ir.C64) != 8 {
		t.Errorf("complex64 is TF_COMPLEX64 (8), got %d", ToTF(ir.C64))
	}
}

func TestBuildNeverPanics(t *testing.T) {
	// Every kernel, called with nothing, or with junk, returns an error
	// rather than panicking (Build recovers, but the lowerings should not
	// need it: the message must not be an internal error).
	junk := [][]ir.TensorType{nil, {f32()}, {f32(2), f32(3), f32(4), f32(5), f32(6), f32(7), f32(8)}}
	for _, k := range Kernels() {
		for _, in := range junk {
			host := map[int][]int64{}
			for i := range in {
				host[i] = []int64{1}
			}
			l, err := k.Build(NewAttrs(), in, host, nil)
			if err == nil {
				if len(l.Program.Results) == 0 {
					t.Errorf("%s %v: no results", k.Op, in)
				}
				continue
			}
			if strings.Contains(err.Error(), "internal error") {
				t.Errorf("%s %v: %v", k.Op, in, err)
			}
			if !strings.HasPrefix(err.Error(), k.Op+":") {
				t.Errorf("%s %v: error %q does not start with the op", k.Op, in, err)
			}
		}
	}
}

package host

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

// runOne compiles p on d and runs it on host slices.
func runOne(t *testing.T, d *Driver, p *ir.Program, args []unsafe.Pointer, result unsafe.Pointer) {
	t.Helper()
	exe, err := d.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Run(exe, args, []unsafe.Pointer{result}); err != nil {
		t.Fatal(err)
	}
}

// TestCacheKeySeesAllAttributes: arg_reduce max and min, and
// select_and_scatter GE and LE, print the same program text, so the cache
// must key on their kind too.
func TestCacheKeySeesAllAttributes(t *testing.T) {
	d := New(Options{})
	x := []float32{3, 1, 2}
	for _, kind := range []ir.ReduceKind{ir.ReduceMax, ir.ReduceMin} {
		b := ir.NewBuilder()
		p, err := b.Build(b.ArgReduce(b.Parameter(ir.TensorType{DType: ir.F32, Shape: ir.Shape{3}}), kind, 0, ir.I32))
		if err != nil {
			t.Fatal(err)
		}
		var out int32
		runOne(t, d, p, ptrs(&x[0]), unsafe.Pointer(&out))
		want := map[ir.ReduceKind]int32{ir.ReduceMax: 0, ir.ReduceMin: 1}[kind]
		if out != want {
			t.Errorf("arg %v of %v = %d, want %d", kind, x, out, want)
		}
	}
	src := []float32{10}
	for _, dir := range []ir.CompareDir{ir.CmpGE, ir.CmpLE} {
		b := ir.NewBuilder()
		xt := ir.TensorType{DType: ir.F32, Shape: ir.Shape{3}}
		st := ir.TensorType{DType: ir.F32, Shape: ir.Shape{1}}
		p, err := b.Build(b.SelectAndScatter(b.Parameter(xt), b.Parameter(st), dir, ir.WindowAttrs{Dims: []int{3}}))
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float32, 3)
		runOne(t, d, p, ptrs(&x[0], &src[0]), unsafe.Pointer(&out[0]))
		want := map[ir.CompareDir][]float32{ir.CmpGE: {10, 0, 0}, ir.CmpLE: {0, 10, 0}}[dir]
		for i := range want {
			if out[i] != want[i] {
				t.Errorf("select_and_scatter %v = %v, want %v", dir, out, want)
				break
			}
		}
	}
}

func TestComplexConvertIsAClearCompileError(t *testing.T) {
	d := New(Options{})
	for _, c := range []struct{ from, to ir.DType }{{ir.F32, ir.C64}, {ir.C64, ir.F32}, {ir.I32, ir.C64}} {
		b := ir.NewBuilder()
		p, err := b.Build(b.Convert(b.Parameter(ir.TensorType{DType: c.from, Shape: ir.Shape{2}}), c.to))
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.Compile(p)
		if err == nil || !strings.Contains(err.Error(), "not supported") || !strings.Contains(err.Error(), c.from.String()) ||
			!strings.Contains(err.Error(), c.to.String()) {
			t.Errorf("convert %v to %v: Compile error %v; want one saying it is not supported, naming both types", c.from, c.to, err)
		}
	}
}

// TestNewOpsNeedTheirAttributes hands Compile instructions without their
// attribute structs, as a careless hand-built program might.
func TestNewOpsNeedTheirAttributes(t *testing.T) {
	d := New(Options{})
	f := ir.TensorType{DType: ir.F32, Shape: ir.Shape{4}}
	i := ir.TensorType{DType: ir.I32, Shape: ir.Shape{2, 1}}
	k := ir.TensorType{DType: ir.I64, Shape: ir.Shape{1}}
	c := ir.TensorType{DType: ir.I64, Shape: ir.Shape{2}}
	cases := []struct {
		name   string
		params []ir.TensorType
		in     ir.Instr
	}{
		{"gather", []ir.TensorType{f, i}, ir.Instr{Op: ir.OpGather, Args: []ir.Value{0, 1}, Type: f}},
		{"scatter", []ir.TensorType{f, i, f}, ir.Instr{Op: ir.OpScatter, Args: []ir.Value{0, 1, 2}, Type: f}},
		{"sort", []ir.TensorType{f}, ir.Instr{Op: ir.OpSort, Args: []ir.Value{0}, Type: f}},
		{"select_and_scatter", []ir.TensorType{f, f}, ir.Instr{Op: ir.OpSelectAndScatter, Args: []ir.Value{0, 1}, Type: f, Compare: ir.CmpGE}},
		{"rng", []ir.TensorType{k, c}, ir.Instr{Op: ir.OpRng, Args: []ir.Value{0, 1}, Type: f}},
		{"fft", []ir.TensorType{f}, ir.Instr{Op: ir.OpFFT, Args: []ir.Value{0}, Type: f}},
		{"scatter", []ir.TensorType{f, i}, ir.Instr{Op: ir.OpScatter, Args: []ir.Value{0, 1}, Type: f}},
	}
	for _, tc := range cases {
		p := &ir.Program{Params: tc.params}
		for j, pt := range tc.params {
			p.Instrs = append(p.Instrs, ir.Instr{Op: ir.OpParameter, Type: pt, Param: j})
		}
		p.Instrs = append(p.Instrs, tc.in)
		p.Results = []ir.Value{ir.Value(len(p.Instrs) - 1)}
		_, err := d.Compile(p)
		if err == nil || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%s without attributes: Compile error %v; want one naming the op", tc.name, err)
		}
	}
}

// TestIndicesAtTheExtremes: gather clamps int64 indices of any size, and
// scatter skips them, without overflowing offset arithmetic.
func TestIndicesAtTheExtremes(t *testing.T) {
	d := New(Options{})
	x := []float32{1, 2, 3, 4, 5}
	idx := []int64{math.MaxInt64, math.MinInt64, -1, 5, 1 << 40, 2}
	ft := ir.TensorType{DType: ir.F32, Shape: ir.Shape{5}}
	it := ir.TensorType{DType: ir.I64, Shape: ir.Shape{6, 1}}

	b := ir.NewBuilder()
	p, err := b.Build(b.Gather(b.Parameter(ft), b.Parameter(it), ir.GatherDims{
		OffsetDims: []int{1}, StartIndexMap: []int{0}, IndexVectorDim: 1, SliceSizes: []int{2}}))
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 12)
	runOne(t, d, p, []unsafe.Pointer{unsafe.Pointer(&x[0]), unsafe.Pointer(&idx[0])}, unsafe.Pointer(&got[0]))
	want := []float32{4, 5, 1, 2, 1, 2, 4, 5, 4, 5, 3, 4}
	for j := range want {
		if got[j] != want[j] {
			t.Fatalf("gather at %v = %v, want %v", idx, got, want)
		}
	}

	b = ir.NewBuilder()
	ut := ir.TensorType{DType: ir.F32, Shape: ir.Shape{6}}
	p, err = b.Build(b.Scatter(b.Parameter(ft), b.Parameter(it), b.Parameter(ut), ir.ScatterDims{
		InsertedWindowDims: []int{0}, ScatterDimsToOperandDims: []int{0}, IndexVectorDim: 1, Kind: ir.ScatterAdd}))
	if err != nil {
		t.Fatal(err)
	}
	upd := []float32{100, 100, 100, 100, 100, 10}
	out := make([]float32, 5)
	runOne(t, d, p, []unsafe.Pointer{unsafe.Pointer(&x[0]), unsafe.Pointer(&idx[0]), unsafe.Pointer(&upd[0])}, unsafe.Pointer(&out[0]))
	if want := []float32{1, 2, 13, 4, 5}; !equalF32(out, want) {
		t.Errorf("scatter add at %v = %v, want %v", idx, out, want)
	}
}

func equalF32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFFTPlansAgainstDirectDFT checks the radix-2 and Bluestein plans on
// lengths beyond the conformance suite's, in float64, against the direct
// sum: both should keep the error near the float64 rounding of the sum.
func TestFFTPlansAgainstDirectDFT(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{2, 3, 7, 100, 127, 997, 1000, 1024} {
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(rnd.Float64()*2-1, rnd.Float64()*2-1)
		}
		p := newFFTPlan(n)
		got := append([]complex128(nil), x...)
		p.forward(got, make([]complex128, p.scratchLen()))
		worst := 0.0
		for k := 0; k < n; k += max(1, n/50) { // a sample of outputs keeps the O(n²) check quick
			var want complex128
			for j, v := range x {
				s, c := math.Sincos(-2 * math.Pi * float64(k*j%n) / float64(n))
				want += v * complex(c, s)
			}
			worst = max(worst, cmplx.Abs(got[k]-want)/math.Sqrt(float64(n)))
		}
		if worst > 1e-13 {
			t.Errorf("length %d: error %.3g relative to the signal's scale", n, worst)
		}
		back := append([]complex128(nil), got...)
		p.inverse(back, make([]complex128, p.scratchLen()))
		for i := range back {
			if cmplx.Abs(back[i]/complex(float64(n), 0)-x[i]) > 1e-13 {
				t.Errorf("length %d: inverse(forward(x))/n differs from x at %d by %.3g", n, i, cmplx.Abs(back[i]/complex(float64(n), 0)-x[i]))
				break
			}
		}
	}
}

// TestRngChunkingInvisible draws enough numbers that the kernel splits the
// work across goroutines and compares, bit for bit, with the reference
// interpreter's one sequential pass over the groups.
func TestRngChunkingInvisible(t *testing.T) {
	const n = 1<<15 + 3
	key, ctr := uint64(0xfeedface), [2]uint64{^uint64(0) - 100, 9}
	for _, c := range []struct {
		dist ir.RngDistribution
		d    ir.DType
	}{{ir.RngNormal, ir.F32}, {ir.RngTruncatedNormal, ir.F32}, {ir.RngUniform, ir.BF16}, {ir.RngUniform, ir.I64}} {
		b := ir.NewBuilder()
		kv := b.Parameter(ir.TensorType{DType: ir.I64, Shape: ir.Shape{1}})
		cv := b.Parameter(ir.TensorType{DType: ir.I64, Shape: ir.Shape{2}})
		p, err := b.Build(b.Rng(kv, cv, c.dist, ir.TensorType{DType: c.d, Shape: ir.Shape{n}}))
		if err != nil {
			t.Fatal(err)
		}
		k, err := rngKernel(p.Instrs[p.Results[0]])
		if err != nil {
			t.Fatal(err)
		}
		out := newBuffer(n * c.d.Size())
		k(out, [][]byte{bytesOf([]uint64{key}), bytesOf(ctr[:])})
		ref, err := eval.Run(p, []eval.Tensor{
			eval.FromFloats(p.Params[0], float64(key)),
			{Type: p.Params[1], I: []int64{int64(ctr[0]), int64(ctr[1])}},
		})
		if err != nil {
			t.Fatal(err)
		}
		want := ref[0].Bytes()
		if i := firstDiff(out, want); i >= 0 {
			t.Fatalf("%v %v: byte %d (element %d) differs from the reference interpreter", c.dist, c.d, i, i/c.d.Size())
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range a {
		if i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return len(a)
	}
	return -1
}

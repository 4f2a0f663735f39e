package host

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/driver/drivertest"
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/status"
)

func TestConformance(t *testing.T) {
	drivertest.Run(t, func() driver.Driver { return New(Options{}) })
}

func TestNameAndDescription(t *testing.T) {
	d := New(Options{})
	if d.Name() != "host" || !strings.Contains(d.Description(), "CPU") {
		t.Errorf("Name %q, Description %q", d.Name(), d.Description())
	}
	if _, total := d.MemoryUsage(); total != DefaultMemoryBytes {
		t.Errorf("default capacity %d, want %d", total, DefaultMemoryBytes)
	}
}

func TestLookup(t *testing.T) {
	d := New(Options{})
	const n = 10000
	p, err := d.Allocate(n)
	if err != nil {
		t.Fatal(err)
	}
	q, err := d.Allocate(1)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(q)
	for _, off := range []int{0, 1, 5000, n - 1} {
		base, o, size, ok := d.Lookup(unsafe.Add(p, off))
		if !ok || base != p || o != off || size != n {
			t.Errorf("Lookup(p+%d) = %p, %d, %d, %v; want %p, %d, %d, true", off, base, o, size, ok, p, off, n)
		}
	}
	if base, _, _, ok := d.Lookup(q); !ok || base != q {
		t.Errorf("Lookup of the second allocation = %p, %v", base, ok)
	}
	var local int
	if _, _, _, ok := d.Lookup(unsafe.Pointer(&local)); ok {
		t.Error("Lookup found a Go variable")
	}
	if _, _, _, ok := d.Lookup(nil); ok {
		t.Error("Lookup found nil")
	}
	if err := d.Free(unsafe.Add(p, 8)); err == nil || !strings.Contains(err.Error(), "inside") {
		t.Errorf("Free of an interior pointer: %v", err)
	}
	if err := d.Free(p); err != nil {
		t.Fatal(err)
	}
	if _, _, _, ok := d.Lookup(unsafe.Add(p, 10)); ok {
		t.Error("Lookup found a freed allocation")
	}
}

func TestAllocationErrors(t *testing.T) {
	d := New(Options{MemoryBytes: 1 << 20})
	p, err := d.Allocate(1 << 19)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(p)
	_, err = d.Allocate(1 << 20)
	if err == nil || !strings.Contains(err.Error(), "1048576 bytes") || !strings.Contains(err.Error(), "524288 of 1048576 bytes free") {
		t.Errorf("over-capacity error = %v; want the size asked for and what is free", err)
	}
	if c := status.CodeOf(err); c != status.ResourceExhausted {
		t.Errorf("over-capacity error is %v, want RESOURCE_EXHAUSTED (the frontends' ResourceExhaustedError)", c)
	}
	if _, err := d.Allocate(-1); err == nil {
		t.Error("Allocate(-1) succeeded")
	}
	var x int
	err = d.Free(unsafe.Pointer(&x))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%p", &x)) {
		t.Errorf("Free of an unknown pointer: %v; want the pointer named", err)
	}
	if err := d.Free(nil); err != nil {
		t.Errorf("Free(nil) = %v", err)
	}
}

// squarePlus builds x*x + c for float32[n].
func squarePlus(t testing.TB, n int, c float64) *ir.Program {
	t.Helper()
	p, err := squarePlusProgram(n, c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func squarePlusProgram(n int, c float64) (*ir.Program, error) {
	b := ir.NewBuilder()
	ty := ir.TensorType{DType: ir.F32, Shape: ir.Shape{n}}
	x := b.Parameter(ty)
	return b.Build(b.Binary(ir.OpAdd, b.Binary(ir.OpMul, x, x), b.Full(ty, c)))
}

func TestCompileCache(t *testing.T) {
	d := New(Options{})
	e1, err := d.Compile(squarePlus(t, 4, 1))
	if err != nil {
		t.Fatal(err)
	}
	e2, err := d.Compile(squarePlus(t, 4, 1))
	if err != nil {
		t.Fatal(err)
	}
	e3, err := d.Compile(squarePlus(t, 4, 2))
	if err != nil {
		t.Fatal(err)
	}
	if e1 != e2 {
		t.Error("identical programs compiled to different executables")
	}
	if e1 == e3 {
		t.Error("different programs share an executable")
	}
}

func TestCompileErrors(t *testing.T) {
	d := New(Options{})
	f32 := func(s ...int) ir.TensorType { return ir.TensorType{DType: ir.F32, Shape: s} }
	cases := []struct {
		name string
		p    *ir.Program
		want []string
	}{
		{"wrong result type", &ir.Program{
			Params: []ir.TensorType{f32(2), f32(3)},
			Instrs: []ir.Instr{
				{Op: ir.OpParameter, Type: f32(2), Param: 0},
				{Op: ir.OpParameter, Type: f32(3), Param: 1},
				{Op: ir.OpAdd, Args: []ir.Value{0, 1}, Type: f32(2)},
			},
			Results: []ir.Value{2},
		}, []string{"add", "float32[2]", "float32[3]"}},
		{"unknown op", &ir.Program{
			Instrs:  []ir.Instr{{Op: ir.Op(999), Type: f32()}},
			Results: []ir.Value{0},
		}, []string{"op(999)"}},
		{"forward reference", &ir.Program{
			Params: []ir.TensorType{f32(2)},
			Instrs: []ir.Instr{
				{Op: ir.OpNeg, Args: []ir.Value{1}, Type: f32(2)},
				{Op: ir.OpParameter, Type: f32(2)},
			},
			Results: []ir.Value{0},
		}, []string{"negate", "%1"}},
		{"log of integers", &ir.Program{
			Params: []ir.TensorType{{DType: ir.I32, Shape: ir.Shape{2}}},
			Instrs: []ir.Instr{
				{Op: ir.OpParameter, Type: ir.TensorType{DType: ir.I32, Shape: ir.Shape{2}}},
				{Op: ir.OpLog, Args: []ir.Value{0}, Type: ir.TensorType{DType: ir.I32, Shape: ir.Shape{2}}},
			},
			Results: []ir.Value{1},
		}, []string{"log", "int32[2]"}},
		{"bad result", &ir.Program{
			Params:  []ir.TensorType{f32(2)},
			Instrs:  []ir.Instr{{Op: ir.OpParameter, Type: f32(2)}},
			Results: []ir.Value{3},
		}, []string{"%3"}},
	}
	for _, c := range cases {
		_, err := d.Compile(c.p)
		if err == nil {
			t.Errorf("%s: Compile succeeded", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", c.name, err, w)
			}
		}
		// The caller's program is wrong: INVALID_ARGUMENT, as on Metal.
		if got := status.CodeOf(err); got != status.InvalidArgument {
			t.Errorf("%s: %v is %v, want INVALID_ARGUMENT", c.name, err, got)
		}
	}
}

// TestHandBuiltProgram runs a program assembled without the builder, with
// parameters declared out of instruction order.
func TestHandBuiltProgram(t *testing.T) {
	d := New(Options{})
	f32 := ir.TensorType{DType: ir.F32, Shape: ir.Shape{2}}
	p := &ir.Program{
		Params: []ir.TensorType{f32, f32},
		Instrs: []ir.Instr{
			{Op: ir.OpParameter, Type: f32, Param: 1},
			{Op: ir.OpParameter, Type: f32, Param: 0},
			{Op: ir.OpSub, Args: []ir.Value{0, 1}, Type: f32},
		},
		Results: []ir.Value{2},
	}
	exe, err := d.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	a, b, out := []float32{1, 2}, []float32{10, 20}, make([]float32, 2)
	if err := d.Run(exe, ptrs(&a[0], &b[0]), ptrs(&out[0])); err != nil {
		t.Fatal(err)
	}
	if out[0] != 9 || out[1] != 18 {
		t.Errorf("param1 - param0 = %v, want [9 18]", out)
	}
}

func ptrs[T any](ps ...*T) []unsafe.Pointer {
	out := make([]unsafe.Pointer, len(ps))
	for i, p := range ps {
		out[i] = unsafe.Pointer(p)
	}
	return out
}

func TestConcurrentCompileExecute(t *testing.T) {
	d := New(Options{})
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := d.NewStream()
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			in, _ := d.Allocate(4 * n)
			out, _ := d.Allocate(4 * n)
			defer d.Free(in)
			defer d.Free(out)
			host := make([]float32, n)
			for i := range 20 {
				c := float64(i % 3) // programs shared between goroutines, and some not
				if g%2 == 1 {
					c = float64(100 + g)
				}
				p, err := squarePlusProgram(n, c)
				if err != nil {
					errs <- err
					return
				}
				exe, err := d.Compile(p)
				if err != nil {
					errs <- err
					return
				}
				for j := range host {
					host[j] = float32(j + i)
				}
				s.Memcpy(in, unsafe.Pointer(&host[0]), 4*n)
				s.Execute(exe, []unsafe.Pointer{in}, []unsafe.Pointer{out})
				s.Memcpy(unsafe.Pointer(&host[0]), out, 4*n)
				if err := s.Synchronize(); err != nil {
					errs <- err
					return
				}
				for j, v := range host {
					x := float32(j + i)
					if v != x*x+float32(c) {
						errs <- fmt.Errorf("goroutine %d iteration %d: element %d = %v, want %v", g, i, j, v, x*x+float32(c))
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestPanicBecomesError(t *testing.T) {
	hook := func(op ir.Op) {
		if op == ir.OpMul {
			panic("forced by the test")
		}
	}
	testHookStep.Store(&hook)
	defer testHookStep.Store(nil)
	d := New(Options{})
	exe, err := d.Compile(squarePlus(t, 3, 1))
	if err != nil {
		t.Fatal(err)
	}
	in, out := make([]float32, 3), make([]float32, 3)
	for _, via := range []string{"Run", "stream"} {
		if via == "Run" {
			err = d.Run(exe, ptrs(&in[0]), ptrs(&out[0]))
		} else {
			s, _ := d.NewStream()
			s.Execute(exe, ptrs(&in[0]), ptrs(&out[0]))
			err = s.Synchronize()
			s.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "multiply") || !strings.Contains(err.Error(), "float32[3]") ||
			!strings.Contains(err.Error(), "forced by the test") {
			t.Errorf("%s: error = %v; want the panic, naming the op and operand types", via, err)
		}
	}
}

func TestPanicInWorkerGoroutine(t *testing.T) {
	// A panic inside a parallel chunk must reach the caller as a panic
	// (then an error), not kill the process from a bare goroutine.
	defer func() {
		if r := recover(); r == nil {
			t.Error("no panic reached the caller")
		}
	}()
	parallelFor(1<<20, 1, func(lo, hi int) {
		if lo > 0 {
			panic("chunk")
		}
	})
}

// TestFaultBecomesError hands Run and a stream pointers into memory that
// cannot be read or written: the fault must come back as an error.
func TestFaultBecomesError(t *testing.T) {
	mem, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_NONE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skip("cannot map a PROT_NONE page:", err)
	}
	defer syscall.Munmap(mem)
	bad := unsafe.Pointer(&mem[0])
	d := New(Options{})
	exe, err := d.Compile(squarePlus(t, 3, 1))
	if err != nil {
		t.Fatal(err)
	}
	ok := make([]float32, 3)
	if err := d.Run(exe, []unsafe.Pointer{bad}, ptrs(&ok[0])); err == nil || !strings.Contains(err.Error(), "multiply") {
		t.Errorf("Run reading a PROT_NONE page: %v; want an error naming the op", err)
	}
	if err := d.Run(exe, ptrs(&ok[0]), []unsafe.Pointer{bad}); err == nil {
		t.Error("Run writing a PROT_NONE page succeeded")
	}
	s, _ := d.NewStream()
	defer s.Close()
	s.Memcpy(unsafe.Pointer(&ok[0]), bad, 4)
	if err := s.Synchronize(); err == nil {
		t.Error("Memcpy from a PROT_NONE page succeeded")
	}
}

func TestExecuteArgumentErrors(t *testing.T) {
	d := New(Options{})
	exe, err := d.Compile(squarePlus(t, 3, 1))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float32, 3)
	if err := d.Run(exe, nil, ptrs(&out[0])); err == nil {
		t.Error("Run with missing arguments succeeded")
	}
	if err := d.Run(exe, []unsafe.Pointer{nil}, ptrs(&out[0])); err == nil {
		t.Error("Run with a nil argument succeeded")
	}
}

func TestFailedEventFailsWaiter(t *testing.T) {
	d := New(Options{})
	a, _ := d.NewStream()
	b, _ := d.NewStream()
	defer a.Close()
	defer b.Close()
	ev := d.NewEvent()
	boom := errors.New("boom")
	a.HostCallback(func() error { return boom })
	a.Record(ev)
	b.Wait(ev)
	ran := false
	b.HostCallback(func() error { ran = true; return nil })
	if err := b.Synchronize(); !errors.Is(err, boom) {
		t.Errorf("waiting stream: %v; want the failure it waited on", err)
	}
	if ran {
		t.Error("work after a failed wait ran")
	}
}

func TestIntegerDivisionByZero(t *testing.T) {
	d := New(Options{})
	for _, op := range []ir.Op{ir.OpDiv, ir.OpRem} {
		b := ir.NewBuilder()
		ty := ir.TensorType{DType: ir.I32, Shape: ir.Shape{4}}
		x, y := b.Parameter(ty), b.Parameter(ty)
		p, err := b.Build(b.Binary(op, x, y))
		if err != nil {
			t.Fatal(err)
		}
		exe, err := d.Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		xs, ys, out := []int32{7, -7, math.MinInt32, 5}, []int32{0, 2, -1, -3}, make([]int32, 4)
		if err := d.Run(exe, ptrs(&xs[0], &ys[0]), ptrs(&out[0])); err != nil {
			t.Fatal(err)
		}
		want := []int32{0, -3, math.MinInt32, -1} // x/0 = 0; MinInt/-1 wraps
		if op == ir.OpRem {
			want = []int32{7, -1, 0, 2} // x%0 = x
		}
		for i := range want {
			if out[i] != want[i] {
				t.Errorf("%s: %v, want %v", op, out, want)
				break
			}
		}
	}
}

func TestConvertSaturatesInt64(t *testing.T) {
	d := New(Options{})
	b := ir.NewBuilder()
	x := b.Parameter(ir.TensorType{DType: ir.F64, Shape: ir.Shape{5}})
	p, _ := b.Build(b.Convert(x, ir.I64))
	exe, err := d.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	in := []float64{1e19, -1e19, math.NaN(), -2.9, math.Inf(1)}
	out := make([]int64, 5)
	if err := d.Run(exe, ptrs(&in[0]), ptrs(&out[0])); err != nil {
		t.Fatal(err)
	}
	want := []int64{math.MaxInt64, math.MinInt64, 0, -2, math.MaxInt64}
	for i := range want {
		if out[i] != want[i] {
			t.Fatalf("convert %v = %v, want %v", in, out, want)
		}
	}
}

// fuzzReader hands out bytes of the fuzz input, then zeros.
type fuzzReader struct {
	b []byte
	i int
}

func (r *fuzzReader) n(m int) int {
	if r.i >= len(r.b) || m <= 0 {
		return 0
	}
	v := int(r.b[r.i]) % m
	r.i++
	return v
}

func (r *fuzzReader) shape(rank int) ir.Shape {
	s := make(ir.Shape, rank)
	for i := range s {
		s[i] = r.n(7)
	}
	return s
}

func (r *fuzzReader) ints(n, lo, hi int) []int {
	v := make([]int, n)
	for i := range v {
		v[i] = lo + r.n(hi-lo+1)
	}
	return v
}

var fuzzTypes = []ir.DType{ir.F32, ir.F64, ir.F16, ir.BF16, ir.I8, ir.I16, ir.I32, ir.I64, ir.U8, ir.Bool}

// buildFuzz derives one program from the fuzz bytes. Attributes are drawn
// from ranges that include invalid values: the builder rejects those.
func buildFuzz(r *fuzzReader) (*ir.Program, error) {
	b := ir.NewBuilder()
	dt := fuzzTypes[r.n(len(fuzzTypes))]
	rank := r.n(4)
	s := r.shape(rank)
	x := b.Parameter(ir.TensorType{DType: dt, Shape: s})
	var out ir.Value
	switch r.n(fuzzKinds) {
	case 0: // binary with a broadcast operand
		ys := s.Clone()
		for i := range ys {
			if r.n(2) == 0 {
				ys[i] = 1
			}
		}
		y := b.BroadcastInDim(b.Parameter(ir.TensorType{DType: dt, Shape: ys}), s, nil)
		out = b.Binary(ir.OpAdd+ir.Op(r.n(int(ir.OpOr-ir.OpAdd+1))), x, y)
	case 1:
		var axes []int
		for i := range rank {
			if r.n(2) == 0 {
				axes = append(axes, i)
			}
		}
		out = b.Reduce(x, ir.ReduceKind(1+r.n(6)), axes)
	case 2:
		out = b.Transpose(x, r.ints(rank, 0, rank-1))
	case 3:
		start, limit := r.ints(rank, 0, 6), r.ints(rank, 0, 6)
		out = b.Slice(x, start, limit, r.ints(rank, 1, 3))
	case 4:
		out = b.Pad(x, b.Scalar(dt, 3), r.ints(rank, -3, 3), r.ints(rank, -3, 3), r.ints(rank, 0, 2))
	case 5: // convolution, channels last
		ns := 1 + r.n(2)
		in := append(append(ir.Shape{r.n(3)}, r.shape(ns)...), 1+r.n(4))
		groups := 1
		if r.n(2) == 0 {
			groups = in[ns+1]
		}
		k := append(r.shape(ns), in[ns+1]/groups, groups*(1+r.n(3)))
		x = b.Parameter(ir.TensorType{DType: dt, Shape: in})
		kv := b.Parameter(ir.TensorType{DType: dt, Shape: k})
		pad := make([][2]int, ns)
		for i := range pad {
			pad[i] = [2]int{r.n(5) - 1, r.n(5) - 1}
		}
		out = b.Convolution(x, kv, ir.ConvAttrs{Strides: r.ints(ns, 1, 3), Padding: pad,
			LhsDilation: r.ints(ns, 1, 3), RhsDilation: r.ints(ns, 1, 3), FeatureGroups: groups})
	case 6:
		pad := make([][2]int, rank)
		for i := range pad {
			pad[i] = [2]int{r.n(3), r.n(3)}
		}
		out = b.ReduceWindow(x, ir.ReduceKind(1+r.n(4)), ir.WindowAttrs{Dims: r.ints(rank, 1, 4), Strides: r.ints(rank, 1, 3), Padding: pad})
	case 7: // dot_general: contract dim pairs of equal size
		ys := r.shape(r.n(4))
		var dims ir.DotDims
		for i := range min(rank, len(ys)) {
			switch r.n(3) {
			case 0:
				dims.LhsContract, dims.RhsContract = append(dims.LhsContract, i), append(dims.RhsContract, len(ys)-1-i)
				ys[len(ys)-1-i] = s[i]
			case 1:
				dims.LhsBatch, dims.RhsBatch = append(dims.LhsBatch, i), append(dims.RhsBatch, len(ys)-1-i)
				ys[len(ys)-1-i] = s[i]
			}
		}
		out = b.DotGeneral(x, b.Parameter(ir.TensorType{DType: dt, Shape: ys}), dims)
	case 8:
		out = b.Unary(ir.OpNeg+ir.Op(r.n(int(ir.OpNot-ir.OpNeg+1))), b.Convert(x, fuzzTypes[r.n(len(fuzzTypes))]))
	case 9:
		axis := r.n(max(rank, 1))
		out = b.Concat(axis, x, b.Iota(ir.TensorType{DType: dt, Shape: s}, axis), x)
		out = b.Select(b.Compare(ir.CompareDir(1+r.n(6)), out, out), out, out)
	case 10: // gather: any start indices, clamped by the kernel
		idx := r.indices(b)
		out = b.Gather(x, idx, r.gatherDims(s, b.Type(idx)))
	case 11: // scatter: windows leaving the operand are skipped
		idx := r.indices(b)
		sd, us := r.scatterDims(s, b.Type(idx))
		out = b.Scatter(x, idx, b.Parameter(ir.TensorType{DType: dt, Shape: us}), sd)
	case 12:
		a := ir.SortAttrs{Dim: r.n(max(rank, 1)), Descending: r.n(2) == 0}
		if r.n(2) == 0 {
			out = b.Sort(x, a)
		} else {
			out = b.ArgSort(x, a, []ir.DType{ir.I32, ir.I64}[r.n(2)])
		}
	case 13:
		var dims []int
		for i := range rank {
			if r.n(2) == 0 {
				dims = append(dims, i)
			}
		}
		out = b.Reverse(x, dims)
	default: // select_and_scatter: the source has the pooled shape
		pad := make([][2]int, rank)
		for i := range pad {
			pad[i] = [2]int{r.n(3), r.n(3)}
		}
		w := ir.WindowAttrs{Dims: r.ints(rank, 1, 4), Strides: r.ints(rank, 1, 3), Padding: pad}
		probe := ir.NewBuilder()
		pooled := probe.Type(probe.ReduceWindow(probe.Parameter(b.Type(x)), ir.ReduceMax, w))
		src := b.Parameter(ir.TensorType{DType: dt, Shape: pooled.Shape})
		out = b.SelectAndScatter(x, src, []ir.CompareDir{ir.CmpGE, ir.CmpLE}[r.n(2)], w)
	}
	return b.Build(out)
}

// fuzzKinds is how many kinds of program buildFuzz makes.
const fuzzKinds = 15

// indices declares start indices of a random shape and index dtype; their
// values come from the fuzz bytes, so huge and negative ones occur.
func (r *fuzzReader) indices(b *ir.Builder) ir.Value {
	d := []ir.DType{ir.I32, ir.I64}[r.n(2)]
	return b.Parameter(ir.TensorType{DType: d, Shape: r.shape(r.n(3))})
}

// indexVector is the batch rank and vector length of the indices with a
// random index_vector_dim (sometimes past the rank: scalar indices).
func (r *fuzzReader) indexVector(ti ir.TensorType) (ivd, batch, vec int) {
	ivd = r.n(ti.Shape.Rank() + 1)
	if ivd == ti.Shape.Rank() {
		return ivd, ti.Shape.Rank(), 1
	}
	return ivd, ti.Shape.Rank() - 1, ti.Shape[ivd]
}

// gatherDims draws dimension numbers that are often valid: start dims
// (repeats are the builder's to reject), some of them collapsed when their
// slice size allows, slice sizes within the operand, and the offset dims all
// before or all after the batch dims.
func (r *fuzzReader) gatherDims(op ir.Shape, ti ir.TensorType) ir.GatherDims {
	g := ir.GatherDims{SliceSizes: make([]int, len(op))}
	var batch, vec int
	g.IndexVectorDim, batch, vec = r.indexVector(ti)
	g.StartIndexMap = r.ints(vec, 0, len(op)-1)
	for d, n := range op {
		g.SliceSizes[d] = r.n(n + 1)
		if g.SliceSizes[d] <= 1 && r.n(2) == 0 {
			g.CollapsedSliceDims = append(g.CollapsedSliceDims, d)
		}
	}
	first := 0
	if r.n(2) == 0 {
		first = batch
	}
	for i := range len(op) - len(g.CollapsedSliceDims) {
		g.OffsetDims = append(g.OffsetDims, first+i)
	}
	return g
}

// scatterDims draws dimension numbers and the matching updates shape: some
// operand dims inserted (windows of one element), the others windows of up
// to the operand's size, laid out before or after the batch dims.
func (r *fuzzReader) scatterDims(op ir.Shape, ti ir.TensorType) (ir.ScatterDims, ir.Shape) {
	var sd ir.ScatterDims
	var vec int
	sd.IndexVectorDim, _, vec = r.indexVector(ti)
	sd.ScatterDimsToOperandDims = r.ints(vec, 0, len(op)-1)
	sd.Kind = ir.ScatterKind(1 + r.n(5))
	var window ir.Shape
	for d, n := range op {
		if r.n(3) == 0 {
			sd.InsertedWindowDims = append(sd.InsertedWindowDims, d)
		} else {
			window = append(window, r.n(n+1))
		}
	}
	var batch ir.Shape
	for d, n := range ti.Shape {
		if d != sd.IndexVectorDim {
			batch = append(batch, n)
		}
	}
	us := append(batch.Clone(), window...)
	first := len(batch)
	if r.n(2) == 0 {
		us = append(window.Clone(), batch...)
		first = 0
	}
	for i := range window {
		sd.UpdateWindowDims = append(sd.UpdateWindowDims, first+i)
	}
	return sd, us
}

func FuzzBuildAndRun(f *testing.F) {
	// Eight seeds per program kind, over the float types and ranks 1 to 3,
	// in pairs: one of arbitrary bytes, one of small ones, which more often
	// make valid attributes.
	for i := range 2 * 4 * fuzzKinds {
		seed := make([]byte, 40)
		for j := range seed {
			if i%2 == 0 {
				seed[j] = byte(i*37 + j*11 + i*j)
			} else {
				seed[j] = byte((i + j*j) % 3)
			}
		}
		seed[0] = byte(i / 2 % 4)           // float32, float64, float16, bfloat16
		seed[1] = byte(1 + i/2/fuzzKinds%3) // rank
		seed[2+seed[1]] = byte(i / 2 % fuzzKinds)
		f.Add(seed)
	}
	d := New(Options{})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzReader{b: data}
		p, err := buildFuzz(r)
		if err != nil {
			return // invalid attributes; the builder said why
		}
		exe, err := d.Compile(p)
		if err != nil {
			t.Fatalf("Compile of a built program: %v\n%s", err, p)
		}
		var args []unsafe.Pointer
		for _, pt := range p.Params {
			buf := make([]byte, pt.Bytes()+1)
			for i := range buf {
				buf[i] = byte(r.n(256)) // arbitrary bits: NaNs and all
			}
			args = append(args, unsafe.Pointer(&buf[0]))
		}
		rt := p.ResultTypes()[0]
		const guard = 64
		out := make([]byte, rt.Bytes()+guard)
		for i := range out {
			out[i] = 0xee
		}
		if err := d.Run(exe, args, []unsafe.Pointer{unsafe.Pointer(&out[0])}); err != nil {
			t.Fatalf("Run: %v\n%s", err, p)
		}
		for i := rt.Bytes(); i < len(out); i++ {
			if out[i] != 0xee {
				t.Fatalf("result %v wrote past its %d bytes\n%s", rt, rt.Bytes(), p)
			}
		}
	})
}

func benchRun(b *testing.B, p *ir.Program) {
	b.Helper()
	d := New(Options{})
	exe, err := d.Compile(p)
	if err != nil {
		b.Fatal(err)
	}
	var args, results []unsafe.Pointer
	for _, t := range p.Params {
		m, err := d.Allocate(t.Bytes())
		if err != nil {
			b.Fatal(err)
		}
		fillF32(m, t.Shape.Size())
		args = append(args, m)
	}
	for _, t := range p.ResultTypes() {
		m, err := d.Allocate(t.Bytes())
		if err != nil {
			b.Fatal(err)
		}
		results = append(results, m)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := d.Run(exe, args, results); err != nil {
			b.Fatal(err)
		}
	}
}

func fillF32(p unsafe.Pointer, n int) {
	s := unsafe.Slice((*byte)(p), 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(s[4*i:], math.Float32bits(float32(i%17)/16-0.5))
	}
}

func BenchmarkMatMul256F32(b *testing.B) {
	bl := ir.NewBuilder()
	t := ir.TensorType{DType: ir.F32, Shape: ir.Shape{256, 256}}
	x, y := bl.Parameter(t), bl.Parameter(t)
	p, _ := bl.Build(bl.DotGeneral(x, y, ir.DotDims{LhsContract: []int{1}, RhsContract: []int{0}}))
	b.SetBytes(2 * 256 * 256 * 256) // "bytes" here are flops, so MB/s reads as MFLOP/s
	benchRun(b, p)
}

func BenchmarkAdd1MF32(b *testing.B) {
	bl := ir.NewBuilder()
	t := ir.TensorType{DType: ir.F32, Shape: ir.Shape{1 << 20}}
	x, y := bl.Parameter(t), bl.Parameter(t)
	p, _ := bl.Build(bl.Binary(ir.OpAdd, x, y))
	b.SetBytes(3 * 4 << 20)
	benchRun(b, p)
}

func BenchmarkReduceSum1MF32(b *testing.B) {
	bl := ir.NewBuilder()
	x := bl.Parameter(ir.TensorType{DType: ir.F32, Shape: ir.Shape{1 << 20}})
	p, _ := bl.Build(bl.Reduce(x, ir.ReduceSum, []int{0}))
	b.SetBytes(4 << 20)
	benchRun(b, p)
}

func BenchmarkConv32x32x16To16F32(b *testing.B) {
	bl := ir.NewBuilder()
	x := bl.Parameter(ir.TensorType{DType: ir.F32, Shape: ir.Shape{1, 32, 32, 16}})
	k := bl.Parameter(ir.TensorType{DType: ir.F32, Shape: ir.Shape{3, 3, 16, 16}})
	p, _ := bl.Build(bl.Convolution(x, k, ir.ConvAttrs{Padding: [][2]int{{1, 1}, {1, 1}}}))
	b.SetBytes(2 * 32 * 32 * 9 * 16 * 16)
	benchRun(b, p)
}

// TestFastFloat32Math sweeps the float32 exp, tanh and logistic over their
// whole interesting range against package math, allowing one ulp.
func TestFastFloat32Math(t *testing.T) {
	fns := []struct {
		name string
		fast func(float32) float32
		ref  func(float64) float64
	}{
		{"exp", exp32, math.Exp},
		{"tanh", tanh32, math.Tanh},
		{"logistic", logistic32, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }},
	}
	var xs []float32
	for i := -200000; i <= 200000; i++ {
		xs = append(xs, float32(i)/1000) // [-200, 200]
	}
	for e := -40; e <= 0; e++ { // tiny magnitudes, where tanh must keep relative accuracy
		for _, m := range []float64{1, 1.37, -1, -1.91} {
			xs = append(xs, float32(math.Ldexp(m, e)))
		}
	}
	xs = append(xs, 0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()))
	for _, f := range fns {
		worst := 0
		for _, x := range xs {
			got, want := f.fast(x), float32(f.ref(float64(x)))
			if math.IsNaN(float64(want)) {
				if !math.IsNaN(float64(got)) {
					t.Errorf("%s(%v) = %v, want NaN", f.name, x, got)
				}
				continue
			}
			d := int(int32(math.Float32bits(got))) - int(int32(math.Float32bits(want)))
			if d < 0 {
				d = -d
			}
			if (got < 0) != (want < 0) && got != want {
				d = 1 << 30
			}
			if d > worst {
				worst = d
			}
			if d > 1 {
				t.Errorf("%s(%v) = %v, want %v (%d ulp)", f.name, x, got, want, d)
				break
			}
		}
		t.Logf("%s: worst error %d ulp", f.name, worst)
	}
}

func TestExecuteWaitInline(t *testing.T) { drivertest.CheckExecuteWaitInline(t, New(Options{})) }

// TestIntermediatesCountAgainstTheCapacity: a run holds the memory of its
// intermediates, as a GPU's program does, so one that does not fit beside
// what is allocated fails, once, with RESOURCE_EXHAUSTED naming what it
// needs and what is free; a synchronous caller hears of it and the stream
// runs the next program; the memory is given back after every run.
func TestIntermediatesCountAgainstTheCapacity(t *testing.T) {
	const n = 1 << 16 // float32: 256 KiB a value
	b := ir.NewBuilder()
	ty := ir.TensorType{DType: ir.F32, Shape: ir.Shape{n}}
	x := b.Parameter(ty)
	sq := b.Binary(ir.OpMul, x, x)
	sum := b.Binary(ir.OpAdd, sq, x) // sq and sum are live at once
	p, err := b.Build(b.Binary(ir.OpMul, sum, x))
	if err != nil {
		t.Fatal(err)
	}
	// x and the result take 512 KiB of 768: the intermediates' 512 do not fit.
	d := New(Options{MemoryBytes: 768 << 10})
	exe, err := d.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := exe.(*executable).peak; got != 2*n*4 {
		t.Errorf("peak %d bytes, want %d (two intermediates live at once)", got, 2*n*4)
	}
	xp, err := d.Allocate(n * 4)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(xp)
	out, err := d.Allocate(n * 4)
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	used, _ := d.MemoryUsage()
	err = driver.ExecuteWait(s, "big", exe, []unsafe.Pointer{xp}, []unsafe.Pointer{out})
	if status.CodeOf(err) != status.ResourceExhausted {
		t.Fatalf("a program whose intermediates do not fit: %v (%v), want RESOURCE_EXHAUSTED", err, status.CodeOf(err))
	}
	for _, w := range []string{"a program (float32[65536]) -> (float32[65536])", "intermediates need 524288 bytes", "262144 of 786432 bytes free"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	if u, _ := d.MemoryUsage(); u != used || held(d) != 0 {
		t.Errorf("after the failed run: %d bytes mapped (was %d), %d held for runs", u, used, held(d))
	}
	// The stream carries on, and a program that fits runs.
	small := squarePlus(t, 4, 1)
	se, err := d.Compile(small)
	if err != nil {
		t.Fatal(err)
	}
	in := []float32{1, 2, 3, 4}
	res := make([]float32, 4)
	if err := driver.ExecuteWait(s, "small", se, ptrs(&in[0]), ptrs(&res[0])); err != nil {
		t.Fatalf("the next program after a failed one: %v", err)
	}
	if res[3] != 17 {
		t.Errorf("x*x+1 at 4 = %v", res[3])
	}
	if err := s.Synchronize(); err != nil {
		t.Errorf("the stream failed: %v", err)
	}
	// With room for them, the intermediates are held while it runs only.
	if err := d.Free(out); err != nil {
		t.Fatal(err)
	}
	outs := make([]float32, n)
	if err := driver.ExecuteWait(s, "big", exe, []unsafe.Pointer{xp}, ptrs(&outs[0])); err != nil {
		t.Fatalf("with 512 KiB free: %v", err)
	}
	if held(d) != 0 {
		t.Errorf("%d bytes still held after the run", held(d))
	}
}

// held is what the runs in progress hold for their intermediates.
func held(d *Driver) int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.working
}

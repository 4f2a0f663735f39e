package host

import (
	"math"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/metalplug/metalplug/backend/ir"
)

// TestExecutableCacheIsBounded: a run whose shapes never repeat (a new
// sequence length every step, say) compiles a new program each time; the
// driver keeps at most ExecutableCacheSize of them.
func TestExecutableCacheIsBounded(t *testing.T) {
	d := New(Options{})
	n := ExecutableCacheSize + 300
	for i := 1; i <= n; i++ {
		b := ir.NewBuilder()
		x := b.Parameter(ir.TensorType{DType: ir.F32, Shape: ir.Shape{i}})
		p, err := b.Build(b.Unary(ir.OpExp, x))
		if err != nil {
			t.Fatal(err)
		}
		e1, err := d.Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		if i == n {
			// The same program again is the cached executable.
			if e2, _ := d.Compile(p); e2 != e1 {
				t.Error("compiling a program twice made two executables")
			}
		}
	}
	if got := d.CachedExecutables(); got != ExecutableCacheSize {
		t.Fatalf("after %d distinct programs the driver holds %d executables, want %d", n, got, ExecutableCacheSize)
	}
}

// TestStreamDelay: with Options.StreamDelay a copy returns to the caller
// before it has happened, and Synchronize waits for it.
func TestStreamDelay(t *testing.T) {
	d := New(Options{StreamDelay: 50 * time.Millisecond})
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	src, dst := []byte{1, 2, 3, 4}, make([]byte, 4)
	s.Memcpy(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), 4)
	if dst[0] != 0 {
		t.Fatal("a delayed copy ran on the caller's thread")
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if dst[3] != 4 {
		t.Fatalf("after Synchronize the copy has not happened: %v", dst)
	}
}

// TestEveryOpHasAKernel: every IR op is registered by the file of its
// family, or is one of the steps plan handles itself.
func TestEveryOpHasAKernel(t *testing.T) {
	for _, op := range ir.Ops() {
		switch op {
		case ir.OpParameter, ir.OpConstant, ir.OpReshape, ir.OpGetResult:
			continue // steps of their own (plan)
		}
		if op.HasRegions() {
			continue // region steps (regions.go)
		}
		if _, ok := opKernels[op]; !ok {
			t.Errorf("%s has no host kernel: register one in the file of its family", op)
		}
	}
}

// recycleProgram is x -> neg -> exp -> (reshaped) neg -> + x: three
// intermediates of 4096 float32 each, one read through a reshape, the last
// result written in place. With zeroIterations, the exp also passes through
// a while loop that runs no iteration (which yields its operand itself).
func recycleProgram(t *testing.T, zeroIterations bool) *ir.Program {
	t.Helper()
	f := ir.TensorType{DType: ir.F32, Shape: ir.Shape{4096}}
	b := ir.NewBuilder()
	x := b.Parameter(f)
	a := b.Unary(ir.OpNeg, x)
	e := b.Unary(ir.OpExp, a)
	if zeroIterations {
		cb := ir.NewBuilder()
		cb.Parameter(f)
		cond, err := cb.Build(cb.Full(ir.TensorType{DType: ir.Bool}, 0))
		if err != nil {
			t.Fatal(err)
		}
		bb := ir.NewBuilder()
		body, err := bb.Build(bb.Unary(ir.OpNeg, bb.Parameter(f)))
		if err != nil {
			t.Fatal(err)
		}
		e = b.GetResult(b.While(cond, body, e), 0)
	}
	r := b.Reshape(e, ir.Shape{64, 64})
	n := b.Unary(ir.OpNeg, b.Reshape(r, ir.Shape{4096}))
	p, err := b.Build(b.Binary(ir.OpAdd, n, x))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestIntermediatesAreRecycled: a program's intermediates come from the
// buffers its earlier steps and runs are done with (never one still read
// through a reshape or by a loop), zeroed, and the results stay right run
// after run.
func TestIntermediatesAreRecycled(t *testing.T) {
	for _, zero := range []bool{false, true} {
		e, err := compile(recycleProgram(t, zero))
		if err != nil {
			t.Fatal(err)
		}
		recycled := 0
		for _, s := range e.steps {
			recycled += len(s.recycle)
		}
		// Both negations and the exp are recycled; the exp not when a loop
		// reads it.
		if want := map[bool]int{false: 3, true: 2}[zero]; recycled != want {
			t.Errorf("zero-iteration loop %v: %d buffers recycled per run, want %d", zero, recycled, want)
		}
		x := make([]float32, 4096)
		for i := range x {
			x[i] = float32(i%7) * 0.25
		}
		for run := range 3 {
			out := make([]float32, 4096)
			if err := e.run([]unsafe.Pointer{unsafe.Pointer(&x[0])}, []unsafe.Pointer{unsafe.Pointer(&out[0])}); err != nil {
				t.Fatal(err)
			}
			for i, v := range x {
				if want := -float32(math.Exp(float64(-v))) + v; math.Abs(float64(out[i]-want)) > 1e-6 {
					t.Fatalf("zero-iteration loop %v, run %d: element %d = %v, want %v", zero, run, i, out[i], want)
				}
			}
		}
	}
	// Warm, a run allocates no intermediate: far less than one 16 KiB buffer.
	if raceEnabled {
		return
	}
	e, err := compile(recycleProgram(t, false))
	if err != nil {
		t.Fatal(err)
	}
	x, out := make([]float32, 4096), make([]float32, 4096)
	args, results := []unsafe.Pointer{unsafe.Pointer(&x[0])}, []unsafe.Pointer{unsafe.Pointer(&out[0])}
	e.run(args, results)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		if err := e.run(args, results); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 10; per > 4096 {
		t.Errorf("a warm run allocates %d bytes", per)
	}
}

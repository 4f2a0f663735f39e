package host

import (
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

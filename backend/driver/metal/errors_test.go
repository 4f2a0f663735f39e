package metal

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/driver/host"
	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
	"github.com/metalplug/metalplug/backend/driver/metal/model"
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/split"
	"github.com/metalplug/metalplug/backend/status"
)

// The errors the Metal path raises carry their class (backend/status), which
// the frontends map to INVALID_ARGUMENT, RESOURCE_EXHAUSTED or INTERNAL,
// and name what ran, its shapes and dtypes. These run on the model.

func openModel(t *testing.T, opts ModelOptions) *Driver {
	t.Helper()
	d, err := OpenModel(opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func wantClass(t *testing.T, what string, err error, c status.Code, words ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want %v", what, c)
		return
	}
	if got := status.CodeOf(err); got != c {
		t.Errorf("%s: %v, class %v, want %v", what, err, got, c)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not say %q", what, err, w)
		}
	}
}

// TestTensorLimitsGoToTheHost: a value MPSGraph cannot hold (17
// dimensions; 2^31 elements or more) is no error of the caller's and must
// not reach MPSGraph, which would raise: the instructions that touch it run
// on the host, said with the type, and the program's result is right.
func TestTensorLimitsGoToTheHost(t *testing.T) {
	d := openModel(t, ModelOptions{})
	rank17 := append(slices.Repeat([]int{1}, 16), 4)
	b := ir.NewBuilder()
	x := b.Parameter(ir.TensorType{DType: ir.F32, Shape: ir.Shape{4}})
	y := b.Reshape(b.Binary(ir.OpMul, x, x), ir.Shape(rank17))
	sum := b.Reduce(y, ir.ReduceSum, slices.Collect(func(yield func(int) bool) {
		for i := range 17 {
			if !yield(i) {
				return
			}
		}
	}))
	p, err := b.Build(sum)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Compile(p); err == nil {
		t.Fatal("a program with a rank-17 value compiled for the GPU")
	} else if u, ok := driver.AsUnsupported(err); !ok || !strings.Contains(u.Reason, "17 dimensions; MPSGraph's tensors have at most 16") {
		t.Fatalf("Compile = %v, want an Unsupported naming the 17 dimensions", err)
	}
	places, err := d.Place(p)
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range p.Instrs {
		onHost := in.Op == ir.OpReshape || in.Op == ir.OpReduce
		if (places[i] != nil) != onHost {
			t.Errorf("Place: instruction %d (%s) = %v", i, in.Op, places[i])
		}
	}
	var warned []string
	sd := split.New(d, host.New(host.Options{}), split.Options{Warn: func(m string) { warned = append(warned, m) }})
	exe, err := sd.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sd.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in := []float32{1, 2, 3, 4}
	var out float32
	if err := driver.ExecuteWait(s, "sum", exe, []unsafe.Pointer{unsafe.Pointer(&in[0])}, []unsafe.Pointer{unsafe.Pointer(&out)}); err != nil {
		t.Fatal(err)
	}
	if out != 30 {
		t.Errorf("sum of squares = %v, want 30", out)
	}
	if len(warned) == 0 || !strings.Contains(strings.Join(warned, "\n"), "float32[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,4] has 17 dimensions") {
		t.Errorf("the host part was not said with the value's type: %q", warned)
	}
}

// TestOutOfMemoryIsResourceExhausted: a program whose intermediates do not
// fit beside what is allocated fails its command buffer for want of memory
// (the model's, as Metal's MTLCommandBufferErrorOutOfMemory): to a
// synchronous caller it is RESOURCE_EXHAUSTED naming the program's types,
// what it needs and what is free, and the stream runs the next program; on
// an asynchronous stream it fails the stream with the same class.
func TestOutOfMemoryIsResourceExhausted(t *testing.T) {
	const n = 1 << 16 // float32: 256 KiB a value
	d := openModel(t, ModelOptions{Options: Options{MemoryBytes: 1280 << 10}})
	b := ir.NewBuilder()
	ty := ir.TensorType{DType: ir.F32, Shape: ir.Shape{n}}
	x := b.Parameter(ty)
	e := b.Unary(ir.OpExp, x)
	l := b.Unary(ir.OpLog, b.Binary(ir.OpAdd, e, x))
	p, err := b.Build(b.Binary(ir.OpMul, l, e))
	if err != nil {
		t.Fatal(err)
	}
	exe, err := d.Compile(p)
	if err != nil {
		t.Fatal(err)
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
	defer d.Free(out)
	// 1 MiB of 1.25 allocated; the lowering's intermediates take 768 KiB.
	filler, err := d.Allocate(512 << 10)
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = driver.ExecuteWait(s, "big", exe, []unsafe.Pointer{xp}, []unsafe.Pointer{out})
	wantClass(t, "a program that does not fit", err, status.ResourceExhausted,
		"(float32[65536]) -> (float32[65536])", "Insufficient Memory", "free")
	if !errors.Is(err, gpu.ErrOutOfMemory) {
		t.Errorf("%v does not wrap gpu.ErrOutOfMemory", err)
	}
	// The stream goes on.
	small, err := d.Compile(addProgram(t, ir.F32, 4))
	if err != nil {
		t.Fatal(err)
	}
	a := []float32{1, 2, 3, 4}
	sum := make([]float32, 4)
	if err := driver.ExecuteWait(s, "small", small, []unsafe.Pointer{unsafe.Pointer(&a[0]), unsafe.Pointer(&a[0])}, []unsafe.Pointer{unsafe.Pointer(&sum[0])}); err != nil {
		t.Fatalf("the next program on the stream: %v", err)
	}
	if sum[3] != 8 {
		t.Errorf("4+4 = %v", sum[3])
	}
	// Asynchronously nobody hears of it but the stream.
	s.Execute(exe, []unsafe.Pointer{xp}, []unsafe.Pointer{out})
	wantClass(t, "the stream after an asynchronous run that did not fit", s.Synchronize(), status.ResourceExhausted, "Insufficient Memory")
	// With the room, it runs.
	if err := d.Free(filler); err != nil {
		t.Fatal(err)
	}
	s2, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := driver.ExecuteWait(s2, "big", exe, []unsafe.Pointer{xp}, []unsafe.Pointer{out}); err != nil {
		t.Errorf("with 768 KiB free: %v", err)
	}
	wantClass(t, "an allocation past the capacity", func() error { _, err := d.Allocate(2 << 20); return err }(),
		status.ResourceExhausted, "allocate 2097152 bytes", "of 1310720 bytes free")
}

// failingDevice is the model whose command buffers fail as a Mac's may
// ("Internal Error"), after their work is encoded.
type failingDevice struct{ gpu.Device }

func (d failingDevice) NewQueue() (gpu.Queue, error) {
	q, err := d.Device.NewQueue()
	return failingQueue{q}, err
}

type failingQueue struct{ gpu.Queue }

func (q failingQueue) NewCommandBuffer() (gpu.CommandBuffer, error) {
	cb, err := q.Queue.NewCommandBuffer()
	return failingBuffer{cb}, err
}

type failingBuffer struct{ gpu.CommandBuffer }

var errDevice = errors.New("Internal Error (0000000e:Internal Error)")

func (b failingBuffer) Commit(done func(error)) {
	b.CommandBuffer.Commit(func(error) { done(errDevice) })
}
func (b failingBuffer) CommitAndWait() error { b.CommandBuffer.CommitAndWait(); return errDevice }

// TestDeviceFailureIsInternal: a command buffer the device fails is the
// plugin's error (INTERNAL), named by the program's types, since Metal's
// own text says nothing of what ran; it fails the stream.
func TestDeviceFailureIsInternal(t *testing.T) {
	d, err := newDriver(failingDevice{model.New(model.Options{})}, "metal-model", Options{})
	if err != nil {
		t.Fatal(err)
	}
	exe, err := d.Compile(addProgram(t, ir.I32, 3))
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := []int32{1, 2, 3}
	var sum [3]int32
	err = driver.ExecuteWait(s, "add", exe, []unsafe.Pointer{unsafe.Pointer(&a[0]), unsafe.Pointer(&a[0])}, []unsafe.Pointer{unsafe.Pointer(&sum[0])})
	wantClass(t, "a failed command buffer", err, status.Internal, "running a program (int32[3], int32[3]) -> (int32[3])", "Internal Error")
	if s.Err() == nil {
		t.Error("a device failure left the stream healthy")
	}
}

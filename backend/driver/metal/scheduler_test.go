package metal

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
	"github.com/metalplug/metalplug/backend/driver/metal/model"
	"github.com/metalplug/metalplug/backend/ir"
)

// The stream scheduler (flights, events, staging, completion) against a
// queue that reports completions out of order, late, and sometimes as
// failures: the work itself runs in commit order, as a Metal queue runs it,
// but each done callback is held for a random time, so a later buffer's
// completion often arrives first.

// lateDevice is the model with lateQueues.
type lateDevice struct {
	gpu.Device
	rnd  *rand.Rand
	mu   sync.Mutex
	fail func(n int) bool // which command buffers (numbered from 1) fail

	committed atomic.Int64
	completed atomic.Int64 // done callbacks delivered
}

func (d *lateDevice) NewQueue() (gpu.Queue, error) {
	q, err := d.Device.NewQueue()
	return &lateQueue{Queue: q, d: d}, err
}

func (d *lateDevice) delay() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return time.Duration(d.rnd.IntN(2000)) * time.Microsecond
}

type lateQueue struct {
	gpu.Queue
	d *lateDevice
}

func (q *lateQueue) NewCommandBuffer() (gpu.CommandBuffer, error) {
	cb, err := q.Queue.NewCommandBuffer()
	return &lateBuffer{CommandBuffer: cb, d: q.d}, err
}

type lateBuffer struct {
	gpu.CommandBuffer
	d *lateDevice
}

func (b *lateBuffer) Commit(done func(error)) {
	n := int(b.d.committed.Add(1))
	failed := b.d.fail != nil && b.d.fail(n)
	wait := b.d.delay()
	b.CommandBuffer.Commit(func(err error) {
		go func() {
			time.Sleep(wait)
			if err == nil && failed {
				err = fmt.Errorf("injected failure of command buffer %d", n)
			}
			b.d.completed.Add(1)
			if done != nil {
				done(err)
			}
		}()
	})
}

func lateDriver(t *testing.T, fail func(int) bool) (*Driver, *lateDevice) {
	t.Helper()
	dev := &lateDevice{Device: model.New(model.Options{}), rnd: rand.New(rand.NewPCG(3, 4)), fail: fail}
	d, err := newDriver(dev, "metal-model", Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d, dev
}

// addOne is x + 1 over n float32s.
func addOne(t *testing.T, d *Driver, n int) driver.Executable {
	t.Helper()
	b := ir.NewBuilder()
	tt := ir.TensorType{DType: ir.F32, Shape: ir.Shape{n}}
	x := b.Parameter(tt)
	one := b.BroadcastInDim(b.Constant(ir.TensorType{DType: ir.F32}, float32Bytes(1)), tt.Shape, nil)
	p, err := b.Build(b.Binary(ir.OpAdd, x, one))
	if err != nil {
		t.Fatal(err)
	}
	exe, err := d.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func float32Bytes(v float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&v)), 4)[:4:4]
}

// TestSchedulerOutOfOrder chains executions through one buffer in place of
// another, records events between them, and reads results through host
// memory (staged) and device memory: every value must be the chain's, every
// event complete only once the buffers before it are, however late their
// completions arrive.
func TestSchedulerOutOfOrder(t *testing.T) {
	d, dev := lateDriver(t, nil)
	const n, steps = 7, 40
	exe := addOne(t, d, n)
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, err := d.Allocate(4 * n * 2)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(a)
	bufs := []unsafe.Pointer{a, unsafe.Add(a, 4*n)} // the second at an interior offset
	s.Memset(a, 0, 8*n)
	for i := range steps {
		s.Execute(exe, []unsafe.Pointer{bufs[i%2]}, []unsafe.Pointer{bufs[(i+1)%2]})
		if i%10 == 9 {
			ev := d.NewEvent()
			s.Record(ev)
			before := int64(i + 1) // buffers committed by now: one per execution, plus none for memset
			if err := ev.Wait(); err != nil {
				t.Fatalf("event after step %d: %v", i, err)
			}
			if got := dev.completed.Load(); got < before {
				t.Fatalf("event after step %d completed with %d of %d command buffers done", i, got, before)
			}
		}
	}
	// Staged: a result in Go memory, copied out only after completion.
	var out [n]float32
	s.Execute(exe, []unsafe.Pointer{bufs[steps%2]}, []unsafe.Pointer{unsafe.Pointer(&out[0])})
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		if v != steps+1 {
			t.Errorf("element %d = %v after %d chained steps and one more, want %d", i, v, steps, steps+1)
		}
	}
}

// TestSchedulerFailure: a command buffer that fails fails the stream: the
// work after it reports the failure, an event recorded after it fails, and
// Synchronize returns the buffer's error.
func TestSchedulerFailure(t *testing.T) {
	d, _ := lateDriver(t, func(n int) bool { return n == 5 })
	const n = 3
	exe := addOne(t, d, n)
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, err := d.Allocate(8 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(a)
	for i := range 8 {
		s.Execute(exe, []unsafe.Pointer{a}, []unsafe.Pointer{unsafe.Add(a, 4*n*((i+1)%2))})
	}
	ev := d.NewEvent()
	s.Record(ev)
	if err := ev.Wait(); err == nil {
		t.Error("an event recorded after a failed command buffer completed without error")
	}
	err = s.Synchronize()
	if err == nil || !strings.Contains(err.Error(), "injected failure of command buffer 5") {
		t.Fatalf("Synchronize = %v, want the injected failure", err)
	}
	if !errors.Is(s.Err(), err) && s.Err().Error() != err.Error() {
		t.Errorf("Err = %v, Synchronize = %v", s.Err(), err)
	}
}

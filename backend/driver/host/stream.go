package host

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
)

// ErrStreamClosed is what a stream reports once Close has been called.
var ErrStreamClosed = driver.ErrStreamClosed

// stream is the host driver's stream: the shared in-order queue
// (driver.Queue), with small work run on the caller's thread when the
// stream is idle.
type stream struct {
	d  *Driver
	q  *driver.Queue
	id uint64 // for the trace
}

var _ driver.Stream = (*stream)(nil)

func newStream(d *Driver) *stream {
	return &stream{d: d, q: driver.NewQueue("host", driver.QueueHooks{}), id: driver.NewStreamID()}
}

// inlineWork is the most work (see executable.work) that Execute runs on
// the caller's thread when the stream is idle: about a microsecond, far less
// than handing the task to the stream's goroutine and, in synchronous mode,
// being woken when it is done.
const inlineWork = 1 << 14

// delay enqueues the wait of Options.StreamDelay before a piece of work.
func (s *stream) delay() {
	if d := s.d.delay; d > 0 {
		s.q.Run(func() error { time.Sleep(d); return nil })
	}
}

func (s *stream) Execute(exe driver.Executable, args, results []unsafe.Pointer) {
	s.ExecuteNamed("", exe, args, results)
}

// ExecuteNamed is Execute, with the name the trace records the run by
// (driver.NamedExecutor); the times are those of the run itself, on the
// stream's goroutine or inline.
func (s *stream) ExecuteNamed(name string, exe driver.Executable, args, results []unsafe.Pointer) {
	s.delay()
	// A small program on an idle stream runs right here: the order is the
	// same (nothing is ahead of it), and it returns about as soon.
	if e, ok := exe.(*executable); ok && e.work <= inlineWork {
		if ran, _ := s.q.Inline(func() error { return s.run(name, e, args, results) }); ran {
			return
		}
	}
	// Copy the slices: the caller may reuse them as soon as we return.
	args = append([]unsafe.Pointer(nil), args...)
	results = append([]unsafe.Pointer(nil), results...)
	s.q.Run(func() error {
		e, ok := exe.(*executable)
		if !ok {
			return fmt.Errorf("host: execute: executable %T was not compiled by the host driver", exe)
		}
		return s.run(name, e, args, results)
	})
}

// run executes e, timed for the trace, holding the memory its
// intermediates need while it runs.
func (s *stream) run(name string, e *executable, args, results []unsafe.Pointer) error {
	if err := s.d.reserve(e); err != nil {
		return err
	}
	defer s.d.release(e)
	return driver.Timed(s.id, driver.TraceKernel, name, func() error { return e.run(args, results) })
}

// ExecuteWait runs exe and waits for it (driver.WaitingExecutor): on an
// idle stream, whatever its size, on the caller's thread, which would only
// wait for the worker otherwise.
//
// A program whose intermediates the device has no room for fails with a
// ResourceExhausted error that does not fail the stream (Queue.RunWait).
func (s *stream) ExecuteWait(name string, exe driver.Executable, args, results []unsafe.Pointer) error {
	if e, ok := exe.(*executable); ok {
		s.delay()
		return s.q.RunWait(func() error { return s.run(name, e, args, results) })
	}
	s.ExecuteNamed(name, exe, args, results)
	return s.Synchronize()
}

// inlineCopy is the largest Memcpy done on the caller's thread when the
// stream is idle.
const inlineCopy = 64 << 10

func memcpyTask(dst, src unsafe.Pointer, n int) error {
	if n < 0 || (n > 0 && (dst == nil || src == nil)) {
		return fmt.Errorf("host: memcpy %d bytes from %p to %p: invalid arguments", n, src, dst)
	}
	if n > 0 {
		copy(unsafe.Slice((*byte)(dst), n), unsafe.Slice((*byte)(src), n))
	}
	return nil
}

func (s *stream) Memcpy(dst, src unsafe.Pointer, n int) {
	s.delay()
	if n <= inlineCopy {
		if ran, _ := s.q.Inline(func() error {
			return driver.Timed(s.id, driver.TraceCopy, s.copyName(dst, src), func() error { return memcpyTask(dst, src, n) })
		}); ran {
			return
		}
	}
	s.q.Run(func() error {
		return driver.Timed(s.id, driver.TraceCopy, s.copyName(dst, src), func() error { return memcpyTask(dst, src, n) })
	})
}

// copyName says which way a copy went, for the trace: device memory is
// what this driver allocated.
func (s *stream) copyName(dst, src unsafe.Pointer) string {
	if !driver.Tracing() {
		return ""
	}
	onDevice := func(p unsafe.Pointer) bool { _, _, _, ok := s.d.Lookup(p); return ok }
	return driver.CopyName(onDevice(src), onDevice(dst))
}

func (s *stream) Memset(dst unsafe.Pointer, b byte, n int) {
	s.delay()
	s.q.Run(func() error {
		return driver.Timed(s.id, driver.TraceMemset, "Memset", func() error { return prefix("host", driver.Fill(dst, b, n)) })
	})
}

func (s *stream) Memset32(dst unsafe.Pointer, v uint32, n int) {
	s.delay()
	s.q.Run(func() error {
		return driver.Timed(s.id, driver.TraceMemset, "Memset32", func() error { return prefix("host", driver.Fill32(dst, v, n)) })
	})
}

// prefix names the driver in an error from the shared helpers.
func prefix(name string, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func (s *stream) Record(ev driver.Event) {
	e, ok := ev.(*event)
	if !ok {
		s.q.Run(func() error { return fmt.Errorf("host: record: event %T was not made by the host driver", ev) })
		return
	}
	m := driver.NewMark()
	// The mark moves at enqueue time, as cudaEventRecord does: from now on
	// the event is pending and waiters wait for this point of the stream.
	e.Set(m)
	s.q.RecordMark(m)
}

func (s *stream) Wait(ev driver.Event) {
	e, ok := ev.(*event)
	if !ok {
		s.q.Run(func() error { return fmt.Errorf("host: wait: event %T was not made by the host driver", ev) })
		return
	}
	// The mark is captured now, so that a later Record of the same event
	// does not change what this Wait waits for.
	s.q.WaitMark(e.Current())
}

func (s *stream) HostCallback(fn func() error) {
	s.q.Run(func() error {
		if err := fn(); err != nil {
			return fmt.Errorf("host: host callback: %w", err)
		}
		return nil
	})
}

// Synchronize waits for the tasks enqueued before the call, not for tasks
// other threads add meanwhile, so it cannot be starved by a busy producer.
func (s *stream) Synchronize() error { return s.q.Synchronize() }

func (s *stream) Err() error { return s.q.Err() }

// Close drains the queue, stops the goroutine and returns the stream's first
// error (nil if all work succeeded). Closing twice reports ErrStreamClosed.
func (s *stream) Close() error { return s.q.Close() }

// event is the shared implementation of CUDA-style events
// (backend/driver/event.go).
// event follows CUDA: never recorded means complete; Record moves the mark.
type event = driver.MarkEvent

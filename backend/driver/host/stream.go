package host

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
)

// ErrStreamClosed is what a stream reports once Close has been called.
var ErrStreamClosed = errors.New("host: stream closed")

// task is one unit of stream work. Exactly one of its fields is set.
type task struct {
	run    func() error // data work; skipped once the stream has failed
	record *mark        // completes the mark, with the stream's error if any
	wait   *mark        // blocks the stream until the mark completes
}

// stream is an in-order queue drained by one goroutine. The queue is an
// unbounded slice rather than a channel: a stream blocked in Wait must never
// make enqueueing block, or two threads feeding two streams that wait on each
// other's events would deadlock.
type stream struct {
	d *Driver

	mu       sync.Mutex
	work     sync.Cond // signalled when tasks arrive or the stream closes
	progress sync.Cond // signalled whenever a task finishes
	queue    []task
	spare    []task // the worker's previous batch, reused to spare allocations
	enqueued uint64 // tasks ever enqueued
	done     uint64 // tasks ever finished
	err      error  // first failure
	closed   bool
	exited   bool
	// inline is set while a caller runs a small task on its own thread
	// (see tryInline); the worker starts nothing meanwhile.
	inline bool
}

var _ driver.Stream = (*stream)(nil)

func newStream(d *Driver) *stream {
	s := &stream{d: d}
	s.work.L = &s.mu
	s.progress.L = &s.mu
	go s.loop()
	return s
}

// loop takes the whole queue at once, so that producers and the worker touch
// the lock once per batch rather than once per task.
func (s *stream) loop() {
	// Kernels read and write raw pointers from the frontend; a bad one should
	// fail the stream, not kill the process.
	debug.SetPanicOnFault(true)
	s.mu.Lock()
	for {
		for (len(s.queue) == 0 && !s.closed) || s.inline {
			s.work.Wait()
		}
		if len(s.queue) == 0 {
			s.exited = true
			s.progress.Broadcast()
			s.mu.Unlock()
			return
		}
		batch := s.queue
		s.queue = s.spare[:0]
		s.spare = nil
		s.mu.Unlock()
		for i := range batch {
			s.runTask(&batch[i])
			batch[i] = task{} // drop references to closures and buffers
			s.mu.Lock()
			s.done++
			s.progress.Broadcast()
			s.mu.Unlock()
		}
		s.mu.Lock()
		s.spare = batch[:0]
	}
}

func (s *stream) runTask(t *task) {
	s.mu.Lock()
	failed := s.err
	s.mu.Unlock()
	switch {
	case t.record != nil:
		t.record.Complete(failed)
	case failed != nil:
		// Skip data work and waits after a failure: the results would be
		// garbage anyway, and records must still complete (above).
	case t.wait != nil:
		if err := t.wait.Wait(); err != nil {
			// The work behind the event failed, so whatever this stream
			// does next would read data that was never produced.
			s.fail(fmt.Errorf("host: stream waited on an event whose stream failed: %w", err))
		}
	case t.run != nil:
		if err := safeCall(t.run); err != nil {
			s.fail(err)
		}
	}
}

func (s *stream) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

// safeCall runs fn, turning a panic into an error so that neither a kernel
// bug nor a host callback can take the process down.
func safeCall(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("host: stream task panicked: %v", r)
		}
	}()
	return fn()
}

// enqueue appends t, or reports false if the stream is closed.
func (s *stream) enqueue(t task) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.queue = append(s.queue, t)
	s.enqueued++
	s.work.Signal()
	return true
}

// inlineWork is the most work (see executable.work) that Execute runs on
// the caller's thread when the stream is idle: about a microsecond, far less
// than handing the task to the stream's goroutine and, in synchronous mode,
// being woken when it is done.
const inlineWork = 1 << 14

// beginInline claims an idle stream for one task run on the caller's
// thread, counting it as enqueued, and reports the stream's error so far.
// It fails when the stream has queued or running work (which must come
// first) or is closed.
func (s *stream) beginInline() (ok bool, failed error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.inline || s.enqueued != s.done {
		return false, nil
	}
	s.inline = true
	s.enqueued++
	return true, s.err
}

// endInline finishes what beginInline started.
func (s *stream) endInline(err error) {
	s.mu.Lock()
	if err != nil && s.err == nil {
		s.err = err
	}
	s.inline = false
	s.done++
	s.progress.Broadcast()
	if len(s.queue) > 0 || s.closed {
		s.work.Signal() // work arrived meanwhile, or Close is waiting for the worker
	}
	s.mu.Unlock()
}

// runInline executes e on the calling thread, turning a panic into an error
// as the worker would.
func runInline(e *executable, args, results []unsafe.Pointer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("host: stream task panicked: %v", r)
		}
	}()
	return e.run(args, results)
}

func (s *stream) Execute(exe driver.Executable, args, results []unsafe.Pointer) {
	// A small program on an idle stream runs right here: the order is the
	// same (nothing is ahead of it), and it returns about as soon.
	if e, ok := exe.(*executable); ok && e.work <= inlineWork {
		if ok, failed := s.beginInline(); ok {
			var err error
			if failed == nil {
				err = runInline(e, args, results)
			}
			s.endInline(err)
			return
		}
	}
	// Copy the slices: the caller may reuse them as soon as we return.
	args = append([]unsafe.Pointer(nil), args...)
	results = append([]unsafe.Pointer(nil), results...)
	s.enqueue(task{run: func() error {
		e, ok := exe.(*executable)
		if !ok {
			return fmt.Errorf("host: execute: executable %T was not compiled by the host driver", exe)
		}
		return e.run(args, results)
	}})
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

// memcpyInline is memcpyTask on the caller's thread: a bad pointer's fault
// becomes an error, as on the stream's goroutine.
func memcpyInline(dst, src unsafe.Pointer, n int) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("host: stream task panicked: %v", r)
		}
	}()
	return memcpyTask(dst, src, n)
}

func (s *stream) Memcpy(dst, src unsafe.Pointer, n int) {
	if n <= inlineCopy {
		if ok, failed := s.beginInline(); ok {
			var err error
			if failed == nil {
				err = memcpyInline(dst, src, n)
			}
			s.endInline(err)
			return
		}
	}
	s.enqueue(task{run: func() error { return memcpyTask(dst, src, n) }})
}

func (s *stream) Memset(dst unsafe.Pointer, b byte, n int) {
	s.enqueue(task{run: func() error { return prefix("host", driver.Fill(dst, b, n)) }})
}

func (s *stream) Memset32(dst unsafe.Pointer, v uint32, n int) {
	s.enqueue(task{run: func() error { return prefix("host", driver.Fill32(dst, v, n)) }})
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
		s.enqueue(task{run: func() error {
			return fmt.Errorf("host: record: event %T was not made by the host driver", ev)
		}})
		return
	}
	m := driver.NewMark()
	// The mark moves at enqueue time, as cudaEventRecord does: from now on
	// the event is pending and waiters wait for this point of the stream.
	e.Set(m)
	// On an idle stream that point is already reached.
	s.mu.Lock()
	idle := !s.closed && !s.inline && s.enqueued == s.done
	if idle {
		m.Complete(s.err)
	}
	s.mu.Unlock()
	if idle {
		return
	}
	if !s.enqueue(task{record: m}) {
		// Nobody will ever reach this point; fail the mark rather than leave
		// waiters hanging or let them believe the work was done.
		m.Complete(ErrStreamClosed)
	}
}

func (s *stream) Wait(ev driver.Event) {
	e, ok := ev.(*event)
	if !ok {
		s.enqueue(task{run: func() error {
			return fmt.Errorf("host: wait: event %T was not made by the host driver", ev)
		}})
		return
	}
	// Capture the mark now, so that a later Record of the same event does
	// not change what this Wait waits for. A never-recorded event has no mark.
	if m := e.Current(); m != nil {
		if m.Succeeded() {
			return // nothing to wait for, and no error to pass on
		}
		s.enqueue(task{wait: m})
	}
}

func (s *stream) HostCallback(fn func() error) {
	s.enqueue(task{run: func() error {
		if err := fn(); err != nil {
			return fmt.Errorf("host: host callback: %w", err)
		}
		return nil
	}})
}

// Synchronize waits for the tasks enqueued before the call, not for tasks
// other threads add meanwhile, so it cannot be starved by a busy producer.
func (s *stream) Synchronize() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	target := s.enqueued
	for s.done < target {
		s.progress.Wait()
	}
	return s.errLocked()
}

func (s *stream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errLocked()
}

func (s *stream) errLocked() error {
	if s.err == nil && s.closed {
		return ErrStreamClosed
	}
	return s.err
}

// Close drains the queue, stops the goroutine and returns the stream's first
// error (nil if all work succeeded). Closing twice reports ErrStreamClosed.
func (s *stream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.errLocked()
	}
	s.closed = true
	s.work.Signal()
	for !s.exited {
		s.progress.Wait()
	}
	return s.err
}

// mark and event are the shared implementation of CUDA-style events
// (backend/driver/event.go).
type mark = driver.Mark

// event follows CUDA: never recorded means complete; Record moves the mark.
type event = driver.MarkEvent

//go:build darwin

package metal

import (
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"unsafe"

	"github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/macos/mps"
	"github.com/progrium/darwinkit/objc"

	"github.com/metalplug/metalplug/backend/driver"
)

// ErrStreamClosed is what a stream reports once Close has been called.
var ErrStreamClosed = errors.New("metal: stream closed")

// task is one unit of stream work. Exactly one field is set.
type task struct {
	cpu    func() error        // runs on the stream's goroutine after the GPU work before it
	gpu    func(*stream) error // encodes and commits command buffers, without waiting
	record *mark               // completes the mark once everything before it has run
	wait   *mark               // holds later work until the mark completes
}

// flight is one committed command buffer that has not completed yet.
type flight struct {
	done chan struct{}
	err  error // set before done closes
}

// stream is an in-order queue drained by one goroutine, like the host
// driver's, feeding one MTLCommandQueue. Command buffers of one queue run in
// commit order, so GPU tasks are committed without waiting and pipeline;
// a CPU task waits for the flights before it, since it may read what they
// write or overwrite what they read. The queue is an unbounded slice: a
// stream blocked in Wait must never make enqueueing block.
type stream struct {
	d     *Driver
	queue metal.CommandQueueObject

	mu       sync.Mutex
	work     sync.Cond // tasks arrived or the stream closed
	progress sync.Cond // a task finished
	tasks    []task
	enqueued uint64
	done     uint64
	err      error // first failure
	closed   bool
	exited   bool
	flights  []*flight // committed, not completed, in commit order
}

var _ driver.Stream = (*stream)(nil)

func newStream(d *Driver) (*stream, error) {
	s := &stream{d: d}
	s.work.L = &s.mu
	s.progress.L = &s.mu
	withPool(func() error { s.queue = d.device.NewCommandQueue(); return nil })
	if s.queue.Ptr() == nil {
		return nil, fmt.Errorf("metal: the device refused a new command queue")
	}
	go s.loop()
	return s, nil
}

func (s *stream) loop() {
	// Copies read and write the frontend's raw pointers; a bad one should
	// fail the stream, not kill the process.
	debug.SetPanicOnFault(true)
	s.mu.Lock()
	for {
		for len(s.tasks) == 0 && !s.closed {
			s.work.Wait()
		}
		if len(s.tasks) == 0 {
			s.mu.Unlock()
			s.waitFlights() // Close returns only after the GPU is done too
			s.mu.Lock()
			s.exited = true
			s.progress.Broadcast()
			s.mu.Unlock()
			s.queue.Release()
			return
		}
		batch := s.tasks
		s.tasks = nil
		s.mu.Unlock()
		for i := range batch {
			s.runTask(&batch[i])
			batch[i] = task{}
			s.mu.Lock()
			s.done++
			s.progress.Broadcast()
			s.mu.Unlock()
		}
		s.mu.Lock()
	}
}

func (s *stream) runTask(t *task) {
	failed := s.Err()
	if errors.Is(failed, ErrStreamClosed) {
		failed = nil // closing drains the queue normally
	}
	switch {
	case t.record != nil:
		s.record(t.record, failed)
	case failed != nil:
		// Skip data work and waits after a failure; records still complete.
	case t.wait != nil:
		if err := t.wait.Wait(); err != nil {
			s.fail(fmt.Errorf("metal: stream waited on an event whose stream failed: %w", err))
		}
	case t.cpu != nil:
		if s.waitFlights() != nil {
			return // the stream failed in the GPU work before this task
		}
		if err := safeCall(t.cpu); err != nil {
			s.fail(err)
		}
	case t.gpu != nil:
		if err := withPool(func() error { return t.gpu(s) }); err != nil {
			s.fail(err)
		}
	}
}

// record completes m once the GPU work committed so far has completed, from
// a goroutine, so that the stream goes on encoding meanwhile. The mark fails
// if the stream had failed before the record or a flight before it fails.
func (s *stream) record(m *mark, failed error) {
	s.mu.Lock()
	pending := slices.Clone(s.flights)
	s.mu.Unlock()
	if len(pending) == 0 {
		m.Complete(failed)
		return
	}
	go func() {
		err := failed
		for _, f := range pending {
			<-f.done
			if err == nil {
				err = f.err
			}
		}
		m.Complete(err)
	}()
}

// waitFlights blocks until every command buffer committed so far has
// completed and returns the first failure among them.
func (s *stream) waitFlights() error {
	s.mu.Lock()
	pending := slices.Clone(s.flights)
	s.mu.Unlock()
	var first error
	for _, f := range pending {
		<-f.done
		if first == nil {
			first = f.err
		}
	}
	return first
}

// newCommandBuffer makes an MPSCommandBuffer on the stream's queue: MPSGraph
// encodes into one, and it passes every MTLCommandBuffer message (blits,
// handlers, commit) on to the command buffer it wraps.
func (s *stream) newCommandBuffer() (mps.CommandBuffer, error) {
	cb := msg[mps.CommandBuffer](mps.CommandBufferClass, "commandBufferFromCommandQueue:", s.queue)
	if cb.Ptr() == nil {
		return cb, fmt.Errorf("metal: the command queue refused a command buffer")
	}
	return cb, nil
}

// commit commits cb as a flight. after runs from the completion handler,
// before the flight counts as done, with the command buffer's error if it
// failed: it copies staged results out and releases what the encoding kept
// alive. An error from after fails the stream too.
func (s *stream) commit(cb mps.CommandBuffer, after func(error) error) {
	f := &flight{done: make(chan struct{})}
	s.mu.Lock()
	s.flights = append(s.flights, f)
	s.mu.Unlock()
	mcb := metal.CommandBufferObject{Object: cb.Object}
	mcb.AddCompletedHandler(func(c metal.CommandBufferObject) {
		var err error
		if c.Status() == metal.CommandBufferStatusError {
			err = fmt.Errorf("metal: command buffer failed: %s", errorText(c.Error(), "no error description"))
		}
		if after != nil {
			if e := safeCall(func() error { return after(err) }); err == nil {
				err = e
			}
		}
		if err != nil {
			s.fail(err)
		}
		f.err = err
		s.mu.Lock()
		if i := slices.Index(s.flights, f); i >= 0 {
			s.flights = slices.Delete(s.flights, i, i+1)
		}
		s.mu.Unlock()
		close(f.done)
	})
	mcb.Commit()
}

func (s *stream) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

// safeCall turns a panic into an error, so that neither a lowering bug, a
// bad frontend pointer nor a host callback takes the process down.
func safeCall(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("metal: stream task panicked: %v", r)
		}
	}()
	return fn()
}

func (s *stream) enqueue(t task) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.tasks = append(s.tasks, t)
	s.enqueued++
	s.work.Signal()
	return true
}

// Execute runs exe: on the GPU, or on the CPU through the host driver for a
// program that needs something not lowered (the pointers are unified memory,
// so the host driver reads and writes them as they are).
func (s *stream) Execute(exe driver.Executable, args, results []unsafe.Pointer) {
	args = slices.Clone(args)
	results = slices.Clone(results)
	e, ok := exe.(*executable)
	switch {
	case !ok:
		s.enqueue(task{cpu: func() error {
			return fmt.Errorf("metal: execute: executable %T was not compiled by the Metal driver", exe)
		}})
	case e.cpu != nil:
		s.enqueue(task{cpu: func() error {
			if err := s.d.cpu.Run(e.cpu, args, results); err != nil {
				return fmt.Errorf("metal: execute on the CPU (%s): %w", e.fallback, err)
			}
			return nil
		}})
	default:
		s.enqueue(task{gpu: func(s *stream) error { return s.encodeRun(e, args, results) }})
	}
}

// Memcpy copies on the GPU when both sides are device memory and the blit
// encoder's macOS alignment rule (offsets and size multiples of 4) holds;
// otherwise on the CPU, after the GPU work before it.
func (s *stream) Memcpy(dst, src unsafe.Pointer, n int) {
	if n > 0 && dst != nil && src != nil {
		da, doff, dok := s.d.mem.lookup(dst)
		sa, soff, sok := s.d.mem.lookup(src)
		if dok && sok && doff%4 == 0 && soff%4 == 0 && n%4 == 0 &&
			doff+n <= len(da.mem) && soff+n <= len(sa.mem) {
			s.enqueue(task{gpu: func(s *stream) error {
				cb, err := s.newCommandBuffer()
				if err != nil {
					return err
				}
				blit := msg[metal.BlitCommandEncoderObject](cb, "blitCommandEncoder")
				// darwinkit's binding would wrap the buffers in Go adaptor
				// objects (see msg); the blit needs the buffers themselves.
				msg[objc.Void](blit, "copyFromBuffer:sourceOffset:toBuffer:destinationOffset:size:",
					sa.buf, uint(soff), da.buf, uint(doff), uint(n))
				msg[objc.Void](blit, "endEncoding")
				s.commit(cb, nil)
				return nil
			}})
			return
		}
	}
	s.enqueue(task{cpu: func() error {
		if n < 0 || (n > 0 && (dst == nil || src == nil)) {
			return fmt.Errorf("metal: memcpy %d bytes from %p to %p: invalid arguments", n, src, dst)
		}
		if n > 0 {
			copy(unsafe.Slice((*byte)(dst), n), unsafe.Slice((*byte)(src), n))
		}
		return nil
	}})
}

func (s *stream) Memset(dst unsafe.Pointer, b byte, n int) {
	s.enqueue(task{cpu: func() error { return prefix("metal", driver.Fill(dst, b, n)) }})
}

func (s *stream) Memset32(dst unsafe.Pointer, v uint32, n int) {
	s.enqueue(task{cpu: func() error { return prefix("metal", driver.Fill32(dst, v, n)) }})
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
		s.enqueue(task{cpu: func() error {
			return fmt.Errorf("metal: record: event %T was not made by the Metal driver", ev)
		}})
		return
	}
	m := driver.NewMark()
	e.Set(m) // the mark moves at enqueue time, as cudaEventRecord's does
	if !s.enqueue(task{record: m}) {
		m.Complete(ErrStreamClosed)
	}
}

func (s *stream) Wait(ev driver.Event) {
	e, ok := ev.(*event)
	if !ok {
		s.enqueue(task{cpu: func() error {
			return fmt.Errorf("metal: wait: event %T was not made by the Metal driver", ev)
		}})
		return
	}
	if m := e.Current(); m != nil { // captured now: a later Record does not move this Wait
		s.enqueue(task{wait: m})
	}
}

func (s *stream) HostCallback(fn func() error) {
	s.enqueue(task{cpu: func() error {
		if err := fn(); err != nil {
			return fmt.Errorf("metal: host callback: %w", err)
		}
		return nil
	}})
}

// Synchronize waits for the tasks enqueued before the call and for the
// command buffers they committed.
func (s *stream) Synchronize() error {
	s.mu.Lock()
	target := s.enqueued
	for s.done < target {
		s.progress.Wait()
	}
	s.mu.Unlock()
	s.waitFlights()
	return s.Err()
}

func (s *stream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil && s.closed {
		return ErrStreamClosed
	}
	return s.err
}

// Close drains the queue and the GPU, stops the goroutine and returns the
// stream's first error. Closing twice reports ErrStreamClosed.
func (s *stream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		if s.err == nil {
			return ErrStreamClosed
		}
		return s.err
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
//
// Events are Go-side marks completed from command-buffer completion handlers
// rather than MTLSharedEvents. A stream interleaves GPU work with CPU work
// (host callbacks, copies from host memory, staged tensors), so the point an
// event marks must be observable by the CPU anyway; a mark also carries the
// failure of the stream that recorded it (EventError), which a shared event's
// counter cannot; and CUDA's rule that a Wait holds the record it follows,
// even if another stream re-records the event, is one pointer per Wait
// rather than a protocol over signal values shared by several queues. The
// cost is that a cross-stream Wait holds the waiting stream's encoding until
// the recording stream's command buffers complete, instead of letting the
// GPU order the two queues itself.
type event = driver.MarkEvent

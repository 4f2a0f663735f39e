package metal

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
	"github.com/metalplug/metalplug/backend/status"
)

// ErrStreamClosed is what a stream reports once Close has been called.
var ErrStreamClosed = driver.ErrStreamClosed

// flight is one committed command buffer that has not completed yet, and
// what its execution keeps until then.
type flight struct {
	done chan struct{}
	err  error // set before done closes
	run  run   // scratch buffers and staged results, finished on completion
	// then run once it has completed (afterGPU; under the stream's lock
	// until then).
	then []func()
	// spare holds a small program's bindings, sparing an allocation per
	// execution.
	spare [6]gpu.Data
	// exe is the program the buffer runs (nil for a copy), named in its
	// failure: a command buffer's own error says nothing of what it ran.
	exe *executable
}

// newFlight is a flight to commit; commit makes its done channel, which a
// buffer waited for at once (commitWait) never needs.
func newFlight() *flight { return &flight{} }

// bindings is room for n bindings, in the flight itself when they fit.
func (f *flight) bindings(n int) []gpu.Data {
	if n <= len(f.spare) {
		return f.spare[:n]
	}
	return make([]gpu.Data, n)
}

// stream is the shared in-order queue (driver.Queue) feeding one command
// queue (gpu.Queue: an MTLCommandQueue, or the model's). Command buffers of one queue run in commit order, so GPU
// tasks are committed without waiting and pipeline; a CPU task waits for the
// flights before it, since it may read what they write or overwrite what
// they read; a record completes when the flights before it have.
type stream struct {
	d     *Driver
	queue gpu.Queue
	q     *driver.Queue

	mu      sync.Mutex
	flights []*flight // committed, not completed, in commit order

	id uint64 // for the trace
}

var _ driver.Stream = (*stream)(nil)

func newStream(d *Driver) (*stream, error) {
	queue, err := d.dev.NewQueue()
	if err != nil {
		return nil, fmt.Errorf("metal: new stream: %w", err)
	}
	s := &stream{d: d, queue: queue, id: driver.NewStreamID()}
	s.q = driver.NewQueue("metal", driver.QueueHooks{
		Record: s.record,
		Synced: func() { s.waitFlights() },
		Exit: func() {
			s.waitFlights() // Close returns only after the GPU is done too
			s.queue.Release()
		},
	})
	return s, nil
}

// cpu enqueues work for the stream's goroutine, after the GPU work before it.
func (s *stream) cpu(fn func() error) {
	s.q.Run(func() error {
		if err := s.waitFlights(); err != nil {
			return err // the stream failed in the GPU work before this task
		}
		return fn()
	})
}

// gpu enqueues work that encodes and commits command buffers without
// waiting for them.
func (s *stream) gpu(fn func(*stream) error) {
	s.q.Run(func() error { return fn(s) })
}

// record completes m once the GPU work committed so far has completed,
// from the completion of the last command buffer in flight (afterGPU), so
// that the stream goes on encoding meanwhile and no thread waits in
// between. The mark fails if the stream had failed before the record or a
// flight before it fails.
func (s *stream) record(m *mark, failed error) {
	if !s.afterGPU(func(err error) {
		if failed != nil {
			err = failed
		}
		m.Complete(err)
	}) {
		m.Complete(failed)
	}
}

// afterGPU runs fn, with the first failure among them, once the command
// buffers in flight now have completed: from the last one's completion,
// which comes after the others' (one queue runs its buffers in order). It
// reports false, and does nothing, when none is in flight. fn must not
// block.
func (s *stream) afterGPU(fn func(error)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.flights) == 0 {
		return false
	}
	last := s.flights[len(s.flights)-1]
	before := slices.Clone(s.flights[:len(s.flights)-1])
	last.then = append(last.then, func() {
		var err error
		for _, b := range before {
			<-b.done // done already in practice: buffers complete in order
			if err == nil {
				err = b.err
			}
		}
		if err == nil {
			err = last.err
		}
		fn(err)
	})
	return true
}

// waitFlights blocks until every command buffer committed so far has
// completed and returns the first failure among them.
func (s *stream) waitFlights() error {
	var room [8]*flight // a copy on the stack in the common case
	s.mu.Lock()
	pending := append(room[:0], s.flights...)
	s.mu.Unlock()
	if len(pending) > 0 {
		driver.RecordWait()
	}
	var first error
	for _, f := range pending {
		<-f.done
		if first == nil {
			first = f.err
		}
	}
	return first
}

// commit commits cb as the flight f. Once cb has completed, before the
// flight counts as done, f's run is finished with the command buffer's
// error if it failed: staged results copied out, scratch released. A
// failure fails the stream too. The completion may come from any
// goroutine, in any order relative to other streams' buffers.
func (s *stream) commit(cb gpu.CommandBuffer, f *flight, kind driver.TraceKind, name string) {
	f.done = make(chan struct{})
	s.mu.Lock()
	s.flights = append(s.flights, f)
	s.mu.Unlock()
	cb.Commit(func(err error) {
		if err = s.completed(cb, f, err, kind, name); err != nil {
			s.q.Fail(err)
		}
		f.err = err
		s.mu.Lock()
		if i := slices.Index(s.flights, f); i >= 0 {
			s.flights = slices.Delete(s.flights, i, i+1)
		}
		then := f.then
		f.then = nil
		s.mu.Unlock()
		close(f.done)
		for _, fn := range then {
			fn()
		}
	})
}

// commitWait commits cb and waits for it on the calling thread (one
// wait, no completion handler), then finishes the flight f there: the
// synchronous path.
func (s *stream) commitWait(cb gpu.CommandBuffer, f *flight, kind driver.TraceKind, name string) error {
	driver.RecordWait()
	return s.completed(cb, f, cb.CommitAndWait(), kind, name)
}

// completed is what follows a command buffer's completion, waited for or
// reported: its trace, and f's run finished with the buffer's error (staged
// results copied out, scratch released). It returns the buffer's failure.
func (s *stream) completed(cb gpu.CommandBuffer, f *flight, err error, kind driver.TraceKind, name string) error {
	s.trace(cb, kind, name)
	if err != nil {
		if f.exe != nil {
			err = fmt.Errorf("metal: command buffer failed, running %s: %w", f.exe.signature(), err)
		} else {
			err = fmt.Errorf("metal: command buffer failed: %w", err)
		}
		if errors.Is(err, gpu.ErrOutOfMemory) {
			// Memory the device did not have: ResourceExhausted to the
			// frontends, and a synchronous caller's alone (Queue.RunWait).
			err = status.Exhausted(err)
		}
	}
	if e := s.q.SafeCall(func() error { f.run.finish(err); return nil }); err == nil {
		err = e
	}
	return err
}

// trace records a completed buffer with the device's own times for it,
// where it gives them.
func (s *stream) trace(cb gpu.CommandBuffer, kind driver.TraceKind, name string) {
	if name == "" || !driver.Tracing() {
		return
	}
	if t, ok := cb.(gpu.Timed); ok {
		if start, end, ok := t.Times(); ok {
			driver.RecordTrace(driver.TraceEvent{Stream: s.id, Kind: kind, Name: name, Start: start, End: end})
		}
	}
}

// Execute runs exe on the GPU.
func (s *stream) Execute(exe driver.Executable, args, results []unsafe.Pointer) {
	s.ExecuteNamed("", exe, args, results)
}

// ExecuteNamed is Execute with the name the trace records the run by
// (driver.NamedExecutor), with the command buffer's own start and end.
func (s *stream) ExecuteNamed(name string, exe driver.Executable, args, results []unsafe.Pointer) {
	args = slices.Clone(args)
	results = slices.Clone(results)
	e, ok := exe.(*executable)
	if !ok {
		s.cpu(func() error {
			return fmt.Errorf("metal: execute: executable %T was not compiled by the Metal driver", exe)
		})
		return
	}
	// On an idle stream the caller encodes and commits at once: nothing is
	// ahead of it, encoding does not wait for the GPU when every tensor
	// binds in place, and the hand-off to the stream's goroutine would cost
	// more than the encoding.
	if s.bindsInPlace(e, args, results) {
		if ran, _ := s.q.Inline(func() error { return s.encodeRun(e, args, results, name, false) }); ran {
			return
		}
	}
	s.gpu(func(s *stream) error { return s.encodeRun(e, args, results, name, false) })
}

// bindsInPlace reports whether every argument and result of a run of e
// binds without staging (see bind), so that encoding it never waits.
func (s *stream) bindsInPlace(e *executable, args, results []unsafe.Pointer) bool {
	if len(args) != len(e.params) || len(results) != len(e.results) {
		return false // encodeRun reports it
	}
	offsets := s.d.dev.MacOS().AtLeast(gpu.NDArrayOffsets)
	in := func(p unsafe.Pointer, b binding) bool {
		a, off, found := s.d.mem.lookup(p)
		return found && (off == 0 || offsets) && off+b.bytes <= len(a.mem)
	}
	for _, b := range e.feeds {
		if !in(args[b.index], b) {
			return false
		}
	}
	for _, b := range e.targets {
		if !in(results[b.index], b) {
			return false
		}
	}
	return true
}

// ExecuteWait runs exe and waits for it (driver.WaitingExecutor). On an
// idle stream the caller's thread encodes and commits the command buffer
// and waits for it once: no hand-off to the stream's goroutine and no
// second wait. Command buffers still in flight from earlier tasks are ahead
// of it in the command queue, and waited for as Synchronize would.
func (s *stream) ExecuteWait(name string, exe driver.Executable, args, results []unsafe.Pointer) error {
	if e, ok := exe.(*executable); ok {
		// A command buffer that ran out of memory fails the caller alone
		// (Queue.RunWait): the stream goes on.
		return s.q.RunWait(func() error {
			if err := s.encodeRun(e, args, results, name, true); err != nil {
				return err
			}
			return s.waitFlights() // the handlers of earlier buffers, which completed before this one
		})
	}
	s.ExecuteNamed(name, exe, args, results)
	return s.Synchronize()
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
			s.gpu(func(s *stream) error {
				cb, err := s.queue.NewCommandBuffer()
				if err != nil {
					return fmt.Errorf("metal: memcpy: %w", err)
				}
				if err := cb.Copy(sa.buf, soff, da.buf, doff, n); err != nil {
					cb.Commit(nil)
					return fmt.Errorf("metal: memcpy: %w", err)
				}
				s.commit(cb, newFlight(), driver.TraceCopy, "MemcpyDeviceToDevice")
				return nil
			})
			return
		}
	}
	name := s.copyName(dst, src)
	hostCopy := func() error {
		return driver.Timed(s.id, driver.TraceCopy, name, func() error {
			if n < 0 || (n > 0 && (dst == nil || src == nil)) {
				return fmt.Errorf("metal: memcpy %d bytes from %p to %p: invalid arguments", n, src, dst)
			}
			if n > 0 {
				copy(unsafe.Slice((*byte)(dst), n), unsafe.Slice((*byte)(src), n))
			}
			return nil
		})
	}
	// A small copy on a stream with nothing queued is not handed to the
	// stream's goroutine: it runs now when nothing is on the GPU, else from
	// the completion of the GPU work before it (a read-back right after a
	// program), the stream held for it meanwhile so that later work and
	// records keep their order.
	if n <= inlineCopy {
		if release, failed, ok := s.q.Claim(); ok {
			switch {
			case failed != nil:
				release(nil) // skipped, as on the worker
			case !s.afterGPU(func(err error) {
				if err == nil {
					err = s.q.Guarded(hostCopy)
				}
				release(err)
			}):
				release(s.q.Guarded(hostCopy))
			}
			return
		}
	}
	s.cpu(hostCopy)
}

// inlineCopy is the largest host-side Memcpy done without the stream's
// goroutine when nothing is queued: now, or from the GPU work's completion.
const inlineCopy = 64 << 10

// copyName says which way a copy went, for the trace.
func (s *stream) copyName(dst, src unsafe.Pointer) string {
	if !driver.Tracing() {
		return ""
	}
	onDevice := func(p unsafe.Pointer) bool { _, _, ok := s.d.mem.lookup(p); return ok }
	return driver.CopyName(onDevice(src), onDevice(dst))
}

func (s *stream) Memset(dst unsafe.Pointer, b byte, n int) {
	s.cpu(func() error {
		return driver.Timed(s.id, driver.TraceMemset, "Memset", func() error { return prefix("metal", driver.Fill(dst, b, n)) })
	})
}

func (s *stream) Memset32(dst unsafe.Pointer, v uint32, n int) {
	s.cpu(func() error {
		return driver.Timed(s.id, driver.TraceMemset, "Memset32", func() error { return prefix("metal", driver.Fill32(dst, v, n)) })
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
		s.cpu(func() error {
			return fmt.Errorf("metal: record: event %T was not made by the Metal driver", ev)
		})
		return
	}
	m := driver.NewMark()
	e.Set(m) // the mark moves at enqueue time, as cudaEventRecord's does
	s.q.RecordMark(m)
}

func (s *stream) Wait(ev driver.Event) {
	e, ok := ev.(*event)
	if !ok {
		s.cpu(func() error {
			return fmt.Errorf("metal: wait: event %T was not made by the Metal driver", ev)
		})
		return
	}
	s.q.WaitMark(e.Current()) // captured now: a later Record does not move this Wait
}

func (s *stream) HostCallback(fn func() error) {
	s.cpu(func() error {
		if err := fn(); err != nil {
			return fmt.Errorf("metal: host callback: %w", err)
		}
		return nil
	})
}

// Synchronize waits for the tasks enqueued before the call and for the
// command buffers they committed.
func (s *stream) Synchronize() error { return s.q.Synchronize() }

func (s *stream) Err() error { return s.q.Err() }

// Close drains the queue and the GPU, stops the goroutine and returns the
// stream's first error. Closing twice reports ErrStreamClosed.
func (s *stream) Close() error { return s.q.Close() }

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

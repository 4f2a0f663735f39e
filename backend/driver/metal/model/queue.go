package model

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
)

// queue is an MTLCommandQueue: one goroutine runs its committed command
// buffers one after another, in commit order.
type queue struct {
	dev      *device
	mu       sync.Mutex
	wake     *sync.Cond
	pending  []*commandBuffer
	running  bool // a buffer is running, on the goroutine or a waiting caller
	released bool
}

func newQueue(d *device) *queue {
	q := &queue{dev: d}
	q.wake = sync.NewCond(&q.mu)
	go q.loop()
	return q
}

func (q *queue) loop() {
	for {
		q.mu.Lock()
		for (len(q.pending) == 0 && !q.released) || q.running {
			q.wake.Wait()
		}
		if len(q.pending) == 0 { // released, and nothing is left
			q.mu.Unlock()
			return
		}
		cb := q.pending[0]
		q.pending = q.pending[1:]
		q.running = true
		q.mu.Unlock()
		cb.done(cb.execute())
		q.mu.Lock()
		q.running = false
		q.mu.Unlock()
	}
}

func (q *queue) NewCommandBuffer() (gpu.CommandBuffer, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.released {
		return nil, errors.New("MPSGraph model: commandBuffer: the queue was released")
	}
	cb := &commandBuffer{q: q}
	cb.work = cb.first[:0]
	return cb, nil
}

// Release lets the queue's goroutine finish what was committed and stop.
// It does not wait, so a completion handler may call it.
func (q *queue) Release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.released = true
	q.wake.Broadcast()
}

// commandBuffer records work; nothing runs, and no buffer is read, until
// the queue reaches it.
type commandBuffer struct {
	q         *queue
	mu        sync.Mutex
	work      []work
	first     [1]work // room for the one piece of work most buffers hold
	committed bool
	done      func(error)
	start     time.Time // when the queue began the buffer's work
	end       time.Time
}

// Times implements gpu.Timed: the model's command buffer ran from start to
// end on its queue's goroutine.
func (cb *commandBuffer) Times() (start, end time.Time, ok bool) {
	return cb.start, cb.end, !cb.start.IsZero()
}

type work struct {
	name string
	run  func() error
}

func (cb *commandBuffer) record(name string, w func() error) error {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if cb.committed {
		return fmt.Errorf("MPSGraph model: %s: the command buffer was already committed", name)
	}
	cb.work = append(cb.work, work{name, w})
	return nil
}

func (cb *commandBuffer) Encode(exe gpu.Executable, inputs, outputs []gpu.Data) error {
	const name = "encode"
	e, ok := exe.(*executable)
	switch {
	case !ok || e == nil:
		return fmt.Errorf("MPSGraph model: %s: %T is not an executable of the model", name, exe)
	case e.released.Load():
		return fmt.Errorf("MPSGraph model: %s: the executable was released", name)
	case len(inputs) != len(e.feeds) || len(outputs) != len(e.targets):
		return fmt.Errorf("MPSGraph model: %s: %d inputs and %d outputs for an executable of %d feeds and %d targets",
			name, len(inputs), len(outputs), len(e.feeds), len(e.targets))
	}
	dev := cb.q.dev
	bound := make([]binding, len(inputs)+len(outputs))
	ins, outs := bound[:len(inputs)], bound[len(inputs):]
	var err error
	for i, d := range inputs {
		if ins[i], err = dev.bind(slot{name + ": input", i}, d, e.feeds[i]); err != nil {
			return err
		}
	}
	for i, d := range outputs {
		if outs[i], err = dev.bind(slot{name + ": output", i}, d, e.targets[i]); err != nil {
			return err
		}
	}
	return cb.record(name, func() error {
		// The intermediates' memory first: a graph that does not fit runs
		// nothing and writes no output.
		release, err := dev.reserve(e.peak)
		if err != nil {
			return err
		}
		defer release()
		// Every input is read before any output is written, so outputs may
		// alias inputs.
		var room [4]*value // no allocation for a program of few inputs
		vals := room[:0]
		if len(ins) > len(room) {
			vals = make([]*value, 0, len(ins))
		}
		vals = vals[:len(ins)]
		for i, b := range ins {
			var err error
			if vals[i], err = b.read(slot{"run: input", i}); err != nil {
				return err
			}
		}
		res, err := e.run(vals)
		if err != nil {
			return err
		}
		for i, b := range outs {
			if err := b.write(slot{"run: output", i}, res[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// Copy records a blit (copyFromBuffer:sourceOffset:toBuffer:...), whose
// offsets and size Metal wants multiples of 4 on macOS, and whose regions
// must not overlap within one buffer (undefined, so refused here).
func (cb *commandBuffer) Copy(src gpu.Buffer, srcOffset int, dst gpu.Buffer, dstOffset, n int) error {
	const name = "MPSGraph model: copy"
	s, err := cb.q.dev.ownBuffer(name+": source", src)
	if err != nil {
		return err
	}
	d, err := cb.q.dev.ownBuffer(name+": destination", dst)
	if err != nil {
		return err
	}
	switch {
	case srcOffset < 0 || dstOffset < 0 || n < 0 || srcOffset%4 != 0 || dstOffset%4 != 0 || n%4 != 0:
		return fmt.Errorf("%s: offsets %d, %d and size %d must be non-negative multiples of 4", name, srcOffset, dstOffset, n)
	case srcOffset+n > len(s.mem) || dstOffset+n > len(d.mem):
		return fmt.Errorf("%s: %d bytes from %d of %d to %d of %d: out of bounds", name, n, srcOffset, len(s.mem), dstOffset, len(d.mem))
	case s == d && n > 0 && srcOffset < dstOffset+n && dstOffset < srcOffset+n:
		return fmt.Errorf("%s: overlapping regions [%d, %d) and [%d, %d) of one buffer", name, srcOffset, srcOffset+n, dstOffset, dstOffset+n)
	}
	return cb.record("copy", func() error {
		copy(d.mem[dstOffset:dstOffset+n], s.mem[srcOffset:srcOffset+n])
		return nil
	})
}

// Commit queues the buffer. done runs once, on the queue's goroutine after
// the buffer's work, or (for a buffer that cannot run) on a goroutine of its
// own: never on the caller's, as a Metal completion handler never is.
func (cb *commandBuffer) Commit(done func(error)) {
	if done == nil {
		done = func(error) {}
	}
	cb.mu.Lock()
	if cb.committed {
		cb.mu.Unlock()
		go done(errors.New("MPSGraph model: commit: the command buffer was already committed"))
		return
	}
	cb.committed = true
	cb.done = done
	cb.mu.Unlock()

	q := cb.q
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.released {
		go done(errors.New("MPSGraph model: commit: the queue was released"))
		return
	}
	q.pending = append(q.pending, cb)
	q.wake.Signal()
}

// CommitAndWait commits the buffer and waits for it (commit, then
// waitUntilCompleted). On an idle queue the device would start the buffer
// at once while the caller waits, so the model runs it on the waiting
// thread: nothing the caller can observe differs, and no thread is woken.
// Behind other buffers it waits for the queue's goroutine to reach it.
func (cb *commandBuffer) CommitAndWait() error {
	cb.mu.Lock()
	if cb.committed {
		cb.mu.Unlock()
		return errors.New("MPSGraph model: commit: the command buffer was already committed")
	}
	cb.committed = true
	cb.mu.Unlock()

	q := cb.q
	q.mu.Lock()
	switch {
	case q.released:
		q.mu.Unlock()
		return errors.New("MPSGraph model: commit: the queue was released")
	case len(q.pending) == 0 && !q.running:
		q.running = true
		q.mu.Unlock()
		err := cb.execute()
		q.mu.Lock()
		q.running = false
		if len(q.pending) > 0 || q.released {
			q.wake.Signal()
		}
		q.mu.Unlock()
		return err
	}
	result := make(chan error, 1)
	cb.done = func(err error) { result <- err }
	q.pending = append(q.pending, cb)
	q.wake.Signal()
	q.mu.Unlock()
	return <-result
}

// execute does the buffer's work in order. The first error ends it: as in
// a command buffer that faults, what follows is skipped, and the error is
// the buffer's.
func (cb *commandBuffer) execute() error {
	var first error
	cb.start = time.Now()
	for _, w := range cb.work {
		if first = safely(w); first != nil {
			break
		}
	}
	cb.end = time.Now()
	return first
}

// safely runs w, turning a panic into its error.
func safely(w work) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("MPSGraph model: %s: panic: %v", w.name, r)
		}
	}()
	return w.run()
}

package driver

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/metalplug/metalplug/backend/status"
)

// ErrStreamClosed is what a stream reports once Close has been called.
var ErrStreamClosed = errors.New("stream closed")

// Task is one unit of a Queue's work. Exactly one field is set.
type Task struct {
	Run    func() error // data work; skipped once the queue has failed
	Record *Mark        // completes the mark (QueueHooks.Record), with the queue's error if any
	Wait   *Mark        // holds later tasks until the mark completes
}

// QueueHooks are what a driver adds to the queue's rules; each may be nil.
type QueueHooks struct {
	// Record completes m at its point in the queue, failed being the
	// queue's error then. A driver whose work outlives its task (Metal's
	// command buffers) completes m when that work has. Default:
	// m.Complete(failed).
	Record func(m *Mark, failed error)
	// Synced runs after Synchronize has seen every earlier task finish, to
	// wait for work those tasks left running.
	Synced func()
	// Exit runs on the queue's goroutine once it is closed and drained.
	Exit func()
}

// Queue is the in-order queue under every driver's stream: tasks run one at
// a time, in order, on a goroutine of its own; after the first failure data
// work and waits are skipped and records complete with the failure;
// Synchronize waits for what was enqueued before it, not for what other
// threads add meanwhile. The queue is an unbounded slice rather than a
// channel: a stream blocked in a Wait must never make enqueueing block, or
// two threads feeding two streams that wait on each other's events would
// deadlock.
type Queue struct {
	name  string // names the driver in errors
	hooks QueueHooks

	mu       sync.Mutex
	work     sync.Cond // tasks arrived or the queue closed
	progress sync.Cond // a task finished
	tasks    []Task
	spare    []Task // the worker's previous batch, reused to spare allocations
	enqueued uint64 // tasks ever enqueued
	done     uint64 // tasks ever finished
	err      error  // first failure
	closed   bool
	exited   bool
	inline   bool // a caller runs a task on its own thread (Inline, Claim); the worker waits
	// claimMarks are marks recorded during a claimed task with nothing
	// queued behind it: they complete when it ends.
	claimMarks []*Mark
}

// NewQueue starts a queue's goroutine; name ("host", "metal") prefixes its
// errors.
func NewQueue(name string, hooks QueueHooks) *Queue {
	q := &Queue{name: name, hooks: hooks}
	q.work.L = &q.mu
	q.progress.L = &q.mu
	go q.loop()
	return q
}

// loop takes the whole queue at once, so that producers and the worker touch
// the lock once per batch rather than once per task.
func (q *Queue) loop() {
	// Tasks read and write raw pointers from the frontend; a bad one should
	// fail the stream, not kill the process.
	debug.SetPanicOnFault(true)
	q.mu.Lock()
	for {
		for (len(q.tasks) == 0 && !q.closed) || q.inline {
			q.work.Wait()
		}
		if len(q.tasks) == 0 {
			q.mu.Unlock()
			if q.hooks.Exit != nil {
				q.hooks.Exit()
			}
			q.mu.Lock()
			q.exited = true
			q.progress.Broadcast()
			q.mu.Unlock()
			return
		}
		batch := q.tasks
		q.tasks = q.spare[:0]
		q.spare = nil
		q.mu.Unlock()
		dispatch.handoffs.Add(uint64(len(batch)))
		for i := range batch {
			q.runTask(&batch[i])
			batch[i] = Task{} // drop references to closures and buffers
			q.mu.Lock()
			q.done++
			q.progress.Broadcast()
			q.mu.Unlock()
		}
		q.mu.Lock()
		q.spare = batch[:0]
	}
}

func (q *Queue) runTask(t *Task) {
	q.mu.Lock()
	failed := q.err
	q.mu.Unlock()
	switch {
	case t.Record != nil:
		q.complete(t.Record, failed)
	case failed != nil:
		// Skip data work and waits after a failure: the results would be
		// garbage anyway, and records must still complete (above).
	case t.Wait != nil:
		if err := t.Wait.Wait(); err != nil {
			// The work behind the event failed, so whatever this stream
			// does next would read data that was never produced.
			q.Fail(fmt.Errorf("%s: stream waited on an event whose stream failed: %w", q.name, err))
		}
	case t.Run != nil:
		if err := q.SafeCall(t.Run); err != nil {
			q.Fail(err)
		}
	}
}

func (q *Queue) complete(m *Mark, failed error) {
	if q.hooks.Record != nil {
		q.hooks.Record(m, failed)
		return
	}
	m.Complete(failed)
}

// SafeCall runs fn, turning a panic into an error so that neither a kernel
// bug nor a host callback can take the process down.
func (q *Queue) SafeCall(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: stream task panicked: %v", q.name, r)
		}
	}()
	return fn()
}

// Fail records err as the queue's failure unless it already has one.
func (q *Queue) Fail(err error) {
	q.mu.Lock()
	if q.err == nil {
		q.err = err
	}
	q.mu.Unlock()
}

// Enqueue appends t, or reports false if the queue is closed.
func (q *Queue) Enqueue(t Task) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.tasks = append(q.tasks, t)
	q.enqueued++
	q.work.Signal()
	return true
}

// Run enqueues data work.
func (q *Queue) Run(fn func() error) { q.Enqueue(Task{Run: fn}) }

// Inline runs fn on the caller's thread as the queue's next task when the
// queue is idle, and reports whether it did. Nothing queued or running may
// be ahead of it, so order is kept; the worker holds still meanwhile. fn is
// skipped on a queue that has failed, and that failure returned; a panic or
// a fault in fn fails the queue as it would on the worker.
func (q *Queue) Inline(fn func() error) (ran bool, err error) {
	failed, ok := q.claim()
	if !ok {
		return false, nil
	}
	if failed == nil {
		failed = q.Guarded(fn)
		dispatch.inline.Add(1)
		q.release(failed)
		return true, failed
	}
	q.release(nil)
	return true, failed
}

// RunWait runs fn as the queue's next task, on the caller's thread when the
// queue is idle, and waits for it and everything before it: a synchronous
// execution (driver.ExecuteWait). It returns the queue's failure, else
// fn's error. An error of memory the device did not have
// (status.ResourceExhausted) goes to the caller alone and leaves the queue
// healthy: the caller, who hears of it, decides what runs next, and what
// the failed work would have written (its own results) nobody reads. So a
// program too large for the device fails once and the work after it runs,
// where any other failure fails every later task too.
func (q *Queue) RunWait(fn func() error) error {
	var exhausted error // written by the task, read after it has finished
	task := func() error {
		err := fn()
		if err != nil && status.CodeOf(err) == status.ResourceExhausted {
			exhausted = err
			return nil
		}
		return err
	}
	if ran, err := q.Inline(task); ran {
		if err != nil {
			return err
		}
		return exhausted
	}
	q.Run(task)
	if err := q.Synchronize(); err != nil {
		return err
	}
	return exhausted
}

// Claim takes an idle queue for one task that the caller finishes later,
// from any thread (a copy done when the GPU work before it completes):
// later work waits behind it, and marks recorded meanwhile complete when it
// ends, with no task of their own. It reports the queue's failure so far
// (the task should then do nothing) and ok false when the queue is busy or
// closed. release ends the task with its error, exactly once.
func (q *Queue) Claim() (release func(error), failed error, ok bool) {
	if failed, ok = q.claim(); !ok {
		return nil, nil, false
	}
	return q.release, failed, true
}

func (q *Queue) claim() (failed error, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || q.inline || q.enqueued != q.done {
		return nil, false
	}
	q.inline = true
	q.enqueued++
	return q.err, true
}

func (q *Queue) release(err error) {
	q.mu.Lock()
	if err != nil && q.err == nil {
		q.err = err
	}
	marks := q.claimMarks
	q.claimMarks = nil
	failed := q.err
	q.inline = false
	q.done++
	q.progress.Broadcast()
	if len(q.tasks) > 0 || q.closed {
		q.work.Signal() // work arrived meanwhile, or Close is waiting for the worker
	}
	q.mu.Unlock()
	for _, m := range marks {
		q.complete(m, failed)
	}
}

// Guarded is SafeCall with memory faults turned into errors too, as on the
// queue's goroutine: for a task run on another thread.
func (q *Queue) Guarded(fn func() error) error {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return q.SafeCall(fn)
}

// RecordMark completes m once everything enqueued so far has run: at once
// on an idle queue, when a claimed task ends if nothing is queued behind
// it, else at its point in the queue. On a closed queue
// nobody will reach that point, so m fails rather than leave waiters
// hanging or let them believe the work was done.
func (q *Queue) RecordMark(m *Mark) {
	q.mu.Lock()
	idle := !q.closed && !q.inline && q.enqueued == q.done
	claimed := !q.closed && q.inline && len(q.tasks) == 0
	if claimed {
		q.claimMarks = append(q.claimMarks, m)
	}
	failed := q.err
	q.mu.Unlock()
	switch {
	case claimed:
	case idle:
		q.complete(m, failed)
	case !q.Enqueue(Task{Record: m}):
		m.Complete(fmt.Errorf("%s: %w", q.name, ErrStreamClosed))
	}
}

// WaitMark holds later tasks until m completes; a mark already reached
// without an error holds nothing.
func (q *Queue) WaitMark(m *Mark) {
	if m == nil || m.Succeeded() {
		return
	}
	q.Enqueue(Task{Wait: m})
}

// Synchronize waits for the tasks enqueued before the call, then for what
// they left running (QueueHooks.Synced), and returns the queue's error.
func (q *Queue) Synchronize() error {
	q.mu.Lock()
	target := q.enqueued
	if q.done < target {
		dispatch.waits.Add(1)
	}
	for q.done < target {
		q.progress.Wait()
	}
	q.mu.Unlock()
	if q.hooks.Synced != nil {
		q.hooks.Synced()
	}
	return q.Err()
}

// Err is the queue's first failure, or ErrStreamClosed once closed.
func (q *Queue) Err() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.errLocked()
}

func (q *Queue) errLocked() error {
	if q.err == nil && q.closed {
		return fmt.Errorf("%s: %w", q.name, ErrStreamClosed)
	}
	return q.err
}

// Close drains the queue, stops its goroutine and returns its first error
// (nil if all work succeeded). Closing twice reports ErrStreamClosed.
func (q *Queue) Close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return q.errLocked()
	}
	q.closed = true
	q.work.Signal()
	for !q.exited {
		q.progress.Wait()
	}
	return q.err
}

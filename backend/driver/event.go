package driver

import "sync"

// Mark is one Record of an event: a point in one stream's work. Each Record
// makes a new mark, which plays the part of a generation counter: a Wait
// holds the mark that was current when it was enqueued, so re-recording the
// event later cannot make that Wait wait for the wrong point. Drivers share
// it so that every driver's events follow the same (CUDA's) rules.
type Mark struct {
	done chan struct{}
	err  error // set before done is closed

	mu    sync.Mutex
	then  []func(error) // run by Complete
	ended bool
}

// NewMark makes a mark that has not been reached.
func NewMark() *Mark { return &Mark{done: make(chan struct{})} }

// Complete marks the point reached; err is the recording stream's failure,
// if any. It runs the functions OnComplete registered, on this thread.
func (m *Mark) Complete(err error) {
	m.mu.Lock()
	m.err = err
	m.ended = true
	then := m.then
	m.then = nil
	m.mu.Unlock()
	close(m.done)
	for _, fn := range then {
		fn(err)
	}
}

// OnComplete runs fn with the mark's error once it is reached: from the
// thread that completes it (a GPU completion, say), or at once when it has
// been. fn must not block: nothing waits for a thread to run it.
func (m *Mark) OnComplete(fn func(error)) {
	m.mu.Lock()
	if !m.ended {
		m.then = append(m.then, fn)
		m.mu.Unlock()
		return
	}
	err := m.err
	m.mu.Unlock()
	fn(err)
}

// Succeeded reports that the mark has been reached without an error.
func (m *Mark) Succeeded() bool {
	select {
	case <-m.done:
		return m.err == nil
	default:
		return false
	}
}

// Wait blocks until the mark is reached and returns the stream's error.
func (m *Mark) Wait() error {
	<-m.done
	return m.err
}

// MarkEvent is an Event made of marks: never recorded means complete, and
// Record (Set) moves the mark.
type MarkEvent struct {
	mu  sync.Mutex
	cur *Mark
}

var _ Event = (*MarkEvent)(nil)

// Set makes m the event's current mark; streams call it when they enqueue a Record.
func (e *MarkEvent) Set(m *Mark) {
	e.mu.Lock()
	e.cur = m
	e.mu.Unlock()
}

// Current is the mark of the latest Record, or nil if none.
func (e *MarkEvent) Current() *Mark {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cur
}

// Status implements Event.
func (e *MarkEvent) Status() EventStatus {
	m := e.Current()
	if m == nil {
		return EventComplete
	}
	select {
	case <-m.done:
		if m.err != nil {
			return EventError
		}
		return EventComplete
	default:
		return EventPending
	}
}

// OnComplete implements Notifier: fn runs once the mark current at the time
// of the call is reached.
func (e *MarkEvent) OnComplete(fn func(error)) {
	m := e.Current()
	if m == nil {
		fn(nil)
		return
	}
	m.OnComplete(fn)
}

// Notifier is an event that can call back when it completes, so that no
// thread has to wait for it to pass the news on.
type Notifier interface {
	OnComplete(fn func(error))
}

// Wait implements Event: it blocks until the mark current at the time of the call is reached.
func (e *MarkEvent) Wait() error {
	m := e.Current()
	if m == nil {
		return nil
	}
	return m.Wait()
}

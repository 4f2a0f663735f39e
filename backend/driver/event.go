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
}

// NewMark makes a mark that has not been reached.
func NewMark() *Mark { return &Mark{done: make(chan struct{})} }

// Complete marks the point reached; err is the recording stream's failure, if any.
func (m *Mark) Complete(err error) {
	m.err = err
	close(m.done)
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

// Wait implements Event: it blocks until the mark current at the time of the call is reached.
func (e *MarkEvent) Wait() error {
	m := e.Current()
	if m == nil {
		return nil
	}
	return m.Wait()
}

package driver

import (
	"errors"
	"testing"
	"time"

	"github.com/metalplug/metalplug/backend/status"
)

// A claimed task holds later work and the marks recorded meanwhile until it
// is released, from another thread; its error fails the queue.
func TestClaim(t *testing.T) {
	q := NewQueue("test", QueueHooks{})
	defer q.Close()
	release, failed, ok := q.Claim()
	if !ok || failed != nil {
		t.Fatalf("Claim on an idle queue = %v, %v", ok, failed)
	}
	if _, _, again := q.Claim(); again {
		t.Fatal("a second Claim succeeded while the first holds the queue")
	}
	var order []string
	m := NewMark()
	q.RecordMark(m)
	q.Run(func() error { order = append(order, "later"); return nil })
	time.Sleep(10 * time.Millisecond)
	if m.Succeeded() || len(order) != 0 {
		t.Fatal("work or a mark after the claimed task went ahead of it")
	}
	boom := errors.New("boom")
	go func() {
		order = append(order, "claimed")
		release(boom)
	}()
	if err := m.Wait(); !errors.Is(err, boom) {
		t.Errorf("the mark recorded during the claim completed with %v, want the task's error", err)
	}
	if err := q.Synchronize(); !errors.Is(err, boom) {
		t.Errorf("Synchronize = %v, want the claimed task's error", err)
	}
	if len(order) != 1 || order[0] != "claimed" {
		t.Errorf("ran %v: the work after a failed task should be skipped", order)
	}
}

// OnComplete runs at once on a reached mark, else from Complete, with the
// mark's error.
func TestMarkOnComplete(t *testing.T) {
	m := NewMark()
	var got []error
	m.OnComplete(func(err error) { got = append(got, err) })
	if len(got) != 0 {
		t.Fatal("OnComplete ran before the mark was reached")
	}
	boom := errors.New("boom")
	m.Complete(boom)
	m.OnComplete(func(err error) { got = append(got, err) })
	if len(got) != 2 || !errors.Is(got[0], boom) || !errors.Is(got[1], boom) {
		t.Errorf("callbacks saw %v", got)
	}
	var e MarkEvent
	ran := false
	e.OnComplete(func(err error) { ran = err == nil })
	if !ran {
		t.Error("an event never recorded did not notify at once")
	}
}

// RunWait hands a synchronous caller its task's error; memory the device
// lacked leaves the queue healthy, on the caller's thread and behind other
// work alike, where any other failure fails the queue.
func TestRunWait(t *testing.T) {
	q := NewQueue("test", QueueHooks{})
	defer q.Close()
	oom := status.Exhausted(errors.New("out of memory, 0 of 8 bytes free"))
	if err := q.RunWait(func() error { return oom }); !errors.Is(err, oom) {
		t.Errorf("RunWait (inline) = %v, want the task's error", err)
	}
	if err := q.Err(); err != nil {
		t.Errorf("the queue failed for memory a synchronous caller heard of: %v", err)
	}
	// Behind a task on the queue's goroutine: not inline.
	held := make(chan struct{})
	q.Run(func() error { <-held; return nil })
	go func() { time.Sleep(10 * time.Millisecond); close(held) }()
	if err := q.RunWait(func() error { return oom }); !errors.Is(err, oom) {
		t.Errorf("RunWait (queued) = %v, want the task's error", err)
	}
	ran := false
	if err := q.RunWait(func() error { ran = true; return nil }); err != nil || !ran {
		t.Errorf("the next task: ran %v, %v", ran, err)
	}
	boom := errors.New("boom")
	if err := q.RunWait(func() error { return boom }); !errors.Is(err, boom) {
		t.Errorf("RunWait = %v, want boom", err)
	}
	if err := q.Synchronize(); !errors.Is(err, boom) {
		t.Errorf("after a fault the queue reports %v, want boom", err)
	}
}

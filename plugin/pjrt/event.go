package pjrt

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/stats"
	"github.com/metalplug/metalplug/backend/status"
)

// event is a point jax waits for: a copy or an execution reaching its place
// in the stream, or an event the caller makes and sets. It completes once,
// with nil or the error of the work it marks. Several PJRT_Events may wrap
// one event (every PJRT_Buffer_ReadyEvent call makes a new one).
type event struct {
	done chan struct{}

	mu        sync.Mutex
	complete  bool
	err       error
	callbacks []onReady // run, in order, when the event completes
}

// onReady is a C callback the caller registered, and its argument (the
// caller's C pointer; Go only passes it back).
type onReady struct {
	fn  C.PJRT_Event_OnReadyCallback
	arg unsafe.Pointer
}

func newEvent() *event { return &event{done: make(chan struct{})} }

// readyEvent is an event that is already complete, with err.
func readyEvent(err error) *event {
	e := newEvent()
	e.finish(err)
	return e
}

// finish completes the event and runs the callbacks waiting for it, on
// this thread. It is called where the work finished: on a goroutine that
// waited for the stream (never the stream's own, so a callback that blocks
// holds up nothing queued), or in an export when the work was done at once.
// Completing twice keeps the first status.
func (e *event) finish(err error) { runCallbacks(e.complete1(err), err) }

// finishElsewhere is finish for a thread that must not block (a GPU
// completion): the callbacks run on a goroutine.
func (e *event) finishElsewhere(err error) {
	if cbs := e.complete1(err); len(cbs) > 0 {
		go safely("an event's callbacks", func() { runCallbacks(cbs, err) })
	}
}

func runCallbacks(cbs []onReady, err error) {
	for _, cb := range cbs {
		C.mp_call_on_ready(cb.fn, cErrorOf(err), cb.arg)
	}
}

// complete1 completes the event, if it was not complete, and returns the
// callbacks to run.
func (e *event) complete1(err error) []onReady {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.complete {
		return nil
	}
	e.complete, e.err = true, err
	cbs := e.callbacks
	e.callbacks = nil
	close(e.done)
	return cbs
}

// status is (true, err) once complete.
func (e *event) status() (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.complete, e.err
}

// wait blocks until the event completes and returns its error; a wait
// that blocks counts as one of the host for the device (backend/stats).
func (e *event) wait() error {
	select {
	case <-e.done:
	default:
		stats.JAX.Waited()
		<-e.done
	}
	_, err := e.status()
	return err
}

// onReady registers cb, or runs it now (on the caller's thread) when the
// event is complete already.
func (e *event) onReady(cb onReady) {
	e.mu.Lock()
	if !e.complete {
		e.callbacks = append(e.callbacks, cb)
		e.mu.Unlock()
		return
	}
	err := e.err
	e.mu.Unlock()
	C.mp_call_on_ready(cb.fn, cErrorOf(err), cb.arg)
}

// afterStream runs fn once the stream s has reached this point of its
// work, with the stream's error if it failed on the way (fn runs either
// way, so that what it frees is freed and what it completes completes).
// The driver's event marks the point; a goroutine of ours waits for it, or
// fn runs at once when the stream is idle. Callers hold the client's lock,
// so that the point is taken in the order work was enqueued.
func afterStream(d driver.Driver, s driver.Stream, what string, fn func(error)) {
	de := d.NewEvent()
	s.Record(de)
	if de.Status() != driver.EventPending {
		fn(de.Wait())
		return
	}
	go safely(what, func() { fn(de.Wait()) })
}

// streamEvent is an event that completes when s reaches this point. Where
// the driver's event can call back (driver.Notifier) it completes from the
// thread that completes the driver's (a GPU completion): whoever waits on
// it wakes with no goroutine in between, and the callbacks jax registered
// run on a goroutine of their own, since they may block.
func streamEvent(d driver.Driver, s driver.Stream, what string) *event {
	e := newEvent()
	wrap := func(err error) error {
		if err != nil {
			err = fmt.Errorf("metalplug: %s: %w", what, err)
		}
		return err
	}
	de := d.NewEvent()
	s.Record(de)
	if de.Status() != driver.EventPending {
		e.finish(wrap(de.Wait()))
		return e
	}
	if n, ok := de.(driver.Notifier); ok {
		n.OnComplete(func(err error) { safely(what, func() { e.finishElsewhere(wrap(err)) }) })
		return e
	}
	go safely(what, func() { e.finish(wrap(de.Wait())) })
	return e
}

// ------------------------------------------------------------- C records

// newCEvent wraps e in a new PJRT_Event the caller destroys.
func newCEvent(e *event) *C.PJRT_Event {
	p := (*C.PJRT_Event)(C.calloc(1, C.sizeof_PJRT_Event))
	if p == nil {
		panic("out of host memory for a PJRT_Event")
	}
	p.handle = newHandle(e)
	return p
}

func eventOf(p *C.PJRT_Event) (*event, error) {
	if p == nil {
		return nil, status.Invalidf("event is NULL")
	}
	return lookup[*event](p.handle, "event")
}

//export mp_PJRT_Event_Destroy
func mp_PJRT_Event_Destroy(args *C.PJRT_Event_Destroy_Args) errT {
	return export("mp_PJRT_Event_Destroy", args, C.PJRT_Event_Destroy_Args_STRUCT_SIZE, eventDestroy)
}

func eventDestroy(args *C.PJRT_Event_Destroy_Args) error {
	if args.event == nil {
		return nil
	}
	if _, err := eventOf(args.event); err != nil {
		return err
	}
	// Callbacks registered on it stay registered: the caller's promise is
	// to keep their arguments alive, not the event.
	dropHandle(&args.event.handle)
	C.free(unsafe.Pointer(args.event))
	return nil
}

//export mp_PJRT_Event_IsReady
func mp_PJRT_Event_IsReady(args *C.PJRT_Event_IsReady_Args) errT {
	return export("mp_PJRT_Event_IsReady", args, C.PJRT_Event_IsReady_Args_STRUCT_SIZE, eventIsReady)
}

func eventIsReady(args *C.PJRT_Event_IsReady_Args) error {
	e, err := eventOf(args.event)
	if err != nil {
		return err
	}
	done, _ := e.status()
	args.is_ready = C.bool(done)
	return nil
}

//export mp_PJRT_Event_Error
func mp_PJRT_Event_Error(args *C.PJRT_Event_Error_Args) errT {
	return export("mp_PJRT_Event_Error", args, C.PJRT_Event_Error_Args_STRUCT_SIZE, eventError)
}

func eventError(args *C.PJRT_Event_Error_Args) error {
	e, err := eventOf(args.event)
	if err != nil {
		return err
	}
	done, result := e.status()
	if !done {
		return status.Errorf(status.FailedPrecondition, "the event is not ready yet (ask PJRT_Event_IsReady or PJRT_Event_Await first)")
	}
	return asIs{result}
}

//export mp_PJRT_Event_Await
func mp_PJRT_Event_Await(args *C.PJRT_Event_Await_Args) errT {
	return export("mp_PJRT_Event_Await", args, C.PJRT_Event_Await_Args_STRUCT_SIZE, eventAwait)
}

func eventAwait(args *C.PJRT_Event_Await_Args) error {
	e, err := eventOf(args.event)
	if err != nil {
		return err
	}
	return asIs{e.wait()}
}

//export mp_PJRT_Event_OnReady
func mp_PJRT_Event_OnReady(args *C.PJRT_Event_OnReady_Args) errT {
	return export("mp_PJRT_Event_OnReady", args, C.PJRT_Event_OnReady_Args_STRUCT_SIZE, eventOnReady)
}

func eventOnReady(args *C.PJRT_Event_OnReady_Args) error {
	e, err := eventOf(args.event)
	if err != nil {
		return err
	}
	if args.callback == nil {
		return status.Invalidf("callback is NULL")
	}
	e.onReady(onReady{fn: args.callback, arg: args.user_arg})
	return nil
}

//export mp_PJRT_Event_Create
func mp_PJRT_Event_Create(args *C.PJRT_Event_Create_Args) errT {
	return export("mp_PJRT_Event_Create", args, C.PJRT_Event_Create_Args_STRUCT_SIZE, eventCreate)
}

func eventCreate(args *C.PJRT_Event_Create_Args) error {
	args.event = newCEvent(newEvent())
	return nil
}

//export mp_PJRT_Event_Set
func mp_PJRT_Event_Set(args *C.PJRT_Event_Set_Args) errT {
	return export("mp_PJRT_Event_Set", args, C.PJRT_Event_Set_Args_STRUCT_SIZE, eventSet)
}

func eventSet(args *C.PJRT_Event_Set_Args) error {
	e, err := eventOf(args.event)
	if err != nil {
		return err
	}
	if done, _ := e.status(); done {
		return status.Errorf(status.FailedPrecondition, "the event is set already")
	}
	var result error
	if args.error_code != C.PJRT_Error_Code_OK {
		msg := C.GoStringN(args.error_message, C.int(args.error_message_size))
		result = status.New(statusOf(code(args.error_code)), errors.New(msg))
	}
	e.finish(result)
	return nil
}

package driver

import (
	"sync/atomic"
	"unsafe"
)

// DispatchCounts say how work reached the drivers in this process: what a
// caller costs per kernel besides the kernel itself, which benchmarks
// count.
type DispatchCounts struct {
	// Handoffs are tasks a stream's goroutine ran for a caller: each is a
	// wake-up of another thread, and, when the caller waits, another to
	// come back.
	Handoffs uint64
	// Inline are tasks run on the caller's thread because the stream was
	// idle.
	Inline uint64
	// Waits are the times a caller blocked for a stream or a device:
	// Synchronize with work outstanding, or a wait for committed device
	// work (RecordWait).
	Waits uint64
}

var dispatch struct{ handoffs, inline, waits atomic.Uint64 }

// Dispatch is the process's counts so far.
func Dispatch() DispatchCounts {
	return DispatchCounts{Handoffs: dispatch.handoffs.Load(), Inline: dispatch.inline.Load(), Waits: dispatch.waits.Load()}
}

// Sub is c - before, the counts of what happened in between.
func (c DispatchCounts) Sub(before DispatchCounts) DispatchCounts {
	return DispatchCounts{Handoffs: c.Handoffs - before.Handoffs, Inline: c.Inline - before.Inline, Waits: c.Waits - before.Waits}
}

// RecordWait counts a caller's block on device work a driver tracks
// itself (Metal's committed command buffers).
func RecordWait() { dispatch.waits.Add(1) }

// WaitingExecutor is a stream that runs a program and waits for it in one
// step, as a synchronous frontend wants: on an idle stream the program runs
// from the caller's thread, with one wait for the device and no hand-off to
// the stream's goroutine.
type WaitingExecutor interface {
	ExecuteWait(name string, exe Executable, args, results []unsafe.Pointer) error
}

// ExecuteWait runs exe on s and waits for s, returning the stream's first
// error as Synchronize does; name is the trace's name for the run.
func ExecuteWait(s Stream, name string, exe Executable, args, results []unsafe.Pointer) error {
	if w, ok := s.(WaitingExecutor); ok {
		return w.ExecuteWait(name, exe, args, results)
	}
	Execute(s, name, exe, args, results)
	return s.Synchronize()
}

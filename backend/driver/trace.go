package driver

import (
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// The driver-side profiler. While a trace is on, streams record when each
// piece of work ran, on the stream, with the name the frontend gave it (a
// TensorFlow kernel is "node name:op type"): the frontend's profiler
// (TensorFlow's TF_InitProfiler) turns the events into its timeline. One
// trace per process, as there is one driver.

// TraceKind is what an event was.
type TraceKind uint8

const (
	TraceKernel TraceKind = iota // a program the frontend named
	TraceCopy                    // a memcpy
	TraceMemset                  // a memset
)

// TraceEvent is one piece of work: the stream that ran it (as numbered by
// its driver), what it was, and when it ran.
type TraceEvent struct {
	Stream     uint64
	Kind       TraceKind
	Name       string
	Start, End time.Time
}

var trace struct {
	on     atomic.Bool
	mu     sync.Mutex
	events []TraceEvent
}

// StartTrace drops what an earlier trace kept and starts recording.
func StartTrace() {
	trace.mu.Lock()
	trace.events = nil
	trace.mu.Unlock()
	trace.on.Store(true)
}

// StopTrace stops recording; the events stay until TakeTrace.
func StopTrace() { trace.on.Store(false) }

// TakeTrace returns the events recorded and forgets them.
func TakeTrace() []TraceEvent {
	trace.mu.Lock()
	defer trace.mu.Unlock()
	e := trace.events
	trace.events = nil
	return e
}

// Tracing reports whether a trace is on.
func Tracing() bool { return trace.on.Load() }

// Timed runs fn and, while a trace is on, records it.
func Timed(stream uint64, kind TraceKind, name string, fn func() error) error {
	if !trace.on.Load() {
		return fn()
	}
	start := time.Now()
	err := fn()
	RecordTrace(TraceEvent{Stream: stream, Kind: kind, Name: name, Start: start, End: time.Now()})
	return err
}

// RecordTrace records an event a device timed itself (a command buffer's
// GPU start and end), while a trace is on.
func RecordTrace(e TraceEvent) {
	trace.mu.Lock()
	if trace.on.Load() {
		trace.events = append(trace.events, e)
	}
	trace.mu.Unlock()
}

// CopyName is a copy's name in the trace, by which side is device memory.
func CopyName(srcOnDevice, dstOnDevice bool) string {
	side := func(dev bool) string {
		if dev {
			return "Device"
		}
		return "Host"
	}
	return "Memcpy" + side(srcOnDevice) + "To" + side(dstOnDevice)
}

var streamIDs atomic.Uint64

// NewStreamID numbers a stream for the trace, uniquely in the process.
func NewStreamID() uint64 { return streamIDs.Add(1) }

// NamedExecutor is a stream that can name the programs it runs for the
// trace: ExecuteNamed is Execute with that name.
type NamedExecutor interface {
	ExecuteNamed(name string, exe Executable, args, results []unsafe.Pointer)
}

// Execute runs exe on s, named for the trace where s can name it.
func Execute(s Stream, name string, exe Executable, args, results []unsafe.Pointer) {
	if n, ok := s.(NamedExecutor); ok {
		n.ExecuteNamed(name, exe, args, results)
		return
	}
	s.Execute(exe, args, results)
}

// Package driver is the interface between the frontends and a device: memory,
// streams, events and compiled IR programs. A driver never sees a TensorFlow or
// JAX type; frontends never see a Metal or host type.
//
// Device memory is addressed by raw pointers the driver owns (unified memory on
// Apple silicon, anonymous mappings on the host driver), so a frontend's own
// allocator may carve an allocation into tensors: every pointer a driver accepts
// may lie anywhere inside a live allocation.
package driver

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/metalplug/metalplug/backend/ir"
)

// Driver executes IR programs on one device.
type Driver interface {
	// Name is a short lowercase identifier: "host" or "metal".
	Name() string
	// Description says what the device is, for logs and device descriptions.
	Description() string

	// Allocate returns size bytes of device memory, page-aligned, zeroed.
	Allocate(size int) (unsafe.Pointer, error)
	// Free releases an allocation; p must be a pointer Allocate returned.
	Free(p unsafe.Pointer) error
	// MemoryUsage reports bytes in use and the device's capacity.
	MemoryUsage() (used, total int64)

	// NewStream starts an in-order asynchronous queue of work.
	NewStream() (Stream, error)
	// NewEvent makes an event that no stream has recorded yet.
	NewEvent() Event

	// Compile prepares a program for execution. Drivers cache executables, so
	// compiling an identical program twice is cheap.
	Compile(p *ir.Program) (Executable, error)
}

// Stream is an in-order queue. Every method that enqueues returns at once; the
// work runs after everything enqueued before it on the same stream.
type Stream interface {
	// Execute runs exe with one device pointer per program parameter and one
	// per result. Result buffers must not overlap argument buffers.
	Execute(exe Executable, args, results []unsafe.Pointer)
	// Memcpy copies n bytes; either side may be host or device memory.
	Memcpy(dst, src unsafe.Pointer, n int)
	// Memset fills n bytes with b.
	Memset(dst unsafe.Pointer, b byte, n int)
	// Memset32 fills n bytes (a multiple of 4) with the 32-bit pattern v.
	Memset32(dst unsafe.Pointer, v uint32, n int)
	// Record marks ev complete once all work enqueued so far has run.
	Record(ev Event)
	// Wait makes later work on this stream wait until ev completes.
	Wait(ev Event)
	// HostCallback runs fn on a host thread in stream order; an error fails
	// the stream.
	HostCallback(fn func() error)
	// Synchronize blocks until all enqueued work has run and returns the
	// stream's first error.
	Synchronize() error
	// Err is the stream's first error so far, without waiting.
	Err() error
	// Close drains the stream and releases it.
	Close() error
}

// EventStatus is where an event stands.
type EventStatus int

const (
	EventPending  EventStatus = iota // recorded, not yet reached
	EventComplete                    // reached, or never recorded
	EventError                       // the stream that recorded it failed first
)

// Event marks a point in a stream's work. As with CUDA events, an event no
// stream has recorded counts as complete, and recording it again moves the mark.
type Event interface {
	Status() EventStatus
	// Wait blocks the calling host thread until the event completes or fails.
	Wait() error
}

// Executable is a compiled program.
type Executable interface {
	Program() *ir.Program
}

// Signature names a program by its parameters' and results' types, for
// the errors of its runs: "a program (float32[2,3], int32[]) -> (float32[2])".
func Signature(params, results []ir.TensorType) string {
	list := func(ts []ir.TensorType) string {
		parts := make([]string, len(ts))
		for i, t := range ts {
			parts[i] = t.String()
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprintf("a program (%s) -> (%s)", list(params), list(results))
}

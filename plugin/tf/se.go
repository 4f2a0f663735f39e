package tf

/*
#include "plugin.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime/cgo"
	"sync"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
)

// The StreamExecutor callbacks. Streams and events cross into C as
// runtime/cgo handles, so TensorFlow never holds a Go pointer.

// allocations counts live device allocations for allocator stats, and
// the bytes TensorFlow's allocator holds, for errors.
var allocations struct {
	sync.Mutex
	count int64
	bytes int64
	sizes map[unsafe.Pointer]int64
}

// deviceMemory says what the device has, for an allocation that failed:
// its size, what is free, and how much of the rest TensorFlow's own
// allocator holds (its tensors, and what it keeps to reuse: it returns
// nothing to the device), the only part of a device's memory a TensorFlow
// user can free.
func deviceMemory() string {
	used, total := state.drv.MemoryUsage()
	allocations.Lock()
	held := allocations.bytes
	allocations.Unlock()
	return fmt.Sprintf("%d of the device's %d bytes free (TensorFlow's allocator holds %d)", max(total-used, 0), total, held)
}

func streamOf(h C.uintptr_t) driver.Stream { return cgo.Handle(h).Value().(driver.Stream) }
func eventOf(h C.uintptr_t) driver.Event   { return cgo.Handle(h).Value().(driver.Event) }

//export goDeviceCount
func goDeviceCount(st *C.TF_Status) C.int {
	return exportValue("goDeviceCount", failure{st: st}, 0, deviceCount)
}

func deviceCount() (C.int, error) { return C.int(state.devices), nil }

//export goAllocate
func goAllocate(size C.uint64_t) unsafe.Pointer {
	return exportValue("goAllocate", failure{}, nil, func() (unsafe.Pointer, error) { return allocate(size) })
}

func allocate(size C.uint64_t) (unsafe.Pointer, error) {
	p, err := state.drv.Allocate(int(size))
	if err != nil {
		return nil, fmt.Errorf("allocate: %w", err)
	}
	allocations.Lock()
	allocations.count++
	allocations.bytes += int64(size)
	if allocations.sizes == nil {
		allocations.sizes = map[unsafe.Pointer]int64{}
	}
	allocations.sizes[p] = int64(size)
	allocations.Unlock()
	return p, nil
}

//export goDeallocate
func goDeallocate(p unsafe.Pointer) {
	export("goDeallocate", failure{}, func() error { return deallocate(p) })
}

func deallocate(p unsafe.Pointer) error {
	if err := state.drv.Free(p); err != nil {
		return fmt.Errorf("deallocate: %w", err)
	}
	allocations.Lock()
	allocations.count--
	allocations.bytes -= allocations.sizes[p]
	delete(allocations.sizes, p)
	allocations.Unlock()
	return nil
}

// goAllocatorStats fills in what the device holds. When it fails it
// reports a device of no memory rather than fail: TensorFlow cannot start
// at all when its device's memory cannot be read, and the CPU would go
// down with the device. Allocations then fail as out of memory.
//
//export goAllocatorStats
func goAllocatorStats(inUse, limit, count *C.int64_t) C.int {
	return exportValue("goAllocatorStats", failure{sink: func(err error) {
		logPanic("goAllocatorStats", err)
		*inUse, *limit, *count = 0, 0, 0
	}}, 1, func() (C.int, error) { return allocatorStats(inUse, limit, count) })
}

func allocatorStats(inUse, limit, count *C.int64_t) (C.int, error) {
	used, total := state.drv.MemoryUsage()
	allocations.Lock()
	*count = C.int64_t(allocations.count)
	allocations.Unlock()
	*inUse, *limit = C.int64_t(used), C.int64_t(total)
	return 1, nil
}

//export goCreateStream
func goCreateStream(st *C.TF_Status) C.uintptr_t {
	return exportValue("goCreateStream", failure{st: st}, 0, createStream)
}

func createStream() (C.uintptr_t, error) {
	s, err := state.drv.NewStream()
	if err != nil {
		return 0, err
	}
	streams.Store(s, struct{}{})
	return C.uintptr_t(cgo.NewHandle(s)), nil
}

//export goDestroyStream
func goDestroyStream(h C.uintptr_t) {
	export("goDestroyStream", failure{}, func() error { return destroyStream(h) })
}

func destroyStream(h C.uintptr_t) error {
	s := streamOf(h)
	streams.Delete(s)
	cgo.Handle(h).Delete()
	if err := s.Close(); err != nil {
		return fmt.Errorf("destroy_stream: %w", err)
	}
	return nil
}

// goStreamDependency makes dependent wait for all work enqueued on other so far.
//
//export goStreamDependency
func goStreamDependency(dependent, other C.uintptr_t, st *C.TF_Status) {
	export("goStreamDependency", failure{st: st}, func() error { return streamDependency(dependent, other) })
}

func streamDependency(dependent, other C.uintptr_t) error {
	ev := state.drv.NewEvent()
	streamOf(other).Record(ev)
	streamOf(dependent).Wait(ev)
	return nil
}

//export goStreamStatus
func goStreamStatus(h C.uintptr_t, st *C.TF_Status) {
	export("goStreamStatus", failure{st: st}, func() error { return streamOf(h).Err() })
}

// goCreateEvent cannot fail: TensorFlow aborts on a failed create_event
// (it reads the event without checking), so a panic falls back to the
// drivers' common event type, which every driver's streams record.
//
//export goCreateEvent
func goCreateEvent(st *C.TF_Status) (h C.uintptr_t) {
	defer boundary("goCreateEvent", failure{sink: func(err error) {
		logPanic("goCreateEvent", err)
		h = C.uintptr_t(cgo.NewHandle(new(driver.MarkEvent)))
	}})
	hook("goCreateEvent")
	return C.uintptr_t(cgo.NewHandle(state.drv.NewEvent()))
}

//export goDestroyEvent
func goDestroyEvent(h C.uintptr_t) {
	export("goDestroyEvent", failure{}, func() error { return destroyHandle(h) })
}

// destroyHandle forgets the handle h (0: none).
func destroyHandle(h C.uintptr_t) error {
	if h != 0 {
		cgo.Handle(h).Delete()
	}
	return nil
}

// goEventStatus is 0 pending, 1 complete. Never an error: TensorFlow's
// event manager aborts the process on SE_EVENT_ERROR, so an event behind a
// failed stream reads as complete, and the failure reaches TensorFlow
// through the stream's status (get_stream_status, block_host_until_done)
// and the kernels that run on it. A panic waits for every stream first, so
// that "complete" is true.
//
//export goEventStatus
func goEventStatus(h C.uintptr_t) C.int {
	return exportValue("goEventStatus", failure{sink: func(err error) {
		logPanic("goEventStatus", err)
		_ = synchronizeAll()
	}}, 1, func() (C.int, error) { return eventStatus(h) })
}

func eventStatus(h C.uintptr_t) (C.int, error) {
	if eventOf(h).Status() == driver.EventPending {
		return 0, nil
	}
	return 1, nil
}

//export goRecordEvent
func goRecordEvent(s, e C.uintptr_t, st *C.TF_Status) {
	export("goRecordEvent", failure{st: st}, func() error { streamOf(s).Record(eventOf(e)); return nil })
}

//export goWaitForEvent
func goWaitForEvent(s, e C.uintptr_t, st *C.TF_Status) {
	export("goWaitForEvent", failure{st: st}, func() error { streamOf(s).Wait(eventOf(e)); return nil })
}

//export goMemcpy
func goMemcpy(s C.uintptr_t, dst, src unsafe.Pointer, n C.uint64_t, st *C.TF_Status) {
	export("goMemcpy", failure{st: st}, func() error { streamOf(s).Memcpy(dst, src, int(n)); return nil })
}

// goSyncMemcpy copies at once. TensorFlow expects a synchronous copy to see
// all work enqueued before it, as CUDA's legacy stream does, so it waits for
// every stream first.
//
//export goSyncMemcpy
func goSyncMemcpy(dst, src unsafe.Pointer, n C.uint64_t, st *C.TF_Status) {
	export("goSyncMemcpy", failure{st: st}, func() error { return syncMemcpy(dst, src, n) })
}

func syncMemcpy(dst, src unsafe.Pointer, n C.uint64_t) error {
	if err := synchronizeAll(); err != nil {
		return err
	}
	if n > 0 {
		copy(unsafe.Slice((*byte)(dst), int(n)), unsafe.Slice((*byte)(src), int(n)))
	}
	return nil
}

//export goBlockHostForEvent
func goBlockHostForEvent(e C.uintptr_t, st *C.TF_Status) {
	export("goBlockHostForEvent", failure{st: st}, func() error { return eventOf(e).Wait() })
}

//export goBlockHostUntilDone
func goBlockHostUntilDone(s C.uintptr_t, st *C.TF_Status) {
	export("goBlockHostUntilDone", failure{st: st}, func() error { return streamOf(s).Synchronize() })
}

//export goSynchronizeAll
func goSynchronizeAll(st *C.TF_Status) {
	export("goSynchronizeAll", failure{st: st}, synchronizeAll)
}

//export goMemset
func goMemset(s C.uintptr_t, dst unsafe.Pointer, b C.uint8_t, n C.uint64_t, st *C.TF_Status) {
	export("goMemset", failure{st: st}, func() error { streamOf(s).Memset(dst, byte(b), int(n)); return nil })
}

//export goMemset32
func goMemset32(s C.uintptr_t, dst unsafe.Pointer, v C.uint32_t, n C.uint64_t, st *C.TF_Status) {
	export("goMemset32", failure{st: st}, func() error { streamOf(s).Memset32(dst, uint32(v), int(n)); return nil })
}

// goHostCallback enqueues TensorFlow's callback on the stream. TensorFlow
// waits for the callback even when enqueueing fails, so a panic before it
// was enqueued calls it at once with the error, rather than leave
// TensorFlow waiting forever.
//
//export goHostCallback
func goHostCallback(s C.uintptr_t, fn, arg unsafe.Pointer) (ok C.TF_Bool) {
	enqueued := false
	defer boundary("goHostCallback", failure{sink: func(err error) {
		logPanic("goHostCallback", err)
		if !enqueued {
			st := C.TF_NewStatus()
			defer C.TF_DeleteStatus(st)
			setStatus(st, err)
			C.metalplug_call_status_callback(C.SE_StatusCallbackFn(fn), arg, st)
		}
		ok = 1
	}})
	hook("goHostCallback")
	streamOf(s).HostCallback(func() error {
		st := C.TF_NewStatus()
		defer C.TF_DeleteStatus(st)
		C.metalplug_call_status_callback(C.SE_StatusCallbackFn(fn), arg, st)
		if C.TF_GetCode(st) != C.TF_OK {
			return errors.New(C.GoString(C.TF_Message(st)))
		}
		return nil
	})
	enqueued = true
	return 1
}

// streams tracks live streams so that synchronizeAll can wait for them.
var streams sync.Map // driver.Stream -> struct{}

func synchronizeAll() error {
	var first error
	streams.Range(func(k, _ any) bool {
		if err := k.(driver.Stream).Synchronize(); err != nil && first == nil {
			first = err
		}
		return true
	})
	return first
}

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
func goDeviceCount(st *C.TF_Status) (n C.int) {
	defer boundary("goDeviceCount", failure{st: st})
	hook("goDeviceCount")
	return C.int(state.devices)
}

//export goAllocate
func goAllocate(size C.uint64_t) (p unsafe.Pointer) {
	defer boundary("goAllocate", failure{})
	hook("goAllocate")
	p, err := state.drv.Allocate(int(size))
	if err != nil {
		logf("allocate: %v", err)
		return nil
	}
	allocations.Lock()
	allocations.count++
	allocations.bytes += int64(size)
	if allocations.sizes == nil {
		allocations.sizes = map[unsafe.Pointer]int64{}
	}
	allocations.sizes[p] = int64(size)
	allocations.Unlock()
	return p
}

//export goDeallocate
func goDeallocate(p unsafe.Pointer) {
	defer boundary("goDeallocate", failure{})
	hook("goDeallocate")
	if err := state.drv.Free(p); err != nil {
		logf("deallocate: %v", err)
		return
	}
	allocations.Lock()
	allocations.count--
	allocations.bytes -= allocations.sizes[p]
	delete(allocations.sizes, p)
	allocations.Unlock()
}

// goAllocatorStats fills in what the device holds. When it fails it
// reports a device of no memory rather than fail: TensorFlow cannot start
// at all when its device's memory cannot be read, and the CPU would go
// down with the device. Allocations then fail as out of memory.
//
//export goAllocatorStats
func goAllocatorStats(inUse, limit, count *C.int64_t) (ok C.int) {
	defer boundary("goAllocatorStats", failure{sink: func(err error) {
		logPanic("goAllocatorStats", err)
		*inUse, *limit, *count = 0, 0, 0
		ok = 1
	}})
	hook("goAllocatorStats")
	used, total := state.drv.MemoryUsage()
	allocations.Lock()
	*count = C.int64_t(allocations.count)
	allocations.Unlock()
	*inUse, *limit = C.int64_t(used), C.int64_t(total)
	return 1
}

//export goCreateStream
func goCreateStream(st *C.TF_Status) (h C.uintptr_t) {
	defer boundary("goCreateStream", failure{st: st})
	hook("goCreateStream")
	s, err := state.drv.NewStream()
	if err != nil {
		setStatus(st, err)
		return 0
	}
	streams.Store(s, struct{}{})
	return C.uintptr_t(cgo.NewHandle(s))
}

//export goDestroyStream
func goDestroyStream(h C.uintptr_t) {
	defer boundary("goDestroyStream", failure{})
	hook("goDestroyStream")
	s := streamOf(h)
	streams.Delete(s)
	if err := s.Close(); err != nil {
		logf("destroy_stream: %v", err)
	}
	cgo.Handle(h).Delete()
}

// goStreamDependency makes dependent wait for all work enqueued on other so far.
//
//export goStreamDependency
func goStreamDependency(dependent, other C.uintptr_t, st *C.TF_Status) {
	defer boundary("goStreamDependency", failure{st: st})
	hook("goStreamDependency")
	ev := state.drv.NewEvent()
	streamOf(other).Record(ev)
	streamOf(dependent).Wait(ev)
}

//export goStreamStatus
func goStreamStatus(h C.uintptr_t, st *C.TF_Status) {
	defer boundary("goStreamStatus", failure{st: st})
	hook("goStreamStatus")
	setStatus(st, streamOf(h).Err())
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
	defer boundary("goDestroyEvent", failure{})
	hook("goDestroyEvent")
	if h != 0 {
		cgo.Handle(h).Delete()
	}
}

// goEventStatus is 0 pending, 1 complete. Never an error: TensorFlow's
// event manager aborts the process on SE_EVENT_ERROR, so an event behind a
// failed stream reads as complete, and the failure reaches TensorFlow
// through the stream's status (get_stream_status, block_host_until_done)
// and the kernels that run on it. A panic waits for every stream first, so
// that "complete" is true.
//
//export goEventStatus
func goEventStatus(h C.uintptr_t) (r C.int) {
	defer boundary("goEventStatus", failure{sink: func(err error) {
		logPanic("goEventStatus", err)
		_ = synchronizeAll()
		r = 1
	}})
	hook("goEventStatus")
	if eventOf(h).Status() == driver.EventPending {
		return 0
	}
	return 1
}

//export goRecordEvent
func goRecordEvent(s, e C.uintptr_t, st *C.TF_Status) {
	defer boundary("goRecordEvent", failure{st: st})
	hook("goRecordEvent")
	streamOf(s).Record(eventOf(e))
}

//export goWaitForEvent
func goWaitForEvent(s, e C.uintptr_t, st *C.TF_Status) {
	defer boundary("goWaitForEvent", failure{st: st})
	hook("goWaitForEvent")
	streamOf(s).Wait(eventOf(e))
}

//export goMemcpy
func goMemcpy(s C.uintptr_t, dst, src unsafe.Pointer, n C.uint64_t, st *C.TF_Status) {
	defer boundary("goMemcpy", failure{st: st})
	hook("goMemcpy")
	streamOf(s).Memcpy(dst, src, int(n))
}

// goSyncMemcpy copies at once. TensorFlow expects a synchronous copy to see
// all work enqueued before it, as CUDA's legacy stream does, so it waits for
// every stream first.
//
//export goSyncMemcpy
func goSyncMemcpy(dst, src unsafe.Pointer, n C.uint64_t, st *C.TF_Status) {
	defer boundary("goSyncMemcpy", failure{st: st})
	hook("goSyncMemcpy")
	if err := synchronizeAll(); err != nil {
		setStatus(st, err)
		return
	}
	if n > 0 {
		copy(unsafe.Slice((*byte)(dst), int(n)), unsafe.Slice((*byte)(src), int(n)))
	}
}

//export goBlockHostForEvent
func goBlockHostForEvent(e C.uintptr_t, st *C.TF_Status) {
	defer boundary("goBlockHostForEvent", failure{st: st})
	hook("goBlockHostForEvent")
	setStatus(st, eventOf(e).Wait())
}

//export goBlockHostUntilDone
func goBlockHostUntilDone(s C.uintptr_t, st *C.TF_Status) {
	defer boundary("goBlockHostUntilDone", failure{st: st})
	hook("goBlockHostUntilDone")
	setStatus(st, streamOf(s).Synchronize())
}

//export goSynchronizeAll
func goSynchronizeAll(st *C.TF_Status) {
	defer boundary("goSynchronizeAll", failure{st: st})
	hook("goSynchronizeAll")
	setStatus(st, synchronizeAll())
}

//export goMemset
func goMemset(s C.uintptr_t, dst unsafe.Pointer, b C.uint8_t, n C.uint64_t, st *C.TF_Status) {
	defer boundary("goMemset", failure{st: st})
	hook("goMemset")
	streamOf(s).Memset(dst, byte(b), int(n))
}

//export goMemset32
func goMemset32(s C.uintptr_t, dst unsafe.Pointer, v C.uint32_t, n C.uint64_t, st *C.TF_Status) {
	defer boundary("goMemset32", failure{st: st})
	hook("goMemset32")
	streamOf(s).Memset32(dst, uint32(v), int(n))
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

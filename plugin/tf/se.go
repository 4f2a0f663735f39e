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

// allocations counts live device allocations for allocator stats.
var allocations struct {
	sync.Mutex
	count int64
}

func setStatus(st *C.TF_Status, err error) {
	if err == nil {
		return
	}
	msg := C.CString("metalplug: " + err.Error())
	defer C.free(unsafe.Pointer(msg))
	C.TF_SetStatus(st, C.TF_INTERNAL, msg)
}

// guard turns a panic in a callback into a failed status: a Go panic must
// never abort the process that hosts us.
func guard(st *C.TF_Status, what string) {
	if r := recover(); r != nil {
		if st != nil {
			setStatus(st, fmt.Errorf("internal error in %s: %v", what, r))
		} else {
			logf("internal error in %s: %v", what, r)
		}
	}
}

func streamOf(h C.uintptr_t) driver.Stream { return cgo.Handle(h).Value().(driver.Stream) }
func eventOf(h C.uintptr_t) driver.Event   { return cgo.Handle(h).Value().(driver.Event) }

//export goDeviceCount
func goDeviceCount() C.int { return C.int(state.devices) }

//export goAllocate
func goAllocate(size C.uint64_t) unsafe.Pointer {
	defer guard(nil, "allocate")
	p, err := state.drv.Allocate(int(size))
	if err != nil {
		logf("allocate: %v", err)
		return nil
	}
	allocations.Lock()
	allocations.count++
	allocations.Unlock()
	return p
}

//export goDeallocate
func goDeallocate(p unsafe.Pointer) {
	defer guard(nil, "deallocate")
	if err := state.drv.Free(p); err != nil {
		logf("deallocate: %v", err)
		return
	}
	allocations.Lock()
	allocations.count--
	allocations.Unlock()
}

//export goAllocatorStats
func goAllocatorStats(inUse, limit, count *C.int64_t) {
	used, total := state.drv.MemoryUsage()
	allocations.Lock()
	*count = C.int64_t(allocations.count)
	allocations.Unlock()
	*inUse, *limit = C.int64_t(used), C.int64_t(total)
}

//export goCreateStream
func goCreateStream(st *C.TF_Status) C.uintptr_t {
	defer guard(st, "create_stream")
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
	defer guard(nil, "destroy_stream")
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
	defer guard(st, "create_stream_dependency")
	ev := state.drv.NewEvent()
	streamOf(other).Record(ev)
	streamOf(dependent).Wait(ev)
}

//export goStreamStatus
func goStreamStatus(h C.uintptr_t, st *C.TF_Status) {
	defer guard(st, "get_stream_status")
	setStatus(st, streamOf(h).Err())
}

//export goCreateEvent
func goCreateEvent() C.uintptr_t { return C.uintptr_t(cgo.NewHandle(state.drv.NewEvent())) }

//export goDestroyEvent
func goDestroyEvent(h C.uintptr_t) { cgo.Handle(h).Delete() }

//export goEventStatus
func goEventStatus(h C.uintptr_t) C.int {
	switch eventOf(h).Status() {
	case driver.EventPending:
		return 0
	case driver.EventComplete:
		return 1
	}
	return 2
}

//export goRecordEvent
func goRecordEvent(s, e C.uintptr_t, st *C.TF_Status) {
	defer guard(st, "record_event")
	streamOf(s).Record(eventOf(e))
}

//export goWaitForEvent
func goWaitForEvent(s, e C.uintptr_t, st *C.TF_Status) {
	defer guard(st, "wait_for_event")
	streamOf(s).Wait(eventOf(e))
}

//export goMemcpy
func goMemcpy(s C.uintptr_t, dst, src unsafe.Pointer, n C.uint64_t, st *C.TF_Status) {
	defer guard(st, "memcpy")
	streamOf(s).Memcpy(dst, src, int(n))
}

// goSyncMemcpy copies at once. TensorFlow expects a synchronous copy to see
// all work enqueued before it, as CUDA's legacy stream does, so it waits for
// every stream first.
//
//export goSyncMemcpy
func goSyncMemcpy(dst, src unsafe.Pointer, n C.uint64_t, st *C.TF_Status) {
	defer guard(st, "sync_memcpy")
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
	defer guard(st, "block_host_for_event")
	setStatus(st, eventOf(e).Wait())
}

//export goBlockHostUntilDone
func goBlockHostUntilDone(s C.uintptr_t, st *C.TF_Status) {
	defer guard(st, "block_host_until_done")
	setStatus(st, streamOf(s).Synchronize())
}

//export goSynchronizeAll
func goSynchronizeAll(st *C.TF_Status) {
	defer guard(st, "synchronize_all_activity")
	setStatus(st, synchronizeAll())
}

//export goMemset
func goMemset(s C.uintptr_t, dst unsafe.Pointer, b C.uint8_t, n C.uint64_t, st *C.TF_Status) {
	defer guard(st, "memset")
	streamOf(s).Memset(dst, byte(b), int(n))
}

//export goMemset32
func goMemset32(s C.uintptr_t, dst unsafe.Pointer, v C.uint32_t, n C.uint64_t, st *C.TF_Status) {
	defer guard(st, "memset32")
	streamOf(s).Memset32(dst, uint32(v), int(n))
}

//export goHostCallback
func goHostCallback(s C.uintptr_t, fn, arg unsafe.Pointer) C.TF_Bool {
	defer guard(nil, "host_callback")
	streamOf(s).HostCallback(func() error {
		st := C.TF_NewStatus()
		defer C.TF_DeleteStatus(st)
		C.metalplug_call_status_callback(C.SE_StatusCallbackFn(fn), arg, st)
		if C.TF_GetCode(st) != C.TF_OK {
			return errors.New(C.GoString(C.TF_Message(st)))
		}
		return nil
	})
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

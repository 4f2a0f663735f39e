// Package statsapi exports the process's figures of what ran where
// (backend/stats) to C, for metalplug.stats() in Python, which reads them
// through ctypes. Both frontends' builds link it.
package statsapi

/*
#include <stdint.h>
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/stats"
	"github.com/metalplug/metalplug/plugin/device"
)

// report is stats.Report with the process's dispatch costs and the
// driver's memory and caches.
type report struct {
	stats.Report
	Process process `json:"process"`
	Memory  memory  `json:"memory"`
}

// memory is the driver's, for a long run's check that nothing grows: the
// device memory in use and its capacity, and the compiled programs the
// driver keeps (zero while no frontend has chosen a driver).
type memory struct {
	UsedBytes         int64 `json:"used_bytes"`
	TotalBytes        int64 `json:"total_bytes"`
	CachedExecutables int   `json:"cached_executables"`
}

// process is what the library's own code has cost the process so far, the
// per-kernel overhead a Mac pays too: Go heap allocations, calls from Go
// into C, tasks handed to a stream's goroutine or run inline on the
// caller's thread, and the caller's blocking waits for a stream or the
// device (driver.DispatchCounts).
type process struct {
	GoAllocations uint64 `json:"go_allocations"`
	CgoCalls      int64  `json:"cgo_calls"`
	Handoffs      uint64 `json:"handoffs"`
	Inline        uint64 `json:"inline"`
	DriverWaits   uint64 `json:"driver_waits"`
}

func snapshot() report {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}
	metrics.Read(sample)
	d := driver.Dispatch()
	p := process{CgoCalls: runtime.NumCgoCall(), Handoffs: d.Handoffs, Inline: d.Inline, DriverWaits: d.Waits}
	if sample[0].Value.Kind() == metrics.KindUint64 {
		p.GoAllocations = sample[0].Value.Uint64()
	}
	var m memory
	m.UsedBytes, m.TotalBytes, m.CachedExecutables, _ = device.Usage()
	return report{Report: stats.Snapshot(device.Chosen()), Process: p, Memory: m}
}

// metalplug_stats writes the figures as JSON into buf (at most capacity
// bytes, no terminating NUL) and returns the length of the whole JSON, so
// that a caller whose buffer was too small calls again with one that is
// large enough. It returns -1 when it failed (a panic, logged): nothing it
// does may unwind into the caller.
//
//export metalplug_stats
func metalplug_stats(buf *C.char, capacity C.int64_t) (n C.int64_t) {
	n = -1
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "metalplug: metalplug_stats: %v\n", r)
			n = -1
		}
	}()
	js, err := json.Marshal(snapshot())
	if err != nil { // strings, integers and maps of them always marshal
		panic(err)
	}
	if buf != nil && capacity > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(capacity)), js)
	}
	return C.int64_t(len(js))
}

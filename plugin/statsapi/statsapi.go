// Package statsapi exports the process's figures of what ran where
// (backend/stats) to C, for metalplug.stats() in Python, which reads them
// through ctypes. Both frontends' builds link it.
package statsapi

/*
#include <stdint.h>
*/
import "C"

import (
	"fmt"
	"os"
	"unsafe"

	"github.com/metalplug/metalplug/backend/stats"
	"github.com/metalplug/metalplug/plugin/device"
)

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
	js := stats.JSON(device.Chosen())
	if buf != nil && capacity > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(capacity)), js)
	}
	return C.int64_t(len(js))
}

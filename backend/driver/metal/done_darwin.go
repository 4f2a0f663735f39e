//go:build darwin

package metal

// #include <stdint.h>
// #include <stdlib.h>
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime/cgo"
	"strings"
	"time"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
)

// metalplugCommandBufferDone is called once per committed command buffer,
// from Metal's completion thread, with its error text or nil and the GPU's
// start and end in seconds since the epoch (0 when Metal gave none). The export
// lives in its own file: cgo allows only declarations in the preamble of a
// file that exports. A panic here is recovered and written to stderr: it
// must not unwind into Metal's thread.
//
//export metalplugCommandBufferDone
func metalplugCommandBufferDone(handle C.uintptr_t, message *C.char, start, end C.double) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "metalplug: panic in a command buffer's completion: %v\n", r)
		}
	}()
	err := commandBufferError(message)
	t0, t1 := gpuTimes(float64(start), float64(end))
	h := cgo.Handle(handle)
	done := h.Value().(func(error, time.Time, time.Time))
	h.Delete()
	done(err, t0, t1)
}

// errorFromC is an error from a C helper's text (a command buffer's, a
// compile's), which it frees; nil for none.
func errorFromC(message *C.char) error {
	if message == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(message))
	return errors.New(C.GoString(message))
}

// outOfMemoryMark begins the text metalplugBufferResult gives for a command
// buffer that failed with MTLCommandBufferErrorOutOfMemory.
const outOfMemoryMark = "out of memory: "

// commandBufferError is errorFromC for a command buffer's text: Metal's
// out-of-memory failure wraps gpu.ErrOutOfMemory, which the driver reports
// as memory exhausted.
func commandBufferError(message *C.char) error {
	err := errorFromC(message)
	if err == nil {
		return nil
	}
	if text, ok := strings.CutPrefix(err.Error(), outOfMemoryMark); ok {
		return fmt.Errorf("%s: %w", text, gpu.ErrOutOfMemory)
	}
	return err
}

// gpuTimes are the GPU's start and end from seconds since the epoch, zero
// when the device gave none.
func gpuTimes(start, end float64) (t0, t1 time.Time) {
	if start > 0 {
		t0, t1 = time.Unix(0, int64(start*1e9)), time.Unix(0, int64(end*1e9))
	}
	return t0, t1
}

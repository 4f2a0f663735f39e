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
	"unsafe"
)

// metalplugCommandBufferDone is called once per committed command buffer,
// from Metal's completion thread, with its error text or nil. The export
// lives in its own file: cgo allows only declarations in the preamble of a
// file that exports. A panic here is recovered and written to stderr: it
// must not unwind into Metal's thread.
//
//export metalplugCommandBufferDone
func metalplugCommandBufferDone(handle C.uintptr_t, message *C.char) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "metalplug: panic in a command buffer's completion: %v\n", r)
		}
	}()
	var err error
	if message != nil {
		err = errors.New(C.GoString(message))
		C.free(unsafe.Pointer(message))
	}
	h := cgo.Handle(handle)
	done := h.Value().(func(error))
	h.Delete()
	done(err)
}

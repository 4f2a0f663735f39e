package cenv

/*
#include <stdlib.h>
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// setenvC and unsetenvC change the C environment behind Go's back, as
// Python's os.environ does; the tests use them (cgo is not allowed in
// _test.go files), and the linker drops them from the library.
func setenvC(name, value string) error {
	n, v := C.CString(name), C.CString(value)
	defer C.free(unsafe.Pointer(n))
	defer C.free(unsafe.Pointer(v))
	if C.setenv(n, v, 1) != 0 {
		return fmt.Errorf("setenv %s failed", name)
	}
	return nil
}

func unsetenvC(name string) {
	n := C.CString(name)
	defer C.free(unsafe.Pointer(n))
	C.unsetenv(n)
}

// Package cenvtest changes the C environment behind Go's back, as Python's
// os.environ does, for plugin/cenv's tests (a test file cannot use cgo). It
// does not import plugin/cenv, and only tests import it, so the library
// never links it.
package cenvtest

/*
#include <stdlib.h>
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Setenv sets name to value in the C environment.
func Setenv(name, value string) error {
	n, v := C.CString(name), C.CString(value)
	defer C.free(unsafe.Pointer(n))
	defer C.free(unsafe.Pointer(v))
	if C.setenv(n, v, 1) != 0 {
		return fmt.Errorf("setenv %s failed", name)
	}
	return nil
}

// Unsetenv removes name from the C environment.
func Unsetenv(name string) {
	n := C.CString(name)
	defer C.free(unsafe.Pointer(n))
	C.unsetenv(n)
}

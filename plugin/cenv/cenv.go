// Package cenv reads the process environment the way C code in the process
// sees it. A Go program copies its environment once, at start-up, and
// os.Getenv reads that copy; a Go c-shared library loaded into Python would
// therefore never see a variable a script set with os.environ (Python's
// putenv changes the C environment only). Every METALPLUG_ setting is read
// here, at the moment it is needed.
package cenv

/*
#include <stdlib.h>
*/
import "C"

import "unsafe"

// Lookup returns the variable's value in the live C environment and whether
// it is set.
func Lookup(name string) (string, bool) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	v := C.getenv(cs)
	if v == nil {
		return "", false
	}
	return C.GoString(v), true
}

// Get returns the variable's value, or "" when it is unset.
func Get(name string) string {
	v, _ := Lookup(name)
	return v
}

package pjrt

/*
#include "shim.h"
*/
import "C"

import "unsafe"

// Helpers for the tests, which cannot use cgo themselves; the linker
// drops them from the library.

// layoutTable reads one of abi_layout.c's lists: name → size or offset,
// and the names in order.
func layoutTable(which string) (map[string]uintptr, []string) {
	var list *C.mp_layout_entry
	switch which {
	case "sizes":
		list = (*C.mp_layout_entry)(unsafe.Pointer(&C.mp_layout_sizes))
	case "fields":
		list = (*C.mp_layout_entry)(unsafe.Pointer(&C.mp_layout_fields))
	case "slots":
		list = (*C.mp_layout_entry)(unsafe.Pointer(&C.mp_layout_slots))
	default:
		panic("no layout list " + which)
	}
	m := map[string]uintptr{}
	var order []string
	for e := list; e.name != nil; e = (*C.mp_layout_entry)(unsafe.Add(unsafe.Pointer(e), C.sizeof_mp_layout_entry)) {
		name := C.GoString(e.name)
		m[name] = uintptr(e.value)
		order = append(order, name)
	}
	return m, order
}

// apiSlots reads the table GetPjrtApi returns: the version it reports,
// its struct_size, and which of its slots are NULL, by offset.
func apiSlots() (major, minor int, size uintptr, null []uintptr) {
	api := C.mp_api()
	major, minor = int(api.pjrt_api_version.major_version), int(api.pjrt_api_version.minor_version)
	size = uintptr(api.struct_size)
	slots, _ := layoutTable("slots")
	for _, off := range slots {
		if *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(api), off)) == nil {
			null = append(null, off)
		}
	}
	return major, minor, size, null
}

package pjrtharness

/*
#include "harness.h"
*/
import "C"

import "unsafe"

// LayoutTable reads one of abi_layout.c's lists ("sizes", "fields" or
// "slots"): name → size or offset, and the names in order.
func LayoutTable(which string) (map[string]uintptr, []string) {
	var list *C.mp_harness_layout_entry
	switch which {
	case "sizes":
		list = (*C.mp_harness_layout_entry)(unsafe.Pointer(&C.mp_harness_layout_sizes))
	case "fields":
		list = (*C.mp_harness_layout_entry)(unsafe.Pointer(&C.mp_harness_layout_fields))
	case "slots":
		list = (*C.mp_harness_layout_entry)(unsafe.Pointer(&C.mp_harness_layout_slots))
	default:
		panic("no layout list " + which)
	}
	m := map[string]uintptr{}
	var order []string
	for e := list; e.name != nil; e = (*C.mp_harness_layout_entry)(unsafe.Add(unsafe.Pointer(e), C.sizeof_mp_harness_layout_entry)) {
		name := C.GoString(e.name)
		m[name] = uintptr(e.value)
		order = append(order, name)
	}
	return m, order
}

// APISlots reads api, a *PJRT_Api (GetPjrtApi's): the version it reports,
// its struct_size, and which of its slots are NULL, by offset.
func APISlots(api unsafe.Pointer) (major, minor int, size uintptr, null []uintptr) {
	t := (*C.PJRT_Api)(api)
	major, minor = int(t.pjrt_api_version.major_version), int(t.pjrt_api_version.minor_version)
	size = uintptr(t.struct_size)
	slots, _ := LayoutTable("slots")
	for _, off := range slots {
		if *(*unsafe.Pointer)(unsafe.Add(api, off)) == nil {
			null = append(null, off)
		}
	}
	return major, minor, size, null
}

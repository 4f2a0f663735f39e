package pjrtharness

/*
#include "harness.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// The calls a test makes once, each checking one promise of the ABI.

// ErrorPaths checks e, a *PJRT_Error of code and msg, through every way a
// caller reads errors (the table's error functions and the error's
// vtable), and destroys it. It returns 0, or the number of the first check
// of harness.c's mp_harness_error_paths that failed.
func ErrorPaths(e unsafe.Pointer, code int, msg string) int {
	mustUse()
	cs := C.CString(msg)
	defer C.free(unsafe.Pointer(cs))
	return int(C.mp_harness_error_paths((*C.PJRT_Error)(e), C.int(code), cs, C.size_t(len(msg))))
}

// UserDataDtors attaches user data to the memory of a new client, as jax
// may, replacing one item, then destroys the client: the destructor calls
// seen before the client (and with it the memory) is destroyed and after.
// before is -1 if a lookup of the data failed.
func UserDataDtors() (before, after int, err error) {
	h, err := NewClient()
	if err != nil {
		return 0, 0, err
	}
	var a C.PJRT_Client_AddressableMemories_Args
	a.struct_size = C.PJRT_Client_AddressableMemories_Args_STRUCT_SIZE
	a.client = h.c
	if err := takeError(C.mp_harness_PJRT_Client_AddressableMemories(&a)); err != nil {
		h.Destroy()
		return 0, 0, err
	}
	if a.num_addressable_memories != 1 {
		h.Destroy()
		return 0, 0, fmt.Errorf("%d memories", a.num_addressable_memories)
	}
	before = int(C.mp_harness_user_data(*a.addressable_memories))
	if err := h.Destroy(); err != nil {
		return 0, 0, err
	}
	return before, int(C.mp_harness_dtors()), nil
}

// CallTopologyCreate asks the table for a topology description.
func CallTopologyCreate() error {
	mustUse()
	return takeError(C.mp_harness_topology_create())
}

// CallTooSmall calls PJRT_Buffer_Dimensions with a struct_size one byte
// short of what it writes, as an older caller might.
func CallTooSmall() error {
	mustUse()
	var a C.PJRT_Buffer_Dimensions_Args
	a.struct_size = C.PJRT_Buffer_Dimensions_Args_STRUCT_SIZE - 1
	return takeError(C.mp_harness_PJRT_Buffer_Dimensions(&a))
}

// CallLarger calls PJRT_Client_ProcessIndex with a struct 64 bytes larger
// than ours, as a newer caller might.
func CallLarger(h *Client) (int, error) {
	var a struct {
		args  C.PJRT_Client_ProcessIndex_Args
		spare [64]byte
	}
	a.args.struct_size = C.size_t(unsafe.Sizeof(a))
	a.args.client = h.c
	a.args.process_index = -1
	err := takeError(C.mp_harness_PJRT_Client_ProcessIndex(&a.args))
	return int(a.args.process_index), err
}

// PluginAttributeList reads PJRT_Plugin_Attributes: int64 lists by name.
func PluginAttributeList() (map[string][]int64, error) {
	mustUse()
	var a C.PJRT_Plugin_Attributes_Args
	a.struct_size = C.PJRT_Plugin_Attributes_Args_STRUCT_SIZE
	if err := takeError(C.mp_harness_PJRT_Plugin_Attributes(&a)); err != nil {
		return nil, err
	}
	out := map[string][]int64{}
	for _, nv := range unsafe.Slice(a.attributes, int(a.num_attributes)) {
		if nv._type != C.PJRT_NamedValue_kInt64List {
			return nil, fmt.Errorf("attribute %s has type %d", C.GoStringN(nv.name, C.int(nv.name_size)), nv._type)
		}
		vals := unsafe.Slice((*int64)(unsafe.Pointer(C.mp_harness_named_list_value(&nv))), int(nv.value_size))
		out[C.GoStringN(nv.name, C.int(nv.name_size))] = append([]int64(nil), vals...)
	}
	return out, nil
}

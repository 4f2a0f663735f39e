// The C half of the PJRT frontend (abi.c): what Go cannot do itself. Go
// cannot call C function pointers, name the members of anonymous unions,
// or give C a function table, so these helpers do it. Nothing here can
// fail in a way that needs reporting, and nothing here calls into Go
// except the table's slots.
#ifndef METALPLUG_PJRT_SHIM_H_
#define METALPLUG_PJRT_SHIM_H_

#include <stdlib.h>

#include "abi.h"

// The table GetPjrtApi returns, filled once; it lives as long as the
// process.
const PJRT_Api* mp_api(void);

// A new error owning a copy of message[0:n]. Never NULL: if memory runs
// out, a static error that says so (its destroy does nothing).
PJRT_Error* mp_error_new(PJRT_Error_Code code, const char* message, size_t n);
PJRT_Error_Code mp_error_code(const PJRT_Error* e);
const char* mp_error_message(const PJRT_Error* e, size_t* n);
void mp_error_free(PJRT_Error* e);

// Memories carry their vtable; the caller's user data dies with them.
// (void*, so that Go holds them as unsafe.Pointer: see objects in Go.)
void* mp_memory_new(uintptr_t handle);
void mp_memory_free(void* m);

// Calls a caller's event callback, handing it err (which it then owns).
void mp_call_on_ready(PJRT_Event_OnReadyCallback cb, PJRT_Error* err, void* user_arg);

// Named values: fill one of ours, or read one of the caller's.
void mp_named_string(PJRT_NamedValue* nv, const char* name, const char* value);
void mp_named_int64_list(PJRT_NamedValue* nv, const char* name, const int64_t* values, size_t n);

// The members of a layout's union.
const PJRT_Buffer_MemoryLayout_Tiled* mp_layout_tiled(const PJRT_Buffer_MemoryLayout* l);
const PJRT_Buffer_MemoryLayout_Strides* mp_layout_strides(const PJRT_Buffer_MemoryLayout* l);
// Fills a layout the caller passed us with a dense one of rank n:
// minor_to_major (which the buffer owns) holding n-1 ... 0, no tiles.
void mp_fill_dense_layout(PJRT_Buffer_MemoryLayout* l, const int64_t* minor_to_major, size_t n);

// Blobs handed out with a deleter: a malloc'd copy of data[0:n].
void mp_give_device_assignment(PJRT_LoadedExecutable_GetDeviceAssignment_Args* a,
                               const char* data, size_t n);
void mp_give_compile_options(PJRT_Executable_GetCompileOptions_Args* a, const char* data,
                             size_t n);
// Device attributes live as long as the device: the deleter does nothing.
void mp_give_device_attributes(PJRT_Device_GetAttributes_Args* a, const PJRT_NamedValue* attrs,
                               size_t n);

#endif  // METALPLUG_PJRT_SHIM_H_

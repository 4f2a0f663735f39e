// The C half of the harness: what Go cannot do itself as a PJRT caller
// (call the table's function pointers, name union members, be an event
// callback). Every definition is in harness.c and abi_layout.c, named
// mp_harness_*, so that nothing collides with plugin/pjrt's own mp_*
// symbols when both are linked into its test binary.
#ifndef METALPLUG_PJRT_HARNESS_H_
#define METALPLUG_PJRT_HARNESS_H_

#include <stdlib.h>

// plugin/pjrt's declaration of the ABI, the one the plugin is built with
// (found through the -I of harness.go; abi.h beside this file is a link to
// it, there so that the go command rebuilds the harness when it changes).
#include "abi.h"

// The table every call goes through: GetPjrtApi's, handed in by the test.
void mp_harness_use(const PJRT_Api* api);
const PJRT_Api* mp_harness_api(void);

// One function per slot the harness calls, calling it through the table.
#define MP_HARNESS_SLOTS(X)                      \
  X(PJRT_Plugin_Attributes)                      \
  X(PJRT_Event_Destroy)                          \
  X(PJRT_Event_IsReady)                          \
  X(PJRT_Event_Error)                            \
  X(PJRT_Event_Await)                            \
  X(PJRT_Event_OnReady)                          \
  X(PJRT_Event_Create)                           \
  X(PJRT_Event_Set)                              \
  X(PJRT_Client_Create)                          \
  X(PJRT_Client_Destroy)                         \
  X(PJRT_Client_PlatformName)                    \
  X(PJRT_Client_ProcessIndex)                    \
  X(PJRT_Client_PlatformVersion)                 \
  X(PJRT_Client_Devices)                         \
  X(PJRT_Client_AddressableMemories)             \
  X(PJRT_Client_Compile)                         \
  X(PJRT_Client_BufferFromHostBuffer)            \
  X(PJRT_DeviceDescription_Kind)                 \
  X(PJRT_Device_GetDescription)                  \
  X(PJRT_Device_MemoryStats)                     \
  X(PJRT_Executable_Destroy)                     \
  X(PJRT_Executable_Name)                        \
  X(PJRT_Executable_NumOutputs)                  \
  X(PJRT_Executable_OutputElementTypes)          \
  X(PJRT_Executable_OutputDimensions)            \
  X(PJRT_LoadedExecutable_Destroy)               \
  X(PJRT_LoadedExecutable_GetExecutable)         \
  X(PJRT_LoadedExecutable_Execute)               \
  X(PJRT_LoadedExecutable_GetDeviceAssignment)   \
  X(PJRT_Buffer_Destroy)                         \
  X(PJRT_Buffer_ElementType)                     \
  X(PJRT_Buffer_Dimensions)                      \
  X(PJRT_Buffer_Delete)                          \
  X(PJRT_Buffer_IsDeleted)                       \
  X(PJRT_Buffer_ToHostBuffer)                    \
  X(PJRT_Buffer_ReadyEvent)
#define MP_HARNESS_DECLARE(name) PJRT_Error* mp_harness_##name(name##_Args* args);
MP_HARNESS_SLOTS(MP_HARNESS_DECLARE)
#undef MP_HARNESS_DECLARE

// An error's code, message and end, read through its own vtable, as the
// plugin's mp_error_code, mp_error_message and mp_error_free do.
PJRT_Error_Code mp_harness_error_code(const PJRT_Error* e);
const char* mp_harness_error_message(const PJRT_Error* e, size_t* n);
void mp_harness_error_free(PJRT_Error* e);

// An event callback that records what it was given, in one of a fixed
// number of slots: user_arg encodes the slot number, above the addresses
// Go treats as invalid pointers and below any Go heap.
#define MP_HARNESS_CALLBACK_SLOTS 256
PJRT_Event_OnReadyCallback mp_harness_callback(void);
void* mp_harness_arg(int slot);
void mp_harness_fired(int slot, int* fired, int* code);

// Calls PJRT_TopologyDescription_Create with no topology name, as jax's
// ahead-of-time get_topology_desc does.
PJRT_Error* mp_harness_topology_create(void);

// Drives error e (of want_code and message want[0:n]) through the table's
// error functions and its vtable, and destroys it. Returns 0, or the
// number of the first check that failed.
int mp_harness_error_paths(PJRT_Error* e, int want_code, const char* want, size_t n);

// Attaches user data to memory m as jax may: replaced data is destroyed at
// once. Returns the destructor calls seen so far, or -1 for a lookup that
// failed; mp_harness_dtors counts the calls since.
int mp_harness_user_data(PJRT_Memory* m);
int mp_harness_dtors(void);

// The members of the ABI's unions that the harness reads or fills.
PJRT_Buffer_MemoryLayout_Strides* mp_harness_layout_strides(PJRT_Buffer_MemoryLayout* l);
const int64_t* mp_harness_named_list_value(const PJRT_NamedValue* nv);

// The sizes, field offsets and slot offsets of the declarations in abi.h
// (abi_layout.c), for plugin/pjrt's abi_test.go. Each list ends with a
// NULL name.
typedef struct mp_harness_layout_entry {
  const char* name;
  size_t value;
} mp_harness_layout_entry;
extern const mp_harness_layout_entry mp_harness_layout_sizes[];
extern const mp_harness_layout_entry mp_harness_layout_fields[];
extern const mp_harness_layout_entry mp_harness_layout_slots[];

#endif  // METALPLUG_PJRT_HARNESS_H_

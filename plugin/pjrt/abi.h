// The PJRT C ABI as metalplug implements it, declared here because jaxlib
// ships no pjrt_c_api.h. The layout facts (field order and types, enum
// values, the order of PJRT_Api's slots, and the size rule) come from
// XLA's xla/pjrt/c/pjrt_c_api.h at API 0.114, the header jax 0.11 pinned;
// the words and the arrangement are ours. Only what metalplug reads or fills
// is spelled out: a slot we answer with a stub keeps its place in PJRT_Api
// with a generic pointer type, and its argument struct is not declared.
// abi_test.go holds every size and offset here to numbers taken from XLA's
// header (testdata/pjrt_abi_0.114.txt).
//
// Conventions of the ABI, as they bear on us:
//   - Every argument struct begins with MP_ARGS_HEAD: the caller's size of the
//     struct (the offset of its last field plus that field's size, the
//     *_STRUCT_SIZE below) and a chain of extensions we ignore. A caller
//     built against a newer header passes a larger size; an older one a
//     smaller size, and then we may touch only the fields it has (need() in
//     boundary.go).
//   - "out" fields are ours to fill. Pointers we return stay valid for the
//     lifetime the comment gives, and point to C memory we own.
//   - Every fallible function returns a PJRT_Error*, NULL meaning success;
//     the caller frees it with PJRT_Error_Destroy (or the error's vtable).
#ifndef METALPLUG_PJRT_ABI_H_
#define METALPLUG_PJRT_ABI_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// The version metalplug reports, and the layout below follows.
#define MP_PJRT_MAJOR 0
#define MP_PJRT_MINOR 114

// A struct's ABI size: where its last field ends (not sizeof, which adds
// the trailing padding a newer field may later take).
#define MP_STRUCT_SIZE(T, last) (offsetof(T, last) + sizeof(((T*)0)->last))
#define MP_SIZED(T, last) enum { T##_STRUCT_SIZE = MP_STRUCT_SIZE(T, last) }

typedef int PJRT_Extension_Type;  // an enum in XLA; we read no value of it

typedef struct PJRT_Extension_Base {
  size_t struct_size;
  PJRT_Extension_Type type;
  struct PJRT_Extension_Base* next;
} PJRT_Extension_Base;
MP_SIZED(PJRT_Extension_Base, next);

#define MP_ARGS_HEAD          \
  size_t struct_size;         \
  PJRT_Extension_Base* extension_start

// ----------------------------------------------------------- opaque objects
// XLA leaves these undefined: each plugin defines its own. Ours are small C
// records holding a cgo.Handle to the Go object (Go pointers may not be kept
// by C), allocated and freed by the Go side (objects.go). PJRT_Error and
// PJRT_Memory are different: the ABI fixes their first member, a table of
// functions the caller may call directly.
typedef struct PJRT_Client {
  uintptr_t handle;
} PJRT_Client;
typedef struct PJRT_Device {
  uintptr_t handle;
} PJRT_Device;
typedef struct PJRT_DeviceDescription {
  uintptr_t handle;
} PJRT_DeviceDescription;
typedef struct PJRT_Buffer {
  uintptr_t handle;
} PJRT_Buffer;
typedef struct PJRT_Event {
  uintptr_t handle;
} PJRT_Event;
typedef struct PJRT_Executable {
  uintptr_t handle;
} PJRT_Executable;
typedef struct PJRT_LoadedExecutable {
  uintptr_t handle;
} PJRT_LoadedExecutable;

// Never dereferenced by us: pointers the caller hands over or we return NULL.
typedef struct PJRT_TopologyDescription PJRT_TopologyDescription;
typedef struct PJRT_ExecuteContext PJRT_ExecuteContext;
typedef struct PJRT_SendCallbackInfo PJRT_SendCallbackInfo;
typedef struct PJRT_RecvCallbackInfo PJRT_RecvCallbackInfo;
typedef struct PJRT_HloOutputCallbackInfo PJRT_HloOutputCallbackInfo;
typedef struct PJRT_MultiSlice_Config PJRT_MultiSlice_Config;
typedef struct PJRT_AsyncTrackingEvent PJRT_AsyncTrackingEvent;
typedef struct PJRT_Device_Attributes PJRT_Device_Attributes;
// Backing stores of serialized blobs we hand out; each is a malloc'd
// mp_blob (abi.c) that the matching deleter frees.
typedef struct PJRT_DeviceAssignmentSerialized PJRT_DeviceAssignmentSerialized;
typedef struct PJRT_SerializedCompileOptions PJRT_SerializedCompileOptions;

// ------------------------------------------------------------------ errors
typedef enum {
  PJRT_Error_Code_OK = 0,
  PJRT_Error_Code_CANCELLED = 1,
  PJRT_Error_Code_UNKNOWN = 2,
  PJRT_Error_Code_INVALID_ARGUMENT = 3,
  PJRT_Error_Code_DEADLINE_EXCEEDED = 4,
  PJRT_Error_Code_NOT_FOUND = 5,
  PJRT_Error_Code_ALREADY_EXISTS = 6,
  PJRT_Error_Code_PERMISSION_DENIED = 7,
  PJRT_Error_Code_RESOURCE_EXHAUSTED = 8,
  PJRT_Error_Code_FAILED_PRECONDITION = 9,
  PJRT_Error_Code_ABORTED = 10,
  PJRT_Error_Code_OUT_OF_RANGE = 11,
  PJRT_Error_Code_UNIMPLEMENTED = 12,
  PJRT_Error_Code_INTERNAL = 13,
  PJRT_Error_Code_UNAVAILABLE = 14,
  PJRT_Error_Code_DATA_LOSS = 15,
  PJRT_Error_Code_UNAUTHENTICATED = 16,
} PJRT_Error_Code;

struct PJRT_Error;
typedef void (*PJRT_Error_PayloadVisitor)(const char* key, size_t key_size, const char* value,
                                          size_t value_size, void* user_arg);

// The functions every error carries. Newer callers convert an error to
// their own status through these rather than through PJRT_Api.
typedef struct PJRT_Error_FunctionTable {
  size_t struct_size;
  size_t instance_size;  // sizeof the implementation's error record
  PJRT_Extension_Base* extension_start;
  void (*destroy)(struct PJRT_Error* error);
  void (*message)(const struct PJRT_Error* error, const char** message, size_t* message_size);
  PJRT_Error_Code (*get_code)(const struct PJRT_Error* error);
  void (*for_each_payload)(const struct PJRT_Error* error, PJRT_Error_PayloadVisitor visitor,
                           void* user_arg);
} PJRT_Error_FunctionTable;
MP_SIZED(PJRT_Error_FunctionTable, for_each_payload);

typedef struct PJRT_Error {
  const PJRT_Error_FunctionTable* vtable;  // the ABI's part; ours follows (abi.c)
} PJRT_Error;
MP_SIZED(PJRT_Error, vtable);

typedef struct PJRT_Error_Destroy_Args {
  MP_ARGS_HEAD;
  PJRT_Error* error;  // may be NULL
} PJRT_Error_Destroy_Args;
MP_SIZED(PJRT_Error_Destroy_Args, error);

typedef struct PJRT_Error_Message_Args {
  MP_ARGS_HEAD;
  const PJRT_Error* error;
  const char* message;  // out, lives as long as the error
  size_t message_size;  // out
} PJRT_Error_Message_Args;
MP_SIZED(PJRT_Error_Message_Args, message_size);

typedef struct PJRT_Error_GetCode_Args {
  MP_ARGS_HEAD;
  const PJRT_Error* error;
  PJRT_Error_Code code;  // out
} PJRT_Error_GetCode_Args;
MP_SIZED(PJRT_Error_GetCode_Args, code);

typedef struct PJRT_Error_ForEachPayload_Args {
  MP_ARGS_HEAD;
  const PJRT_Error* error;
  PJRT_Error_PayloadVisitor visitor;
  void* user_arg;
} PJRT_Error_ForEachPayload_Args;
MP_SIZED(PJRT_Error_ForEachPayload_Args, user_arg);

// ------------------------------------------------------------ named values
typedef enum {
  PJRT_NamedValue_kString = 0,
  PJRT_NamedValue_kInt64 = 1,
  PJRT_NamedValue_kInt64List = 2,
  PJRT_NamedValue_kFloat = 3,
  PJRT_NamedValue_kBool = 4,
} PJRT_NamedValue_Type;

// One key-value pair. Go cannot name the members of the anonymous union;
// abi.c reads and writes them (mp_named_*).
typedef struct PJRT_NamedValue {
  MP_ARGS_HEAD;
  const char* name;
  size_t name_size;
  PJRT_NamedValue_Type type;
  union {
    const char* string_value;
    int64_t int64_value;
    const int64_t* int64_array_value;
    float float_value;
    bool bool_value;
  };
  size_t value_size;  // characters of a string, elements of a list, else 1
} PJRT_NamedValue;
MP_SIZED(PJRT_NamedValue, value_size);

// ----------------------------------------------------------------- version
typedef struct PJRT_Api_Version {
  MP_ARGS_HEAD;
  int major_version;
  int minor_version;
} PJRT_Api_Version;
MP_SIZED(PJRT_Api_Version, minor_version);

// ------------------------------------------------------------------ plugin
typedef struct PJRT_Plugin_Initialize_Args {
  MP_ARGS_HEAD;
} PJRT_Plugin_Initialize_Args;
MP_SIZED(PJRT_Plugin_Initialize_Args, extension_start);

typedef struct PJRT_Plugin_Attributes_Args {
  MP_ARGS_HEAD;
  const PJRT_NamedValue* attributes;  // out, lives as long as the process
  size_t num_attributes;              // out
} PJRT_Plugin_Attributes_Args;
MP_SIZED(PJRT_Plugin_Attributes_Args, num_attributes);

// ------------------------------------------------------------------ events
typedef void (*PJRT_Event_OnReadyCallback)(PJRT_Error* error, void* user_arg);

typedef struct PJRT_Event_Destroy_Args {
  MP_ARGS_HEAD;
  PJRT_Event* event;  // may be NULL
} PJRT_Event_Destroy_Args;
MP_SIZED(PJRT_Event_Destroy_Args, event);

typedef struct PJRT_Event_IsReady_Args {
  MP_ARGS_HEAD;
  PJRT_Event* event;
  bool is_ready;  // out: complete, successfully or not
} PJRT_Event_IsReady_Args;
MP_SIZED(PJRT_Event_IsReady_Args, is_ready);

typedef struct PJRT_Event_Error_Args {
  MP_ARGS_HEAD;
  PJRT_Event* event;
} PJRT_Event_Error_Args;
MP_SIZED(PJRT_Event_Error_Args, event);

typedef struct PJRT_Event_Await_Args {
  MP_ARGS_HEAD;
  PJRT_Event* event;
} PJRT_Event_Await_Args;
MP_SIZED(PJRT_Event_Await_Args, event);

typedef struct PJRT_Event_OnReady_Args {
  MP_ARGS_HEAD;
  PJRT_Event* event;
  PJRT_Event_OnReadyCallback callback;  // gets an error it must destroy, or NULL
  void* user_arg;                       // the caller's
} PJRT_Event_OnReady_Args;
MP_SIZED(PJRT_Event_OnReady_Args, user_arg);

typedef struct PJRT_Event_Create_Args {
  MP_ARGS_HEAD;
  PJRT_Event* event;  // out, the caller destroys it
} PJRT_Event_Create_Args;
MP_SIZED(PJRT_Event_Create_Args, event);

typedef struct PJRT_Event_Set_Args {
  MP_ARGS_HEAD;
  PJRT_Event* event;  // one PJRT_Event_Create made
  PJRT_Error_Code error_code;
  const char* error_message;  // copied
  size_t error_message_size;
} PJRT_Event_Set_Args;
MP_SIZED(PJRT_Event_Set_Args, error_message_size);

// ------------------------------------------------------------------ memory
struct PJRT_Memory;
typedef struct PJRT_Memory_FunctionTable {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  size_t instance_struct_size;
  // The caller's data attached to a memory, by its own key (abi.c).
  void* (*get_user_data)(struct PJRT_Memory* memory, const void* key);
  void (*set_user_data)(struct PJRT_Memory* memory, const void* key, void* data,
                        void (*dtor)(void*));
} PJRT_Memory_FunctionTable;
MP_SIZED(PJRT_Memory_FunctionTable, set_user_data);

typedef struct mp_user_data mp_user_data;
typedef struct PJRT_Memory {
  const PJRT_Memory_FunctionTable* vtable;  // the ABI's part
  uintptr_t handle;                         // ours: the Go memory space
  mp_user_data* user_data;                  // ours: the caller's attachments
} PJRT_Memory;
MP_SIZED(PJRT_Memory, vtable);

// ------------------------------------------------------------------ client
typedef struct PJRT_Client_Create_Args {
  MP_ARGS_HEAD;
  const PJRT_NamedValue* create_options;
  size_t num_options;
  // Key-value store callbacks for multi-process setups; unused by us.
  void* kv_get_callback;
  void* kv_get_user_arg;
  void* kv_put_callback;
  void* kv_put_user_arg;
  PJRT_Client* client;  // out, the caller destroys it
  void* kv_try_get_callback;
  void* kv_try_get_user_arg;
} PJRT_Client_Create_Args;
MP_SIZED(PJRT_Client_Create_Args, kv_try_get_user_arg);

typedef struct PJRT_Client_Destroy_Args {
  MP_ARGS_HEAD;
  PJRT_Client* client;  // may be NULL
} PJRT_Client_Destroy_Args;
MP_SIZED(PJRT_Client_Destroy_Args, client);

typedef struct PJRT_Client_PlatformName_Args {
  MP_ARGS_HEAD;
  PJRT_Client* client;
  const char* platform_name;  // out, lives as long as the client
  size_t platform_name_size;  // out
} PJRT_Client_PlatformName_Args;
MP_SIZED(PJRT_Client_PlatformName_Args, platform_name_size);

typedef struct PJRT_Client_ProcessIndex_Args {
  MP_ARGS_HEAD;
  PJRT_Client* client;
  int process_index;  // out
} PJRT_Client_ProcessIndex_Args;
MP_SIZED(PJRT_Client_ProcessIndex_Args, process_index);

typedef struct PJRT_Client_PlatformVersion_Args {
  MP_ARGS_HEAD;
  PJRT_Client* client;
  const char* platform_version;  // out, lives as long as the client
  size_t platform_version_size;  // out
} PJRT_Client_PlatformVersion_Args;
MP_SIZED(PJRT_Client_PlatformVersion_Args, platform_version_size);

typedef struct PJRT_Client_Devices_Args {
  MP_ARGS_HEAD;
  PJRT_Client* client;
  PJRT_Device* const* devices;  // out, lives as long as the client
  size_t num_devices;           // out
} PJRT_Client_Devices_Args;
MP_SIZED(PJRT_Client_Devices_Args, num_devices);

typedef struct PJRT_Client_AddressableDevices_Args {
  MP_ARGS_HEAD;
  PJRT_Client* client;
  PJRT_Device* const* addressable_devices;  // out, lives as long as the client
  size_t num_addressable_devices;           // out
} PJRT_Client_AddressableDevices_Args;
MP_SIZED(PJRT_Client_AddressableDevices_Args, num_addressable_devices);

typedef struct PJRT_Client_LookupDevice_Args {
  MP_ARGS_HEAD;
  PJRT_Client* client;
  int id;               // a PJRT_DeviceDescription_Id
  PJRT_Device* device;  // out
} PJRT_Client_LookupDevice_Args;
MP_SIZED(PJRT_Client_LookupDevice_Args, device);

typedef struct PJRT_Client_LookupAddressableDevice_Args {
  MP_ARGS_HEAD;
  PJRT_Client* client;
  int local_hardware_id;            // a PJRT_Device_LocalHardwareId
  PJRT_Device* addressable_device;  // out
} PJRT_Client_LookupAddressableDevice_Args;
MP_SIZED(PJRT_Client_LookupAddressableDevice_Args, addressable_device);

typedef struct PJRT_Client_AddressableMemories_Args {
  MP_ARGS_HEAD;
  PJRT_Client* client;
  PJRT_Memory* const* addressable_memories;  // out, lives as long as the client
  size_t num_addressable_memories;           // out
} PJRT_Client_AddressableMemories_Args;
MP_SIZED(PJRT_Client_AddressableMemories_Args, num_addressable_memories);

typedef struct PJRT_Client_DefaultDeviceAssignment_Args {
  MP_ARGS_HEAD;
  PJRT_Client* client;
  int num_replicas;
  int num_partitions;
  size_t default_assignment_size;  // of the caller's array, >= replicas * partitions
  int* default_assignment;         // the caller's; we write device ids, replica-major
} PJRT_Client_DefaultDeviceAssignment_Args;
MP_SIZED(PJRT_Client_DefaultDeviceAssignment_Args, default_assignment);

// ----------------------------------------------------------------- compile
// A program to compile; everything in it is the caller's.
typedef struct PJRT_Program {
  MP_ARGS_HEAD;
  char* code;  // "mlir": MLIR bytecode (a StableHLO portable artifact) or text
  size_t code_size;
  const char* format;  // "mlir", "hlo", "hlo_with_config"
  size_t format_size;
} PJRT_Program;
MP_SIZED(PJRT_Program, format_size);

typedef struct PJRT_Client_Compile_Args {
  MP_ARGS_HEAD;
  PJRT_Client* client;
  const PJRT_Program* program;
  const char* compile_options;  // a serialized xla.CompileOptionsProto
  size_t compile_options_size;
  PJRT_LoadedExecutable* executable;  // out, the caller destroys it
} PJRT_Client_Compile_Args;
MP_SIZED(PJRT_Client_Compile_Args, executable);

// ----------------------------------------------------------- buffer shapes
typedef enum {
  PJRT_Buffer_Type_INVALID = 0,
  PJRT_Buffer_Type_PRED = 1,
  PJRT_Buffer_Type_S8 = 2,
  PJRT_Buffer_Type_S16 = 3,
  PJRT_Buffer_Type_S32 = 4,
  PJRT_Buffer_Type_S64 = 5,
  PJRT_Buffer_Type_U8 = 6,
  PJRT_Buffer_Type_U16 = 7,
  PJRT_Buffer_Type_U32 = 8,
  PJRT_Buffer_Type_U64 = 9,
  PJRT_Buffer_Type_F16 = 10,
  PJRT_Buffer_Type_F32 = 11,
  PJRT_Buffer_Type_F64 = 12,
  PJRT_Buffer_Type_BF16 = 13,
  PJRT_Buffer_Type_C64 = 14,
  PJRT_Buffer_Type_C128 = 15,
  PJRT_Buffer_Type_F8E5M2 = 16,
  PJRT_Buffer_Type_F8E4M3FN = 17,
  PJRT_Buffer_Type_F8E4M3B11FNUZ = 18,
  PJRT_Buffer_Type_F8E5M2FNUZ = 19,
  PJRT_Buffer_Type_F8E4M3FNUZ = 20,
  PJRT_Buffer_Type_S4 = 21,
  PJRT_Buffer_Type_U4 = 22,
  PJRT_Buffer_Type_TOKEN = 23,
  PJRT_Buffer_Type_S2 = 24,
  PJRT_Buffer_Type_U2 = 25,
  PJRT_Buffer_Type_F8E4M3 = 26,
  PJRT_Buffer_Type_F8E3M4 = 27,
  PJRT_Buffer_Type_F8E8M0FNU = 28,
  PJRT_Buffer_Type_F4E2M1FN = 29,
  PJRT_Buffer_Type_S1 = 30,
  PJRT_Buffer_Type_U1 = 31,
  PJRT_Buffer_Type_F6E2M3FN = 32,
  PJRT_Buffer_Type_F6E3M2FN = 33,
} PJRT_Buffer_Type;

typedef enum {
  // Copy during the call; the caller may reuse the data on return.
  PJRT_HostBufferSemantics_kImmutableOnlyDuringCall = 0,
  // The data stays untouched until done_with_host_buffer is ready.
  PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes = 1,
  // The buffer may alias the data for its whole life (we copy instead).
  PJRT_HostBufferSemantics_kImmutableZeroCopy = 2,
  // As above, and mutable; off the CPU it means the second.
  PJRT_HostBufferSemantics_kMutableZeroCopy = 3,
} PJRT_HostBufferSemantics;

typedef enum {
  PJRT_Buffer_MemoryLayout_Type_Tiled = 0,
  PJRT_Buffer_MemoryLayout_Type_Strides = 1,
} PJRT_Buffer_MemoryLayout_Type;

typedef struct PJRT_Buffer_MemoryLayout_Tiled {
  MP_ARGS_HEAD;
  const int64_t* minor_to_major;  // logical dimensions, fastest varying first
  size_t minor_to_major_size;
  const int64_t* tile_dims;       // all tiles' dimensions, concatenated
  const size_t* tile_dim_sizes;   // each tile's rank
  size_t num_tiles;
} PJRT_Buffer_MemoryLayout_Tiled;
MP_SIZED(PJRT_Buffer_MemoryLayout_Tiled, num_tiles);

typedef struct PJRT_Buffer_MemoryLayout_Strides {
  MP_ARGS_HEAD;
  const int64_t* byte_strides;  // one per dimension, may be negative
  size_t num_byte_strides;
} PJRT_Buffer_MemoryLayout_Strides;
MP_SIZED(PJRT_Buffer_MemoryLayout_Strides, num_byte_strides);

// Go reaches the union's members through mp_layout_tiled/mp_layout_strides.
typedef struct PJRT_Buffer_MemoryLayout {
  MP_ARGS_HEAD;
  union {
    PJRT_Buffer_MemoryLayout_Tiled tiled;
    PJRT_Buffer_MemoryLayout_Strides strides;
  };
  PJRT_Buffer_MemoryLayout_Type type;
} PJRT_Buffer_MemoryLayout;
MP_SIZED(PJRT_Buffer_MemoryLayout, type);

typedef struct PJRT_Client_BufferFromHostBuffer_Args {
  MP_ARGS_HEAD;
  PJRT_Client* client;
  const void* data;  // the caller's; may point inside its array when strides are negative
  PJRT_Buffer_Type type;
  const int64_t* dims;
  size_t num_dims;
  const int64_t* byte_strides;  // NULL/0, or one per dimension
  size_t num_byte_strides;
  PJRT_HostBufferSemantics host_buffer_semantics;
  PJRT_Device* device;
  PJRT_Memory* memory;                       // when set, wins over device
  PJRT_Buffer_MemoryLayout* device_layout;   // NULL: dense, major to minor
  PJRT_Event* done_with_host_buffer;         // out: data may be freed once ready
  PJRT_Buffer* buffer;                       // out, the caller destroys it
} PJRT_Client_BufferFromHostBuffer_Args;
MP_SIZED(PJRT_Client_BufferFromHostBuffer_Args, buffer);

typedef struct PJRT_Client_CreateUninitializedBuffer_Args {
  MP_ARGS_HEAD;
  PJRT_Client* client;
  const int64_t* shape_dims;
  size_t shape_num_dims;
  PJRT_Buffer_Type shape_element_type;
  PJRT_Buffer_MemoryLayout* shape_layout;
  PJRT_Device* device;
  PJRT_Memory* memory;
  PJRT_Buffer* buffer;  // out
} PJRT_Client_CreateUninitializedBuffer_Args;
MP_SIZED(PJRT_Client_CreateUninitializedBuffer_Args, buffer);

// ------------------------------------------------------ device descriptions
typedef struct PJRT_DeviceDescription_Id_Args {
  MP_ARGS_HEAD;
  PJRT_DeviceDescription* device_description;
  int id;  // out
} PJRT_DeviceDescription_Id_Args;
MP_SIZED(PJRT_DeviceDescription_Id_Args, id);

typedef struct PJRT_DeviceDescription_ProcessIndex_Args {
  MP_ARGS_HEAD;
  PJRT_DeviceDescription* device_description;
  int process_index;  // out
} PJRT_DeviceDescription_ProcessIndex_Args;
MP_SIZED(PJRT_DeviceDescription_ProcessIndex_Args, process_index);

// Note the order: the count comes first here, unlike the plugin's attributes.
typedef struct PJRT_DeviceDescription_Attributes_Args {
  MP_ARGS_HEAD;
  PJRT_DeviceDescription* device_description;
  size_t num_attributes;              // out
  const PJRT_NamedValue* attributes;  // out, lives as long as the device
} PJRT_DeviceDescription_Attributes_Args;
MP_SIZED(PJRT_DeviceDescription_Attributes_Args, attributes);

// Kind, DebugString and ToString share this shape (a string that lives as
// long as the device), each under its own field names.
typedef struct PJRT_DeviceDescription_Kind_Args {
  MP_ARGS_HEAD;
  PJRT_DeviceDescription* device_description;
  const char* device_kind;  // out
  size_t device_kind_size;  // out
} PJRT_DeviceDescription_Kind_Args;
MP_SIZED(PJRT_DeviceDescription_Kind_Args, device_kind_size);

typedef struct PJRT_DeviceDescription_DebugString_Args {
  MP_ARGS_HEAD;
  PJRT_DeviceDescription* device_description;
  const char* debug_string;  // out
  size_t debug_string_size;  // out
} PJRT_DeviceDescription_DebugString_Args;
MP_SIZED(PJRT_DeviceDescription_DebugString_Args, debug_string_size);

typedef struct PJRT_DeviceDescription_ToString_Args {
  MP_ARGS_HEAD;
  PJRT_DeviceDescription* device_description;
  const char* to_string;  // out
  size_t to_string_size;  // out
} PJRT_DeviceDescription_ToString_Args;
MP_SIZED(PJRT_DeviceDescription_ToString_Args, to_string_size);

// ----------------------------------------------------------------- devices
typedef struct PJRT_Device_GetDescription_Args {
  MP_ARGS_HEAD;
  PJRT_Device* device;
  PJRT_DeviceDescription* device_description;  // out, lives as long as the device
} PJRT_Device_GetDescription_Args;
MP_SIZED(PJRT_Device_GetDescription_Args, device_description);

typedef struct PJRT_Device_IsAddressable_Args {
  MP_ARGS_HEAD;
  PJRT_Device* device;
  bool is_addressable;  // out
} PJRT_Device_IsAddressable_Args;
MP_SIZED(PJRT_Device_IsAddressable_Args, is_addressable);

typedef struct PJRT_Device_LocalHardwareId_Args {
  MP_ARGS_HEAD;
  PJRT_Device* device;
  int local_hardware_id;  // out
} PJRT_Device_LocalHardwareId_Args;
MP_SIZED(PJRT_Device_LocalHardwareId_Args, local_hardware_id);

typedef struct PJRT_Device_AddressableMemories_Args {
  MP_ARGS_HEAD;
  PJRT_Device* device;
  PJRT_Memory* const* memories;  // out, lives as long as the device
  size_t num_memories;           // out
} PJRT_Device_AddressableMemories_Args;
MP_SIZED(PJRT_Device_AddressableMemories_Args, num_memories);

typedef struct PJRT_Device_DefaultMemory_Args {
  MP_ARGS_HEAD;
  PJRT_Device* device;
  PJRT_Memory* memory;  // out
} PJRT_Device_DefaultMemory_Args;
MP_SIZED(PJRT_Device_DefaultMemory_Args, memory);

// Every statistic but bytes_in_use is optional: its flag says it is set.
typedef struct PJRT_Device_MemoryStats_Args {
  MP_ARGS_HEAD;
  PJRT_Device* device;
  int64_t bytes_in_use;
  int64_t peak_bytes_in_use;
  bool peak_bytes_in_use_is_set;
  int64_t num_allocs;
  bool num_allocs_is_set;
  int64_t largest_alloc_size;
  bool largest_alloc_size_is_set;
  int64_t bytes_limit;
  bool bytes_limit_is_set;
  int64_t bytes_reserved;
  bool bytes_reserved_is_set;
  int64_t peak_bytes_reserved;
  bool peak_bytes_reserved_is_set;
  int64_t bytes_reservable_limit;
  bool bytes_reservable_limit_is_set;
  int64_t largest_free_block_bytes;
  bool largest_free_block_bytes_is_set;
  int64_t pool_bytes;
  bool pool_bytes_is_set;
  int64_t peak_pool_bytes;
  bool peak_pool_bytes_is_set;
  int64_t peak_allocated_bytes;
  bool peak_allocated_bytes_is_set;
} PJRT_Device_MemoryStats_Args;
MP_SIZED(PJRT_Device_MemoryStats_Args, peak_allocated_bytes_is_set);

typedef struct PJRT_Device_ClearMemoryStats_Args {
  MP_ARGS_HEAD;
  PJRT_Device* device;
} PJRT_Device_ClearMemoryStats_Args;
MP_SIZED(PJRT_Device_ClearMemoryStats_Args, device);

typedef struct PJRT_Device_GetAttributes_Args {
  MP_ARGS_HEAD;
  PJRT_Device* device;
  const PJRT_NamedValue* attributes;         // out, until attributes_deleter runs
  size_t num_attributes;                     // out
  PJRT_Device_Attributes* device_attributes; // out, passed to the deleter
  void (*attributes_deleter)(PJRT_Device_Attributes* device_attributes);  // out, never NULL
} PJRT_Device_GetAttributes_Args;
MP_SIZED(PJRT_Device_GetAttributes_Args, attributes_deleter);

typedef struct PJRT_Device_CreateAsyncTrackingEvent_Args {
  MP_ARGS_HEAD;
  PJRT_Device* device;
  const char* description;
  size_t description_size;
  PJRT_AsyncTrackingEvent* event;  // out; we track nothing and return NULL
} PJRT_Device_CreateAsyncTrackingEvent_Args;
MP_SIZED(PJRT_Device_CreateAsyncTrackingEvent_Args, event);

typedef struct PJRT_AsyncTrackingEvent_Destroy_Args {
  MP_ARGS_HEAD;
  PJRT_AsyncTrackingEvent* event;
} PJRT_AsyncTrackingEvent_Destroy_Args;
MP_SIZED(PJRT_AsyncTrackingEvent_Destroy_Args, event);

// ---------------------------------------------------------------- memories
typedef struct PJRT_Memory_Id_Args {
  MP_ARGS_HEAD;
  PJRT_Memory* memory;
  int id;  // out
} PJRT_Memory_Id_Args;
MP_SIZED(PJRT_Memory_Id_Args, id);

typedef struct PJRT_Memory_Kind_Args {
  MP_ARGS_HEAD;
  PJRT_Memory* memory;
  const char* kind;  // out, lives as long as the memory
  size_t kind_size;  // out
} PJRT_Memory_Kind_Args;
MP_SIZED(PJRT_Memory_Kind_Args, kind_size);

typedef struct PJRT_Memory_Kind_Id_Args {
  MP_ARGS_HEAD;
  PJRT_Memory* memory;
  int kind_id;  // out
} PJRT_Memory_Kind_Id_Args;
MP_SIZED(PJRT_Memory_Kind_Id_Args, kind_id);

typedef struct PJRT_Memory_DebugString_Args {
  MP_ARGS_HEAD;
  PJRT_Memory* memory;
  const char* debug_string;  // out, lives as long as the memory
  size_t debug_string_size;  // out
} PJRT_Memory_DebugString_Args;
MP_SIZED(PJRT_Memory_DebugString_Args, debug_string_size);

typedef struct PJRT_Memory_ToString_Args {
  MP_ARGS_HEAD;
  PJRT_Memory* memory;
  const char* to_string;  // out, lives as long as the memory
  size_t to_string_size;  // out
} PJRT_Memory_ToString_Args;
MP_SIZED(PJRT_Memory_ToString_Args, to_string_size);

typedef struct PJRT_Memory_AddressableByDevices_Args {
  MP_ARGS_HEAD;
  PJRT_Memory* memory;
  PJRT_Device* const* devices;  // out, lives as long as the memory
  size_t num_devices;           // out
} PJRT_Memory_AddressableByDevices_Args;
MP_SIZED(PJRT_Memory_AddressableByDevices_Args, num_devices);

// ------------------------------------------------------------- executables
// PJRT_Executable is the compiled program's description; a
// PJRT_LoadedExecutable is that program loaded on the client's device.

typedef struct PJRT_Executable_Destroy_Args {
  MP_ARGS_HEAD;
  PJRT_Executable* executable;  // may be NULL
} PJRT_Executable_Destroy_Args;
MP_SIZED(PJRT_Executable_Destroy_Args, executable);

typedef struct PJRT_Executable_Name_Args {
  MP_ARGS_HEAD;
  PJRT_Executable* executable;
  const char* executable_name;  // out, lives as long as the executable
  size_t executable_name_size;  // out
} PJRT_Executable_Name_Args;
MP_SIZED(PJRT_Executable_Name_Args, executable_name_size);

typedef struct PJRT_Executable_NumReplicas_Args {
  MP_ARGS_HEAD;
  PJRT_Executable* executable;
  size_t num_replicas;  // out
} PJRT_Executable_NumReplicas_Args;
MP_SIZED(PJRT_Executable_NumReplicas_Args, num_replicas);

typedef struct PJRT_Executable_NumPartitions_Args {
  MP_ARGS_HEAD;
  PJRT_Executable* executable;
  size_t num_partitions;  // out
} PJRT_Executable_NumPartitions_Args;
MP_SIZED(PJRT_Executable_NumPartitions_Args, num_partitions);

typedef struct PJRT_Executable_NumOutputs_Args {
  MP_ARGS_HEAD;
  PJRT_Executable* executable;
  size_t num_outputs;  // out
} PJRT_Executable_NumOutputs_Args;
MP_SIZED(PJRT_Executable_NumOutputs_Args, num_outputs);

typedef struct PJRT_Executable_SizeOfGeneratedCodeInBytes_Args {
  MP_ARGS_HEAD;
  PJRT_Executable* executable;
  int64_t size_in_bytes;  // out
} PJRT_Executable_SizeOfGeneratedCodeInBytes_Args;
MP_SIZED(PJRT_Executable_SizeOfGeneratedCodeInBytes_Args, size_in_bytes);

typedef struct PJRT_Executable_GetCostAnalysis_Args {
  MP_ARGS_HEAD;
  PJRT_Executable* executable;
  size_t num_properties;              // out
  const PJRT_NamedValue* properties;  // out, lives as long as the executable
} PJRT_Executable_GetCostAnalysis_Args;
MP_SIZED(PJRT_Executable_GetCostAnalysis_Args, properties);

// Output and parameter memory kinds: one string per output (parameter).
typedef struct PJRT_Executable_OutputMemoryKinds_Args {
  MP_ARGS_HEAD;
  PJRT_Executable* executable;
  size_t num_outputs;                // out
  const char* const* memory_kinds;   // out, lives as long as the executable
  const size_t* memory_kind_sizes;   // out
} PJRT_Executable_OutputMemoryKinds_Args;
MP_SIZED(PJRT_Executable_OutputMemoryKinds_Args, memory_kind_sizes);

typedef struct PJRT_Executable_ParameterMemoryKinds_Args {
  MP_ARGS_HEAD;
  PJRT_Executable* executable;
  size_t num_parameters;             // out
  const char* const* memory_kinds;   // out, lives as long as the executable
  const size_t* memory_kind_sizes;   // out
} PJRT_Executable_ParameterMemoryKinds_Args;
MP_SIZED(PJRT_Executable_ParameterMemoryKinds_Args, memory_kind_sizes);

typedef struct PJRT_Executable_OutputElementTypes_Args {
  MP_ARGS_HEAD;
  PJRT_Executable* executable;
  PJRT_Buffer_Type* output_types;  // out, lives as long as the executable
  size_t num_output_types;         // out
} PJRT_Executable_OutputElementTypes_Args;
MP_SIZED(PJRT_Executable_OutputElementTypes_Args, num_output_types);

typedef struct PJRT_Executable_OutputDimensions_Args {
  MP_ARGS_HEAD;
  PJRT_Executable* executable;
  size_t num_outputs;       // out
  const int64_t* dims;      // out: every output's dimensions, concatenated
  const size_t* dim_sizes;  // out: each output's rank
} PJRT_Executable_OutputDimensions_Args;
MP_SIZED(PJRT_Executable_OutputDimensions_Args, dim_sizes);

typedef struct PJRT_Executable_Fingerprint_Args {
  MP_ARGS_HEAD;
  PJRT_Executable* executable;
  const char* executable_fingerprint;  // out, lives as long as the executable
  size_t executable_fingerprint_size;  // out
} PJRT_Executable_Fingerprint_Args;
MP_SIZED(PJRT_Executable_Fingerprint_Args, executable_fingerprint_size);

typedef struct PJRT_Executable_GetCompiledMemoryStats_Args {
  MP_ARGS_HEAD;
  PJRT_Executable* executable;
  int64_t generated_code_size_in_bytes;  // out, every field below too
  int64_t argument_size_in_bytes;
  int64_t output_size_in_bytes;
  int64_t alias_size_in_bytes;
  int64_t temp_size_in_bytes;
  int64_t host_generated_code_size_in_bytes;
  int64_t host_argument_size_in_bytes;
  int64_t host_output_size_in_bytes;
  int64_t host_alias_size_in_bytes;
  int64_t host_temp_size_in_bytes;
  int64_t peak_memory_in_bytes;
  int64_t total_size_in_bytes;
  int64_t total_allocation_bytes;
  int64_t indefinite_allocations;
  int64_t peak_unpadded_heap_bytes;
} PJRT_Executable_GetCompiledMemoryStats_Args;
MP_SIZED(PJRT_Executable_GetCompiledMemoryStats_Args, peak_unpadded_heap_bytes);

typedef struct PJRT_Executable_GetCompileOptions_Args {
  MP_ARGS_HEAD;
  PJRT_Executable* executable;
  const char* serialized_bytes;  // out, until the deleter runs
  size_t serialized_bytes_size;  // out
  PJRT_SerializedCompileOptions* serialized_compile_options;  // out
  void (*serialized_compile_options_deleter)(PJRT_SerializedCompileOptions* options);  // out
} PJRT_Executable_GetCompileOptions_Args;
MP_SIZED(PJRT_Executable_GetCompileOptions_Args, serialized_compile_options_deleter);

typedef struct PJRT_LoadedExecutable_Destroy_Args {
  MP_ARGS_HEAD;
  PJRT_LoadedExecutable* executable;  // may be NULL
} PJRT_LoadedExecutable_Destroy_Args;
MP_SIZED(PJRT_LoadedExecutable_Destroy_Args, executable);

typedef struct PJRT_LoadedExecutable_GetExecutable_Args {
  MP_ARGS_HEAD;
  PJRT_LoadedExecutable* loaded_executable;
  PJRT_Executable* executable;  // out, a new one the caller destroys
} PJRT_LoadedExecutable_GetExecutable_Args;
MP_SIZED(PJRT_LoadedExecutable_GetExecutable_Args, executable);

typedef struct PJRT_LoadedExecutable_GetDeviceAssignment_Args {
  MP_ARGS_HEAD;
  PJRT_LoadedExecutable* executable;
  const char* serialized_bytes;  // out: a DeviceAssignmentProto, until the deleter runs
  size_t serialized_bytes_size;  // out
  PJRT_DeviceAssignmentSerialized* serialized_device_assignment;  // out
  void (*serialized_device_assignment_deleter)(PJRT_DeviceAssignmentSerialized* da);  // out
} PJRT_LoadedExecutable_GetDeviceAssignment_Args;
MP_SIZED(PJRT_LoadedExecutable_GetDeviceAssignment_Args, serialized_device_assignment_deleter);

typedef struct PJRT_LoadedExecutable_AddressableDevices_Args {
  MP_ARGS_HEAD;
  PJRT_LoadedExecutable* executable;
  PJRT_Device* const* addressable_devices;  // out, lives as long as the executable
  size_t num_addressable_devices;           // out
} PJRT_LoadedExecutable_AddressableDevices_Args;
MP_SIZED(PJRT_LoadedExecutable_AddressableDevices_Args, num_addressable_devices);

typedef struct PJRT_LogicalDeviceIds {
  int replica;
  int partition;
} PJRT_LogicalDeviceIds;

typedef struct PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args {
  MP_ARGS_HEAD;
  PJRT_LoadedExecutable* executable;
  PJRT_LogicalDeviceIds* addressable_device_logical_ids;  // out, lives as long as the executable
  size_t num_addressable_device_logical_ids;              // out
} PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args;
MP_SIZED(PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args,
         num_addressable_device_logical_ids);

typedef struct PJRT_LoadedExecutable_Delete_Args {
  MP_ARGS_HEAD;
  PJRT_LoadedExecutable* executable;
} PJRT_LoadedExecutable_Delete_Args;
MP_SIZED(PJRT_LoadedExecutable_Delete_Args, executable);

typedef struct PJRT_LoadedExecutable_IsDeleted_Args {
  MP_ARGS_HEAD;
  PJRT_LoadedExecutable* executable;
  bool is_deleted;  // out
} PJRT_LoadedExecutable_IsDeleted_Args;
MP_SIZED(PJRT_LoadedExecutable_IsDeleted_Args, is_deleted);

typedef struct PJRT_LoadedExecutable_Fingerprint_Args {
  MP_ARGS_HEAD;
  PJRT_LoadedExecutable* executable;
  const char* executable_fingerprint;  // out, lives as long as the executable
  size_t executable_fingerprint_size;  // out
} PJRT_LoadedExecutable_Fingerprint_Args;
MP_SIZED(PJRT_LoadedExecutable_Fingerprint_Args, executable_fingerprint_size);

// The options of one execution, all the caller's. Fields past
// non_donatable_input_indices arrived in later minors: read them only when
// struct_size covers them.
typedef struct PJRT_ExecuteOptions {
  MP_ARGS_HEAD;
  PJRT_SendCallbackInfo** send_callbacks;  // host send/recv: we reject them
  PJRT_RecvCallbackInfo** recv_callbacks;
  size_t num_send_ops;
  size_t num_recv_ops;
  int launch_id;
  const int64_t* non_donatable_input_indices;
  size_t num_non_donatable_input_indices;
  PJRT_ExecuteContext* context;
  const char* call_location;  // where in the caller's code, NUL-terminated
  size_t num_tasks;
  int* task_ids;
  int64_t* incarnation_ids;
  PJRT_MultiSlice_Config* multi_slice_config;
  bool use_major_to_minor_data_layout_for_callbacks;
  PJRT_HloOutputCallbackInfo* hlo_output_callbacks;
  size_t num_hlo_output_callbacks;
} PJRT_ExecuteOptions;
MP_SIZED(PJRT_ExecuteOptions, num_hlo_output_callbacks);

typedef struct PJRT_LoadedExecutable_Execute_Args {
  MP_ARGS_HEAD;
  PJRT_LoadedExecutable* executable;
  PJRT_ExecuteOptions* options;
  PJRT_Buffer* const* const* argument_lists;  // [num_devices][num_args]
  size_t num_devices;
  size_t num_args;
  PJRT_Buffer** const* output_lists;    // [num_devices][num_outputs], the caller's arrays; we fill them
  PJRT_Event** device_complete_events;  // NULL, or [num_devices] we fill
  PJRT_Device* execute_device;          // NULL: the compile-time device
} PJRT_LoadedExecutable_Execute_Args;
MP_SIZED(PJRT_LoadedExecutable_Execute_Args, execute_device);

// ----------------------------------------------------------------- buffers
// Most buffer functions take just the buffer and fill one out field.
typedef struct PJRT_Buffer_Destroy_Args {
  MP_ARGS_HEAD;
  PJRT_Buffer* buffer;  // may be NULL
} PJRT_Buffer_Destroy_Args;
MP_SIZED(PJRT_Buffer_Destroy_Args, buffer);

typedef struct PJRT_Buffer_ElementType_Args {
  MP_ARGS_HEAD;
  PJRT_Buffer* buffer;
  PJRT_Buffer_Type type;  // out
} PJRT_Buffer_ElementType_Args;
MP_SIZED(PJRT_Buffer_ElementType_Args, type);

typedef struct PJRT_Buffer_Dimensions_Args {
  MP_ARGS_HEAD;
  PJRT_Buffer* buffer;
  const int64_t* dims;  // out, lives as long as the buffer
  size_t num_dims;      // out
} PJRT_Buffer_Dimensions_Args;
MP_SIZED(PJRT_Buffer_Dimensions_Args, num_dims);

typedef struct PJRT_Buffer_UnpaddedDimensions_Args {
  MP_ARGS_HEAD;
  PJRT_Buffer* buffer;
  const int64_t* unpadded_dims;  // out, lives as long as the buffer
  size_t num_dims;               // out
} PJRT_Buffer_UnpaddedDimensions_Args;
MP_SIZED(PJRT_Buffer_UnpaddedDimensions_Args, num_dims);

typedef struct PJRT_Buffer_DynamicDimensionIndices_Args {
  MP_ARGS_HEAD;
  PJRT_Buffer* buffer;
  const size_t* dynamic_dim_indices;  // out: none, our shapes are static
  size_t num_dynamic_dims;            // out
} PJRT_Buffer_DynamicDimensionIndices_Args;
MP_SIZED(PJRT_Buffer_DynamicDimensionIndices_Args, num_dynamic_dims);

typedef struct PJRT_Buffer_GetMemoryLayout_Args {
  MP_ARGS_HEAD;
  PJRT_Buffer* buffer;
  PJRT_Buffer_MemoryLayout layout;  // out, arrays live as long as the buffer
} PJRT_Buffer_GetMemoryLayout_Args;
MP_SIZED(PJRT_Buffer_GetMemoryLayout_Args, layout);

typedef struct PJRT_Buffer_ToHostBuffer_Args {
  MP_ARGS_HEAD;
  PJRT_Buffer* src;
  PJRT_Buffer_MemoryLayout* host_layout;  // NULL: dense, major to minor
  void* dst;        // NULL asks for dst_size only
  size_t dst_size;  // in: dst's size; out (dst NULL): the size needed
  PJRT_Event* event;  // out: dst is filled once ready
} PJRT_Buffer_ToHostBuffer_Args;
MP_SIZED(PJRT_Buffer_ToHostBuffer_Args, event);

typedef struct PJRT_Buffer_OnDeviceSizeInBytes_Args {
  MP_ARGS_HEAD;
  PJRT_Buffer* buffer;
  size_t on_device_size_in_bytes;  // out
} PJRT_Buffer_OnDeviceSizeInBytes_Args;
MP_SIZED(PJRT_Buffer_OnDeviceSizeInBytes_Args, on_device_size_in_bytes);

typedef struct PJRT_Buffer_Delete_Args {
  MP_ARGS_HEAD;
  PJRT_Buffer* buffer;
} PJRT_Buffer_Delete_Args;
MP_SIZED(PJRT_Buffer_Delete_Args, buffer);

typedef struct PJRT_Buffer_IsDeleted_Args {
  MP_ARGS_HEAD;
  PJRT_Buffer* buffer;
  bool is_deleted;  // out
} PJRT_Buffer_IsDeleted_Args;
MP_SIZED(PJRT_Buffer_IsDeleted_Args, is_deleted);

typedef struct PJRT_Buffer_CopyRawToHost_Args {
  MP_ARGS_HEAD;
  PJRT_Buffer* buffer;
  void* dst;
  int64_t offset;
  int64_t transfer_size;
  PJRT_Event* event;  // out
} PJRT_Buffer_CopyRawToHost_Args;
MP_SIZED(PJRT_Buffer_CopyRawToHost_Args, event);

typedef struct PJRT_Buffer_CopyToDevice_Args {
  MP_ARGS_HEAD;
  PJRT_Buffer* buffer;
  PJRT_Device* dst_device;
  PJRT_Buffer* dst_buffer;  // out
} PJRT_Buffer_CopyToDevice_Args;
MP_SIZED(PJRT_Buffer_CopyToDevice_Args, dst_buffer);

typedef struct PJRT_Buffer_CopyToMemory_Args {
  MP_ARGS_HEAD;
  PJRT_Buffer* buffer;
  PJRT_Memory* dst_memory;
  PJRT_Buffer* dst_buffer;  // out
} PJRT_Buffer_CopyToMemory_Args;
MP_SIZED(PJRT_Buffer_CopyToMemory_Args, dst_buffer);

typedef struct PJRT_Buffer_IsOnCpu_Args {
  MP_ARGS_HEAD;
  PJRT_Buffer* buffer;
  bool is_on_cpu;  // out
} PJRT_Buffer_IsOnCpu_Args;
MP_SIZED(PJRT_Buffer_IsOnCpu_Args, is_on_cpu);

typedef struct PJRT_Buffer_Device_Args {
  MP_ARGS_HEAD;
  PJRT_Buffer* buffer;
  PJRT_Device* device;  // out
} PJRT_Buffer_Device_Args;
MP_SIZED(PJRT_Buffer_Device_Args, device);

typedef struct PJRT_Buffer_Memory_Args {
  MP_ARGS_HEAD;
  PJRT_Buffer* buffer;
  PJRT_Memory* memory;  // out
} PJRT_Buffer_Memory_Args;
MP_SIZED(PJRT_Buffer_Memory_Args, memory);

typedef struct PJRT_Buffer_ReadyEvent_Args {
  MP_ARGS_HEAD;
  PJRT_Buffer* buffer;
  PJRT_Event* event;  // out, a new one the caller destroys
} PJRT_Buffer_ReadyEvent_Args;
MP_SIZED(PJRT_Buffer_ReadyEvent_Args, event);

typedef struct PJRT_Buffer_UnsafePointer_Args {
  MP_ARGS_HEAD;
  PJRT_Buffer* buffer;
  uintptr_t buffer_pointer;  // out
} PJRT_Buffer_UnsafePointer_Args;
MP_SIZED(PJRT_Buffer_UnsafePointer_Args, buffer_pointer);

typedef struct PJRT_Buffer_IncreaseExternalReferenceCount_Args {
  MP_ARGS_HEAD;
  PJRT_Buffer* buffer;
} PJRT_Buffer_IncreaseExternalReferenceCount_Args;
MP_SIZED(PJRT_Buffer_IncreaseExternalReferenceCount_Args, buffer);

typedef struct PJRT_Buffer_DecreaseExternalReferenceCount_Args {
  MP_ARGS_HEAD;
  PJRT_Buffer* buffer;
} PJRT_Buffer_DecreaseExternalReferenceCount_Args;
MP_SIZED(PJRT_Buffer_DecreaseExternalReferenceCount_Args, buffer);

typedef struct PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args {
  MP_ARGS_HEAD;
  PJRT_Buffer* buffer;
  void* device_memory_ptr;  // out
} PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args;
MP_SIZED(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args, device_memory_ptr);

// ------------------------------------------------------------------- table
// A slot we fill with a function of its own signature...
#define MP_FN(name) PJRT_Error* (*name)(name##_Args * args)
// ...and one we answer with a stub (abi.c: UNIMPLEMENTED, or success where
// the caller treats any error as fatal). Its argument struct is undeclared.
typedef PJRT_Error* (*mp_stub_fn)(void* args);
#define MP_STUB(name) mp_stub_fn name

// The function table GetPjrtApi returns, slot for slot as of 0.114. XLA
// only ever appends slots, so the order is historical: the groups below
// are the ABI's, in its order.
typedef struct PJRT_Api {
  size_t struct_size;  // PJRT_Api_STRUCT_SIZE
  PJRT_Extension_Base* extension_start;
  PJRT_Api_Version pjrt_api_version;

  void (*PJRT_Error_Destroy)(PJRT_Error_Destroy_Args* args);
  void (*PJRT_Error_Message)(PJRT_Error_Message_Args* args);
  MP_FN(PJRT_Error_GetCode);

  MP_FN(PJRT_Plugin_Initialize);
  MP_FN(PJRT_Plugin_Attributes);

  MP_FN(PJRT_Event_Destroy);
  MP_FN(PJRT_Event_IsReady);
  MP_FN(PJRT_Event_Error);
  MP_FN(PJRT_Event_Await);
  MP_FN(PJRT_Event_OnReady);

  MP_FN(PJRT_Client_Create);
  MP_FN(PJRT_Client_Destroy);
  MP_FN(PJRT_Client_PlatformName);
  MP_FN(PJRT_Client_ProcessIndex);
  MP_FN(PJRT_Client_PlatformVersion);
  MP_FN(PJRT_Client_Devices);
  MP_FN(PJRT_Client_AddressableDevices);
  MP_FN(PJRT_Client_LookupDevice);
  MP_FN(PJRT_Client_LookupAddressableDevice);
  MP_FN(PJRT_Client_AddressableMemories);
  MP_FN(PJRT_Client_Compile);
  MP_FN(PJRT_Client_DefaultDeviceAssignment);
  MP_FN(PJRT_Client_BufferFromHostBuffer);

  MP_FN(PJRT_DeviceDescription_Id);
  MP_FN(PJRT_DeviceDescription_ProcessIndex);
  MP_FN(PJRT_DeviceDescription_Attributes);
  MP_FN(PJRT_DeviceDescription_Kind);
  MP_FN(PJRT_DeviceDescription_DebugString);
  MP_FN(PJRT_DeviceDescription_ToString);

  MP_FN(PJRT_Device_GetDescription);
  MP_FN(PJRT_Device_IsAddressable);
  MP_FN(PJRT_Device_LocalHardwareId);
  MP_FN(PJRT_Device_AddressableMemories);
  MP_FN(PJRT_Device_DefaultMemory);
  MP_FN(PJRT_Device_MemoryStats);

  MP_FN(PJRT_Memory_Id);
  MP_FN(PJRT_Memory_Kind);
  MP_FN(PJRT_Memory_DebugString);
  MP_FN(PJRT_Memory_ToString);
  MP_FN(PJRT_Memory_AddressableByDevices);

  MP_FN(PJRT_Executable_Destroy);
  MP_FN(PJRT_Executable_Name);
  MP_FN(PJRT_Executable_NumReplicas);
  MP_FN(PJRT_Executable_NumPartitions);
  MP_FN(PJRT_Executable_NumOutputs);
  MP_FN(PJRT_Executable_SizeOfGeneratedCodeInBytes);
  MP_FN(PJRT_Executable_GetCostAnalysis);
  MP_FN(PJRT_Executable_OutputMemoryKinds);
  MP_STUB(PJRT_Executable_OptimizedProgram);
  MP_STUB(PJRT_Executable_Serialize);

  MP_FN(PJRT_LoadedExecutable_Destroy);
  MP_FN(PJRT_LoadedExecutable_GetExecutable);
  MP_FN(PJRT_LoadedExecutable_AddressableDevices);
  MP_FN(PJRT_LoadedExecutable_Delete);
  MP_FN(PJRT_LoadedExecutable_IsDeleted);
  MP_FN(PJRT_LoadedExecutable_Execute);
  MP_STUB(PJRT_Executable_DeserializeAndLoad);
  MP_FN(PJRT_LoadedExecutable_Fingerprint);

  MP_FN(PJRT_Buffer_Destroy);
  MP_FN(PJRT_Buffer_ElementType);
  MP_FN(PJRT_Buffer_Dimensions);
  MP_FN(PJRT_Buffer_UnpaddedDimensions);
  MP_FN(PJRT_Buffer_DynamicDimensionIndices);
  MP_FN(PJRT_Buffer_GetMemoryLayout);
  MP_FN(PJRT_Buffer_OnDeviceSizeInBytes);
  MP_FN(PJRT_Buffer_Device);
  MP_FN(PJRT_Buffer_Memory);
  MP_FN(PJRT_Buffer_Delete);
  MP_FN(PJRT_Buffer_IsDeleted);
  MP_FN(PJRT_Buffer_CopyToDevice);
  MP_FN(PJRT_Buffer_ToHostBuffer);
  MP_FN(PJRT_Buffer_IsOnCpu);
  MP_FN(PJRT_Buffer_ReadyEvent);
  MP_FN(PJRT_Buffer_UnsafePointer);
  MP_FN(PJRT_Buffer_IncreaseExternalReferenceCount);
  MP_FN(PJRT_Buffer_DecreaseExternalReferenceCount);
  MP_FN(PJRT_Buffer_OpaqueDeviceMemoryDataPointer);

  MP_STUB(PJRT_CopyToDeviceStream_Destroy);
  MP_STUB(PJRT_CopyToDeviceStream_AddChunk);
  MP_STUB(PJRT_CopyToDeviceStream_TotalBytes);
  MP_STUB(PJRT_CopyToDeviceStream_GranuleSize);
  MP_STUB(PJRT_CopyToDeviceStream_CurrentBytes);

  MP_STUB(PJRT_TopologyDescription_Create);
  MP_STUB(PJRT_TopologyDescription_Destroy);
  MP_STUB(PJRT_TopologyDescription_PlatformName);
  MP_STUB(PJRT_TopologyDescription_PlatformVersion);
  MP_STUB(PJRT_TopologyDescription_GetDeviceDescriptions);
  MP_STUB(PJRT_TopologyDescription_Serialize);
  MP_STUB(PJRT_TopologyDescription_Attributes);

  MP_STUB(PJRT_Compile);

  // From here on, slots in the order minors appended them.
  MP_FN(PJRT_Executable_OutputElementTypes);
  MP_FN(PJRT_Executable_OutputDimensions);
  MP_FN(PJRT_Buffer_CopyToMemory);
  MP_STUB(PJRT_Client_CreateViewOfDeviceBuffer);
  MP_FN(PJRT_Executable_Fingerprint);
  MP_STUB(PJRT_Client_TopologyDescription);
  MP_FN(PJRT_Executable_GetCompiledMemoryStats);
  MP_FN(PJRT_Memory_Kind_Id);
  MP_STUB(PJRT_ExecuteContext_Create);
  MP_STUB(PJRT_ExecuteContext_Destroy);
  MP_FN(PJRT_Buffer_CopyRawToHost);
  MP_STUB(PJRT_AsyncHostToDeviceTransferManager_Destroy);
  MP_STUB(PJRT_AsyncHostToDeviceTransferManager_TransferData);
  MP_STUB(PJRT_Client_CreateBuffersForAsyncHostToDevice);
  MP_STUB(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer);
  MP_STUB(PJRT_AsyncHostToDeviceTransferManager_Device);
  MP_STUB(PJRT_AsyncHostToDeviceTransferManager_BufferCount);
  MP_STUB(PJRT_AsyncHostToDeviceTransferManager_BufferSize);
  MP_STUB(PJRT_AsyncHostToDeviceTransferManager_SetBufferError);
  MP_STUB(PJRT_AsyncHostToDeviceTransferManager_AddMetadata);
  MP_STUB(PJRT_Client_DmaMap);
  MP_STUB(PJRT_Client_DmaUnmap);
  MP_FN(PJRT_Client_CreateUninitializedBuffer);
  MP_STUB(PJRT_Client_UpdateGlobalProcessInfo);
  MP_STUB(PJRT_TopologyDescription_Deserialize);
  MP_STUB(PJRT_Client_CreateAliasBuffer);
  MP_STUB(PJRT_Client_FulfillAliasBuffer);
  MP_FN(PJRT_LoadedExecutable_GetDeviceAssignment);
  MP_STUB(PJRT_Client_CreateErrorBuffer);
  MP_STUB(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral);
  MP_STUB(PJRT_Buffer_CopyRawToHostFuture);
  MP_STUB(PJRT_Device_PoisonExecution);
  MP_FN(PJRT_Device_CreateAsyncTrackingEvent);
  MP_FN(PJRT_AsyncTrackingEvent_Destroy);
  MP_FN(PJRT_Executable_GetCompileOptions);
  MP_STUB(PJRT_Buffer_DonateWithControlDependency);
  MP_FN(PJRT_Event_Create);
  MP_FN(PJRT_Event_Set);
  MP_FN(PJRT_Device_GetAttributes);
  MP_STUB(PJRT_Client_Load);
  MP_FN(PJRT_LoadedExecutable_AddressableDeviceLogicalIds);
  MP_STUB(PJRT_Buffer_Bitcast);
  MP_FN(PJRT_Error_ForEachPayload);
  MP_STUB(PJRT_TopologyDescription_Fingerprint);
  MP_FN(PJRT_Executable_ParameterMemoryKinds);
  MP_FN(PJRT_Device_ClearMemoryStats);
  MP_STUB(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace);
  MP_STUB(PJRT_TopologyDescription_GetMemorySpaceKindIds);
} PJRT_Api;
MP_SIZED(PJRT_Api, PJRT_TopologyDescription_GetMemorySpaceKindIds);

#endif  // METALPLUG_PJRT_ABI_H_

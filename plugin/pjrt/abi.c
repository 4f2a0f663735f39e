// The C half of the PJRT frontend: the function table, errors and memories
// (whose vtables the caller may call without going through the table),
// stubs for the slots metalplug does not implement, and small helpers
// Go cannot write. Behaviour lives in Go (the mp_PJRT_* exports of
// _cgo_export.h); nothing here can panic, so none of it needs a boundary.
#include <pthread.h>
#include <string.h>

#include "shim.h"
#include "_cgo_export.h"

// Go writes C arrays of these through Go types of the same width
// (compile.go): hold the targets to it.
_Static_assert(sizeof(PJRT_Buffer_Type) == 4, "a PJRT_Buffer_Type is a 32-bit enum");
_Static_assert(sizeof(size_t) == sizeof(uintptr_t), "size_t is pointer-sized (LP64)");

// ------------------------------------------------------------------ errors

typedef struct mp_error {
  PJRT_Error base;  // the vtable, first, as the ABI requires
  PJRT_Error_Code code;
  size_t size;
  char message[];  // NUL-terminated, size bytes before the NUL
} mp_error;

static void error_destroy(PJRT_Error* e) { free(e); }

static void error_message(const PJRT_Error* e, const char** message, size_t* size) {
  const mp_error* me = (const mp_error*)e;
  *message = me->message;
  *size = me->size;
}

static PJRT_Error_Code error_get_code(const PJRT_Error* e) { return ((const mp_error*)e)->code; }

static void error_for_each_payload(const PJRT_Error* e, PJRT_Error_PayloadVisitor visitor,
                                   void* user_arg) {
  // Our errors carry no payloads.
}

static const PJRT_Error_FunctionTable error_vtable = {
    .struct_size = PJRT_Error_FunctionTable_STRUCT_SIZE,
    .instance_size = sizeof(mp_error),
    .extension_start = NULL,
    .destroy = error_destroy,
    .message = error_message,
    .get_code = error_get_code,
    .for_each_payload = error_for_each_payload,
};

// The error of last resort, when malloc fails: static, so never freed.
static void static_error_destroy(PJRT_Error* e) {}
static const PJRT_Error_FunctionTable static_error_vtable = {
    .struct_size = PJRT_Error_FunctionTable_STRUCT_SIZE,
    .instance_size = sizeof(mp_error),
    .extension_start = NULL,
    .destroy = static_error_destroy,
    .message = error_message,
    .get_code = error_get_code,
    .for_each_payload = error_for_each_payload,
};
#define OOM_MESSAGE "metalplug: out of host memory while reporting an error"
static struct {
  mp_error e;
  char text[sizeof(OOM_MESSAGE)];
} oom_error = {{{&static_error_vtable}, PJRT_Error_Code_RESOURCE_EXHAUSTED, sizeof(OOM_MESSAGE) - 1},
               OOM_MESSAGE};

PJRT_Error* mp_error_new(PJRT_Error_Code code, const char* message, size_t n) {
  mp_error* e = malloc(sizeof(mp_error) + n + 1);
  if (e == NULL) return &oom_error.e.base;
  e->base.vtable = &error_vtable;
  e->code = code;
  e->size = n;
  if (n > 0) memcpy(e->message, message, n);
  e->message[n] = 0;
  return &e->base;
}

// The accessors below go through the vtable, so they work on any error
// that follows the ABI, ours or not.
PJRT_Error_Code mp_error_code(const PJRT_Error* e) { return e->vtable->get_code(e); }

const char* mp_error_message(const PJRT_Error* e, size_t* n) {
  const char* m = NULL;
  *n = 0;
  e->vtable->message(e, &m, n);
  return m;
}

void mp_error_free(PJRT_Error* e) {
  if (e != NULL) e->vtable->destroy(e);
}

// The table's error functions, for callers that use the table rather than
// the vtable. A caller passing a struct too small for what we write gets
// nothing written (these functions cannot report errors).
static void error_destroy_slot(PJRT_Error_Destroy_Args* a) {
  if (a != NULL && a->struct_size >= PJRT_Error_Destroy_Args_STRUCT_SIZE) mp_error_free(a->error);
}

static void error_message_slot(PJRT_Error_Message_Args* a) {
  if (a == NULL || a->struct_size < PJRT_Error_Message_Args_STRUCT_SIZE) return;
  if (a->error == NULL) {
    a->message = "";
    a->message_size = 0;
    return;
  }
  a->message = mp_error_message(a->error, &a->message_size);
}

static PJRT_Error* error_get_code_slot(PJRT_Error_GetCode_Args* a) {
  static const char kTooSmall[] = "metalplug: PJRT_Error_GetCode: args is NULL or too small";
  if (a == NULL || a->struct_size < PJRT_Error_GetCode_Args_STRUCT_SIZE || a->error == NULL) {
    return mp_error_new(PJRT_Error_Code_INVALID_ARGUMENT, kTooSmall, sizeof(kTooSmall) - 1);
  }
  a->code = mp_error_code(a->error);
  return NULL;
}

static PJRT_Error* error_for_each_payload_slot(PJRT_Error_ForEachPayload_Args* a) {
  static const char kTooSmall[] = "metalplug: PJRT_Error_ForEachPayload: args is NULL or too small";
  if (a == NULL || a->struct_size < PJRT_Error_ForEachPayload_Args_STRUCT_SIZE || a->error == NULL) {
    return mp_error_new(PJRT_Error_Code_INVALID_ARGUMENT, kTooSmall, sizeof(kTooSmall) - 1);
  }
  a->error->vtable->for_each_payload(a->error, a->visitor, a->user_arg);
  return NULL;
}

// ---------------------------------------------------------------- memories

struct mp_user_data {
  const void* key;
  void* data;
  void (*dtor)(void*);
  struct mp_user_data* next;
};

// One lock for every memory's user data: it is touched once per memory
// space and cache, rarely.
static pthread_mutex_t user_data_mu = PTHREAD_MUTEX_INITIALIZER;

static void* memory_get_user_data(PJRT_Memory* m, const void* key) {
  void* data = NULL;
  pthread_mutex_lock(&user_data_mu);
  for (mp_user_data* u = m->user_data; u != NULL; u = u->next) {
    if (u->key == key) {
      data = u->data;
      break;
    }
  }
  pthread_mutex_unlock(&user_data_mu);
  return data;
}

// Replacing a key's data destroys the old data, outside the lock (a
// destructor may well call back into us).
static void memory_set_user_data(PJRT_Memory* m, const void* key, void* data, void (*dtor)(void*)) {
  void* old = NULL;
  void (*old_dtor)(void*) = NULL;
  pthread_mutex_lock(&user_data_mu);
  mp_user_data* u = m->user_data;
  for (; u != NULL && u->key != key; u = u->next) {
  }
  if (u == NULL) {
    u = calloc(1, sizeof *u);
    if (u == NULL) {  // cannot keep it: destroy it rather than leak it
      pthread_mutex_unlock(&user_data_mu);
      if (dtor != NULL) dtor(data);
      return;
    }
    u->key = key;
    u->next = m->user_data;
    m->user_data = u;
  } else {
    old = u->data;
    old_dtor = u->dtor;
  }
  u->data = data;
  u->dtor = dtor;
  pthread_mutex_unlock(&user_data_mu);
  if (old_dtor != NULL) old_dtor(old);
}

static const PJRT_Memory_FunctionTable memory_vtable = {
    .struct_size = PJRT_Memory_FunctionTable_STRUCT_SIZE,
    .extension_start = NULL,
    .instance_struct_size = sizeof(PJRT_Memory),
    .get_user_data = memory_get_user_data,
    .set_user_data = memory_set_user_data,
};

void* mp_memory_new(uintptr_t handle) {
  PJRT_Memory* m = calloc(1, sizeof *m);
  if (m == NULL) return NULL;
  m->vtable = &memory_vtable;
  m->handle = handle;
  return m;
}

void mp_memory_free(void* p) {
  PJRT_Memory* m = p;
  if (m == NULL) return;
  pthread_mutex_lock(&user_data_mu);
  mp_user_data* u = m->user_data;
  m->user_data = NULL;
  pthread_mutex_unlock(&user_data_mu);
  while (u != NULL) {
    mp_user_data* next = u->next;
    if (u->dtor != NULL) u->dtor(u->data);
    free(u);
    u = next;
  }
  free(m);
}

// ----------------------------------------------------------------- helpers

void mp_call_on_ready(PJRT_Event_OnReadyCallback cb, PJRT_Error* err, void* user_arg) {
  cb(err, user_arg);
}

static void named_head(PJRT_NamedValue* nv, const char* name, PJRT_NamedValue_Type type) {
  memset(nv, 0, sizeof *nv);
  nv->struct_size = PJRT_NamedValue_STRUCT_SIZE;
  nv->name = name;
  nv->name_size = strlen(name);
  nv->type = type;
}

void mp_named_string(PJRT_NamedValue* nv, const char* name, const char* value) {
  named_head(nv, name, PJRT_NamedValue_kString);
  nv->string_value = value;
  nv->value_size = strlen(value);
}

void mp_named_int64_list(PJRT_NamedValue* nv, const char* name, const int64_t* values, size_t n) {
  named_head(nv, name, PJRT_NamedValue_kInt64List);
  nv->int64_array_value = values;
  nv->value_size = n;
}

const PJRT_Buffer_MemoryLayout_Tiled* mp_layout_tiled(const PJRT_Buffer_MemoryLayout* l) {
  return &l->tiled;
}

const PJRT_Buffer_MemoryLayout_Strides* mp_layout_strides(const PJRT_Buffer_MemoryLayout* l) {
  return &l->strides;
}

void mp_fill_dense_layout(PJRT_Buffer_MemoryLayout* l, const int64_t* minor_to_major, size_t n) {
  memset(l, 0, sizeof *l);
  l->struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  l->type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  l->tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
  l->tiled.minor_to_major = minor_to_major;
  l->tiled.minor_to_major_size = n;
  l->tiled.tile_dims = NULL;
  l->tiled.tile_dim_sizes = NULL;
  l->tiled.num_tiles = 0;
}

// A blob is a malloc'd copy; the opaque "serialized" types of the ABI are
// pointers to one.
static char* blob(const char* data, size_t n) {
  char* b = malloc(n > 0 ? n : 1);
  if (b != NULL && n > 0) memcpy(b, data, n);
  return b;
}

static void free_device_assignment(PJRT_DeviceAssignmentSerialized* p) { free(p); }
static void free_compile_options(PJRT_SerializedCompileOptions* p) { free(p); }
static void keep_device_attributes(PJRT_Device_Attributes* p) {}

void mp_give_device_assignment(PJRT_LoadedExecutable_GetDeviceAssignment_Args* a,
                               const char* data, size_t n) {
  char* b = blob(data, n);
  a->serialized_bytes = b;
  a->serialized_bytes_size = b != NULL ? n : 0;  // no memory: "no assignment", still valid
  a->serialized_device_assignment = (PJRT_DeviceAssignmentSerialized*)b;
  a->serialized_device_assignment_deleter = free_device_assignment;
}

void mp_give_compile_options(PJRT_Executable_GetCompileOptions_Args* a, const char* data,
                             size_t n) {
  char* b = blob(data, n);
  a->serialized_bytes = b;
  a->serialized_bytes_size = b != NULL ? n : 0;
  a->serialized_compile_options = (PJRT_SerializedCompileOptions*)b;
  a->serialized_compile_options_deleter = free_compile_options;
}

void mp_give_device_attributes(PJRT_Device_GetAttributes_Args* a, const PJRT_NamedValue* attrs,
                               size_t n) {
  a->attributes = attrs;
  a->num_attributes = n;
  a->device_attributes = NULL;
  a->attributes_deleter = keep_device_attributes;
}

// ------------------------------------------------------------------- stubs

// A slot metalplug does not implement answers UNIMPLEMENTED, naming itself.
#define UNIMPLEMENTED(name)                                                       \
  static PJRT_Error* stub_##name(void* args) {                                    \
    static const char msg[] = "metalplug: " #name " is not implemented";         \
    return mp_error_new(PJRT_Error_Code_UNIMPLEMENTED, msg, sizeof(msg) - 1);     \
  }
// The same with the reason, where the caller looks for the words jax's
// other backends use ("topology not implemented").
#define UNIMPLEMENTED_WHY(name, why)                                              \
  static PJRT_Error* stub_##name(void* args) {                                    \
    static const char msg[] = "metalplug: " #name ": " why;                       \
    return mp_error_new(PJRT_Error_Code_UNIMPLEMENTED, msg, sizeof(msg) - 1);     \
  }
// A slot whose caller treats every error as fatal, and whose work we can
// honestly skip, succeeds doing nothing.
#define SUCCEEDS(name) \
  static PJRT_Error* stub_##name(void* args) { return NULL; }

UNIMPLEMENTED(PJRT_Executable_OptimizedProgram)
UNIMPLEMENTED(PJRT_Executable_Serialize)
UNIMPLEMENTED(PJRT_Executable_DeserializeAndLoad)
UNIMPLEMENTED(PJRT_CopyToDeviceStream_Destroy)
UNIMPLEMENTED(PJRT_CopyToDeviceStream_AddChunk)
UNIMPLEMENTED(PJRT_CopyToDeviceStream_TotalBytes)
UNIMPLEMENTED(PJRT_CopyToDeviceStream_GranuleSize)
UNIMPLEMENTED(PJRT_CopyToDeviceStream_CurrentBytes)
UNIMPLEMENTED_WHY(PJRT_TopologyDescription_Create,
                  "topology not implemented (one device; no named topologies to compile ahead of time for)")
UNIMPLEMENTED(PJRT_TopologyDescription_Destroy)
UNIMPLEMENTED(PJRT_TopologyDescription_PlatformName)
UNIMPLEMENTED(PJRT_TopologyDescription_PlatformVersion)
UNIMPLEMENTED(PJRT_TopologyDescription_GetDeviceDescriptions)
UNIMPLEMENTED(PJRT_TopologyDescription_Serialize)
UNIMPLEMENTED(PJRT_TopologyDescription_Attributes)
UNIMPLEMENTED(PJRT_Compile)
UNIMPLEMENTED(PJRT_Client_CreateViewOfDeviceBuffer)
UNIMPLEMENTED(PJRT_Client_TopologyDescription)
UNIMPLEMENTED(PJRT_ExecuteContext_Create)
SUCCEEDS(PJRT_ExecuteContext_Destroy)  // only ever given what Create made: nothing
UNIMPLEMENTED(PJRT_AsyncHostToDeviceTransferManager_Destroy)
UNIMPLEMENTED(PJRT_AsyncHostToDeviceTransferManager_TransferData)
UNIMPLEMENTED(PJRT_Client_CreateBuffersForAsyncHostToDevice)
UNIMPLEMENTED(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer)
UNIMPLEMENTED(PJRT_AsyncHostToDeviceTransferManager_Device)
UNIMPLEMENTED(PJRT_AsyncHostToDeviceTransferManager_BufferCount)
UNIMPLEMENTED(PJRT_AsyncHostToDeviceTransferManager_BufferSize)
UNIMPLEMENTED(PJRT_AsyncHostToDeviceTransferManager_SetBufferError)
UNIMPLEMENTED(PJRT_AsyncHostToDeviceTransferManager_AddMetadata)
UNIMPLEMENTED(PJRT_Client_DmaMap)
UNIMPLEMENTED(PJRT_Client_DmaUnmap)
SUCCEEDS(PJRT_Client_UpdateGlobalProcessInfo)  // one process: nothing to learn
UNIMPLEMENTED(PJRT_TopologyDescription_Deserialize)
UNIMPLEMENTED(PJRT_Client_CreateAliasBuffer)
UNIMPLEMENTED(PJRT_Client_FulfillAliasBuffer)
UNIMPLEMENTED(PJRT_Client_CreateErrorBuffer)
UNIMPLEMENTED(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral)
UNIMPLEMENTED(PJRT_Buffer_CopyRawToHostFuture)
UNIMPLEMENTED(PJRT_Device_PoisonExecution)
UNIMPLEMENTED(PJRT_Buffer_DonateWithControlDependency)
UNIMPLEMENTED(PJRT_Client_Load)
UNIMPLEMENTED(PJRT_Buffer_Bitcast)
UNIMPLEMENTED(PJRT_TopologyDescription_Fingerprint)
UNIMPLEMENTED(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace)
UNIMPLEMENTED(PJRT_TopologyDescription_GetMemorySpaceKindIds)

// The caller treats an error from these as fatal. We track nothing, so the
// event is NULL, which the caller accepts.
static PJRT_Error* create_async_tracking_event(PJRT_Device_CreateAsyncTrackingEvent_Args* a) {
  if (a != NULL && a->struct_size >= PJRT_Device_CreateAsyncTrackingEvent_Args_STRUCT_SIZE) {
    a->event = NULL;
  }
  return NULL;
}

static PJRT_Error* async_tracking_event_destroy(PJRT_AsyncTrackingEvent_Destroy_Args* a) {
  return NULL;
}

// ------------------------------------------------------------------- table

// Room past the table for the slots of newer minors: a caller that reads
// one without checking our minor finds NULL, not our neighbour's bytes.
static struct {
  PJRT_Api api;
  void* spare[64];
} table;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

#define GO(name) a->name = mp_##name
#define STUB(name) a->name = stub_##name

static void fill_table(void) {
  PJRT_Api* a = &table.api;
  a->struct_size = PJRT_Api_STRUCT_SIZE;
  a->extension_start = NULL;  // no extensions: the caller falls back to defaults
  a->pjrt_api_version.struct_size = PJRT_Api_Version_STRUCT_SIZE;
  a->pjrt_api_version.extension_start = NULL;
  a->pjrt_api_version.major_version = MP_PJRT_MAJOR;
  a->pjrt_api_version.minor_version = MP_PJRT_MINOR;

  a->PJRT_Error_Destroy = error_destroy_slot;
  a->PJRT_Error_Message = error_message_slot;
  a->PJRT_Error_GetCode = error_get_code_slot;
  a->PJRT_Error_ForEachPayload = error_for_each_payload_slot;

  GO(PJRT_Plugin_Initialize);
  GO(PJRT_Plugin_Attributes);

  GO(PJRT_Event_Destroy);
  GO(PJRT_Event_IsReady);
  GO(PJRT_Event_Error);
  GO(PJRT_Event_Await);
  GO(PJRT_Event_OnReady);
  GO(PJRT_Event_Create);
  GO(PJRT_Event_Set);

  GO(PJRT_Client_Create);
  GO(PJRT_Client_Destroy);
  GO(PJRT_Client_PlatformName);
  GO(PJRT_Client_ProcessIndex);
  GO(PJRT_Client_PlatformVersion);
  GO(PJRT_Client_Devices);
  GO(PJRT_Client_AddressableDevices);
  GO(PJRT_Client_LookupDevice);
  GO(PJRT_Client_LookupAddressableDevice);
  GO(PJRT_Client_AddressableMemories);
  GO(PJRT_Client_Compile);
  GO(PJRT_Client_DefaultDeviceAssignment);
  GO(PJRT_Client_BufferFromHostBuffer);
  GO(PJRT_Client_CreateUninitializedBuffer);
  STUB(PJRT_Client_CreateViewOfDeviceBuffer);
  STUB(PJRT_Client_TopologyDescription);
  STUB(PJRT_Client_CreateBuffersForAsyncHostToDevice);
  STUB(PJRT_Client_DmaMap);
  STUB(PJRT_Client_DmaUnmap);
  STUB(PJRT_Client_UpdateGlobalProcessInfo);
  STUB(PJRT_Client_CreateAliasBuffer);
  STUB(PJRT_Client_FulfillAliasBuffer);
  STUB(PJRT_Client_CreateErrorBuffer);
  STUB(PJRT_Client_Load);

  GO(PJRT_DeviceDescription_Id);
  GO(PJRT_DeviceDescription_ProcessIndex);
  GO(PJRT_DeviceDescription_Attributes);
  GO(PJRT_DeviceDescription_Kind);
  GO(PJRT_DeviceDescription_DebugString);
  GO(PJRT_DeviceDescription_ToString);

  GO(PJRT_Device_GetDescription);
  GO(PJRT_Device_IsAddressable);
  GO(PJRT_Device_LocalHardwareId);
  GO(PJRT_Device_AddressableMemories);
  GO(PJRT_Device_DefaultMemory);
  GO(PJRT_Device_MemoryStats);
  GO(PJRT_Device_ClearMemoryStats);
  GO(PJRT_Device_GetAttributes);
  STUB(PJRT_Device_PoisonExecution);
  a->PJRT_Device_CreateAsyncTrackingEvent = create_async_tracking_event;
  a->PJRT_AsyncTrackingEvent_Destroy = async_tracking_event_destroy;

  GO(PJRT_Memory_Id);
  GO(PJRT_Memory_Kind);
  GO(PJRT_Memory_Kind_Id);
  GO(PJRT_Memory_DebugString);
  GO(PJRT_Memory_ToString);
  GO(PJRT_Memory_AddressableByDevices);

  GO(PJRT_Executable_Destroy);
  GO(PJRT_Executable_Name);
  GO(PJRT_Executable_NumReplicas);
  GO(PJRT_Executable_NumPartitions);
  GO(PJRT_Executable_NumOutputs);
  GO(PJRT_Executable_SizeOfGeneratedCodeInBytes);
  GO(PJRT_Executable_GetCostAnalysis);
  GO(PJRT_Executable_OutputMemoryKinds);
  GO(PJRT_Executable_ParameterMemoryKinds);
  GO(PJRT_Executable_OutputElementTypes);
  GO(PJRT_Executable_OutputDimensions);
  GO(PJRT_Executable_Fingerprint);
  GO(PJRT_Executable_GetCompiledMemoryStats);
  GO(PJRT_Executable_GetCompileOptions);
  STUB(PJRT_Executable_OptimizedProgram);
  STUB(PJRT_Executable_Serialize);
  STUB(PJRT_Executable_DeserializeAndLoad);

  GO(PJRT_LoadedExecutable_Destroy);
  GO(PJRT_LoadedExecutable_GetExecutable);
  GO(PJRT_LoadedExecutable_AddressableDevices);
  GO(PJRT_LoadedExecutable_AddressableDeviceLogicalIds);
  GO(PJRT_LoadedExecutable_Delete);
  GO(PJRT_LoadedExecutable_IsDeleted);
  GO(PJRT_LoadedExecutable_Execute);
  GO(PJRT_LoadedExecutable_Fingerprint);
  GO(PJRT_LoadedExecutable_GetDeviceAssignment);

  GO(PJRT_Buffer_Destroy);
  GO(PJRT_Buffer_ElementType);
  GO(PJRT_Buffer_Dimensions);
  GO(PJRT_Buffer_UnpaddedDimensions);
  GO(PJRT_Buffer_DynamicDimensionIndices);
  GO(PJRT_Buffer_GetMemoryLayout);
  GO(PJRT_Buffer_OnDeviceSizeInBytes);
  GO(PJRT_Buffer_Device);
  GO(PJRT_Buffer_Memory);
  GO(PJRT_Buffer_Delete);
  GO(PJRT_Buffer_IsDeleted);
  GO(PJRT_Buffer_CopyToDevice);
  GO(PJRT_Buffer_CopyToMemory);
  GO(PJRT_Buffer_ToHostBuffer);
  GO(PJRT_Buffer_CopyRawToHost);
  GO(PJRT_Buffer_IsOnCpu);
  GO(PJRT_Buffer_ReadyEvent);
  GO(PJRT_Buffer_UnsafePointer);
  GO(PJRT_Buffer_IncreaseExternalReferenceCount);
  GO(PJRT_Buffer_DecreaseExternalReferenceCount);
  GO(PJRT_Buffer_OpaqueDeviceMemoryDataPointer);
  STUB(PJRT_Buffer_CopyRawToHostFuture);
  STUB(PJRT_Buffer_DonateWithControlDependency);
  STUB(PJRT_Buffer_Bitcast);

  STUB(PJRT_CopyToDeviceStream_Destroy);
  STUB(PJRT_CopyToDeviceStream_AddChunk);
  STUB(PJRT_CopyToDeviceStream_TotalBytes);
  STUB(PJRT_CopyToDeviceStream_GranuleSize);
  STUB(PJRT_CopyToDeviceStream_CurrentBytes);

  STUB(PJRT_TopologyDescription_Create);
  STUB(PJRT_TopologyDescription_Destroy);
  STUB(PJRT_TopologyDescription_PlatformName);
  STUB(PJRT_TopologyDescription_PlatformVersion);
  STUB(PJRT_TopologyDescription_GetDeviceDescriptions);
  STUB(PJRT_TopologyDescription_Serialize);
  STUB(PJRT_TopologyDescription_Attributes);
  STUB(PJRT_TopologyDescription_Deserialize);
  STUB(PJRT_TopologyDescription_Fingerprint);
  STUB(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace);
  STUB(PJRT_TopologyDescription_GetMemorySpaceKindIds);
  STUB(PJRT_Compile);

  STUB(PJRT_ExecuteContext_Create);
  STUB(PJRT_ExecuteContext_Destroy);

  STUB(PJRT_AsyncHostToDeviceTransferManager_Destroy);
  STUB(PJRT_AsyncHostToDeviceTransferManager_TransferData);
  STUB(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer);
  STUB(PJRT_AsyncHostToDeviceTransferManager_Device);
  STUB(PJRT_AsyncHostToDeviceTransferManager_BufferCount);
  STUB(PJRT_AsyncHostToDeviceTransferManager_BufferSize);
  STUB(PJRT_AsyncHostToDeviceTransferManager_SetBufferError);
  STUB(PJRT_AsyncHostToDeviceTransferManager_AddMetadata);
  STUB(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral);
}

const PJRT_Api* mp_api(void) {
  pthread_once(&table_once, fill_table);
  return &table.api;
}

// StreamExecutor tables. Each callback converts TensorFlow's types to plain
// values and calls into Go (the go* functions come from _cgo_export.h).
#include <string.h>
#include <time.h>

#include "plugin.h"
#include "_cgo_export.h"

const char* metalplug_platform_name = "METALPLUG";
const char* metalplug_device_type = "METALPLUG";
const char* metalplug_hardware_name = "metalplug";
const char* metalplug_vendor = "metalplug";

static uintptr_t h(void* p) { return (uintptr_t)p; }

// --- platform ---

static void get_device_count(const SP_Platform* p, int* count, TF_Status* st) {
  *count = goDeviceCount(st);
}

static void create_device(const SP_Platform* p, SE_CreateDeviceParams* params, TF_Status* st) {
  SP_Device* d = params->device;
  d->struct_size = SP_DEVICE_STRUCT_SIZE;
  d->ordinal = params->ordinal;
  d->device_handle = NULL;
  d->hardware_name = metalplug_hardware_name;
  d->device_vendor = metalplug_vendor;
  d->pci_bus_id = NULL;
}

static void destroy_device(const SP_Platform* p, SP_Device* d) {}

static int32_t get_numa_node(const SP_Device* d) { return -1; }
static int64_t get_memory_bandwidth(const SP_Device* d) { return -1; }
static double get_gflops(const SP_Device* d) { return -1; }

static void create_device_fns(const SP_Platform* p, SE_CreateDeviceFnsParams* params, TF_Status* st) {
  SP_DeviceFns* f = params->device_fns;
  f->struct_size = SP_DEVICE_FNS_STRUCT_SIZE;
  f->get_numa_node = get_numa_node;
  f->get_memory_bandwidth = get_memory_bandwidth;
  f->get_gflops = get_gflops;
}

static void destroy_device_fns(const SP_Platform* p, SP_DeviceFns* f) {}

// --- memory ---

static void allocate(const SP_Device* d, uint64_t size, int64_t space, SP_DeviceMemoryBase* mem) {
  mem->struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE;
  mem->opaque = goAllocate(size);
  mem->size = mem->opaque ? size : 0;
}

static void deallocate(const SP_Device* d, SP_DeviceMemoryBase* mem) {
  if (mem->opaque) goDeallocate(mem->opaque);
  mem->opaque = NULL;
}

// Pinned host memory is ordinary memory: the device reads host memory directly.
// Pinned host memory TensorFlow's BFC host allocator carves: the 2.23
// nightlies check that every region starts at a multiple of 256 bytes (its
// kMinAllocationSize) and abort otherwise (measured; 2.21 does not check).
static void* host_memory_allocate(const SP_Device* d, uint64_t size) {
  void* p = NULL;
  if (posix_memalign(&p, 256, size ? size : 1) != 0) return NULL;
  return p;
}

static void host_memory_deallocate(const SP_Device* d, void* mem) { free(mem); }

static TF_Bool get_allocator_stats(const SP_Device* d, SP_AllocatorStats* s) {
  int64_t in_use = 0, limit = 0, count = 0;
  if (!goAllocatorStats(&in_use, &limit, &count)) return 0;
  s->struct_size = SP_ALLOCATORSTATS_STRUCT_SIZE;
  s->num_allocs = count;
  s->bytes_in_use = in_use;
  s->peak_bytes_in_use = in_use;
  s->largest_alloc_size = 0;
  s->has_bytes_limit = 1;
  s->bytes_limit = limit;
  return 1;
}

static TF_Bool device_memory_usage(const SP_Device* d, int64_t* free_bytes, int64_t* total) {
  int64_t in_use = 0, limit = 0, count = 0;
  if (!goAllocatorStats(&in_use, &limit, &count)) return 0;
  *free_bytes = limit - in_use;
  *total = limit;
  return 1;
}

// --- streams and events ---

static void create_stream(const SP_Device* d, SP_Stream* s, TF_Status* st) {
  *s = (SP_Stream)goCreateStream(st);
}
static void destroy_stream(const SP_Device* d, SP_Stream s) { goDestroyStream(h(s)); }
static void create_stream_dependency(const SP_Device* d, SP_Stream dep, SP_Stream other, TF_Status* st) {
  goStreamDependency(h(dep), h(other), st);
}
static void get_stream_status(const SP_Device* d, SP_Stream s, TF_Status* st) { goStreamStatus(h(s), st); }

static void create_event(const SP_Device* d, SP_Event* e, TF_Status* st) { *e = (SP_Event)goCreateEvent(st); }
static void destroy_event(const SP_Device* d, SP_Event e) { goDestroyEvent(h(e)); }
static SE_EventStatus get_event_status(const SP_Device* d, SP_Event e) {
  // Never SE_EVENT_ERROR, which TensorFlow's event manager treats as fatal.
  return goEventStatus(h(e)) ? SE_EVENT_COMPLETE : SE_EVENT_PENDING;
}
static void record_event(const SP_Device* d, SP_Stream s, SP_Event e, TF_Status* st) {
  goRecordEvent(h(s), h(e), st);
}
static void wait_for_event(const SP_Device* const d, SP_Stream s, SP_Event e, TF_Status* const st) {
  goWaitForEvent(h(s), h(e), st);
}

// --- timers: TensorFlow no longer asks for them, but older releases did ---

static void create_timer(const SP_Device* d, SP_Timer* t, TF_Status* st) { *t = (SP_Timer)1; }
static void destroy_timer(const SP_Device* d, SP_Timer t) {}
static void start_timer(const SP_Device* d, SP_Stream s, SP_Timer t, TF_Status* st) {}
static void stop_timer(const SP_Device* d, SP_Stream s, SP_Timer t, TF_Status* st) {}
static uint64_t nanoseconds(SP_Timer t) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// --- copies: memory is unified, so every direction is one copy ---

static void memcpy_dtoh(const SP_Device* d, SP_Stream s, void* dst, const SP_DeviceMemoryBase* src, uint64_t n, TF_Status* st) {
  goMemcpy(h(s), dst, src->opaque, n, st);
}
static void memcpy_htod(const SP_Device* d, SP_Stream s, SP_DeviceMemoryBase* dst, const void* src, uint64_t n, TF_Status* st) {
  goMemcpy(h(s), dst->opaque, (void*)src, n, st);
}
static void memcpy_dtod(const SP_Device* d, SP_Stream s, SP_DeviceMemoryBase* dst, const SP_DeviceMemoryBase* src, uint64_t n, TF_Status* st) {
  goMemcpy(h(s), dst->opaque, src->opaque, n, st);
}
static void sync_memcpy_dtoh(const SP_Device* d, void* dst, const SP_DeviceMemoryBase* src, uint64_t n, TF_Status* st) {
  goSyncMemcpy(dst, src->opaque, n, st);
}
static void sync_memcpy_htod(const SP_Device* d, SP_DeviceMemoryBase* dst, const void* src, uint64_t n, TF_Status* st) {
  goSyncMemcpy(dst->opaque, (void*)src, n, st);
}
static void sync_memcpy_dtod(const SP_Device* d, SP_DeviceMemoryBase* dst, const SP_DeviceMemoryBase* src, uint64_t n, TF_Status* st) {
  goSyncMemcpy(dst->opaque, src->opaque, n, st);
}
static void block_host_for_event(const SP_Device* d, SP_Event e, TF_Status* st) { goBlockHostForEvent(h(e), st); }
static void block_host_until_done(const SP_Device* d, SP_Stream s, TF_Status* st) { goBlockHostUntilDone(h(s), st); }
static void synchronize_all_activity(const SP_Device* d, TF_Status* st) { goSynchronizeAll(st); }
static void mem_zero(const SP_Device* d, SP_Stream s, SP_DeviceMemoryBase* loc, uint64_t n, TF_Status* st) {
  goMemset(h(s), loc->opaque, 0, n, st);
}
static void memset_(const SP_Device* d, SP_Stream s, SP_DeviceMemoryBase* loc, uint8_t pattern, uint64_t n, TF_Status* st) {
  goMemset(h(s), loc->opaque, pattern, n, st);
}
static void memset32(const SP_Device* d, SP_Stream s, SP_DeviceMemoryBase* loc, uint32_t pattern, uint64_t n, TF_Status* st) {
  goMemset32(h(s), loc->opaque, pattern, n, st);
}
static TF_Bool host_callback(const SP_Device* d, SP_Stream s, SE_StatusCallbackFn fn, void* arg) {
  return goHostCallback(h(s), (void*)fn, arg);
}

void metalplug_call_status_callback(SE_StatusCallbackFn fn, void* arg, TF_Status* status) { fn(arg, status); }

static void create_stream_executor(const SP_Platform* p, SE_CreateStreamExecutorParams* params, TF_Status* st) {
  SP_StreamExecutor* se = params->stream_executor;
  se->struct_size = SP_STREAMEXECUTOR_STRUCT_SIZE;
  se->allocate = allocate;
  se->deallocate = deallocate;
  se->host_memory_allocate = host_memory_allocate;
  se->host_memory_deallocate = host_memory_deallocate;
  se->unified_memory_allocate = NULL;
  se->unified_memory_deallocate = NULL;
  se->get_allocator_stats = get_allocator_stats;
  se->device_memory_usage = device_memory_usage;
  se->create_stream = create_stream;
  se->destroy_stream = destroy_stream;
  se->create_stream_dependency = create_stream_dependency;
  se->get_stream_status = get_stream_status;
  se->create_event = create_event;
  se->destroy_event = destroy_event;
  se->get_event_status = get_event_status;
  se->record_event = record_event;
  se->wait_for_event = wait_for_event;
  se->create_timer = create_timer;
  se->destroy_timer = destroy_timer;
  se->start_timer = start_timer;
  se->stop_timer = stop_timer;
  se->memcpy_dtoh = memcpy_dtoh;
  se->memcpy_htod = memcpy_htod;
  se->memcpy_dtod = memcpy_dtod;
  se->sync_memcpy_dtoh = sync_memcpy_dtoh;
  se->sync_memcpy_htod = sync_memcpy_htod;
  se->sync_memcpy_dtod = sync_memcpy_dtod;
  se->block_host_for_event = block_host_for_event;
  se->block_host_until_done = block_host_until_done;
  se->synchronize_all_activity = synchronize_all_activity;
  se->mem_zero = mem_zero;
  se->memset = memset_;
  se->memset32 = memset32;
  se->host_callback = host_callback;
#ifdef METALPLUG_HAVE_STREAM_OPTIONS
  // Stream priorities are a hint; every stream of ours is equal.
  se->create_stream_with_options = NULL;
#endif
}

static void destroy_stream_executor(const SP_Platform* p, SP_StreamExecutor* se) {}

static void create_timer_fns(const SP_Platform* p, SP_TimerFns* t, TF_Status* st) {
  t->struct_size = SP_TIMER_FNS_STRUCT_SIZE;
  t->nanoseconds = nanoseconds;
}
static void destroy_timer_fns(const SP_Platform* p, SP_TimerFns* t) {}
static void destroy_platform(SP_Platform* p) {}
static void destroy_platform_fns(SP_PlatformFns* f) {}

void metalplug_fill_platform(SE_PlatformRegistrationParams* params) {
  params->major_version = SE_MAJOR;
  params->minor_version = SE_MINOR;
  params->patch_version = SE_PATCH;
  SP_Platform* p = params->platform;
  p->struct_size = SP_PLATFORM_STRUCT_SIZE;
  p->name = metalplug_platform_name;
  p->type = metalplug_device_type;
  p->supports_unified_memory = 0;  // TensorFlow's pluggable device factory refuses unified memory
  p->use_bfc_allocator = 1;
#ifdef METALPLUG_HAVE_FORCE_MEMORY_GROWTH
  p->force_memory_growth = 1;  // grow the BFC pool on demand rather than reserving it all
#endif
  SP_PlatformFns* f = params->platform_fns;
  f->struct_size = SP_PLATFORM_FNS_STRUCT_SIZE;
  f->get_device_count = get_device_count;
  f->create_device = create_device;
  f->destroy_device = destroy_device;
  f->create_device_fns = create_device_fns;
  f->destroy_device_fns = destroy_device_fns;
  f->create_stream_executor = create_stream_executor;
  f->destroy_stream_executor = destroy_stream_executor;
  f->create_timer_fns = create_timer_fns;
  f->destroy_timer_fns = destroy_timer_fns;
  params->destroy_platform = destroy_platform;
  params->destroy_platform_fns = destroy_platform_fns;
}

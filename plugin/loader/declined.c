// See declined.h. The device, memory, stream, event and timer functions
// exist because TensorFlow checks that they are set; with no devices it
// never calls them, and if it did they would fail with a message rather
// than crash.
#include <stdlib.h>
#include <string.h>

#include "declined.h"

static const char* declined_type = "METALPLUG";

static void refuse(TF_Status* st) {
  void (*set)(TF_Status*, TF_Code, const char*) = (void (*)(TF_Status*, TF_Code, const char*))tf_symbol("TF_SetStatus");
  if (set) set(st, TF_FAILED_PRECONDITION, "metalplug declined to load; see its line on stderr");
}

typedef const SP_Device* Dev;
typedef SP_DeviceMemoryBase Mem;

// --- the stream executor ---

static void allocate(Dev d, uint64_t size, int64_t space, Mem* mem) {
  mem->struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE;
  mem->opaque = NULL;
  mem->size = 0;
}
static void deallocate(Dev d, Mem* mem) {}
static void* host_allocate(Dev d, uint64_t size) { return NULL; }
static void host_deallocate(Dev d, void* mem) {}
static TF_Bool allocator_stats(Dev d, SP_AllocatorStats* stats) { return 0; }
static TF_Bool memory_usage(Dev d, int64_t* free, int64_t* total) {
  *free = *total = 0;
  return 1;
}
static void create_stream(Dev d, SP_Stream* s, TF_Status* st) { refuse(st); }
static void destroy_stream(Dev d, SP_Stream s) {}
static void stream_dependency(Dev d, SP_Stream a, SP_Stream b, TF_Status* st) { refuse(st); }
static void stream_status(Dev d, SP_Stream s, TF_Status* st) { refuse(st); }
static void create_event(Dev d, SP_Event* e, TF_Status* st) { refuse(st); }
static void destroy_event(Dev d, SP_Event e) {}
static SE_EventStatus event_status(Dev d, SP_Event e) { return SE_EVENT_ERROR; }
static void record_event(Dev d, SP_Stream s, SP_Event e, TF_Status* st) { refuse(st); }
static void wait_for_event(Dev const d, SP_Stream s, SP_Event e, TF_Status* const st) { refuse(st); }
static void create_timer(Dev d, SP_Timer* t, TF_Status* st) { refuse(st); }
static void destroy_timer(Dev d, SP_Timer t) {}
static void start_timer(Dev d, SP_Stream s, SP_Timer t, TF_Status* st) { refuse(st); }
static void stop_timer(Dev d, SP_Stream s, SP_Timer t, TF_Status* st) { refuse(st); }
static void memcpy_dtoh(Dev d, SP_Stream s, void* dst, const Mem* src, uint64_t n, TF_Status* st) { refuse(st); }
static void memcpy_htod(Dev d, SP_Stream s, Mem* dst, const void* src, uint64_t n, TF_Status* st) { refuse(st); }
static void memcpy_dtod(Dev d, SP_Stream s, Mem* dst, const Mem* src, uint64_t n, TF_Status* st) { refuse(st); }
static void sync_dtoh(Dev d, void* dst, const Mem* src, uint64_t n, TF_Status* st) { refuse(st); }
static void sync_htod(Dev d, Mem* dst, const void* src, uint64_t n, TF_Status* st) { refuse(st); }
static void sync_dtod(Dev d, Mem* dst, const Mem* src, uint64_t n, TF_Status* st) { refuse(st); }
static void block_for_event(Dev d, SP_Event e, TF_Status* st) { refuse(st); }
static void block_until_done(Dev d, SP_Stream s, TF_Status* st) { refuse(st); }
static void synchronize(Dev d, TF_Status* st) {}
static void mem_zero(Dev d, SP_Stream s, Mem* m, uint64_t n, TF_Status* st) { refuse(st); }
static void mem_set(Dev d, SP_Stream s, Mem* m, uint8_t v, uint64_t n, TF_Status* st) { refuse(st); }
static void mem_set32(Dev d, SP_Stream s, Mem* m, uint32_t v, uint64_t n, TF_Status* st) { refuse(st); }
static TF_Bool host_callback(Dev d, SP_Stream s, SE_StatusCallbackFn fn, void* arg) { return 0; }

static void create_stream_executor(const SP_Platform* p, SE_CreateStreamExecutorParams* params, TF_Status* st) {
  SP_StreamExecutor* se = params->stream_executor;
  se->struct_size = SP_STREAMEXECUTOR_STRUCT_SIZE;
  se->allocate = allocate;
  se->deallocate = deallocate;
  se->host_memory_allocate = host_allocate;
  se->host_memory_deallocate = host_deallocate;
  se->unified_memory_allocate = host_allocate;
  se->unified_memory_deallocate = host_deallocate;
  se->get_allocator_stats = allocator_stats;
  se->device_memory_usage = memory_usage;
  se->create_stream = create_stream;
  se->destroy_stream = destroy_stream;
  se->create_stream_dependency = stream_dependency;
  se->get_stream_status = stream_status;
  se->create_event = create_event;
  se->destroy_event = destroy_event;
  se->get_event_status = event_status;
  se->record_event = record_event;
  se->wait_for_event = wait_for_event;
  se->create_timer = create_timer;
  se->destroy_timer = destroy_timer;
  se->start_timer = start_timer;
  se->stop_timer = stop_timer;
  se->memcpy_dtoh = memcpy_dtoh;
  se->memcpy_htod = memcpy_htod;
  se->memcpy_dtod = memcpy_dtod;
  se->sync_memcpy_dtoh = sync_dtoh;
  se->sync_memcpy_htod = sync_htod;
  se->sync_memcpy_dtod = sync_dtod;
  se->block_host_for_event = block_for_event;
  se->block_host_until_done = block_until_done;
  se->synchronize_all_activity = synchronize;
  se->mem_zero = mem_zero;
  se->memset = mem_set;
  se->memset32 = mem_set32;
  se->host_callback = host_callback;
}
static void destroy_stream_executor(const SP_Platform* p, SP_StreamExecutor* se) {}

// --- the platform ---

static void no_devices(const SP_Platform* p, int* count, TF_Status* st) { *count = 0; }
static void create_device(const SP_Platform* p, SE_CreateDeviceParams* params, TF_Status* st) { refuse(st); }
static void destroy_device(const SP_Platform* p, SP_Device* d) {}
static int32_t numa_node(Dev d) { return -1; }
static int64_t bandwidth(Dev d) { return -1; }
static double gflops(Dev d) { return -1; }
static void create_device_fns(const SP_Platform* p, SE_CreateDeviceFnsParams* params, TF_Status* st) {
  SP_DeviceFns* f = params->device_fns;
  f->struct_size = SP_DEVICE_FNS_STRUCT_SIZE;
  f->get_numa_node = numa_node;
  f->get_memory_bandwidth = bandwidth;
  f->get_gflops = gflops;
}
static void destroy_device_fns(const SP_Platform* p, SP_DeviceFns* f) {}
static uint64_t nanoseconds(SP_Timer t) { return 0; }
static void create_timer_fns(const SP_Platform* p, SP_TimerFns* t, TF_Status* st) {
  t->struct_size = SP_TIMER_FNS_STRUCT_SIZE;
  t->nanoseconds = nanoseconds;
}
static void destroy_timer_fns(const SP_Platform* p, SP_TimerFns* t) {}
static void destroy_platform(SP_Platform* p) {}
static void destroy_platform_fns(SP_PlatformFns* f) {}

void declined_platform(SE_PlatformRegistrationParams* params) {
  params->major_version = SE_MAJOR;
  params->minor_version = SE_MINOR;
  params->patch_version = SE_PATCH;
  SP_Platform* p = params->platform;
  p->struct_size = SP_PLATFORM_STRUCT_SIZE;
  p->name = "METALPLUG";
  p->type = declined_type;
  SP_PlatformFns* f = params->platform_fns;
  f->struct_size = SP_PLATFORM_FNS_STRUCT_SIZE;
  f->get_device_count = no_devices;
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

// --- the graph pass: the graph back as it came ---

static void free_graph(void* data, size_t length) { free(data); }

static void unchanged(void* optimizer, const TF_Buffer* in, const TF_GrapplerItem* item, TF_Buffer* out, TF_Status* st) {
  void* copy = malloc(in->length ? in->length : 1);
  if (in->length) memcpy(copy, in->data, in->length);
  out->data = copy;
  out->length = in->length;
  out->data_deallocator = free_graph;
}

void declined_optimizer(TP_OptimizerRegistrationParams* params) {
  params->device_type = declined_type;
  params->optimizer_configs->struct_size = TP_OPTIMIZER_CONFIGS_STRUCT_SIZE;
  params->optimizer->struct_size = TP_OPTIMIZER_STRUCT_SIZE;
  params->optimizer->optimize_func = unchanged;
}

// --- the profiler: nothing to record ---

static void profiler_noop(const TP_Profiler* p, TF_Status* st) {}
static void collect_nothing(const TP_Profiler* p, uint8_t* buffer, size_t* size, TF_Status* st) { *size = 0; }
static void destroy_profiler(TP_Profiler* p) {}
static void destroy_profiler_fns(TP_ProfilerFns* f) {}

void declined_profiler(TF_ProfilerRegistrationParams* params) {
  params->profiler->struct_size = TP_PROFILER_STRUCT_SIZE;
  params->profiler->device_type = declined_type;
  params->profiler_fns->struct_size = TP_PROFILER_FNS_STRUCT_SIZE;
  params->profiler_fns->start = profiler_noop;
  params->profiler_fns->stop = profiler_noop;
  params->profiler_fns->collect_data_xspace = collect_nothing;
  params->destroy_profiler = destroy_profiler;
  params->destroy_profiler_fns = destroy_profiler_fns;
}

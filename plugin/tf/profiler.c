// Profiler trampolines (TF_InitProfiler): the tables TensorFlow reads,
// handed to Go. Behaviour lives in profiler.go.
#include "profiler.h"
#include "_cgo_export.h"

static void start(const TP_Profiler* profiler, TF_Status* status) { goProfilerStart(status); }
static void stop(const TP_Profiler* profiler, TF_Status* status) { goProfilerStop(status); }
static void collect(const TP_Profiler* profiler, uint8_t* buffer, size_t* size, TF_Status* status) {
  goProfilerCollect(buffer, size, status);
}
// The tables are TensorFlow's; nothing of ours hangs off them.
static void destroy_profiler(TP_Profiler* profiler) {}
static void destroy_profiler_fns(TP_ProfilerFns* fns) {}

void metalplug_fill_profiler(TF_ProfilerRegistrationParams* params, const char* device_type) {
  if (!params || !params->profiler || !params->profiler_fns) return;
  params->profiler->struct_size = TP_PROFILER_STRUCT_SIZE;
  params->profiler->device_type = device_type;
  params->profiler_fns->struct_size = TP_PROFILER_FNS_STRUCT_SIZE;
  params->profiler_fns->start = start;
  params->profiler_fns->stop = stop;
  params->profiler_fns->collect_data_xspace = collect;
  params->destroy_profiler = destroy_profiler;
  params->destroy_profiler_fns = destroy_profiler_fns;
}

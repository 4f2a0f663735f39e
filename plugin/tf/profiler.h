// C side of the profiler (TF_InitProfiler). TensorFlow owns the registration
// params; the trampolines call into Go (profiler.go).
#ifndef METALPLUG_PROFILER_H_
#define METALPLUG_PROFILER_H_

#include "plugin.h"
#include "tensorflow/c/experimental/pluggable_profiler/pluggable_profiler.h"

// Fills the profiler's registration: our device type and the start, stop
// and collect trampolines.
void metalplug_fill_profiler(TF_ProfilerRegistrationParams* params, const char* device_type);

#endif

// The tables of a declined load: a platform with no devices, a graph pass
// that changes nothing and a profiler that records nothing. TensorFlow
// aborts the process when a plugin's init fails, and asks for every table a
// platform has (stream executor, device and timer functions included) even
// when it counts no devices, so a decline must fill them all.
#ifndef METALPLUG_LOADER_DECLINED_H_
#define METALPLUG_LOADER_DECLINED_H_

#include "tensorflow/c/experimental/grappler/grappler.h"
#include "tensorflow/c/experimental/pluggable_profiler/pluggable_profiler.h"
#include "tensorflow/c/experimental/stream_executor/stream_executor.h"

void declined_platform(SE_PlatformRegistrationParams* params);
void declined_optimizer(TP_OptimizerRegistrationParams* params);
void declined_profiler(TF_ProfilerRegistrationParams* params);

// A symbol of the TensorFlow in the process (loader.c), or NULL.
void* tf_symbol(const char* name);

#endif  // METALPLUG_LOADER_DECLINED_H_

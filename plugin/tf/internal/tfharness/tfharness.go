// Package tfharness is the C that plugin/tf's tests need, since a test file
// cannot use cgo: TensorFlow statuses to hand the exports, the registration
// tables TensorFlow hands the init functions (zeroed, as it does) with the
// checks of how it reads them once filled, and a status callback that
// counts its calls. It does not import plugin/tf (whose tests import it),
// so the library never links it; what it makes passes as unsafe.Pointer,
// which the tests convert to the exports' parameter types.
package tfharness

/*
#include <stdlib.h>
#include <string.h>

#include "tensorflow/c/experimental/grappler/grappler.h"
#include "tensorflow/c/experimental/pluggable_profiler/pluggable_profiler.h"
#include "tensorflow/c/experimental/stream_executor/stream_executor.h"
#include "tensorflow/c/tf_status.h"

// A status callback (SE_StatusCallbackFn) that counts its calls.
static int callbacks;
static void count_callback(void* arg, TF_Status* st) { callbacks++; }
static void* callback_fn(void) { return (void*)count_callback; }
static int callback_count(void) { return callbacks; }

// The platform tables SE_InitPlugin fills; never freed, as what the plugin
// fills in them is TensorFlow's to keep.
static SE_PlatformRegistrationParams* new_platform_params(void) {
  SE_PlatformRegistrationParams* p = calloc(1, sizeof *p);
  p->platform = calloc(1, sizeof(SP_Platform));
  p->platform_fns = calloc(1, sizeof(SP_PlatformFns));
  return p;
}

static TP_OptimizerRegistrationParams* new_optimizer_params(void) {
  TP_OptimizerRegistrationParams* p = calloc(1, sizeof *p);
  p->optimizer_configs = calloc(1, sizeof(TP_OptimizerConfigs));
  p->optimizer = calloc(1, sizeof(TP_Optimizer));
  return p;
}

static void free_optimizer_params(TP_OptimizerRegistrationParams* p) {
  free(p->optimizer_configs);
  free(p->optimizer);
  free(p);
}

// 1 when p is filled for device_type: the struct sizes, the layout optimizer
// off, remapping left alone and the optimize function set.
static int optimizer_filled(const TP_OptimizerRegistrationParams* p, const char* device_type) {
  const TP_OptimizerConfigs* configs = p->optimizer_configs;
  const TP_Optimizer* optimizer = p->optimizer;
  return p->device_type && strcmp(p->device_type, device_type) == 0 &&
         configs->struct_size == TP_OPTIMIZER_CONFIGS_STRUCT_SIZE && configs->layout_optimizer == TF_TriState_Off &&
         configs->remapping == TF_TriState_Default && optimizer->struct_size == TP_OPTIMIZER_STRUCT_SIZE &&
         optimizer->optimize_func != NULL;
}

static TF_ProfilerRegistrationParams* new_profiler_params(void) {
  TF_ProfilerRegistrationParams* p = calloc(1, sizeof *p);
  p->profiler = calloc(1, sizeof(TP_Profiler));
  p->profiler_fns = calloc(1, sizeof(TP_ProfilerFns));
  return p;
}

static void free_profiler_params(TF_ProfilerRegistrationParams* p) {
  free(p->profiler);
  free(p->profiler_fns);
  free(p);
}

// 1 when p is filled for device_type: the struct sizes and every function.
static int profiler_filled(const TF_ProfilerRegistrationParams* p, const char* device_type) {
  const TP_Profiler* profiler = p->profiler;
  const TP_ProfilerFns* fns = p->profiler_fns;
  return profiler->device_type && strcmp(profiler->device_type, device_type) == 0 &&
         profiler->struct_size == TP_PROFILER_STRUCT_SIZE && fns->struct_size == TP_PROFILER_FNS_STRUCT_SIZE &&
         fns->start && fns->stop && fns->collect_data_xspace && p->destroy_profiler && p->destroy_profiler_fns;
}
*/
import "C"

import "unsafe"

// The TF_Code values the tests compare with.
const (
	OK       = int(C.TF_OK)
	Internal = int(C.TF_INTERNAL)
)

// NewStatus is a new *TF_Status, OK; DeleteStatus frees it.
func NewStatus() unsafe.Pointer { return unsafe.Pointer(C.TF_NewStatus()) }

// DeleteStatus frees st, a *TF_Status of NewStatus.
func DeleteStatus(st unsafe.Pointer) { C.TF_DeleteStatus((*C.TF_Status)(st)) }

// StatusText is st's code and message (st a *TF_Status).
func StatusText(st unsafe.Pointer) (code int, msg string) {
	s := (*C.TF_Status)(st)
	return int(C.TF_GetCode(s)), C.GoString(C.TF_Message(s))
}

// NewPlatformParams is a *SE_PlatformRegistrationParams with its platform and
// platform functions, zeroed, as TensorFlow hands it to SE_InitPlugin.
func NewPlatformParams() unsafe.Pointer { return unsafe.Pointer(C.new_platform_params()) }

// Callback is a status callback (an SE_StatusCallbackFn) that counts its
// calls; Callbacks is the count.
func Callback() unsafe.Pointer { return C.callback_fn() }

// Callbacks is how many times Callback has been called.
func Callbacks() int { return int(C.callback_count()) }

// OptimizerFilled hands fill a *TP_OptimizerRegistrationParams with its
// configs and optimizer, zeroed, as TensorFlow hands it to TF_InitGraph,
// and reports whether fill left it as TensorFlow must read it for
// deviceType.
func OptimizerFilled(deviceType string, fill func(params unsafe.Pointer)) bool {
	p := C.new_optimizer_params()
	defer C.free_optimizer_params(p)
	fill(unsafe.Pointer(p))
	dt := C.CString(deviceType)
	defer C.free(unsafe.Pointer(dt))
	return C.optimizer_filled(p, dt) == 1
}

// ProfilerFilled is OptimizerFilled for TF_InitProfiler's
// *TF_ProfilerRegistrationParams, with its profiler and profiler functions.
func ProfilerFilled(deviceType string, fill func(params unsafe.Pointer)) bool {
	p := C.new_profiler_params()
	defer C.free_profiler_params(p)
	fill(unsafe.Pointer(p))
	dt := C.CString(deviceType)
	defer C.free(unsafe.Pointer(dt))
	return C.profiler_filled(p, dt) == 1
}

// C side of the TensorFlow frontend: the tables TensorFlow reads, filled with
// trampolines into Go. Everything here is glue; behaviour lives in Go.
#ifndef METALPLUG_PLUGIN_H_
#define METALPLUG_PLUGIN_H_

#include <stdint.h>
#include <stdlib.h>

#include "tensorflow/c/experimental/stream_executor/stream_executor.h"
// kernels.h defines, rather than declares, a const with external linkage, so
// every C file that includes it would define it again. Weak definitions merge.
#pragma weak TF_InputRange_Args_STRUCT_SIZE
#include "tensorflow/c/kernels.h"
// ops.h names its structs without typedefs, as only C++ allows.
typedef struct TF_DimensionHandle TF_DimensionHandle;
typedef struct TF_OpDefinitionBuilder TF_OpDefinitionBuilder;
typedef struct TF_ShapeHandle TF_ShapeHandle;
typedef struct TF_ShapeInferenceContext TF_ShapeInferenceContext;
#include "tensorflow/c/ops.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"

// Strings TensorFlow keeps pointers to; set once from Go, never freed.
extern const char* metalplug_platform_name;
extern const char* metalplug_device_type;
extern const char* metalplug_hardware_name;
extern const char* metalplug_vendor;

// Fills the platform tables. TensorFlow owns params; we own nothing it keeps
// except the static strings above.
void metalplug_fill_platform(SE_PlatformRegistrationParams* params);

// Registers the kernel of registration slot `slot` (see kernels.go) for op on
// device_type. Returns a builder the caller configures and registers.
TF_KernelBuilder* metalplug_new_kernel_builder(const char* op, const char* device_type, int slot);

// Gives an op being defined the shape function that says nothing of its
// outputs' shapes (a cluster's are known only when it runs).
void metalplug_unknown_shapes(TF_OpDefinitionBuilder* b);

// Calls a TensorFlow status callback; Go cannot call C function pointers.
void metalplug_call_status_callback(SE_StatusCallbackFn fn, void* arg, TF_Status* status);

// Looks a symbol up in the TensorFlow libraries already loaded in the process,
// without linking it (a missing export must not stop the plugin loading).
void* metalplug_lookup(const char* name);

// Calls TF_Version through a pointer found by metalplug_lookup.
const char* metalplug_call_version(void* fn);

#define METALPLUG_KERNEL_SLOTS 512

// The most dimensions metalplug_read_inputs reports per input; TensorFlow's
// own limit (TensorShape) is 254, but no op here takes more than 8.
#define METALPLUG_MAX_DIMS 8

// One kernel input as metalplug_read_inputs hands it to Go.
typedef struct metalplug_input {
  TF_Tensor* tensor;
  void* data;
  int dtype;
  int ndims;  // -1: more than METALPLUG_MAX_DIMS
  int64_t dims[METALPLUG_MAX_DIMS];
} metalplug_input;

// Reads inputs 0..n-1 of ctx in one call (each cgo call costs ~100 ns, and a
// kernel used to make five per input). On failure it returns the failing
// input's index and leaves the message in status; the caller deletes the
// tensors of inputs before it. Returns -1 on success.
int metalplug_read_inputs(TF_OpKernelContext* ctx, int n, metalplug_input* out, TF_Status* status);

// Deletes the tensors of n inputs metalplug_read_inputs read.
void metalplug_delete_inputs(metalplug_input* in, int n);

// The kernel's stream, or NULL with the message in status.
SP_Stream metalplug_kernel_stream(TF_OpKernelContext* ctx, TF_Status* status);

// Allocates output i (dtype, dims[0..ndims), bytes) and returns its data,
// or NULL with the message in status: TF_AllocateOutput, the check, the
// data pointer and the release of the handle, in one call.
void* metalplug_allocate_output(TF_OpKernelContext* ctx, int i, int dtype, const int64_t* dims, int ndims, size_t bytes,
                                TF_Status* status);

#endif  // METALPLUG_PLUGIN_H_

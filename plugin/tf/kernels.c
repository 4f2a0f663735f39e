// Kernel trampolines. TensorFlow's create function gets no user data, so each
// registered op gets its own numbered create function, and the slot number
// tells Go which op it is constructing.
#include <dlfcn.h>

#include "plugin.h"
#include "_cgo_export.h"

static void* kernel_create(TF_OpKernelConstruction* ctx, int slot) {
  return (void*)goKernelCreate(ctx, slot);
}
static void kernel_compute(void* kernel, TF_OpKernelContext* ctx) { goKernelCompute((uintptr_t)kernel, ctx); }
static void kernel_delete(void* kernel) { goKernelDelete((uintptr_t)kernel); }

// Slot n's function is create_<n in three octal digits>; the C literal 0<digits>
// is octal, so each function passes its own slot number.
#define S1(n) static void* create_##n(TF_OpKernelConstruction* c) { return kernel_create(c, 0##n); }
#define S8(n) S1(n##0) S1(n##1) S1(n##2) S1(n##3) S1(n##4) S1(n##5) S1(n##6) S1(n##7)
#define S64(n) S8(n##0) S8(n##1) S8(n##2) S8(n##3) S8(n##4) S8(n##5) S8(n##6) S8(n##7)
S64(0) S64(1) S64(2) S64(3) S64(4) S64(5) S64(6) S64(7)

#define P1(n) create_##n,
#define P8(n) P1(n##0) P1(n##1) P1(n##2) P1(n##3) P1(n##4) P1(n##5) P1(n##6) P1(n##7)
#define P64(n) P8(n##0) P8(n##1) P8(n##2) P8(n##3) P8(n##4) P8(n##5) P8(n##6) P8(n##7)
static void* (*const creators[METALPLUG_KERNEL_SLOTS])(TF_OpKernelConstruction*) = {
    P64(0) P64(1) P64(2) P64(3) P64(4) P64(5) P64(6) P64(7)};

TF_KernelBuilder* metalplug_new_kernel_builder(const char* op, const char* device_type, int slot) {
  if (slot < 0 || slot >= METALPLUG_KERNEL_SLOTS) return NULL;
  return TF_NewKernelBuilder(op, device_type, creators[slot], kernel_compute, kernel_delete);
}

static void unknown_shapes(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  TF_ShapeInferenceContextSetUnknownShape(ctx, status);
}

void metalplug_unknown_shapes(TF_OpDefinitionBuilder* b) { TF_OpDefinitionBuilderSetShapeInferenceFunction(b, unknown_shapes); }

void* metalplug_lookup(const char* name) {
#ifdef __APPLE__
  static const char* libs[] = {"libtensorflow_framework.2.dylib", "libtensorflow_cc.2.dylib", NULL};
#else
  static const char* libs[] = {"libtensorflow_framework.so.2", "libtensorflow_cc.so.2", NULL};
#endif
  for (int i = 0; libs[i]; i++) {
    // RTLD_NOLOAD: only libraries TensorFlow has already loaded count.
    void* lib = dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD);
    if (!lib) continue;
    void* sym = dlsym(lib, name);
    dlclose(lib);
    if (sym) return sym;
  }
  return dlsym(RTLD_DEFAULT, name);
}

const char* metalplug_call_version(void* fn) { return ((const char* (*)(void))fn)(); }

int metalplug_read_inputs(TF_OpKernelContext* ctx, int n, metalplug_input* out, TF_Status* status) {
  for (int i = 0; i < n; i++) {
    metalplug_input* in = &out[i];
    TF_GetInput(ctx, i, &in->tensor, status);
    if (TF_GetCode(status) != TF_OK) return i;
    in->data = TF_TensorData(in->tensor);
    in->dtype = (int)TF_TensorType(in->tensor);
    int nd = TF_NumDims(in->tensor);
    if (nd > METALPLUG_MAX_DIMS) {
      in->ndims = -1;
      continue;
    }
    in->ndims = nd;
    for (int j = 0; j < nd; j++) in->dims[j] = TF_Dim(in->tensor, j);
  }
  return -1;
}

void metalplug_delete_inputs(metalplug_input* in, int n) {
  for (int i = 0; i < n; i++) TF_DeleteTensor(in[i].tensor);
}

SP_Stream metalplug_kernel_stream(TF_OpKernelContext* ctx, TF_Status* status) {
  SP_Stream s = TF_GetStream(ctx, status);
  return TF_GetCode(status) == TF_OK ? s : NULL;
}

void* metalplug_allocate_output(TF_OpKernelContext* ctx, int i, int dtype, const int64_t* dims, int ndims, size_t bytes,
                                TF_Status* status) {
  TF_Tensor* out = TF_AllocateOutput(ctx, i, (TF_DataType)dtype, dims, ndims, bytes, status);
  if (TF_GetCode(status) != TF_OK) return NULL;
  void* data = TF_TensorData(out);
  TF_DeleteTensor(out);
  return data;
}

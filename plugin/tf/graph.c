// Graph optimizer trampolines (TF_InitGraph): the table TensorFlow reads,
// and the buffers it passes, handed to Go. Behaviour lives in graph.go and
// package graphpass.
#include <string.h>

#include "graph.h"
#include "_cgo_export.h"

static void optimize(void* optimizer, const TF_Buffer* in, const TF_GrapplerItem* item, TF_Buffer* out,
                     TF_Status* status) {
  goOptimize((void*)in->data, in->length, (void*)item, out, status);
}

void metalplug_fill_optimizer(TP_OptimizerRegistrationParams* params, const char* device_type) {
  if (!params || !params->optimizer_configs || !params->optimizer) return;
  params->device_type = device_type;
  params->optimizer_configs->struct_size = TP_OPTIMIZER_CONFIGS_STRUCT_SIZE;
  // TensorFlow's layout optimizer turns NHWC convolutions on any device it
  // takes for a GPU into NCHW, with a Transpose on either side; the
  // device's kernels take NHWC, so the transposes would be all it adds.
  params->optimizer_configs->layout_optimizer = TF_TriState_Off;
  params->optimizer->struct_size = TP_OPTIMIZER_STRUCT_SIZE;
  params->optimizer->optimize_func = optimize;
}

static void free_buffer(void* data, size_t length) { free(data); }

void metalplug_set_buffer(TF_Buffer* out, const void* data, size_t n) {
  void* copy = malloc(n ? n : 1);
  if (n) memcpy(copy, data, n);
  out->data = copy;
  out->length = n;
  out->data_deallocator = free_buffer;
}

typedef void (*list_size_fn)(const TF_GrapplerItem*, int*, size_t*, TF_Status*);
typedef void (*list_fn)(const TF_GrapplerItem*, char**, size_t*, int, void*, size_t, TF_Status*);

char* metalplug_nodes_to_preserve(const TF_GrapplerItem* item, size_t* total) {
  *total = 0;
  list_size_fn size_fn = (list_size_fn)metalplug_lookup("TF_GetNodesToPreserveListSize");
  list_fn list = (list_fn)metalplug_lookup("TF_GetNodesToPreserveList");
  if (!size_fn || !list) return NULL;
  TF_Status* st = TF_NewStatus();
  int count = 0;
  size_t storage_size = 0;
  size_fn(item, &count, &storage_size, st);
  if (TF_GetCode(st) != TF_OK) {
    TF_DeleteStatus(st);
    return NULL;
  }
  char** values = calloc(count ? count : 1, sizeof(char*));
  size_t* lengths = calloc(count ? count : 1, sizeof(size_t));
  void* storage = malloc(storage_size ? storage_size : 1);
  list(item, values, lengths, count, storage, storage_size, st);
  char* packed = NULL;
  if (TF_GetCode(st) == TF_OK) {
    size_t n = 0;
    for (int i = 0; i < count; i++) n += lengths[i] + 1;
    packed = malloc(n ? n : 1);
    size_t at = 0;
    for (int i = 0; i < count; i++) {
      memcpy(packed + at, values[i], lengths[i]);
      at += lengths[i];
      packed[at++] = 0;
    }
    *total = n;
  }
  free(values);
  free(lengths);
  free(storage);
  TF_DeleteStatus(st);
  return packed;
}

typedef TF_FunctionLibraryDefinition* (*new_lib_fn)(const TF_Buffer*, TF_Status*);
typedef void (*delete_lib_fn)(TF_FunctionLibraryDefinition*);
typedef void (*lookup_op_fn)(TF_FunctionLibraryDefinition*, const char*, TF_Buffer*, TF_Status*);

TF_FunctionLibraryDefinition* metalplug_new_library(const void* graph, size_t graph_len) {
  new_lib_fn new_lib = (new_lib_fn)metalplug_lookup("TF_NewFunctionLibraryDefinition");
  if (!new_lib || !metalplug_lookup("TF_DeleteFunctionLibraryDefinition") || !metalplug_lookup("TF_LookUpOpDef")) {
    return NULL;
  }
  TF_Status* st = TF_NewStatus();
  TF_Buffer in = {graph, graph_len, NULL};
  TF_FunctionLibraryDefinition* lib = new_lib(&in, st);
  if (TF_GetCode(st) != TF_OK) lib = NULL;
  TF_DeleteStatus(st);
  return lib;
}

void metalplug_delete_library(TF_FunctionLibraryDefinition* lib) {
  if (lib) ((delete_lib_fn)metalplug_lookup("TF_DeleteFunctionLibraryDefinition"))(lib);
}

char* metalplug_op_def(TF_FunctionLibraryDefinition* lib, const char* op, size_t* n) {
  *n = 0;
  if (!lib) return NULL;
  lookup_op_fn lookup = (lookup_op_fn)metalplug_lookup("TF_LookUpOpDef");
  TF_Status* st = TF_NewStatus();
  char* out = NULL;
  TF_Buffer def = {NULL, 0, NULL};  // TensorFlow fills it and says how to free it
  lookup(lib, op, &def, st);
  if (TF_GetCode(st) == TF_OK && def.data) {
    out = malloc(def.length ? def.length : 1);
    memcpy(out, def.data, def.length);
    *n = def.length;
  }
  if (def.data && def.data_deallocator) def.data_deallocator((void*)def.data, def.length);
  TF_DeleteStatus(st);
  return out;
}

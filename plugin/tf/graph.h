// C side of the graph optimizer (TF_InitGraph). TensorFlow owns the
// registration params and the buffers; metalplug_set_buffer's copy is freed
// by TensorFlow through the deallocator it sets.
#ifndef METALPLUG_GRAPH_H_
#define METALPLUG_GRAPH_H_

#include "plugin.h"
#include "tensorflow/c/experimental/grappler/grappler.h"

// Fills the optimizer's registration: our device type, the layout optimizer
// off, and the optimize trampoline into Go.
void metalplug_fill_optimizer(TP_OptimizerRegistrationParams* params, const char* device_type);

// Sets out to a malloc'd copy of data.
void metalplug_set_buffer(TF_Buffer* out, const void* data, size_t n);

// The names of the nodes TensorFlow says to preserve (fetches, feeds, nodes
// to keep), NUL-separated in one malloc'd block of *total bytes; NULL when
// this TensorFlow does not export the functions or they fail. They are looked
// up in the loaded TensorFlow libraries, not linked.
char* metalplug_nodes_to_preserve(const TF_GrapplerItem* item, size_t* total);

// The graph's function library: TensorFlow's op registry and the graph's
// functions; NULL when this TensorFlow does not export the functions (they
// are looked up, not linked) or the graph does not parse. Freed with
// metalplug_delete_library.
TF_FunctionLibraryDefinition* metalplug_new_library(const void* graph, size_t graph_len);
void metalplug_delete_library(TF_FunctionLibraryDefinition* lib);

// The serialized OpDef of op as lib defines it, in one malloc'd block of *n
// bytes; NULL when lib is NULL or has no such op.
char* metalplug_op_def(TF_FunctionLibraryDefinition* lib, const char* op, size_t* n);

#endif

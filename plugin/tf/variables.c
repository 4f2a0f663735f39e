// Trampolines for the variable and optimizer kernels (variables.go). The
// kernels_experimental.h functions are called through pointers that
// metalplug_lookup found at run time; nothing here names them as symbols, so
// the library links none of them.
#include "variables.h"

#include "_cgo_export.h"

typedef void (*copy_fn)(TF_OpKernelContext* ctx, TF_Tensor* source, TF_Tensor* dest);
typedef void (*update_fn)(TF_OpKernelContext* ctx, TF_Tensor* tensor, TF_Tensor* value, int op);

// The signatures of tensorflow/c/kernels_experimental.h.
typedef void (*assign_variable_fn)(TF_OpKernelContext* ctx, int input_index, int value_index, bool validate_shape,
                                   copy_fn copy, TF_Status* status);
typedef void (*assign_update_variable_fn)(TF_OpKernelContext* ctx, int input_index, int value_index, int op,
                                          int is_variant_type, copy_fn copy, update_fn update, TF_Status* status);
typedef void (*lock_variables_fn)(TF_OpKernelContext* ctx, bool do_lock, bool sparse, const int* const inputs,
                                  size_t len, copy_fn copy, TF_VariableInputLockHolder** holder, TF_Status* status);
typedef void (*variable_tensor_fn)(TF_OpKernelContext* ctx, int input, bool lock_held, bool is_variant_type,
                                   bool sparse, copy_fn copy, TF_Tensor** out, TF_Status* status);
typedef void (*release_variables_fn)(TF_VariableInputLockHolder* holder);

static assign_variable_fn p_assign_variable;
static assign_update_variable_fn p_assign_update_variable;
static lock_variables_fn p_lock_variables;
static variable_tensor_fn p_variable_tensor;
static release_variables_fn p_release_variables;

int metalplug_var_api_load(void) {
  p_assign_variable = (assign_variable_fn)metalplug_lookup("TF_AssignVariable");
  p_assign_update_variable = (assign_update_variable_fn)metalplug_lookup("TF_AssignUpdateVariable");
  p_lock_variables = (lock_variables_fn)metalplug_lookup("TF_MaybeLockVariableInputMutexesInOrder");
  p_variable_tensor = (variable_tensor_fn)metalplug_lookup("TF_GetInputTensorFromVariable");
  p_release_variables = (release_variables_fn)metalplug_lookup("TF_ReleaseVariableInputLockHolder");
  return p_assign_variable && p_assign_update_variable && p_lock_variables && p_variable_tensor &&
         p_release_variables;
}

// TensorFlow hands the callbacks tensors it made for the call; the callee
// (Go) owns and deletes them.
static void copy_callback(TF_OpKernelContext* ctx, TF_Tensor* source, TF_Tensor* dest) {
  goVarCopy(ctx, source, dest);
}
// The op number TensorFlow passes through is unused: the kernel's own
// program (its lowering) is the update.
static void update_callback(TF_OpKernelContext* ctx, TF_Tensor* tensor, TF_Tensor* value, int op) {
  (void)op;
  goVarUpdate(ctx, tensor, value);
}

void metalplug_assign_variable(TF_OpKernelContext* ctx, bool validate_shape, TF_Status* status) {
  p_assign_variable(ctx, 0, 1, validate_shape, copy_callback, status);
}

void metalplug_assign_update_variable(TF_OpKernelContext* ctx, TF_Status* status) {
  p_assign_update_variable(ctx, 0, 1, 0, 0, copy_callback, update_callback, status);
}

TF_VariableInputLockHolder* metalplug_lock_variables(TF_OpKernelContext* ctx, bool do_lock, bool sparse, int n,
                                                     TF_Status* status) {
  static const int inputs[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  TF_VariableInputLockHolder* holder = NULL;
  if (n < 0 || n > 8) {
    TF_SetStatus(status, TF_INTERNAL, "metalplug: too many variable inputs to lock");
    return NULL;
  }
  p_lock_variables(ctx, do_lock, sparse, inputs, (size_t)n, copy_callback, &holder, status);
  return holder;
}

TF_Tensor* metalplug_variable_tensor(TF_OpKernelContext* ctx, int input, bool lock_held, bool sparse, TF_Status* status) {
  TF_Tensor* out = NULL;
  p_variable_tensor(ctx, input, lock_held, false, sparse, copy_callback, &out, status);
  return out;
}

void metalplug_release_variables(TF_VariableInputLockHolder* holder) {
  if (holder) p_release_variables(holder);
}

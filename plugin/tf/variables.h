// C side of the device's variable and optimizer kernels (variables.go): the
// kernels_experimental.h functions, reached through pointers found at run time
// (releases 2.20 and 2.21, and on Linux already 2.19, declare them without
// exporting them, so linking them would make dlopen, and so
// `import tensorflow`, fail), and the trampolines Go needs to call them, since
// Go cannot call a C function pointer.
#ifndef METALPLUG_VARIABLES_H_
#define METALPLUG_VARIABLES_H_

#include <stdbool.h>
#include <stddef.h>

#include "plugin.h"

// Opaque in kernels_experimental.h too; declared here so that this header
// need not include it (a C11 typedef may be repeated).
typedef struct TF_VariableInputLockHolder TF_VariableInputLockHolder;

// Looks up the five functions the kernels call. Returns 1 when all were
// found, 0 otherwise (then nothing may be registered).
int metalplug_var_api_load(void);

// TF_AssignVariable on inputs 0 (resource) and 1 (value).
void metalplug_assign_variable(TF_OpKernelContext* ctx, bool validate_shape, TF_Status* status);

// TF_AssignUpdateVariable on inputs 0 (resource) and 1 (value); the update
// callback (goVarUpdate) runs the kernel's program.
void metalplug_assign_update_variable(TF_OpKernelContext* ctx, TF_Status* status);

// TF_MaybeLockVariableInputMutexesInOrder on inputs 0..n-1 (n <= 8); do_lock
// false takes no lock.
TF_VariableInputLockHolder* metalplug_lock_variables(TF_OpKernelContext* ctx, bool do_lock, bool sparse, int n,
                                                     TF_Status* status);

// TF_GetInputTensorFromVariable; NULL when TensorFlow failed the kernel (the
// variable does not exist) without setting status.
TF_Tensor* metalplug_variable_tensor(TF_OpKernelContext* ctx, int input, bool lock_held, bool sparse, TF_Status* status);

// TF_ReleaseVariableInputLockHolder.
void metalplug_release_variables(TF_VariableInputLockHolder* holder);

#endif  // METALPLUG_VARIABLES_H_

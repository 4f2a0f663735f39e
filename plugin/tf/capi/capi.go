// Package capi names the TensorFlow C API functions the plugin uses. The
// probe checks them against a framework library's exports, the plugin looks
// up the run-time ones, and the build checks that the library it produces
// links exactly the Linked set, so these lists cannot drift from the code.
package capi

import "sort"

// LinkedKernels are the kernels.h functions the plugin calls directly, so the
// framework library must export every one or the plugin fails to load.
var LinkedKernels = []string{
	"TF_AllocateOutput",
	"TF_DeleteKernelBuilder",
	"TF_GetInput",
	"TF_GetOpKernelName",
	"TF_GetStream",
	"TF_KernelBuilder_HostMemory",
	"TF_KernelBuilder_TypeConstraint",
	"TF_NewKernelBuilder",
	"TF_NumInputs",
	"TF_NumOutputs",
	"TF_OpKernelConstruction_Failure",
	"TF_OpKernelConstruction_GetAttrBool",
	"TF_OpKernelConstruction_GetAttrFloat",
	"TF_OpKernelConstruction_GetAttrFloatList",
	"TF_OpKernelConstruction_GetAttrInt64",
	"TF_OpKernelConstruction_GetAttrInt64List",
	"TF_OpKernelConstruction_GetAttrSize",
	"TF_OpKernelConstruction_GetAttrString",
	"TF_OpKernelConstruction_GetAttrStringList",
	"TF_OpKernelConstruction_GetAttrType",
	"TF_OpKernelConstruction_HasAttr",
	"TF_OpKernelContext_Failure",
	"TF_RegisterKernelBuilder",
	"TF_SetOutput",
}

// LinkedStatusTensor are the tf_status.h and tf_tensor.h functions the plugin
// calls directly.
var LinkedStatusTensor = []string{
	"TF_DeleteStatus",
	"TF_DeleteTensor",
	"TF_Dim",
	"TF_GetCode",
	"TF_Message",
	"TF_NewStatus",
	"TF_NumDims",
	"TF_SetStatus",
	"TF_TensorData",
	"TF_TensorType",
}

// LinkedOps are the ops.h functions the plugin calls directly, to define
// the cluster op (lower.ClusterOp); every release from 2.18 to 2.21 exports
// them from the framework library.
var LinkedOps = []string{
	"TF_NewOpDefinitionBuilder",
	"TF_OpDefinitionBuilderAddAttr",
	"TF_OpDefinitionBuilderAddInput",
	"TF_OpDefinitionBuilderAddOutput",
	"TF_OpDefinitionBuilderSetShapeInferenceFunction",
	"TF_RegisterOpDefinition",
	"TF_ShapeInferenceContextSetUnknownShape",
}

// KernelsExperimental are the 14 functions of tensorflow/c/kernels_experimental.h.
// Later releases declare them without exporting them (measured on the Linux
// wheels: 2.18.1 exports all 14; 2.19.1, 2.20.0 and 2.21.0 none), so the
// plugin never links them: it looks them up at run time.
var KernelsExperimental = []string{
	"TF_AssignVariable",
	"TF_AssignRefVariable",
	"TF_AssignUpdateVariable",
	"TF_TemporaryVariable",
	"TF_DestroyTemporaryVariable",
	"TF_MaybeLockVariableInputMutexesInOrder",
	"TF_GetInputTensorFromVariable",
	"TF_OpKernelContext_ForwardRefInputToRefOutput",
	"TF_ReleaseVariableInputLockHolder",
	"TF_GetInputByName",
	"TF_OpKernelConstruction_GetAttrTensorShape",
	"TF_IsRefInput",
	"TF_AddNVariant",
	"TF_ZerosLikeVariant",
}

// RuntimeLookups are other functions the plugin finds at run time: they
// live in libtensorflow_cc, which the plugin does not link (TF_Version; the
// graph pass's list of nodes TensorFlow says to preserve, and the op
// definitions of the fused ops it writes).
var RuntimeLookups = []string{"TF_Version", "TF_GetNodesToPreserveListSize", "TF_GetNodesToPreserveList",
	"TF_NewFunctionLibraryDefinition", "TF_DeleteFunctionLibraryDefinition", "TF_LookUpOpDef"}

// Linked is every function the plugin links directly, sorted.
func Linked() []string {
	all := append(append(append([]string(nil), LinkedKernels...), LinkedStatusTensor...), LinkedOps...)
	sort.Strings(all)
	return all
}

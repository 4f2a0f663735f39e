package tf

/*
#include "variables.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/status"
	"github.com/metalplug/metalplug/plugin/tf/lower"
)

// The variable ops' compute (lower.Kernel.Variables): ordinary kernels whose
// leading inputs are resource variables, read and written through
// tensorflow/c/kernels_experimental.h. Without them TensorFlow updates
// variables on this device with its DEVICE_DEFAULT kernels, which compute on
// the host thread straight from device memory and so do not order themselves
// behind our streams (plugin.go runs synchronously then). With them every
// read and write of a variable's buffer is work on the kernel's stream, and
// the device may run asynchronously.
//
// The API is looked up at run time (metalplug_lookup): releases that declare
// it without exporting it must still load the plugin, and there the variable
// ops are not registered (registerKernels).

// variableAPI reports whether this TensorFlow exports the API, loading the
// C side's pointers the first time.
var variableAPI = sync.OnceValue(func() bool {
	return resourceVariableAPI() && C.metalplug_var_api_load() != 0
})

// varCall is one running compute: what the callbacks TensorFlow makes from
// inside the experimental API need, and what they report back.
type varCall struct {
	inst    *instance
	s       driver.Stream
	err     error // the first callback failure
	updated bool  // the update callback ran
}

var varCalls sync.Map // uintptr(TF_OpKernelContext*) -> *varCall

func (c *varCall) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// computeVariable is compute for a variable op. The inputs it fetches go
// into ins, which the caller deletes.
func computeVariable(inst *instance, ctx *C.TF_OpKernelContext, st *C.TF_Status, ins *[]input) error {
	k := inst.k
	if n := int(C.TF_NumInputs(ctx)); n != len(k.Inputs) {
		return fmt.Errorf("%s: %d inputs, want %d (%v)", k.Op, n, len(k.Inputs), k.Inputs)
	}
	s, err := kernelStream(ctx, st)
	if err != nil {
		return fmt.Errorf("%s: %w", k.Op, err)
	}
	call := &varCall{inst: inst, s: s}
	key := uintptr(unsafe.Pointer(ctx))
	varCalls.Store(key, call)
	defer varCalls.Delete(key)
	switch k.Variables.Access {
	case lower.VarAssign:
		C.metalplug_assign_variable(ctx, C.bool(inst.attrs.Bool("validate_shape")), st)
		err = statusErr(st, k.Op, "assigning")
	case lower.VarAssignUpdate:
		err = assignUpdate(inst, ctx, st, call)
	default:
		err = readOrUpdate(inst, ctx, st, call, ins)
	}
	if err == nil {
		err = call.err
	}
	if err == nil && state.synchronous {
		if serr := call.s.Synchronize(); serr != nil {
			err = fmt.Errorf("%s: %w", k.Op, serr)
		}
	}
	return err
}

// readOrUpdate runs a VarRead or VarUpdate op: under the variables' locks
// (where the op takes them), the variables' tensors and the other inputs go
// to the op's program like any kernel's inputs; its results are the op's
// outputs, or replace the variables.
func readOrUpdate(inst *instance, ctx *C.TF_OpKernelContext, st *C.TF_Status, call *varCall, ins *[]input) error {
	k, v := inst.k, inst.k.Variables
	lock := v.Lock || inst.attrs.Bool("use_locking")
	holder, err := lockVariables(ctx, st, k.Op, lock, v.Sparse, v.N)
	if err != nil {
		return err
	}
	defer C.metalplug_release_variables(holder)
	var sig []byte
	for i := range k.Inputs {
		in, err := fetchInput(ctx, st, k, i, lock, v.Sparse)
		if err != nil {
			return err
		}
		*ins = append(*ins, in)
		sig = appendSignature(sig, in.typ)
	}
	c, err := inst.program(sig, *ins, nil, nil)
	if err != nil {
		return err
	}
	args := make([]unsafe.Pointer, len(*ins))
	for i, in := range *ins {
		args[i] = in.data
	}
	elements := 0
	for _, t := range c.outs {
		elements += t.Shape.Size()
	}
	if v.Access == lower.VarUpdate {
		if c.exe == nil || elements == 0 {
			return nil // nothing changes
		}
		dsts := make([]unsafe.Pointer, v.N)
		for i := range dsts {
			dsts[i] = (*ins)[i].data
		}
		return runInPlace(call.s, c, args, dsts, k.Op)
	}
	results := make([]unsafe.Pointer, len(c.outs))
	for i := range c.outs {
		if results[i], err = c.allocateOutput(ctx, st, k.Op, i); err != nil {
			return err
		}
	}
	if c.exe != nil && elements > 0 {
		driver.Execute(call.s, traceName(ctx, k.Op), c.exe, args, results)
	}
	return nil
}

// assignUpdate runs AssignAddVariableOp or AssignSubVariableOp through
// TF_AssignUpdateVariable, which copies the buffer first when a reader still
// holds it, then calls back goVarUpdate with the variable and the value.
func assignUpdate(inst *instance, ctx *C.TF_OpKernelContext, st *C.TF_Status, call *varCall) error {
	k := inst.k
	// TF_AssignUpdateVariable aborts the process when the variable does not
	// exist: look it up first, under its lock, to fail the kernel instead.
	// The tensors are let go at once: one still held would make TensorFlow
	// copy the variable before every update.
	holder, err := lockVariables(ctx, st, k.Op, true, false, 1)
	if err != nil {
		return err
	}
	v, err := fetchInput(ctx, st, k, 0, true, false)
	C.metalplug_release_variables(holder)
	if err != nil {
		return err
	}
	C.TF_DeleteTensor(v.t)
	value, err := fetchInput(ctx, st, k, 1, false, false)
	if err != nil {
		return err
	}
	C.TF_DeleteTensor(value.t)
	// The lowering checks the types, as it will in the callback.
	if _, err := inst.program(appendSignature(appendSignature(nil, v.typ), value.typ), []input{v, value}, nil, nil); err != nil {
		return err
	}
	C.metalplug_assign_update_variable(ctx, st)
	if err := statusErr(st, k.Op, "updating"); err != nil {
		return err
	}
	if call.err == nil && !call.updated && v.typ.Shape.Size() > 0 {
		return fmt.Errorf("%s: TensorFlow did not update variable %v with value %v", k.Op, v.typ, value.typ)
	}
	return nil
}

// statusErr is what TensorFlow reported in st, keeping its class: a
// variable that is missing, uninitialized or of the wrong shape is the
// caller's to fix.
func statusErr(st *C.TF_Status, op, what string) error {
	code := C.TF_GetCode(st)
	if code == C.TF_OK {
		return nil
	}
	err := fmt.Errorf("%s: %s: %s", op, what, C.GoString(C.TF_Message(st)))
	switch code {
	case C.TF_INVALID_ARGUMENT, C.TF_FAILED_PRECONDITION, C.TF_NOT_FOUND, C.TF_OUT_OF_RANGE:
		return status.Invalid(err)
	case C.TF_RESOURCE_EXHAUSTED:
		return status.Exhausted(err)
	}
	return err
}

// tensorTypeOf reads a tensor's dtype and shape.
func tensorTypeOf(t *C.TF_Tensor) (ir.TensorType, bool) {
	d, ok := tfType(C.TF_TensorType(t))
	if !ok || d == ir.C64 {
		return ir.TensorType{}, false
	}
	shape := make(ir.Shape, int(C.TF_NumDims(t)))
	for j := range shape {
		shape[j] = int(C.TF_Dim(t, C.int(j)))
	}
	return ir.TensorType{DType: d, Shape: shape}, true
}

// fetchInput fetches input i of a variable op: the variable's tensor for
// the leading resource inputs (lockHeld says whether the caller holds their
// locks), the plain input otherwise.
func fetchInput(ctx *C.TF_OpKernelContext, st *C.TF_Status, k *lower.Kernel, i int, lockHeld, sparse bool) (input, error) {
	variable := i < k.Variables.N
	var t *C.TF_Tensor
	if variable {
		t = C.metalplug_variable_tensor(ctx, C.int(i), C.bool(lockHeld), C.bool(sparse), st)
	} else {
		C.TF_GetInput(ctx, C.int(i), &t, st)
	}
	if C.TF_GetCode(st) != C.TF_OK {
		if t != nil {
			C.TF_DeleteTensor(t)
		}
		return input{}, fmt.Errorf("%s: input %s: %s", k.Op, k.Inputs[i], C.GoString(C.TF_Message(st)))
	}
	if t == nil {
		return input{}, status.Invalidf("%s: variable %s does not exist: it was never assigned, or was deleted", k.Op, k.Inputs[i])
	}
	typ, ok := tensorTypeOf(t)
	if !ok {
		C.TF_DeleteTensor(t)
		return input{}, status.Invalidf("%s: input %s has dtype %d, which this device does not support", k.Op, k.Inputs[i], int(C.TF_TensorType(t)))
	}
	data := C.TF_TensorData(t)
	if variable && data == nil && typ.Shape.Size() > 0 {
		C.TF_DeleteTensor(t)
		return input{}, status.Invalidf("%s: variable %s (%v) is not initialized", k.Op, k.Inputs[i], typ)
	}
	return input{t: t, typ: typ, data: data}, nil
}

// lockVariables takes the locks of the first n inputs' variables the way
// TensorFlow's own kernels do (doLock false takes none).
func lockVariables(ctx *C.TF_OpKernelContext, st *C.TF_Status, op string, doLock, sparse bool, n int) (*C.TF_VariableInputLockHolder, error) {
	h := C.metalplug_lock_variables(ctx, C.bool(doLock), C.bool(sparse), C.int(n), st)
	if C.TF_GetCode(st) != C.TF_OK {
		C.metalplug_release_variables(h)
		return nil, fmt.Errorf("%s: locking the variables: %s", op, C.GoString(C.TF_Message(st)))
	}
	return h, nil
}

// goVarUpdate is the update callback of TF_AssignUpdateVariable: the
// op's program on (variable, value), written over the variable on the
// kernel's stream.
//
//export goVarUpdate
func goVarUpdate(ctx *C.TF_OpKernelContext, tensor, value *C.TF_Tensor) {
	var call *varCall
	defer C.TF_DeleteTensor(tensor)
	defer C.TF_DeleteTensor(value)
	defer boundary("goVarUpdate", failure{sink: func(err error) { failCallback(ctx, call, err) }})
	hook("goVarUpdate")
	call = callOf(ctx)
	call.updated = true
	vt, ok1 := tensorTypeOf(tensor)
	valt, ok2 := tensorTypeOf(value)
	if !ok1 || !ok2 || call.inst == nil {
		call.fail(fmt.Errorf("%s: cannot update a variable of dtype %d %v with a value of dtype %d %v", call.name(),
			int(C.TF_TensorType(tensor)), vt.Shape, int(C.TF_TensorType(value)), valt.Shape))
		return
	}
	if vt.Shape.Size() == 0 {
		return
	}
	dst := C.TF_TensorData(tensor)
	ins := []input{{typ: vt, data: dst}, {typ: valt, data: C.TF_TensorData(value)}}
	c, err := call.inst.program(appendSignature(appendSignature(nil, vt), valt), ins, nil, nil)
	if err != nil {
		call.fail(err)
		return
	}
	if err := runInPlace(call.s, c, []unsafe.Pointer{ins[0].data, ins[1].data}, []unsafe.Pointer{dst}, call.name()); err != nil {
		call.fail(err)
	}
}

// goVarCopy is the copy callback: TensorFlow asks for a device copy of a
// variable's buffer (copy-on-write, or on the first sparse access). It is
// enqueued on the kernel's stream, so it is ordered after the work that wrote
// the source and before the work that updates the copy.
//
//export goVarCopy
func goVarCopy(ctx *C.TF_OpKernelContext, src, dst *C.TF_Tensor) {
	var call *varCall
	defer C.TF_DeleteTensor(src)
	defer C.TF_DeleteTensor(dst)
	defer boundary("goVarCopy", failure{sink: func(err error) { failCallback(ctx, call, err) }})
	hook("goVarCopy")
	call = callOf(ctx)
	st, ok1 := tensorTypeOf(src)
	dt, ok2 := tensorTypeOf(dst)
	if !ok1 || !ok2 || st.DType != dt.DType || !st.Shape.Equal(dt.Shape) {
		call.fail(fmt.Errorf("%s: cannot copy a variable of dtype %d %v into dtype %d %v", call.name(),
			int(C.TF_TensorType(src)), st.Shape, int(C.TF_TensorType(dst)), dt.Shape))
		return
	}
	if n := st.Bytes(); n > 0 {
		call.s.Memcpy(C.TF_TensorData(dst), C.TF_TensorData(src), n)
	}
}

// callOf finds the running compute of ctx. A callback outside one (which
// TensorFlow never makes) still gets the kernel's stream.
func callOf(ctx *C.TF_OpKernelContext) *varCall {
	if c, ok := varCalls.Load(uintptr(unsafe.Pointer(ctx))); ok {
		return c.(*varCall)
	}
	st := C.TF_NewStatus()
	defer C.TF_DeleteStatus(st)
	s, err := kernelStream(ctx, st)
	if err != nil {
		panic("a variable callback outside a kernel: " + err.Error())
	}
	return &varCall{s: s}
}

// failCallback hands a callback's failure to the kernel that made
// TensorFlow call it, or fails the kernel's context when there is none.
func failCallback(ctx *C.TF_OpKernelContext, call *varCall, err error) {
	if call != nil {
		call.fail(fmt.Errorf("%s: %w", call.name(), err))
		return
	}
	failKernel(ctx, err)
}

func (c *varCall) name() string {
	if c.inst == nil {
		return "variable update"
	}
	return c.inst.k.Op
}

// tempAlign keeps each result in the temporary buffer aligned for any dtype
// and any driver.
const tempAlign = 256

// runInPlace executes c with args into a temporary device buffer, then
// copies result i over dsts[i] on the same stream, and frees the buffer from
// a host callback once the copies have run. The stream's order makes the
// update atomic with respect to all other work on it.
func runInPlace(s driver.Stream, c *compiled, args, dsts []unsafe.Pointer, op string) error {
	if len(dsts) != len(c.outs) {
		return fmt.Errorf("%s: %d destinations for %d results", op, len(dsts), len(c.outs))
	}
	offsets := make([]int, len(c.outs))
	total := 0
	for i, t := range c.outs {
		offsets[i] = total
		total += (t.Bytes() + tempAlign - 1) / tempAlign * tempAlign
	}
	tmp, err := state.drv.Allocate(total)
	if err != nil {
		return status.Exhausted(fmt.Errorf("%s: allocating %d bytes for the update: %v", op, total, err))
	}
	results := make([]unsafe.Pointer, len(c.outs))
	for i := range results {
		results[i] = unsafe.Add(tmp, offsets[i])
	}
	s.Execute(c.exe, args, results)
	for i, t := range c.outs {
		s.Memcpy(dsts[i], results[i], t.Bytes())
	}
	s.HostCallback(func() error { return state.drv.Free(tmp) })
	return nil
}

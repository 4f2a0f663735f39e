package tf

/*
#include "variables.h"
*/
import "C"

import (
	"fmt"
	"runtime/cgo"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/metalplug/metalplug/backend/cache"
	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/status"
	"github.com/metalplug/metalplug/plugin/tf/lower"
)

// The device's own resource-variable and optimizer kernels, built on
// tensorflow/c/kernels_experimental.h. Without them TensorFlow updates
// variables on this device with its DEVICE_DEFAULT kernels, which compute on
// the host thread straight from device memory and so do not order themselves
// behind our streams (plugin.go runs synchronously then). With them every
// read and write of a variable's buffer is work on the kernel's stream, and
// the device may run asynchronously.
//
// The API is looked up at run time (metalplug_lookup): releases that declare
// it without exporting it must still load the plugin, and there nothing here
// is registered.

// varKind numbers the variable kernels; each has a slot of the ordinary
// kernels' trampolines (kernels.go), which goKernelCreate maps back to it.
type varKind int

const (
	varAssign varKind = iota
	varAssignAdd
	varAssignSub
	varApplyGradientDescent
	varApplyMomentum
	varApplyKerasMomentum
	varApplyAdam
	varApplyRMSProp
	varGather
	varScatterUpdate
	numVarKinds
)

// varOp describes one registered op.
type varOp struct {
	op       string
	typeAttr string // the dtype attribute: "dtype" or "T"
	dtypes   []ir.DType
	indexed  bool     // also registered per Tindices
	inputs   []string // the op's inputs in order
	// vars is the number of leading resource inputs an optimizer updates in
	// place (var and its slots); full names the other inputs of the
	// variable's shape; every remaining input is a scalar.
	vars int
	full []string
}

// The dtypes a variable on the device can have: TensorFlow's DEVICE_DEFAULT
// VarHandleOp (like its GPU one) takes the GPU types and int64, not int32 or
// uint8; of those, the ones the device computes with. TensorFlow's GPU
// registers the Assign ops for the same set (AssignAdd and AssignSub without
// bool).
var (
	variableDTypes   = []ir.DType{ir.F32, ir.F16, ir.BF16, ir.I64, ir.Bool}
	arithmeticDTypes = []ir.DType{ir.F32, ir.F16, ir.BF16, ir.I64}
)

var varOps = [numVarKinds]varOp{
	varAssign:    {op: "AssignVariableOp", typeAttr: "dtype", dtypes: variableDTypes, inputs: []string{"resource", "value"}},
	varAssignAdd: {op: "AssignAddVariableOp", typeAttr: "dtype", dtypes: arithmeticDTypes, inputs: []string{"resource", "value"}},
	varAssignSub: {op: "AssignSubVariableOp", typeAttr: "dtype", dtypes: arithmeticDTypes, inputs: []string{"resource", "value"}},
	varApplyGradientDescent: {op: "ResourceApplyGradientDescent", typeAttr: "T", dtypes: lower.Floats,
		inputs: lower.OptimizerInputs["ResourceApplyGradientDescent"], vars: 1, full: []string{"delta"}},
	varApplyMomentum: {op: "ResourceApplyMomentum", typeAttr: "T", dtypes: lower.Floats,
		inputs: lower.OptimizerInputs["ResourceApplyMomentum"], vars: 2, full: []string{"grad"}},
	varApplyKerasMomentum: {op: "ResourceApplyKerasMomentum", typeAttr: "T", dtypes: lower.Floats,
		inputs: lower.OptimizerInputs["ResourceApplyKerasMomentum"], vars: 2, full: []string{"grad"}},
	varApplyAdam: {op: "ResourceApplyAdam", typeAttr: "T", dtypes: lower.Floats,
		inputs: lower.OptimizerInputs["ResourceApplyAdam"], vars: 3, full: []string{"grad"}},
	varApplyRMSProp: {op: "ResourceApplyRMSProp", typeAttr: "T", dtypes: lower.Floats,
		inputs: lower.OptimizerInputs["ResourceApplyRMSProp"], vars: 3, full: []string{"grad"}},
	varGather:        {op: "ResourceGather", typeAttr: "dtype", dtypes: variableDTypes, indexed: true, inputs: []string{"resource", "indices"}},
	varScatterUpdate: {op: "ResourceScatterUpdate", typeAttr: "dtype", dtypes: variableDTypes, indexed: true, inputs: []string{"resource", "indices", "updates"}},
}

// hostInputs are the inputs TensorFlow keeps in host memory: the resource
// handles, as TensorFlow's GPU kernels declare them.
func (o *varOp) hostInputs() []string {
	if o.vars > 0 {
		return o.inputs[:o.vars]
	}
	return o.inputs[:1]
}

func (o *varOp) isFull(i int) bool {
	if i < o.vars {
		return true
	}
	for _, f := range o.full {
		if o.inputs[i] == f {
			return true
		}
	}
	return false
}

// registerVariableKernels registers the variable and optimizer kernels for
// deviceType where this TensorFlow exports kernels_experimental.h, and
// nothing elsewhere. It returns how many registrations it made.
func registerVariableKernels(deviceType string) (int, error) {
	if !resourceVariableAPI() || C.metalplug_var_api_load() == 0 {
		return 0, nil
	}
	dev := C.CString(deviceType)
	defer C.free(unsafe.Pointer(dev))
	st := C.TF_NewStatus()
	defer C.TF_DeleteStatus(st)
	count := 0
	for kind := range numVarKinds {
		o := &varOps[kind]
		n, err := newSlot(slot{v: o, kind: kind})
		if err != nil {
			return count, err
		}
		indices := []ir.DType{ir.Invalid}
		if o.indexed {
			indices = lower.Indices
		}
		for _, dt := range o.dtypes {
			for _, it := range indices {
				if err := registerVarKernel(o, n, dev, dt, it, st); err != nil {
					return count, err
				}
				count++
			}
		}
	}
	return count, nil
}

func registerVarKernel(o *varOp, n int, dev *C.char, dt, index ir.DType, st *C.TF_Status) error {
	op := C.CString(o.op)
	defer C.free(unsafe.Pointer(op))
	b := C.metalplug_new_kernel_builder(op, dev, C.int(n))
	if b == nil {
		return fmt.Errorf("%s: no kernel builder for slot %d", o.op, n)
	}
	constrain := func(attr string, d ir.DType) error {
		a := C.CString(attr)
		defer C.free(unsafe.Pointer(a))
		C.TF_KernelBuilder_TypeConstraint(b, a, C.TF_DataType(lower.ToTF(d)), st)
		if C.TF_GetCode(st) != C.TF_OK {
			C.TF_DeleteKernelBuilder(b)
			return fmt.Errorf("%s: type constraint %s=%v: %s", o.op, attr, d, C.GoString(C.TF_Message(st)))
		}
		return nil
	}
	if err := constrain(o.typeAttr, dt); err != nil {
		return err
	}
	if index != ir.Invalid {
		if err := constrain("Tindices", index); err != nil {
			return err
		}
	}
	for _, h := range o.hostInputs() {
		arg := C.CString(h)
		C.TF_KernelBuilder_HostMemory(b, arg)
		C.free(unsafe.Pointer(arg))
	}
	name := C.CString(o.op + "_metalplug")
	defer C.free(unsafe.Pointer(name))
	C.TF_RegisterKernelBuilder(name, b, st)
	if C.TF_GetCode(st) != C.TF_OK {
		return fmt.Errorf("%s %s=%v: %s", o.op, o.typeAttr, dt, C.GoString(C.TF_Message(st)))
	}
	return nil
}

// varKernel is one constructed kernel: the op and its attributes.
type varKernel struct {
	kind          varKind
	runs          *atomic.Int64 // this op's execution counter (metalplug_op_counts)
	dtype         ir.DType
	useLocking    bool
	nesterov      bool
	validateShape bool
	batchDims     int
}

func (k *varKernel) op() *varOp { return &varOps[k.kind] }

// newVarKernel constructs a variable kernel of kind for goKernelCreate,
// which recovers its panics.
func newVarKernel(ctx *C.TF_OpKernelConstruction, kind varKind) C.uintptr_t {
	st := C.TF_NewStatus()
	defer C.TF_DeleteStatus(st)
	if kind < 0 || kind >= numVarKinds {
		panic(fmt.Sprintf("variable kernel kind %d out of range", kind))
	}
	k := &varKernel{kind: kind}
	k.runs = opCounter(k.op().op)
	if err := k.readAttrs(ctx, st); err != nil {
		failConstruction(ctx, status.Invalidf("%s: %v", k.op().op, err))
		return 0
	}
	return C.uintptr_t(cgo.NewHandle(k))
}

func (k *varKernel) readAttrs(ctx *C.TF_OpKernelConstruction, st *C.TF_Status) error {
	o := k.op()
	a := lower.NewAttrs()
	specs := []lower.AttrSpec{
		{Name: o.typeAttr, Kind: lower.AttrType},
		{Name: "use_locking", Kind: lower.AttrBool, Optional: true},
		{Name: "use_nesterov", Kind: lower.AttrBool, Optional: true},
		{Name: "validate_shape", Kind: lower.AttrBool, Optional: true},
		{Name: "batch_dims", Kind: lower.AttrInt, Optional: true},
	}
	for _, spec := range specs {
		name := C.CString(spec.Name)
		err := readAttr(ctx, a, spec, name, st)
		C.free(unsafe.Pointer(name))
		if err != nil {
			return err
		}
	}
	k.dtype = a.Types[o.typeAttr]
	k.useLocking = a.Bool("use_locking")
	k.nesterov = a.Bool("use_nesterov")
	k.validateShape = a.Bool("validate_shape")
	k.batchDims = int(a.Int("batch_dims", 0))
	return nil
}

// varCall is one running compute: what the callbacks TensorFlow makes from
// inside the experimental API need, and what they report back.
type varCall struct {
	k       *varKernel
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

// run computes the kernel for goKernelCompute, which recovers its panics
// (naming goKernelCompute and the op).
func (k *varKernel) run(ctx *C.TF_OpKernelContext) {
	key := uintptr(unsafe.Pointer(ctx))
	defer varCalls.Delete(key)
	st := C.TF_NewStatus()
	defer C.TF_DeleteStatus(st)
	o := k.op()
	sp := C.TF_GetStream(ctx, st)
	if C.TF_GetCode(st) != C.TF_OK {
		failKernel(ctx, fmt.Errorf("%s: no stream: %s", o.op, C.GoString(C.TF_Message(st))))
		return
	}
	call := &varCall{k: k, s: streamOf(C.uintptr_t(uintptr(unsafe.Pointer(sp))))}
	varCalls.Store(key, call)
	err := k.compute(ctx, st, call)
	if err == nil {
		err = call.err
	}
	if err == nil && state.synchronous {
		if serr := call.s.Synchronize(); serr != nil {
			err = fmt.Errorf("%s: %v", o.op, serr)
		}
	}
	if err != nil {
		failKernel(ctx, err)
		return
	}
	k.runs.Add(1)
}

func (k *varKernel) compute(ctx *C.TF_OpKernelContext, st *C.TF_Status, call *varCall) error {
	o := k.op()
	if n := int(C.TF_NumInputs(ctx)); n != len(o.inputs) {
		return fmt.Errorf("%s: %d inputs, want %d (%s)", o.op, n, len(o.inputs), strings.Join(o.inputs, ", "))
	}
	switch k.kind {
	case varAssign:
		C.metalplug_assign_variable(ctx, C.bool(k.validateShape), st)
		return statusErr(st, o.op, "assigning")
	case varAssignAdd, varAssignSub:
		return k.assignUpdate(ctx, st, call)
	case varGather:
		return k.gather(ctx, st, call)
	case varScatterUpdate:
		return k.scatterUpdate(ctx, st, call)
	}
	return k.applyOptimizer(ctx, st, call)
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

// heldTensors are the inputs a variable kernel holds for the duration of a
// compute (the kernel glue's input type).
type heldTensors []input

func (h heldTensors) release() {
	for _, v := range h {
		if v.t != nil {
			C.TF_DeleteTensor(v.t)
		}
	}
}

func (h heldTensors) describe() string {
	parts := make([]string, len(h))
	for i, v := range h {
		parts[i] = v.typ.String()
	}
	return strings.Join(parts, ", ")
}

// input fetches input i: the variable's tensor for the first vars inputs
// (under the locks the caller holds), the plain input otherwise.
func (k *varKernel) input(ctx *C.TF_OpKernelContext, st *C.TF_Status, i int, variable, lockHeld, sparse bool) (input, error) {
	o := k.op()
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
		return input{}, fmt.Errorf("%s: input %s: %s", o.op, o.inputs[i], C.GoString(C.TF_Message(st)))
	}
	if t == nil {
		return input{}, status.Invalidf("%s: variable %s does not exist: it was never assigned, or was deleted", o.op, o.inputs[i])
	}
	typ, ok := tensorTypeOf(t)
	if !ok {
		C.TF_DeleteTensor(t)
		return input{}, status.Invalidf("%s: input %s has dtype %d, which this device does not support", o.op, o.inputs[i], int(C.TF_TensorType(t)))
	}
	data := C.TF_TensorData(t)
	if variable && data == nil && typ.Shape.Size() > 0 {
		C.TF_DeleteTensor(t)
		return input{}, status.Invalidf("%s: variable %s (%v) is not initialized", o.op, o.inputs[i], typ)
	}
	return input{t: t, typ: typ, data: data}, nil
}

// lock takes the variables' locks the way TensorFlow's own kernels do.
func (k *varKernel) lock(ctx *C.TF_OpKernelContext, st *C.TF_Status, exclusive, sparse bool, n int) (*C.TF_VariableInputLockHolder, error) {
	h := C.metalplug_lock_variables(ctx, C.bool(exclusive), C.bool(sparse), C.int(n), st)
	if C.TF_GetCode(st) != C.TF_OK {
		C.metalplug_release_variables(h)
		return nil, fmt.Errorf("%s: locking the variables: %s", k.op().op, C.GoString(C.TF_Message(st)))
	}
	return h, nil
}

// applyOptimizer runs a dense ResourceApply* op: the new variable and slots
// are computed into a temporary buffer (a program's results may not overlap
// its arguments) and copied back over the old ones on the same stream.
func (k *varKernel) applyOptimizer(ctx *C.TF_OpKernelContext, st *C.TF_Status, call *varCall) error {
	o := k.op()
	holder, err := k.lock(ctx, st, k.useLocking, false, o.vars)
	if err != nil {
		return err
	}
	defer C.metalplug_release_variables(holder)
	var ins heldTensors
	defer func() { ins.release() }()
	for i := range o.inputs {
		in, err := k.input(ctx, st, i, i < o.vars, k.useLocking, false)
		if err != nil {
			return err
		}
		ins = append(ins, in)
	}
	shape := ins[0].typ.Shape
	for i, in := range ins {
		switch {
		case in.typ.DType != k.dtype:
			return status.Invalidf("%s: %s is %v but T is %v (inputs %s)", o.op, o.inputs[i], in.typ, k.dtype, ins.describe())
		case o.isFull(i) && !in.typ.Shape.Equal(shape):
			return status.Invalidf("%s: %s %v and var %v do not have the same shape (inputs %s)", o.op, o.inputs[i], in.typ, ins[0].typ, ins.describe())
		case !o.isFull(i) && in.typ.Shape.Rank() != 0:
			return status.Invalidf("%s: %s is not a scalar: %v (inputs %s)", o.op, o.inputs[i], in.typ, ins.describe())
		}
	}
	if shape.Size() == 0 {
		return nil
	}
	types := make([]ir.TensorType, len(ins))
	args := make([]unsafe.Pointer, len(ins))
	for i, in := range ins {
		types[i], args[i] = in.typ, in.data
	}
	key := fmt.Sprintf("%s|%v|%t", o.op, types, k.nesterov)
	c, err := varProgram(key, func() (*ir.Program, error) { return lower.Optimizer(o.op, types, k.nesterov) })
	if err != nil {
		return fmt.Errorf("%s: inputs %s: %v", o.op, ins.describe(), err)
	}
	dsts := make([]unsafe.Pointer, o.vars)
	for i := range dsts {
		dsts[i] = ins[i].data
	}
	return runInPlace(call.s, c, args, dsts, o.op)
}

// assignUpdate runs AssignAddVariableOp or AssignSubVariableOp through
// TF_AssignUpdateVariable, which copies the buffer first when a reader still
// holds it, then calls back goVarUpdate.
func (k *varKernel) assignUpdate(ctx *C.TF_OpKernelContext, st *C.TF_Status, call *varCall) error {
	o := k.op()
	// TF_AssignUpdateVariable aborts the process when the variable does not
	// exist: look it up first, under its lock, to fail the kernel instead.
	holder, err := k.lock(ctx, st, true, false, 1)
	if err != nil {
		return err
	}
	v, err := k.input(ctx, st, 0, true, true, false)
	C.metalplug_release_variables(holder)
	if err != nil {
		return err
	}
	vt := v.typ
	C.TF_DeleteTensor(v.t)
	value, err := k.input(ctx, st, 1, false, false, false)
	if err != nil {
		return err
	}
	valt := value.typ
	C.TF_DeleteTensor(value.t)
	if vt.DType != valt.DType || vt.DType != k.dtype || !vt.Shape.Equal(valt.Shape) {
		return status.Invalidf("%s: cannot update variable %v with value %v (dtype %v); shapes and dtypes must be equal", o.op, vt, valt, k.dtype)
	}
	op := 0
	if k.kind == varAssignSub {
		op = 1
	}
	C.metalplug_assign_update_variable(ctx, C.int(op), st)
	if err := statusErr(st, o.op, "updating"); err != nil {
		return err
	}
	if call.err == nil && !call.updated && vt.Shape.Size() > 0 {
		return fmt.Errorf("%s: TensorFlow did not update variable %v with value %v", o.op, vt, valt)
	}
	return nil
}

//export goVarUpdate
func goVarUpdate(ctx *C.TF_OpKernelContext, tensor, value *C.TF_Tensor, op C.int) {
	var call *varCall
	defer C.TF_DeleteTensor(tensor)
	defer C.TF_DeleteTensor(value)
	defer boundary("goVarUpdate", failure{sink: func(err error) { failCallback(ctx, call, err) }})
	hook("goVarUpdate")
	call = callOf(ctx)
	call.updated = true
	vt, ok1 := tensorTypeOf(tensor)
	valt, ok2 := tensorTypeOf(value)
	if !ok1 || !ok2 || vt.DType != valt.DType || !vt.Shape.Equal(valt.Shape) {
		call.fail(fmt.Errorf("%s: cannot update variable of dtype %d %v with value of dtype %d %v", call.name(),
			int(C.TF_TensorType(tensor)), vt.Shape, int(C.TF_TensorType(value)), valt.Shape))
		return
	}
	if vt.Shape.Size() == 0 {
		return
	}
	bop, what := ir.OpAdd, "add"
	if op == 1 {
		bop, what = ir.OpSub, "sub"
	}
	key := fmt.Sprintf("update|%s|%v", what, vt)
	c, err := varProgram(key, func() (*ir.Program, error) {
		b := ir.NewBuilder()
		x, y := b.Parameter(vt), b.Parameter(valt)
		return b.Build(b.Binary(bop, x, y))
	})
	if err != nil {
		call.fail(fmt.Errorf("%s: variable %v, value %v: %v", call.name(), vt, valt, err))
		return
	}
	dst := C.TF_TensorData(tensor)
	if err := runInPlace(call.s, c, []unsafe.Pointer{dst, C.TF_TensorData(value)}, []unsafe.Pointer{dst}, call.name()); err != nil {
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
	sp := C.TF_GetStream(ctx, st)
	if C.TF_GetCode(st) != C.TF_OK {
		panic("a variable callback outside a kernel, and no stream: " + C.GoString(C.TF_Message(st)))
	}
	return &varCall{s: streamOf(C.uintptr_t(uintptr(unsafe.Pointer(sp))))}
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
	if c.k == nil {
		return "variable update"
	}
	return c.k.op().op
}

// gather runs ResourceGather as GatherV2 along axis batch_dims, holding the
// variable's lock in shared mode as TensorFlow's kernel does. Out-of-range
// indices give zeros, as on TensorFlow's GPU.
func (k *varKernel) gather(ctx *C.TF_OpKernelContext, st *C.TF_Status, call *varCall) error {
	o := k.op()
	holder, err := k.lock(ctx, st, false, true, 1)
	if err != nil {
		return err
	}
	defer C.metalplug_release_variables(holder)
	var ins heldTensors
	defer func() { ins.release() }()
	for i := range o.inputs {
		in, err := k.input(ctx, st, i, i == 0, false, true)
		if err != nil {
			return err
		}
		ins = append(ins, in)
	}
	params, indices := ins[0].typ, ins[1].typ
	if params.DType != k.dtype || params.Shape.Rank() < 1 || k.batchDims < 0 || k.batchDims > params.Shape.Rank()-1 {
		return status.Invalidf("%s: variable %v (dtype attribute %v) must be at least 1-dimensional with more dims than batch_dims %d (indices %v)",
			o.op, params, k.dtype, k.batchDims, indices)
	}
	gk, ok := lower.Lookup("GatherV2")
	if !ok {
		return fmt.Errorf("%s: the GatherV2 lowering is missing", o.op)
	}
	axis := ir.TensorType{DType: ir.I32}
	key := fmt.Sprintf("%s|%v|%v|%d", o.op, params, indices, k.batchDims)
	c, err := varProgram(key, func() (*ir.Program, error) {
		attrs := lower.NewAttrs()
		attrs.Ints["batch_dims"] = []int64{int64(k.batchDims)}
		l, err := gk.Build(attrs, []ir.TensorType{params, indices, axis}, map[int][]int64{2: {int64(k.batchDims)}}, nil)
		if err != nil {
			return nil, err
		}
		return l.Program, nil
	})
	if err != nil {
		return fmt.Errorf("%s: variable %v, indices %v, batch_dims %d: %v", o.op, params, indices, k.batchDims, err)
	}
	out := c.outs[0]
	data, err := allocateOutput(ctx, st, o.op, 0, out)
	if err != nil {
		return err
	}
	if out.Shape.Size() > 0 {
		call.s.Execute(c.exe, []unsafe.Pointer{ins[0].data, ins[1].data}, []unsafe.Pointer{data})
	}
	return nil
}

// scatterUpdate runs ResourceScatterUpdate: variable[indices, ...] = updates,
// holding the variable's lock exclusively. Out-of-range indices are skipped,
// as on TensorFlow's GPU; where indices repeat, the last update wins.
func (k *varKernel) scatterUpdate(ctx *C.TF_OpKernelContext, st *C.TF_Status, call *varCall) error {
	o := k.op()
	holder, err := k.lock(ctx, st, true, true, 1)
	if err != nil {
		return err
	}
	defer C.metalplug_release_variables(holder)
	var ins heldTensors
	defer func() { ins.release() }()
	for i := range o.inputs {
		in, err := k.input(ctx, st, i, i == 0, true, true)
		if err != nil {
			return err
		}
		ins = append(ins, in)
	}
	vt, it, ut := ins[0].typ, ins[1].typ, ins[2].typ
	if vt.DType != k.dtype || ut.DType != vt.DType || vt.Shape.Rank() < 1 {
		return status.Invalidf("%s: variable %v and updates %v must both be %v, the variable at least 1-dimensional (indices %v)", o.op, vt, ut, k.dtype, it)
	}
	want := append(it.Shape.Clone(), vt.Shape[1:]...)
	if !ut.Shape.Equal(want) && ut.Shape.Rank() != 0 {
		return status.Invalidf("%s: updates %v must have shape %v (indices %v, variable %v) or be a scalar", o.op, ut, want, it, vt)
	}
	if it.Shape.Size() == 0 || vt.Shape.Size() == 0 {
		return nil
	}
	key := fmt.Sprintf("%s|%v|%v|%v", o.op, vt, it, ut)
	c, err := varProgram(key, func() (*ir.Program, error) {
		b := ir.NewBuilder()
		v, idx, u := b.Parameter(vt), b.Parameter(it), b.Parameter(ut)
		if ut.Shape.Rank() == 0 && len(want) > 0 {
			u = b.BroadcastInDim(u, want, nil)
		}
		r := it.Shape.Rank()
		window := make([]int, 0, len(want)-r)
		for d := r; d < len(want); d++ {
			window = append(window, d)
		}
		return b.Build(b.Scatter(v, idx, u, ir.ScatterDims{UpdateWindowDims: window, InsertedWindowDims: []int{0},
			ScatterDimsToOperandDims: []int{0}, IndexVectorDim: r, Kind: ir.ScatterReplace}))
	})
	if err != nil {
		return fmt.Errorf("%s: variable %v, indices %v, updates %v: %v", o.op, vt, it, ut, err)
	}
	return runInPlace(call.s, c, []unsafe.Pointer{ins[0].data, ins[1].data, ins[2].data}, []unsafe.Pointer{ins[0].data}, o.op)
}

// varPrograms holds the variable kernels' programs by op, types and
// attributes; bounded like every program cache.
var varPrograms = cache.New[string, *compiled](programCacheSize)

// varProgram finds or builds and compiles the program for key.
func varProgram(key string, build func() (*ir.Program, error)) (*compiled, error) {
	if c, ok := varPrograms.Get(key); ok {
		return c, nil
	}
	p, err := build()
	if err != nil {
		return nil, err
	}
	exe, err := state.drv.Compile(p)
	if err != nil {
		return nil, err
	}
	return varPrograms.Add(key, &compiled{prog: p, exe: exe, outs: p.ResultTypes()}), nil
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

package tf

/*
#include "plugin.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"runtime/cgo"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/metalplug/metalplug/backend/cache"
	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/stats"
	"github.com/metalplug/metalplug/backend/status"
	"github.com/metalplug/metalplug/plugin/tf/lower"
)

// slots maps a C create-function slot to the kernel it constructs.
var slots []*lower.Kernel

// newSlot appends k and returns its number.
func newSlot(k *lower.Kernel) (int, error) {
	if len(slots) >= C.METALPLUG_KERNEL_SLOTS {
		return 0, fmt.Errorf("more than %d kernel slots: raise METALPLUG_KERNEL_SLOTS", C.METALPLUG_KERNEL_SLOTS)
	}
	slots = append(slots, k)
	return len(slots) - 1, nil
}

//export TF_InitKernel
func TF_InitKernel() { export("TF_InitKernel", failure{}, initKernels) }

func initKernels() error {
	if state.drv == nil {
		return nil // declined: register nothing, so nothing can be placed here
	}
	if err := registerClusterOp(); err != nil {
		logf("%v: the graph pass forms no clusters", err)
	} else {
		clusterOpDefined.Store(true)
	}
	n, err := registerKernels(DeviceType())
	if err != nil {
		return fmt.Errorf("kernel registration: %w", err)
	}
	if debug() {
		logf("registered %d kernels for %s", n, DeviceType())
	}
	return nil
}

func registerKernels(deviceType string) (int, error) {
	dev := C.CString(deviceType)
	defer C.free(unsafe.Pointer(dev))
	st := C.TF_NewStatus()
	defer C.TF_DeleteStatus(st)
	count := 0
	for _, k := range lower.Kernels() {
		if k.Variables.Access != lower.VarNone && !variableAPI() {
			continue // TensorFlow's own variable kernels run (variables.go)
		}
		if k.Op == lower.ClusterOp && !clusterOpDefined.Load() {
			continue
		}
		slot, err := newSlot(k)
		if err != nil {
			return count, err
		}
		op := C.CString(k.Op)
		for _, combo := range k.Combinations() {
			b := C.metalplug_new_kernel_builder(op, dev, C.int(slot))
			for _, c := range k.Constraints {
				attr := C.CString(c.Attr)
				C.TF_KernelBuilder_TypeConstraint(b, attr, C.TF_DataType(lower.ToTF(combo[c.Attr])), st)
				C.free(unsafe.Pointer(attr))
				if C.TF_GetCode(st) != C.TF_OK {
					C.free(unsafe.Pointer(op))
					return count, fmt.Errorf("%s: type constraint %s: %s", k.Op, c.Attr, C.GoString(C.TF_Message(st)))
				}
			}
			// Resource handles, like the inputs a lowering reads, are in
			// host memory, as TensorFlow's GPU kernels declare them.
			for _, h := range append(slices.Clone(k.Inputs[:k.Variables.N]), k.HostInputs...) {
				arg := C.CString(h)
				C.TF_KernelBuilder_HostMemory(b, arg)
				C.free(unsafe.Pointer(arg))
			}
			name := C.CString(k.Op + "_metalplug")
			C.TF_RegisterKernelBuilder(name, b, st)
			C.free(unsafe.Pointer(name))
			if C.TF_GetCode(st) != C.TF_OK {
				C.free(unsafe.Pointer(op))
				return count, fmt.Errorf("%s %v: %s", k.Op, combo, C.GoString(C.TF_Message(st)))
			}
			count++
		}
		C.free(unsafe.Pointer(op))
	}
	return count, nil
}

// clusterOpDefined is set once TensorFlow knows lower.ClusterOp: only then
// may the graph pass write cluster nodes.
var clusterOpDefined atomic.Bool

// registerClusterOp defines lower.ClusterOp in TensorFlow's op registry, so
// that graphs holding cluster nodes are valid.
func registerClusterOp() error {
	name := C.CString(lower.ClusterOp)
	defer C.free(unsafe.Pointer(name))
	b := C.TF_NewOpDefinitionBuilder(name)
	sig := lower.ClusterSignature
	for _, list := range []struct {
		specs []string
		add   func(*C.TF_OpDefinitionBuilder, *C.char)
	}{
		{sig.Attrs, func(b *C.TF_OpDefinitionBuilder, s *C.char) { C.TF_OpDefinitionBuilderAddAttr(b, s) }},
		{sig.Inputs, func(b *C.TF_OpDefinitionBuilder, s *C.char) { C.TF_OpDefinitionBuilderAddInput(b, s) }},
		{sig.Outputs, func(b *C.TF_OpDefinitionBuilder, s *C.char) { C.TF_OpDefinitionBuilderAddOutput(b, s) }},
	} {
		for _, spec := range list.specs {
			s := C.CString(spec)
			list.add(b, s)
			C.free(unsafe.Pointer(s))
		}
	}
	C.metalplug_unknown_shapes(b)
	st := C.TF_NewStatus()
	defer C.TF_DeleteStatus(st)
	C.TF_RegisterOpDefinition(b, st) // frees b
	if C.TF_GetCode(st) != C.TF_OK {
		return fmt.Errorf("defining %s: %s", lower.ClusterOp, C.GoString(C.TF_Message(st)))
	}
	return nil
}

// instance is one constructed kernel: an op node's attributes and the
// programs compiled for the input types it has seen.
// traceName is the name a kernel's run has in a trace: "node name:op
// type", as TensorFlow's own tracers name ops; "" when no trace is on, so
// that the name costs nothing then.
func traceName(ctx *C.TF_OpKernelContext, op string) string {
	if !driver.Tracing() {
		return ""
	}
	v := C.TF_GetOpKernelName(ctx)
	return C.GoStringN(v.data, C.int(v.len)) + ":" + op
}

type instance struct {
	k     *lower.Kernel
	attrs *lower.Attrs
	// traceOp is the op a trace names: the op, or a cluster's member ops
	// (lower.ClusterSummary).
	traceOp string
	runs    *atomic.Int64 // this op's execution counter (metalplug_op_counts)
	rng     rngState

	cache cache.Bytes[*compiled] // input signature (see compute) -> program, bounded
	// last is the program of the signature seen last and plan the input
	// plan of the input count seen last: a training loop repeats both, and
	// finds them without a lock or a question to the kernel's rules.
	last atomic.Pointer[lastProgram]
	plan atomic.Pointer[inputPlan]
}

type lastProgram struct {
	key string
	c   *compiled
}

// inputPlan says which inputs of a call with n inputs are host inputs and
// which the lowering reads (lower.Kernel's rules, asked once).
type inputPlan struct {
	n       int
	host    []bool
	anyHost bool
	read    []int
}

// inputPlan is the plan for calls with n inputs.
func (inst *instance) inputPlan(n int) *inputPlan {
	if p := inst.plan.Load(); p != nil && p.n == n {
		return p
	}
	p := &inputPlan{n: n, host: make([]bool, n), read: inst.k.ReadPositions(n)}
	for i := range n {
		p.host[i] = inst.k.IsHostInput(inst.attrs, i, n)
		p.anyHost = p.anyHost || p.host[i]
	}
	inst.plan.Store(p)
	return p
}

// programCacheSize bounds each kernel instance's programs (one per input
// signature it has seen): a model whose
// shapes keep changing compiles again what it has not seen lately, rather
// than hold every shape it ever saw.
const programCacheSize = 64

type compiled struct {
	prog *ir.Program
	exe  driver.Executable
	// forward[i] >= 0 means output i is input forward[i] unchanged: TensorFlow
	// shares the buffer rather than the device copying it.
	forward []int
	outs    []ir.TensorType
	outDims [][]C.int64_t // each output's dims as TF_AllocateOutput takes them
	// rng: the last two parameters are the random state, which the frontend
	// supplies on every call.
	rng bool
}

//export goKernelCreate
func goKernelCreate(ctx *C.TF_OpKernelConstruction, n C.int) C.uintptr_t {
	var k *lower.Kernel // named in the report of a panic once known
	return exportValue("goKernelCreate", failure{kc: ctx, detail: func() string { return kernelName(k) }}, 0,
		func() (C.uintptr_t, error) { return kernelCreate(ctx, n, &k) })
}

// kernelCreate makes the instance of slot n's kernel, for one node.
func kernelCreate(ctx *C.TF_OpKernelConstruction, n C.int, kp **lower.Kernel) (C.uintptr_t, error) {
	k := slots[n]
	*kp = k
	attrs, err := readAttrs(ctx, k)
	if err != nil {
		return 0, status.Invalidf("%s: %v", k.Op, err)
	}
	inst := &instance{k: k, attrs: attrs, traceOp: k.Op, runs: opCounter(k.Op), cache: cache.NewBytes[*compiled](programCacheSize)}
	if k.Op == lower.ClusterOp {
		inst.traceOp = k.Op + "(" + lower.ClusterSummary(attrs, debug()) + ")"
	}
	return C.uintptr_t(cgo.NewHandle(inst)), nil
}

//export goKernelDelete
func goKernelDelete(h C.uintptr_t) {
	export("goKernelDelete", failure{}, func() error { return destroyHandle(h) })
}

func readAttrs(ctx *C.TF_OpKernelConstruction, k *lower.Kernel) (*lower.Attrs, error) {
	a := lower.NewAttrs()
	st := C.TF_NewStatus()
	defer C.TF_DeleteStatus(st)
	for _, spec := range k.Attrs {
		name := C.CString(spec.Name)
		err := readAttr(ctx, a, spec, name, st)
		C.free(unsafe.Pointer(name))
		if err != nil {
			return nil, err
		}
	}
	return a, nil
}

func readAttr(ctx *C.TF_OpKernelConstruction, a *lower.Attrs, spec lower.AttrSpec, name *C.char, st *C.TF_Status) error {
	if !C.TF_OpKernelConstruction_HasAttr(ctx, name, st) {
		if spec.Optional {
			return nil
		}
		return fmt.Errorf("attribute %s is missing", spec.Name)
	}
	check := func() error {
		if C.TF_GetCode(st) != C.TF_OK {
			return fmt.Errorf("attribute %s: %s", spec.Name, C.GoString(C.TF_Message(st)))
		}
		return nil
	}
	switch spec.Kind {
	case lower.AttrType:
		var t C.TF_DataType
		C.TF_OpKernelConstruction_GetAttrType(ctx, name, &t, st)
		if err := check(); err != nil {
			return err
		}
		d, ok := lower.FromTF(int(t))
		if !ok {
			return fmt.Errorf("attribute %s: dtype %d is not supported on this device", spec.Name, int(t))
		}
		a.Types[spec.Name] = d
	case lower.AttrInt:
		var v C.int64_t
		C.TF_OpKernelConstruction_GetAttrInt64(ctx, name, &v, st)
		if err := check(); err != nil {
			return err
		}
		a.Ints[spec.Name] = []int64{int64(v)}
	case lower.AttrBool:
		var v C.TF_Bool
		C.TF_OpKernelConstruction_GetAttrBool(ctx, name, &v, st)
		if err := check(); err != nil {
			return err
		}
		a.Bools[spec.Name] = v != 0
	case lower.AttrFloat:
		var v C.float
		C.TF_OpKernelConstruction_GetAttrFloat(ctx, name, &v, st)
		if err := check(); err != nil {
			return err
		}
		a.Floats[spec.Name] = float32(v)
	case lower.AttrInts:
		var n, total C.int32_t
		C.TF_OpKernelConstruction_GetAttrSize(ctx, name, &n, &total, st)
		if err := check(); err != nil {
			return err
		}
		vals := make([]int64, max(int(n), 1))
		if n > 0 {
			C.TF_OpKernelConstruction_GetAttrInt64List(ctx, name, (*C.int64_t)(unsafe.Pointer(&vals[0])), n, st)
			if err := check(); err != nil {
				return err
			}
		}
		a.Ints[spec.Name] = vals[:n]
	case lower.AttrString:
		var n, total C.int32_t
		C.TF_OpKernelConstruction_GetAttrSize(ctx, name, &n, &total, st)
		if err := check(); err != nil {
			return err
		}
		buf := make([]byte, max(int(total), 1))
		C.TF_OpKernelConstruction_GetAttrString(ctx, name, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(total), st)
		if err := check(); err != nil {
			return err
		}
		a.Strings[spec.Name] = string(buf[:total])
	case lower.AttrFloats:
		var n, total C.int32_t
		C.TF_OpKernelConstruction_GetAttrSize(ctx, name, &n, &total, st)
		if err := check(); err != nil {
			return err
		}
		if n < 0 {
			return fmt.Errorf("attribute %s is not a list", spec.Name)
		}
		vals := make([]float32, max(int(n), 1))
		if n > 0 {
			C.TF_OpKernelConstruction_GetAttrFloatList(ctx, name, (*C.float)(unsafe.Pointer(&vals[0])), n, st)
			if err := check(); err != nil {
				return err
			}
		}
		a.FloatLists[spec.Name] = vals[:n]
	case lower.AttrStrings:
		var n, total C.int32_t
		C.TF_OpKernelConstruction_GetAttrSize(ctx, name, &n, &total, st)
		if err := check(); err != nil {
			return err
		}
		vals := []string{}
		if n > 0 {
			// TensorFlow writes pointers into storage: all three live in C
			// memory, so no Go pointer is stored by C.
			ptrs := (**C.char)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))
			lens := (*C.size_t)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof(C.size_t(0)))))
			storage := C.malloc(C.size_t(max(int(total), 1)))
			defer C.free(unsafe.Pointer(ptrs))
			defer C.free(unsafe.Pointer(lens))
			defer C.free(storage)
			C.TF_OpKernelConstruction_GetAttrStringList(ctx, name, ptrs, lens, C.int(n), storage, C.size_t(total), st)
			if err := check(); err != nil {
				return err
			}
			ps, ls := unsafe.Slice(ptrs, int(n)), unsafe.Slice(lens, int(n))
			for i := range ps {
				vals = append(vals, C.GoStringN(ps[i], C.int(ls[i])))
			}
		}
		a.StringLists[spec.Name] = vals
	default:
		return fmt.Errorf("attribute %s: kind %d cannot be read", spec.Name, spec.Kind)
	}
	return nil
}

// input is one kernel input as TensorFlow hands it over.
type input struct {
	t    *C.TF_Tensor
	typ  ir.TensorType
	data unsafe.Pointer
	// batch: t is deleted with the other inputs compute read, in one
	// call, not one by one.
	batch bool
}

// grow is *s resized to n, reallocated only when too small.
func grow[T any](s *[]T, n int) []T {
	if cap(*s) < n {
		*s = make([]T, n)
	}
	*s = (*s)[:n]
	return *s
}

// callScratch is what one call reads its inputs into and passes the driver,
// kept between calls (scratchPool) so that a kernel in a training loop
// allocates none of it.
type callScratch struct {
	raw  []C.metalplug_input
	ins  []input
	ptrs []unsafe.Pointer
}

var scratchPool = sync.Pool{New: func() any { return new(callScratch) }}

//export goKernelCompute
func goKernelCompute(h C.uintptr_t, ctx *C.TF_OpKernelContext) {
	var run computeCall // what a panic's report names
	export("goKernelCompute", failure{ctx: ctx, detail: run.detail}, func() error { return run.compute(h, ctx) })
}

// computeCall is one call of a kernel's compute: the instance and inputs
// it has got to, for the report of a panic.
type computeCall struct {
	inst *instance
	ins  []input
}

func (c *computeCall) detail() string { return instanceDetail(c.inst, c.ins) }

func (c *computeCall) compute(h C.uintptr_t, ctx *C.TF_OpKernelContext) error {
	sc := scratchPool.Get().(*callScratch)
	returned := false
	defer func() {
		// After a panic the scratch is dropped: boundary still describes
		// the inputs, and another call must not be handed it meanwhile.
		if returned {
			clear(c.ins)
			sc.ins = c.ins[:0]
			scratchPool.Put(sc)
		}
	}()
	defer func() {
		for _, in := range c.ins {
			if !in.batch {
				C.TF_DeleteTensor(in.t)
			}
		}
	}()
	c.inst = cgo.Handle(h).Value().(*instance)
	st := C.TF_NewStatus()
	defer C.TF_DeleteStatus(st)
	var err error
	if c.inst.k.Variables.Access != lower.VarNone {
		err = computeVariable(c.inst, ctx, st, &c.ins)
	} else {
		err = compute(c.inst, ctx, st, &c.ins, sc)
	}
	returned = true
	if err == nil {
		c.inst.runs.Add(1)
	}
	return err
}

func kernelName(k *lower.Kernel) string {
	if k == nil {
		return ""
	}
	return k.Op
}

// instanceDetail names a running kernel's op and inputs for a panic report.
func instanceDetail(inst *instance, ins []input) string {
	if inst == nil {
		return ""
	}
	return inst.k.Op + " with inputs " + describe(ins)
}

func describe(ins []input) string {
	parts := make([]string, len(ins))
	for i, in := range ins {
		parts[i] = in.typ.String()
	}
	return strings.Join(parts, ", ")
}

// tfType maps a TF_DataType to the IR. Beyond lower.FromTF it knows the
// types only some inputs carry: complex64 (FFT ops) and uint64 (the key and
// counter of stateless random ops, whose bits the IR holds as int64).
func tfType(t C.TF_DataType) (ir.DType, bool) {
	switch t {
	case C.TF_COMPLEX64:
		return ir.C64, true
	case C.TF_UINT64:
		return ir.I64, true
	}
	return lower.FromTF(int(t))
}

func irToTF(d ir.DType) C.TF_DataType {
	if d == ir.C64 {
		return C.TF_COMPLEX64
	}
	return C.TF_DataType(lower.ToTF(d))
}

func compute(inst *instance, ctx *C.TF_OpKernelContext, st *C.TF_Status, ins *[]input, sc *callScratch) error {
	k := inst.k
	n := int(C.TF_NumInputs(ctx))
	plan := inst.inputPlan(n)
	var host map[int][]int64
	if plan.anyHost {
		host = map[int][]int64{}
	}
	// The cache key is the input signature in bytes: dtype, rank, dims and
	// host values. Built in a stack buffer, it costs no allocation when the
	// signature has been seen before (the common case in a training loop).
	var keyBuf [256]byte
	key := keyBuf[:0]
	raw := grow(&sc.raw, n)
	if n > 0 {
		if i := int(C.metalplug_read_inputs(ctx, C.int(n), &raw[0], st)); i >= 0 {
			C.metalplug_delete_inputs(&raw[0], C.int(i))
			return status.Invalidf("%s: input %d: %s", k.Op, i, C.GoString(C.TF_Message(st)))
		}
		defer C.metalplug_delete_inputs(&raw[0], C.int(n))
	}
	*ins = grow(&sc.ins, n)
	dims := 0
	for i := range n {
		(*ins)[i] = input{t: raw[i].tensor, data: raw[i].data, batch: true}
		dims += max(int(raw[i].ndims), 0)
	}
	shapes := make([]int, dims) // every input's shape, in one allocation
	for i := range n {
		r := raw[i] // a copy: darwincheck types C structs as opaque, and a pointer to one has no fields
		in := (*ins)[i]
		d, ok := tfType(C.TF_DataType(r.dtype))
		if !ok {
			return status.Invalidf("%s: input %d has dtype %d, which this device does not support", k.Op, i, int(r.dtype))
		}
		if r.ndims < 0 {
			return status.Invalidf("%s: input %d has more than %d dimensions", k.Op, i, C.METALPLUG_MAX_DIMS)
		}
		shape := ir.Shape(shapes[:r.ndims:r.ndims])
		shapes = shapes[r.ndims:]
		for j := range shape {
			shape[j] = int(r.dims[j])
		}
		in.typ = ir.TensorType{DType: d, Shape: shape}
		key = appendSignature(key, in.typ)
		(*ins)[i] = in
		if plan.host[i] {
			vals, err := hostValues(in)
			if err != nil {
				return status.Invalidf("%s: input %d: %v", k.Op, i, err)
			}
			host[i] = vals
			key = append(key, 'h')
			for _, v := range vals {
				key = binary.AppendVarint(key, v)
			}
			key = append(key, ';')
		}
	}
	s, err := kernelStream(ctx, st)
	if err != nil {
		return fmt.Errorf("%s: %w", k.Op, err)
	}
	var data map[int][]byte
	if read := plan.read; len(read) > 0 {
		// The output shape depends on these inputs' values: wait for the
		// work that writes them, then read them (memory is unified).
		if err := s.Synchronize(); err != nil {
			return fmt.Errorf("%s: %w", k.Op, err)
		}
		data = map[int][]byte{}
		for _, i := range read {
			in := (*ins)[i]
			b := make([]byte, in.typ.Bytes())
			if len(b) > 0 {
				copy(b, unsafe.Slice((*byte)(in.data), len(b)))
			}
			data[i] = b
			key = append(append(key, b...), ';')
		}
	}
	c, err := inst.program(key, *ins, host, data)
	if err != nil {
		return err // classified where it arose; lowering errors name the op and its inputs
	}
	ptrs := grow(&sc.ptrs, n+2+len(c.outs)) // the arguments (and the random state), then the results
	clear(ptrs)
	args, results := ptrs[:0:n+2], ptrs[n+2:]
	for i, in := range *ins {
		if !plan.host[i] {
			args = append(args, in.data)
		}
	}
	elements := 0
	for i, t := range c.outs {
		if j := c.forward[i]; j >= 0 {
			C.TF_SetOutput(ctx, C.int(i), (*ins)[j].t, st)
			if C.TF_GetCode(st) != C.TF_OK {
				return fmt.Errorf("%s: output %d: %s", k.Op, i, C.GoString(C.TF_Message(st)))
			}
			continue
		}
		data, err := c.allocateOutput(ctx, st, k.Op, i)
		if err != nil {
			return err
		}
		results[i] = data
		elements += t.Shape.Size()
	}
	if c.exe == nil || elements == 0 {
		return nil // every output forwarded or empty: nothing to compute
	}
	for i, p := range results {
		if p == nil && c.outs[i].Shape.Size() > 0 {
			return fmt.Errorf("%s: output %d (%v) has no buffer (inputs %s)", k.Op, i, c.outs[i], describe(*ins))
		}
	}
	var rs unsafe.Pointer
	if c.rng {
		if rs, err = inst.nextRngState(c.outs); err != nil {
			return fmt.Errorf("%s: %v", k.Op, err)
		}
		args = append(args, rs, unsafe.Add(rs, 8))
	}
	name := traceName(ctx, inst.traceOp)
	if state.synchronous {
		// One step: on an idle stream the program runs from this thread,
		// with one wait for the device.
		err := driver.ExecuteWait(s, name, c.exe, args, results)
		if rs != nil {
			state.drv.Free(rs)
		}
		if err != nil {
			// %w keeps the class: a program that did not fit the device
			// is ResourceExhaustedError, as its output's allocation is.
			return fmt.Errorf("%s: %w (inputs %s)", k.Op, err, describe(*ins))
		}
		return nil
	}
	driver.Execute(s, name, c.exe, args, results)
	if rs != nil {
		// The state buffer lives until the program that reads it has run.
		s.HostCallback(func() error { return state.drv.Free(rs) })
	}
	return nil
}

// appendSignature appends an input's type to a program cache key: dtype,
// rank, dims.
func appendSignature(key []byte, t ir.TensorType) []byte {
	key = append(key, byte(t.DType), byte(t.Shape.Rank()))
	for _, d := range t.Shape {
		key = binary.AppendUvarint(key, uint64(d))
	}
	return append(key, ';')
}

// program finds or builds the compiled program for one input signature.
func (inst *instance) program(key []byte, ins []input, host map[int][]int64, raw map[int][]byte) (*compiled, error) {
	if l := inst.last.Load(); l != nil && l.key == string(key) {
		return l.c, nil
	}
	if c, ok := inst.cache.Get(key); ok {
		inst.last.Store(&lastProgram{key: string(key), c: c})
		return c, nil
	}
	types := make([]ir.TensorType, len(ins))
	for i, in := range ins {
		types[i] = in.typ
	}
	l, err := inst.k.Build(inst.attrs, types, host, raw)
	if err != nil {
		// What a lowering refuses is the caller's input; a panic it
		// recovered is already marked internal.
		return nil, status.Or(err, status.InvalidArgument)
	}
	p := l.Program
	c := &compiled{prog: p, rng: l.Rng, outs: p.ResultTypes(), forward: make([]int, len(p.Results))}
	c.outDims = make([][]C.int64_t, len(c.outs))
	for i, t := range c.outs {
		c.outDims[i] = make([]C.int64_t, max(len(t.Shape), 1)) // TF_AllocateOutput reads one for a scalar
		for j, d := range t.Shape {
			c.outDims[i][j] = C.int64_t(d)
		}
	}
	compute := false
	for i, r := range p.Results {
		c.forward[i] = -1
		if in := p.Instrs[r]; in.Op == ir.OpParameter && !(l.Rng && in.Param >= len(p.Params)-2) {
			c.forward[i] = deviceInputIndex(inst.inputPlan(len(ins)).host, in.Param)
		} else {
			compute = true
		}
	}
	if compute {
		// The driver writes every result of a program it runs, so an output
		// that merely passes an input through is copied like the rest;
		// forwarding without a copy is for programs that compute nothing.
		for i := range c.forward {
			c.forward[i] = -1
		}
		if c.exe, err = state.drv.Compile(p); err != nil {
			// The driver names the instruction; the op and its inputs
			// say which kernel call it was. The driver's class stays.
			return nil, fmt.Errorf("%s: compiling for the %s driver (inputs %s): %w", inst.k.Op, state.drv.Name(), describe(ins), err)
		}
	}
	if len(raw) == 0 { // programs that depend on input data are built per call
		c = inst.cache.Add(key, c)
		inst.last.Store(&lastProgram{key: string(key), c: c})
	}
	return c, nil
}

// deviceInputIndex maps the p-th program parameter back to its op input,
// given which inputs are host inputs.
func deviceInputIndex(host []bool, p int) int {
	for i, h := range host {
		if h {
			continue
		}
		if p == 0 {
			return i
		}
		p--
	}
	return -1
}

// hostValues reads an integer or bool host-memory input (axes, shapes,
// permutations, paddings, Reverse's dims), row-major.
func hostValues(in input) ([]int64, error) {
	n := in.typ.Shape.Size()
	out := make([]int64, n)
	switch in.typ.DType {
	case ir.I32:
		for i, v := range unsafe.Slice((*int32)(in.data), n) {
			out[i] = int64(v)
		}
	case ir.I64:
		copy(out, unsafe.Slice((*int64)(in.data), n))
	case ir.Bool:
		// Reverse's dims: one byte each, 0 or 1.
		for i, v := range unsafe.Slice((*byte)(in.data), n) {
			out[i] = int64(v)
		}
	default:
		return nil, fmt.Errorf("must be int32, int64 or bool, got %v", in.typ)
	}
	return out, nil
}

// allocateOutput has TensorFlow allocate output i on the device
// and returns its data; failing, it is out of memory, as TensorFlow's own
// kernels report it.
func (c *compiled) allocateOutput(ctx *C.TF_OpKernelContext, st *C.TF_Status, op string, i int) (unsafe.Pointer, error) {
	t := c.outs[i]
	data := C.metalplug_allocate_output(ctx, C.int(i), C.int(irToTF(t.DType)), &c.outDims[i][0], C.int(len(t.Shape)), C.size_t(t.Bytes()), st)
	if C.TF_GetCode(st) != C.TF_OK {
		return nil, status.Exhausted(fmt.Errorf("%s: allocating output %d (%v, %d bytes) with %s: %s", op, i, t, t.Bytes(), deviceMemory(), C.GoString(C.TF_Message(st))))
	}
	stats.TensorFlow.AllocatedOutput(t.Bytes())
	return data, nil
}

// kernelStream is the device stream TensorFlow gave the kernel.
func kernelStream(ctx *C.TF_OpKernelContext, st *C.TF_Status) (driver.Stream, error) {
	sp := C.metalplug_kernel_stream(ctx, st)
	if sp == nil {
		return nil, fmt.Errorf("no stream: %s", C.GoString(C.TF_Message(st)))
	}
	return streamOf(C.uintptr_t(uintptr(unsafe.Pointer(sp)))), nil
}

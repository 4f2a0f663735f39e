package pjrt

/*
#include <pthread.h>
#include <string.h>
#include "shim.h"

// For the tests, which cannot use cgo themselves: an event callback that
// records what it was given. user_arg encodes a slot number, above the
// addresses Go treats as invalid pointers and below any Go heap.
#define MP_TEST_SLOTS 256
#define MP_TEST_ARG_BASE 0x100000
static pthread_mutex_t mp_test_mu = PTHREAD_MUTEX_INITIALIZER;
static int mp_test_fired[MP_TEST_SLOTS];
static int mp_test_code[MP_TEST_SLOTS];
static void mp_test_on_ready(PJRT_Error* err, void* user_arg) {
  int slot = (int)((uintptr_t)user_arg - MP_TEST_ARG_BASE);
  pthread_mutex_lock(&mp_test_mu);
  mp_test_fired[slot]++;
  mp_test_code[slot] = err == NULL ? 0 : (int)mp_error_code(err);
  pthread_mutex_unlock(&mp_test_mu);
  mp_error_free(err);
}
static PJRT_Event_OnReadyCallback mp_test_callback(void) { return mp_test_on_ready; }
static void* mp_test_arg(int slot) { return (void*)(uintptr_t)(MP_TEST_ARG_BASE + slot); }
static void mp_test_fired_slot(int slot, int* fired, int* code) {
  pthread_mutex_lock(&mp_test_mu);
  *fired = mp_test_fired[slot];
  *code = mp_test_code[slot];
  pthread_mutex_unlock(&mp_test_mu);
}

// Calls PJRT_TopologyDescription_Create through the table with no
// topology name, as jax's ahead-of-time get_topology_desc does.
static PJRT_Error* mp_test_topology_create(void) {
  char args[128] = {0};
  return mp_api()->PJRT_TopologyDescription_Create(args);
}

// Drives an error through the table's classic entry points and its vtable,
// as the two kinds of caller do. Returns 0, or the number of the first
// check that failed.
static int mp_test_error_paths(PJRT_Error* e, int want_code, const char* want, size_t n) {
  const PJRT_Api* api = mp_api();
  PJRT_Error_GetCode_Args g = {PJRT_Error_GetCode_Args_STRUCT_SIZE, NULL, e, 0};
  if (api->PJRT_Error_GetCode(&g) != NULL || (int)g.code != want_code) return 1;
  PJRT_Error_Message_Args m = {PJRT_Error_Message_Args_STRUCT_SIZE, NULL, e, NULL, 0};
  api->PJRT_Error_Message(&m);
  if (m.message_size != n || memcmp(m.message, want, n) != 0 || m.message[n] != 0) return 2;
  const char* vm = NULL;
  size_t vn = 0;
  e->vtable->message(e, &vm, &vn);
  if (vm != m.message || vn != n || (int)e->vtable->get_code(e) != want_code) return 3;
  if (e->vtable->struct_size != PJRT_Error_FunctionTable_STRUCT_SIZE || e->vtable->instance_size < sizeof(PJRT_Error)) return 4;
  PJRT_Error_ForEachPayload_Args f = {PJRT_Error_ForEachPayload_Args_STRUCT_SIZE, NULL, e, NULL, NULL};
  if (api->PJRT_Error_ForEachPayload(&f) != NULL) return 5;
  PJRT_Error_Destroy_Args d = {PJRT_Error_Destroy_Args_STRUCT_SIZE, NULL, e};
  api->PJRT_Error_Destroy(&d);
  PJRT_Error* bad = api->PJRT_Error_GetCode(NULL);  // a NULL args struct is refused, not a crash
  if (bad == NULL || mp_error_code(bad) != PJRT_Error_Code_INVALID_ARGUMENT) return 6;
  mp_error_free(bad);
  d.error = NULL;
  api->PJRT_Error_Destroy(&d);  // destroying NULL does nothing
  return 0;
}

// Attaches user data to a memory as jax may: replaced data is destroyed at
// once, the rest when the memory is. Returns the destructor calls seen
// before and after freeing, or -1 for a lookup that failed.
static int mp_test_dtors;
static void mp_test_dtor(void* p) { mp_test_dtors++; }
static int mp_test_user_data(int* after_free) {
  mp_test_dtors = 0;
  PJRT_Memory* m = mp_memory_new(0);
  static int k1, k2, v1, v2, v3;
  m->vtable->set_user_data(m, &k1, &v1, mp_test_dtor);
  m->vtable->set_user_data(m, &k2, &v2, mp_test_dtor);
  m->vtable->set_user_data(m, &k1, &v3, mp_test_dtor);  // replaces v1
  if (m->vtable->get_user_data(m, &k1) != &v3 || m->vtable->get_user_data(m, &k2) != &v2) return -1;
  if (m->vtable->get_user_data(m, &v1) != NULL) return -1;
  int before = mp_test_dtors;
  mp_memory_free(m);
  *after_free = mp_test_dtors;
  return before;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// A small PJRT client made of the exports, called as jax calls them, for
// the package's tests (a _test.go file cannot use cgo). The linker drops
// it from the library. The argument structs are Go values passed to Go
// functions, so no Go pointer reaches C; host arrays live in C memory, as
// the stream reads them after the call returns.

// pjrtError is an error an export returned.
type pjrtError struct {
	code int
	msg  string
}

func (e *pjrtError) Error() string { return fmt.Sprintf("code %d: %s", e.code, e.msg) }

// takeError converts and frees an export's PJRT_Error (nil for none).
func takeError(e errT) error {
	if e == nil {
		return nil
	}
	var n C.size_t
	m := C.mp_error_message(e, &n)
	err := &pjrtError{code: int(C.mp_error_code(e)), msg: C.GoStringN(m, C.int(n))}
	C.mp_error_free(e)
	return err
}

// errorCode is the code of an export's error, 0 for none.
func errorCode(err error) int {
	var pe *pjrtError
	if errors.As(err, &pe) {
		return pe.code
	}
	return 0
}

type hClient struct{ c *C.PJRT_Client }

func hNewClient() (*hClient, error) {
	var a C.PJRT_Client_Create_Args
	a.struct_size = C.PJRT_Client_Create_Args_STRUCT_SIZE
	if err := takeError(mp_PJRT_Client_Create(&a)); err != nil {
		return nil, err
	}
	return &hClient{a.client}, nil
}

func (h *hClient) destroy() error {
	var a C.PJRT_Client_Destroy_Args
	a.struct_size = C.PJRT_Client_Destroy_Args_STRUCT_SIZE
	a.client = h.c
	return takeError(mp_PJRT_Client_Destroy(&a))
}

func (h *hClient) platform() (name, version string, err error) {
	var a C.PJRT_Client_PlatformName_Args
	a.struct_size = C.PJRT_Client_PlatformName_Args_STRUCT_SIZE
	a.client = h.c
	if err := takeError(mp_PJRT_Client_PlatformName(&a)); err != nil {
		return "", "", err
	}
	var v C.PJRT_Client_PlatformVersion_Args
	v.struct_size = C.PJRT_Client_PlatformVersion_Args_STRUCT_SIZE
	v.client = h.c
	if err := takeError(mp_PJRT_Client_PlatformVersion(&v)); err != nil {
		return "", "", err
	}
	return C.GoStringN(a.platform_name, C.int(a.platform_name_size)),
		C.GoStringN(v.platform_version, C.int(v.platform_version_size)), nil
}

// deviceKind is the kind of the client's one device.
func (h *hClient) deviceKind() (string, error) {
	var d C.PJRT_Client_Devices_Args
	d.struct_size = C.PJRT_Client_Devices_Args_STRUCT_SIZE
	d.client = h.c
	if err := takeError(mp_PJRT_Client_Devices(&d)); err != nil {
		return "", err
	}
	if d.num_devices != 1 {
		return "", fmt.Errorf("%d devices", d.num_devices)
	}
	var g C.PJRT_Device_GetDescription_Args
	g.struct_size = C.PJRT_Device_GetDescription_Args_STRUCT_SIZE
	g.device = *d.devices
	if err := takeError(mp_PJRT_Device_GetDescription(&g)); err != nil {
		return "", err
	}
	var k C.PJRT_DeviceDescription_Kind_Args
	k.struct_size = C.PJRT_DeviceDescription_Kind_Args_STRUCT_SIZE
	k.device_description = g.device_description
	if err := takeError(mp_PJRT_DeviceDescription_Kind(&k)); err != nil {
		return "", err
	}
	return C.GoStringN(k.device_kind, C.int(k.device_kind_size)), nil
}

// memoryStats is bytes in use and the peak, by PJRT_Device_MemoryStats.
func (h *hClient) memoryStats() (inUse, peak, allocs int64, err error) {
	var a C.PJRT_Device_MemoryStats_Args
	a.struct_size = C.PJRT_Device_MemoryStats_Args_STRUCT_SIZE
	c, err := clientOf(h.c)
	if err != nil {
		return 0, 0, 0, err
	}
	a.device = c.dev.c
	if err := takeError(mp_PJRT_Device_MemoryStats(&a)); err != nil {
		return 0, 0, 0, err
	}
	return int64(a.bytes_in_use), int64(a.peak_bytes_in_use), int64(a.num_allocs), nil
}

type hEvent struct{ e *C.PJRT_Event }

func (e *hEvent) await() error {
	var a C.PJRT_Event_Await_Args
	a.struct_size = C.PJRT_Event_Await_Args_STRUCT_SIZE
	a.event = e.e
	return takeError(mp_PJRT_Event_Await(&a))
}

func (e *hEvent) ready() (bool, error) {
	var a C.PJRT_Event_IsReady_Args
	a.struct_size = C.PJRT_Event_IsReady_Args_STRUCT_SIZE
	a.event = e.e
	err := takeError(mp_PJRT_Event_IsReady(&a))
	return bool(a.is_ready), err
}

// status is PJRT_Event_Error: the event's error, once it is ready.
func (e *hEvent) status() error {
	var a C.PJRT_Event_Error_Args
	a.struct_size = C.PJRT_Event_Error_Args_STRUCT_SIZE
	a.event = e.e
	return takeError(mp_PJRT_Event_Error(&a))
}

// onReady registers the test callback with slot as its argument.
func (e *hEvent) onReady(slot int) error {
	var a C.PJRT_Event_OnReady_Args
	a.struct_size = C.PJRT_Event_OnReady_Args_STRUCT_SIZE
	a.event = e.e
	a.callback = C.mp_test_callback()
	a.user_arg = C.mp_test_arg(C.int(slot))
	return takeError(mp_PJRT_Event_OnReady(&a))
}

// fired is how often the test callback ran for slot, and the last code.
func fired(slot int) (n, code int) {
	var f, c C.int
	C.mp_test_fired_slot(C.int(slot), &f, &c)
	return int(f), int(c)
}

func (e *hEvent) destroy() error {
	var a C.PJRT_Event_Destroy_Args
	a.struct_size = C.PJRT_Event_Destroy_Args_STRUCT_SIZE
	a.event = e.e
	return takeError(mp_PJRT_Event_Destroy(&a))
}

func hNewEvent() (*hEvent, error) {
	var a C.PJRT_Event_Create_Args
	a.struct_size = C.PJRT_Event_Create_Args_STRUCT_SIZE
	err := takeError(mp_PJRT_Event_Create(&a))
	return &hEvent{a.event}, err
}

func (e *hEvent) set(code int, msg string) error {
	var a C.PJRT_Event_Set_Args
	a.struct_size = C.PJRT_Event_Set_Args_STRUCT_SIZE
	a.event = e.e
	a.error_code = C.PJRT_Error_Code(code)
	cs := C.CString(msg)
	defer C.free(unsafe.Pointer(cs))
	a.error_message, a.error_message_size = cs, C.size_t(len(msg))
	return takeError(mp_PJRT_Event_Set(&a))
}

// hostArray is host memory in C, as a caller's array would be.
type hostArray struct {
	p unsafe.Pointer
	n int
}

func newHostArray(data []byte) *hostArray {
	p := C.calloc(C.size_t(max(len(data), 1)), 1)
	copy(unsafe.Slice((*byte)(p), len(data)), data)
	return &hostArray{p, len(data)}
}

func (h *hostArray) bytes() []byte { return unsafe.Slice((*byte)(h.p), h.n) }
func (h *hostArray) free()         { C.free(h.p) }

type hBuffer struct{ b *C.PJRT_Buffer }

// put makes a buffer from host memory: data at offset at of host holds
// element [0...0] (strides may be negative), byte strides as given (nil:
// dense), with host_buffer_semantics sem.
func (h *hClient) put(host *hostArray, at int, typ bufType, dims, strides []int64, sem int) (*hBuffer, *hEvent, error) {
	var a C.PJRT_Client_BufferFromHostBuffer_Args
	a.struct_size = C.PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE
	a.client = h.c
	a.data = unsafe.Add(host.p, at)
	a._type = C.PJRT_Buffer_Type(typ)
	cd := newHostArray(int64Bytes(dims))
	defer cd.free()
	a.dims, a.num_dims = (*C.int64_t)(cd.p), C.size_t(len(dims))
	if strides != nil {
		cs := newHostArray(int64Bytes(strides))
		defer cs.free()
		a.byte_strides, a.num_byte_strides = (*C.int64_t)(cs.p), C.size_t(len(strides))
	}
	a.host_buffer_semantics = C.PJRT_HostBufferSemantics(sem)
	if err := takeError(mp_PJRT_Client_BufferFromHostBuffer(&a)); err != nil {
		return nil, nil, err
	}
	return &hBuffer{a.buffer}, &hEvent{a.done_with_host_buffer}, nil
}

func int64Bytes(v []int64) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*8)
}

// get reads a buffer back through PJRT_Buffer_ToHostBuffer, asking for the
// size first as jax may; strides nil means the default (dense) layout.
func (b *hBuffer) get(strides []int64) ([]byte, error) {
	var a C.PJRT_Buffer_ToHostBuffer_Args
	a.struct_size = C.PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE
	a.src = b.b
	var layout C.PJRT_Buffer_MemoryLayout
	if strides != nil {
		cs := newHostArray(int64Bytes(strides))
		defer cs.free()
		layout.struct_size = C.PJRT_Buffer_MemoryLayout_STRUCT_SIZE
		layout._type = C.PJRT_Buffer_MemoryLayout_Type_Strides
		s := (*C.PJRT_Buffer_MemoryLayout_Strides)(unsafe.Pointer(C.mp_layout_strides(&layout)))
		s.struct_size = C.PJRT_Buffer_MemoryLayout_Strides_STRUCT_SIZE
		s.byte_strides, s.num_byte_strides = (*C.int64_t)(cs.p), C.size_t(len(strides))
		a.host_layout = &layout
	}
	if err := takeError(mp_PJRT_Buffer_ToHostBuffer(&a)); err != nil {
		return nil, err
	}
	dst := newHostArray(make([]byte, a.dst_size))
	defer dst.free()
	a.dst = dst.p
	if err := takeError(mp_PJRT_Buffer_ToHostBuffer(&a)); err != nil {
		return nil, err
	}
	ev := &hEvent{a.event}
	defer ev.destroy()
	if err := ev.await(); err != nil {
		return nil, err
	}
	return append([]byte(nil), dst.bytes()...), nil
}

func (b *hBuffer) readyEvent() (*hEvent, error) {
	var a C.PJRT_Buffer_ReadyEvent_Args
	a.struct_size = C.PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE
	a.buffer = b.b
	err := takeError(mp_PJRT_Buffer_ReadyEvent(&a))
	return &hEvent{a.event}, err
}

func (b *hBuffer) dims() ([]int64, bufType, error) {
	var a C.PJRT_Buffer_Dimensions_Args
	a.struct_size = C.PJRT_Buffer_Dimensions_Args_STRUCT_SIZE
	a.buffer = b.b
	if err := takeError(mp_PJRT_Buffer_Dimensions(&a)); err != nil {
		return nil, 0, err
	}
	var t C.PJRT_Buffer_ElementType_Args
	t.struct_size = C.PJRT_Buffer_ElementType_Args_STRUCT_SIZE
	t.buffer = b.b
	if err := takeError(mp_PJRT_Buffer_ElementType(&t)); err != nil {
		return nil, 0, err
	}
	return append([]int64(nil), unsafe.Slice((*int64)(unsafe.Pointer(a.dims)), int(a.num_dims))...), bufType(t._type), nil
}

func (b *hBuffer) delete() error {
	var a C.PJRT_Buffer_Delete_Args
	a.struct_size = C.PJRT_Buffer_Delete_Args_STRUCT_SIZE
	a.buffer = b.b
	return takeError(mp_PJRT_Buffer_Delete(&a))
}

func (b *hBuffer) isDeleted() (bool, error) {
	var a C.PJRT_Buffer_IsDeleted_Args
	a.struct_size = C.PJRT_Buffer_IsDeleted_Args_STRUCT_SIZE
	a.buffer = b.b
	err := takeError(mp_PJRT_Buffer_IsDeleted(&a))
	return bool(a.is_deleted), err
}

func (b *hBuffer) destroy() error {
	var a C.PJRT_Buffer_Destroy_Args
	a.struct_size = C.PJRT_Buffer_Destroy_Args_STRUCT_SIZE
	a.buffer = b.b
	return takeError(mp_PJRT_Buffer_Destroy(&a))
}

type hExecutable struct{ e *C.PJRT_LoadedExecutable }

// compile hands code and options to PJRT_Client_Compile as jax does.
func (h *hClient) compile(code []byte, format string, options []byte) (*hExecutable, error) {
	var p C.PJRT_Program
	p.struct_size = C.PJRT_Program_STRUCT_SIZE
	cc := newHostArray(code)
	defer cc.free()
	cf := newHostArray([]byte(format))
	defer cf.free()
	co := newHostArray(options)
	defer co.free()
	p.code, p.code_size = (*C.char)(cc.p), C.size_t(len(code))
	p.format, p.format_size = (*C.char)(cf.p), C.size_t(len(format))
	var a C.PJRT_Client_Compile_Args
	a.struct_size = C.PJRT_Client_Compile_Args_STRUCT_SIZE
	a.client = h.c
	a.program = &p
	a.compile_options, a.compile_options_size = (*C.char)(co.p), C.size_t(len(options))
	if err := takeError(mp_PJRT_Client_Compile(&a)); err != nil {
		return nil, err
	}
	return &hExecutable{a.executable}, nil
}

// describe is what jax reads of an executable after compiling it.
func (e *hExecutable) describe() (name string, outputs int, types []bufType, dims [][]int64, assignment []byte, err error) {
	var g C.PJRT_LoadedExecutable_GetExecutable_Args
	g.struct_size = C.PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE
	g.loaded_executable = e.e
	if err := takeError(mp_PJRT_LoadedExecutable_GetExecutable(&g)); err != nil {
		return "", 0, nil, nil, nil, err
	}
	defer func() {
		var d C.PJRT_Executable_Destroy_Args
		d.struct_size = C.PJRT_Executable_Destroy_Args_STRUCT_SIZE
		d.executable = g.executable
		if e := takeError(mp_PJRT_Executable_Destroy(&d)); e != nil && err == nil {
			err = e
		}
	}()
	var n C.PJRT_Executable_Name_Args
	n.struct_size = C.PJRT_Executable_Name_Args_STRUCT_SIZE
	n.executable = g.executable
	if err := takeError(mp_PJRT_Executable_Name(&n)); err != nil {
		return "", 0, nil, nil, nil, err
	}
	var o C.PJRT_Executable_NumOutputs_Args
	o.struct_size = C.PJRT_Executable_NumOutputs_Args_STRUCT_SIZE
	o.executable = g.executable
	if err := takeError(mp_PJRT_Executable_NumOutputs(&o)); err != nil {
		return "", 0, nil, nil, nil, err
	}
	var t C.PJRT_Executable_OutputElementTypes_Args
	t.struct_size = C.PJRT_Executable_OutputElementTypes_Args_STRUCT_SIZE
	t.executable = g.executable
	if err := takeError(mp_PJRT_Executable_OutputElementTypes(&t)); err != nil {
		return "", 0, nil, nil, nil, err
	}
	for _, x := range unsafe.Slice(t.output_types, int(t.num_output_types)) {
		types = append(types, bufType(x))
	}
	var d C.PJRT_Executable_OutputDimensions_Args
	d.struct_size = C.PJRT_Executable_OutputDimensions_Args_STRUCT_SIZE
	d.executable = g.executable
	if err := takeError(mp_PJRT_Executable_OutputDimensions(&d)); err != nil {
		return "", 0, nil, nil, nil, err
	}
	ranks := unsafe.Slice(d.dim_sizes, int(d.num_outputs))
	total := 0
	for _, r := range ranks {
		total += int(r)
	}
	var flat []int64
	if total > 0 {
		flat = unsafe.Slice((*int64)(unsafe.Pointer(d.dims)), total)
	}
	at := 0
	for _, r := range ranks {
		dims = append(dims, append([]int64(nil), flat[at:at+int(r)]...))
		at += int(r)
	}
	var da C.PJRT_LoadedExecutable_GetDeviceAssignment_Args
	da.struct_size = C.PJRT_LoadedExecutable_GetDeviceAssignment_Args_STRUCT_SIZE
	da.executable = e.e
	if err := takeError(mp_PJRT_LoadedExecutable_GetDeviceAssignment(&da)); err != nil {
		return "", 0, nil, nil, nil, err
	}
	assignment = C.GoBytes(unsafe.Pointer(da.serialized_bytes), C.int(da.serialized_bytes_size))
	C.free(unsafe.Pointer(da.serialized_device_assignment)) // what the deleter does
	return C.GoStringN(n.executable_name, C.int(n.executable_name_size)), int(o.num_outputs), types, dims, assignment, nil
}

// execute runs the executable on one device's arguments, as jax does.
// execute runs the executable on args; keep lists the argument positions
// the call says are not donatable.
func (e *hExecutable) execute(args []*hBuffer, outputs int, keep ...int64) ([]*hBuffer, *hEvent, error) {
	in := (**C.PJRT_Buffer)(C.calloc(C.size_t(max(len(args), 1)), C.size_t(unsafe.Sizeof(uintptr(0)))))
	defer C.free(unsafe.Pointer(in))
	for i, b := range args {
		unsafe.Slice(in, len(args))[i] = b.b
	}
	out := (**C.PJRT_Buffer)(C.calloc(C.size_t(max(outputs, 1)), C.size_t(unsafe.Sizeof(uintptr(0)))))
	defer C.free(unsafe.Pointer(out))
	var opts C.PJRT_ExecuteOptions
	opts.struct_size = C.PJRT_ExecuteOptions_STRUCT_SIZE
	if len(keep) > 0 {
		idx := (*C.int64_t)(C.calloc(C.size_t(len(keep)), 8))
		defer C.free(unsafe.Pointer(idx))
		copy(unsafe.Slice((*int64)(unsafe.Pointer(idx)), len(keep)), keep)
		opts.non_donatable_input_indices = idx
		opts.num_non_donatable_input_indices = C.size_t(len(keep))
	}
	var a C.PJRT_LoadedExecutable_Execute_Args
	a.struct_size = C.PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE
	a.executable = e.e
	a.options = &opts
	a.argument_lists = &in
	a.num_devices = 1
	a.num_args = C.size_t(len(args))
	a.output_lists = &out
	var done *C.PJRT_Event
	a.device_complete_events = &done
	if err := takeError(mp_PJRT_LoadedExecutable_Execute(&a)); err != nil {
		return nil, nil, err
	}
	var res []*hBuffer
	for _, b := range unsafe.Slice(out, outputs) {
		res = append(res, &hBuffer{b})
	}
	return res, &hEvent{done}, nil
}

func (e *hExecutable) destroy() error {
	var a C.PJRT_LoadedExecutable_Destroy_Args
	a.struct_size = C.PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE
	a.executable = e.e
	return takeError(mp_PJRT_LoadedExecutable_Destroy(&a))
}

// errorPaths makes an error of code c and message msg, and checks it
// through every way a caller reads errors (abi.c's table and vtable).
func errorPaths(c code, msg string) int {
	cs := C.CString(msg)
	defer C.free(unsafe.Pointer(cs))
	return int(C.mp_test_error_paths(newCError(c, msg), C.int(c), cs, C.size_t(len(msg))))
}

// userDataDtors runs mp_test_user_data: destructor calls before and after
// the memory is freed.
func userDataDtors() (before, after int) {
	var a C.int
	b := C.mp_test_user_data(&a)
	return int(b), int(a)
}

// callTopologyCreate asks the table for a topology description.
func callTopologyCreate() error { return takeError(C.mp_test_topology_create()) }

// callTooSmall calls PJRT_Buffer_Dimensions with a struct_size one byte
// short of what it writes, as an older caller might.
func callTooSmall() error {
	var a C.PJRT_Buffer_Dimensions_Args
	a.struct_size = C.PJRT_Buffer_Dimensions_Args_STRUCT_SIZE - 1
	return takeError(mp_PJRT_Buffer_Dimensions(&a))
}

// callLarger calls PJRT_Client_ProcessIndex with a struct 64 bytes larger
// than ours, as a newer caller might.
func callLarger(h *hClient) (int, error) {
	var a struct {
		args  C.PJRT_Client_ProcessIndex_Args
		spare [64]byte
	}
	a.args.struct_size = C.size_t(unsafe.Sizeof(a))
	a.args.client = h.c
	a.args.process_index = -1
	err := takeError(mp_PJRT_Client_ProcessIndex(&a.args))
	return int(a.args.process_index), err
}

// pluginAttributeList reads PJRT_Plugin_Attributes: int64 lists by name.
func pluginAttributeList() (map[string][]int64, error) {
	var a C.PJRT_Plugin_Attributes_Args
	a.struct_size = C.PJRT_Plugin_Attributes_Args_STRUCT_SIZE
	if err := takeError(mp_PJRT_Plugin_Attributes(&a)); err != nil {
		return nil, err
	}
	out := map[string][]int64{}
	for _, nv := range unsafe.Slice(a.attributes, int(a.num_attributes)) {
		if nv._type != C.PJRT_NamedValue_kInt64List {
			return nil, fmt.Errorf("attribute %s has type %d", C.GoStringN(nv.name, C.int(nv.name_size)), nv._type)
		}
		vals := unsafe.Slice((*int64)(unsafe.Pointer(C.mp_named_list_value(&nv))), int(nv.value_size))
		out[C.GoStringN(nv.name, C.int(nv.name_size))] = append([]int64(nil), vals...)
	}
	return out, nil
}

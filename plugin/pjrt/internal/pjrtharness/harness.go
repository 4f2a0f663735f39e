// Package pjrtharness is a small PJRT client for plugin/pjrt's tests,
// which cannot use cgo themselves: it drives the plugin as jax does,
// through the function table GetPjrtApi returns (Use), with argument
// structs declared by plugin/pjrt's abi.h. It does not import plugin/pjrt
// (whose tests import it), so the library never links it; the tests hand
// it the table and any object they made inside the package (WrapClient,
// TakeError, ErrorPaths) as unsafe.Pointer.
//
// Argument structs are Go values; what they point to is C memory or
// pinned Go memory, as cgo's rules require. Host arrays live in C memory,
// as the stream reads them after the call returns.
package pjrtharness

/*
#cgo CFLAGS: -I${SRCDIR}/../..
#include "harness.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"
)

// Use makes api, a *PJRT_Api (what GetPjrtApi returns), the table every
// call of the harness goes through. Call it once, before the tests run.
func Use(api unsafe.Pointer) {
	if api == nil {
		panic("pjrtharness: Use(nil): GetPjrtApi returned no table")
	}
	C.mp_harness_use((*C.PJRT_Api)(api))
}

// mustUse panics unless Use has been called: every call goes through the
// table.
func mustUse() {
	if C.mp_harness_api() == nil {
		panic("pjrtharness: Use has not been given GetPjrtApi's table")
	}
}

// Error is an error a PJRT function returned.
type Error struct {
	Code int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("code %d: %s", e.Code, e.Msg) }

// TakeError converts and frees e, a *PJRT_Error (nil for none), reading it
// through its own vtable.
func TakeError(e unsafe.Pointer) error {
	return takeError((*C.PJRT_Error)(e))
}

func takeError(e *C.PJRT_Error) error {
	if e == nil {
		return nil
	}
	var n C.size_t
	m := C.mp_harness_error_message(e, &n)
	err := &Error{Code: int(C.mp_harness_error_code(e)), Msg: C.GoStringN(m, C.int(n))}
	C.mp_harness_error_free(e)
	return err
}

// ErrorCode is the code of a PJRT function's error, 0 for none.
func ErrorCode(err error) int {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Code
	}
	return 0
}

// Client is a PJRT_Client.
type Client struct{ c *C.PJRT_Client }

// NewClient makes a client through PJRT_Client_Create.
func NewClient() (*Client, error) {
	mustUse()
	var a C.PJRT_Client_Create_Args
	a.struct_size = C.PJRT_Client_Create_Args_STRUCT_SIZE
	if err := takeError(C.mp_harness_PJRT_Client_Create(&a)); err != nil {
		return nil, err
	}
	return &Client{a.client}, nil
}

// WrapClient is the client c, a *PJRT_Client made otherwise (a test's own
// driver); Destroy destroys it through the table as any other.
func WrapClient(c unsafe.Pointer) *Client {
	mustUse()
	return &Client{(*C.PJRT_Client)(c)}
}

func (h *Client) Destroy() error {
	var a C.PJRT_Client_Destroy_Args
	a.struct_size = C.PJRT_Client_Destroy_Args_STRUCT_SIZE
	a.client = h.c
	return takeError(C.mp_harness_PJRT_Client_Destroy(&a))
}

func (h *Client) Platform() (name, version string, err error) {
	var a C.PJRT_Client_PlatformName_Args
	a.struct_size = C.PJRT_Client_PlatformName_Args_STRUCT_SIZE
	a.client = h.c
	if err := takeError(C.mp_harness_PJRT_Client_PlatformName(&a)); err != nil {
		return "", "", err
	}
	var v C.PJRT_Client_PlatformVersion_Args
	v.struct_size = C.PJRT_Client_PlatformVersion_Args_STRUCT_SIZE
	v.client = h.c
	if err := takeError(C.mp_harness_PJRT_Client_PlatformVersion(&v)); err != nil {
		return "", "", err
	}
	return C.GoStringN(a.platform_name, C.int(a.platform_name_size)),
		C.GoStringN(v.platform_version, C.int(v.platform_version_size)), nil
}

// device is the client's one device, by PJRT_Client_Devices.
func (h *Client) device() (*C.PJRT_Device, error) {
	var d C.PJRT_Client_Devices_Args
	d.struct_size = C.PJRT_Client_Devices_Args_STRUCT_SIZE
	d.client = h.c
	if err := takeError(C.mp_harness_PJRT_Client_Devices(&d)); err != nil {
		return nil, err
	}
	if d.num_devices != 1 {
		return nil, fmt.Errorf("%d devices", d.num_devices)
	}
	return *d.devices, nil
}

// DeviceKind is the kind of the client's one device.
func (h *Client) DeviceKind() (string, error) {
	dev, err := h.device()
	if err != nil {
		return "", err
	}
	var g C.PJRT_Device_GetDescription_Args
	g.struct_size = C.PJRT_Device_GetDescription_Args_STRUCT_SIZE
	g.device = dev
	if err := takeError(C.mp_harness_PJRT_Device_GetDescription(&g)); err != nil {
		return "", err
	}
	var k C.PJRT_DeviceDescription_Kind_Args
	k.struct_size = C.PJRT_DeviceDescription_Kind_Args_STRUCT_SIZE
	k.device_description = g.device_description
	if err := takeError(C.mp_harness_PJRT_DeviceDescription_Kind(&k)); err != nil {
		return "", err
	}
	return C.GoStringN(k.device_kind, C.int(k.device_kind_size)), nil
}

// MemoryStats is bytes in use, the peak and the number of allocations of
// the client's device, by PJRT_Device_MemoryStats.
func (h *Client) MemoryStats() (inUse, peak, allocs int64, err error) {
	dev, err := h.device()
	if err != nil {
		return 0, 0, 0, err
	}
	var a C.PJRT_Device_MemoryStats_Args
	a.struct_size = C.PJRT_Device_MemoryStats_Args_STRUCT_SIZE
	a.device = dev
	if err := takeError(C.mp_harness_PJRT_Device_MemoryStats(&a)); err != nil {
		return 0, 0, 0, err
	}
	return int64(a.bytes_in_use), int64(a.peak_bytes_in_use), int64(a.num_allocs), nil
}

// Event is a PJRT_Event.
type Event struct{ e *C.PJRT_Event }

func (e *Event) Await() error {
	var a C.PJRT_Event_Await_Args
	a.struct_size = C.PJRT_Event_Await_Args_STRUCT_SIZE
	a.event = e.e
	return takeError(C.mp_harness_PJRT_Event_Await(&a))
}

func (e *Event) Ready() (bool, error) {
	var a C.PJRT_Event_IsReady_Args
	a.struct_size = C.PJRT_Event_IsReady_Args_STRUCT_SIZE
	a.event = e.e
	err := takeError(C.mp_harness_PJRT_Event_IsReady(&a))
	return bool(a.is_ready), err
}

// Status is PJRT_Event_Error: the event's error, once it is ready.
func (e *Event) Status() error {
	var a C.PJRT_Event_Error_Args
	a.struct_size = C.PJRT_Event_Error_Args_STRUCT_SIZE
	a.event = e.e
	return takeError(C.mp_harness_PJRT_Event_Error(&a))
}

// OnReady registers the harness's callback with slot (0 to 255) as its
// argument; Fired reports what it saw.
func (e *Event) OnReady(slot int) error {
	checkSlot(slot)
	var a C.PJRT_Event_OnReady_Args
	a.struct_size = C.PJRT_Event_OnReady_Args_STRUCT_SIZE
	a.event = e.e
	a.callback = C.mp_harness_callback()
	a.user_arg = C.mp_harness_arg(C.int(slot))
	return takeError(C.mp_harness_PJRT_Event_OnReady(&a))
}

// Fired is how often the harness's callback ran for slot, and the last
// code it was given.
func Fired(slot int) (n, code int) {
	checkSlot(slot)
	var f, c C.int
	C.mp_harness_fired(C.int(slot), &f, &c)
	return int(f), int(c)
}

func checkSlot(slot int) {
	if slot < 0 || slot >= C.MP_HARNESS_CALLBACK_SLOTS {
		panic(fmt.Sprintf("pjrtharness: callback slot %d is not in [0, %d)", slot, C.MP_HARNESS_CALLBACK_SLOTS))
	}
}

func (e *Event) Destroy() error {
	var a C.PJRT_Event_Destroy_Args
	a.struct_size = C.PJRT_Event_Destroy_Args_STRUCT_SIZE
	a.event = e.e
	return takeError(C.mp_harness_PJRT_Event_Destroy(&a))
}

// NewEvent makes an event the caller sets, by PJRT_Event_Create.
func NewEvent() (*Event, error) {
	mustUse()
	var a C.PJRT_Event_Create_Args
	a.struct_size = C.PJRT_Event_Create_Args_STRUCT_SIZE
	err := takeError(C.mp_harness_PJRT_Event_Create(&a))
	return &Event{a.event}, err
}

// Set is PJRT_Event_Set, with code and msg (code 0: success).
func (e *Event) Set(code int, msg string) error {
	var a C.PJRT_Event_Set_Args
	a.struct_size = C.PJRT_Event_Set_Args_STRUCT_SIZE
	a.event = e.e
	a.error_code = C.PJRT_Error_Code(code)
	cs := C.CString(msg)
	defer C.free(unsafe.Pointer(cs))
	a.error_message, a.error_message_size = cs, C.size_t(len(msg))
	return takeError(C.mp_harness_PJRT_Event_Set(&a))
}

// HostArray is host memory in C, as a caller's array would be.
type HostArray struct {
	p unsafe.Pointer
	n int
}

// NewHostArray is a copy of data in C memory.
func NewHostArray(data []byte) *HostArray {
	p := C.calloc(C.size_t(max(len(data), 1)), 1)
	copy(unsafe.Slice((*byte)(p), len(data)), data)
	return &HostArray{p, len(data)}
}

func (h *HostArray) Bytes() []byte { return unsafe.Slice((*byte)(h.p), h.n) }
func (h *HostArray) Free()         { C.free(h.p) }

// Buffer is a PJRT_Buffer.
type Buffer struct{ b *C.PJRT_Buffer }

// Put makes a buffer of PJRT_Buffer_Type typ from host memory: data at
// offset at of host holds element [0...0] (strides may be negative), byte
// strides as given (nil: dense), with host_buffer_semantics sem.
func (h *Client) Put(host *HostArray, at int, typ int, dims, strides []int64, sem int) (*Buffer, *Event, error) {
	var a C.PJRT_Client_BufferFromHostBuffer_Args
	a.struct_size = C.PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE
	a.client = h.c
	a.data = unsafe.Add(host.p, at)
	a._type = C.PJRT_Buffer_Type(typ)
	cd := NewHostArray(int64Bytes(dims))
	defer cd.Free()
	a.dims, a.num_dims = (*C.int64_t)(cd.p), C.size_t(len(dims))
	if strides != nil {
		cs := NewHostArray(int64Bytes(strides))
		defer cs.Free()
		a.byte_strides, a.num_byte_strides = (*C.int64_t)(cs.p), C.size_t(len(strides))
	}
	a.host_buffer_semantics = C.PJRT_HostBufferSemantics(sem)
	if err := takeError(C.mp_harness_PJRT_Client_BufferFromHostBuffer(&a)); err != nil {
		return nil, nil, err
	}
	return &Buffer{a.buffer}, &Event{a.done_with_host_buffer}, nil
}

func int64Bytes(v []int64) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*8)
}

// Get reads a buffer back through PJRT_Buffer_ToHostBuffer, asking for the
// size first as jax may; strides nil means the default (dense) layout.
func (b *Buffer) Get(strides []int64) ([]byte, error) {
	var a C.PJRT_Buffer_ToHostBuffer_Args
	a.struct_size = C.PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE
	a.src = b.b
	var layout C.PJRT_Buffer_MemoryLayout
	var pin runtime.Pinner // what a points to, in Go memory
	defer pin.Unpin()
	if strides != nil {
		cs := NewHostArray(int64Bytes(strides))
		defer cs.Free()
		layout.struct_size = C.PJRT_Buffer_MemoryLayout_STRUCT_SIZE
		layout._type = C.PJRT_Buffer_MemoryLayout_Type_Strides
		s := C.mp_harness_layout_strides(&layout)
		s.struct_size = C.PJRT_Buffer_MemoryLayout_Strides_STRUCT_SIZE
		s.byte_strides, s.num_byte_strides = (*C.int64_t)(cs.p), C.size_t(len(strides))
		pin.Pin(&layout)
		a.host_layout = &layout
	}
	if err := takeError(C.mp_harness_PJRT_Buffer_ToHostBuffer(&a)); err != nil {
		return nil, err
	}
	dst := NewHostArray(make([]byte, a.dst_size))
	defer dst.Free()
	a.dst = dst.p
	if err := takeError(C.mp_harness_PJRT_Buffer_ToHostBuffer(&a)); err != nil {
		return nil, err
	}
	ev := &Event{a.event}
	defer ev.Destroy()
	if err := ev.Await(); err != nil {
		return nil, err
	}
	return append([]byte(nil), dst.Bytes()...), nil
}

func (b *Buffer) ReadyEvent() (*Event, error) {
	var a C.PJRT_Buffer_ReadyEvent_Args
	a.struct_size = C.PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE
	a.buffer = b.b
	err := takeError(C.mp_harness_PJRT_Buffer_ReadyEvent(&a))
	return &Event{a.event}, err
}

// Dims is the buffer's dimensions and PJRT_Buffer_Type.
func (b *Buffer) Dims() ([]int64, int, error) {
	var a C.PJRT_Buffer_Dimensions_Args
	a.struct_size = C.PJRT_Buffer_Dimensions_Args_STRUCT_SIZE
	a.buffer = b.b
	if err := takeError(C.mp_harness_PJRT_Buffer_Dimensions(&a)); err != nil {
		return nil, 0, err
	}
	var t C.PJRT_Buffer_ElementType_Args
	t.struct_size = C.PJRT_Buffer_ElementType_Args_STRUCT_SIZE
	t.buffer = b.b
	if err := takeError(C.mp_harness_PJRT_Buffer_ElementType(&t)); err != nil {
		return nil, 0, err
	}
	return append([]int64(nil), unsafe.Slice((*int64)(unsafe.Pointer(a.dims)), int(a.num_dims))...), int(t._type), nil
}

func (b *Buffer) Delete() error {
	var a C.PJRT_Buffer_Delete_Args
	a.struct_size = C.PJRT_Buffer_Delete_Args_STRUCT_SIZE
	a.buffer = b.b
	return takeError(C.mp_harness_PJRT_Buffer_Delete(&a))
}

func (b *Buffer) IsDeleted() (bool, error) {
	var a C.PJRT_Buffer_IsDeleted_Args
	a.struct_size = C.PJRT_Buffer_IsDeleted_Args_STRUCT_SIZE
	a.buffer = b.b
	err := takeError(C.mp_harness_PJRT_Buffer_IsDeleted(&a))
	return bool(a.is_deleted), err
}

func (b *Buffer) Destroy() error {
	var a C.PJRT_Buffer_Destroy_Args
	a.struct_size = C.PJRT_Buffer_Destroy_Args_STRUCT_SIZE
	a.buffer = b.b
	return takeError(C.mp_harness_PJRT_Buffer_Destroy(&a))
}

// Executable is a PJRT_LoadedExecutable.
type Executable struct{ e *C.PJRT_LoadedExecutable }

// Compile hands code and options to PJRT_Client_Compile as jax does.
func (h *Client) Compile(code []byte, format string, options []byte) (*Executable, error) {
	var p C.PJRT_Program
	p.struct_size = C.PJRT_Program_STRUCT_SIZE
	cc := NewHostArray(code)
	defer cc.Free()
	cf := NewHostArray([]byte(format))
	defer cf.Free()
	co := NewHostArray(options)
	defer co.Free()
	p.code, p.code_size = (*C.char)(cc.p), C.size_t(len(code))
	p.format, p.format_size = (*C.char)(cf.p), C.size_t(len(format))
	var pin runtime.Pinner // what a points to, in Go memory
	pin.Pin(&p)
	defer pin.Unpin()
	var a C.PJRT_Client_Compile_Args
	a.struct_size = C.PJRT_Client_Compile_Args_STRUCT_SIZE
	a.client = h.c
	a.program = &p
	a.compile_options, a.compile_options_size = (*C.char)(co.p), C.size_t(len(options))
	if err := takeError(C.mp_harness_PJRT_Client_Compile(&a)); err != nil {
		return nil, err
	}
	return &Executable{a.executable}, nil
}

// Describe is what jax reads of an executable after compiling it: its
// name, number of outputs, their PJRT_Buffer_Types and dimensions, and
// the serialized device assignment.
func (e *Executable) Describe() (name string, outputs int, types []int, dims [][]int64, assignment []byte, err error) {
	var g C.PJRT_LoadedExecutable_GetExecutable_Args
	g.struct_size = C.PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE
	g.loaded_executable = e.e
	if err := takeError(C.mp_harness_PJRT_LoadedExecutable_GetExecutable(&g)); err != nil {
		return "", 0, nil, nil, nil, err
	}
	defer func() {
		var d C.PJRT_Executable_Destroy_Args
		d.struct_size = C.PJRT_Executable_Destroy_Args_STRUCT_SIZE
		d.executable = g.executable
		if e := takeError(C.mp_harness_PJRT_Executable_Destroy(&d)); e != nil && err == nil {
			err = e
		}
	}()
	var n C.PJRT_Executable_Name_Args
	n.struct_size = C.PJRT_Executable_Name_Args_STRUCT_SIZE
	n.executable = g.executable
	if err := takeError(C.mp_harness_PJRT_Executable_Name(&n)); err != nil {
		return "", 0, nil, nil, nil, err
	}
	var o C.PJRT_Executable_NumOutputs_Args
	o.struct_size = C.PJRT_Executable_NumOutputs_Args_STRUCT_SIZE
	o.executable = g.executable
	if err := takeError(C.mp_harness_PJRT_Executable_NumOutputs(&o)); err != nil {
		return "", 0, nil, nil, nil, err
	}
	var t C.PJRT_Executable_OutputElementTypes_Args
	t.struct_size = C.PJRT_Executable_OutputElementTypes_Args_STRUCT_SIZE
	t.executable = g.executable
	if err := takeError(C.mp_harness_PJRT_Executable_OutputElementTypes(&t)); err != nil {
		return "", 0, nil, nil, nil, err
	}
	for _, x := range unsafe.Slice(t.output_types, int(t.num_output_types)) {
		types = append(types, int(x))
	}
	var d C.PJRT_Executable_OutputDimensions_Args
	d.struct_size = C.PJRT_Executable_OutputDimensions_Args_STRUCT_SIZE
	d.executable = g.executable
	if err := takeError(C.mp_harness_PJRT_Executable_OutputDimensions(&d)); err != nil {
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
	if err := takeError(C.mp_harness_PJRT_LoadedExecutable_GetDeviceAssignment(&da)); err != nil {
		return "", 0, nil, nil, nil, err
	}
	assignment = C.GoBytes(unsafe.Pointer(da.serialized_bytes), C.int(da.serialized_bytes_size))
	C.free(unsafe.Pointer(da.serialized_device_assignment)) // what the deleter does
	return C.GoStringN(n.executable_name, C.int(n.executable_name_size)), int(o.num_outputs), types, dims, assignment, nil
}

// Execute runs the executable on one device's arguments args, as jax
// does; keep lists the argument positions the call says are not
// donatable.
func (e *Executable) Execute(args []*Buffer, outputs int, keep ...int64) ([]*Buffer, *Event, error) {
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
	var done *C.PJRT_Event
	var pin runtime.Pinner // what a points to, in Go memory
	defer pin.Unpin()
	pin.Pin(&opts)
	pin.Pin(&in)
	pin.Pin(&out)
	pin.Pin(&done)
	var a C.PJRT_LoadedExecutable_Execute_Args
	a.struct_size = C.PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE
	a.executable = e.e
	a.options = &opts
	a.argument_lists = &in
	a.num_devices = 1
	a.num_args = C.size_t(len(args))
	a.output_lists = &out
	a.device_complete_events = &done
	if err := takeError(C.mp_harness_PJRT_LoadedExecutable_Execute(&a)); err != nil {
		return nil, nil, err
	}
	var res []*Buffer
	for _, b := range unsafe.Slice(out, outputs) {
		res = append(res, &Buffer{b})
	}
	return res, &Event{done}, nil
}

func (e *Executable) Destroy() error {
	var a C.PJRT_LoadedExecutable_Destroy_Args
	a.struct_size = C.PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE
	a.executable = e.e
	return takeError(C.mp_harness_PJRT_LoadedExecutable_Destroy(&a))
}

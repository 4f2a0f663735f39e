package pjrt

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/metalplug/metalplug/backend/status"
)

// deviceID is the one device's id, local hardware id and memory id.
const deviceID = 0

// memoryKind is the kind of the device's one memory space, the name jax
// uses for a device's default memory.
const memoryKind = "device"

// device is the client's one device, and its description: jax asks the
// description for what it can know without the device (id, kind), the
// device for the rest. Both C records lead here.
type device struct {
	client *client
	c      *C.PJRT_Device
	rec    unsafe.Pointer // c, as Go can store it in a C array
	desc   *C.PJRT_DeviceDescription

	kind, debug, str cstr
	attrs            *C.PJRT_NamedValue
	nattrs           int
}

func newDevice(c *client) *device {
	a := &c.arena
	d := &device{client: c}
	d.kind = a.cstr(c.kind)
	d.debug = a.cstr(fmt.Sprintf("%s:%d (%s; %s)", PlatformName, deviceID, c.kind, c.drv.Description()))
	d.str = a.cstr(fmt.Sprintf("MetalplugDevice(id=%d, kind=%s)", deviceID, c.kind))
	// Attributes may only be strings, integers and integer lists: jax
	// aborts on others. jax shows each as an attribute of the device
	// (jax.devices()[0].driver).
	attrs := []struct{ name, value string }{
		{"driver", c.drv.Name()},
		{"driver_description", c.drv.Description()},
	}
	list := a.alloc(len(attrs) * C.sizeof_PJRT_NamedValue)
	for i, at := range attrs {
		name, _ := a.str(at.name)
		value, _ := a.str(at.value)
		C.mp_named_string(namedValueAt(list, i), name, value)
	}
	d.attrs, d.nattrs = (*C.PJRT_NamedValue)(list), len(attrs)
	h := newHandle(d)
	d.rec = a.alloc(C.sizeof_PJRT_Device)
	d.c = (*C.PJRT_Device)(d.rec)
	d.c.handle = h
	d.desc = (*C.PJRT_DeviceDescription)(a.alloc(C.sizeof_PJRT_DeviceDescription))
	d.desc.handle = h
	return d
}

// destroy drops the handle; the records are in the client's arena.
func (d *device) destroy() {
	h := d.c.handle
	dropHandle(&h)
	d.c.handle, d.desc.handle = 0, 0
}

func deviceOf(p *C.PJRT_Device) (*device, error) {
	if p == nil {
		return nil, status.Invalidf("device is NULL")
	}
	return lookup[*device](p.handle, "device")
}

func descriptionOf(p *C.PJRT_DeviceDescription) (*device, error) {
	if p == nil {
		return nil, status.Invalidf("device_description is NULL")
	}
	return lookup[*device](p.handle, "device_description")
}

// memory is the device's one memory space. Its C record carries the
// vtable the ABI requires (abi.c) and lives in C memory of its own.
type memory struct {
	client           *client
	c                *C.PJRT_Memory
	rec              unsafe.Pointer // c, as Go can store it in a C array
	kind, debug, str cstr
}

func newMemory(c *client) *memory {
	a := &c.arena
	m := &memory{client: c}
	m.kind = a.cstr(memoryKind)
	m.debug = a.cstr(fmt.Sprintf("%s:%d %s memory (%s)", PlatformName, deviceID, memoryKind, c.kind))
	m.str = a.cstr(fmt.Sprintf("MEMORY_SPACE_%d(kind=%s)", deviceID, memoryKind))
	h := newHandle(m)
	m.rec = C.mp_memory_new(C.uintptr_t(h))
	if m.rec == nil {
		panic("out of host memory for a PJRT_Memory")
	}
	m.c = (*C.PJRT_Memory)(m.rec)
	return m
}

// destroy frees the record, running the destructors of the caller's user
// data attached to it.
func (m *memory) destroy() {
	dropHandle(&m.c.handle)
	C.mp_memory_free(m.rec)
	m.c, m.rec = nil, nil
}

func memoryOf(p *C.PJRT_Memory) (*memory, error) {
	if p == nil {
		return nil, status.Invalidf("memory is NULL")
	}
	return lookup[*memory](p.handle, "memory")
}

// ------------------------------------------------------ description exports

//export mp_PJRT_DeviceDescription_Id
func mp_PJRT_DeviceDescription_Id(args *C.PJRT_DeviceDescription_Id_Args) errT {
	return export("mp_PJRT_DeviceDescription_Id", args, C.PJRT_DeviceDescription_Id_Args_STRUCT_SIZE, deviceDescriptionID)
}

func deviceDescriptionID(args *C.PJRT_DeviceDescription_Id_Args) error {
	if _, err := descriptionOf(args.device_description); err != nil {
		return err
	}
	args.id = deviceID
	return nil
}

//export mp_PJRT_DeviceDescription_ProcessIndex
func mp_PJRT_DeviceDescription_ProcessIndex(args *C.PJRT_DeviceDescription_ProcessIndex_Args) errT {
	return export("mp_PJRT_DeviceDescription_ProcessIndex", args, C.PJRT_DeviceDescription_ProcessIndex_Args_STRUCT_SIZE, deviceDescriptionProcessIndex)
}

func deviceDescriptionProcessIndex(args *C.PJRT_DeviceDescription_ProcessIndex_Args) error {
	if _, err := descriptionOf(args.device_description); err != nil {
		return err
	}
	args.process_index = 0
	return nil
}

//export mp_PJRT_DeviceDescription_Attributes
func mp_PJRT_DeviceDescription_Attributes(args *C.PJRT_DeviceDescription_Attributes_Args) errT {
	return export("mp_PJRT_DeviceDescription_Attributes", args, C.PJRT_DeviceDescription_Attributes_Args_STRUCT_SIZE, deviceDescriptionAttributes)
}

func deviceDescriptionAttributes(args *C.PJRT_DeviceDescription_Attributes_Args) error {
	d, err := descriptionOf(args.device_description)
	if err != nil {
		return err
	}
	args.attributes, args.num_attributes = d.attrs, C.size_t(d.nattrs)
	return nil
}

//export mp_PJRT_DeviceDescription_Kind
func mp_PJRT_DeviceDescription_Kind(args *C.PJRT_DeviceDescription_Kind_Args) errT {
	return export("mp_PJRT_DeviceDescription_Kind", args, C.PJRT_DeviceDescription_Kind_Args_STRUCT_SIZE, deviceDescriptionKind)
}

func deviceDescriptionKind(args *C.PJRT_DeviceDescription_Kind_Args) error {
	d, err := descriptionOf(args.device_description)
	if err != nil {
		return err
	}
	args.device_kind, args.device_kind_size = d.kind.p, d.kind.n
	return nil
}

//export mp_PJRT_DeviceDescription_DebugString
func mp_PJRT_DeviceDescription_DebugString(args *C.PJRT_DeviceDescription_DebugString_Args) errT {
	return export("mp_PJRT_DeviceDescription_DebugString", args, C.PJRT_DeviceDescription_DebugString_Args_STRUCT_SIZE, deviceDescriptionDebugString)
}

func deviceDescriptionDebugString(args *C.PJRT_DeviceDescription_DebugString_Args) error {
	d, err := descriptionOf(args.device_description)
	if err != nil {
		return err
	}
	args.debug_string, args.debug_string_size = d.debug.p, d.debug.n
	return nil
}

//export mp_PJRT_DeviceDescription_ToString
func mp_PJRT_DeviceDescription_ToString(args *C.PJRT_DeviceDescription_ToString_Args) errT {
	return export("mp_PJRT_DeviceDescription_ToString", args, C.PJRT_DeviceDescription_ToString_Args_STRUCT_SIZE, deviceDescriptionToString)
}

func deviceDescriptionToString(args *C.PJRT_DeviceDescription_ToString_Args) error {
	d, err := descriptionOf(args.device_description)
	if err != nil {
		return err
	}
	args.to_string, args.to_string_size = d.str.p, d.str.n
	return nil
}

// ----------------------------------------------------------- device exports

//export mp_PJRT_Device_GetDescription
func mp_PJRT_Device_GetDescription(args *C.PJRT_Device_GetDescription_Args) errT {
	return export("mp_PJRT_Device_GetDescription", args, C.PJRT_Device_GetDescription_Args_STRUCT_SIZE, deviceGetDescription)
}

func deviceGetDescription(args *C.PJRT_Device_GetDescription_Args) error {
	d, err := deviceOf(args.device)
	if err != nil {
		return err
	}
	args.device_description = d.desc
	return nil
}

//export mp_PJRT_Device_IsAddressable
func mp_PJRT_Device_IsAddressable(args *C.PJRT_Device_IsAddressable_Args) errT {
	return export("mp_PJRT_Device_IsAddressable", args, C.PJRT_Device_IsAddressable_Args_STRUCT_SIZE, deviceIsAddressable)
}

func deviceIsAddressable(args *C.PJRT_Device_IsAddressable_Args) error {
	if _, err := deviceOf(args.device); err != nil {
		return err
	}
	args.is_addressable = true
	return nil
}

//export mp_PJRT_Device_LocalHardwareId
func mp_PJRT_Device_LocalHardwareId(args *C.PJRT_Device_LocalHardwareId_Args) errT {
	return export("mp_PJRT_Device_LocalHardwareId", args, C.PJRT_Device_LocalHardwareId_Args_STRUCT_SIZE, deviceLocalHardwareID)
}

func deviceLocalHardwareID(args *C.PJRT_Device_LocalHardwareId_Args) error {
	if _, err := deviceOf(args.device); err != nil {
		return err
	}
	args.local_hardware_id = deviceID
	return nil
}

//export mp_PJRT_Device_AddressableMemories
func mp_PJRT_Device_AddressableMemories(args *C.PJRT_Device_AddressableMemories_Args) errT {
	return export("mp_PJRT_Device_AddressableMemories", args, C.PJRT_Device_AddressableMemories_Args_STRUCT_SIZE, deviceAddressableMemories)
}

func deviceAddressableMemories(args *C.PJRT_Device_AddressableMemories_Args) error {
	d, err := deviceOf(args.device)
	if err != nil {
		return err
	}
	args.memories, args.num_memories = d.client.memories, 1
	return nil
}

//export mp_PJRT_Device_DefaultMemory
func mp_PJRT_Device_DefaultMemory(args *C.PJRT_Device_DefaultMemory_Args) errT {
	return export("mp_PJRT_Device_DefaultMemory", args, C.PJRT_Device_DefaultMemory_Args_STRUCT_SIZE, deviceDefaultMemory)
}

func deviceDefaultMemory(args *C.PJRT_Device_DefaultMemory_Args) error {
	d, err := deviceOf(args.device)
	if err != nil {
		return err
	}
	args.memory = d.client.mem.c
	return nil
}

//export mp_PJRT_Device_MemoryStats
func mp_PJRT_Device_MemoryStats(args *C.PJRT_Device_MemoryStats_Args) errT {
	// Fields up to bytes_limit_is_set are what we report; a caller whose
	// struct is shorter than ours does not get the later ones.
	return export("mp_PJRT_Device_MemoryStats", args, fieldEnd(unsafe.Offsetof(args.bytes_limit_is_set), unsafe.Sizeof(args.bytes_limit_is_set)), deviceMemoryStats)
}

func deviceMemoryStats(args *C.PJRT_Device_MemoryStats_Args) error {
	d, err := deviceOf(args.device)
	if err != nil {
		return err
	}
	// The caller's struct is not zeroed (jax's is on its stack), and a
	// stale *_is_set would make garbage a statistic: clear every field we
	// know and the caller has, then set what we know.
	end := min(uintptr(args.struct_size), uintptr(C.PJRT_Device_MemoryStats_Args_STRUCT_SIZE))
	from := unsafe.Offsetof(args.bytes_in_use)
	clear(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(args), from)), end-from))
	m := &d.client.stats
	m.mu.Lock()
	defer m.mu.Unlock()
	args.bytes_in_use = C.int64_t(m.inUse)
	args.peak_bytes_in_use, args.peak_bytes_in_use_is_set = C.int64_t(m.peak), true
	args.num_allocs, args.num_allocs_is_set = C.int64_t(m.allocs), true
	args.largest_alloc_size, args.largest_alloc_size_is_set = C.int64_t(m.largest), true
	args.bytes_limit, args.bytes_limit_is_set = C.int64_t(m.limit), C.bool(m.limitSet)
	if has(args.struct_size, fieldEnd(unsafe.Offsetof(args.peak_allocated_bytes_is_set), unsafe.Sizeof(args.peak_allocated_bytes_is_set))) {
		args.peak_allocated_bytes, args.peak_allocated_bytes_is_set = C.int64_t(m.peak), true
	}
	return nil
}

//export mp_PJRT_Device_ClearMemoryStats
func mp_PJRT_Device_ClearMemoryStats(args *C.PJRT_Device_ClearMemoryStats_Args) errT {
	return export("mp_PJRT_Device_ClearMemoryStats", args, C.PJRT_Device_ClearMemoryStats_Args_STRUCT_SIZE, deviceClearMemoryStats)
}

func deviceClearMemoryStats(args *C.PJRT_Device_ClearMemoryStats_Args) error {
	d, err := deviceOf(args.device)
	if err != nil {
		return err
	}
	d.client.stats.clear()
	return nil
}

//export mp_PJRT_Device_GetAttributes
func mp_PJRT_Device_GetAttributes(args *C.PJRT_Device_GetAttributes_Args) errT {
	return export("mp_PJRT_Device_GetAttributes", args, C.PJRT_Device_GetAttributes_Args_STRUCT_SIZE, deviceGetAttributes)
}

func deviceGetAttributes(args *C.PJRT_Device_GetAttributes_Args) error {
	d, err := deviceOf(args.device)
	if err != nil {
		return err
	}
	C.mp_give_device_attributes(args, d.attrs, C.size_t(d.nattrs))
	return nil
}

// ----------------------------------------------------------- memory exports

//export mp_PJRT_Memory_Id
func mp_PJRT_Memory_Id(args *C.PJRT_Memory_Id_Args) errT {
	return export("mp_PJRT_Memory_Id", args, C.PJRT_Memory_Id_Args_STRUCT_SIZE, memoryID)
}

func memoryID(args *C.PJRT_Memory_Id_Args) error {
	if _, err := memoryOf(args.memory); err != nil {
		return err
	}
	args.id = deviceID
	return nil
}

//export mp_PJRT_Memory_Kind
func mp_PJRT_Memory_Kind(args *C.PJRT_Memory_Kind_Args) errT {
	return export("mp_PJRT_Memory_Kind", args, C.PJRT_Memory_Kind_Args_STRUCT_SIZE, memoryKindName)
}

func memoryKindName(args *C.PJRT_Memory_Kind_Args) error {
	m, err := memoryOf(args.memory)
	if err != nil {
		return err
	}
	args.kind, args.kind_size = m.kind.p, m.kind.n
	return nil
}

//export mp_PJRT_Memory_Kind_Id
func mp_PJRT_Memory_Kind_Id(args *C.PJRT_Memory_Kind_Id_Args) errT {
	return export("mp_PJRT_Memory_Kind_Id", args, C.PJRT_Memory_Kind_Id_Args_STRUCT_SIZE, memoryKindID)
}

func memoryKindID(args *C.PJRT_Memory_Kind_Id_Args) error {
	if _, err := memoryOf(args.memory); err != nil {
		return err
	}
	args.kind_id = 0 // the only kind
	return nil
}

//export mp_PJRT_Memory_DebugString
func mp_PJRT_Memory_DebugString(args *C.PJRT_Memory_DebugString_Args) errT {
	return export("mp_PJRT_Memory_DebugString", args, C.PJRT_Memory_DebugString_Args_STRUCT_SIZE, memoryDebugString)
}

func memoryDebugString(args *C.PJRT_Memory_DebugString_Args) error {
	m, err := memoryOf(args.memory)
	if err != nil {
		return err
	}
	args.debug_string, args.debug_string_size = m.debug.p, m.debug.n
	return nil
}

//export mp_PJRT_Memory_ToString
func mp_PJRT_Memory_ToString(args *C.PJRT_Memory_ToString_Args) errT {
	return export("mp_PJRT_Memory_ToString", args, C.PJRT_Memory_ToString_Args_STRUCT_SIZE, memoryToString)
}

func memoryToString(args *C.PJRT_Memory_ToString_Args) error {
	m, err := memoryOf(args.memory)
	if err != nil {
		return err
	}
	args.to_string, args.to_string_size = m.str.p, m.str.n
	return nil
}

//export mp_PJRT_Memory_AddressableByDevices
func mp_PJRT_Memory_AddressableByDevices(args *C.PJRT_Memory_AddressableByDevices_Args) errT {
	return export("mp_PJRT_Memory_AddressableByDevices", args, C.PJRT_Memory_AddressableByDevices_Args_STRUCT_SIZE, memoryAddressableByDevices)
}

func memoryAddressableByDevices(args *C.PJRT_Memory_AddressableByDevices_Args) error {
	m, err := memoryOf(args.memory)
	if err != nil {
		return err
	}
	args.devices, args.num_devices = m.client.devices, 1
	return nil
}

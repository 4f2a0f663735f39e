package pjrt

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"github.com/metalplug/metalplug/backend/stats"
	"github.com/metalplug/metalplug/backend/status"
	"sync"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/plugin/cenv"
	backing "github.com/metalplug/metalplug/plugin/device"
	_ "github.com/metalplug/metalplug/plugin/statsapi" // metalplug_stats, for metalplug.stats()
)

// chooseDriver is the process's driver (plugin/device, shared with
// TensorFlow's frontend), asked for at the first PJRT_Client_Create, not at
// load: jax loads every plugin it finds, and asks few of them for a client.
func chooseDriver() (driver.Driver, string, error) {
	if cenv.Get("METALPLUG_DISABLE") == "1" {
		return nil, "", status.Errorf(status.FailedPrecondition, "metalplug is disabled (METALPLUG_DISABLE=1): no device offered")
	}
	d, kind, why := backing.For(stats.JAX)
	if d == nil {
		return nil, "", status.Errorf(status.FailedPrecondition, "%s", why)
	}
	return d, deviceKind(kind), nil
}

// The device kinds jax shows (jax.devices()[0].device_kind): which driver
// backs the device, said plainly.
func deviceKind(k backing.Kind) string {
	switch k {
	case backing.Metal:
		return "metal"
	case backing.MetalModel:
		return "metal (model of MPSGraph, on the CPU)"
	}
	return "host (reference driver)"
}

// client is one PJRT_Client: the device, its memory and the stream all
// work runs on. One stream keeps every copy and execution in the order
// jax issued it, so no buffer needs an event to order its users.
type client struct {
	c     *C.PJRT_Client
	drv   driver.Driver
	kind  string // the device kind: which driver
	arena arena  // strings and arrays handed to C, freed with the client

	name, version cstr
	dev           *device
	mem           *memory
	devices       **C.PJRT_Device // C arrays of one
	memories      **C.PJRT_Memory

	// mu orders what touches the stream or a buffer's memory: enqueues,
	// deletes, and replacing a failed stream.
	mu     sync.Mutex
	stream driver.Stream
	gen    int // bumped when a failed stream is replaced
	closed bool

	stats   memStats
	pending pendingFrees
}

// pendingFrees counts the frees waiting for the stream to pass the work
// that used their memory (buffer.freeAfterStream). jax dispatches ahead of
// the stream, so memory it has let go of can still be held; an allocation
// that fails waits for those frees and tries again.
type pendingFrees struct {
	mu              sync.Mutex
	done            sync.Cond // on mu, set by newClientOn
	issued, settled uint64
}

func (p *pendingFrees) add() {
	p.mu.Lock()
	p.issued++
	p.mu.Unlock()
}

func (p *pendingFrees) settle() {
	p.mu.Lock()
	p.settled++
	p.done.Broadcast()
	p.mu.Unlock()
}

// wait blocks until every free issued before it has happened, and reports
// whether there were any.
func (p *pendingFrees) wait() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	target := p.issued
	if p.settled >= target {
		return false
	}
	for p.settled < target {
		p.done.Wait()
	}
	return true
}

// cstr is a C string in an arena, and its length.
type cstr struct {
	p *C.char
	n C.size_t
}

func (a *arena) cstr(s string) cstr {
	p, n := a.str(s)
	return cstr{p, n}
}

func newClient() (*client, error) {
	d, kind, err := chooseDriver()
	if err != nil {
		return nil, err
	}
	return newClientOn(d, kind)
}

// newClientOn makes a client of driver d, whose device is of kind.
func newClientOn(d driver.Driver, kind string) (*client, error) {
	s, err := d.NewStream()
	if err != nil {
		return nil, fmt.Errorf("creating the device's stream: %w", err)
	}
	c := &client{drv: d, kind: kind, stream: s}
	c.pending.done.L = &c.pending.mu
	c.name = c.arena.cstr(PlatformName)
	c.version = c.arena.cstr(fmt.Sprintf("metalplug, PJRT C API %d.%d, %s driver: %s",
		C.MP_PJRT_MAJOR, C.MP_PJRT_MINOR, d.Name(), d.Description()))
	c.dev = newDevice(c)
	c.mem = newMemory(c)
	devices := c.arena.alloc(int(unsafe.Sizeof(uintptr(0))))
	*(*unsafe.Pointer)(devices) = c.dev.rec
	c.devices = (**C.PJRT_Device)(devices)
	memories := c.arena.alloc(int(unsafe.Sizeof(uintptr(0))))
	*(*unsafe.Pointer)(memories) = c.mem.rec
	c.memories = (**C.PJRT_Memory)(memories)
	c.stats.limit, c.stats.limitSet = limitOf(d)
	c.c = (*C.PJRT_Client)(c.arena.alloc(C.sizeof_PJRT_Client))
	c.c.handle = newHandle(c)
	return c, nil
}

func limitOf(d driver.Driver) (int64, bool) {
	_, total := d.MemoryUsage()
	return total, total > 0
}

// destroy waits for the client's work, then frees what it handed C. The
// driver lives on (other clients, and TensorFlow, may share it).
func (c *client) destroy() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	s := c.stream
	c.mu.Unlock()
	err := s.Close()
	if errors.Is(err, driver.ErrStreamClosed) {
		err = nil
	}
	c.dev.destroy()
	c.mem.destroy()
	dropHandle(&c.c.handle)
	c.arena.free()
	return err
}

// withStream runs fn with the live stream, under the client's lock. A
// stream that failed (a program that faulted) fails every later task, so
// it is replaced; gen tells buffers made on the old one apart.
func (c *client) withStream(fn func(s driver.Stream) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return status.Errorf(status.FailedPrecondition, "the client has been destroyed")
	}
	if failed := c.stream.Err(); failed != nil {
		s, err := c.drv.NewStream()
		if err != nil {
			return fmt.Errorf("replacing the device's failed stream (%v): %w", failed, err)
		}
		old := c.stream
		c.stream, c.gen = s, c.gen+1
		logf("the device's stream failed (%v); later work runs on a new one", failed)
		go safely("closing a failed stream", func() { old.Close() })
	}
	return fn(c.stream)
}

func clientOf(p *C.PJRT_Client) (*client, error) {
	if p == nil {
		return nil, status.Invalidf("client is NULL")
	}
	return lookup[*client](p.handle, "client")
}

// memStats are the client's allocations, for PJRT_Device_MemoryStats.
type memStats struct {
	mu                  sync.Mutex
	inUse, peak, allocs int64
	largest             int64
	limit               int64
	limitSet            bool
}

func (m *memStats) allocated(n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inUse += n
	m.allocs++
	m.largest = max(m.largest, n)
	m.peak = max(m.peak, m.inUse)
}

func (m *memStats) freed(n int64) {
	m.mu.Lock()
	m.inUse -= n
	m.mu.Unlock()
}

// clear restarts the peaks from what is in use now.
func (m *memStats) clear() {
	m.mu.Lock()
	m.peak, m.largest, m.allocs = m.inUse, 0, 0
	m.mu.Unlock()
}

// ----------------------------------------------------------------- exports

//export mp_PJRT_Client_Create
func mp_PJRT_Client_Create(args *C.PJRT_Client_Create_Args) errT {
	// The kv_try_get fields came later than the client; we use neither.
	return export("mp_PJRT_Client_Create", args, fieldEnd(unsafe.Offsetof(args.client), unsafe.Sizeof(args.client)), clientCreate)
}

func clientCreate(args *C.PJRT_Client_Create_Args) error {
	// Options (jax_pjrt_client_create_options) are accepted and ignored:
	// there is nothing about one device on one stream to configure.
	c, err := newClient()
	if err != nil {
		return err
	}
	args.client = c.c
	return nil
}

//export mp_PJRT_Client_Destroy
func mp_PJRT_Client_Destroy(args *C.PJRT_Client_Destroy_Args) errT {
	return export("mp_PJRT_Client_Destroy", args, C.PJRT_Client_Destroy_Args_STRUCT_SIZE, clientDestroy)
}

func clientDestroy(args *C.PJRT_Client_Destroy_Args) error {
	if args.client == nil {
		return nil
	}
	c, err := clientOf(args.client)
	if err != nil {
		return err
	}
	// The C record is in the arena destroy frees: read nothing after it.
	if err := c.destroy(); err != nil {
		logf("PJRT_Client_Destroy: the stream had failed: %v", err)
	}
	return nil
}

//export mp_PJRT_Client_PlatformName
func mp_PJRT_Client_PlatformName(args *C.PJRT_Client_PlatformName_Args) errT {
	return export("mp_PJRT_Client_PlatformName", args, C.PJRT_Client_PlatformName_Args_STRUCT_SIZE, clientPlatformName)
}

func clientPlatformName(args *C.PJRT_Client_PlatformName_Args) error {
	c, err := clientOf(args.client)
	if err != nil {
		return err
	}
	args.platform_name, args.platform_name_size = c.name.p, c.name.n
	return nil
}

//export mp_PJRT_Client_ProcessIndex
func mp_PJRT_Client_ProcessIndex(args *C.PJRT_Client_ProcessIndex_Args) errT {
	return export("mp_PJRT_Client_ProcessIndex", args, C.PJRT_Client_ProcessIndex_Args_STRUCT_SIZE, clientProcessIndex)
}

func clientProcessIndex(args *C.PJRT_Client_ProcessIndex_Args) error {
	if _, err := clientOf(args.client); err != nil {
		return err
	}
	args.process_index = 0
	return nil
}

//export mp_PJRT_Client_PlatformVersion
func mp_PJRT_Client_PlatformVersion(args *C.PJRT_Client_PlatformVersion_Args) errT {
	return export("mp_PJRT_Client_PlatformVersion", args, C.PJRT_Client_PlatformVersion_Args_STRUCT_SIZE, clientPlatformVersion)
}

func clientPlatformVersion(args *C.PJRT_Client_PlatformVersion_Args) error {
	c, err := clientOf(args.client)
	if err != nil {
		return err
	}
	args.platform_version, args.platform_version_size = c.version.p, c.version.n
	return nil
}

//export mp_PJRT_Client_Devices
func mp_PJRT_Client_Devices(args *C.PJRT_Client_Devices_Args) errT {
	return export("mp_PJRT_Client_Devices", args, C.PJRT_Client_Devices_Args_STRUCT_SIZE, clientDevices)
}

func clientDevices(args *C.PJRT_Client_Devices_Args) error {
	c, err := clientOf(args.client)
	if err != nil {
		return err
	}
	args.devices, args.num_devices = c.devices, 1
	return nil
}

//export mp_PJRT_Client_AddressableDevices
func mp_PJRT_Client_AddressableDevices(args *C.PJRT_Client_AddressableDevices_Args) errT {
	return export("mp_PJRT_Client_AddressableDevices", args, C.PJRT_Client_AddressableDevices_Args_STRUCT_SIZE, clientAddressableDevices)
}

func clientAddressableDevices(args *C.PJRT_Client_AddressableDevices_Args) error {
	c, err := clientOf(args.client)
	if err != nil {
		return err
	}
	args.addressable_devices, args.num_addressable_devices = c.devices, 1
	return nil
}

//export mp_PJRT_Client_LookupDevice
func mp_PJRT_Client_LookupDevice(args *C.PJRT_Client_LookupDevice_Args) errT {
	return export("mp_PJRT_Client_LookupDevice", args, C.PJRT_Client_LookupDevice_Args_STRUCT_SIZE, clientLookupDevice)
}

func clientLookupDevice(args *C.PJRT_Client_LookupDevice_Args) error {
	c, err := clientOf(args.client)
	if err != nil {
		return err
	}
	if args.id != deviceID {
		return status.Errorf(status.NotFound, "no device with id %d: metalplug has one device, id %d", args.id, deviceID)
	}
	args.device = c.dev.c
	return nil
}

//export mp_PJRT_Client_LookupAddressableDevice
func mp_PJRT_Client_LookupAddressableDevice(args *C.PJRT_Client_LookupAddressableDevice_Args) errT {
	return export("mp_PJRT_Client_LookupAddressableDevice", args, C.PJRT_Client_LookupAddressableDevice_Args_STRUCT_SIZE, clientLookupAddressableDevice)
}

func clientLookupAddressableDevice(args *C.PJRT_Client_LookupAddressableDevice_Args) error {
	c, err := clientOf(args.client)
	if err != nil {
		return err
	}
	if args.local_hardware_id != deviceID {
		return status.Errorf(status.NotFound, "no device with local hardware id %d: metalplug has one device, id %d", args.local_hardware_id, deviceID)
	}
	args.addressable_device = c.dev.c
	return nil
}

//export mp_PJRT_Client_AddressableMemories
func mp_PJRT_Client_AddressableMemories(args *C.PJRT_Client_AddressableMemories_Args) errT {
	return export("mp_PJRT_Client_AddressableMemories", args, C.PJRT_Client_AddressableMemories_Args_STRUCT_SIZE, clientAddressableMemories)
}

func clientAddressableMemories(args *C.PJRT_Client_AddressableMemories_Args) error {
	c, err := clientOf(args.client)
	if err != nil {
		return err
	}
	args.addressable_memories, args.num_addressable_memories = c.memories, 1
	return nil
}

//export mp_PJRT_Client_DefaultDeviceAssignment
func mp_PJRT_Client_DefaultDeviceAssignment(args *C.PJRT_Client_DefaultDeviceAssignment_Args) errT {
	return export("mp_PJRT_Client_DefaultDeviceAssignment", args, C.PJRT_Client_DefaultDeviceAssignment_Args_STRUCT_SIZE, clientDefaultDeviceAssignment)
}

func clientDefaultDeviceAssignment(args *C.PJRT_Client_DefaultDeviceAssignment_Args) error {
	if _, err := clientOf(args.client); err != nil {
		return err
	}
	r, p := int64(args.num_replicas), int64(args.num_partitions)
	if r != 1 || p != 1 {
		return status.Invalidf("%d replicas × %d partitions need %d devices; metalplug has one", r, p, r*p)
	}
	if args.default_assignment_size < 1 || args.default_assignment == nil {
		return status.Invalidf("default_assignment has room for %d entries, needs 1", args.default_assignment_size)
	}
	*args.default_assignment = deviceID
	return nil
}

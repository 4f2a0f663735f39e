// Package metal is the Apple-GPU driver: it runs IR programs as compiled
// MPSGraph executables. The lowering and the driver are plain Go, built on
// every OS, over package gpu's interface: on darwin (Open) a thin adapter
// sends each call to the system Metal device through darwinkit v0.5.0; on
// any OS (OpenModel) package model, a model of MPSGraph's documented
// semantics, runs the same lowering, so the conformance suite, the sweep
// and training run it where there is no Mac.
//
// Memory is unified: Allocate maps page-aligned anonymous memory and wraps it,
// without a copy, in a shared-storage MTLBuffer, so that the frontend's
// pointers are the GPU's memory. A registry maps any pointer inside an
// allocation to its buffer and offset, because TensorFlow's allocator carves
// allocations into tensors; pointers outside every allocation (host-memory
// tensors) are staged through scratch buffers.
//
// Every stream owns an MTLCommandQueue and a goroutine that drains an
// in-order task queue, as the host driver's streams do. GPU work is encoded
// into MPSCommandBuffers and committed without waiting, so consecutive
// executions pipeline on the queue; CPU work (copies involving host memory,
// memsets, host callbacks) first waits for the stream's command buffers in
// flight. Events are Go-side marks completed from command-buffer completion
// handlers, for the reasons given on type event.
//
// Programs compile to MPSGraphExecutables, cached by program key (bounded). Each IR op
// lowers to MPSGraph operations in the file of its family; an op or case that
// MPSGraph cannot express exactly (see NotLowered and Fallbacks) makes Compile
// return a *driver.Unsupported, and Place says which instructions those are:
// backend/split runs them on the host, over the same unified memory. Metal
// has no float64, so an instruction that computes in float64 is one of
// those too (planned, and said once: the program's types chose it).
//
// The darwin adapter has not run on a Mac from this repository's machines:
// it is type-checked for darwin/arm64 by setup/darwincheck. Everything else
// runs here, against the model.
package metal

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"github.com/metalplug/metalplug/backend/cache"
	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
	"github.com/metalplug/metalplug/backend/ir"
)

// Options configure a Driver.
type Options struct {
	// MemoryBytes caps the bytes that may be allocated at once; 0 means the
	// device's recommendedMaxWorkingSetSize.
	MemoryBytes int64
}

// Driver is the Metal driver. It is safe for concurrent use.
type Driver struct {
	dev      gpu.Device
	name     string // "metal", or "metal-model" on the model
	capacity int64
	pageSize int
	opts     Options

	mem memory

	cache *cache.LRU[ir.Key, *executable] // by program key, bounded in count and instructions (package cache)
}

var _ driver.Driver = (*Driver)(nil)

// ErrNoDevice is what Open returns where there is no Metal device.
var ErrNoDevice = errors.New("metal: no Metal device")

// MinimumMacOS is the first release the lowering runs on. The driver holds
// bool as uint8, and before macOS 13.0 uint8 is not native in MPSGraph's
// kernels (PyTorch's MPS backend refuses uint8 unary and binary ops there:
// "MPS support unary op with uint8 natively starting from macOS 13.0");
// every comparison, select and mask would need a conversion around it.
// 13.0 also brings the bitwise ops, argSort and cumulativeSum that sort,
// random bits and exact wide gathers are built from, so nothing below it
// needs a second lowering.
var MinimumMacOS = gpu.Version{Major: 13, Minor: 0}

func newDriver(dev gpu.Device, name string, opts Options) (*Driver, error) {
	if v := dev.MacOS(); !v.AtLeast(MinimumMacOS) {
		return nil, fmt.Errorf("metal: %v is too old: metalplug needs %v or later", v, MinimumMacOS)
	}
	d := &Driver{
		dev:      dev,
		name:     name,
		pageSize: os.Getpagesize(),
		opts:     opts,
		cache:    cache.NewWeighted[ir.Key](cache.ExecutableCacheSize, cache.ExecutableCacheInstructions, func(e *executable) int64 { return int64(e.prog.Size()) }),
		capacity: opts.MemoryBytes,
	}
	if d.capacity <= 0 {
		d.capacity = dev.WorkingSet()
	}
	if d.capacity <= 0 {
		return nil, fmt.Errorf("metal: device %q reports no working-set size", dev.Name())
	}
	return d, nil
}

// New is Open for callers that cannot handle an error, such as drivertest's
// constructor: it panics when there is no Metal device.
func New(opts Options) *Driver {
	d, err := Open(opts)
	if err != nil {
		panic(err)
	}
	return d
}

// Name implements driver.Driver: "metal" on a GPU, "metal-model" on the
// model of MPSGraph.
func (d *Driver) Name() string { return d.name }

// Description implements driver.Driver.
func (d *Driver) Description() string {
	if d.name != "metal" {
		return fmt.Sprintf("%s (%v): the Metal lowering run against a model of MPSGraph, on the CPU; not a GPU", d.dev.Name(), d.dev.MacOS())
	}
	return fmt.Sprintf("Apple GPU %s through Metal Performance Shaders Graph", d.dev.Name())
}

// MacOS is the release whose MPSGraph the driver builds for.
func (d *Driver) MacOS() gpu.Version { return d.dev.MacOS() }

// MemoryUsage reports the bytes this driver has mapped and its capacity
// (recommendedMaxWorkingSetSize unless Options say otherwise). The used
// figure is our own count, not the device's currentAllocatedSize: that one
// also moves with MPSGraph's private allocations, so it could not tell a
// frontend what its own Allocate and Free did (DeviceAllocatedBytes has it).
func (d *Driver) MemoryUsage() (used, total int64) {
	return d.mem.usedBytes(), d.capacity
}

// DeviceAllocatedBytes is the device's currentAllocatedSize: everything the
// process has allocated on the GPU, MPSGraph's intermediates included.
func (d *Driver) DeviceAllocatedBytes() int64 { return d.dev.AllocatedBytes() }

// NewEvent makes an event no stream has recorded, which counts as complete.
func (d *Driver) NewEvent() driver.Event { return &event{} }

// NewStream makes a stream with its own command queue.
func (d *Driver) NewStream() (driver.Stream, error) { return newStream(d) }

// Compile lowers p to an MPSGraph executable; a program that needs something
// not lowered is a *driver.Unsupported. Executables are cached by the program's
// key, so compiling an identical program again costs one lookup. An
// executable the bounded cache drops releases its device objects once
// nothing in Go (a stream's queue, a kernel's program cache) still holds it.
func (d *Driver) Compile(p *ir.Program) (driver.Executable, error) {
	if p == nil {
		return nil, fmt.Errorf("metal: compile: nil program")
	}
	key := p.Key()
	if e, ok := d.cache.Get(key); ok {
		return e, nil
	}
	e, err := d.compile(p)
	if err != nil {
		return nil, err
	}
	held := d.cache.Add(key, e)
	if held != e {
		e.release() // another thread compiled the same program first
		return held, nil
	}
	if e.exe != nil {
		runtime.AddCleanup(e, func(x gpu.Executable) { x.Release() }, e.exe)
	}
	return e, nil
}

// Lookup maps a pointer anywhere inside a live allocation to the
// allocation's base, the pointer's offset and the size asked for.
func (d *Driver) Lookup(p unsafe.Pointer) (base unsafe.Pointer, offset, size int, ok bool) {
	a, off, ok := d.mem.lookup(p)
	if !ok {
		return nil, 0, 0, false
	}
	return a.ptr, off, a.size, true
}

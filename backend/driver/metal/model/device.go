package model

import (
	"fmt"
	"sync/atomic"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
)

// Options choose what the model is a model of.
type Options struct {
	MacOS      gpu.Version // the release to model; zero means gpu.Version{15, 0}
	WorkingSet int64       // recommendedMaxWorkingSetSize; zero means 8 GiB
}

// New is a device modelling MPSGraph on the given release.
func New(opts Options) gpu.Device {
	if opts.MacOS == (gpu.Version{}) {
		opts.MacOS = gpu.Version{Major: 15}
	}
	if opts.WorkingSet == 0 {
		opts.WorkingSet = 8 << 30
	}
	return &device{macOS: opts.MacOS, workingSet: opts.WorkingSet}
}

type device struct {
	macOS      gpu.Version
	workingSet int64
	allocated  atomic.Int64 // bytes of this device's live buffers
}

func (d *device) Name() string          { return "MPSGraph model" }
func (d *device) MacOS() gpu.Version    { return d.macOS }
func (d *device) WorkingSet() int64     { return d.workingSet }
func (d *device) AllocatedBytes() int64 { return d.allocated.Load() }

// NewBuffer wraps mem without a copy, as newBufferWithBytesNoCopy does: the
// CPU's writes to mem are the GPU's reads. Metal refuses an empty buffer.
// (Metal also wants mem page-aligned; a Go slice's address is not checked.)
func (d *device) NewBuffer(mem []byte) (gpu.Buffer, error) {
	if len(mem) == 0 {
		return nil, fmt.Errorf("MPSGraph model: newBufferWithBytesNoCopy: an empty buffer")
	}
	return d.track(mem), nil
}

// NewScratch allocates n bytes, zeroed as a new MTLBuffer is.
func (d *device) NewScratch(n int) (gpu.Buffer, error) {
	if n <= 0 {
		return nil, fmt.Errorf("MPSGraph model: newBufferWithLength: %d bytes", n)
	}
	return d.track(make([]byte, n)), nil
}

func (d *device) track(mem []byte) *buffer {
	d.allocated.Add(int64(len(mem)))
	return &buffer{dev: d, mem: mem}
}

// reserve holds n bytes of the working set for a graph's intermediates
// while it runs, until release. The model takes recommendedMaxWorkingSetSize
// as the device's memory and refuses to go past it, the stricter reading:
// macOS may let a process page past it, but a Mac whose memory is short
// fails the command buffer with MTLCommandBufferErrorOutOfMemory, and a
// driver must handle that, not rely on paging.
func (d *device) reserve(n int64) (release func(), err error) {
	if n <= 0 {
		return func() {}, nil
	}
	if now := d.allocated.Add(n); now > d.workingSet {
		d.allocated.Add(-n)
		return nil, fmt.Errorf("MPSGraph model: run: Insufficient Memory (MTLCommandBufferErrorOutOfMemory): the graph's intermediates need %d bytes at once, with %d of the device's %d bytes free: %w",
			n, max(d.workingSet-(now-n), 0), d.workingSet, gpu.ErrOutOfMemory)
	}
	return func() { d.allocated.Add(-n) }, nil
}

func (d *device) NewGraph() gpu.Backend { return &backend{} }

func (d *device) NewQueue() (gpu.Queue, error) { return newQueue(d), nil }

// buffer is a shared-storage MTLBuffer over mem.
type buffer struct {
	dev      *device
	mem      []byte
	released atomic.Bool
}

func (b *buffer) Bytes() []byte { return b.mem }

// Release gives the bytes back to the device's count, once. Work already
// encoded keeps its binding (a command buffer retains its buffers), but
// encoding with a released buffer is an error.
func (b *buffer) Release() {
	if b.released.CompareAndSwap(false, true) {
		b.dev.allocated.Add(-int64(len(b.mem)))
	}
}

// ownBuffer checks that b is a live buffer of d, as Metal requires of
// everything one command buffer binds.
func (d *device) ownBuffer(what string, b gpu.Buffer) (*buffer, error) {
	mb, bad := d.ownedBuffer(b)
	if bad != "" {
		return nil, fmt.Errorf("%s: %s", what, bad)
	}
	return mb, nil
}

// ownedBuffer is ownBuffer's check, saying what is wrong ("" when nothing).
func (d *device) ownedBuffer(b gpu.Buffer) (*buffer, string) {
	mb, ok := b.(*buffer)
	switch {
	case b == nil || (ok && mb == nil):
		return nil, "no buffer"
	case !ok || mb.dev != d:
		return nil, "a buffer of another device"
	case mb.released.Load():
		return nil, "a released buffer"
	}
	return mb, ""
}

// Package host is the pure-Go reference driver: it executes IR programs on the
// CPU while modelling a GPU's asynchrony, so that the frontends run on it
// exactly as they would on a device. Device memory is anonymous mappings
// outside the Go heap, because TensorFlow's C code keeps the pointers; every
// stream is a goroutine draining an in-order queue; events follow CUDA's rules.
package host

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/metalplug/metalplug/backend/cache"
	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/status"
)

// DefaultMemoryBytes is the capacity a Driver reports when Options leave it 0.
const DefaultMemoryBytes int64 = 8 << 30

// Options configure a Driver.
type Options struct {
	// MemoryBytes caps the bytes that may be allocated at once; 0 means
	// DefaultMemoryBytes. It is a budget, not a reservation: nothing is mapped
	// until Allocate.
	MemoryBytes int64
	// StreamDelay, a test setting, makes every copy, fill and program
	// execution on the driver's streams wait this long first, without
	// blocking the thread that enqueues it: work then completes long after
	// the kernel that enqueued it returned, so anything that reads device
	// memory without ordering itself behind the stream reads it too early.
	StreamDelay time.Duration
}

// Driver is the host driver. It is safe for concurrent use.
type Driver struct {
	capacity int64
	pageSize int
	delay    time.Duration // Options.StreamDelay

	mu   sync.Mutex
	used int64
	// working is what the runs in progress hold for their intermediates
	// (executable.peak): a GPU's programs take theirs from the device's
	// memory, so the host driver's, which the Go heap holds, are counted
	// against the capacity too, and a program that does not fit fails as it
	// would on a device.
	working int64
	allocs  []allocation // sorted by base, so Lookup can binary-search interior pointers

	cache *cache.LRU[ir.Key, *executable] // by program key, bounded in count and instructions (package cache)
}

// ExecutableCacheSize bounds the compiled programs the driver keeps.
const ExecutableCacheSize = cache.ExecutableCacheSize

// allocation is one live mapping. mem keeps the mapping's pointer as a real
// pointer (never a uintptr) and is what Munmap needs back.
type allocation struct {
	base uintptr // only for ordering and range tests
	mem  []byte
	size int // what the caller asked for; len(mem) is rounded up to pages
}

var _ driver.Driver = (*Driver)(nil)

// New makes a host driver.
func New(opts Options) *Driver {
	c := opts.MemoryBytes
	if c <= 0 {
		c = DefaultMemoryBytes
	}
	return &Driver{capacity: c, pageSize: syscall.Getpagesize(), delay: opts.StreamDelay, cache: cache.NewWeighted[ir.Key](ExecutableCacheSize, cache.ExecutableCacheInstructions, func(e *executable) int64 { return int64(e.prog.Size()) })}
}

// Name implements driver.Driver.
func (d *Driver) Name() string { return "host" }

// Description implements driver.Driver.
func (d *Driver) Description() string {
	return "pure-Go host reference driver running on the CPU"
}

// Allocate returns size bytes of zeroed, page-aligned memory from an anonymous
// mapping. A zero size still maps one page so that every allocation has an
// address of its own, as frontends key tables on them.
func (d *Driver) Allocate(size int) (unsafe.Pointer, error) {
	if size < 0 {
		return nil, fmt.Errorf("host: allocate: negative size %d", size)
	}
	n := max(size, 1)
	n = (n + d.pageSize - 1) / d.pageSize * d.pageSize
	if n < size { // overflow while rounding
		return nil, status.Exhausted(fmt.Errorf("host: allocate: size %d is too large", size))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if free := d.freeLocked(); int64(n) > free {
		// The frontends report this as ResourceExhausted: memory the
		// device does not have, not a fault of theirs or ours.
		return nil, status.Exhausted(fmt.Errorf("host: allocate %d bytes (%d mapped): out of memory, %d of %d bytes free",
			size, n, free, d.capacity))
	}
	mem, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		err = fmt.Errorf("host: allocate %d bytes: mmap: %w", size, err)
		if errors.Is(err, syscall.ENOMEM) { // memory the system does not have
			err = status.Exhausted(err)
		}
		return nil, err
	}
	a := allocation{base: uintptr(unsafe.Pointer(&mem[0])), mem: mem, size: size}
	i, _ := slices.BinarySearchFunc(d.allocs, a.base, cmpBase)
	d.allocs = slices.Insert(d.allocs, i, a)
	d.used += int64(n)
	return unsafe.Pointer(&mem[0]), nil
}

func cmpBase(a allocation, base uintptr) int {
	switch {
	case a.base < base:
		return -1
	case a.base > base:
		return 1
	}
	return 0
}

// Free unmaps an allocation. Like free(NULL), freeing nil does nothing.
func (d *Driver) Free(p unsafe.Pointer) error {
	if p == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	i, found := slices.BinarySearchFunc(d.allocs, uintptr(p), cmpBase)
	if !found {
		if i > 0 && uintptr(p)-d.allocs[i-1].base < uintptr(len(d.allocs[i-1].mem)) {
			return fmt.Errorf("host: free %p: pointer is inside the allocation at %p, not its start", p, unsafe.Pointer(&d.allocs[i-1].mem[0]))
		}
		return fmt.Errorf("host: free %p: not a live allocation of this driver", p)
	}
	a := d.allocs[i]
	if err := syscall.Munmap(a.mem); err != nil {
		return fmt.Errorf("host: free %p: munmap: %w", p, err)
	}
	d.allocs = slices.Delete(d.allocs, i, i+1)
	d.used -= int64(len(a.mem))
	return nil
}

// Lookup maps a pointer anywhere inside a live allocation (TensorFlow's
// allocator carves allocations into tensors) to that allocation's base, the
// pointer's offset from it and the size that was asked for. The page-rounding
// slack past size still counts as inside.
func (d *Driver) Lookup(p unsafe.Pointer) (base unsafe.Pointer, offset, size int, ok bool) {
	if p == nil {
		return nil, 0, 0, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	i, found := slices.BinarySearchFunc(d.allocs, uintptr(p), cmpBase)
	if !found {
		i-- // the candidate is the last allocation starting below p
	}
	if i < 0 {
		return nil, 0, 0, false
	}
	a := d.allocs[i]
	off := uintptr(p) - a.base
	if off >= uintptr(len(a.mem)) {
		return nil, 0, 0, false
	}
	return unsafe.Pointer(&a.mem[0]), int(off), a.size, true
}

// freeLocked is what may still be allocated or held: the capacity less
// the mappings and the intermediates of the runs in progress.
func (d *Driver) freeLocked() int64 { return d.capacity - d.used - d.working }

// reserve holds the bytes of e's intermediates (its peak) from the
// capacity for a run, until release(e) gives them back. Memory the device
// does not have is a ResourceExhausted error naming the program's types,
// and nothing has run then. (A method pair, not a returned closure, so
// that a run allocates nothing for it.)
func (d *Driver) reserve(e *executable) error {
	n := e.peak
	if n <= 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if free := d.freeLocked(); n > free {
		return status.Exhausted(fmt.Errorf("host: execute %s: its intermediates need %d bytes at once: out of memory, %d of %d bytes free", e.signature(), n, free, d.capacity))
	}
	d.working += n
	return nil
}

// release gives back what reserve held for a run of e.
func (d *Driver) release(e *executable) {
	if e.peak <= 0 {
		return
	}
	d.mu.Lock()
	d.working -= e.peak
	d.mu.Unlock()
}

// MemoryUsage reports mapped bytes (whole pages) and the capacity.
func (d *Driver) MemoryUsage() (used, total int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.used, d.capacity
}

// NewStream starts a stream's goroutine.
func (d *Driver) NewStream() (driver.Stream, error) { return newStream(d), nil }

// NewEvent makes an event no stream has recorded, which counts as complete.
func (d *Driver) NewEvent() driver.Event { return &event{} }

// Compile validates p and prepares it for execution. Executables are cached by
// the program's key, so lowering the same op twice costs one lookup.
func (d *Driver) Compile(p *ir.Program) (driver.Executable, error) {
	if p == nil {
		return nil, fmt.Errorf("host: compile: nil program")
	}
	key := p.Key()
	if e, ok := d.cache.Get(key); ok {
		return e, nil
	}
	// Compile outside the lock so that threads compiling different programs
	// do not queue behind each other; a duplicate compile is merely wasted.
	e, err := compile(p)
	if err != nil {
		return nil, err
	}
	return d.cache.Add(key, e), nil // one executable per program
}

// CachedExecutables is how many compiled programs the driver holds.
func (d *Driver) CachedExecutables() int { return d.cache.Len() }

// Run executes exe synchronously on the calling goroutine, for tests and for a
// frontend's synchronous mode. Pointers follow Stream.Execute's rules.
func (d *Driver) Run(exe driver.Executable, args, results []unsafe.Pointer) error {
	e, ok := exe.(*executable)
	if !ok {
		return fmt.Errorf("host: run: executable %T was not compiled by the host driver", exe)
	}
	if err := d.reserve(e); err != nil {
		return err
	}
	defer d.release(e)
	return e.run(args, results)
}

package metal

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
	"github.com/metalplug/metalplug/backend/status"
)

// allocation is one live mapping and the MTLBuffer that aliases it. mem keeps
// the mapping as a real pointer (never a uintptr) and is what Munmap needs.
type allocation struct {
	base uintptr // for ordering and range tests only
	ptr  unsafe.Pointer
	mem  []byte
	size int        // what the caller asked for; len(mem) is whole pages
	buf  gpu.Buffer // shared storage over mem, no copy
}

// memory is the registry of live allocations, sorted by base so that an
// interior pointer binary-searches to its allocation.
type memory struct {
	mu     sync.Mutex
	used   int64
	allocs []*allocation
}

func (m *memory) usedBytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used
}

func (m *memory) search(p uintptr) (int, bool) {
	return slices.BinarySearchFunc(m.allocs, p, func(a *allocation, p uintptr) int {
		switch {
		case a.base < p:
			return -1
		case a.base > p:
			return 1
		}
		return 0
	})
}

// lookup maps p, anywhere inside a live allocation (page slack included), to
// the allocation and p's offset in it.
func (m *memory) lookup(p unsafe.Pointer) (*allocation, int, bool) {
	if p == nil {
		return nil, 0, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	i, found := m.search(uintptr(p))
	if !found {
		i--
	}
	if i < 0 {
		return nil, 0, false
	}
	a := m.allocs[i]
	off := uintptr(p) - a.base
	if off >= uintptr(len(a.mem)) {
		return nil, 0, false
	}
	return a, int(off), true
}

// Allocate maps size bytes of zeroed, page-aligned memory (at least one page,
// so every allocation has an address of its own) and wraps the mapping in a
// shared-storage MTLBuffer with newBufferWithBytesNoCopy: on Apple silicon
// the GPU reads and writes the very pages the frontend's pointers address.
// Metal requires the pointer and the length of a no-copy buffer to be
// page-aligned, which an anonymous mapping of whole pages is.
func (d *Driver) Allocate(size int) (unsafe.Pointer, error) {
	if size < 0 {
		return nil, fmt.Errorf("metal: allocate: negative size %d", size)
	}
	n := max(size, 1)
	n = (n + d.pageSize - 1) / d.pageSize * d.pageSize
	if n < size {
		return nil, status.Exhausted(fmt.Errorf("metal: allocate: size %d is too large", size))
	}
	m := &d.mem
	m.mu.Lock()
	defer m.mu.Unlock()
	if int64(n) > d.capacity-m.used {
		// The frontends report this as ResourceExhausted: memory the
		// device does not have, not a fault of theirs or ours.
		return nil, status.Exhausted(fmt.Errorf("metal: allocate %d bytes (%d mapped): out of memory, %d of %d bytes free",
			size, n, d.capacity-m.used, d.capacity))
	}
	mem, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, mmapFailed("metal", size, err)
	}
	ptr := unsafe.Pointer(&mem[0])
	buf, err := d.dev.NewBuffer(mem)
	if err != nil {
		syscall.Munmap(mem)
		return nil, fmt.Errorf("metal: allocate %d bytes: %w", size, err)
	}
	a := &allocation{base: uintptr(ptr), ptr: ptr, mem: mem, size: size, buf: buf}
	i, _ := m.search(a.base)
	m.allocs = slices.Insert(m.allocs, i, a)
	m.used += int64(n)
	return ptr, nil
}

// Free releases an allocation's buffer and unmaps it. Like free(NULL),
// freeing nil does nothing. The caller guarantees no queued work still uses
// the memory, as with cudaFree.
func (d *Driver) Free(p unsafe.Pointer) error {
	if p == nil {
		return nil
	}
	m := &d.mem
	m.mu.Lock()
	defer m.mu.Unlock()
	i, found := m.search(uintptr(p))
	if !found {
		if i > 0 && uintptr(p)-m.allocs[i-1].base < uintptr(len(m.allocs[i-1].mem)) {
			return fmt.Errorf("metal: free %p: pointer is inside the allocation at %p, not its start", p, m.allocs[i-1].ptr)
		}
		return fmt.Errorf("metal: free %p: not a live allocation of this driver", p)
	}
	a := m.allocs[i]
	// A command buffer that used the buffer retains it until it completes;
	// the pages must outlive that too, which the caller's guarantee gives.
	a.buf.Release()
	if err := syscall.Munmap(a.mem); err != nil {
		return fmt.Errorf("metal: free %p: munmap: %w", p, err)
	}
	m.allocs = slices.Delete(m.allocs, i, i+1)
	m.used -= int64(len(a.mem))
	return nil
}

// mmapFailed is the error of a mapping the system refused: memory it does
// not have (ENOMEM) is ResourceExhausted, as the capacity check's is.
func mmapFailed(driver string, size int, err error) error {
	err = fmt.Errorf("%s: allocate %d bytes: mmap: %w", driver, size, err)
	if errors.Is(err, syscall.ENOMEM) {
		return status.Exhausted(err)
	}
	return err
}

package gpu

import (
	"errors"
	"time"
)

// MaxRank and MaxElements bound every tensor a graph holds and every array
// bound to one. An MPSNDArray descriptor has at most 16 dimensions (the
// darwin adapter's tensor data too; PyTorch's MPS backend refuses more:
// "MPS supports tensors with dimensions <= 16"), and MPSGraph counts
// elements in int32 (PyTorch reports "MPSGraph does not support tensor
// dims larger than INT_MAX" past 2^31 - 1 elements). Past either MPSGraph
// raises an Objective-C exception, which would abort the process, so Graph
// refuses such a tensor and the model refuses such data: the lowering runs
// that part of the program on the host instead.
const (
	MaxRank     = 16
	MaxElements = 1<<31 - 1
)

// ErrOutOfMemory is in the chain of a command buffer's error when the
// device had not the memory its work needed (Metal's
// MTLCommandBufferErrorOutOfMemory, "Insufficient Memory"; the model's when
// a graph's intermediates do not fit beside the buffers allocated): the
// driver reports it as memory exhausted, not as a fault.
var ErrOutOfMemory = errors.New("out of memory")

// Device is a Metal device as the driver uses it: buffers over memory the
// driver mapped, graphs, and command queues.
type Device interface {
	// Name is the device's name, for descriptions.
	Name() string
	// MacOS is the running release, which decides the contract.
	MacOS() Version
	// WorkingSet is the bytes the device recommends a process keep
	// allocated (recommendedMaxWorkingSetSize).
	WorkingSet() int64
	// AllocatedBytes is everything the process has on the device,
	// intermediates included (currentAllocatedSize).
	AllocatedBytes() int64

	// NewBuffer wraps mem, page-aligned whole pages, in a shared-storage
	// buffer without a copy (newBufferWithBytesNoCopy).
	NewBuffer(mem []byte) (Buffer, error)
	// NewScratch is a new shared-storage buffer of n bytes.
	NewScratch(n int) (Buffer, error)
	// NewGraph starts a graph.
	NewGraph() Backend
	// NewQueue makes a command queue.
	NewQueue() (Queue, error)
}

// Buffer is an MTLBuffer of shared storage: the CPU reads and writes Bytes.
type Buffer interface {
	Bytes() []byte
	Release()
}

// Queue is an MTLCommandQueue: command buffers committed to it run in
// commit order, each after the one before has completed.
type Queue interface {
	NewCommandBuffer() (CommandBuffer, error)
	Release()
}

// CommandBuffer is work encoded for a queue.
type CommandBuffer interface {
	// Encode encodes one run of exe, its inputs and outputs in the orders
	// of the feeds and targets it was compiled with.
	Encode(exe Executable, inputs, outputs []Data) error
	// Copy encodes a blit of n bytes; offsets and n are multiples of 4.
	Copy(src Buffer, srcOffset int, dst Buffer, dstOffset, n int) error
	// Commit commits the buffer; done runs once when everything encoded
	// has completed, with the first error of any part of it.
	Commit(done func(error))
	// CommitAndWait commits the buffer and blocks the calling thread until
	// it has completed (commit, then waitUntilCompleted), returning the
	// first error of any part of it; no completion handler runs. The
	// synchronous path: one wait, no thread but the caller's involved.
	CommitAndWait() error
}

// Timed is a command buffer that knows when the device ran it, for the
// trace: GPUStartTime and GPUEndTime on Metal, the run itself on the model.
// Times is called from the buffer's completion, and ok is false when the
// device did not say.
type Timed interface {
	Times() (start, end time.Time, ok bool)
}

// Data binds a tensor to a buffer: at offset 0 as MPSGraphTensorData over
// the buffer, which reads it packed row after row; at an interior offset as
// an MPSNDArray (initWithBuffer:offset:descriptor:, macOS 15), whose rows
// are packed only if the descriptor asks for it (PackedRows, that is
// preferPackedRows).
type Data struct {
	Buffer     Buffer
	Offset     int
	Shape      []int
	DType      DataType
	PackedRows bool
}

// Bytes is the data's size, packed.
func (d Data) Bytes() int { return elements(d.Shape) * d.DType.Size() }

// NDArrayOffsets is the first release that binds data at an offset.
var NDArrayOffsets = v15

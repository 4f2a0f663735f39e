package pjrt

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/status"
)

// buffer is one PJRT_Buffer: a dense row-major array in device memory. Its
// contents are ready once the stream reaches the work that writes them
// (ready); every use is enqueued on the same stream after that work, so
// only jax ever waits for ready.
type buffer struct {
	client *client
	c      *C.PJRT_Buffer
	typ    bufType
	elem   int
	dims   []int64
	size   int64

	arena arena      // what C reads: the record, dims and minor_to_major
	cdims *C.int64_t // dims, for PJRT_Buffer_Dimensions
	cm2m  *C.int64_t // rank-1 ... 0, for PJRT_Buffer_GetMemoryLayout

	// Guarded by client.mu.
	ptr      unsafe.Pointer // device memory; nil once freed
	deleted  bool
	freeWait bool // deleted while the caller held an external reference
	extRefs  int
	gen      int // the client's stream generation the contents were written on
	ready    *event
}

func (b *buffer) String() string { return shapeString(b.typ, b.dims) }

// newBuffer allocates a buffer; ready is set by the caller, who enqueues
// (or skips) the work that fills it. Call it without client.mu held.
func (c *client) newBuffer(typ bufType, dims []int64) (*buffer, error) {
	elem, err := typ.storable()
	if err != nil {
		return nil, err
	}
	size, err := shapeBytes(dims, elem)
	if err != nil {
		return nil, status.Invalidf("%v", err)
	}
	p, err := c.drv.Allocate(int(size))
	if err != nil && c.pending.wait() {
		p, err = c.drv.Allocate(int(size)) // with what jax had let go of
	}
	if err != nil {
		return nil, status.Errorf(status.ResourceExhausted, "allocating %d bytes of device memory for %s: %v", size, shapeString(typ, dims), err)
	}
	c.stats.allocated(size)
	b := &buffer{client: c, typ: typ, elem: elem, dims: append([]int64(nil), dims...), size: size, ptr: p}
	b.cdims = b.arena.int64s(b.dims)
	m2m := make([]int64, len(dims))
	for i := range m2m {
		m2m[i] = int64(len(dims) - 1 - i)
	}
	b.cm2m = b.arena.int64s(m2m)
	b.c = (*C.PJRT_Buffer)(b.arena.alloc(C.sizeof_PJRT_Buffer))
	b.c.handle = newHandle(b)
	return b, nil
}

// freeNow returns the device memory, with no work in flight on it.
func (b *buffer) freeNow() {
	if b.ptr == nil {
		return
	}
	if err := b.client.drv.Free(b.ptr); err != nil {
		logf("freeing the device memory of %s: %v", b, err)
	}
	b.client.stats.freed(b.size)
	b.ptr = nil
}

// usable is the device memory of a buffer an operation is about to read,
// under client.mu: an error if it was deleted or its contents were never
// written (the work that wrote them failed). Contents written on a stream
// since replaced are waited for first, as nothing orders the new stream
// after the old; the old one, failed, finishes quickly.
func (b *buffer) usable(c *client) (unsafe.Pointer, error) {
	if b.deleted || b.ptr == nil {
		return nil, status.Invalidf("buffer %s has been deleted", b)
	}
	if b.gen != c.gen {
		if err := b.ready.wait(); err != nil {
			return nil, fmt.Errorf("buffer %s was never written: %w", b, err)
		}
	} else if done, err := b.ready.status(); done && err != nil {
		return nil, fmt.Errorf("buffer %s was never written: %w", b, err)
	}
	return b.ptr, nil
}

// delete drops the buffer's device memory once the stream has finished
// everything enqueued before it, or once the caller drops its external
// references. The PJRT_Buffer stays, answering IsDeleted.
func (b *buffer) delete() {
	c := b.client
	c.mu.Lock()
	defer c.mu.Unlock()
	if b.deleted {
		return
	}
	b.deleted = true
	if b.extRefs > 0 {
		b.freeWait = true
		return
	}
	b.freeAfterStream()
}

// freeAfterStream frees the memory behind all work enqueued so far; under
// client.mu.
func (b *buffer) freeAfterStream() {
	c := b.client
	if c.closed || b.ptr == nil {
		b.freeNow() // a destroyed client's stream has drained
		return
	}
	p := b.ptr
	b.ptr = nil
	c.pending.add()
	afterStream(c.drv, c.stream, "freeing "+b.String(), func(error) {
		// Freed whatever the stream's fate: nothing will read it again.
		if err := c.drv.Free(p); err != nil {
			logf("freeing the device memory of %s: %v", b, err)
		}
		c.stats.freed(b.size)
		c.pending.settle()
	})
}

func bufferOf(p *C.PJRT_Buffer) (*buffer, error) {
	if p == nil {
		return nil, status.Invalidf("buffer is NULL")
	}
	return lookup[*buffer](p.handle, "buffer")
}

// placeOf checks that a device or memory the caller names is ours.
func (c *client) placeOf(dev *C.PJRT_Device, mem *C.PJRT_Memory) error {
	if mem != nil {
		m, err := memoryOf(mem)
		if err != nil {
			return err
		}
		if m != c.mem {
			return status.Invalidf("memory %s belongs to another client", C.GoStringN(m.str.p, C.int(m.str.n)))
		}
		return nil
	}
	if dev != nil {
		d, err := deviceOf(dev)
		if err != nil {
			return err
		}
		if d != c.dev {
			return status.Invalidf("device belongs to another client")
		}
	}
	return nil
}

// cDims reads n dimensions the caller passed.
func cDims(p *C.int64_t, n C.size_t) ([]int64, error) {
	if n == 0 {
		return nil, nil
	}
	if p == nil {
		return nil, status.Invalidf("dims is NULL for %d dimensions", n)
	}
	return append([]int64(nil), unsafe.Slice((*int64)(unsafe.Pointer(p)), int(n))...), nil
}

// layoutStrides reads a layout the caller passed as byte strides for an
// array of dims; nil means the default, dense row-major.
func layoutStrides(l *C.PJRT_Buffer_MemoryLayout, dims []int64, elem int) ([]int64, error) {
	if l == nil {
		return denseStrides(dims, elem), nil
	}
	switch l._type {
	case C.PJRT_Buffer_MemoryLayout_Type_Tiled:
		t := C.mp_layout_tiled(l)
		if t.num_tiles != 0 {
			return nil, status.Errorf(status.Unimplemented, "tiled layouts (%d tiles) are not supported: metalplug arrays are dense", t.num_tiles)
		}
		m2m, err := cDims(t.minor_to_major, t.minor_to_major_size)
		if err != nil {
			return nil, err
		}
		return stridesOfMinorToMajor(dims, m2m, elem)
	case C.PJRT_Buffer_MemoryLayout_Type_Strides:
		s := C.mp_layout_strides(l)
		strides, err := cDims(s.byte_strides, s.num_byte_strides)
		if err != nil {
			return nil, err
		}
		if len(strides) != len(dims) {
			return nil, status.Invalidf("the layout has %d byte strides for %d dimensions", len(strides), len(dims))
		}
		return strides, nil
	}
	return nil, status.Invalidf("layout type %d is neither tiled nor strides", int(l._type))
}

// hostSpan is the caller's host array of dims with strides as a byte slice
// starting at its lowest address, and where element [0...0] sits in it.
func hostSpan(data unsafe.Pointer, dims, strides []int64, elem int) ([]byte, int64, error) {
	lo, hi, err := span(dims, strides, elem)
	if err != nil {
		return nil, 0, status.Invalidf("%v", err)
	}
	if hi == lo {
		return nil, 0, nil
	}
	if data == nil {
		return nil, 0, status.Invalidf("the host data pointer is NULL")
	}
	return unsafe.Slice((*byte)(unsafe.Add(data, lo)), hi-lo), -lo, nil
}

// deviceBytes is a buffer's device memory as a Go slice, for the host-side
// copies of strided transfers (device memory is host-addressable on both
// drivers: anonymous mappings, and unified memory on Apple silicon).
func deviceBytes(p unsafe.Pointer, n int64) []byte {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(p), n)
}

// ----------------------------------------------------------- host to device

// fromHost makes a buffer from the caller's host array. A dense array the
// caller keeps until the copy is done goes to the device in one stream
// copy, and done (the caller may free data) is when the stream has made
// it. Anything else (strided, or data the caller reclaims on return) is
// gathered here into a dense staging copy first, so done is at once.
func (c *client) fromHost(data unsafe.Pointer, typ bufType, dims, strides []int64, semantics C.PJRT_HostBufferSemantics) (b *buffer, done *event, err error) {
	elem, err := typ.storable()
	if err != nil {
		return nil, nil, err
	}
	if _, err := shapeBytes(dims, elem); err != nil {
		return nil, nil, status.Invalidf("%v", err)
	}
	if strides == nil {
		strides = denseStrides(dims, elem)
	}
	if len(strides) != len(dims) {
		return nil, nil, status.Invalidf("%d byte strides for %d dimensions", len(strides), len(dims))
	}
	switch semantics {
	case C.PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
		C.PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes,
		C.PJRT_HostBufferSemantics_kImmutableZeroCopy,
		C.PJRT_HostBufferSemantics_kMutableZeroCopy:
	default:
		return nil, nil, status.Invalidf("host_buffer_semantics %d is not one of PJRT's", int(semantics))
	}
	src, at, err := hostSpan(data, dims, strides, elem)
	if err != nil {
		return nil, nil, err
	}
	b, err = c.newBuffer(typ, dims)
	if err != nil {
		return nil, nil, err
	}
	direct := isDense(dims, strides, elem) && semantics != C.PJRT_HostBufferSemantics_kImmutableOnlyDuringCall
	var staging unsafe.Pointer
	if b.size > 0 && !direct {
		staging = C.malloc(C.size_t(b.size))
		if staging == nil {
			b.destroy()
			return nil, nil, status.Errorf(status.ResourceExhausted, "no host memory to stage %d bytes of %s", b.size, b)
		}
		copyStrided(deviceBytes(staging, b.size), 0, denseStrides(dims, elem), src, at, strides, dims, elem)
	}
	err = c.withStream(func(s driver.Stream) error {
		b.gen = c.gen
		if b.size == 0 {
			b.ready = readyEvent(nil)
			done = b.ready
			return nil
		}
		what := "copying " + b.String() + " to the device"
		if direct {
			s.Memcpy(b.ptr, unsafe.Add(data, at), int(b.size))
			b.ready = streamEvent(c.drv, s, what)
			done = b.ready
			return nil
		}
		s.Memcpy(b.ptr, staging, int(b.size))
		b.ready = newEvent()
		ready := b.ready
		afterStream(c.drv, s, what, func(err error) {
			C.free(staging)
			if err != nil {
				err = fmt.Errorf("metalplug: %s: %w", what, err)
			}
			ready.finish(err)
		})
		done = readyEvent(nil)
		return nil
	})
	if err != nil {
		if staging != nil {
			C.free(staging)
		}
		b.destroy()
		return nil, nil, err
	}
	return b, done, nil
}

// destroy frees the buffer's record and, if still held, its memory.
func (b *buffer) destroy() {
	b.delete()
	dropHandle(&b.c.handle)
	b.c = nil
	b.arena.free() // the record too
}

// ----------------------------------------------------------- device to host

// toHost copies a buffer to the caller's host memory in stream order,
// laid out with strides (dense straight from the device; otherwise via a
// staging copy scattered on a host thread once the stream has made it).
func (b *buffer) toHost(dst unsafe.Pointer, strides []int64) (*event, error) {
	c := b.client
	dense := isDense(b.dims, strides, b.elem)
	out, at, err := hostSpan(dst, b.dims, strides, b.elem)
	if err != nil {
		return nil, err
	}
	var ev *event
	err = c.withStream(func(s driver.Stream) error {
		p, err := b.usable(c)
		if err != nil {
			return err
		}
		if b.size == 0 {
			ev = readyEvent(nil)
			return nil
		}
		what := "copying " + b.String() + " to the host"
		if dense {
			s.Memcpy(unsafe.Add(dst, at), p, int(b.size))
			ev = streamEvent(c.drv, s, what)
			return nil
		}
		staging := C.malloc(C.size_t(b.size))
		if staging == nil {
			return status.Errorf(status.ResourceExhausted, "no host memory to stage %d bytes of %s", b.size, b)
		}
		s.Memcpy(staging, p, int(b.size))
		ev = newEvent()
		done := ev
		afterStream(c.drv, s, what, func(err error) {
			if err == nil {
				copyStrided(out, at, strides, deviceBytes(staging, b.size), 0, denseStrides(b.dims, b.elem), b.dims, b.elem)
			} else {
				err = fmt.Errorf("metalplug: %s: %w", what, err)
			}
			C.free(staging)
			done.finish(err)
		})
		return nil
	})
	return ev, err
}

// copyTo makes a new buffer on this client with the same contents, copied
// on the stream.
func (b *buffer) copyTo() (*buffer, error) {
	c := b.client
	nb, err := c.newBuffer(b.typ, b.dims)
	if err != nil {
		return nil, err
	}
	err = c.withStream(func(s driver.Stream) error {
		p, err := b.usable(c)
		if err != nil {
			return err
		}
		nb.gen = c.gen
		if b.size == 0 {
			nb.ready = readyEvent(nil)
			return nil
		}
		s.Memcpy(nb.ptr, p, int(b.size))
		nb.ready = streamEvent(c.drv, s, "copying "+b.String()+" on the device")
		return nil
	})
	if err != nil {
		nb.destroy()
		return nil, err
	}
	return nb, nil
}

// ----------------------------------------------------------------- exports

//export mp_PJRT_Client_BufferFromHostBuffer
func mp_PJRT_Client_BufferFromHostBuffer(args *C.PJRT_Client_BufferFromHostBuffer_Args) errT {
	return export("mp_PJRT_Client_BufferFromHostBuffer", args, C.PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE, clientBufferFromHostBuffer)
}

func clientBufferFromHostBuffer(args *C.PJRT_Client_BufferFromHostBuffer_Args) error {
	c, err := clientOf(args.client)
	if err != nil {
		return err
	}
	if err := c.placeOf(args.device, args.memory); err != nil {
		return err
	}
	typ := bufType(args._type)
	dims, err := cDims(args.dims, args.num_dims)
	if err != nil {
		return err
	}
	var strides []int64
	if args.num_byte_strides != 0 {
		if strides, err = cDims(args.byte_strides, args.num_byte_strides); err != nil {
			return err
		}
	}
	if args.device_layout != nil {
		elem, err := typ.storable()
		if err != nil {
			return err
		}
		want, err := layoutStrides(args.device_layout, dims, elem)
		if err != nil {
			return fmt.Errorf("device_layout: %w", err)
		}
		if !isDense(dims, want, elem) {
			return status.Errorf(status.Unimplemented, "device_layout with byte strides %v for %s: metalplug device arrays are dense row-major", want, shapeString(typ, dims))
		}
	}
	b, done, err := c.fromHost(args.data, typ, dims, strides, args.host_buffer_semantics)
	if err != nil {
		return fmt.Errorf("%s: %w", shapeString(typ, dims), err)
	}
	args.buffer = b.c
	args.done_with_host_buffer = newCEvent(done)
	return nil
}

//export mp_PJRT_Client_CreateUninitializedBuffer
func mp_PJRT_Client_CreateUninitializedBuffer(args *C.PJRT_Client_CreateUninitializedBuffer_Args) errT {
	return export("mp_PJRT_Client_CreateUninitializedBuffer", args, C.PJRT_Client_CreateUninitializedBuffer_Args_STRUCT_SIZE, clientCreateUninitializedBuffer)
}

func clientCreateUninitializedBuffer(args *C.PJRT_Client_CreateUninitializedBuffer_Args) error {
	c, err := clientOf(args.client)
	if err != nil {
		return err
	}
	if err := c.placeOf(args.device, args.memory); err != nil {
		return err
	}
	dims, err := cDims(args.shape_dims, args.shape_num_dims)
	if err != nil {
		return err
	}
	typ := bufType(args.shape_element_type)
	if args.shape_layout != nil {
		elem, err := typ.storable()
		if err != nil {
			return err
		}
		want, err := layoutStrides(args.shape_layout, dims, elem)
		if err != nil {
			return fmt.Errorf("shape_layout: %w", err)
		}
		if !isDense(dims, want, elem) {
			return status.Errorf(status.Unimplemented, "shape_layout with byte strides %v: metalplug device arrays are dense row-major", want)
		}
	}
	b, err := c.newBuffer(typ, dims)
	if err != nil {
		return err
	}
	// Device memory comes zeroed: the contents are "ready" at once.
	c.mu.Lock()
	b.gen, b.ready = c.gen, readyEvent(nil)
	c.mu.Unlock()
	args.buffer = b.c
	return nil
}

//export mp_PJRT_Buffer_Destroy
func mp_PJRT_Buffer_Destroy(args *C.PJRT_Buffer_Destroy_Args) errT {
	return export("mp_PJRT_Buffer_Destroy", args, C.PJRT_Buffer_Destroy_Args_STRUCT_SIZE, bufferDestroy)
}

func bufferDestroy(args *C.PJRT_Buffer_Destroy_Args) error {
	if args.buffer == nil {
		return nil
	}
	b, err := bufferOf(args.buffer)
	if err != nil {
		return err
	}
	b.destroy()
	return nil
}

//export mp_PJRT_Buffer_ElementType
func mp_PJRT_Buffer_ElementType(args *C.PJRT_Buffer_ElementType_Args) errT {
	return export("mp_PJRT_Buffer_ElementType", args, C.PJRT_Buffer_ElementType_Args_STRUCT_SIZE, bufferElementType)
}

func bufferElementType(args *C.PJRT_Buffer_ElementType_Args) error {
	b, err := bufferOf(args.buffer)
	if err != nil {
		return err
	}
	args._type = C.PJRT_Buffer_Type(b.typ)
	return nil
}

//export mp_PJRT_Buffer_Dimensions
func mp_PJRT_Buffer_Dimensions(args *C.PJRT_Buffer_Dimensions_Args) errT {
	return export("mp_PJRT_Buffer_Dimensions", args, C.PJRT_Buffer_Dimensions_Args_STRUCT_SIZE, bufferDimensions)
}

func bufferDimensions(args *C.PJRT_Buffer_Dimensions_Args) error {
	b, err := bufferOf(args.buffer)
	if err != nil {
		return err
	}
	args.dims, args.num_dims = b.cdims, C.size_t(len(b.dims))
	return nil
}

//export mp_PJRT_Buffer_UnpaddedDimensions
func mp_PJRT_Buffer_UnpaddedDimensions(args *C.PJRT_Buffer_UnpaddedDimensions_Args) errT {
	return export("mp_PJRT_Buffer_UnpaddedDimensions", args, C.PJRT_Buffer_UnpaddedDimensions_Args_STRUCT_SIZE, bufferUnpaddedDimensions)
}

func bufferUnpaddedDimensions(args *C.PJRT_Buffer_UnpaddedDimensions_Args) error {
	b, err := bufferOf(args.buffer)
	if err != nil {
		return err
	}
	// Shapes are static: nothing is padded.
	args.unpadded_dims, args.num_dims = b.cdims, C.size_t(len(b.dims))
	return nil
}

//export mp_PJRT_Buffer_DynamicDimensionIndices
func mp_PJRT_Buffer_DynamicDimensionIndices(args *C.PJRT_Buffer_DynamicDimensionIndices_Args) errT {
	return export("mp_PJRT_Buffer_DynamicDimensionIndices", args, C.PJRT_Buffer_DynamicDimensionIndices_Args_STRUCT_SIZE, bufferDynamicDimensionIndices)
}

func bufferDynamicDimensionIndices(args *C.PJRT_Buffer_DynamicDimensionIndices_Args) error {
	if _, err := bufferOf(args.buffer); err != nil {
		return err
	}
	args.dynamic_dim_indices, args.num_dynamic_dims = nil, 0
	return nil
}

//export mp_PJRT_Buffer_GetMemoryLayout
func mp_PJRT_Buffer_GetMemoryLayout(args *C.PJRT_Buffer_GetMemoryLayout_Args) errT {
	return export("mp_PJRT_Buffer_GetMemoryLayout", args, C.PJRT_Buffer_GetMemoryLayout_Args_STRUCT_SIZE, bufferGetMemoryLayout)
}

func bufferGetMemoryLayout(args *C.PJRT_Buffer_GetMemoryLayout_Args) error {
	b, err := bufferOf(args.buffer)
	if err != nil {
		return err
	}
	C.mp_fill_dense_layout(&args.layout, b.cm2m, C.size_t(len(b.dims)))
	return nil
}

//export mp_PJRT_Buffer_OnDeviceSizeInBytes
func mp_PJRT_Buffer_OnDeviceSizeInBytes(args *C.PJRT_Buffer_OnDeviceSizeInBytes_Args) errT {
	return export("mp_PJRT_Buffer_OnDeviceSizeInBytes", args, C.PJRT_Buffer_OnDeviceSizeInBytes_Args_STRUCT_SIZE, bufferOnDeviceSizeInBytes)
}

func bufferOnDeviceSizeInBytes(args *C.PJRT_Buffer_OnDeviceSizeInBytes_Args) error {
	b, err := bufferOf(args.buffer)
	if err != nil {
		return err
	}
	args.on_device_size_in_bytes = C.size_t(b.size)
	return nil
}

//export mp_PJRT_Buffer_Device
func mp_PJRT_Buffer_Device(args *C.PJRT_Buffer_Device_Args) errT {
	return export("mp_PJRT_Buffer_Device", args, C.PJRT_Buffer_Device_Args_STRUCT_SIZE, bufferDevice)
}

func bufferDevice(args *C.PJRT_Buffer_Device_Args) error {
	b, err := bufferOf(args.buffer)
	if err != nil {
		return err
	}
	args.device = b.client.dev.c
	return nil
}

//export mp_PJRT_Buffer_Memory
func mp_PJRT_Buffer_Memory(args *C.PJRT_Buffer_Memory_Args) errT {
	return export("mp_PJRT_Buffer_Memory", args, C.PJRT_Buffer_Memory_Args_STRUCT_SIZE, bufferMemory)
}

func bufferMemory(args *C.PJRT_Buffer_Memory_Args) error {
	b, err := bufferOf(args.buffer)
	if err != nil {
		return err
	}
	args.memory = b.client.mem.c
	return nil
}

//export mp_PJRT_Buffer_Delete
func mp_PJRT_Buffer_Delete(args *C.PJRT_Buffer_Delete_Args) errT {
	return export("mp_PJRT_Buffer_Delete", args, C.PJRT_Buffer_Delete_Args_STRUCT_SIZE, bufferDelete)
}

func bufferDelete(args *C.PJRT_Buffer_Delete_Args) error {
	b, err := bufferOf(args.buffer)
	if err != nil {
		return err
	}
	b.delete()
	return nil
}

//export mp_PJRT_Buffer_IsDeleted
func mp_PJRT_Buffer_IsDeleted(args *C.PJRT_Buffer_IsDeleted_Args) errT {
	return export("mp_PJRT_Buffer_IsDeleted", args, C.PJRT_Buffer_IsDeleted_Args_STRUCT_SIZE, bufferIsDeleted)
}

func bufferIsDeleted(args *C.PJRT_Buffer_IsDeleted_Args) error {
	b, err := bufferOf(args.buffer)
	if err != nil {
		return err
	}
	b.client.mu.Lock()
	args.is_deleted = C.bool(b.deleted)
	b.client.mu.Unlock()
	return nil
}

//export mp_PJRT_Buffer_CopyToDevice
func mp_PJRT_Buffer_CopyToDevice(args *C.PJRT_Buffer_CopyToDevice_Args) errT {
	return export("mp_PJRT_Buffer_CopyToDevice", args, C.PJRT_Buffer_CopyToDevice_Args_STRUCT_SIZE, bufferCopyToDevice)
}

func bufferCopyToDevice(args *C.PJRT_Buffer_CopyToDevice_Args) error {
	b, err := bufferOf(args.buffer)
	if err != nil {
		return err
	}
	if args.dst_device == nil {
		return status.Invalidf("dst_device is NULL")
	}
	if err := b.client.placeOf(args.dst_device, nil); err != nil {
		return err
	}
	// There is one device, so this is a copy on it (XLA refuses a copy to
	// the buffer's own device; a copy is more use to a caller that asks).
	nb, err := b.copyTo()
	if err != nil {
		return err
	}
	args.dst_buffer = nb.c
	return nil
}

//export mp_PJRT_Buffer_CopyToMemory
func mp_PJRT_Buffer_CopyToMemory(args *C.PJRT_Buffer_CopyToMemory_Args) errT {
	return export("mp_PJRT_Buffer_CopyToMemory", args, C.PJRT_Buffer_CopyToMemory_Args_STRUCT_SIZE, bufferCopyToMemory)
}

func bufferCopyToMemory(args *C.PJRT_Buffer_CopyToMemory_Args) error {
	b, err := bufferOf(args.buffer)
	if err != nil {
		return err
	}
	if args.dst_memory == nil {
		return status.Invalidf("dst_memory is NULL")
	}
	if err := b.client.placeOf(nil, args.dst_memory); err != nil {
		return err
	}
	nb, err := b.copyTo()
	if err != nil {
		return err
	}
	args.dst_buffer = nb.c
	return nil
}

//export mp_PJRT_Buffer_ToHostBuffer
func mp_PJRT_Buffer_ToHostBuffer(args *C.PJRT_Buffer_ToHostBuffer_Args) errT {
	return export("mp_PJRT_Buffer_ToHostBuffer", args, C.PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE, bufferToHostBuffer)
}

func bufferToHostBuffer(args *C.PJRT_Buffer_ToHostBuffer_Args) error {
	b, err := bufferOf(args.src)
	if err != nil {
		return err
	}
	strides, err := layoutStrides(args.host_layout, b.dims, b.elem)
	if err != nil {
		return fmt.Errorf("host_layout for %s: %w", b, err)
	}
	_, hi, err := span(b.dims, strides, b.elem)
	if err != nil {
		return status.Invalidf("host_layout for %s: %v", b, err)
	}
	if args.dst == nil {
		// A size query: XLA answers it without an event.
		args.dst_size = C.size_t(hi)
		return nil
	}
	if int64(args.dst_size) < hi {
		return status.Invalidf("dst_size %d is smaller than the %d bytes %s needs on the host", args.dst_size, hi, b)
	}
	ev, err := b.toHost(args.dst, strides)
	if err != nil {
		return err
	}
	args.event = newCEvent(ev)
	return nil
}

//export mp_PJRT_Buffer_CopyRawToHost
func mp_PJRT_Buffer_CopyRawToHost(args *C.PJRT_Buffer_CopyRawToHost_Args) errT {
	return export("mp_PJRT_Buffer_CopyRawToHost", args, C.PJRT_Buffer_CopyRawToHost_Args_STRUCT_SIZE, bufferCopyRawToHost)
}

func bufferCopyRawToHost(args *C.PJRT_Buffer_CopyRawToHost_Args) error {
	b, err := bufferOf(args.buffer)
	if err != nil {
		return err
	}
	off, n := int64(args.offset), int64(args.transfer_size)
	if off < 0 || n < 0 || off > b.size || n > b.size-off {
		return status.Invalidf("bytes [%d, %d) are not within the %d bytes of %s", off, off+n, b.size, b)
	}
	if n > 0 && args.dst == nil {
		return status.Invalidf("dst is NULL")
	}
	c := b.client
	var ev *event
	err = c.withStream(func(s driver.Stream) error {
		p, err := b.usable(c)
		if err != nil {
			return err
		}
		if n == 0 {
			ev = readyEvent(nil)
			return nil
		}
		s.Memcpy(args.dst, unsafe.Add(p, off), int(n))
		ev = streamEvent(c.drv, s, fmt.Sprintf("copying bytes [%d, %d) of %s to the host", off, off+n, b))
		return nil
	})
	if err != nil {
		return err
	}
	args.event = newCEvent(ev)
	return nil
}

//export mp_PJRT_Buffer_IsOnCpu
func mp_PJRT_Buffer_IsOnCpu(args *C.PJRT_Buffer_IsOnCpu_Args) errT {
	return export("mp_PJRT_Buffer_IsOnCpu", args, C.PJRT_Buffer_IsOnCpu_Args_STRUCT_SIZE, bufferIsOnCpu)
}

func bufferIsOnCpu(args *C.PJRT_Buffer_IsOnCpu_Args) error {
	if _, err := bufferOf(args.buffer); err != nil {
		return err
	}
	// Not even on the host driver: the contents are written by a stream,
	// and a caller that read them in place would not wait for it.
	args.is_on_cpu = false
	return nil
}

//export mp_PJRT_Buffer_ReadyEvent
func mp_PJRT_Buffer_ReadyEvent(args *C.PJRT_Buffer_ReadyEvent_Args) errT {
	return export("mp_PJRT_Buffer_ReadyEvent", args, C.PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE, bufferReadyEvent)
}

func bufferReadyEvent(args *C.PJRT_Buffer_ReadyEvent_Args) error {
	b, err := bufferOf(args.buffer)
	if err != nil {
		return err
	}
	b.client.mu.Lock()
	ev := b.ready
	if b.deleted {
		ev = readyEvent(status.Invalidf("metalplug: buffer %s has been deleted", b))
	}
	b.client.mu.Unlock()
	args.event = newCEvent(ev)
	return nil
}

//export mp_PJRT_Buffer_UnsafePointer
func mp_PJRT_Buffer_UnsafePointer(args *C.PJRT_Buffer_UnsafePointer_Args) errT {
	return export("mp_PJRT_Buffer_UnsafePointer", args, C.PJRT_Buffer_UnsafePointer_Args_STRUCT_SIZE, bufferUnsafePointer)
}

func bufferUnsafePointer(args *C.PJRT_Buffer_UnsafePointer_Args) error {
	b, err := bufferOf(args.buffer)
	if err != nil {
		return err
	}
	b.client.mu.Lock()
	defer b.client.mu.Unlock()
	if b.ptr == nil {
		return status.Invalidf("buffer %s has been deleted", b)
	}
	args.buffer_pointer = C.uintptr_t(uintptr(b.ptr))
	return nil
}

//export mp_PJRT_Buffer_OpaqueDeviceMemoryDataPointer
func mp_PJRT_Buffer_OpaqueDeviceMemoryDataPointer(args *C.PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args) errT {
	return export("mp_PJRT_Buffer_OpaqueDeviceMemoryDataPointer", args, C.PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args_STRUCT_SIZE, bufferOpaqueDeviceMemoryDataPointer)
}

func bufferOpaqueDeviceMemoryDataPointer(args *C.PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args) error {
	b, err := bufferOf(args.buffer)
	if err != nil {
		return err
	}
	b.client.mu.Lock()
	defer b.client.mu.Unlock()
	if b.ptr == nil {
		return status.Invalidf("buffer %s has been deleted", b)
	}
	args.device_memory_ptr = b.ptr
	return nil
}

//export mp_PJRT_Buffer_IncreaseExternalReferenceCount
func mp_PJRT_Buffer_IncreaseExternalReferenceCount(args *C.PJRT_Buffer_IncreaseExternalReferenceCount_Args) errT {
	return export("mp_PJRT_Buffer_IncreaseExternalReferenceCount", args, C.PJRT_Buffer_IncreaseExternalReferenceCount_Args_STRUCT_SIZE, bufferIncreaseExternalReferenceCount)
}

func bufferIncreaseExternalReferenceCount(args *C.PJRT_Buffer_IncreaseExternalReferenceCount_Args) error {
	b, err := bufferOf(args.buffer)
	if err != nil {
		return err
	}
	b.client.mu.Lock()
	defer b.client.mu.Unlock()
	if b.deleted {
		return status.Invalidf("buffer %s has been deleted", b)
	}
	b.extRefs++
	return nil
}

//export mp_PJRT_Buffer_DecreaseExternalReferenceCount
func mp_PJRT_Buffer_DecreaseExternalReferenceCount(args *C.PJRT_Buffer_DecreaseExternalReferenceCount_Args) errT {
	return export("mp_PJRT_Buffer_DecreaseExternalReferenceCount", args, C.PJRT_Buffer_DecreaseExternalReferenceCount_Args_STRUCT_SIZE, bufferDecreaseExternalReferenceCount)
}

func bufferDecreaseExternalReferenceCount(args *C.PJRT_Buffer_DecreaseExternalReferenceCount_Args) error {
	b, err := bufferOf(args.buffer)
	if err != nil {
		return err
	}
	b.client.mu.Lock()
	defer b.client.mu.Unlock()
	if b.extRefs == 0 {
		return status.Errorf(status.FailedPrecondition, "buffer %s holds no external reference", b)
	}
	b.extRefs--
	if b.extRefs == 0 && b.freeWait {
		b.freeWait = false
		b.freeAfterStream()
	}
	return nil
}

//go:build darwin

package metal

import (
	"fmt"
	"unsafe"

	"github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/macos/mps"
	"github.com/progrium/darwinkit/macos/mpsgraph"
	"github.com/progrium/darwinkit/objc"
)

// run is what one execution keeps alive until its command buffer completes:
// the tensor data objects, the scratch buffers, and the host-memory results
// to copy out of scratch.
type run struct {
	data    []mpsgraph.TensorData
	scratch []metal.BufferObject
	copyOut []stagedOut
}

type stagedOut struct {
	dst unsafe.Pointer
	buf metal.BufferObject
	n   int
}

func (r *run) release() {
	for _, td := range r.data {
		td.Release()
	}
	for _, b := range r.scratch {
		b.Release()
	}
}

// encodeRun encodes one execution of e into a new command buffer on the
// stream's queue and commits it.
//
// Each argument and result is bound to an MPSGraphTensorData without a copy
// when it can be: at offset 0 of an allocation, on the allocation's
// MTLBuffer itself; at an interior offset, on macOS 15 and later, through an
// MPSNDArray made with initWithBuffer:offset:descriptor: (which darwinkit
// v0.5.0 does not bind; it is sent by selector). Otherwise (host memory,
// which TensorFlow uses for int32 tensors and host-memory inputs, or an
// interior offset before macOS 15) the bytes are staged through a scratch
// buffer by the CPU: copied in after the stream's earlier GPU work, and
// copied out from the completion handler, with later work on the stream
// waiting for that copy.
func (s *stream) encodeRun(e *executable, args, results []unsafe.Pointer) error {
	if len(args) != len(e.params) || len(results) != len(e.results) {
		return fmt.Errorf("metal: execute: program takes %d arguments and %d results, got %d and %d",
			len(e.params), len(e.results), len(args), len(results))
	}
	for i, t := range e.params {
		if args[i] == nil && t.Bytes() > 0 {
			return fmt.Errorf("metal: execute: argument %d (%v) is nil", i, t)
		}
	}
	for i, t := range e.results {
		if results[i] == nil && t.Bytes() > 0 {
			return fmt.Errorf("metal: execute: result %d (%v) is nil", i, t)
		}
	}
	if e.exe.Ptr() == nil {
		return nil // every result is empty
	}
	r := &run{}
	ok := false
	defer func() {
		if !ok {
			r.release()
		}
	}()
	inputs := make([]mpsgraph.ITensorData, len(e.feeds))
	var stageIn []func()
	for k, b := range e.feeds {
		td, copyIn, err := s.bind(r, args[b.index], b, true)
		if err != nil {
			return fmt.Errorf("metal: execute: argument %d (%v): %w", b.index, e.params[b.index], err)
		}
		inputs[k] = td
		if copyIn != nil {
			stageIn = append(stageIn, copyIn)
		}
	}
	outputs := make([]mpsgraph.ITensorData, len(e.targets))
	for k, b := range e.targets {
		td, _, err := s.bind(r, results[b.index], b, false)
		if err != nil {
			return fmt.Errorf("metal: execute: result %d (%v): %w", b.index, e.results[b.index], err)
		}
		outputs[k] = td
	}
	if len(stageIn) > 0 {
		// Staged arguments are read by the CPU now, so the GPU work before
		// must have finished writing them.
		if err := s.waitFlights(); err != nil {
			return err
		}
		for _, f := range stageIn {
			f()
		}
	}
	cb, err := s.newCommandBuffer()
	if err != nil {
		return err
	}
	e.exe.EncodeToCommandBufferInputsArrayResultsArrayExecutionDescriptor(cb, inputs, outputs, nil)
	ok = true
	s.commit(cb, func(failed error) error {
		defer r.release()
		if failed != nil {
			return nil
		}
		for _, c := range r.copyOut {
			copy(unsafe.Slice((*byte)(c.dst), c.n), unsafe.Slice((*byte)(c.buf.Contents()), c.n))
		}
		return nil
	})
	if len(r.copyOut) > 0 {
		// Later work may read the staged results, which exist only once
		// the completion handler has copied them.
		return s.waitFlights()
	}
	return nil
}

// bind makes the tensor data for one argument or result at p. For a staged
// argument it also returns the copy into scratch, to run once the GPU work
// before it is done.
func (s *stream) bind(r *run, p unsafe.Pointer, b binding, input bool) (mpsgraph.TensorData, func(), error) {
	d := s.d
	if a, off, found := d.mem.lookup(p); found {
		if off+b.bytes > len(a.mem) {
			return mpsgraph.TensorData{}, nil, fmt.Errorf("%d bytes at offset %d overrun the %d-byte allocation at %p", b.bytes, off, len(a.mem), a.ptr)
		}
		if off == 0 {
			td := msg[mpsgraph.TensorData](mpsgraph.TensorDataClass.Alloc(), "initWithMTLBuffer:shape:dataType:",
				a.buf, nsInts(b.shape), b.dtype)
			r.data = append(r.data, td)
			return td, nil, nil
		}
		if d.feat.ndOffset {
			desc := mps.NDArrayDescriptorClass.DescriptorWithDataTypeShape(b.dtype, numbers(b.shape))
			// The tensor is TensorFlow's or jax's, packed row after row.
			// Left at its default (NO), preferPackedRows lets MPS pad each
			// row to a stride of its own, and a rank >= 2 tensor whose row
			// is not a multiple of its alignment would be read and written
			// at the wrong places.
			if desc.RespondsToSelector(objc.Sel("setPreferPackedRows:")) {
				objc.Call[objc.Void](desc, objc.Sel("setPreferPackedRows:"), true)
			}
			nd := msg[mps.NDArray](mps.NDArrayClass.Alloc(), "initWithBuffer:offset:descriptor:", a.buf, uint(off), desc)
			if nd.Ptr() == nil {
				return mpsgraph.TensorData{}, nil, fmt.Errorf("MPSNDArray refused offset %d into the allocation at %p", off, a.ptr)
			}
			td := mpsgraph.TensorDataClass.Alloc().InitWithMPSNDArray(nd)
			nd.Release() // the tensor data holds it
			r.data = append(r.data, td)
			return td, nil, nil
		}
	}
	// Staged: host memory, or an interior offset before macOS 15.
	buf, err := d.scratch(b.bytes)
	if err != nil {
		return mpsgraph.TensorData{}, nil, err
	}
	r.scratch = append(r.scratch, buf)
	td := msg[mpsgraph.TensorData](mpsgraph.TensorDataClass.Alloc(), "initWithMTLBuffer:shape:dataType:",
		buf, nsInts(b.shape), b.dtype)
	r.data = append(r.data, td)
	if !input {
		r.copyOut = append(r.copyOut, stagedOut{dst: p, buf: buf, n: b.bytes})
		return td, nil, nil
	}
	n := b.bytes
	return td, func() {
		copy(unsafe.Slice((*byte)(buf.Contents()), n), unsafe.Slice((*byte)(p), n))
	}, nil
}

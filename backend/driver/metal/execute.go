package metal

import (
	"fmt"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
)

// run is what one execution keeps until its command buffer completes: the
// scratch buffers and the host-memory results to copy out of them.
type run struct {
	scratch []gpu.Buffer
	copyOut []stagedOut
}

type stagedOut struct {
	dst unsafe.Pointer
	buf gpu.Buffer
	n   int
}

func (r *run) release() {
	for _, b := range r.scratch {
		b.Release()
	}
	r.scratch = nil
}

// finish runs once the command buffer has completed: it copies the staged
// results out, unless the buffer failed, and releases the scratch.
func (r *run) finish(failed error) {
	defer r.release()
	if failed != nil {
		return
	}
	for _, c := range r.copyOut {
		copy(unsafe.Slice((*byte)(c.dst), c.n), c.buf.Bytes()[:c.n])
	}
}

// encodeRun encodes one execution of e into a new command buffer on the
// stream's queue and commits it; with wait, it also waits for it (and so
// for the buffers committed before it on the queue).
//
// Each argument and result is bound without a copy when it can be: at
// offset 0 of an allocation, on the allocation's buffer itself; at an
// interior offset, from macOS 15, as an MPSNDArray at that offset, with
// packed rows (TensorFlow's and jax's tensors are packed row after row).
// Otherwise (host memory, which TensorFlow uses for int32 tensors and
// host-memory inputs, or an interior offset before macOS 15) the bytes are
// staged through a scratch buffer by the CPU: copied in after the stream's
// earlier GPU work, and copied out once the command buffer completes, with
// later work on the stream waiting for that copy.
func (s *stream) encodeRun(e *executable, args, results []unsafe.Pointer, name string, wait bool) error {
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
	if e.exe == nil {
		return nil // every result is empty
	}
	f := newFlight()
	f.exe = e
	r := &f.run
	committed := false
	defer func() {
		if !committed {
			r.release()
		}
	}()
	bound := f.bindings(len(e.feeds) + len(e.targets))
	inputs, outputs := bound[:len(e.feeds)], bound[len(e.feeds):]
	var stageIn []func()
	for k, b := range e.feeds {
		data, copyIn, err := s.bind(r, args[b.index], b, true)
		if err != nil {
			return fmt.Errorf("metal: execute: argument %d (%v): %w", b.index, e.params[b.index], err)
		}
		inputs[k] = data
		if copyIn != nil {
			stageIn = append(stageIn, copyIn)
		}
	}
	for k, b := range e.targets {
		data, _, err := s.bind(r, results[b.index], b, false)
		if err != nil {
			return fmt.Errorf("metal: execute: result %d (%v): %w", b.index, e.results[b.index], err)
		}
		outputs[k] = data
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
	cb, err := s.queue.NewCommandBuffer()
	if err != nil {
		return fmt.Errorf("metal: execute %s: %w", e.signature(), err)
	}
	if err := cb.Encode(e.exe, inputs, outputs); err != nil {
		cb.Commit(nil) // nothing encoded runs; the buffer must still end
		return fmt.Errorf("metal: execute %s: %w", e.signature(), err)
	}
	committed = true
	if wait {
		return s.commitWait(cb, f, driver.TraceKernel, name)
	}
	s.commit(cb, f, driver.TraceKernel, name)
	if len(r.copyOut) > 0 {
		// Later work may read the staged results, which exist only once
		// the completion has copied them.
		return s.waitFlights()
	}
	return nil
}

// bind makes the data binding for one argument or result at p. For a staged
// argument it also returns the copy into scratch, to run once the GPU work
// before it is done.
func (s *stream) bind(r *run, p unsafe.Pointer, b binding, input bool) (gpu.Data, func(), error) {
	d := s.d
	data := gpu.Data{Shape: b.shape, DType: b.dtype}
	if a, off, found := d.mem.lookup(p); found {
		if off+b.bytes > len(a.mem) {
			return data, nil, fmt.Errorf("%d bytes at offset %d overrun the %d-byte allocation at %p", b.bytes, off, len(a.mem), a.ptr)
		}
		if off == 0 || d.dev.MacOS().AtLeast(gpu.NDArrayOffsets) {
			data.Buffer, data.Offset = a.buf, off
			// Left unset, preferPackedRows lets MPS pad each row of an
			// MPSNDArray to a stride of its own, and a rank >= 2 tensor
			// whose row is not a multiple of its alignment would be read
			// and written at the wrong places.
			data.PackedRows = true
			return data, nil, nil
		}
	}
	// Staged: host memory, or an interior offset before macOS 15.
	buf, err := d.dev.NewScratch(b.bytes)
	if err != nil {
		return data, nil, err
	}
	r.scratch = append(r.scratch, buf)
	data.Buffer, data.PackedRows = buf, true
	if !input {
		r.copyOut = append(r.copyOut, stagedOut{dst: p, buf: buf, n: b.bytes})
		return data, nil, nil
	}
	n := b.bytes
	return data, func() { copy(buf.Bytes()[:n], unsafe.Slice((*byte)(p), n)) }, nil
}

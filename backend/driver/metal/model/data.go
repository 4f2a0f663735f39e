package model

import (
	"fmt"
	"slices"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
)

// binding is a gpu.Data checked against the tensor it binds, with where its
// elements live in the buffer.
//
// At offset 0 the data is an MPSGraphTensorData over the buffer, which reads
// it packed, row after row. At an interior offset it is an MPSNDArray, whose
// row stride MPS chooses unless the descriptor sets preferPackedRows
// (PackedRows): the model then pads every row of the last dimension to a
// multiple of 16 bytes, so that a driver which forgets PackedRows reads and
// writes the wrong elements here rather than only on some Mac.
type binding struct {
	buf       *buffer
	dt        gpu.DataType
	shape     []int
	offset    int
	cols      int // elements in a row (the last dimension)
	rowStride int // bytes from one row to the next
}

// slot names a binding in errors ("MPSGraph model: run: input 2"); it is
// formatted only when an error is made, not on every execution.
type slot struct {
	what string
	i    int
}

func (s slot) String() string { return fmt.Sprintf("MPSGraph model: %s %d", s.what, s.i) }

// bind checks data against t, whose feed or target it is. Everything about
// a binding is known at encode time, so that is when it is checked.
func (d *device) bind(at slot, data gpu.Data, t gpu.Tensor) (binding, error) {
	buf, bad := d.ownedBuffer(data.Buffer)
	if bad != "" {
		return binding{}, fmt.Errorf("%s: %s", at, bad)
	}
	what := at // formatted only when an error is made
	if data.DType != t.DType || !slices.Equal(data.Shape, t.Shape) {
		return binding{}, fmt.Errorf("%s: data of %v%v for the tensor %v", what, data.DType, data.Shape, t)
	}
	size := data.DType.Size()
	switch {
	case len(data.Shape) > gpu.MaxRank:
		// As the darwin adapter refuses them: MPSGraph would raise.
		return binding{}, fmt.Errorf("%s: %d dimensions: MPSGraph's tensor data take at most %d", what, len(data.Shape), gpu.MaxRank)
	case data.Offset > 0 && elements(data.Shape) > gpu.MaxElements:
		return binding{}, fmt.Errorf("%s: %d elements at an offset: an MPSNDArray holds at most 2^31-1", what, elements(data.Shape))
	case data.Offset < 0:
		return binding{}, fmt.Errorf("%s: negative offset %d", what, data.Offset)
	case data.Offset > 0 && !d.macOS.AtLeast(gpu.NDArrayOffsets):
		return binding{}, fmt.Errorf("%s: data at offset %d needs an MPSNDArray at an offset (initWithBuffer:offset:descriptor:), from %v; this is %v",
			what, data.Offset, gpu.NDArrayOffsets, d.macOS)
	case data.Offset%size != 0:
		// Not documented either way; an element straddling its alignment is
		// the stricter reading.
		return binding{}, fmt.Errorf("%s: offset %d is not a multiple of the %v element size %d", what, data.Offset, data.DType, size)
	}
	// t's shape, which data's equals (checked above), is the executable's
	// and never changes: the binding need not copy the caller's.
	b := binding{buf: buf, dt: data.DType, shape: t.Shape, offset: data.Offset}
	b.cols = data.Shape[len(data.Shape)-1]
	b.rowStride = b.cols * size
	if data.Offset > 0 && !data.PackedRows && len(data.Shape) >= 2 {
		b.rowStride = (b.rowStride + 15) / 16 * 16 // MPS's own stride (unspecified): the model's choice
	}
	if err := b.inBounds(what); err != nil {
		return binding{}, err
	}
	return b, nil
}

func (b binding) rows() int { return elements(b.shape) / b.cols }

// at is the byte offset of element k (row-major) in the buffer.
func (b binding) at(k int) int {
	return b.offset + (k/b.cols)*b.rowStride + (k%b.cols)*b.dt.Size()
}

func (b binding) inBounds(what slot) error {
	end := b.offset + (b.rows()-1)*b.rowStride + b.cols*b.dt.Size()
	if end > len(b.buf.mem) {
		return fmt.Errorf("%s: %v%v at offset %d (row stride %d) ends at byte %d of a %d-byte buffer",
			what, b.dt, b.shape, b.offset, b.rowStride, end, len(b.buf.mem))
	}
	return nil
}

// read is the bound tensor's contents now.
func (b binding) read(what slot) (*value, error) {
	if err := b.inBounds(what); err != nil {
		return nil, err
	}
	v := newValue(b.shape, b.dt)
	for k := range v.size() {
		v.load(k, b.buf.mem[b.at(k):])
	}
	return v, nil
}

func (b binding) write(what slot, v *value) error {
	if err := b.inBounds(what); err != nil {
		return err
	}
	for k := range v.size() {
		v.store(k, b.buf.mem[b.at(k):])
	}
	return nil
}

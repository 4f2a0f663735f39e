package host

import (
	"fmt"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	register(opKernel{make: func(in ir.Instr, _ []ir.TensorType) (kernel, error) { return iotaKernel(in) }}, ir.OpIota)
	register(opKernel{make: broadcastKernel}, ir.OpBroadcastInDim)
	register(opKernel{make: transposeKernel}, ir.OpTranspose)
	register(opKernel{make: sliceKernel}, ir.OpSlice)
	register(opKernel{make: concatKernel}, ir.OpConcat)
	register(opKernel{make: padKernel}, ir.OpPad)
	register(opKernel{make: reverseKernel}, ir.OpReverse)
}

// Data movement never looks at values, so every kernel here works on
// elements of the dtype's width, and one instantiation serves F16, BF16 and
// I16 alike. Broadcast, transpose, slice, pad and iota are all one strided
// copy with different strides.

// copyStrided copies a box of shape from in to out, element (i0, i1, ...)
// going from inBase + sum(ik*inStrides[k]) to outBase + sum(ik*outStrides[k]).
// Large copies are split along the outermost dimension across goroutines;
// the boxes never overlap on the output side.
func copyStrided[T any](out []T, outBase int, outStrides []int, in []T, inBase int, inStrides []int, shape []int) {
	for _, n := range shape {
		if n == 0 {
			return
		}
	}
	sh, st := coalesce(shape, outStrides, inStrides)
	if len(sh) == 0 {
		out[outBase] = in[inBase]
		return
	}
	total := ir.Shape(sh).Size()
	if len(sh) < 2 || total < 2*grainCheap {
		copyStridedSerial(out, outBase, in, inBase, sh, st[0], st[1])
		return
	}
	perRow := total / sh[0]
	parallelFor(sh[0], max(1, grainCheap/perRow), func(lo, hi int) {
		sub := append([]int{hi - lo}, sh[1:]...)
		copyStridedSerial(out, outBase+lo*st[0][0], in, inBase+lo*st[1][0], sub, st[0], st[1])
	})
}

func copyStridedSerial[T any](out []T, outBase int, in []T, inBase int, sh, ost, ist []int) {
	last := len(sh) - 1
	n, os, is := sh[last], ost[last], ist[last]
	it := newStrideIter(sh[:last], ost[:last], ist[:last])
	for {
		o, i := outBase+it.off[0], inBase+it.off[1]
		switch {
		case os == 1 && is == 1:
			copy(out[o:o+n], in[i:i+n])
		case os == 1 && is == 0:
			v := in[i]
			dst := out[o : o+n]
			for j := range dst {
				dst[j] = v
			}
		case os == 1:
			dst := out[o : o+n]
			for j := range dst {
				dst[j] = in[i+j*is]
			}
		default:
			for j := 0; j < n; j++ {
				out[o+j*os] = in[i+j*is]
			}
		}
		if !it.next() {
			return
		}
	}
}

// stridedKernel binds a strided copy to the element width of dtype d.
func stridedKernel(d ir.DType, outBase int, outStrides []int, inBase int, inStrides, shape []int) (kernel, error) {
	switch d.Size() {
	case 1:
		return stridedOf[uint8](outBase, outStrides, inBase, inStrides, shape), nil
	case 2:
		return stridedOf[uint16](outBase, outStrides, inBase, inStrides, shape), nil
	case 4:
		return stridedOf[uint32](outBase, outStrides, inBase, inStrides, shape), nil
	case 8:
		return stridedOf[uint64](outBase, outStrides, inBase, inStrides, shape), nil
	}
	return nil, fmt.Errorf("no data movement for %v", d)
}

func stridedOf[T any](outBase int, outStrides []int, inBase int, inStrides, shape []int) kernel {
	return func(out []byte, ins [][]byte) {
		copyStrided(view[T](out), outBase, outStrides, view[T](ins[0]), inBase, inStrides, shape)
	}
}

func broadcastKernel(in ir.Instr, at []ir.TensorType) (kernel, error) {
	src, dst := at[0].Shape, in.Type.Shape
	srcStrides := src.Strides()
	inStrides := make([]int, len(dst)) // 0 along every broadcast dimension
	for i, d := range in.Axes {
		if src[i] != 1 {
			inStrides[d] = srcStrides[i]
		}
	}
	return stridedKernel(in.Type.DType, 0, dst.Strides(), 0, inStrides, dst)
}

func transposeKernel(in ir.Instr, at []ir.TensorType) (kernel, error) {
	srcStrides := at[0].Shape.Strides()
	inStrides := make([]int, len(in.Axes))
	for i, p := range in.Axes {
		inStrides[i] = srcStrides[p]
	}
	return stridedKernel(in.Type.DType, 0, in.Type.Shape.Strides(), 0, inStrides, in.Type.Shape)
}

func sliceKernel(in ir.Instr, at []ir.TensorType) (kernel, error) {
	srcStrides := at[0].Shape.Strides()
	inStrides := make([]int, len(srcStrides))
	base := 0
	for i, s := range srcStrides {
		inStrides[i] = s * in.Slice.Strides[i]
		base += s * in.Slice.Start[i]
	}
	return stridedKernel(in.Type.DType, 0, in.Type.Shape.Strides(), base, inStrides, in.Type.Shape)
}

// concatKernel copies, for every index of the dimensions before the axis,
// one contiguous run of bytes from each operand in turn.
func concatKernel(in ir.Instr, at []ir.TensorType) (kernel, error) {
	axis, size := in.Axes[0], in.Type.DType.Size()
	outer := ir.Shape(in.Type.Shape[:axis]).Size()
	runs := make([]int, len(at)) // bytes per outer index, per operand
	row := 0
	for j, t := range at {
		runs[j] = ir.Shape(t.Shape[axis:]).Size() * size
		row += runs[j]
	}
	return func(out []byte, ins [][]byte) {
		for o := range outer {
			off := o * row
			for j, r := range runs {
				copy(out[off:off+r], ins[j][o*r:(o+1)*r])
				off += r
			}
		}
	}, nil
}

// padKernel fills the output with the padding value, then copies the part of
// the operand that survives cropping (negative low/high) to its strided place.
func padKernel(in ir.Instr, at []ir.TensorType) (kernel, error) {
	src, dst, a := at[0].Shape, in.Type.Shape, in.Pad
	size := in.Type.DType.Size()
	srcStrides, dstStrides := src.Strides(), dst.Strides()
	box := make([]int, len(src))
	outStrides := make([]int, len(src))
	inBase, outBase := 0, 0
	empty := false
	for d := range src {
		step := a.Interior[d] + 1
		// Operand indices i with 0 <= Low + i*step < dst[d] survive.
		first := 0
		if a.Low[d] < 0 {
			first = (-a.Low[d] + step - 1) / step
		}
		end := src[d]
		if lim := dst[d] - a.Low[d]; lim <= 0 {
			end = 0
		} else {
			end = min(end, (lim+step-1)/step)
		}
		if end <= first {
			empty = true
		}
		box[d] = max(end-first, 0)
		outStrides[d] = dstStrides[d] * step
		inBase += first * srcStrides[d]
		outBase += (a.Low[d] + first*step) * dstStrides[d]
	}
	var move kernel
	if !empty {
		var err error
		if move, err = stridedKernel(in.Type.DType, outBase, outStrides, inBase, srcStrides, box); err != nil {
			return nil, err
		}
	}
	return func(out []byte, ins [][]byte) {
		driver.Repeat(out, ins[1][:size])
		if move != nil {
			move(out, ins[:1])
		}
	}, nil
}

// iotaKernel builds the counting sequence once, at compile time, in the
// target dtype, and broadcasts it along the other dimensions when run.
func iotaKernel(in ir.Instr) (kernel, error) {
	axis, shape, d := in.Axes[0], in.Type.Shape, in.Type.DType
	n := shape[axis]
	counts := make([]int64, n)
	for i := range counts {
		counts[i] = int64(i)
	}
	seq := newBuffer(n * d.Size())
	if n > 0 {
		conv := convertFrom[int64](d)
		if conv == nil {
			return nil, fmt.Errorf("op iota is not implemented for %v", d)
		}
		conv(seq, [][]byte{bytesOf(counts)})
	}
	inStrides := make([]int, len(shape))
	inStrides[axis] = 1
	move, err := stridedKernel(d, 0, shape.Strides(), 0, inStrides, shape)
	if err != nil {
		return nil, err
	}
	return func(out []byte, _ [][]byte) { move(out, [][]byte{seq}) }, nil
}

// reverseKernel is a strided copy that reads the reversed dims backwards:
// their input stride is negated and the walk starts at their last index.
func reverseKernel(in ir.Instr, at []ir.TensorType) (kernel, error) {
	shape := at[0].Shape
	inStrides := shape.Strides()
	base := 0
	for _, d := range in.Axes {
		if shape[d] > 0 {
			base += (shape[d] - 1) * inStrides[d]
		}
		inStrides[d] = -inStrides[d]
	}
	return stridedKernel(in.Type.DType, 0, shape.Strides(), base, inStrides, shape)
}

package model

import (
	"slices"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
)

// Movement primitives: each output element is some input element, found by
// mapping the output's multi-index back to the input's (or to the pad
// value). Row-major throughout.

func evalReshape(n *gpu.Node, x *value) *value {
	out := x.clone()
	out.shape = slices.Clone(n.Out.Shape)
	return out
}

func evalBroadcast(n *gpu.Node, x *value) *value {
	return take(x, n.Out.Shape, broadcastMap(x.shape, n.Out.Shape), nil)
}

// gatherBy maps every output multi-index through src (which returns the
// input multi-index in place, or false for padding) to a linear index of x.
func gatherBy(x *value, shape []int, src func(idx []int) bool, fill *value) *value {
	xs := strides(x.shape)
	m := make([]int, elements(shape))
	in := make([]int, len(x.shape))
	forEach(shape, func(k int, idx []int) {
		copy(in, idx)
		if !src(in) {
			m[k] = -1
			return
		}
		off := 0
		for d, i := range in {
			off += i * xs[d]
		}
		m[k] = off
	})
	return take(x, shape, m, fill)
}

func evalTranspose(n *gpu.Node, x *value) *value {
	return gatherBy(x, n.Out.Shape, func(idx []int) bool {
		idx[n.Axis], idx[n.Axis2] = idx[n.Axis2], idx[n.Axis]
		return true
	}, nil)
}

func evalSlice(n *gpu.Node, x *value) *value {
	return gatherBy(x, n.Out.Shape, func(idx []int) bool {
		for d := range idx {
			idx[d] = n.Starts[d] + idx[d]*n.Strides[d]
		}
		return true
	}, nil)
}

// evalPad puts x at offset Starts (the left padding) in a tensor of the pad
// value, converted to the type as cast would.
func evalPad(n *gpu.Node, x *value) *value {
	return gatherBy(x, n.Out.Shape, func(idx []int) bool {
		for d := range idx {
			idx[d] -= n.Starts[d]
			if idx[d] < 0 || idx[d] >= x.shape[d] {
				return false
			}
		}
		return true
	}, fromFloat64(n.Value, x.dt))
}

func evalReverse(n *gpu.Node, x *value) *value {
	return gatherBy(x, n.Out.Shape, func(idx []int) bool {
		for _, d := range n.Axes {
			idx[d] = x.shape[d] - 1 - idx[d]
		}
		return true
	}, nil)
}

// evalConcat lays the operands' blocks along Axis side by side: for each
// index of the dimensions before Axis, every operand's contiguous run.
func evalConcat(n *gpu.Node, xs []*value) *value {
	out := newValue(n.Out.Shape, n.Out.DType)
	outer, _, inner := lines(out.shape, n.Axis)
	k := 0
	for o := range outer {
		for _, x := range xs {
			run := x.shape[n.Axis] * inner
			for j := range run {
				out.set(k, x, o*run+j)
				k++
			}
		}
	}
	return out
}

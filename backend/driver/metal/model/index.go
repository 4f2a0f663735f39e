package model

import (
	"math"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
)

// Indexing primitives take int32 indices. An index outside [0, dim) is
// undefined in MPSGraph's gather and scatterND (which may read or write
// anywhere): the model fails the run with an error naming the primitive and
// the index. gatherAlongAxis documents it: an index out of range gives 0.

// throughFloat32 rounds the integer elements of a gather's or a scatter's
// result to float32 and back (to nearest, ties to even), as Apple's GPUs
// do: their gather, gatherAlongAxis and scatterND move integer data
// through float32, so an int32, uint32 or int64 element beyond 2^24 in
// magnitude comes out rounded. Narrower integers and floats are exact.
func throughFloat32(v *value, err error) (*value, error) {
	if err != nil || v.f != nil {
		return v, err
	}
	for k, x := range v.i {
		if v.dt == gpu.UInt64 {
			v.i[k] = int64(uint64(min(float64(float32(uint64(x))), 0x1p64-0x1p40)))
			continue
		}
		f := float64(float32(x))
		if f >= 0x1p63 { // int64's largest rounds up past it
			v.i[k] = intToInt(math.MaxInt64, gpu.Int64, v.dt)
			continue
		}
		v.i[k] = intToInt(int64(f), gpu.Int64, v.dt)
	}
	return v, nil
}

func indexError(op gpu.Op, i int64, dim int) error {
	return opError(op, "index %d out of range [0, %d)", i, dim)
}

// evalGather: out[o, j, in] = x[o, indices[j], in], where o ranges over
// x.shape[:axis], j over indices (flattened), in over x.shape[axis+1:].
func evalGather(n *gpu.Node, x, indices *value) (*value, error) {
	out := newValue(n.Out.Shape, n.Out.DType)
	outer, l, inner := lines(x.shape, n.Axis)
	k := 0
	for o := range outer {
		for _, i := range indices.i {
			if i < 0 || i >= int64(l) {
				return nil, indexError(n.Op, i, l)
			}
			for in := range inner {
				out.set(k, x, (o*l+int(i))*inner+in)
				k++
			}
		}
	}
	return out, nil
}

// evalGatherAlongAxis: out[.., p, ..] = x[.., indices[.., p, ..], ..] along
// Axis; indices have x's shape but along Axis.
func evalGatherAlongAxis(n *gpu.Node, x, indices *value) (*value, error) {
	out := newValue(n.Out.Shape, n.Out.DType)
	xs := strides(x.shape)
	l := x.shape[n.Axis]
	var err error
	forEach(indices.shape, func(k int, idx []int) {
		if err != nil {
			return
		}
		i := indices.i[k]
		if i < 0 || i >= int64(l) {
			return // out holds 0 there
		}
		off := 0
		for d, p := range idx {
			if d == n.Axis {
				p = int(i)
			}
			off += p * xs[d]
		}
		out.set(k, x, off)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// evalScatterND combines updates into a copy of data at the index vectors
// of indices' last dimension (length K): vector m addresses the slice
// data[v0, .., vK-1, ...] of data.shape[K:], which update slice m combines
// into. Updates apply in row-major order. For ScatterSet, which of several
// updates to one element MPSGraph keeps is unspecified; the model keeps the
// first (against a lowering that expects the last, as a sequential loop
// would give).
func evalScatterND(n *gpu.Node, data, updates, indices *value) (*value, error) {
	out := data.clone()
	kk := indices.shape[len(indices.shape)-1]
	slice := elements(data.shape[kk:])
	vectors := elements(indices.shape[:len(indices.shape)-1])
	ds := strides(data.shape)
	written := make([]bool, out.size())
	combine := scatterCombine(n.Mode, out)
	for m := range vectors {
		base := 0
		for d := range kk {
			i := indices.i[m*kk+d]
			if i < 0 || i >= int64(data.shape[d]) {
				return nil, indexError(n.Op, i, data.shape[d])
			}
			base += int(i) * ds[d]
		}
		for s := range slice {
			k, u := base+s, m*slice+s
			if n.Mode == gpu.ScatterSet {
				if !written[k] {
					out.set(k, updates, u)
					written[k] = true
				}
				continue
			}
			if combine == nil {
				return nil, opError(n.Op, "mode %v is not modelled", n.Mode)
			}
			combine(k, updates, u)
		}
	}
	return out, nil
}

// scatterCombine is out[k] = out[k] (mode) updates[u], rounded or wrapped
// to the type, for the modes other than set. Max and min are the plain
// (NaN-dropping) maximum and minimum.
func scatterCombine(mode gpu.ScatterMode, out *value) func(k int, up *value, u int) {
	var op gpu.Op
	switch mode {
	case gpu.ScatterAdd:
		op = gpu.OpAddition
	case gpu.ScatterMul:
		op = gpu.OpMultiplication
	case gpu.ScatterMax:
		op = gpu.OpMaximum
	case gpu.ScatterMin:
		op = gpu.OpMinimum
	default:
		return nil
	}
	if out.f != nil {
		f := floatBinary[op]
		return func(k int, up *value, u int) { out.f[k] = arith(out.dt, f(out.f[k], up.f[u])) }
	}
	f := intBinary(op, out.dt)
	return func(k int, up *value, u int) { out.i[k] = wrap(out.dt, f(out.i[k], up.i[u])) }
}

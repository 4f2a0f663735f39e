package metal

import (
	"math"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	registerLowering(lowerSort, ir.OpSort, ir.OpArgSort)
	registerLowering(lowerArgReduce, ir.OpArgReduce)
}

// maxStableSortRow is the longest row the stable argsort handles: its
// tie-breaking key group*n + position must fit int32.
const maxStableSortRow = 46340

// lowerSort sorts with the host driver's order: stable, NaN above every
// number (so last ascending, first descending), -0 and +0 tied. MPSGraph's
// argSort promises neither stability nor an order for NaN, so the elements
// are first mapped to int32 keys that order exactly as wanted (the float
// bits made monotonic, NaN raised above +inf), and ties are then broken by
// position (stableArgSort). int64 keys sort in two stable passes, low word
// then high word. The values follow the permutation.
func lowerSort(l *lowering, in ir.Instr, args []val) (tensor, error) {
	t := args[0].typ
	axis := in.Sort.Dim
	n := t.Shape[axis]
	if !l.g.Has(gpu.OpArgSort) || !l.g.Has(gpu.OpCumulativeSum) {
		return tensor{}, fallback(in.Op, "sort needs MPSGraph's argSort and cumulativeSum (macOS 13)")
	}
	if n > maxStableSortRow {
		return tensor{}, fallback(in.Op, "rows of %d elements (at most %d sort stably on the GPU)", n, maxStableSortRow)
	}
	x := args[0].t
	var perm tensor
	switch {
	case t.DType.IsFloat():
		if !l.g.Has(gpu.OpReinterpretCast) {
			return tensor{}, fallback(in.Op, "float sort keys need reinterpretCastTensor (macOS 13.2)")
		}
		perm = l.stableArgSort(l.descend(l.floatKey(x), in.Sort.Descending), t.Shape, axis)
	case t.DType == ir.I64:
		if !l.g.Has(gpu.OpBitwiseAND) {
			return tensor{}, fallback(in.Op, "int64 sort keys need bitwise ops (macOS 13)")
		}
		lo := l.sub(l.band(x, l.intConst(0xffffffff, i64)), l.intConst(1<<31, i64))
		hi := l.shr(x, l.intConst(32, i64))
		loK := l.descend(l.cast(lo, i32), in.Sort.Descending)
		hiK := l.descend(l.cast(hi, i32), in.Sort.Descending)
		pa := l.stableArgSort(loK, t.Shape, axis)
		pb := l.stableArgSort(l.gatherAlong(axis, hiK, pa), t.Shape, axis)
		perm = l.gatherAlong(axis, pa, pb)
	default: // int8/16/32, uint8, bool: int32 holds them all
		perm = l.stableArgSort(l.descend(l.cast(x, i32), in.Sort.Descending), t.Shape, axis)
	}
	if in.Op == ir.OpArgSort {
		return l.cast(perm, mustPhys(in.Type.DType)), nil
	}
	return l.gatherAlong(axis, x, perm), nil
}

// floatKey maps float32 values to int32 keys in the same order, -0 equal to
// +0 and every NaN above +inf.
func (l *lowering) floatKey(x tensor) tensor {
	bits := l.reinterpret(x, i32)
	// Negative floats order backwards as integers: INT_MIN - bits reverses
	// them and puts -0 (bits INT_MIN) at 0, with +0.
	ord := l.sel(l.lt(bits, l.scalar(0, i32)), l.sub(l.scalar(math.MinInt32, i32), bits), bits)
	return l.sel(l.isNaN(x), l.scalar(0x7f800001, i32), ord)
}

// descend reverses an int32 key's order when descending: -k-1 (that is ^k)
// never overflows, and stability keeps ties in their original order, as the
// host driver's descending sort does.
func (l *lowering) descend(k tensor, descending bool) tensor {
	if !descending {
		return k
	}
	return l.sub(l.sub(l.scalar(0, i32), k), l.scalar(1, i32))
}

func (l *lowering) gatherAlong(axis int, x, idx tensor) tensor {
	return l.g.GatherAlongAxis(axis, x, idx)
}

// stableArgSort is the stable ascending permutation of int32 keys along
// axis: an (unstable) argSort, then each element's group of equal keys
// (a cumulative count of key changes in sorted order, taken back to the
// original positions through the inverse permutation), then an argSort of
// group*n + position, whose keys are distinct.
func (l *lowering) stableArgSort(k tensor, shape ir.Shape, axis int) tensor {
	n := shape[axis]
	if n == 1 {
		return l.full(0, []int(shape), i32)
	}
	r := shape.Rank()
	p1 := l.argSort(k, axis)
	s := l.gatherAlong(axis, k, p1)
	starts, ends := make([]int, r), []int(shape.Clone())
	ends[axis] = 1
	first := l.slice(s, starts, ends, ones(r))
	ends[axis] = n - 1
	prev := l.concat([]tensor{first, l.slice(s, starts, ends, ones(r))}, axis)
	group := l.cumsum(l.cast(l.ne(s, prev), i32), axis)
	inv := l.argSort(p1, axis)
	g := l.gatherAlong(axis, group, inv)
	pos := l.iotaAlong(shape, axis, i32, n)
	return l.argSort(l.add(l.mul(g, l.scalar(float64(n), i32)), pos), axis)
}

// lowerArgReduce is the index of the first max (or min) along the axis, a
// NaN counting as both and the first NaN winning, as the host driver and
// TensorFlow's CPU kernels do: the positions equal to the (NaN-propagating)
// extreme, or the NaN positions when the extreme is NaN, and the least such
// position. MPSGraph's argmax does not say which of equal elements it picks.
func lowerArgReduce(l *lowering, in ir.Instr, args []val) (tensor, error) {
	t := args[0].typ
	x := args[0].t
	axis := in.Axes[0]
	n := t.Shape[axis]
	isMax := in.Reduce == ir.ReduceMax
	m, err := l.extreme(x, t.DType, []int{axis}, isMax)
	if err != nil {
		return tensor{}, err
	}
	best := l.eq(x, m)
	if t.DType.IsFloat() {
		best = l.sel(l.isNaN(m), l.isNaN(x), best)
	}
	pos := l.iotaAlong(t.Shape, axis, i32, n)
	cand := l.sel(best, pos, l.scalar(float64(n), i32))
	r := l.reduceMin(cand, []int{axis})
	return l.toShape(l.cast(r, mustPhys(in.Type.DType)), in.Type), nil
}

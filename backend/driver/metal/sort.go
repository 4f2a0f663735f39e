package metal

import (
	"math"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	registerLowering(lowerSort, ir.OpSort, ir.OpArgSort)
	registerLowering(lowerArgReduce, ir.OpArgReduce)
	registerTensorTuple(lowerSortRegion, ir.OpSortRegion)
}

// How sorts are built. MPSGraph's argSort promises neither stability nor
// an order for NaN, so every sort here is a stable sort of int32 keys whose
// signed order is exactly the order wanted (keyLevels): the float bits made
// monotonic, wide integers split into several keys. A lexicographic order
// of several keys is sorted key by key from the least significant, each
// pass stable (stablePermutation). The operands then follow the
// permutation (gatherExact).
//
// MPSGraph's gathers move integer data through float32 on Apple's GPUs:
// an int32 above 2^24 in magnitude comes out rounded. Keys are such
// integers (a float's bits are near 2^30), so no key is gathered whole: it
// travels as two 16-bit halves, as do int32 and uint32 operands (int64 as
// four). Positions and ranks, below 2^24, are gathered as they are.

// maxStableSortRow is the longest row the stable passes handle: their
// tie-breaking key rank*n + position must fit int32.
const maxStableSortRow = 46340

// canSort says whether a row of n elements sorts on the GPU here.
func (l *lowering) canSort(op ir.Op, n int) error {
	if n > maxStableSortRow {
		return fallback(op, "rows of %d elements (at most %d sort stably on the GPU)", n, maxStableSortRow)
	}
	return nil
}

// lowerSort sorts with the host driver's order: stable, NaN above every
// number (so last ascending, first descending), -0 and +0 tied: the
// canonical float order, as jax's sort compares floats. The values follow
// the permutation.
func lowerSort(l *lowering, in ir.Instr, args []val) (tensor, error) {
	t := args[0].typ
	axis := in.Sort.Dim
	if err := l.canSort(in.Op, t.Shape[axis]); err != nil {
		return tensor{}, err
	}
	order := ir.KeyPlain
	if t.DType.IsFloat() {
		order = ir.KeyCanonical
	}
	keys, err := l.keyLevels(in.Op, args[0], order, in.Sort.Descending)
	if err != nil {
		return tensor{}, err
	}
	perm := l.stablePermutation(keys, t.Shape, axis)
	if in.Op == ir.OpArgSort {
		return l.cast(perm, mustPhys(in.Type.DType)), nil
	}
	return l.gatherExact(axis, args[0], perm), nil
}

// lowerSortRegion sorts by a comparator of the forms ir.SortKeysOf knows
// (jax's sort, argsort, lax.sort with num_keys, top_k, approx_max_k; of
// complex64, by the real parts, then the imaginary parts, each a float key):
// stably, lexicographically by the keys it names, every operand following
// the permutation. A float compared plainly (as approx_max_k does) is no
// strict weak order once a NaN occurs; the IR's stable insertion sort then
// leaves each NaN where it is and sorts the numbers between two NaNs among
// themselves (a number never moves past a NaN, nor a NaN at all), which
// sorting first by the count of NaNs before each element, NaN last within
// that, reproduces. Where such a key is one of several, the insertion
// sort's result has no such description: the CPU runs it.
func lowerSortRegion(l *lowering, in ir.Instr, args []val) ([]tensor, error) {
	keys, ok := ir.SortKeysOf(in.Regions[0])
	if !ok {
		return nil, fallback(in.Op, "a comparator of no form the lowering knows (strict comparisons of keys, lexicographic: "+
			"the operands themselves, the float total order, jax's canonical floats, an integer's bits with the top one flipped)")
	}
	t := args[0].typ
	axis := in.Sort.Dim
	if err := l.canSort(in.Op, t.Shape[axis]); err != nil {
		return nil, err
	}
	var levels []keyLevel
	for _, k := range keys {
		x := args[k.Operand]
		if k.Part != ir.PartWhole { // a complex64's real or imaginary parts
			re, im := l.complexParts(x.t, x.typ.Shape)
			part := re
			if k.Part == ir.PartImag {
				part = im
			}
			x = val{t: part, typ: ir.TensorType{DType: ir.F32, Shape: x.typ.Shape}}
		}
		plainFloat := k.Order == ir.KeyPlain && x.typ.DType.IsFloat()
		if plainFloat && len(keys) > 1 {
			return nil, fallback(in.Op, "a float compared plainly (not in a total order) as one key of %d: with a NaN the comparator is no strict weak order "+
				"and the result is the CPU's insertion sort's", len(keys))
		}
		ls, err := l.keyLevels(in.Op, x, k.Order, k.Descending)
		if err != nil {
			return nil, err
		}
		if plainFloat {
			nan := l.isNaN(x.t)
			ls[0].t = l.sel(nan, l.scalar(math.MaxInt32, i32), ls[0].t) // last in its run, descending too
			before := l.sub(l.cumsum(l.cast(nan, i32), axis), l.cast(nan, i32))
			ls = append([]keyLevel{{t: before, small: true}}, ls...)
		}
		levels = append(levels, ls...)
	}
	perm := l.stablePermutation(levels, t.Shape, axis)
	outs := make([]tensor, len(args))
	for i, a := range args {
		outs[i] = l.gatherExact(axis, a, perm)
	}
	return outs, nil
}

// keyLevel is an int32 key in the original order, ascending. small keys
// lie within +-2^16 and gather as they are.
type keyLevel struct {
	t     tensor
	small bool
}

// keyLevels maps v's elements to int32 keys whose lexicographic signed
// order is order (descending if asked), most significant first, ties
// where the order ties:
//   - floats, canonical or plain: -0 as +0 and every NaN one key above
//     +inf (floatKey); total: the bits made monotonic (totalKey). float16
//     and bfloat16 are held as float32, which they widen into exactly, so
//     the float32 keys order them as their own bits would;
//   - int8, int16, uint8, bool: their value; int32: itself; uint32 through
//     int64, minus 2^31; int64: its high word, then its low word minus 2^31;
//     flipped, the top bit flipped first.
func (l *lowering) keyLevels(op ir.Op, v val, order ir.KeyOrder, descending bool) ([]keyLevel, error) {
	x, d := v.t, v.typ.DType
	var ks []keyLevel
	switch {
	case d == ir.C64:
		return nil, fallback(op, "complex64 sort keys")
	case d.IsFloat():
		if !l.g.Has(gpu.OpReinterpretCast) {
			return nil, fallback(op, "float sort keys are made from the bits, with reinterpretCastTensor (macOS 13.2)")
		}
		if order == ir.KeyTotal {
			ks = []keyLevel{{t: l.totalKey(x)}}
		} else {
			ks = []keyLevel{{t: l.floatKey(x)}}
		}
	case d == ir.I64:
		if order == ir.KeyFlipped {
			x = l.bxor(x, l.intConst(math.MinInt64, i64))
		}
		lo := l.sub(l.band(x, l.intConst(0xffffffff, i64)), l.intConst(1<<31, i64))
		hi := l.shr(x, l.intConst(32, i64))
		ks = []keyLevel{{t: l.cast(hi, i32)}, {t: l.cast(lo, i32)}}
	case d == ir.U32:
		w := l.cast(x, i64) // exact
		if order == ir.KeyFlipped {
			w = l.sel(l.ge(w, l.intConst(1<<31, i64)), l.sub(w, l.intConst(1<<32, i64)), w)
		} else {
			w = l.sub(w, l.intConst(1<<31, i64))
		}
		ks = []keyLevel{{t: l.cast(w, i32)}}
	case d == ir.I32:
		if order == ir.KeyFlipped {
			x = l.bxor(x, l.intConst(math.MinInt32, i32))
		}
		ks = []keyLevel{{t: x}}
	default: // int8, int16, uint8, bool
		w := l.cast(x, i32)
		if order == ir.KeyFlipped {
			bits := 8 * d.Size()
			if d == ir.U8 {
				w = l.sel(l.ge(w, l.scalar(128, i32)), l.sub(w, l.scalar(256, i32)), w)
			} else {
				w = l.sel(l.lt(w, l.scalar(0, i32)), l.add(w, l.scalar(float64(int(1)<<bits), i32)), w)
			}
		}
		ks = []keyLevel{{t: w, small: true}}
	}
	if descending {
		for i := range ks {
			ks[i].t = l.descend(ks[i].t)
		}
	}
	return ks, nil
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

// totalKey is StableHLO's total-order key of float32 values: the bits, all
// but the sign flipped where the sign is set, so that -NaN < -inf < ... <
// -0 < +0 < ... < +inf < +NaN as signed integers.
func (l *lowering) totalKey(x tensor) tensor {
	bits := l.reinterpret(x, i32)
	mask := l.sel(l.lt(bits, l.scalar(0, i32)), l.scalar(math.MaxInt32, i32), l.scalar(0, i32))
	return l.bxor(bits, mask)
}

// descend reverses an int32 key's order: -k-1 (that is ^k) never
// overflows, and stability keeps ties in their original order, as the host
// driver's descending sort does.
func (l *lowering) descend(k tensor) tensor {
	return l.sub(l.sub(l.scalar(0, i32), k), l.scalar(1, i32))
}

func (l *lowering) gatherAlong(axis int, x, idx tensor) tensor {
	return l.g.GatherAlongAxis(axis, x, idx)
}

// gatherExact is v's elements along axis at the int32 positions idx
// (idx of v's shape), bit for bit (wideGather says how integers go);
// complex64, a trailing pair of float32, takes each position twice.
func (l *lowering) gatherExact(axis int, v val, idx tensor) tensor {
	x := v.t
	switch v.typ.DType {
	case ir.C64:
		pair := append(append([]int(nil), idx.Shape...), 1)
		return l.gatherAlong(axis, x, l.broadcastTo(l.reshape(idx, pair), x.Shape))
	case ir.I32, ir.U32, ir.I64:
		return l.wideGather(x, func(t tensor) tensor { return l.gatherAlong(axis, t, idx) })
	}
	return l.gatherAlong(axis, x, idx)
}

// wideGather gathers int32, uint32 or int64 data exactly with gather,
// MPSGraph's gather or gatherAlongAxis: they move integers through
// float32, exact only below 2^24 (jax-mps found it on Macs; the model
// rounds so too). int32 and uint32 go as two 16-bit halves, int64 as four
// 16-bit pieces, each exact in float32, joined again by arithmetic that
// cannot overflow: the high piece keeps the sign (an arithmetic shift for
// the signed types), the others are in [0, 2^16).
func (l *lowering) wideGather(x tensor, gather func(tensor) tensor) tensor {
	dt := x.DType
	if dt != gpu.Int64 {
		hi := gather(l.shr(x, l.scalar(16, dt)))
		lo := gather(l.band(x, l.scalar(0xffff, dt)))
		return l.add(l.mul(hi, l.scalar(65536, dt)), lo)
	}
	var acc tensor
	for s := 48; s >= 0; s -= 16 {
		p := x
		if s > 0 {
			p = l.shr(x, l.intConst(int64(s), i64))
		}
		if s < 48 {
			p = l.band(p, l.intConst(0xffff, i64))
		}
		g := gather(p)
		if s == 48 {
			acc = g
			continue
		}
		acc = l.add(l.mul(acc, l.intConst(65536, i64)), g)
	}
	return acc
}

// gatherWide gathers int32 or uint32 data exactly along axis.
func (l *lowering) gatherWide(axis int, x, idx tensor) tensor {
	return l.wideGather(x, func(t tensor) tensor { return l.gatherAlong(axis, t, idx) })
}

// gatherKey gathers a key level exactly.
func (l *lowering) gatherKey(axis int, k keyLevel, idx tensor) tensor {
	if k.small {
		return l.gatherAlong(axis, k.t, idx)
	}
	return l.gatherWide(axis, k.t, idx)
}

// stablePermutation is the int32 permutation that sorts each line along
// axis by the key levels (the first most significant), ties kept in their
// original order: one stable pass per level, least significant first, each
// pass sorting the order the previous ones left.
func (l *lowering) stablePermutation(levels []keyLevel, shape ir.Shape, axis int) tensor {
	if shape[axis] == 1 {
		return l.full(0, []int(shape), i32)
	}
	var perm *tensor
	for i := len(levels) - 1; i >= 0; i-- {
		p := l.stablePass(levels[i], perm, shape, axis)
		perm = &p
	}
	return *perm
}

// stablePass sorts the key level k, taken in the order perm (nil: the
// original order), stably, and returns the permutation of the original
// positions it gives: an (unstable) argSort, then each element's rank among
// the distinct keys (a running count of key changes in sorted order, taken
// back through the inverse permutation), then an argSort of rank*n +
// position, whose keys are distinct.
func (l *lowering) stablePass(k keyLevel, perm *tensor, shape ir.Shape, axis int) tensor {
	n := shape[axis]
	r := shape.Rank()
	cur := k.t
	if perm != nil {
		cur = l.gatherKey(axis, k, *perm)
	}
	p1 := l.argSort(cur, axis)
	src := p1 // original positions, in sorted order
	if perm != nil {
		src = l.gatherAlong(axis, *perm, p1)
	}
	s := l.gatherKey(axis, k, src)
	starts, ends := make([]int, r), []int(shape.Clone())
	ends[axis] = 1
	first := l.slice(s, starts, ends, ones(r))
	ends[axis] = n - 1
	prev := l.concat([]tensor{first, l.slice(s, starts, ends, ones(r))}, axis)
	rank := l.cumsum(l.cast(l.ne(s, prev), i32), axis)
	inv := l.argSort(p1, axis)
	g := l.gatherAlong(axis, rank, inv)
	pos := l.iotaAlong(shape, axis, i32, n)
	q := l.argSort(l.add(l.mul(g, l.scalar(float64(n), i32)), pos), axis)
	if perm != nil {
		return l.gatherAlong(axis, *perm, q)
	}
	return q
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

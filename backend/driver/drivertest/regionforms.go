package drivertest

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

// sort_region and reduce_region in the forms jax writes them (the
// comparators of jnp.sort, argsort, lax.sort with num_keys, top_k and
// approx_max_k; the variadic reduce of argmax and argmin; reductions of
// several operands at once), written here as the StableHLO reader
// translates them, on data with NaNs of both signs, infinities, signed
// zeros, subnormals, ties and integer extremes. Results are compared byte
// for byte: the forms move elements, never compute new ones.

// --- keys --------------------------------------------------------------------

// sortKey is one level of a comparator: operand op, compared as order says
// (ir.KeyOrder's meanings), descending or not.
type sortKey struct {
	op    int
	order ir.KeyOrder
	desc  bool
}

// totalKeyIR is the StableHLO reader's total-order key of a float:
// bits ^ ((bits >>arith w-1) >>logical 1).
func totalKeyIR(b *ir.Builder, x ir.Value) ir.Value {
	it := map[ir.DType]ir.DType{ir.F32: ir.I32, ir.F16: ir.I16, ir.BF16: ir.I16}[b.Type(x).DType]
	w := float64(8 * it.Size())
	v := b.BitcastConvert(x, it)
	sign := b.Binary(ir.OpShiftRightArithmetic, v, b.Scalar(it, w-1))
	return b.Binary(ir.OpXor, v, b.Binary(ir.OpShiftRightLogical, sign, b.Scalar(it, 1)))
}

// canonicalIR is jax's float canonicalization for sorting: -0 to +0, NaN
// to one NaN.
func canonicalIR(b *ir.Builder, x ir.Value) ir.Value {
	d := b.Type(x).DType
	zero := b.Scalar(d, 0)
	r := b.Select(b.Compare(ir.CmpEQ, x, zero), zero, x)
	return b.Select(b.Compare(ir.CmpNE, x, x), b.Scalar(d, math.NaN()), r)
}

// keyIR is a key's expression of a comparator parameter.
func keyIR(b *ir.Builder, x ir.Value, order ir.KeyOrder) ir.Value {
	switch order {
	case ir.KeyTotal:
		return totalKeyIR(b, x)
	case ir.KeyCanonical:
		return totalKeyIR(b, canonicalIR(b, x))
	case ir.KeyFlipped:
		d := b.Type(x).DType
		top := b.Constant(ir.TensorType{DType: d}, binary.LittleEndian.AppendUint64(nil, 1<<(8*d.Size()-1))[:d.Size()])
		return b.Binary(ir.OpXor, x, top)
	}
	return x
}

// comparatorIR is the comparator of keys as jax writes lax.sort's:
// or(lt(k0), and(eq(k0), or(lt(k1), ...))), GT for a descending key.
func comparatorIR(t *testing.T, ds []ir.DType, keys []sortKey) *ir.Program {
	return region(t, pairs(ds), func(b *ir.Builder, xs []ir.Value) []ir.Value {
		var p ir.Value
		for i := len(keys) - 1; i >= 0; i-- {
			k := keys[i]
			l, r := keyIR(b, xs[2*k.op], k.order), keyIR(b, xs[2*k.op+1], k.order)
			dir := ir.CmpLT
			if k.desc {
				dir = ir.CmpGT
			}
			c := b.Compare(dir, l, r)
			if i < len(keys)-1 {
				c = b.Binary(ir.OpOr, c, b.Binary(ir.OpAnd, b.Compare(ir.CmpEQ, l, r), p))
			}
			p = c
		}
		return []ir.Value{p}
	})
}

// pairs is each scalar type twice, a comparator's parameters.
func pairs(ds []ir.DType) []ir.TensorType {
	var ps []ir.TensorType
	for _, d := range ds {
		ps = append(ps, tt(d), tt(d))
	}
	return ps
}

// elemBits is element k of x's bytes, zero-extended.
func elemBits(x tensor, raw []byte, k int) uint64 {
	n := x.T.DType.Size()
	var buf [8]byte
	copy(buf[:], raw[k*n:(k+1)*n])
	return binary.LittleEndian.Uint64(buf[:])
}

// signExtend reads the low w bits of b as a signed integer.
func signExtend(b uint64, w int) int64 { return int64(b<<(64-w)) >> (64 - w) }

// keyCmp is the order of a key on two elements of x, written from the
// definitions: -1, 0 or 1, and ordered false where a NaN makes plain floats
// unordered.
func keyCmp(x tensor, raw []byte, order ir.KeyOrder, a, b int) (c int, ordered bool) {
	d := x.T.DType
	w := 8 * d.Size()
	ba, bb := elemBits(x, raw, a), elemBits(x, raw, b)
	var ka, kb int64
	switch {
	case d.IsFloat() && order == ir.KeyPlain:
		fa, fb := decode(d, raw[a*d.Size():][:d.Size()])[0], decode(d, raw[b*d.Size():][:d.Size()])[0]
		switch {
		case fa < fb:
			return -1, true
		case fa > fb:
			return 1, true
		case fa == fb:
			return 0, true
		}
		return 0, false
	case d.IsFloat():
		canon := func(bits uint64) uint64 {
			f := decode(d, binary.LittleEndian.AppendUint64(nil, bits)[:d.Size()])[0]
			switch {
			case order != ir.KeyCanonical:
			case math.IsNaN(f):
				return map[ir.DType]uint64{ir.F32: 0x7fc00000, ir.F16: 0x7e00, ir.BF16: 0x7fc0}[d]
			case f == 0:
				return 0
			}
			return bits
		}
		total := func(bits uint64) int64 {
			v := signExtend(canon(bits), w)
			if v < 0 {
				v ^= 1<<(w-1) - 1
			}
			return v
		}
		ka, kb = total(ba), total(bb)
	case order == ir.KeyFlipped: // the flipped bits in the dtype's own order
		top := uint64(1) << (w - 1)
		if d.IsUnsigned() {
			ka, kb = int64(ba^top), int64(bb^top)
		} else {
			ka, kb = signExtend(ba^top, w), signExtend(bb^top, w)
		}
	case d.IsUnsigned() || d == ir.Bool:
		ka, kb = int64(ba), int64(bb)
	default:
		ka, kb = signExtend(ba, w), signExtend(bb, w)
	}
	switch {
	case ka < kb:
		return -1, true
	case ka > kb:
		return 1, true
	}
	return 0, true
}

// lexLess is the comparator of keys on elements a and b: the first key
// that differs decides. Unordered plain floats are neither less.
func lexLess(xs []tensor, raws [][]byte, keys []sortKey) func(a, b int) bool {
	return func(a, b int) bool {
		for _, k := range keys {
			c, ordered := keyCmp(xs[k.op], raws[k.op], k.order, a, b)
			if !ordered {
				return false
			}
			if k.desc {
				c = -c
			}
			if c != 0 {
				return c < 0
			}
		}
		return false
	}
}

// --- data ----------------------------------------------------------------------

// floatSpecials is a float tensor cycling through NaNs of both signs,
// infinities, signed zeros, a subnormal of each sign (float32) and small
// values, many of them tied.
func floatSpecials(h *harness, d ir.DType, shape ...int) tensor {
	x := h.gen(d, small, shape...)
	negZero, nan := math.Copysign(0, -1), math.NaN()
	specials := []float64{nan, math.Inf(1), negZero, math.Copysign(nan, -1), 0, math.Inf(-1), 1, negZero, nan, -1}
	if d == ir.F32 {
		specials = append(specials, 1e-45, -1e-45)
	}
	next := 0
	for i := range x.V {
		if i%3 != 1 { // every third element stays an ordinary value
			x.V[i] = specials[next%len(specials)]
			next++
		}
	}
	return x
}

// wideOf is a tensor of integers at their dtype's extremes and around 2^24
// and 2^53, repeated, in a scrambled order.
func wideOf(h *harness, d ir.DType, shape ...int) tensor {
	var vs []int64
	switch d {
	case ir.I32:
		vs = []int64{math.MaxInt32, math.MinInt32, 1 << 24, 1<<24 + 1, -(1 << 24) - 1, 1<<30 + 3, math.MaxInt32 - 1, 0, -1}
	case ir.U32:
		vs = []int64{math.MaxUint32, 1 << 31, 1<<31 - 1, 1<<24 + 1, 1 << 24, 0, 1, 3000000000}
	case ir.I64:
		vs = []int64{math.MaxInt64, math.MinInt64, 1<<53 + 1, 1 << 53, -(1 << 53) - 1, 1<<62 + 7, 1<<32 + 1, -1, 0}
	case ir.I16:
		vs = []int64{math.MaxInt16, math.MinInt16, -1, 0, 1, 300}
	case ir.I8:
		vs = []int64{math.MaxInt8, math.MinInt8, -1, 0, 1}
	case ir.U8:
		vs = []int64{255, 0, 128, 127, 1}
	case ir.Bool:
		vs = []int64{1, 0, 0}
	}
	x := tensor{T: tt(d, shape...)}
	for k := range x.T.Shape.Size() {
		v := uint64(vs[(k*7+k/len(vs))%len(vs)]) // 7 is prime to every length: each value, then repeats
		x.Raw = append(x.Raw, binary.LittleEndian.AppendUint64(nil, v)[:d.Size()]...)
	}
	x.V = decode(d, x.Raw)
	return x
}

// iotaOf is an int32 tensor counting along dim.
func iotaOf(shape []int, dim int) tensor {
	x := tensor{T: tt(ir.I32, shape...), V: make([]float64, ir.Shape(shape).Size())}
	forEachIndex(shape, func(idx []int) { x.V[offset(shape, idx)] = float64(idx[dim]) })
	return x
}

// --- sort_region -----------------------------------------------------------------

// testSortRegion sorts operands together by comparators of the forms jax
// writes, against a stable insertion sort by the keys' definitions.
func testSortRegion(t *testing.T, h *harness) {
	type sortFormCase struct {
		name  string
		xs    []tensor
		dim   int
		keys  []sortKey
		carry bool // the last operand is an iota along dim (argsort, top_k)
	}
	var cases []sortFormCase
	halves := h.keep([]ir.DType{ir.F32, ir.F16, ir.BF16})
	for _, d := range halves {
		cases = append(cases,
			sortFormCase{fmt.Sprintf("jnp.sort %v", d), []tensor{floatSpecials(h, d, 3, 23)}, 1, []sortKey{{0, ir.KeyCanonical, false}}, false},
			sortFormCase{fmt.Sprintf("jnp.argsort %v along 0", d), []tensor{floatSpecials(h, d, 13, 2)}, 0, []sortKey{{0, ir.KeyCanonical, false}}, true},
			sortFormCase{fmt.Sprintf("top_k %v (total order, descending)", d), []tensor{floatSpecials(h, d, 2, 24)}, 1, []sortKey{{0, ir.KeyTotal, true}}, true},
			// Plain compares with NaN: rows up to 20, where every stable
			// sort agrees with the reference's insertion sort.
			sortFormCase{fmt.Sprintf("approx_max_k %v (plain GT)", d), []tensor{floatSpecials(h, d, 3, 17)}, 1, []sortKey{{0, ir.KeyPlain, true}}, true},
			sortFormCase{fmt.Sprintf("plain LT %v along 0", d), []tensor{floatSpecials(h, d, 20, 2)}, 0, []sortKey{{0, ir.KeyPlain, false}}, true},
		)
	}
	cases = append(cases,
		sortFormCase{"total order of float32, wide int32 and int64 values carried", []tensor{floatSpecials(h, ir.F32, 2, 18), wideOf(h, ir.I32, 2, 18), wideOf(h, ir.I64, 2, 18)},
			1, []sortKey{{0, ir.KeyTotal, false}}, false},
		sortFormCase{"int32 keys at the extremes, float32 values", []tensor{wideOf(h, ir.I32, 3, 11), floatSpecials(h, ir.F32, 3, 11)}, 1, []sortKey{{0, ir.KeyPlain, false}}, false},
		sortFormCase{"uint32 keys descending", []tensor{wideOf(h, ir.U32, 2, 16)}, 1, []sortKey{{0, ir.KeyPlain, true}}, true},
		sortFormCase{"int64 keys, a second operand's values", []tensor{wideOf(h, ir.I64, 9, 2), floatSpecials(h, ir.F16, 9, 2)}, 0, []sortKey{{0, ir.KeyPlain, false}}, true},
		sortFormCase{"values by the second operand, int8", []tensor{floatSpecials(h, ir.F32, 2, 10), wideOf(h, ir.I8, 2, 10)}, 1, []sortKey{{1, ir.KeyPlain, true}}, false},
		sortFormCase{"bool keys", []tensor{wideOf(h, ir.Bool, 2, 9)}, 1, []sortKey{{0, ir.KeyPlain, false}}, true},
		sortFormCase{"ui16 held as int16 (top bit flipped)", []tensor{wideOf(h, ir.I16, 2, 12)}, 1, []sortKey{{0, ir.KeyFlipped, false}}, true},
		sortFormCase{"ui64 held as int64, descending", []tensor{wideOf(h, ir.I64, 2, 12)}, 1, []sortKey{{0, ir.KeyFlipped, true}}, true},
		sortFormCase{"uint8 in signed order", []tensor{wideOf(h, ir.U8, 1, 10)}, 1, []sortKey{{0, ir.KeyFlipped, false}}, true},
		sortFormCase{"num_keys=2: int32 ties then canonical floats descending, int64 carried",
			[]tensor{h.gen(ir.I32, small, 3, 19), floatSpecials(h, ir.F32, 3, 19), wideOf(h, ir.I64, 3, 19)}, 1,
			[]sortKey{{0, ir.KeyPlain, false}, {1, ir.KeyCanonical, true}}, false},
		sortFormCase{"three keys: uint8, int64 descending, float16 total order",
			[]tensor{h.gen(ir.U8, small, 2, 30), wideOf(h, ir.I64, 2, 30), floatSpecials(h, ir.F16, 2, 30)}, 1,
			[]sortKey{{0, ir.KeyPlain, false}, {1, ir.KeyPlain, true}, {2, ir.KeyTotal, false}}, true},
		sortFormCase{"rows of one", []tensor{floatSpecials(h, ir.F32, 4, 1)}, 1, []sortKey{{0, ir.KeyCanonical, false}}, true},
	)
	for _, c := range cases {
		if len(h.keep(dtypesOf(c.xs))) != len(c.xs) {
			continue
		}
		xs := slices.Clone(c.xs)
		if c.carry {
			xs = append(xs, iotaOf(xs[0].T.Shape, c.dim))
		}
		raws := make([][]byte, len(xs))
		for i, x := range xs {
			raws[i] = encodeTensor(x)
		}
		perm := stablePerm(xs[0].T.Shape, c.dim, lexLess(xs, raws, c.keys))
		want := make([][]byte, len(xs))
		for i, x := range xs {
			want[i] = permuteLines(x.T, raws[i], c.dim, perm)
		}
		cmp := comparatorIR(t, dtypesOf(xs), c.keys)
		h.checkExact(t, c.name, xs, func(b *ir.Builder, vs []ir.Value) []ir.Value {
			return b.Results(b.SortRegion(cmp, c.dim, vs...))
		}, want)
	}
	testSortRegionTies(t, h)
}

func dtypesOf(xs []tensor) []ir.DType {
	ds := make([]ir.DType, len(xs))
	for i, x := range xs {
		ds[i] = x.T.DType
	}
	return ds
}

// testSortRegionTies: a key-value sort (keys with ties, values their
// positions) by a plain comparator on the keys, ascending and descending,
// along each axis: ties must keep their order.
func testSortRegionTies(t *testing.T, h *harness) {
	f, i32 := tt(ir.F32), tt(ir.I32)
	shape := []int{3, 5}
	keys := h.gen(ir.F32, small, shape...)
	for i := range keys.V {
		keys.V[i] = math.Round(keys.V[i]) // few distinct keys: many ties
	}
	for _, desc := range []bool{false, true} {
		dir := ir.CmpLT
		if desc {
			dir = ir.CmpGT
		}
		cmp := region(t, []ir.TensorType{f, f, i32, i32}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			return []ir.Value{b.Compare(dir, xs[0], xs[1])}
		})
		for dim := range 2 {
			wantK := tensor{T: keys.T, V: make([]float64, len(keys.V))}
			wantV := tensor{T: tt(ir.I32, shape...), V: make([]float64, len(keys.V))}
			other := 1 - dim
			for o := range shape[other] {
				pos := make([]int, shape[dim])
				at := func(j int) int {
					idx := []int{0, 0}
					idx[dim], idx[other] = j, o
					return offset(shape, idx)
				}
				for j := range pos {
					pos[j] = j
				}
				sortStable(pos, func(a, b int) bool {
					ka, kb := keys.V[at(a)], keys.V[at(b)]
					if desc {
						return ka > kb
					}
					return ka < kb
				})
				for j, p := range pos {
					wantK.V[at(j)], wantV.V[at(j)] = keys.V[at(p)], float64(p)
				}
			}
			for res, want := range []tensor{wantK, wantV} {
				h.check(t, fmt.Sprintf("descending %v along %d, result %d", desc, dim, res), []tensor{keys}, func(b *ir.Builder, xs []ir.Value) ir.Value {
					r := b.SortRegion(cmp, dim, xs[0], b.Iota(tt(ir.I32, shape...), dim))
					return b.GetResult(r, res)
				}, want)
			}
		}
	}
}

// --- reduce_region -----------------------------------------------------------------

// testReduceRegion: an argmax as jax writes it, a variadic reduction of
// (values, indices) whose body keeps the first largest, over each axis of
// a matrix; and a sum by a body, from an init that is not the identity.
func testReduceRegion(t *testing.T, h *harness) {
	f, i32 := tt(ir.F32), tt(ir.I32)
	argmax := region(t, []ir.TensorType{f, i32, f, i32}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		take := b.Compare(ir.CmpGT, xs[2], xs[0])
		return []ir.Value{b.Select(take, xs[2], xs[0]), b.Select(take, xs[3], xs[1])}
	})
	sum := region(t, []ir.TensorType{f, f}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return []ir.Value{b.Binary(ir.OpAdd, xs[0], xs[1])}
	})
	shape := []int{3, 4}
	x := h.gen(ir.F32, anyValue, shape...)
	for axis := range 2 {
		other := 1 - axis
		wantV := tensor{T: tt(ir.F32, shape[other]), V: make([]float64, shape[other])}
		wantI := tensor{T: tt(ir.I32, shape[other]), V: make([]float64, shape[other])}
		for o := range shape[other] {
			best, at := math.Inf(-1), 0
			for r := range shape[axis] {
				idx := []int{0, 0}
				idx[axis], idx[other] = r, o
				if v := x.V[offset(shape, idx)]; v > best {
					best, at = v, r
				}
			}
			wantV.V[o], wantI.V[o] = best, float64(at)
		}
		for res, want := range []tensor{wantV, wantI} {
			h.check(t, fmt.Sprintf("argmax over axis %d, result %d", axis, res), []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
				iota := b.Iota(tt(ir.I32, shape...), axis)
				r := b.ReduceRegion(argmax, []ir.Value{xs[0], iota}, []ir.Value{b.Scalar(ir.F32, math.Inf(-1)), b.Scalar(ir.I32, 0)}, []int{axis})
				return b.GetResult(r, res)
			}, want)
		}
	}
	want := tensor{T: tt(ir.F32, 3), V: make([]float64, 3)}
	for r := range 3 {
		acc := 10.0
		for c := range 4 {
			acc = roundTo(ir.F32, acc+x.V[offset(shape, []int{r, c})])
		}
		want.V[r] = acc
	}
	h.check(t, "sum by a body from 10", []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
		return b.GetResult(b.ReduceRegion(sum, []ir.Value{xs[0]}, []ir.Value{b.Scalar(ir.F32, 10)}, []int{1}), 0)
	}, want)
}

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
// for byte: sorts and argmax move elements, and the reductions' data are
// integers, or floats small enough that every order of summation is exact.

// --- keys --------------------------------------------------------------------

// sortKey is one level of a comparator: operand op, compared as order says
// (ir.KeyOrder's meanings), descending or not; of a complex64 operand, its
// part (real or imaginary).
type sortKey struct {
	op    int
	order ir.KeyOrder
	desc  bool
	part  ir.KeyPart
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
			l, r := xs[2*k.op], xs[2*k.op+1]
			switch k.part {
			case ir.PartReal:
				l, r = b.Real(l), b.Real(r)
			case ir.PartImag:
				l, r = b.Imag(l), b.Imag(r)
			}
			l, r = keyIR(b, l, k.order), keyIR(b, r, k.order)
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

// signExtend reads the low w bits of b as a signed integer.
func signExtend(b uint64, w int) int64 { return int64(b<<(64-w)) >> (64 - w) }

// keyCmp is the order of a key on two elements of x, written from the
// definitions: -1, 0 or 1, and ordered false where a NaN makes plain floats
// unordered.
func keyCmp(x tensor, raw []byte, order ir.KeyOrder, a, b int) (c int, ordered bool) {
	d := x.T.DType
	w := 8 * d.Size()
	ba, bb := elem(d, raw, a), elem(d, raw, b)
	var ka, kb int64
	switch {
	case d.IsFloat() && order == ir.KeyPlain:
		fa, fb := valueOf(d, ba), valueOf(d, bb)
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
	kx, kraw := make([]tensor, len(keys)), make([][]byte, len(keys))
	for i, k := range keys {
		kx[i], kraw[i] = xs[k.op], raws[k.op]
		if k.part != ir.PartWhole { // a complex64's parts: float32 pairs
			kx[i], kraw[i] = tensor{T: tt(ir.F32, xs[k.op].T.Shape...)}, nil
			for e := 0; e < len(raws[k.op]); e += 8 {
				off := e
				if k.part == ir.PartImag {
					off += 4
				}
				kraw[i] = append(kraw[i], raws[k.op][off:off+4]...)
			}
		}
	}
	return func(a, b int) bool {
		for i, k := range keys {
			c, ordered := keyCmp(kx[i], kraw[i], k.order, a, b)
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

// complexSpecials is a complex64 tensor whose real and imaginary parts
// cycle through floatSpecials' values, so that real parts tie often and
// the imaginary parts decide.
func complexSpecials(h *harness, shape ...int) tensor {
	re, im := floatSpecials(h, ir.F32, shape...), floatSpecials(h, ir.F32, shape...)
	for i := range re.V {
		re.V[i] = re.V[(i/5)*5] // runs of five equal real parts
		im.V[i] = im.V[(i*7)%len(im.V)]
	}
	return tensor{T: tt(ir.C64, shape...), V: re.V, Im: im.V}
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
			sortFormCase{fmt.Sprintf("jnp.sort %v", d), []tensor{floatSpecials(h, d, 3, 23)}, 1, []sortKey{{0, ir.KeyCanonical, false, ir.PartWhole}}, false},
			sortFormCase{fmt.Sprintf("jnp.argsort %v along 0", d), []tensor{floatSpecials(h, d, 13, 2)}, 0, []sortKey{{0, ir.KeyCanonical, false, ir.PartWhole}}, true},
			sortFormCase{fmt.Sprintf("top_k %v (total order, descending)", d), []tensor{floatSpecials(h, d, 2, 24)}, 1, []sortKey{{0, ir.KeyTotal, true, ir.PartWhole}}, true},
			// Plain compares with NaN: rows up to 20, where every stable
			// sort agrees with the reference's insertion sort.
			sortFormCase{fmt.Sprintf("approx_max_k %v (plain GT)", d), []tensor{floatSpecials(h, d, 3, 17)}, 1, []sortKey{{0, ir.KeyPlain, true, ir.PartWhole}}, true},
			sortFormCase{fmt.Sprintf("plain LT %v along 0", d), []tensor{floatSpecials(h, d, 20, 2)}, 0, []sortKey{{0, ir.KeyPlain, false, ir.PartWhole}}, true},
		)
	}
	cases = append(cases,
		sortFormCase{"total order of float32, wide int32 and int64 values carried", []tensor{floatSpecials(h, ir.F32, 2, 18), wideOf(h, ir.I32, 2, 18), wideOf(h, ir.I64, 2, 18)},
			1, []sortKey{{0, ir.KeyTotal, false, ir.PartWhole}}, false},
		sortFormCase{"int32 keys at the extremes, float32 values", []tensor{wideOf(h, ir.I32, 3, 11), floatSpecials(h, ir.F32, 3, 11)}, 1, []sortKey{{0, ir.KeyPlain, false, ir.PartWhole}}, false},
		sortFormCase{"uint32 keys descending", []tensor{wideOf(h, ir.U32, 2, 16)}, 1, []sortKey{{0, ir.KeyPlain, true, ir.PartWhole}}, true},
		sortFormCase{"int64 keys, a second operand's values", []tensor{wideOf(h, ir.I64, 9, 2), floatSpecials(h, ir.F16, 9, 2)}, 0, []sortKey{{0, ir.KeyPlain, false, ir.PartWhole}}, true},
		sortFormCase{"values by the second operand, int8", []tensor{floatSpecials(h, ir.F32, 2, 10), wideOf(h, ir.I8, 2, 10)}, 1, []sortKey{{1, ir.KeyPlain, true, ir.PartWhole}}, false},
		sortFormCase{"bool keys", []tensor{wideOf(h, ir.Bool, 2, 9)}, 1, []sortKey{{0, ir.KeyPlain, false, ir.PartWhole}}, true},
		sortFormCase{"complex64 values carried", []tensor{h.gen(ir.I32, small, 7, 3), h.gen(ir.C64, anyValue, 7, 3)}, 0, []sortKey{{0, ir.KeyPlain, true, ir.PartWhole}}, false},
		sortFormCase{"ui16 held as int16 (top bit flipped)", []tensor{wideOf(h, ir.I16, 2, 12)}, 1, []sortKey{{0, ir.KeyFlipped, false, ir.PartWhole}}, true},
		sortFormCase{"ui64 held as int64, descending", []tensor{wideOf(h, ir.I64, 2, 12)}, 1, []sortKey{{0, ir.KeyFlipped, true, ir.PartWhole}}, true},
		sortFormCase{"uint8 in signed order", []tensor{wideOf(h, ir.U8, 1, 10)}, 1, []sortKey{{0, ir.KeyFlipped, false, ir.PartWhole}}, true},
		sortFormCase{"num_keys=2: int32 ties then canonical floats descending, int64 carried",
			[]tensor{h.gen(ir.I32, small, 3, 19), floatSpecials(h, ir.F32, 3, 19), wideOf(h, ir.I64, 3, 19)}, 1,
			[]sortKey{{0, ir.KeyPlain, false, ir.PartWhole}, {1, ir.KeyCanonical, true, ir.PartWhole}}, false},
		sortFormCase{"three keys: uint8, int64 descending, float16 total order",
			[]tensor{h.gen(ir.U8, small, 2, 30), wideOf(h, ir.I64, 2, 30), floatSpecials(h, ir.F16, 2, 30)}, 1,
			[]sortKey{{0, ir.KeyPlain, false, ir.PartWhole}, {1, ir.KeyPlain, true, ir.PartWhole}, {2, ir.KeyTotal, false, ir.PartWhole}}, true},
		sortFormCase{"rows of one", []tensor{floatSpecials(h, ir.F32, 4, 1)}, 1, []sortKey{{0, ir.KeyCanonical, false, ir.PartWhole}}, true},
		sortFormCase{"jnp.sort of complex64: canonical real parts, then imaginary parts", []tensor{complexSpecials(h, 3, 21)}, 1,
			[]sortKey{{0, ir.KeyCanonical, false, ir.PartReal}, {0, ir.KeyCanonical, false, ir.PartImag}}, true},
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

// elem is element k of raw's elements of d, as bits zero-extended; bitsOf
// is its inverse.
func elem(d ir.DType, raw []byte, k int) uint64 {
	var buf [8]byte
	copy(buf[:], raw[k*d.Size():(k+1)*d.Size()])
	return binary.LittleEndian.Uint64(buf[:])
}

func bitsOf(d ir.DType, bits uint64) []byte {
	return binary.LittleEndian.AppendUint64(nil, bits)[:d.Size()]
}

// valueOf reads float bits of dtype d as a number.
func valueOf(d ir.DType, bits uint64) float64 { return decode(d, bitsOf(d, bits))[0] }

// intOf reads integer bits of d as a signed or unsigned value.
func intOf(d ir.DType, bits uint64) int64 {
	if d.IsUnsigned() || d == ir.Bool {
		return int64(bits)
	}
	return signExtend(bits, 8*d.Size())
}

// argBodyIR is jax's _argminmax body as the StableHLO reader translates
// it: pick = cmp(v, w) or v != v; (pick ? v : w, pick or (v == w and i <
// j) ? i : j), every compare of values of their bits with the top one
// flipped where flipped.
func argBodyIR(t *testing.T, vt, it ir.DType, max, flipped bool) *ir.Program {
	return region(t, []ir.TensorType{tt(vt), tt(it), tt(vt), tt(it)}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		v, i, w, j := xs[0], xs[1], xs[2], xs[3]
		kv, kw := v, w
		if flipped {
			kv, kw = keyIR(b, v, ir.KeyFlipped), keyIR(b, w, ir.KeyFlipped)
		}
		dir := ir.CmpGT
		if !max {
			dir = ir.CmpLT
		}
		pick := b.Binary(ir.OpOr, b.Compare(dir, kv, kw), b.Compare(ir.CmpNE, kv, kv))
		pickI := b.Binary(ir.OpOr, pick, b.Binary(ir.OpAnd, b.Compare(ir.CmpEQ, kv, kw), b.Compare(ir.CmpLT, i, j)))
		return []ir.Value{b.Select(pick, v, w), b.Select(pickI, i, j)}
	})
}

// scalarBytes is one element of d holding v (float64, or bits for int64
// extremes through raw).
func scalarBytes(d ir.DType, v float64) []byte { return encode(d, []float64{v}) }

// testReduceRegion: argmax and argmin as jax writes them (a variadic
// reduce over the values and an iota of indices, or over any indices, from
// any init, over one or several axes), reductions of several operands by
// independent monoids and of one by a monoid the fixed reduce does not
// take, and a sum by a body from an init that is not the identity.
func testReduceRegion(t *testing.T, h *harness) {
	type argCase struct {
		name    string
		x, idx  tensor // idx.T.DType zero: an iota along the one axis
		it      ir.DType
		axes    []int
		v0, i0  []byte
		flipped bool
	}
	var cases []argCase
	// lowest is where an argmax (argmin) starts: the least (greatest)
	// value, in the flipped order when flipped.
	lowest := func(d ir.DType, max, flipped bool) []byte {
		if d.IsFloat() {
			return scalarBytes(d, math.Inf(map[bool]int{true: -1, false: 1}[max]))
		}
		lo, hi, _ := d.IntRange()
		if flipped {
			top := int64(1) << (8*d.Size() - 1)
			lo, hi = lo+top, hi+top // lowest and highest bits flipped
		}
		if max {
			return bitsOf(d, uint64(lo))
		}
		return bitsOf(d, uint64(hi))
	}
	for _, d := range h.keep([]ir.DType{ir.F32, ir.F16, ir.BF16}) {
		for axis := range 2 {
			cases = append(cases, argCase{name: fmt.Sprintf("%v over axis %d", d, axis), x: floatSpecials(h, d, 5, 7), it: ir.I32, axes: []int{axis}})
		}
	}
	for _, d := range []ir.DType{ir.I32, ir.U32, ir.I8, ir.U8, ir.Bool} {
		cases = append(cases, argCase{name: fmt.Sprintf("%v at its extremes", d), x: wideOf(h, d, 4, 9), it: ir.I32, axes: []int{1}})
	}
	nan := math.NaN()
	cases = append(cases,
		argCase{name: "int64 at its extremes into int64", x: wideOf(h, ir.I64, 3, 10), it: ir.I64, axes: []int{1}},
		argCase{name: "ui16 held as int16 (top bit flipped)", x: wideOf(h, ir.I16, 3, 8), it: ir.I32, axes: []int{1}, flipped: true},
		argCase{name: "ui64 held as int64 (top bit flipped) into int64", x: wideOf(h, ir.I64, 9, 2), it: ir.I64, axes: []int{0}, flipped: true},
		argCase{name: "uint8 in signed order", x: wideOf(h, ir.U8, 2, 10), it: ir.I32, axes: []int{1}, flipped: true},
		argCase{name: "float32 into int8 indices", x: floatSpecials(h, ir.F32, 4, 6), it: ir.I8, axes: []int{0}},
		// Indices that are no iota: repeated, falling, negative.
		argCase{name: "any indices, float32", x: floatSpecials(h, ir.F32, 3, 8), idx: wideOf(h, ir.I16, 3, 8), it: ir.I16, axes: []int{1}},
		argCase{name: "any indices, int32", x: h.gen(ir.I32, small, 6, 4), idx: wideOf(h, ir.I32, 6, 4), it: ir.I32, axes: []int{0}},
		argCase{name: "two axes of three", x: floatSpecials(h, ir.F32, 3, 4, 5), idx: h.gen(ir.I32, anyValue, 3, 4, 5), it: ir.I32, axes: []int{0, 2}},
		argCase{name: "no axes", x: floatSpecials(h, ir.F32, 2, 9), idx: h.gen(ir.I32, anyValue, 2, 9), it: ir.I32, axes: []int{}},
		argCase{name: "a NaN init", x: floatSpecials(h, ir.F32, 3, 5), it: ir.I32, axes: []int{1}, v0: scalarBytes(ir.F32, nan), i0: scalarBytes(ir.I32, 7)},
		argCase{name: "an init tied with the extreme", x: h.gen(ir.F32, small, 4, 6), it: ir.I32, axes: []int{1}, v0: scalarBytes(ir.F32, 2), i0: scalarBytes(ir.I32, 3)},
		argCase{name: "an init of -0 among zeros", x: tensor{T: tt(ir.F32, 2, 3), V: []float64{0, math.Copysign(0, -1), 0, -1, math.Copysign(0, -1), -2}}, it: ir.I32, axes: []int{1},
			v0: scalarBytes(ir.F32, math.Copysign(0, -1)), i0: scalarBytes(ir.I32, 9)},
	)
	for _, c := range cases {
		for _, max := range []bool{true, false} {
			vt := c.x.T.DType
			idx := c.idx
			if idx.T.DType == 0 {
				idx = iotaOf(c.x.T.Shape, c.axes[0])
				idx = tensor{T: tt(c.it, c.x.T.Shape...), V: idx.V}
			}
			v0, i0 := c.v0, c.i0
			if v0 == nil {
				v0, i0 = lowest(vt, max, c.flipped), scalarBytes(c.it, 0)
			}
			body := argBodyIR(t, vt, c.it, max, c.flipped)
			iota := c.idx.T.DType == 0
			inits := []tensor{{T: tt(vt), Raw: v0}, {T: tt(c.it), Raw: i0}}
			args := []tensor{c.x, inits[0], inits[1]}
			if !iota {
				args = append(args, idx)
			}
			h.checkEvalBits(t, fmt.Sprintf("%s, max %v", c.name, max), args, func(b *ir.Builder, xs []ir.Value) []ir.Value {
				var ix ir.Value
				if iota {
					ix = b.Iota(idx.T, c.axes[0])
				} else {
					ix = xs[3]
				}
				return b.Results(b.ReduceRegion(body, []ir.Value{xs[0], ix}, xs[1:3], c.axes))
			})
		}
	}
	testReduceRegionMonoids(t, h)
	testReduceRegionFolds(t, h)
}

// monoidsBody is a body whose result i is ops[i] of accumulator i and
// element i, the element first in every other one.
func monoidsBody(t *testing.T, ds []ir.DType, ops []ir.Op) *ir.Program {
	params := make([]ir.TensorType, 0, 2*len(ds))
	for _, d := range ds {
		params = append(params, tt(d))
	}
	for _, d := range ds {
		params = append(params, tt(d))
	}
	n := len(ds)
	return region(t, params, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		rs := make([]ir.Value, n)
		for i, op := range ops {
			if i%2 == 1 {
				rs[i] = b.Binary(op, xs[n+i], xs[i])
			} else {
				rs[i] = b.Binary(op, xs[i], xs[n+i])
			}
		}
		return rs
	})
}

// testReduceRegionFolds: bodies of no fixed form, folded element by
// element in the IR's order (lax.reduce with a custom computation): acc/2 +
// x over one axis and over both, and two operands whose results read each
// other's, against the interpreter bit for bit.
func testReduceRegionFolds(t *testing.T, h *harness) {
	for _, d := range h.keep([]ir.DType{ir.F32, ir.F16}) {
		half := halfAccPlus(t, d)
		x := h.gen(d, anyValue, 3, 5)
		for _, axes := range [][]int{{1}, {0}, {0, 1}} {
			h.checkEvalBits(t, fmt.Sprintf("acc/2 + x, %v over %v", d, axes), []tensor{x}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
				return b.Results(b.ReduceRegion(half, xs, []ir.Value{b.Scalar(d, 0.25)}, axes))
			})
		}
	}
	f := tt(ir.F32)
	mixed := region(t, []ir.TensorType{f, f, f, f}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return []ir.Value{b.Binary(ir.OpAdd, xs[0], b.Binary(ir.OpMul, xs[1], xs[2])), b.Binary(ir.OpMax, xs[1], xs[3])}
	})
	// A complex64 product as the frontends compose it, by parts (jnp.prod
	// of complex numbers, a determinant's).
	cz := tt(ir.C64)
	cmul := region(t, []ir.TensorType{cz, cz}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		ar, ai, br, bi := b.Real(xs[0]), b.Imag(xs[0]), b.Real(xs[1]), b.Imag(xs[1])
		re := b.Binary(ir.OpSub, b.Binary(ir.OpMul, ar, br), b.Binary(ir.OpMul, ai, bi))
		im := b.Binary(ir.OpAdd, b.Binary(ir.OpMul, ar, bi), b.Binary(ir.OpMul, ai, br))
		return []ir.Value{b.Complex(re, im)}
	})
	if len(h.keep([]ir.DType{ir.C64})) == 1 {
		z := h.gen(ir.C64, small, 3, 4)
		for _, axes := range [][]int{{1}, {0, 1}} {
			h.checkEvalBits(t, fmt.Sprintf("complex64 product by parts over %v", axes), []tensor{z}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
				one := b.Complex(b.Scalar(ir.F32, 1), b.Scalar(ir.F32, 0))
				return b.Results(b.ReduceRegion(cmul, xs, []ir.Value{one}, axes))
			})
		}
	}
	a, c := h.gen(ir.F32, small, 4, 6), h.gen(ir.F32, small, 4, 6)
	h.checkEvalBits(t, "two operands reading each other's", []tensor{a, c}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return b.Results(b.ReduceRegion(mixed, xs, []ir.Value{b.Scalar(ir.F32, 0), b.Scalar(ir.F32, -1)}, []int{1}))
	})
}

// testReduceRegionMonoids: several operands reduced at once, each by its
// own monoid, from inits that are no identity; and, or and xor of integers
// at their extremes and xor of bools, which the fixed reduce does not
// take; a float sum by a body.
func testReduceRegionMonoids(t *testing.T, h *harness) {
	type monoidCase struct {
		name  string
		xs    []tensor
		ops   []ir.Op
		inits []float64
		axes  []int
	}
	cases := []monoidCase{
		{"sum, max, xor, or, min together", []tensor{h.gen(ir.F32, small, 3, 9), wideOf(h, ir.I32, 3, 9), wideOf(h, ir.I32, 3, 9), wideOf(h, ir.Bool, 3, 9), h.gen(ir.F16, positive, 3, 9)},
			[]ir.Op{ir.OpAdd, ir.OpMax, ir.OpXor, ir.OpOr, ir.OpMin}, []float64{10, 3, -1, 0, 0.5}, []int{1}},
		{"products wrapping, over two axes", []tensor{wideOf(h, ir.I32, 3, 4, 2), wideOf(h, ir.I64, 3, 4, 2), wideOf(h, ir.U8, 3, 4, 2)},
			[]ir.Op{ir.OpMul, ir.OpMul, ir.OpAdd}, []float64{3, -5, 200}, []int{0, 2}},
		{"xor of bools", []tensor{wideOf(h, ir.Bool, 4, 7)}, []ir.Op{ir.OpXor}, []float64{1}, []int{1}},
	}
	for _, d := range []ir.DType{ir.I8, ir.U8, ir.I16, ir.I32, ir.U32, ir.I64} {
		for _, op := range []ir.Op{ir.OpAnd, ir.OpOr, ir.OpXor} {
			init := map[ir.Op]float64{ir.OpAnd: -1, ir.OpOr: 0, ir.OpXor: 6}[op]
			if d.IsUnsigned() && init < 0 {
				init = map[ir.DType]float64{ir.U8: 254, ir.U32: 4294967294}[d]
			}
			cases = append(cases, monoidCase{fmt.Sprintf("%s of %v", op, d), []tensor{wideOf(h, d, 6, 5)}, []ir.Op{op}, []float64{init}, []int{0}})
		}
	}
	for _, c := range cases {
		ds := dtypesOf(c.xs)
		args := slices.Clone(c.xs)
		for i := range c.xs {
			args = append(args, tensor{T: tt(ds[i]), Raw: scalarBytes(ds[i], c.inits[i])})
		}
		body := monoidsBody(t, ds, c.ops)
		n := len(c.xs)
		h.checkEvalBits(t, c.name, args, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			return b.Results(b.ReduceRegion(body, xs[:n], xs[n:], c.axes))
		})
	}

	// Max and min of ui64 and ui16 held as signed, as the reader writes
	// jnp.max: a select of one of the two by a compare of their flipped
	// bits.
	for _, d := range []ir.DType{ir.I64, ir.I16} {
		for _, max := range []bool{true, false} {
			body := region(t, []ir.TensorType{tt(d), tt(d)}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
				less := b.Compare(ir.CmpLT, keyIR(b, xs[0], ir.KeyFlipped), keyIR(b, xs[1], ir.KeyFlipped))
				if max {
					return []ir.Value{b.Select(less, xs[1], xs[0])}
				}
				return []ir.Value{b.Select(less, xs[0], xs[1])}
			})
			x := wideOf(h, d, 4, 6)
			init := bitsOf(d, 5)
			h.checkEvalBits(t, fmt.Sprintf("flipped max %v of %v", max, d), []tensor{x, {T: tt(d), Raw: init}}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
				return b.Results(b.ReduceRegion(body, xs[:1], xs[1:], []int{1}))
			})
		}
	}

	// A float sum by a body from 10, within the sum's tolerance.
	f := tt(ir.F32)
	sum := region(t, []ir.TensorType{f, f}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return []ir.Value{b.Binary(ir.OpAdd, xs[0], xs[1])}
	})
	shape := []int{3, 4}
	x := h.gen(ir.F32, anyValue, shape...)
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

	// A fold over no elements is the inits.
	e := tensor{T: tt(ir.F32, 0, 3)}
	h.checkExact(t, "argmax over an empty axis", []tensor{e}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		body := argBodyIR(t, ir.F32, ir.I32, true, false)
		return b.Results(b.ReduceRegion(body, []ir.Value{xs[0], b.Iota(tt(ir.I32, 0, 3), 0)}, []ir.Value{b.Scalar(ir.F32, -2.5), b.Scalar(ir.I32, 4)}, []int{0}))
	}, [][]byte{encode(ir.F32, []float64{-2.5, -2.5, -2.5}), int32s([]int{4, 4, 4})})
}

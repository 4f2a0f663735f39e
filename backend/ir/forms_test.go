package ir

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

// The comparators and bodies below are written as the StableHLO reader
// translates jax's (plugin/pjrt/stablehlo's testdata sort, approx_top_k
// and reductions; a test there checks the real ones).

// totalKeyOf is the reader's totalOrderKey: bits ^ ((bits >>a w-1) >>l 1).
func totalKeyOf(b *Builder, x Value) Value {
	it := map[DType]DType{F32: I32, F16: I16, BF16: I16}[b.Type(x).DType]
	w := float64(8 * it.Size())
	v := b.BitcastConvert(x, it)
	sign := b.Binary(OpShiftRightArithmetic, v, b.Scalar(it, w-1))
	return b.Binary(OpXor, v, b.Binary(OpShiftRightLogical, sign, b.Scalar(it, 1)))
}

// canonicalOf is jax's _canonicalize_float_for_sort.
func canonicalOf(b *Builder, x Value) Value {
	d := b.Type(x).DType
	zero := b.Scalar(d, 0)
	r := b.Select(b.Compare(CmpEQ, x, zero), zero, x)
	return b.Select(b.Compare(CmpNE, x, x), b.Scalar(d, math.NaN()), r)
}

// comparator builds a comparator over operands of dtypes ds from less,
// given the lhs and rhs parameter of each operand.
func comparator(t *testing.T, ds []DType, less func(b *Builder, l, r []Value) Value) *Program {
	t.Helper()
	b := NewBuilder()
	var l, r []Value
	for _, d := range ds {
		l = append(l, b.Parameter(scalar(d)))
		r = append(r, b.Parameter(scalar(d)))
	}
	p, err := b.Build(less(b, l, r))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// lexLess is jax's _sort_lt_comparator over keys: or(lt(k0), and(eq(k0), ...)).
func lexLess(b *Builder, lk, rk []Value) Value {
	p := b.Compare(CmpLT, lk[len(lk)-1], rk[len(rk)-1])
	for i := len(lk) - 2; i >= 0; i-- {
		p = b.Binary(OpOr, b.Compare(CmpLT, lk[i], rk[i]), b.Binary(OpAnd, b.Compare(CmpEQ, lk[i], rk[i]), p))
	}
	return p
}

func TestSortKeysOf(t *testing.T) {
	f, i := F32, I32
	cases := []struct {
		name string
		ds   []DType
		less func(b *Builder, l, r []Value) Value
		want []SortKey // nil: not recognised
	}{
		{"jnp.sort of floats", []DType{f}, func(b *Builder, l, r []Value) Value {
			return b.Compare(CmpLT, totalKeyOf(b, canonicalOf(b, l[0])), totalKeyOf(b, canonicalOf(b, r[0])))
		}, []SortKey{{0, PartWhole, KeyCanonical, false}}},
		{"top_k: total order, descending, with indices", []DType{f, i}, func(b *Builder, l, r []Value) Value {
			return b.Compare(CmpGT, totalKeyOf(b, l[0]), totalKeyOf(b, r[0]))
		}, []SortKey{{0, PartWhole, KeyTotal, true}}},
		{"half total order, rhs first", []DType{F16}, func(b *Builder, l, r []Value) Value {
			return b.Compare(CmpLT, totalKeyOf(b, r[0]), totalKeyOf(b, l[0]))
		}, []SortKey{{0, PartWhole, KeyTotal, true}}},
		{"approx_max_k: plain GT", []DType{f, i}, func(b *Builder, l, r []Value) Value {
			return b.Compare(CmpGT, l[0], r[0])
		}, []SortKey{{0, PartWhole, KeyPlain, true}}},
		{"values sorted by the second operand", []DType{f, i}, func(b *Builder, l, r []Value) Value {
			return b.Compare(CmpLT, l[1], r[1])
		}, []SortKey{{1, PartWhole, KeyPlain, false}}},
		{"num_keys=2, ints then canonical floats, a value carried", []DType{i, f, BF16}, func(b *Builder, l, r []Value) Value {
			return lexLess(b, []Value{l[0], totalKeyOf(b, canonicalOf(b, l[1]))}, []Value{r[0], totalKeyOf(b, canonicalOf(b, r[1]))})
		}, []SortKey{{0, PartWhole, KeyPlain, false}, {1, PartWhole, KeyCanonical, false}}},
		{"three keys, or and and written the other way round", []DType{i, I64, U8}, func(b *Builder, l, r []Value) Value {
			inner := b.Binary(OpOr, b.Binary(OpAnd, b.Compare(CmpEQ, r[1], l[1]), b.Compare(CmpGT, r[2], l[2])), b.Compare(CmpLT, l[1], r[1]))
			return b.Binary(OpOr, b.Binary(OpAnd, inner, b.Compare(CmpEQ, l[0], r[0])), b.Compare(CmpGT, l[0], r[0]))
		}, []SortKey{{0, PartWhole, KeyPlain, true}, {1, PartWhole, KeyPlain, false}, {2, PartWhole, KeyPlain, false}}},
		{"ui16 held as int16: the top bit flipped", []DType{I16}, func(b *Builder, l, r []Value) Value {
			top := b.Scalar(I16, math.MinInt16)
			return b.Compare(CmpLT, b.Binary(OpXor, l[0], top), b.Binary(OpXor, r[0], top))
		}, []SortKey{{0, PartWhole, KeyFlipped, false}}},
		{"canonical floats compared plainly", []DType{f}, func(b *Builder, l, r []Value) Value {
			return b.Compare(CmpLT, canonicalOf(b, l[0]), canonicalOf(b, r[0]))
		}, []SortKey{{0, PartWhole, KeyPlain, false}}},
		{"jnp.sort of complex64: canonical real parts, then imaginary parts, a value carried", []DType{C64, i}, func(b *Builder, l, r []Value) Value {
			k := func(x Value, part func(Value) Value) Value { return totalKeyOf(b, canonicalOf(b, part(x))) }
			return lexLess(b, []Value{k(l[0], b.Real), k(l[0], b.Imag)}, []Value{k(r[0], b.Real), k(r[0], b.Imag)})
		}, []SortKey{{0, PartReal, KeyCanonical, false}, {0, PartImag, KeyCanonical, false}}},

		{"real parts of one side, imaginary of the other", []DType{C64}, func(b *Builder, l, r []Value) Value {
			return b.Compare(CmpLT, b.Real(l[0]), b.Imag(r[0]))
		}, nil},
		{"LE is not strict", []DType{i}, func(b *Builder, l, r []Value) Value { return b.Compare(CmpLE, l[0], r[0]) }, nil},
		{"two operands compared with each other", []DType{i, i}, func(b *Builder, l, r []Value) Value { return b.Compare(CmpLT, l[0], r[1]) }, nil},
		{"a key against itself", []DType{i}, func(b *Builder, l, r []Value) Value { return b.Compare(CmpLT, l[0], l[0]) }, nil},
		{"total order of one side only", []DType{f}, func(b *Builder, l, r []Value) Value {
			return b.Compare(CmpLT, totalKeyOf(b, l[0]), totalKeyOf(b, canonicalOf(b, r[0])))
		}, nil},
		{"eq of another key", []DType{i, i}, func(b *Builder, l, r []Value) Value {
			return b.Binary(OpOr, b.Compare(CmpLT, l[0], r[0]), b.Binary(OpAnd, b.Compare(CmpEQ, l[1], r[1]), b.Compare(CmpLT, l[1], r[1])))
		}, nil},
		{"a shift by 30", []DType{f}, func(b *Builder, l, r []Value) Value {
			key := func(x Value) Value {
				v := b.BitcastConvert(x, I32)
				return b.Binary(OpXor, v, b.Binary(OpShiftRightLogical, b.Binary(OpShiftRightArithmetic, v, b.Scalar(I32, 30)), b.Scalar(I32, 1)))
			}
			return b.Compare(CmpLT, key(l[0]), key(r[0]))
		}, nil},
		{"xor with another constant", []DType{i}, func(b *Builder, l, r []Value) Value {
			c := b.Scalar(I32, 5)
			return b.Compare(CmpLT, b.Binary(OpXor, l[0], c), b.Binary(OpXor, r[0], c))
		}, nil},
		{"a NaN canonicalized to zero", []DType{f}, func(b *Builder, l, r []Value) Value {
			canon := func(x Value) Value {
				zero := b.Scalar(F32, 0)
				return b.Select(b.Compare(CmpNE, x, x), zero, b.Select(b.Compare(CmpEQ, x, zero), zero, x))
			}
			return b.Compare(CmpLT, totalKeyOf(b, canon(l[0])), totalKeyOf(b, canon(r[0])))
		}, nil},
	}
	for _, c := range cases {
		got, ok := SortKeysOf(comparator(t, c.ds, c.less))
		if c.want == nil {
			if ok {
				t.Errorf("%s: recognised as %v, want refused", c.name, got)
			}
			continue
		}
		if !ok || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, %v; want %v", c.name, got, ok, c.want)
		}
	}
}

// argBody is jax's _argminmax body as the reader translates it: pick =
// cmp(v, w) or v != v; (pick ? v : w, pick or (v == w and i < j) ? i : j).
func argBody(t *testing.T, vt, it DType, dir CompareDir, nanCheck bool, tweak func(b *Builder, v, i, w, j Value) (Value, Value)) *Program {
	t.Helper()
	b := NewBuilder()
	v, i, w, j := b.Parameter(scalar(vt)), b.Parameter(scalar(it)), b.Parameter(scalar(vt)), b.Parameter(scalar(it))
	var rv, ri Value
	if tweak != nil {
		rv, ri = tweak(b, v, i, w, j)
	} else {
		pick := b.Compare(dir, v, w)
		if nanCheck {
			pick = b.Binary(OpOr, pick, b.Compare(CmpNE, v, v))
		}
		pickI := b.Binary(OpOr, pick, b.Binary(OpAnd, b.Compare(CmpEQ, v, w), b.Compare(CmpLT, i, j)))
		rv, ri = b.Select(pick, v, w), b.Select(pickI, i, j)
	}
	p, err := b.Build(rv, ri)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// flippedArgBody is the reader's argmax (GT) or argmin (LT) of ui16 or
// ui64 held as int16 or int64: every compare of values of their bits with
// the top one flipped.
func flippedArgBody(t *testing.T, vt DType, dir CompareDir) *Program {
	return argBody(t, vt, I32, 0, false, func(b *Builder, v, i, w, j Value) (Value, Value) {
		flip := func(x Value) Value {
			top := b.Constant(scalar(vt), binary.LittleEndian.AppendUint64(nil, 1<<(8*vt.Size()-1))[:vt.Size()])
			return b.Binary(OpXor, x, top)
		}
		pick := b.Binary(OpOr, b.Compare(dir, flip(v), flip(w)), b.Compare(CmpNE, flip(v), flip(v)))
		pickI := b.Binary(OpOr, pick, b.Binary(OpAnd, b.Compare(CmpEQ, flip(v), flip(w)), b.Compare(CmpLT, i, j)))
		return b.Select(pick, v, w), b.Select(pickI, i, j)
	})
}

func TestArgReduceOf(t *testing.T) {
	type want struct{ max, flipped, ok bool }
	cases := []struct {
		name string
		body *Program
		want want
	}{
		{"argmax of floats", argBody(t, F32, I32, CmpGT, true, nil), want{true, false, true}},
		{"argmin of floats", argBody(t, F32, I32, CmpLT, true, nil), want{false, false, true}},
		{"argmax of bfloat16 into int64", argBody(t, BF16, I64, CmpGT, true, nil), want{true, false, true}},
		{"argmax of ints, with the (always false) NaN test", argBody(t, I32, I32, CmpGT, true, nil), want{true, false, true}},
		{"argmax of ints without it", argBody(t, I32, I32, CmpGT, false, nil), want{true, false, true}},
		{"argmin of uint8 into uint32", argBody(t, U8, U32, CmpLT, false, nil), want{false, false, true}},
		{"argmax of ui16 held as int16", flippedArgBody(t, I16, CmpGT), want{true, true, true}},
		{"argmin of ui64 held as int64", flippedArgBody(t, I64, CmpLT), want{false, true, true}},
		{"argmax of floats, written as when to take the element", argBody(t, F32, I32, 0, false, func(b *Builder, v, i, w, j Value) (Value, Value) {
			// w unless v > w or v is NaN; j unless that, or v == w and i < j.
			take := b.Binary(OpAnd, b.Unary(OpNot, b.Compare(CmpGT, v, w)), b.Compare(CmpEQ, v, v))
			takeI := b.Binary(OpAnd, take, b.Unary(OpNot, b.Binary(OpAnd, b.Compare(CmpEQ, w, v), b.Compare(CmpGT, j, i))))
			return b.Select(take, w, v), b.Select(takeI, j, i)
		}), want{true, false, true}},

		{"argmax of floats without the NaN test", argBody(t, F32, I32, CmpGT, false, nil), want{}},
		{"the larger index on ties", argBody(t, F32, I32, 0, false, func(b *Builder, v, i, w, j Value) (Value, Value) {
			pick := b.Binary(OpOr, b.Compare(CmpGT, v, w), b.Compare(CmpNE, v, v))
			pickI := b.Binary(OpOr, pick, b.Binary(OpAnd, b.Compare(CmpEQ, v, w), b.Compare(CmpGT, i, j)))
			return b.Select(pick, v, w), b.Select(pickI, i, j)
		}), want{}},
		{"the accumulator's zero kept on ties", argBody(t, F32, I32, 0, false, func(b *Builder, v, i, w, j Value) (Value, Value) {
			pick := b.Binary(OpOr, b.Compare(CmpGE, v, w), b.Compare(CmpNE, v, v))
			pickI := b.Binary(OpOr, pick, b.Binary(OpAnd, b.Compare(CmpEQ, v, w), b.Compare(CmpLT, i, j)))
			return b.Select(pick, v, w), b.Select(pickI, i, j)
		}), want{}},
		{"a value compared with an index", argBody(t, I32, I32, 0, false, func(b *Builder, v, i, w, j Value) (Value, Value) {
			pick := b.Compare(CmpGT, v, j)
			return b.Select(pick, v, w), b.Select(pick, i, j)
		}), want{}},
		{"arithmetic in the body", argBody(t, I32, I32, 0, false, func(b *Builder, v, i, w, j Value) (Value, Value) {
			return b.Binary(OpMax, v, w), b.Select(b.Compare(CmpGT, v, w), i, j)
		}), want{}},
	}
	for _, c := range cases {
		form, ok := ArgReduceOf(c.body)
		if ok != c.want.ok || (ok && (form.Max != c.want.max || form.Flipped != c.want.flipped)) {
			t.Errorf("%s: %+v, ok %v; want %+v", c.name, form, ok, c.want)
		}
	}
}

func TestMonoidsOf(t *testing.T) {
	body := func(ds []DType, ops ...Op) *Program {
		b := NewBuilder()
		var acc, x []Value
		for _, d := range ds {
			acc = append(acc, b.Parameter(scalar(d)))
		}
		for _, d := range ds {
			x = append(x, b.Parameter(scalar(d)))
		}
		var rs []Value
		for i, op := range ops {
			if i%2 == 1 {
				rs = append(rs, b.Binary(op, x[i], acc[i]))
			} else {
				rs = append(rs, b.Binary(op, acc[i], x[i]))
			}
		}
		p, err := b.Build(rs...)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if ms, ok := MonoidsOf(body([]DType{F32, I32, Bool}, OpAdd, OpXor, OpOr)); !ok || !slices.Equal(ms, []Monoid{{OpAdd, false}, {OpXor, false}, {OpOr, false}}) {
		t.Errorf("sum, xor, or: %v %v", ms, ok)
	}
	// Selects of the larger or the smaller by a compare, maybe of the bits
	// with the top one flipped (max of ui64 held as int64, as the reader
	// translates jnp.max).
	sel := func(d DType, dir CompareDir, flip, takeX bool) *Program {
		b := NewBuilder()
		a, x := b.Parameter(scalar(d)), b.Parameter(scalar(d))
		ka, kx := a, x
		if flip {
			top := b.Constant(scalar(d), binary.LittleEndian.AppendUint64(nil, 1<<(8*d.Size()-1))[:d.Size()])
			ka, kx = b.Binary(OpXor, a, top), b.Binary(OpXor, x, top)
		}
		s, o := a, x
		if takeX {
			s, o = x, a
		}
		p, err := b.Build(b.Select(b.Compare(dir, ka, kx), s, o))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		d           DType
		dir         CompareDir
		flip, takeX bool
		want        Monoid
	}{
		{I64, CmpLT, true, true, Monoid{OpMax, true}},    // a < x ? x : a
		{I16, CmpGT, true, true, Monoid{OpMin, true}},    // a > x ? x : a
		{I32, CmpGE, false, false, Monoid{OpMax, false}}, // a >= x ? a : x
		{U8, CmpLE, false, false, Monoid{OpMin, false}},  // a <= x ? a : x
	} {
		if ms, ok := MonoidsOf(sel(c.d, c.dir, c.flip, c.takeX)); !ok || ms[0] != c.want {
			t.Errorf("select %v %v flipped %v taking x %v: %v %v, want %v", c.d, c.dir, c.flip, c.takeX, ms, ok, c.want)
		}
	}
	if _, ok := MonoidsOf(sel(F32, CmpGT, false, false)); ok {
		t.Error("a float select taken for a max (it drops NaN)")
	}
	if _, ok := MonoidsOf(sel(I32, CmpEQ, false, false)); ok {
		t.Error("a select by EQ taken for an extreme")
	}
	if _, ok := MonoidsOf(body([]DType{F32}, OpSub)); ok {
		t.Error("a subtraction taken for a monoid")
	}
	// Result 0 folding operand 1 is no independent monoid.
	b := NewBuilder()
	a0, a1, x0, x1 := b.Parameter(scalar(F32)), b.Parameter(scalar(F32)), b.Parameter(scalar(F32)), b.Parameter(scalar(F32))
	p, _ := b.Build(b.Binary(OpAdd, a0, x1), b.Binary(OpAdd, a1, x0))
	if _, ok := MonoidsOf(p); ok {
		t.Error("crossed operands taken for monoids")
	}
}

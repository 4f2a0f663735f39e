package drivertest

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

func testParameter(t *testing.T, h *harness) {
	for _, d := range h.keep(append(slices.Clone(allTypes), ir.C64)) {
		for _, shape := range [][]int{{2, 3}, {}, {0, 4}} {
			x := h.gen(d, anyValue, shape...)
			y := h.gen(d, anyValue, shape...)
			name := fmt.Sprintf("%v", x.T)
			// Results that are parameters themselves, in swapped order and
			// twice, must be copied out whole.
			b := ir.NewBuilder()
			px, py := b.Parameter(x.T), b.Parameter(y.T)
			p, err := b.Build(py, px, py)
			if err != nil {
				t.Fatal(err)
			}
			got := h.run(t, p, x, y)
			compare(t, name+" result 0", got[0], y)
			compare(t, name+" result 1", got[1], x)
			compare(t, name+" result 2", got[2], y)
		}
	}
}

func testConstant(t *testing.T, h *harness) {
	for _, d := range h.keep(append(slices.Clone(allTypes), ir.C64)) {
		for _, shape := range [][]int{{2, 3}, {}, {3, 0}} {
			c := h.gen(d, anyValue, shape...)
			x := h.gen(d, anyValue, shape...)
			name := fmt.Sprintf("%v", c.T)
			b := ir.NewBuilder()
			px := b.Parameter(x.T)
			k := b.Constant(c.T, encode(d, c.V))
			p, err := b.Build(k, px)
			if err != nil {
				t.Fatal(err)
			}
			got := h.run(t, p, x)
			compare(t, name, got[0], c)
			compare(t, name+" with parameter", got[1], x)
			if d.IsNumeric() {
				// A constant consumed by a kernel, not just copied out.
				sum := tensor{T: c.T, V: make([]float64, len(c.V))}
				for i := range sum.V {
					sum.V[i] = c.V[i] + x.V[i]
				}
				sum.V = quantize(d, sum.V)
				h.check(t, name+" + x", []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
					return b.Binary(ir.OpAdd, b.Constant(c.T, encode(d, c.V)), xs[0])
				}, sum)
			}
		}
	}
}

func testIota(t *testing.T, h *harness) {
	cases := []struct {
		shape []int
		axis  int
	}{{[]int{2, 3, 4}, 1}, {[]int{5}, 0}, {[]int{3, 2}, 0}, {[]int{2, 0}, 1}, {[]int{0, 3}, 1}}
	for _, d := range h.keep(allTypes) {
		for _, c := range cases {
			ty := tt(d, c.shape...)
			want := tensor{T: ty, V: make([]float64, ty.Shape.Size())}
			forEachIndex(c.shape, func(idx []int) {
				want.V[offset(c.shape, idx)] = float64(idx[c.axis])
			})
			want.V = quantize(d, want.V)
			h.check(t, fmt.Sprintf("%v axis %d", ty, c.axis), nil, func(b *ir.Builder, _ []ir.Value) ir.Value {
				return b.Iota(ty, c.axis)
			}, want)
		}
	}
}

func unaryTypes(op ir.Op) []ir.DType {
	switch op {
	case ir.OpNot:
		return append([]ir.DType{ir.Bool}, intTypes...)
	case ir.OpNeg, ir.OpAbs, ir.OpSign:
		return append(slices.Clone(floatTypes), intTypes...)
	}
	return floatTypes
}

func unaryTest(op ir.Op) func(t *testing.T, h *harness) {
	return func(t *testing.T, h *harness) {
		kind := anyValue
		switch op {
		case ir.OpLog, ir.OpRsqrt, ir.OpSqrt, ir.OpLog1p:
			kind = positive
		case ir.OpExp, ir.OpExpm1:
			kind = small
		}
		for _, d := range h.keep(unaryTypes(op)) {
			for _, shape := range [][]int{{3, 5}, {}, {0, 4}} {
				x := h.gen(d, kind, shape...)
				if op == ir.OpNeg && d == ir.I8 && len(x.V) > 1 {
					x.V[0] = math.MinInt8 // negation wraps
				}
				h.checkEval(t, fmt.Sprintf("%s %v", op, x.T), []tensor{x}, one(func(b *ir.Builder, xs []ir.Value) ir.Value {
					return b.Unary(op, xs[0])
				}))
			}
		}
		if op == ir.OpRound {
			// Ties go to the even neighbour, either sign; zeros keep their sign.
			x := tensor{T: tt(ir.F32, 8), V: []float64{0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.25, -2.75}}
			want := tensor{T: x.T, V: []float64{0, 2, 2, math.Copysign(0, -1), -2, -2, 2, -3}}
			h.check(t, "round ties", []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
				return b.Unary(op, xs[0])
			}, want)
		}
		if op == ir.OpLog1p || op == ir.OpExpm1 {
			checkRelative(t, h, op)
		}
		if op != ir.OpNot {
			// NaN in, NaN out, for every float op.
			x := tensor{T: tt(ir.F32, 2), V: []float64{math.NaN(), 1}}
			h.checkEval(t, fmt.Sprintf("%s of NaN", op), []tensor{x}, one(func(b *ir.Builder, xs []ir.Value) ir.Value {
				return b.Unary(op, xs[0])
			}))
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func binaryTest(op ir.Op) func(t *testing.T, h *harness) {
	return func(t *testing.T, h *harness) {
		types := append(slices.Clone(floatTypes), intTypes...)
		if op.IsBitwise() {
			types = append([]ir.DType{ir.Bool}, intTypes...)
		}
		for _, d := range h.keep(types) {
			for _, shape := range [][]int{{4, 5}, {}, {3, 0}} {
				xk, yk := anyValue, anyValue
				switch {
				case op == ir.OpDiv || op == ir.OpRem:
					yk = positive // division by zero is in the corpus (backend/ir/testdata)
				case op == ir.OpPow && d.IsFloat():
					xk, yk = positive, small
				case op == ir.OpPow:
					xk, yk = small, small
				case op == ir.OpMul:
					xk, yk = small, anyValue
				}
				x, y := h.gen(d, xk, shape...), h.gen(d, yk, shape...)
				if (op == ir.OpDiv || op == ir.OpRem) && !d.IsUnsigned() {
					for i := range y.V { // negative divisors and dividends too
						if i%2 == 1 {
							y.V[i] = -y.V[i]
						}
					}
				}
				if op == ir.OpPow && !d.IsFloat() && !d.IsUnsigned() {
					for i := range x.V { // negative exponents only for 1, -1, 2, 0
						if i%4 == 0 {
							x.V[i], y.V[i] = float64(i/4%4-1), -float64(i%3+1)
						}
					}
				}
				if op == ir.OpPow && d.IsUnsigned() {
					for i := range y.V {
						y.V[i] = math.Abs(y.V[i])
					}
				}
				h.checkEval(t, fmt.Sprintf("%s %v", op, x.T), []tensor{x, y}, one(func(b *ir.Builder, xs []ir.Value) ir.Value {
					return b.Binary(op, xs[0], xs[1])
				}))
			}
		}
		if !op.IsBitwise() {
			nan := math.NaN()
			x := tensor{T: tt(ir.F32, 3), V: []float64{nan, 2, nan}}
			y := tensor{T: tt(ir.F32, 3), V: []float64{3, nan, nan}}
			want := tensor{T: x.T, V: []float64{nan, nan, nan}}
			if op == ir.OpPow { // pow(x, NaN) is NaN but pow(1, NaN) is 1; avoid 1
				want.V = []float64{math.Pow(nan, 3), math.Pow(2, nan), nan}
			}
			h.check(t, fmt.Sprintf("%s with NaN", op), []tensor{x, y}, func(b *ir.Builder, xs []ir.Value) ir.Value {
				return b.Binary(op, xs[0], xs[1])
			}, want)
		}
	}
}

func testCompare(t *testing.T, h *harness) {
	dirs := []ir.CompareDir{ir.CmpEQ, ir.CmpNE, ir.CmpLT, ir.CmpLE, ir.CmpGT, ir.CmpGE}
	rel := func(dir ir.CompareDir, x, y float64) bool {
		switch dir {
		case ir.CmpEQ:
			return x == y
		case ir.CmpNE:
			return x != y
		case ir.CmpLT:
			return x < y
		case ir.CmpLE:
			return x <= y
		case ir.CmpGT:
			return x > y
		}
		return x >= y
	}
	nan := math.NaN()
	for _, d := range h.keep(allTypes) {
		for _, shape := range [][]int{{4, 6}, {0, 2}} {
			x := h.gen(d, small, shape...)
			y := h.gen(d, small, shape...)
			if d == ir.F32 && len(x.V) > 2 {
				x.V[0], y.V[1], x.V[2], y.V[2] = nan, nan, nan, nan
			}
			for _, dir := range dirs {
				want := tensor{T: tt(ir.Bool, shape...), V: make([]float64, len(x.V))}
				for i := range x.V {
					want.V[i] = b2f(rel(dir, x.V[i], y.V[i]))
				}
				h.check(t, fmt.Sprintf("%v %s %v", x.T, dir, y.T), []tensor{x, y}, func(b *ir.Builder, xs []ir.Value) ir.Value {
					return b.Compare(dir, xs[0], xs[1])
				}, want)
			}
		}
	}
}

func testSelect(t *testing.T, h *harness) {
	for _, d := range h.keep(append(slices.Clone(allTypes), ir.C64)) {
		for _, shape := range [][]int{{3, 4}, {}, {0, 3}} {
			p := h.gen(ir.Bool, anyValue, shape...)
			x, y := h.gen(d, anyValue, shape...), h.gen(d, anyValue, shape...)
			want := tensor{T: x.T, V: make([]float64, len(x.V))}
			for i := range want.V {
				if p.V[i] != 0 {
					want.V[i] = x.V[i]
				} else {
					want.V[i] = y.V[i]
				}
			}
			h.check(t, fmt.Sprintf("select %v", x.T), []tensor{p, x, y}, func(b *ir.Builder, xs []ir.Value) ir.Value {
				return b.Select(xs[0], xs[1], xs[2])
			}, want)
		}
	}
}

// testConvert converts values at the edges of each dtype to every other,
// and compares each result bit for bit with the reference interpreter's
// (the corpus holds the conversions' literal answers).
func testConvert(t *testing.T, h *harness) {
	floatIn := []float64{-2.75, -1, -0.5, 0, 0.25, 1.5, 2.75, 100, -100, 300, -300, 70000, -1e10, 1e10, math.Inf(1), math.Inf(-1), math.NaN()}
	intIn := []float64{-128, -100, -3, -1, 0, 1, 2, 7, 100, 127}
	for _, src := range h.keep(allTypes) {
		var raw []float64
		switch {
		case src.IsFloat():
			raw = floatIn
		case src == ir.Bool:
			raw = []float64{0, 1, 1, 0}
		default:
			raw = intIn
		}
		x := tensor{T: tt(src, len(raw)), V: quantize(src, raw)}
		for _, dst := range h.keep(allTypes) {
			if dst == src {
				continue
			}
			convert := one(func(b *ir.Builder, xs []ir.Value) ir.Value { return b.Convert(xs[0], dst) })
			h.checkEvalBits(t, fmt.Sprintf("%v to %v", src, dst), []tensor{x}, convert)
			h.checkEvalBits(t, fmt.Sprintf("empty %v to %v", src, dst), []tensor{{T: tt(src, 0, 3)}}, convert)
		}
	}
}

// checkRelative checks log1p and expm1 near zero to a relative tolerance:
// log(1+x) and exp(x)-1 computed naively lose every digit there, which
// compare's tolerance, absolute near zero, would not notice.
func checkRelative(t *testing.T, h *harness, op ir.Op) {
	t.Helper()
	for _, d := range h.keep([]ir.DType{ir.F32, ir.F64}) {
		xs := []float64{1e-10, -3e-9, 2.5e-7, 1e-4, -1e-5}
		x := tensor{T: tt(d, len(xs)), V: quantize(d, xs)}
		b := ir.NewBuilder()
		p, err := b.Build(b.Unary(op, b.Parameter(x.T)))
		if err != nil {
			t.Fatal(err)
		}
		got := h.run(t, p, x)[0]
		ref, err := eval.Run(p, evalArgs([]tensor{x}))
		if err != nil {
			t.Fatalf("%s: the reference interpreter: %v", op, err)
		}
		want := ref[0].Floats()
		rel := 1e-6
		if d == ir.F64 {
			rel = 1e-14
		}
		for i, v := range x.V {
			w := want[i]
			if math.Abs(got.V[i]-w) > rel*math.Abs(w) {
				t.Errorf("%s(%v) in %v = %v, want %v (relative error %.2g)", op, v, d, got.V[i], w, math.Abs(got.V[i]-w)/math.Abs(w))
			}
		}
	}
}

// shiftTest: each integer type shifted by amounts inside the width, at its
// edge, past it and negative (past it too, read as unsigned), against
// shifts of the values' bits worked out here. int64 keeps to values a
// float64 holds exactly; the narrower types go to their extremes.
func shiftTest(op ir.Op) func(t *testing.T, h *harness) {
	return func(t *testing.T, h *harness) {
		for _, d := range intTypes {
			bits := uint64(8 * d.Size())
			lo, hi, _ := d.IntRange()
			xs := []int64{1, 3, -1, lo, hi, 5, -6, 7, 0}
			ns := []int64{0, 1, 2, int64(bits - 1), int64(bits), int64(bits + 3), -1, 3, 4}
			if d == ir.I64 {
				xs[3], xs[4] = -(1 << 40), 1<<40+1
			}
			if d.IsUnsigned() {
				xs[2], xs[6], ns[6] = hi, hi-5, hi // hi as an amount: all ones, past the width
			}
			mask := ^uint64(0) >> (64 - bits)
			signed := func(u uint64) int64 { return int64(u<<(64-bits)) >> (64 - bits) } // the bits read as signed
			x := tensor{T: tt(d, len(xs)), V: make([]float64, len(xs))}
			y := tensor{T: tt(d, len(ns)), V: make([]float64, len(ns))}
			want := tensor{T: x.T, V: make([]float64, len(xs))}
			for i := range xs {
				x.V[i], y.V[i] = float64(xs[i]), float64(ns[i])
				u, n := uint64(xs[i])&mask, uint64(ns[i])&mask
				var r uint64
				switch {
				case op == ir.OpShiftLeft && n < bits:
					r = u << n & mask
				case op == ir.OpShiftRightLogical && n < bits:
					r = u >> n
				case op == ir.OpShiftRightArithmetic:
					r = uint64(signed(u)>>min(n, bits-1)) & mask
				}
				if d.IsUnsigned() {
					want.V[i] = float64(r)
				} else {
					want.V[i] = float64(signed(r))
				}
			}
			h.check(t, fmt.Sprintf("%s %v", op, x.T), []tensor{x, y}, func(b *ir.Builder, vs []ir.Value) ir.Value {
				return b.Binary(op, vs[0], vs[1])
			}, want)
		}
	}
}

// testBitcastConvert: bit patterns read as another dtype of their width,
// both ways, checked through the suite's own encoding.
func testBitcastConvert(t *testing.T, h *harness) {
	for _, c := range []struct{ from, to ir.DType }{
		{ir.U32, ir.F32}, {ir.F32, ir.I32}, {ir.F16, ir.I16}, {ir.BF16, ir.I16}, {ir.I64, ir.F64}, {ir.I8, ir.U8},
	} {
		if len(h.keep([]ir.DType{c.from, c.to})) < 2 {
			continue
		}
		x := h.gen(c.from, anyValue, 2, 3)
		if c.from == ir.U32 {
			x.V = []float64{0x3f800000, 0xc0000000, 0x7f800000, 0, 0x80000000, 0x00000001} // 1, -2, inf, 0, -0, the smallest denormal
		}
		want := tensor{T: tt(c.to, 2, 3), V: decode(c.to, encode(c.from, x.V))}
		h.check(t, fmt.Sprintf("bitcast %v to %v", x.T, c.to), []tensor{x}, func(b *ir.Builder, vs []ir.Value) ir.Value {
			return b.BitcastConvert(vs[0], c.to)
		}, want)
	}
	testBitcastBits(t, h)
}

// bitPatterns are, per width, bit patterns whose meaning differs between the
// dtypes of that width: signed zeros, subnormals, infinities, quiet and
// signalling NaNs with payloads and either sign (of float16, bfloat16 and
// float32), and integers past float32's 2^24.
var bitPatterns = map[int][]uint64{
	1: {0, 1, 0x7f, 0x80, 0xff, 0x5a},
	2: {0, 0x8000, 0x0001, 0x83ff, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xfe5a, 0x7f80, 0xff80, 0x7fc1, 0x7f81, 0xffa5, 0x3c00, 0x3f80, 0xffff, 0x1234},
	4: {0, 0x80000000, 1, 0x807fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x7fc12345, 0xffc00001, 0x7f800001, 0xff812345,
		0x3f800000, 0xffffffff, 0x12345678, 0x4b800001, 0x80000001},
	8: {0, 0x8000000000000000, 0x7fc123457f800001, 0xff81234500000001, 0x80000000ffc00001, 0x3f800000bf800000,
		0xffffffffffffffff, 0x0123456789abcdef, 0x7ff8000000000001, 0xfff0000000000000},
}

// testBitcastBits bitcasts those patterns between every two dtypes of one
// width, and back. A bitcast copies bytes, so the result's bytes must be
// the operand's, and so must a round trip's, whose intermediate lives in the
// driver's own form. The bytes are checked against the reference
// interpreter's too, except where a pattern is a NaN of a float type on the
// way: it holds floats as float64, so it quietens signalling NaNs and drops
// float16 NaNs' payloads, and there the operand's bytes are the reference.
func testBitcastBits(t *testing.T, h *harness) {
	groups := [][]ir.DType{{ir.I8, ir.U8}, {ir.F16, ir.BF16, ir.I16}, {ir.F32, ir.I32, ir.U32}, {ir.I64, ir.C64, ir.F64}}
	for _, g := range groups {
		g = h.keep(g)
		w := g[0].Size()
		var raw []byte
		for _, p := range bitPatterns[w] {
			for k := range w {
				raw = append(raw, byte(p>>(8*k)))
			}
		}
		n := len(bitPatterns[w])
		for _, from := range g {
			for _, to := range g {
				if from == to {
					continue
				}
				for _, shape := range [][]int{{n}, {2, n / 2}, {}} {
					in, pats := raw, bitPatterns[w]
					if len(shape) == 0 {
						in, pats = raw[w:2*w], pats[1:2] // one pattern, as a scalar
					}
					x := tensor{T: tt(from, shape...), Raw: in}
					for _, trip := range [][]ir.DType{{to}, {to, from}} {
						b := ir.NewBuilder()
						v := b.Parameter(x.T)
						for _, d := range trip {
							v = b.BitcastConvert(v, d)
						}
						p, err := b.Build(v)
						if err != nil {
							t.Fatalf("build: %v", err)
						}
						name := fmt.Sprintf("bitcast %v to %v", x.T, trip)
						got := h.runBytes(t, p, x)[0]
						if !slices.Equal(got, in) {
							t.Errorf("%s: bytes % x, want % x", name, got, in)
						}
						ref, err := eval.Run(p, []eval.Tensor{eval.FromBytes(x.T, in)})
						if err != nil {
							t.Fatalf("%s: the reference interpreter: %v", name, err)
						}
						rb := ref[0].Bytes()
						for e, pat := range pats {
							if isNaNIn(pat, append([]ir.DType{from}, trip...)) {
								continue
							}
							if g, r := got[e*w:(e+1)*w], rb[e*w:(e+1)*w]; !slices.Equal(g, r) {
								t.Errorf("%s: element %d: bytes % x, the reference interpreter's % x", name, e, g, r)
							}
						}
					}
				}
			}
		}
	}
}

// isNaNIn reports whether bit pattern p is a NaN of one of the float types
// ds (of p's width; a complex64 NaN has a NaN part).
func isNaNIn(p uint64, ds []ir.DType) bool {
	for _, d := range ds {
		switch d {
		case ir.F16:
			if p&0x7c00 == 0x7c00 && p&0x3ff != 0 {
				return true
			}
		case ir.BF16:
			if p&0x7f80 == 0x7f80 && p&0x7f != 0 {
				return true
			}
		case ir.F32:
			if math.IsNaN(float64(math.Float32frombits(uint32(p)))) {
				return true
			}
		case ir.C64:
			if isNaNIn(p&0xffffffff, []ir.DType{ir.F32}) || isNaNIn(p>>32, []ir.DType{ir.F32}) {
				return true
			}
		case ir.F64:
			if math.IsNaN(math.Float64frombits(p)) {
				return true
			}
		}
	}
	return false
}

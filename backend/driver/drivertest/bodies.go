package drivertest

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

// The general forms of scatter, reduce_window and select_and_scatter, with
// bodies no fixed form has (their results depend on the order the body is
// applied in), against plain loops that apply the body in the IR's order.

// testScatterRegion: two operands updated together by rows, one index
// repeated and one out of range: x = x/2 + u, and a count c = c + uc.
func testScatterRegion(t *testing.T, h *harness) {
	f, i32 := tt(ir.F32), tt(ir.I32)
	body := region(t, []ir.TensorType{f, i32, f, i32}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		half := b.Binary(ir.OpMul, xs[0], b.Scalar(ir.F32, 0.5))
		return []ir.Value{b.Binary(ir.OpAdd, half, xs[2]), b.Binary(ir.OpAdd, xs[1], xs[3])}
	})
	x := h.gen(ir.F32, anyValue, 5, 3)
	c := h.gen(ir.I32, anyValue, 5, 3)
	rows := []float64{1, 3, 1, 7}
	idx := tensor{T: tt(ir.I32, 4, 1), V: rows}
	u := h.gen(ir.F32, anyValue, 4, 3)
	uc := h.gen(ir.I32, anyValue, 4, 3)
	wantX := tensor{T: x.T, V: append([]float64(nil), x.V...)}
	wantC := tensor{T: c.T, V: append([]float64(nil), c.V...)}
	for k, r := range rows {
		if r >= 5 {
			continue // the row leaves the operand: skipped
		}
		for col := range 3 {
			o := int(r)*3 + col
			wantX.V[o] = roundTo(ir.F32, wantX.V[o]*0.5+u.V[k*3+col])
			wantC.V[o] += uc.V[k*3+col]
		}
	}
	dims := ir.ScatterDims{UpdateWindowDims: []int{1}, InsertedWindowDims: []int{0}, ScatterDimsToOperandDims: []int{0}, IndexVectorDim: 1}
	for res, want := range []tensor{wantX, wantC} {
		h.check(t, fmt.Sprintf("rows, x/2 + u and a count, result %d", res), []tensor{x, c, idx, u, uc}, func(b *ir.Builder, xs []ir.Value) ir.Value {
			return b.GetResult(b.ScatterRegion(body, xs[:2], xs[2], xs[3:], dims), res)
		}, want)
	}
	testScatterRegionBodies(t, h)
	testScatterChoices(t, h)
}

// scatterBody is a body of one operand: f of the operand's element and the
// update.
func scatterBody(t *testing.T, d ir.DType, f func(b *ir.Builder, x, u ir.Value) ir.Value) *ir.Program {
	s := tt(d)
	return region(t, []ir.TensorType{s, s}, func(b *ir.Builder, xs []ir.Value) []ir.Value { return []ir.Value{f(b, xs[0], xs[1])} })
}

// testScatterRegionBodies: the bodies jax writes, as scatter_region (as a
// frontend keeps them for bools, several operands, or bodies it does not
// recognise): replace, keep, add, multiply, max and min, in either
// operand order, over every scatter case, on the dtypes each is defined
// on; two operands updated together, each by its own body; and two whose
// body mixes them (an argmax: the value and its index), bit for bit where
// the order of updates cannot change the bits.
func testScatterRegionBodies(t *testing.T, h *harness) {
	type body struct {
		name  string
		f     func(b *ir.Builder, x, u ir.Value) ir.Value
		types []ir.DType
		exact bool // not add or multiply, whose float rounding depends on the order
	}
	binary := func(op ir.Op, swapped bool) func(b *ir.Builder, x, u ir.Value) ir.Value {
		return func(b *ir.Builder, x, u ir.Value) ir.Value {
			if swapped {
				return b.Binary(op, u, x)
			}
			return b.Binary(op, x, u)
		}
	}
	numbers := []ir.DType{ir.F32, ir.F16, ir.BF16, ir.I8, ir.U8, ir.I32, ir.U32, ir.I64}
	bodies := []body{
		{"replace", func(b *ir.Builder, x, u ir.Value) ir.Value { return u }, append(slices.Clone(numbers), ir.Bool, ir.C64), true},
		{"keep", func(b *ir.Builder, x, u ir.Value) ir.Value { return x }, []ir.DType{ir.F32, ir.I64}, true},
		{"add", binary(ir.OpAdd, false), numbers, false},
		{"add, swapped", binary(ir.OpAdd, true), []ir.DType{ir.F32, ir.I8}, false},
		{"multiply", binary(ir.OpMul, false), numbers, false},
		{"max", binary(ir.OpMax, false), numbers, true},
		{"min, swapped", binary(ir.OpMin, true), numbers, true},
		{"or", binary(ir.OpOr, false), []ir.DType{ir.Bool}, true},
		{"and", binary(ir.OpAnd, true), []ir.DType{ir.Bool}, true},
		// jax's x.at[i].apply(f): f of the operand, the update unread,
		// applied once per update, so twice at a repeated index.
		{"apply 2x+1", func(b *ir.Builder, x, u ir.Value) ir.Value {
			d := b.Type(x).DType
			return b.Binary(ir.OpAdd, b.Binary(ir.OpMul, x, b.Scalar(d, 2)), b.Scalar(d, 1))
		}, []ir.DType{ir.F32, ir.I32}, true},
		// jax's x.at[i].divide(u) and .power(u) with repeated indices:
		// bodies no fixed form has, applied update by update in order.
		{"divide", binary(ir.OpDiv, false), []ir.DType{ir.F32, ir.BF16}, true},
		{"subtract", binary(ir.OpSub, false), []ir.DType{ir.F32, ir.I32, ir.I64, ir.U8}, true},
		// complex64 subtraction as the frontends compose it, by parts.
		{"subtract by parts", func(b *ir.Builder, x, u ir.Value) ir.Value {
			return b.Complex(b.Binary(ir.OpSub, b.Real(x), b.Real(u)), b.Binary(ir.OpSub, b.Imag(x), b.Imag(u)))
		}, []ir.DType{ir.C64}, true},
		{"x*u + 1", func(b *ir.Builder, x, u ir.Value) ir.Value {
			return b.Binary(ir.OpAdd, b.Binary(ir.OpMul, x, u), b.Scalar(b.Type(x).DType, 1))
		}, []ir.DType{ir.F32}, true},
	}
	for _, c := range scatterCases {
		for _, bd := range bodies {
			for _, d := range h.keep(bd.types) {
				vk := anyValue
				if bd.name == "multiply" {
					vk = small
				}
				x, upd := h.gen(d, vk, c.operand...), h.gen(d, vk, c.updates...)
				idx := tensor{T: tt(ir.I32, c.indices...), V: c.values}
				body := scatterBody(t, d, bd.f)
				name := fmt.Sprintf("%s %s %v", c.name, bd.name, x.T)
				build := func(b *ir.Builder, xs []ir.Value) []ir.Value {
					return b.Results(b.ScatterRegion(body, xs[:1], xs[1], xs[2:], c.s))
				}
				if bd.exact {
					h.checkEvalBits(t, name, []tensor{x, idx, upd}, build)
				} else {
					h.checkEval(t, name, []tensor{x, idx, upd}, build)
				}
			}
		}
	}
	c := scatterCases[0] // rows of a 5x3 operand, one repeated, two out of bounds
	f, i32 := tt(ir.F32), tt(ir.I32)
	x, k := h.gen(ir.F32, small, c.operand...), h.gen(ir.I32, anyValue, c.operand...)
	ux, uk := h.gen(ir.F32, small, c.updates...), h.gen(ir.I32, anyValue, c.updates...)
	idx := tensor{T: tt(ir.I32, c.indices...), V: c.values}
	apart := region(t, []ir.TensorType{f, i32, f, i32}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return []ir.Value{b.Binary(ir.OpMax, xs[2], xs[0]), xs[3]}
	})
	argmax := region(t, []ir.TensorType{f, i32, f, i32}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		keep := b.Compare(ir.CmpGE, xs[0], xs[2])
		return []ir.Value{b.Select(keep, xs[0], xs[2]), b.Select(keep, xs[1], xs[3])}
	})
	for name, body := range map[string]*ir.Program{"max and replace": apart, "argmax": argmax} {
		h.checkEvalBits(t, "two operands, "+name, []tensor{x, k, idx, ux, uk}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			return b.Results(b.ScatterRegion(body, xs[:2], xs[2], xs[3:], c.s))
		})
	}
	testScatterUnique(t, h)
}

// testScatterUnique: any elementwise body where the indices are unique
// (unique_indices), as jax writes .at[].divide, .power and .apply: rows of
// a 6x3 operand, each written once, one out of bounds.
func testScatterUnique(t *testing.T, h *harness) {
	dims := ir.ScatterDims{UpdateWindowDims: []int{1}, InsertedWindowDims: []int{0}, ScatterDimsToOperandDims: []int{0}, IndexVectorDim: 1, Unique: true}
	idx := tensor{T: tt(ir.I32, 4, 1), V: []float64{4, 0, 9, 2}}
	bodies := map[string]func(b *ir.Builder, x, u ir.Value) ir.Value{
		"x/u":    func(b *ir.Builder, x, u ir.Value) ir.Value { return b.Binary(ir.OpDiv, x, u) },
		"x^u":    func(b *ir.Builder, x, u ir.Value) ir.Value { return b.Binary(ir.OpPow, x, u) },
		"sin(x)": func(b *ir.Builder, x, u ir.Value) ir.Value { return b.Unary(ir.OpSin, x) },
		"x*u-u":  func(b *ir.Builder, x, u ir.Value) ir.Value { return b.Binary(ir.OpSub, b.Binary(ir.OpMul, x, u), u) },
	}
	for _, d := range h.keep([]ir.DType{ir.F32, ir.F16}) {
		x, upd := h.gen(d, positive, 6, 3), h.gen(d, positive, 4, 3)
		for name, f := range bodies {
			body := scatterBody(t, d, f)
			h.checkEval(t, fmt.Sprintf("unique rows, %s %v", name, x.T), []tensor{x, idx, upd}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
				return b.Results(b.ScatterRegion(body, xs[:1], xs[1], xs[2:], dims))
			})
		}
	}
}

// testScatterChoices: bodies that keep the operand x or take the update u
// by comparing them, select(cmp(x, u), x, u) and every variant (either
// order of the comparison's operands and of the select's, each
// direction, under a not), which are max or min with their own NaN and tie
// rules, applied in order over many updates to few elements: NaNs and
// signed zeros on both sides, ties, windows out of bounds. Bit for bit.
func testScatterChoices(t *testing.T, h *harness) {
	nan, negz := math.NaN(), math.Copysign(0, -1)
	dims := ir.ScatterDims{InsertedWindowDims: []int{0}, ScatterDimsToOperandDims: []int{0}, IndexVectorDim: 1}
	idx := tensor{T: tt(ir.I32, 12, 1), V: []float64{0, 1, 2, 0, 3, 1, 0, 2, 5, 3, 1, -1}}
	for _, d := range h.keep([]ir.DType{ir.F32, ir.F16, ir.BF16, ir.I8}) {
		x := tensor{T: tt(d, 5), V: []float64{1, nan, negz, 0, 2}}
		u := tensor{T: tt(d, 12), V: []float64{0, 3, 0, nan, negz, 3, 1, 0, 7, negz, nan, 9}} // ties of zeros whose sign tells which won
		if !d.IsFloat() {
			x.V, u.V = []float64{1, -3, 0, 0, 2}, []float64{0, 3, 0, -1, 0, 3, 1, -2, 7, 0, 4, 9}
		}
		for _, dir := range []ir.CompareDir{ir.CmpLT, ir.CmpLE, ir.CmpGT, ir.CmpGE} {
			for _, uFirst := range []bool{false, true} { // compare(u, x) rather than compare(x, u)
				for _, takeU := range []bool{false, true} { // select(p, u, x) rather than select(p, x, u)
					for _, not := range []bool{false, true} {
						body := scatterBody(t, d, func(b *ir.Builder, xv, uv ir.Value) ir.Value {
							p := b.Compare(dir, xv, uv)
							if uFirst {
								p = b.Compare(dir, uv, xv)
							}
							if not {
								p = b.Unary(ir.OpNot, p)
							}
							if takeU {
								return b.Select(p, uv, xv)
							}
							return b.Select(p, xv, uv)
						})
						name := fmt.Sprintf("%v choice %v, u first %v, takes u %v, not %v", d, dir, uFirst, takeU, not)
						h.checkEvalBits(t, name, []tensor{x, idx, u}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
							return b.Results(b.ScatterRegion(body, xs[:1], xs[1], xs[2:], dims))
						})
					}
				}
			}
		}
	}
}

// windowAt is the operand index of window position off for output index o
// along one dim, or -1 in the padding.
func windowAt(o, off, stride, low, size int) int {
	v := o*stride + off - low
	if v < 0 || v >= size {
		return -1
	}
	return v
}

// halfAccPlus is the fold body acc/2 + x of dtype d, of no fixed form.
func halfAccPlus(t *testing.T, d ir.DType) *ir.Program {
	s := tt(d)
	return region(t, []ir.TensorType{s, s}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return []ir.Value{b.Binary(ir.OpAdd, b.Binary(ir.OpMul, xs[0], b.Scalar(d, 0.5)), xs[1])}
	})
}

// testReduceWindowRegion: acc = acc/2 + x over padded, overlapping windows
// from an init of 0.5, which the padding positions hold too.
func testReduceWindowRegion(t *testing.T, h *harness) {
	for _, d := range h.keep([]ir.DType{ir.F32, ir.F16}) {
		body := halfAccPlus(t, d)
		x := h.gen(d, anyValue, 4, 5)
		w := ir.WindowAttrs{Dims: []int{2, 3}, Strides: []int{2, 1}, Padding: [][2]int{{1, 0}, {1, 1}}}
		out := []int{2, 5}
		want := tensor{T: tt(d, out...), V: make([]float64, 10)}
		for o0 := range out[0] {
			for o1 := range out[1] {
				acc := 0.5
				for a := range 2 {
					for c := range 3 {
						v := 0.5
						i, j := windowAt(o0, a, 2, 1, 4), windowAt(o1, c, 1, 1, 5)
						if i >= 0 && j >= 0 {
							v = x.V[i*5+j]
						}
						acc = roundTo(d, roundTo(d, acc*0.5)+v)
					}
				}
				want.V[o0*out[1]+o1] = acc
			}
		}
		h.check(t, fmt.Sprintf("%v acc/2 + x from 0.5, padded", d), []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
			return b.GetResult(b.ReduceWindowRegion(body, xs, []ir.Value{b.Scalar(d, 0.5)}, w), 0)
		}, want)
	}
	testCumulativeRegions(t, h)
	testWindowRegionBodies(t, h)
}

// monoidBody is the body op(acc, x) of one operand, or op(x, acc) when
// swapped.
func monoidBody(t *testing.T, d ir.DType, op ir.Op, swapped bool) *ir.Program {
	s := tt(d)
	return region(t, []ir.TensorType{s, s}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		if swapped {
			return []ir.Value{b.Binary(op, xs[1], xs[0])}
		}
		return []ir.Value{b.Binary(op, xs[0], xs[1])}
	})
}

// cumulativeWindow is jax's window of a cumulative reduction along axis of
// shape: the whole axis, padded by its length less one at the low end
// (the high end for reverse).
func cumulativeWindow(shape []int, axis int, reverse bool) ir.WindowAttrs {
	w := ir.WindowAttrs{Dims: make([]int, len(shape)), Padding: make([][2]int, len(shape))}
	for d := range shape {
		w.Dims[d] = 1
	}
	w.Dims[axis] = shape[axis]
	w.Padding[axis] = [2]int{shape[axis] - 1, 0}
	if reverse {
		w.Padding[axis] = [2]int{0, shape[axis] - 1}
	}
	return w
}

// testCumulativeRegions: jax's cumulative reductions as reduce_window with
// a body: cumprod, cummax and cummin (NaN included), cumsum, and cumulative
// and/or of bools, along either axis, forward and reverse, from the
// monoid's identity and (where folding it in once is the same) from other
// inits; and long axes.
func testCumulativeRegions(t *testing.T, h *harness) {
	type kase struct {
		op       ir.Op
		d        ir.DType
		init     float64
		swapped  bool
		withNaNs bool
	}
	var cases []kase
	for _, d := range h.keep([]ir.DType{ir.F32, ir.F16, ir.BF16, ir.I32, ir.I8, ir.U32, ir.I64}) {
		lo, hi := d.Range()
		cases = append(cases, kase{op: ir.OpMul, d: d, init: 1}, kase{op: ir.OpAdd, d: d, init: 0, swapped: true},
			kase{op: ir.OpMax, d: d, init: lo, withNaNs: d.IsFloat()}, kase{op: ir.OpMin, d: d, init: hi, swapped: true},
			kase{op: ir.OpMax, d: d, init: 2}, kase{op: ir.OpAdd, d: d, init: 1})
	}
	cases = append(cases, kase{op: ir.OpOr, d: ir.Bool, init: 0}, kase{op: ir.OpAnd, d: ir.Bool, init: 1}, kase{op: ir.OpAnd, d: ir.Bool, init: 0})
	for _, c := range cases {
		x := h.gen(c.d, small, 4, 6)
		if c.d.IsFloat() {
			x.V = mapf(x.V, func(v float64) float64 { return 1 + v/8 }) // products stay near 1
		}
		if c.withNaNs {
			x.V[7], x.V[20] = math.NaN(), math.NaN()
		}
		body := monoidBody(t, c.d, c.op, c.swapped)
		for axis := range 2 {
			for _, reverse := range []bool{false, true} {
				w := cumulativeWindow([]int{4, 6}, axis, reverse)
				h.checkEval(t, fmt.Sprintf("cumulative %v of %v from %v, axis %d, reverse %v", c.op, x.T, c.init, axis, reverse), []tensor{x},
					func(b *ir.Builder, xs []ir.Value) []ir.Value {
						return []ir.Value{b.GetResult(b.ReduceWindowRegion(body, xs, []ir.Value{b.Scalar(c.d, c.init)}, w), 0)}
					})
			}
		}
	}
	// A long axis, whose fold a driver cannot unroll over the window's
	// positions (the interpreter takes a second or so: one case only).
	x := h.gen(ir.I32, small, 1, 1030)
	mul := monoidBody(t, ir.I32, ir.OpMul, false)
	h.checkEval(t, fmt.Sprintf("cumulative multiply of %v", x.T), []tensor{x}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		w := cumulativeWindow([]int{1, 1030}, 1, false)
		return []ir.Value{b.GetResult(b.ReduceWindowRegion(mul, xs, []ir.Value{b.Scalar(ir.I32, 1)}, w), 0)}
	})
}

// testWindowRegionBodies: windowed folds by bodies no fixed reduce_window
// has. jax's cumlogsumexp (logaddexp, NaN-safe, from -inf); a product
// pooling window from an init that is not the identity; two operands
// folded together (a sum and a max, each reading its own), and two whose
// body mixes them (a windowed argmax: value and index); a scalar and an
// empty operand.
func testWindowRegionBodies(t *testing.T, h *harness) {
	f := tt(ir.F32)
	logaddexp := region(t, []ir.TensorType{f, f}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		a, c := xs[0], xs[1]
		amax := b.Binary(ir.OpMax, a, c)
		delta := b.Binary(ir.OpSub, a, c)
		soft := b.Binary(ir.OpAdd, amax, b.Unary(ir.OpLog1p, b.Unary(ir.OpExp, b.Unary(ir.OpNeg, b.Unary(ir.OpAbs, delta)))))
		return []ir.Value{b.Select(b.Compare(ir.CmpNE, delta, delta), b.Binary(ir.OpAdd, a, c), soft)}
	})
	x := h.gen(ir.F32, anyValue, 3, 7)
	for _, reverse := range []bool{false, true} {
		w := cumulativeWindow([]int{3, 7}, 1, reverse)
		h.checkEval(t, fmt.Sprintf("cumlogsumexp, reverse %v", reverse), []tensor{x}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			return []ir.Value{b.GetResult(b.ReduceWindowRegion(logaddexp, xs, []ir.Value{b.Scalar(ir.F32, math.Inf(-1))}, w), 0)}
		})
	}
	pool := ir.WindowAttrs{Dims: []int{2, 3}, Strides: []int{1, 2}, Padding: [][2]int{{1, 0}, {1, 1}}}
	for _, d := range h.keep([]ir.DType{ir.F32, ir.F16, ir.I32}) {
		x := h.gen(d, small, 4, 5)
		mul := monoidBody(t, d, ir.OpMul, false)
		h.checkEval(t, fmt.Sprintf("%v product pooling from 3", d), []tensor{x}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			return []ir.Value{b.GetResult(b.ReduceWindowRegion(mul, xs, []ir.Value{b.Scalar(d, 3)}, pool), 0)}
		})
	}
	i := tt(ir.I32)
	pair := region(t, []ir.TensorType{f, i, f, i}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return []ir.Value{b.Binary(ir.OpAdd, xs[0], xs[2]), b.Binary(ir.OpMax, xs[3], xs[1])}
	})
	argmax := region(t, []ir.TensorType{f, i, f, i}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		keep := b.Compare(ir.CmpGE, xs[0], xs[2])
		return []ir.Value{b.Select(keep, xs[0], xs[2]), b.Select(keep, xs[1], xs[3])}
	})
	v, k := h.gen(ir.F32, small, 4, 5), h.gen(ir.I32, anyValue, 4, 5)
	for _, w := range []ir.WindowAttrs{pool, cumulativeWindow([]int{4, 5}, 0, false)} {
		for name, body := range map[string]*ir.Program{"sum and max": pair, "argmax": argmax} {
			h.checkEval(t, fmt.Sprintf("two operands, %s, window %v", name, w.Dims), []tensor{v, k}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
				return b.Results(b.ReduceWindowRegion(body, xs, []ir.Value{b.Scalar(ir.F32, -100), b.Scalar(ir.I32, -1)}, w))
			})
		}
	}
	add := monoidBody(t, ir.F32, ir.OpAdd, false)
	h.checkEval(t, "a scalar", []tensor{scalarTensor(ir.F32, 2.5)}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return []ir.Value{b.GetResult(b.ReduceWindowRegion(add, xs, []ir.Value{b.Scalar(ir.F32, 0.25)}, ir.WindowAttrs{}), 0)}
	})
	h.checkEval(t, "an empty operand, padded", []tensor{{T: tt(ir.F32, 0, 3)}}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		w := ir.WindowAttrs{Dims: []int{2, 1}, Padding: [][2]int{{2, 1}, {0, 0}}}
		return []ir.Value{b.GetResult(b.ReduceWindowRegion(add, xs, []ir.Value{b.Scalar(ir.F32, 0.25)}, w), 0)}
	})
}

// testSelectAndScatterRegion: a strict select (x > y keeps x, so of equal
// values the last wins) over overlapping, padded windows, multiplying the
// source into a result that starts at 1.
func testSelectAndScatterRegion(t *testing.T, h *harness) {
	f := tt(ir.F32)
	gt := region(t, []ir.TensorType{f, f}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return []ir.Value{b.Compare(ir.CmpGT, xs[0], xs[1])}
	})
	mul := region(t, []ir.TensorType{f, f}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return []ir.Value{b.Binary(ir.OpMul, xs[0], xs[1])}
	})
	x := h.gen(ir.F32, small, 4, 4) // few distinct values: ties in most windows
	src := h.gen(ir.F32, small, 4, 4)
	w := ir.WindowAttrs{Dims: []int{2, 2}, Strides: []int{1, 1}, Padding: [][2]int{{0, 1}, {0, 1}}}
	want := tensor{T: x.T, V: make([]float64, 16)}
	for i := range want.V {
		want.V[i] = 1
	}
	for o0 := range 4 {
		for o1 := range 4 {
			at := -1
			for a := range 2 {
				for c := range 2 {
					i, j := windowAt(o0, a, 1, 0, 4), windowAt(o1, c, 1, 0, 4)
					if i < 0 || j < 0 {
						continue
					}
					if p := i*4 + j; at < 0 || !(x.V[at] > x.V[p]) {
						at = p
					}
				}
			}
			want.V[at] = roundTo(ir.F32, want.V[at]*src.V[o0*4+o1])
		}
	}
	h.check(t, "strict select, multiply from 1, overlapping", []tensor{x, src}, func(b *ir.Builder, xs []ir.Value) ir.Value {
		return b.GetResult(b.SelectAndScatterRegion(gt, mul, xs[0], xs[1], b.Scalar(ir.F32, 1), w), 0)
	}, want)
}

package drivertest

import (
	"fmt"
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

// testReduceWindowRegion: acc = acc/2 + x over padded, overlapping windows
// from an init of 0.5, which the padding positions hold too.
func testReduceWindowRegion(t *testing.T, h *harness) {
	for _, d := range h.keep([]ir.DType{ir.F32, ir.F16}) {
		s := tt(d)
		body := region(t, []ir.TensorType{s, s}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			return []ir.Value{b.Binary(ir.OpAdd, b.Binary(ir.OpMul, xs[0], b.Scalar(d, 0.5)), xs[1])}
		})
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

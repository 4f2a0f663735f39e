package drivertest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

// Data movement is checked on a 1-, 2-, 4- and 8-byte dtype each, plus the
// half types and complex64, since drivers often move elements by width and
// complex64 is two float32 that must travel together.
var movementTypes = []ir.DType{ir.F32, ir.F16, ir.BF16, ir.I8, ir.I64, ir.Bool, ir.F64, ir.C64}

func testBroadcast(t *testing.T, h *harness) {
	cases := []struct {
		in, out, dims []int
	}{
		{[]int{3}, []int{2, 3}, []int{1}},
		{[]int{3}, []int{3, 2}, []int{0}},
		{[]int{3, 1}, []int{3, 4}, []int{0, 1}},
		{[]int{1, 4}, []int{2, 3, 4}, []int{1, 2}},
		{[]int{}, []int{2, 2}, []int{}},
		{[]int{2}, []int{2, 3, 2}, []int{0}},
		{[]int{0}, []int{2, 0}, []int{1}},
		{[]int{3}, []int{0, 3}, []int{1}},
	}
	for _, d := range h.keep(movementTypes) {
		for _, c := range cases {
			x := h.gen(d, anyValue, c.in...)
			want := tensor{T: tt(d, c.out...), V: make([]float64, ir.Shape(c.out).Size())}
			forEachIndex(c.out, func(o []int) {
				i := make([]int, len(c.in))
				for k, dim := range c.dims {
					if c.in[k] != 1 {
						i[k] = o[dim]
					}
				}
				want.V[offset(c.out, o)] = x.V[offset(c.in, i)]
			})
			h.check(t, fmt.Sprintf("%v to %v dims %v", x.T, c.out, c.dims), []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
				return b.BroadcastInDim(xs[0], c.out, c.dims)
			}, want)
		}
	}
}

func testReshape(t *testing.T, h *harness) {
	cases := [][2][]int{{{2, 3}, {3, 2}}, {{2, 3, 4}, {24}}, {{1}, {}}, {{0, 3}, {3, 0}}, {{6}, {1, 2, 3}}}
	for _, d := range h.keep(movementTypes) {
		for _, c := range cases {
			x := h.gen(d, anyValue, c[0]...)
			want := tensor{T: tt(d, c[1]...), V: x.V}
			h.check(t, fmt.Sprintf("%v to %v", x.T, c[1]), []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
				return b.Reshape(xs[0], c[1])
			}, want)
			if d.IsNumeric() {
				// A reshape feeding a kernel rather than being the result.
				w := tensor{T: want.T, V: quantize(d, mapf(want.V, func(v float64) float64 { return v + v }))}
				h.check(t, fmt.Sprintf("%v to %v then add", x.T, c[1]), []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
					r := b.Reshape(xs[0], c[1])
					return b.Binary(ir.OpAdd, r, r)
				}, w)
			}
		}
	}
}

func mapf(v []float64, f func(float64) float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = f(x)
	}
	return out
}

func testTranspose(t *testing.T, h *harness) {
	cases := []struct{ shape, perm []int }{
		{[]int{2, 3}, []int{1, 0}},
		{[]int{2, 3, 4}, []int{2, 0, 1}},
		{[]int{2, 3, 4}, []int{1, 0, 2}},
		{[]int{2, 1, 3, 2}, []int{3, 2, 1, 0}},
		{[]int{0, 3}, []int{1, 0}},
		{[]int{40, 33}, []int{1, 0}},
	}
	for _, d := range h.keep(movementTypes) {
		for _, c := range cases {
			x := h.gen(d, anyValue, c.shape...)
			out := make([]int, len(c.perm))
			for i, p := range c.perm {
				out[i] = c.shape[p]
			}
			want := tensor{T: tt(d, out...), V: make([]float64, len(x.V))}
			forEachIndex(out, func(o []int) {
				i := make([]int, len(o))
				for k, p := range c.perm {
					i[p] = o[k]
				}
				want.V[offset(out, o)] = x.V[offset(c.shape, i)]
			})
			h.check(t, fmt.Sprintf("%v perm %v", x.T, c.perm), []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
				return b.Transpose(xs[0], c.perm)
			}, want)
		}
	}
}

func testSlice(t *testing.T, h *harness) {
	cases := []struct{ shape, start, limit, strides []int }{
		{[]int{5, 6}, []int{1, 0}, []int{5, 6}, []int{2, 3}},
		{[]int{5, 6}, []int{0, 2}, []int{5, 4}, []int{1, 1}},
		{[]int{4, 3, 5}, []int{1, 1, 0}, []int{3, 3, 5}, []int{1, 2, 2}},
		{[]int{4}, []int{2}, []int{2}, []int{1}},
		{[]int{0, 3}, []int{0, 1}, []int{0, 3}, []int{1, 1}},
	}
	for _, d := range h.keep(movementTypes) {
		for _, c := range cases {
			x := h.gen(d, anyValue, c.shape...)
			out := make([]int, len(c.shape))
			for i := range out {
				out[i] = (c.limit[i] - c.start[i] + c.strides[i] - 1) / c.strides[i]
			}
			want := tensor{T: tt(d, out...), V: make([]float64, ir.Shape(out).Size())}
			forEachIndex(out, func(o []int) {
				i := make([]int, len(o))
				for k := range o {
					i[k] = c.start[k] + o[k]*c.strides[k]
				}
				want.V[offset(out, o)] = x.V[offset(c.shape, i)]
			})
			h.check(t, fmt.Sprintf("%v [%v:%v:%v]", x.T, c.start, c.limit, c.strides), []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
				return b.Slice(xs[0], c.start, c.limit, c.strides)
			}, want)
		}
	}
}

func testConcat(t *testing.T, h *harness) {
	cases := []struct {
		shapes [][]int
		axis   int
	}{
		{[][]int{{2, 3}, {2, 1}, {2, 4}}, 1},
		{[][]int{{1, 3}, {2, 3}}, 0},
		{[][]int{{2, 2, 3}, {2, 0, 3}, {2, 1, 3}}, 1},
		{[][]int{{0, 2}, {0, 3}}, 1},
	}
	for _, d := range h.keep(movementTypes) {
		for _, c := range cases {
			var args []tensor
			out := append([]int(nil), c.shapes[0]...)
			out[c.axis] = 0
			for _, s := range c.shapes {
				args = append(args, h.gen(d, anyValue, s...))
				out[c.axis] += s[c.axis]
			}
			want := tensor{T: tt(d, out...), V: make([]float64, ir.Shape(out).Size())}
			forEachIndex(out, func(o []int) {
				j, pos := 0, o[c.axis]
				for pos >= c.shapes[j][c.axis] {
					pos -= c.shapes[j][c.axis]
					j++
				}
				i := append([]int(nil), o...)
				i[c.axis] = pos
				want.V[offset(out, o)] = args[j].V[offset(c.shapes[j], i)]
			})
			h.check(t, fmt.Sprintf("%v axis %d", c.shapes, c.axis), args, func(b *ir.Builder, xs []ir.Value) ir.Value {
				return b.Concat(c.axis, xs...)
			}, want)
		}
	}
}

func testPad(t *testing.T, h *harness) {
	cases := []struct{ shape, low, high, interior []int }{
		{[]int{2, 3}, []int{1, 0}, []int{2, 1}, []int{0, 0}},
		{[]int{2, 3}, []int{1, -1}, []int{2, 0}, []int{1, 2}},
		{[]int{3, 4}, []int{-2, 1}, []int{-1, -2}, []int{1, 0}},
		{[]int{3}, []int{0}, []int{0}, []int{3}},
		{[]int{0, 2}, []int{1, 1}, []int{1, 0}, []int{2, 1}},
		{[]int{}, nil, nil, nil},
	}
	for _, d := range h.keep(movementTypes) {
		for _, c := range cases {
			x := h.gen(d, anyValue, c.shape...)
			pv := h.gen(d, anyValue)
			out := make([]int, len(c.shape))
			for i, n := range c.shape {
				if n > 0 {
					n += (n - 1) * c.interior[i]
				}
				out[i] = n + c.low[i] + c.high[i]
			}
			want := tensor{T: tt(d, out...), V: make([]float64, ir.Shape(out).Size())}
			for i := range want.V {
				want.V[i] = pv.V[0]
			}
			forEachIndex(c.shape, func(i []int) {
				o := make([]int, len(i))
				for k := range i {
					o[k] = c.low[k] + i[k]*(c.interior[k]+1)
					if o[k] < 0 || o[k] >= out[k] {
						return // cropped
					}
				}
				want.V[offset(out, o)] = x.V[offset(c.shape, i)]
			})
			h.check(t, fmt.Sprintf("%v low %v high %v interior %v", x.T, c.low, c.high, c.interior), []tensor{x, pv},
				func(b *ir.Builder, xs []ir.Value) ir.Value {
					return b.Pad(xs[0], xs[1], c.low, c.high, c.interior)
				}, want)
		}
	}
}

func testReverse(t *testing.T, h *harness) {
	cases := []struct{ shape, dims []int }{
		{[]int{2, 3, 4}, []int{0, 2}},
		{[]int{3, 4}, []int{1, 0}},
		{[]int{5}, []int{0}},
		{[]int{2, 3, 4}, []int{1}},
		{[]int{2, 1, 3}, []int{0, 1, 2}},
		{[]int{0, 3}, []int{0}},
		{[]int{4, 3}, []int{}},
	}
	for _, d := range h.keep(movementTypes) {
		for _, c := range cases {
			x := h.gen(d, anyValue, c.shape...)
			want := tensor{T: x.T, V: make([]float64, len(x.V))}
			forEachIndex(c.shape, func(o []int) {
				i := slices.Clone(o)
				for _, dim := range c.dims {
					i[dim] = c.shape[dim] - 1 - o[dim]
				}
				want.V[offset(c.shape, o)] = x.V[offset(c.shape, i)]
			})
			h.check(t, fmt.Sprintf("%v dims %v", x.T, c.dims), []tensor{x}, func(b *ir.Builder, xs []ir.Value) ir.Value {
				r := b.Reverse(xs[0], c.dims)
				if len(c.dims) == 0 {
					// An empty reverse is the operand itself; run it through a
					// kernel so the result is computed.
					return b.Transpose(r, []int{1, 0})
				}
				return r
			}, func() tensor {
				if len(c.dims) == 0 {
					return transposed2(want)
				}
				return want
			}())
		}
	}
}

// transposed2 is a rank-2 tensor's transpose.
func transposed2(x tensor) tensor {
	r, c := x.T.Shape[0], x.T.Shape[1]
	out := tensor{T: tt(x.T.DType, c, r), V: make([]float64, len(x.V))}
	for i := range r {
		for j := range c {
			out.V[j*r+i] = x.V[i*c+j]
		}
	}
	return out
}

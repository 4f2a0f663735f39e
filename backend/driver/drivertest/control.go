package drivertest

import (
	"fmt"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

// Control flow: while, case and call hold sub-programs; get_result takes
// their tuples apart. The references are plain Go loops over the same
// arithmetic.

func scalarTensor(d ir.DType, v float64) tensor { return tensor{T: tt(d), V: []float64{v}} }

// region builds a sub-program over params.
func region(t *testing.T, params []ir.TensorType, build func(b *ir.Builder, xs []ir.Value) []ir.Value) *ir.Program {
	t.Helper()
	b := ir.NewBuilder()
	xs := make([]ir.Value, len(params))
	for i, p := range params {
		xs[i] = b.Parameter(p)
	}
	p, err := b.Build(build(b, xs)...)
	if err != nil {
		t.Fatalf("region: %v", err)
	}
	return p
}

// testWhile: while (i < n) { acc = acc * x + 1; i = i + 1 }, carrying
// (i, n, x, acc), for trip counts 0, 1 and 5; the result is acc.
func testWhile(t *testing.T, h *harness) {
	i32 := tt(ir.I32)
	for _, d := range h.keep([]ir.DType{ir.F32, ir.F16}) {
		vec := tt(d, 2, 3)
		carried := []ir.TensorType{i32, i32, vec, vec}
		cond := region(t, carried, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			return []ir.Value{b.Compare(ir.CmpLT, xs[0], xs[1])}
		})
		body := region(t, carried, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			acc := b.Binary(ir.OpAdd, b.Binary(ir.OpMul, xs[3], xs[2]), b.Full(vec, 1))
			return []ir.Value{b.Binary(ir.OpAdd, xs[0], b.Scalar(ir.I32, 1)), xs[1], xs[2], acc}
		})
		for _, n := range []int{0, 1, 5} {
			x := h.gen(d, small, 2, 3)
			acc0 := h.gen(d, small, 2, 3)
			want := tensor{T: vec, V: make([]float64, len(x.V))}
			for k := range want.V {
				a := acc0.V[k]
				for range n {
					a = roundTo(d, roundTo(d, a*x.V[k])+1)
				}
				want.V[k] = a
			}
			h.check(t, fmt.Sprintf("%v, %d trips", d, n), []tensor{scalarTensor(ir.I32, 0), scalarTensor(ir.I32, float64(n)), x, acc0},
				func(b *ir.Builder, xs []ir.Value) ir.Value {
					return b.GetResult(b.While(cond, body, xs...), 3)
				}, want)
		}
	}
}

// testCase: branch 0 doubles, branch 1 negates, branch 2 adds the second
// operand; an index out of range (negative or past the end) picks branch 2.
func testCase(t *testing.T, h *harness) {
	vec := tt(ir.F32, 4)
	ops := []ir.TensorType{vec, vec}
	branches := []*ir.Program{
		region(t, ops, func(b *ir.Builder, xs []ir.Value) []ir.Value { return []ir.Value{b.Binary(ir.OpAdd, xs[0], xs[0])} }),
		region(t, ops, func(b *ir.Builder, xs []ir.Value) []ir.Value { return []ir.Value{b.Unary(ir.OpNeg, xs[0])} }),
		region(t, ops, func(b *ir.Builder, xs []ir.Value) []ir.Value { return []ir.Value{b.Binary(ir.OpAdd, xs[0], xs[1])} }),
	}
	x, y := h.gen(ir.F32, anyValue, 4), h.gen(ir.F32, anyValue, 4)
	for _, index := range []int{0, 1, 2, 3, -1} {
		want := tensor{T: vec, V: make([]float64, 4)}
		for k := range want.V {
			switch index {
			case 0:
				want.V[k] = x.V[k] * 2
			case 1:
				want.V[k] = -x.V[k]
			default:
				want.V[k] = roundTo(ir.F32, x.V[k]+y.V[k])
			}
		}
		h.check(t, fmt.Sprintf("index %d", index), []tensor{scalarTensor(ir.I32, float64(index)), x, y},
			func(b *ir.Builder, xs []ir.Value) ir.Value {
				return b.GetResult(b.Case(xs[0], branches, xs[1], xs[2]), 0)
			}, want)
	}
}

// testCall: a callee of two results, both used.
func testCall(t *testing.T, h *harness) {
	vec := tt(ir.F32, 3, 2)
	callee := region(t, []ir.TensorType{vec, vec}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return []ir.Value{b.Binary(ir.OpMul, xs[0], xs[1]), b.Binary(ir.OpSub, xs[0], xs[1])}
	})
	x, y := h.gen(ir.F32, anyValue, 3, 2), h.gen(ir.F32, anyValue, 3, 2)
	want := tensor{T: vec, V: make([]float64, len(x.V))}
	for k := range want.V {
		want.V[k] = roundTo(ir.F32, roundTo(ir.F32, x.V[k]*y.V[k])+roundTo(ir.F32, x.V[k]-y.V[k]))
	}
	h.check(t, "multiply and subtract, then add", []tensor{x, y}, func(b *ir.Builder, xs []ir.Value) ir.Value {
		rs := b.Results(b.Call(callee, xs...))
		return b.Binary(ir.OpAdd, rs[0], rs[1])
	}, want)
}

// testGetResult: each result of a tuple, including one returned as it is
// (a program result that is a get_result).
func testGetResult(t *testing.T, h *harness) {
	vec := tt(ir.F32, 5)
	swap := region(t, []ir.TensorType{vec, vec}, func(b *ir.Builder, xs []ir.Value) []ir.Value { return []ir.Value{xs[1], xs[0]} })
	x, y := h.gen(ir.F32, anyValue, 5), h.gen(ir.F32, anyValue, 5)
	for i, want := range []tensor{y, x} {
		h.check(t, fmt.Sprintf("result %d", i), []tensor{x, y}, func(b *ir.Builder, xs []ir.Value) ir.Value {
			return b.GetResult(b.Call(swap, xs...), i)
		}, want)
	}
}

// roundTo is x rounded to dtype d, as a driver stores it.
func roundTo(d ir.DType, x float64) float64 { return quantize(d, []float64{x})[0] }

// sortStable is insertion sort: plainly stable.
func sortStable(xs []int, less func(a, b int) bool) {
	for j := 1; j < len(xs); j++ {
		for m := j; m > 0 && less(xs[m], xs[m-1]); m-- {
			xs[m], xs[m-1] = xs[m-1], xs[m]
		}
	}
}

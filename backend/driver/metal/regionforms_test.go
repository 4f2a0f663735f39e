package metal

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

// TestRegionForms compiles each form of reduce_region and sort_region the
// lowering knows, as the StableHLO reader translates jax's, with the CPU
// fallback off (so each runs on the GPU, or here on the model of macOS
// 15's MPSGraph), and compares every result with the reference
// interpreter's, bit for bit.
func TestRegionForms(t *testing.T) {
	d := open(t, Options{})
	negZero, nan := math.Copysign(0, -1), math.NaN()
	// jax's sort fixture's data (NaNs of both signs, signed zeros,
	// infinities, ties), with a subnormal.
	x := f32Tensor([]int{4, 6}, 3, nan, negZero, 0, math.Inf(-1), 1,
		nan, 2, math.Copysign(nan, -1), 0, negZero, math.Inf(1),
		5, 4, 3, 2, 1, 0,
		1, 1, -1, 1e-45, -1, 1)
	n := i32Tensor([]int{2, 6}, 5, -1, 3, 3, 0, -7, 2, 2, 1<<24+1, 1<<24, 9, math.MinInt32)
	ft, it := ir.TensorType{DType: ir.F32}, ir.TensorType{DType: ir.I32}
	x16 := toF16(x)
	cases := []struct {
		name  string
		args  []eval.Tensor
		build func(b *ir.Builder, xs []ir.Value) []ir.Value
	}{
		{"jnp.sort", []eval.Tensor{x}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			return b.Results(b.SortRegion(lessOf(t, []ir.TensorType{ft}, canonicalTotal, ir.CmpLT), 1, xs[0]))
		}},
		{"jnp.argsort along 0", []eval.Tensor{x}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			return b.Results(b.SortRegion(lessOf(t, []ir.TensorType{ft, it}, canonicalTotal, ir.CmpLT), 0, xs[0], b.Iota(ir.TensorType{DType: ir.I32, Shape: ir.Shape{4, 6}}, 0)))
		}},
		{"top_k (total order, descending)", []eval.Tensor{x}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			return b.Results(b.SortRegion(lessOf(t, []ir.TensorType{ft, it}, totalKey, ir.CmpGT), 1, xs[0], b.Iota(ir.TensorType{DType: ir.I32, Shape: ir.Shape{4, 6}}, 1)))
		}},
		{"top_k of float16", []eval.Tensor{x16}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			return b.Results(b.SortRegion(lessOf(t, []ir.TensorType{{DType: ir.F16}, it}, totalKey, ir.CmpGT), 1, xs[0], b.Iota(ir.TensorType{DType: ir.I32, Shape: ir.Shape{4, 6}}, 1)))
		}},
		{"approx_max_k (plain GT)", []eval.Tensor{x}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			return b.Results(b.SortRegion(lessOf(t, []ir.TensorType{ft, it}, nil, ir.CmpGT), 1, xs[0], b.Iota(ir.TensorType{DType: ir.I32, Shape: ir.Shape{4, 6}}, 1)))
		}},
		{"lax.sort((n, x), num_keys=1)", []eval.Tensor{n, sliceRows(x, 2)}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			return b.Results(b.SortRegion(lessOf(t, []ir.TensorType{it, ft}, nil, ir.CmpLT), 1, xs[0], xs[1]))
		}},
		{"lax.sort((n, x), num_keys=2)", []eval.Tensor{n, sliceRows(x, 2)}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			cmp := region(t, []ir.TensorType{it, it, ft, ft}, func(b *ir.Builder, p []ir.Value) []ir.Value {
				second := b.Compare(ir.CmpLT, canonicalTotal(b, p[2]), canonicalTotal(b, p[3]))
				return []ir.Value{b.Binary(ir.OpOr, b.Compare(ir.CmpLT, p[0], p[1]), b.Binary(ir.OpAnd, b.Compare(ir.CmpEQ, p[0], p[1]), second))}
			})
			return b.Results(b.SortRegion(cmp, 1, xs[0], xs[1]))
		}},
		{"argsort of int32 descending", []eval.Tensor{n}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			return b.Results(b.SortRegion(lessOf(t, []ir.TensorType{it, it}, nil, ir.CmpGT), 1, xs[0], b.Iota(ir.TensorType{DType: ir.I32, Shape: ir.Shape{2, 6}}, 1)))
		}},
		{"ui32 held as int32 (top bit flipped)", []eval.Tensor{n}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			cmp := region(t, []ir.TensorType{it, it}, func(b *ir.Builder, p []ir.Value) []ir.Value {
				top := b.Scalar(ir.I32, math.MinInt32)
				return []ir.Value{b.Compare(ir.CmpLT, b.Binary(ir.OpXor, p[0], top), b.Binary(ir.OpXor, p[1], top))}
			})
			return b.Results(b.SortRegion(cmp, 1, xs[0]))
		}},
		{"argmax over axis 0, argmin over axis 1", []eval.Tensor{x}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			shape := ir.TensorType{DType: ir.I32, Shape: ir.Shape{4, 6}}
			mx := b.ReduceRegion(argBody(t, ir.F32, true), []ir.Value{xs[0], b.Iota(shape, 0)}, []ir.Value{b.Scalar(ir.F32, math.Inf(-1)), b.Scalar(ir.I32, 0)}, []int{0})
			mn := b.ReduceRegion(argBody(t, ir.F32, false), []ir.Value{xs[0], b.Iota(shape, 1)}, []ir.Value{b.Scalar(ir.F32, math.Inf(1)), b.Scalar(ir.I32, 0)}, []int{1})
			return append(b.Results(mx), b.Results(mn)...)
		}},
		{"argmax of int32", []eval.Tensor{n}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			return b.Results(b.ReduceRegion(argBody(t, ir.I32, true), []ir.Value{xs[0], b.Iota(ir.TensorType{DType: ir.I32, Shape: ir.Shape{2, 6}}, 1)},
				[]ir.Value{b.Scalar(ir.I32, math.MinInt32), b.Scalar(ir.I32, 0)}, []int{1}))
		}},
		{"argmin over both axes, indices no iota, from a -0 init", []eval.Tensor{x, i32Tensor([]int{4, 6}, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, -1, -2, 9, 9, 9, 9, 9, 9, 5, 5, 5, 5, 5, 5)},
			func(b *ir.Builder, xs []ir.Value) []ir.Value {
				return b.Results(b.ReduceRegion(argBody(t, ir.F32, false), xs, []ir.Value{b.Scalar(ir.F32, negZero), b.Scalar(ir.I32, 100)}, []int{0, 1}))
			}},
		{"argmax from an init above every element", []eval.Tensor{x}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			return b.Results(b.ReduceRegion(argBody(t, ir.F32, true), []ir.Value{xs[0], b.Iota(ir.TensorType{DType: ir.I32, Shape: ir.Shape{4, 6}}, 1)},
				[]ir.Value{b.Scalar(ir.F32, 7), b.Scalar(ir.I32, -3)}, []int{1}))
		}},
		{"or of int32, xor of bools (no fixed reduce takes them)", []eval.Tensor{n}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			or := region(t, []ir.TensorType{it, it}, func(b *ir.Builder, p []ir.Value) []ir.Value { return []ir.Value{b.Binary(ir.OpOr, p[0], p[1])} })
			bt := ir.TensorType{DType: ir.Bool}
			xor := region(t, []ir.TensorType{bt, bt}, func(b *ir.Builder, p []ir.Value) []ir.Value { return []ir.Value{b.Binary(ir.OpXor, p[1], p[0])} })
			odd := b.Compare(ir.CmpNE, b.Binary(ir.OpAnd, xs[0], b.Full(ir.TensorType{DType: ir.I32, Shape: ir.Shape{2, 6}}, 1)), b.Full(ir.TensorType{DType: ir.I32, Shape: ir.Shape{2, 6}}, 0))
			return append(b.Results(b.ReduceRegion(or, xs, []ir.Value{b.Scalar(ir.I32, 64)}, []int{1})),
				b.Results(b.ReduceRegion(xor, []ir.Value{odd}, []ir.Value{b.Scalar(ir.Bool, 1)}, []int{1}))...)
		}},
		{"argmax of ui16 held as int16, max of ui64 held as int64 (top bits flipped)", []eval.Tensor{intTensor(ir.I16, []int{2, 4}, -1, 5, math.MinInt16, 0, 7, 7, -2, 300),
			intTensor(ir.I64, []int{2, 3}, -1, math.MaxInt64, 1<<53+1, 0, math.MinInt64, 1<<53)}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			flip := func(b *ir.Builder, x ir.Value) ir.Value {
				d := b.Type(x).DType
				top := b.Constant(ir.TensorType{DType: d}, binary.LittleEndian.AppendUint64(nil, 1<<(8*d.Size()-1))[:d.Size()])
				return b.Binary(ir.OpXor, x, top)
			}
			i16, i64 := ir.TensorType{DType: ir.I16}, ir.TensorType{DType: ir.I64}
			arg := region(t, []ir.TensorType{i16, it, i16, it}, func(b *ir.Builder, p []ir.Value) []ir.Value {
				kv, kw := flip(b, p[0]), flip(b, p[2])
				pick := b.Binary(ir.OpOr, b.Compare(ir.CmpGT, kv, kw), b.Compare(ir.CmpNE, kv, kv))
				pickI := b.Binary(ir.OpOr, pick, b.Binary(ir.OpAnd, b.Compare(ir.CmpEQ, kv, kw), b.Compare(ir.CmpLT, p[1], p[3])))
				return []ir.Value{b.Select(pick, p[0], p[2]), b.Select(pickI, p[1], p[3])}
			})
			mx := region(t, []ir.TensorType{i64, i64}, func(b *ir.Builder, p []ir.Value) []ir.Value {
				return []ir.Value{b.Select(b.Compare(ir.CmpLT, flip(b, p[0]), flip(b, p[1])), p[1], p[0])}
			})
			am := b.ReduceRegion(arg, []ir.Value{xs[0], b.Iota(ir.TensorType{DType: ir.I32, Shape: ir.Shape{2, 4}}, 1)}, []ir.Value{b.Scalar(ir.I16, 0), b.Scalar(ir.I32, 0)}, []int{1})
			return append(b.Results(am), b.Results(b.ReduceRegion(mx, xs[1:], []ir.Value{b.Scalar(ir.I64, 0)}, []int{1}))...)
		}},
		// Small finite values, whose sums are exact in any order: NaN
		// payloads and subnormals out of arithmetic are the GPU's own.
		{"sum, max and xor at once", []eval.Tensor{f32Tensor([]int{2, 6}, 0.5, -2, 3, 0.25, 1, -1, 8, 8, 8, -0.5, 2, 0), n, n}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			body := region(t, []ir.TensorType{ft, it, it, ft, it, it}, func(b *ir.Builder, p []ir.Value) []ir.Value {
				return []ir.Value{b.Binary(ir.OpAdd, p[0], p[3]), b.Binary(ir.OpMax, p[4], p[1]), b.Binary(ir.OpXor, p[2], p[5])}
			})
			return b.Results(b.ReduceRegion(body, xs, []ir.Value{b.Scalar(ir.F32, 10), b.Scalar(ir.I32, 3), b.Scalar(ir.I32, -1)}, []int{1}))
		}},
		// jax's x.at[i].divide(u, unique_indices=True): any body, rows
		// written once (one out of bounds).
		{"scatter of x/u, unique indices", []eval.Tensor{f32Tensor([]int{3, 2}, 1, 2, 3, 4, 5, 6), i32Tensor([]int{2, 1}, 2, 7), f32Tensor([]int{2, 2}, 4, 8, 1, 1)}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			body := region(t, []ir.TensorType{ft, ft}, func(b *ir.Builder, p []ir.Value) []ir.Value { return []ir.Value{b.Binary(ir.OpDiv, p[0], p[1])} })
			dims := ir.ScatterDims{UpdateWindowDims: []int{1}, InsertedWindowDims: []int{0}, ScatterDimsToOperandDims: []int{0}, IndexVectorDim: 1, Unique: true}
			return b.Results(b.ScatterRegion(body, xs[:1], xs[1], xs[2:], dims))
		}},
	}
	for _, c := range cases {
		b := ir.NewBuilder()
		xs := make([]ir.Value, len(c.args))
		for i, a := range c.args {
			xs[i] = b.Parameter(a.Type)
		}
		p, err := b.Build(c.build(b, xs)...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want, err := eval.Run(p, c.args)
		if err != nil {
			t.Fatalf("%s: eval: %v", c.name, err)
		}
		got := runAll(t, d, p, c.args)
		if got == nil {
			t.Errorf("%s: did not compile for the GPU", c.name)
			continue
		}
		for r := range want {
			if w := want[r].Bytes(); !bytes.Equal(got[r], w) {
				t.Errorf("%s: result %d (%v) = %x, the reference interpreter %x", c.name, r, want[r].Type, got[r], w)
			}
		}
	}
}

func f32Tensor(shape []int, vs ...float64) eval.Tensor {
	return eval.FromFloats(ir.TensorType{DType: ir.F32, Shape: ir.Shape(shape)}, vs...)
}

func i32Tensor(shape []int, vs ...int64) eval.Tensor { return intTensor(ir.I32, shape, vs...) }

func intTensor(d ir.DType, shape []int, vs ...int64) eval.Tensor {
	v := eval.New(ir.TensorType{DType: d, Shape: ir.Shape(shape)})
	copy(v.I, vs)
	return v
}

// toF16 is x rounded to float16, NaNs keeping their sign.
func toF16(x eval.Tensor) eval.Tensor {
	var raw []byte
	for _, f := range x.F {
		raw = binary.LittleEndian.AppendUint16(raw, ir.F32ToF16(float32(f)))
	}
	return eval.FromBytes(ir.TensorType{DType: ir.F16, Shape: x.Type.Shape}, raw)
}

// sliceRows is x's first rows rows.
func sliceRows(x eval.Tensor, rows int) eval.Tensor {
	cols := x.Type.Shape[1]
	return eval.FromFloats(ir.TensorType{DType: x.Type.DType, Shape: ir.Shape{rows, cols}}, x.F[:rows*cols]...)
}

// region builds a sub-program over params.
func region(t *testing.T, params []ir.TensorType, build func(b *ir.Builder, p []ir.Value) []ir.Value) *ir.Program {
	t.Helper()
	b := ir.NewBuilder()
	ps := make([]ir.Value, len(params))
	for i, p := range params {
		ps[i] = b.Parameter(p)
	}
	p, err := b.Build(build(b, ps)...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// totalKey is the reader's total-order key: bits ^ ((bits >>a w-1) >>l 1).
func totalKey(b *ir.Builder, x ir.Value) ir.Value {
	it := map[ir.DType]ir.DType{ir.F32: ir.I32, ir.F16: ir.I16, ir.BF16: ir.I16}[b.Type(x).DType]
	w := float64(8 * it.Size())
	v := b.BitcastConvert(x, it)
	sign := b.Binary(ir.OpShiftRightArithmetic, v, b.Scalar(it, w-1))
	return b.Binary(ir.OpXor, v, b.Binary(ir.OpShiftRightLogical, sign, b.Scalar(it, 1)))
}

// canonicalTotal is jax's sort key of a float: the total-order key of the
// float with -0 made +0 and NaN one NaN.
func canonicalTotal(b *ir.Builder, x ir.Value) ir.Value {
	d := b.Type(x).DType
	zero := b.Scalar(d, 0)
	r := b.Select(b.Compare(ir.CmpEQ, x, zero), zero, x)
	return totalKey(b, b.Select(b.Compare(ir.CmpNE, x, x), b.Scalar(d, math.NaN()), r))
}

// lessOf is a comparator of operand 0's key (key nil: the operand), by dir.
func lessOf(t *testing.T, ts []ir.TensorType, key func(b *ir.Builder, x ir.Value) ir.Value, dir ir.CompareDir) *ir.Program {
	var params []ir.TensorType
	for _, tt := range ts {
		params = append(params, tt, tt)
	}
	return region(t, params, func(b *ir.Builder, p []ir.Value) []ir.Value {
		l, r := p[0], p[1]
		if key != nil {
			l, r = key(b, l), key(b, r)
		}
		return []ir.Value{b.Compare(dir, l, r)}
	})
}

// argBody is jax's argmax (max) or argmin body over (value, int32 index).
func argBody(t *testing.T, vt ir.DType, max bool) *ir.Program {
	v, i := ir.TensorType{DType: vt}, ir.TensorType{DType: ir.I32}
	return region(t, []ir.TensorType{v, i, v, i}, func(b *ir.Builder, p []ir.Value) []ir.Value {
		dir := ir.CmpGT
		if !max {
			dir = ir.CmpLT
		}
		pick := b.Binary(ir.OpOr, b.Compare(dir, p[0], p[2]), b.Compare(ir.CmpNE, p[0], p[0]))
		pickI := b.Binary(ir.OpOr, pick, b.Binary(ir.OpAnd, b.Compare(ir.CmpEQ, p[0], p[2]), b.Compare(ir.CmpLT, p[1], p[3])))
		return []ir.Value{b.Select(pick, p[0], p[2]), b.Select(pickI, p[1], p[3])}
	})
}

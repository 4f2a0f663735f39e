package metal

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"
	"unsafe"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

// Tests of the lowerings of bitcast_convert, reduce_window_region and
// scatter_region: each form compiles for the GPU with no CPU fallback (on
// the model of macOS 15 here, on the GPU on a Mac) and gives the reference
// interpreter's numbers.

// form is one program and its arguments; tol is the relative tolerance of
// its float results: 0 bit for bit, anyNaN bit for bit but that any NaN
// matches any NaN (where the interpreter gives NaNs bits of its own).
type form struct {
	name string
	p    *ir.Program
	args []eval.Tensor
	tol  float64
}

// checkForms runs each form on the GPU and compares every result with the
// reference interpreter's.
func checkForms(t *testing.T, forms []form) {
	t.Helper()
	d := open(t, Options{})
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			want, err := eval.Run(f.p, f.args)
			if err != nil {
				t.Fatalf("reference: %v", err)
			}
			got := runAll(t, d, f.p, f.args)
			for r, w := range want {
				compareBytes(t, fmt.Sprintf("result %d", r), w.Type, got[r], w.Bytes(), f.tol)
			}
		})
	}
}

// runAll compiles p for the GPU alone, runs it on args (each at an interior
// offset of one allocation) and returns its results' bytes.
func runAll(t *testing.T, d *Driver, p *ir.Program, args []eval.Tensor) [][]byte {
	t.Helper()
	exe, err := d.Compile(p)
	if err != nil {
		t.Fatalf("compile: %v\n%v", err, p)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	total := 8
	for _, a := range args {
		total += len(a.Bytes()) + 16
	}
	for _, rt := range p.ResultTypes() {
		total += rt.Bytes() + 16
	}
	base, err := d.Allocate(total)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(base)
	off := 8
	place := func(n int) unsafe.Pointer {
		q := unsafe.Add(base, off)
		off += (n+7)/8*8 + 8
		return q
	}
	ins := make([]unsafe.Pointer, len(args))
	for i, a := range args {
		b := a.Bytes()
		ins[i] = place(len(b))
		copy(unsafe.Slice((*byte)(ins[i]), len(b)), b)
	}
	rts := p.ResultTypes()
	outs := make([]unsafe.Pointer, len(rts))
	for i, rt := range rts {
		outs[i] = place(rt.Bytes())
	}
	s.Execute(exe, ins, outs)
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	res := make([][]byte, len(rts))
	for i, rt := range rts {
		res[i] = append([]byte(nil), unsafe.Slice((*byte)(outs[i]), rt.Bytes())...)
	}
	return res
}

const anyNaN = -1

// compareBytes compares results of type tt element by element: bit for bit
// when tol is 0 or the type is not a float, bit for bit or both NaN when
// tol is anyNaN, else within tol relative, a NaN matching any NaN.
func compareBytes(t *testing.T, name string, tt ir.TensorType, got, want []byte, tol float64) {
	t.Helper()
	g, w := eval.FromBytes(tt, got), eval.FromBytes(tt, want)
	bad := 0
	w0 := tt.DType.Size()
	for k := range tt.Shape.Size() {
		ok := string(got[k*w0:(k+1)*w0]) == string(want[k*w0:(k+1)*w0])
		if !ok && tol != 0 && g.F != nil {
			a, b := g.F[k], w.F[k]
			ok = (a != a && b != b) || (tol > 0 && math.Abs(a-b) <= tol*(1+math.Abs(b)))
		}
		if !ok && tol > 0 && g.C != nil {
			a, b := g.C[k], w.C[k]
			ok = tol > 0 && math.Abs(real(a)-real(b)) <= tol*(1+math.Abs(real(b))) && math.Abs(imag(a)-imag(b)) <= tol*(1+math.Abs(imag(b)))
		}
		if !ok {
			if bad < 5 {
				t.Errorf("%s: element %d of %v: % x (%v), want % x (%v)", name, k, tt, got[k*w0:(k+1)*w0], g.At(k), want[k*w0:(k+1)*w0], w.At(k))
			}
			bad++
		}
	}
}

// tensorOf is a value of type tt from raw little-endian words of its
// element width.
func tensorOf(tt ir.TensorType, words ...uint64) eval.Tensor {
	w := tt.DType.Size()
	b := make([]byte, 0, w*len(words))
	for _, v := range words {
		b = binary.LittleEndian.AppendUint64(b, v)[:len(b)+w]
	}
	return eval.FromBytes(tt, b)
}

func build(t *testing.T, f func(b *ir.Builder) []ir.Value) *ir.Program {
	t.Helper()
	b := ir.NewBuilder()
	p, err := b.Build(f(b)...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func typ(d ir.DType, shape ...int) ir.TensorType {
	return ir.TensorType{DType: d, Shape: ir.Shape(shape)}
}

// TestBitcastForms: bitcasts between every kind of physical form, in
// chains as jax writes them (random floats from uint32 bits, complex parts
// through int64 words, float16 and bfloat16 bits), signed zeros, quiet NaN
// payloads and subnormals included. Signalling NaNs and float16 NaNs are
// drivertest's (its bit patterns): the reference interpreter, which holds
// floats as float64, keeps neither's bits.
func TestBitcastForms(t *testing.T) {
	u32 := tensorOf(typ(ir.U32, 8), 0x7fc12345, 0xffc00001, 0x80000000, 1, 0x4b800001, 0xffffffff, 0x3f800000, 0x807fffff)
	halves := tensorOf(typ(ir.I16, 2, 4), 0x8000, 0x0001, 0x83ff, 0x7c00, 0x3c00, 0x3f80, 0x7bff, 0xfc00)
	words := tensorOf(typ(ir.I64, 3), 0x7fc12345bf800000, 0x8000000000000001, 0x3f80000000000000)
	forms := []form{
		{name: "uint32 to float32, the random-float pattern", p: build(t, func(b *ir.Builder) []ir.Value {
			x := b.Parameter(u32.Type)
			nine := b.BroadcastInDim(b.Scalar(ir.U32, 9), ir.Shape{8}, []int{})
			one := b.BroadcastInDim(b.Scalar(ir.U32, 0x3f800000), ir.Shape{8}, []int{})
			f := b.BitcastConvert(b.Binary(ir.OpOr, b.Binary(ir.OpShiftRightLogical, x, nine), one), ir.F32)
			return []ir.Value{b.BitcastConvert(x, ir.F32), f, b.BitcastConvert(b.BitcastConvert(x, ir.F32), ir.I32)}
		}), args: []eval.Tensor{u32}},
		{name: "float32 to int32 and uint32, back to float32", p: build(t, func(b *ir.Builder) []ir.Value {
			x := b.BitcastConvert(b.Parameter(u32.Type), ir.F32)
			return []ir.Value{b.BitcastConvert(x, ir.I32), b.BitcastConvert(b.BitcastConvert(x, ir.I32), ir.U32),
				b.BitcastConvert(b.BitcastConvert(x, ir.U32), ir.F32)}
		}), args: []eval.Tensor{u32}},
		{name: "int16 to float16 and bfloat16, and back", p: build(t, func(b *ir.Builder) []ir.Value {
			x := b.Parameter(halves.Type)
			h, bf := b.BitcastConvert(x, ir.F16), b.BitcastConvert(x, ir.BF16)
			return []ir.Value{b.Convert(h, ir.F32), b.Convert(bf, ir.F32), b.BitcastConvert(h, ir.I16), b.BitcastConvert(bf, ir.I16),
				b.BitcastConvert(h, ir.BF16), b.BitcastConvert(bf, ir.F16)}
		}), args: []eval.Tensor{halves}},
		{name: "complex64 parts through int64 words", p: build(t, func(b *ir.Builder) []ir.Value {
			w := b.Parameter(words.Type)
			z := b.BitcastConvert(w, ir.C64)
			back := b.BitcastConvert(z, ir.I64)
			re := b.BitcastConvert(b.Convert(back, ir.U32), ir.F32) // the low word: the real part
			return []ir.Value{z, back, re}
		}), args: []eval.Tensor{words}},
		{name: "int8 and uint8", p: build(t, func(b *ir.Builder) []ir.Value {
			x := b.Parameter(typ(ir.I8, 4))
			return []ir.Value{b.BitcastConvert(x, ir.U8), b.BitcastConvert(b.BitcastConvert(x, ir.U8), ir.I8)}
		}), args: []eval.Tensor{tensorOf(typ(ir.I8, 4), 0x80, 0xff, 0x7f, 0)}},
		{name: "a scalar", p: build(t, func(b *ir.Builder) []ir.Value {
			return []ir.Value{b.BitcastConvert(b.Parameter(typ(ir.I32)), ir.F32)}
		}), args: []eval.Tensor{tensorOf(typ(ir.I32), 0xffc12345)}},
	}
	checkForms(t, forms)
}

// floats is a value of type tt holding xs (rounded to its type).
func floats(tt ir.TensorType, xs ...float64) eval.Tensor { return eval.FromFloats(tt, xs...) }

// seqOf is n values cycling through vals.
func seqOf(n int, vals ...float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = vals[i%len(vals)]
	}
	return out
}

// body2 is a body of two scalars of dtype d.
func body2(t *testing.T, d ir.DType, f func(b *ir.Builder, acc, x ir.Value) ir.Value) *ir.Program {
	t.Helper()
	b := ir.NewBuilder()
	s := typ(d)
	acc, x := b.Parameter(s), b.Parameter(s)
	p, err := b.Build(f(b, acc, x))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// cumWindow is jax's window of a cumulative reduction along axis.
func cumWindow(shape []int, axis int, reverse bool) ir.WindowAttrs {
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

// TestReduceWindowRegionForms: jax's cumulative reductions with a body
// (cumprod of floats, half types and integers, over an axis longer than a
// fold can be unrolled, cummax with NaNs from a non-identity init,
// cumulative or of bools), cumlogsumexp's body, a product pooling from an
// init other than the identity, two operands folded on their own, a
// scalar and an empty operand.
func TestReduceWindowRegionForms(t *testing.T) {
	mul := func(b *ir.Builder, acc, x ir.Value) ir.Value { return b.Binary(ir.OpMul, acc, x) }
	region := func(t *testing.T, body *ir.Program, x ir.TensorType, init float64, w ir.WindowAttrs) *ir.Program {
		return build(t, func(b *ir.Builder) []ir.Value {
			return []ir.Value{b.GetResult(b.ReduceWindowRegion(body, []ir.Value{b.Parameter(x)}, []ir.Value{b.Scalar(x.DType, init)}, w), 0)}
		})
	}
	var forms []form
	for _, d := range []ir.DType{ir.F32, ir.F16, ir.BF16, ir.I32, ir.I8, ir.U32, ir.I64} {
		x := typ(d, 3, 5)
		vals := seqOf(15, 1.25, -1, 0.75, 2, -0.5, 1.5, 1)
		tol := map[ir.DType]float64{ir.F32: 1e-6, ir.F16: 2e-3, ir.BF16: 1e-2}[d]
		if !d.IsFloat() {
			vals = seqOf(15, 3, -1, 2, 7, -5, 1)
			if d == ir.U32 {
				vals = seqOf(15, 3, 1, 2, 7, 5, 1)
			}
		}
		for axis := range 2 {
			for _, reverse := range []bool{false, true} {
				forms = append(forms, form{name: fmt.Sprintf("cumprod of %v along %d, reverse %v", x, axis, reverse),
					p: region(t, body2(t, d, mul), x, 1, cumWindow(x.Shape, axis, reverse)), args: []eval.Tensor{floats(x, vals...)}, tol: tol})
			}
		}
	}
	long := typ(ir.I32, 1, 1030)
	forms = append(forms, form{name: "cumprod of int32[1,1030]", p: region(t, body2(t, ir.I32, mul), long, 1, cumWindow(long.Shape, 1, false)),
		args: []eval.Tensor{floats(long, seqOf(1030, 3, -1, 2, 7, -5, 1, 1, -1)...)}})
	nan := math.NaN()
	f := typ(ir.F32, 2, 6)
	cummax := body2(t, ir.F32, func(b *ir.Builder, acc, x ir.Value) ir.Value { return b.Binary(ir.OpMax, x, acc) })
	forms = append(forms, form{name: "cummax with NaNs from 0.5", p: region(t, cummax, f, 0.5, cumWindow(f.Shape, 1, false)),
		args: []eval.Tensor{floats(f, 0.25, 1, nan, 2, 0.75, 3, -1, 0.5, 1.5, -2, nan, 1)}})
	bools := typ(ir.Bool, 2, 5)
	or := body2(t, ir.Bool, func(b *ir.Builder, acc, x ir.Value) ir.Value { return b.Binary(ir.OpOr, acc, x) })
	forms = append(forms, form{name: "cumulative or, reverse", p: region(t, or, bools, 0, cumWindow(bools.Shape, 1, true)),
		args: []eval.Tensor{floats(bools, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0)}})
	logaddexp := body2(t, ir.F32, func(b *ir.Builder, a, c ir.Value) ir.Value {
		delta := b.Binary(ir.OpSub, a, c)
		soft := b.Binary(ir.OpAdd, b.Binary(ir.OpMax, a, c), b.Unary(ir.OpLog1p, b.Unary(ir.OpExp, b.Unary(ir.OpNeg, b.Unary(ir.OpAbs, delta)))))
		return b.Select(b.Compare(ir.CmpNE, delta, delta), b.Binary(ir.OpAdd, a, c), soft)
	})
	forms = append(forms, form{name: "cumlogsumexp", p: region(t, logaddexp, f, math.Inf(-1), cumWindow(f.Shape, 1, false)),
		args: []eval.Tensor{floats(f, seqOf(12, 0.5, -3, 2, 1, -0.25, 4)...)}, tol: 1e-5})
	pool := ir.WindowAttrs{Dims: []int{2, 3}, Strides: []int{1, 2}, Padding: [][2]int{{1, 0}, {1, 1}}}
	forms = append(forms, form{name: "product pooling from 3", p: region(t, body2(t, ir.F32, mul), f, 3, pool),
		args: []eval.Tensor{floats(f, seqOf(12, 1.25, -1, 0.75, 2, -0.5)...)}})
	pair := build(t, func(b *ir.Builder) []ir.Value {
		bb := ir.NewBuilder()
		s, i := typ(ir.F32), typ(ir.I32)
		p := []ir.Value{bb.Parameter(s), bb.Parameter(i), bb.Parameter(s), bb.Parameter(i)}
		body, err := bb.Build(bb.Binary(ir.OpAdd, p[0], p[2]), bb.Binary(ir.OpMax, p[3], p[1]))
		if err != nil {
			t.Fatal(err)
		}
		xs := []ir.Value{b.Parameter(f), b.Parameter(typ(ir.I32, 2, 6))}
		return b.Results(b.ReduceWindowRegion(body, xs, []ir.Value{b.Scalar(ir.F32, 0.5), b.Scalar(ir.I32, -7)}, pool))
	})
	forms = append(forms, form{name: "a sum and a max together", p: pair,
		args: []eval.Tensor{floats(f, seqOf(12, 1.25, -1, 0.75, 2, -0.5)...), floats(typ(ir.I32, 2, 6), seqOf(12, 3, -9, 2, 7)...)}})
	add := body2(t, ir.F32, func(b *ir.Builder, acc, x ir.Value) ir.Value { return b.Binary(ir.OpAdd, acc, x) })
	forms = append(forms, form{name: "a scalar", p: region(t, add, typ(ir.F32), 0.25, ir.WindowAttrs{}), args: []eval.Tensor{floats(typ(ir.F32), 2.5)}})
	empty := typ(ir.F32, 0, 3)
	forms = append(forms, form{name: "an empty operand, padded", p: region(t, add, empty, 0.25, ir.WindowAttrs{Dims: []int{2, 1}, Padding: [][2]int{{2, 1}, {0, 0}}}),
		args: []eval.Tensor{eval.New(empty)}})
	checkForms(t, forms)
}

// TestScatterRegionForms: scatter_region's fixed forms on data each is
// exact for: replace of wide integers float32 cannot hold and of
// complex64, keep, float and narrow-integer add, float max with NaNs,
// bools' or, every choice body over NaNs, signed zeros and ties, and two
// operands each with its own body; updates repeat and leave the operand.
func TestScatterRegionForms(t *testing.T) {
	dims := ir.ScatterDims{InsertedWindowDims: []int{0}, ScatterDimsToOperandDims: []int{0}, IndexVectorDim: 1}
	idx := floats(typ(ir.I32, 10, 1), 0, 1, 2, 0, 3, 1, 0, 2, 5, -1)
	scatter := func(t *testing.T, d ir.DType, f func(b *ir.Builder, x, u ir.Value) ir.Value) *ir.Program {
		body := body2(t, d, f)
		return build(t, func(b *ir.Builder) []ir.Value {
			x, i, u := b.Parameter(typ(d, 4)), b.Parameter(idx.Type), b.Parameter(typ(d, 10))
			return b.Results(b.ScatterRegion(body, []ir.Value{x}, i, []ir.Value{u}, dims))
		})
	}
	replace := func(b *ir.Builder, x, u ir.Value) ir.Value { return u }
	nan, negz := math.NaN(), math.Copysign(0, -1)
	fx := floats(typ(ir.F32, 4), nan, 0, negz, 1)
	fu := floats(typ(ir.F32, 10), negz, 0, 0, nan, 2, negz, 1, negz, 5, 6)
	var forms []form
	for _, d := range []ir.DType{ir.I32, ir.U32, ir.I64} {
		x := tensorOf(typ(d, 4), 0x7fffffff, 0x80000001, 1<<24+1, 0xfedcba9876543210)
		u := tensorOf(typ(d, 10), 1<<24+3, 0x89abcdef, 0x7ffffffe, 1<<31, 0x0123456789abcdef, 5, 1<<24+7, 0xffffffff, 9, 10)
		forms = append(forms, form{name: fmt.Sprintf("replace %v", d), p: scatter(t, d, replace), args: []eval.Tensor{x, idx, u}})
	}
	cx, cu := eval.New(typ(ir.C64, 4)), eval.New(typ(ir.C64, 10))
	for k := range cx.C {
		cx.C[k] = complex(float64(k), -0.5*float64(k))
	}
	cx.C[1] = complex(-1, math.Copysign(0, -1))
	for k := range cu.C {
		cu.C[k] = complex(float64(k)+5, 2)
	}
	forms = append(forms,
		form{name: "replace complex64", p: scatter(t, ir.C64, replace), args: []eval.Tensor{cx, idx, cu}},
		form{name: "keep", p: scatter(t, ir.F32, func(b *ir.Builder, x, u ir.Value) ir.Value { return x }), args: []eval.Tensor{fx, idx, fu}},
		form{name: "float16 add", p: scatter(t, ir.F16, func(b *ir.Builder, x, u ir.Value) ir.Value { return b.Binary(ir.OpAdd, u, x) }),
			args: []eval.Tensor{floats(typ(ir.F16, 4), 0.5, 1, 2, 4), idx, floats(typ(ir.F16, 10), seqOf(10, 0.25, -1, 3, 0.125)...)}, tol: 2e-3},
		form{name: "int8 add", p: scatter(t, ir.I8, func(b *ir.Builder, x, u ir.Value) ir.Value { return b.Binary(ir.OpAdd, x, u) }),
			args: []eval.Tensor{floats(typ(ir.I8, 4), 120, -128, 5, 0), idx, floats(typ(ir.I8, 10), seqOf(10, 100, -7, 127)...)}},
		form{name: "float max, NaNs and signed zeros", p: scatter(t, ir.F32, func(b *ir.Builder, x, u ir.Value) ir.Value { return b.Binary(ir.OpMax, x, u) }),
			args: []eval.Tensor{fx, idx, fu}, tol: anyNaN},
		form{name: "bools' or", p: scatter(t, ir.Bool, func(b *ir.Builder, x, u ir.Value) ir.Value { return b.Binary(ir.OpOr, x, u) }),
			args: []eval.Tensor{floats(typ(ir.Bool, 4), 0, 1, 0, 0), idx, floats(typ(ir.Bool, 10), 0, 0, 0, 0, 1, 0, 0, 0, 1, 1)}},
	)
	for _, dir := range []ir.CompareDir{ir.CmpLT, ir.CmpLE, ir.CmpGT, ir.CmpGE} {
		for _, takeU := range []bool{false, true} {
			for _, not := range []bool{false, true} {
				p := scatter(t, ir.F32, func(b *ir.Builder, x, u ir.Value) ir.Value {
					c := b.Compare(dir, x, u)
					if not {
						c = b.Unary(ir.OpNot, c)
					}
					if takeU {
						return b.Select(c, u, x)
					}
					return b.Select(c, x, u)
				})
				forms = append(forms, form{name: fmt.Sprintf("choice %v, takes u %v, not %v", dir, takeU, not), p: p,
					args: []eval.Tensor{fx, idx, fu}, tol: anyNaN})
			}
		}
	}
	pair := build(t, func(b *ir.Builder) []ir.Value {
		bb := ir.NewBuilder()
		s, i := typ(ir.F32), typ(ir.I32)
		p := []ir.Value{bb.Parameter(s), bb.Parameter(i), bb.Parameter(s), bb.Parameter(i)}
		body, err := bb.Build(bb.Binary(ir.OpMin, p[2], p[0]), p[3])
		if err != nil {
			t.Fatal(err)
		}
		xs := []ir.Value{b.Parameter(typ(ir.F32, 4)), b.Parameter(typ(ir.I32, 4))}
		i2 := b.Parameter(idx.Type)
		us := []ir.Value{b.Parameter(typ(ir.F32, 10)), b.Parameter(typ(ir.I32, 10))}
		return b.Results(b.ScatterRegion(body, xs, i2, us, dims))
	})
	forms = append(forms, form{name: "min and replace together", p: pair, args: []eval.Tensor{fx, floats(typ(ir.I32, 4), 1, 2, 3, 4), idx, fu,
		tensorOf(typ(ir.I32, 10), 1<<24+1, 2, 3, 4, 5, 6, 7, 8, 9, 10)}, tol: anyNaN})
	checkForms(t, forms)
}

// TestNegateFlipsTheSignBit: from macOS 13.2 negate flips a float's sign
// bit and nothing else, NaNs included, as the IR says, though the model's
// arithmetic (like MPSGraph's, for all it documents) gives the canonical
// NaN.
func TestNegateFlipsTheSignBit(t *testing.T) {
	d := open(t, Options{})
	words := []uint32{0x7fc12345, 0xffc00001, 0x00000000, 0x80000000, 0x3f800000, 0xff800000}
	raw := make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(raw[4*i:], w)
	}
	typ := ir.TensorType{DType: ir.F32, Shape: ir.Shape{len(words)}}
	b := ir.NewBuilder()
	p, err := b.Build(b.Unary(ir.OpNeg, b.Parameter(typ)))
	if err != nil {
		t.Fatal(err)
	}
	got := runAll(t, d, p, []eval.Tensor{eval.FromBytes(typ, raw)})[0]
	for i, w := range words {
		if g := binary.LittleEndian.Uint32(got[4*i:]); g != w^0x80000000 {
			t.Errorf("negate of %08x = %08x, want %08x", w, g, w^0x80000000)
		}
	}
}

// TestGatherWideIntegersExactly: gather moves integers through float32, so
// a uint32 random key, an int32 or an int64 past 2^24 would come back
// rounded (jax's key gathers did, on the model); they gather in 16-bit
// pieces instead.
func TestGatherWideIntegersExactly(t *testing.T) {
	d := open(t, Options{})
	for _, c := range []struct {
		dt    ir.DType
		words []uint64
	}{
		{ir.U32, []uint64{0xc4a7f1e9, 0x39c7ed49, 0xffffffff, 1<<24 + 1}},
		{ir.I32, []uint64{0x80000001, 0x7fffffff, 1<<24 + 3, 0xfeffffff}},
		{ir.I64, []uint64{1<<53 + 1, 0x8000000000000001, 0x7fffffffffffffff, 1<<24 + 5}},
	} {
		size := c.dt.Size()
		raw := make([]byte, size*len(c.words))
		for i, w := range c.words {
			for b := range size {
				raw[size*i+b] = byte(w >> (8 * b))
			}
		}
		typ := ir.TensorType{DType: c.dt, Shape: ir.Shape{len(c.words)}}
		idxT := ir.TensorType{DType: ir.I32, Shape: ir.Shape{4, 1}}
		b := ir.NewBuilder()
		x := b.Parameter(typ)
		idx := b.Parameter(idxT)
		p, err := b.Build(b.Gather(x, idx, ir.GatherDims{CollapsedSliceDims: []int{0}, StartIndexMap: []int{0}, IndexVectorDim: 1, SliceSizes: []int{1}}))
		if err != nil {
			t.Fatal(err)
		}
		order := []int32{3, 0, 2, 1}
		ib := make([]byte, 16)
		for i, o := range order {
			binary.LittleEndian.PutUint32(ib[4*i:], uint32(o))
		}
		got := runAll(t, d, p, []eval.Tensor{eval.FromBytes(typ, raw), eval.FromBytes(idxT, ib)})[0]
		for i, o := range order {
			if g, w := got[size*i:size*(i+1)], raw[size*int(o):size*(int(o)+1)]; string(g) != string(w) {
				t.Errorf("%v: element %d = % x, want % x", c.dt, i, g, w)
			}
		}
	}
}

// TestComplexSum: a reduction by the complex sum the frontends compose
// (complex(real(a)+real(b), imag(a)+imag(b))) runs on the GPU, as jax's
// complex einsum and sums write it, and agrees with the interpreter.
func TestComplexSum(t *testing.T) {
	d := open(t, Options{})
	c := ir.TensorType{DType: ir.C64}
	bb := ir.NewBuilder()
	a, x := bb.Parameter(c), bb.Parameter(c)
	body, err := bb.Build(bb.Complex(bb.Binary(ir.OpAdd, bb.Real(a), bb.Real(x)), bb.Binary(ir.OpAdd, bb.Imag(x), bb.Imag(a))))
	if err != nil {
		t.Fatal(err)
	}
	if !ir.ComplexSumOf(body) {
		t.Fatal("ComplexSumOf does not recognise the frontends' complex sum")
	}
	typ := ir.TensorType{DType: ir.C64, Shape: ir.Shape{3, 4}}
	b := ir.NewBuilder()
	z := b.Parameter(typ)
	init := b.Parameter(c)
	p, err := b.Build(b.GetResult(b.ReduceRegion(body, []ir.Value{z}, []ir.Value{init}, []int{1}), 0))
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 8*12)
	for k := range 24 {
		binary.LittleEndian.PutUint32(raw[4*k:], math.Float32bits(float32(k%7)-2.5+float32(k)/8))
	}
	ib := make([]byte, 8)
	binary.LittleEndian.PutUint32(ib, math.Float32bits(0.25))
	binary.LittleEndian.PutUint32(ib[4:], math.Float32bits(-1))
	args := []eval.Tensor{eval.FromBytes(typ, raw), eval.FromBytes(c, ib)}
	got := runAll(t, d, p, args)[0]
	want, err := eval.Run(p, args)
	if err != nil {
		t.Fatal(err)
	}
	if w := want[0].Bytes(); string(got) != string(w) {
		t.Errorf("complex sum = % x, want % x", got, w)
	}
}

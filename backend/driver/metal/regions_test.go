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
// its float results (0: bit for bit).
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
	d := open(t, Options{NoCPUFallback: true})
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
	if cpu, why := exe.(*executable).OnCPU(); cpu {
		t.Fatalf("runs on the CPU: %s", why)
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

// compareBytes compares results of type tt element by element: bit for bit
// when tol is 0 or the type is not a float, else within tol relative, a NaN
// matching any NaN.
func compareBytes(t *testing.T, name string, tt ir.TensorType, got, want []byte, tol float64) {
	t.Helper()
	g, w := eval.FromBytes(tt, got), eval.FromBytes(tt, want)
	bad := 0
	w0 := tt.DType.Size()
	for k := range tt.Shape.Size() {
		ok := string(got[k*w0:(k+1)*w0]) == string(want[k*w0:(k+1)*w0])
		if !ok && tol > 0 && g.F != nil {
			a, b := g.F[k], w.F[k]
			ok = (a != a && b != b) || math.Abs(a-b) <= tol*(1+math.Abs(b))
		}
		if !ok && tol > 0 && g.C != nil {
			a, b := g.C[k], w.C[k]
			ok = math.Abs(real(a)-real(b)) <= tol*(1+math.Abs(real(b))) && math.Abs(imag(a)-imag(b)) <= tol*(1+math.Abs(imag(b)))
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

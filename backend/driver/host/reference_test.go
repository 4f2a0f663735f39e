package host

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

// TestAgreesWithTheReferenceInterpreter runs the fuzz target's programs
// (float32, finite inputs) on the host driver and on the IR's reference
// interpreter (backend/ir/eval), and compares.
func TestAgreesWithTheReferenceInterpreter(t *testing.T) {
	d := New(Options{})
	rnd := rand.New(rand.NewPCG(7, 11))
	compared := map[ir.Op]int{}
	for i := range 3000 {
		seed := make([]byte, 40)
		for j := range seed {
			seed[j] = byte(rnd.IntN(256))
			if i%2 == 1 {
				seed[j] %= 3
			}
		}
		seed[0] = 0 // float32
		p, err := buildFuzz(&fuzzReader{b: seed})
		if err != nil || p.ResultTypes()[0].DType != ir.F32 {
			continue
		}
		args := make([]eval.Tensor, len(p.Params))
		ptrs := make([]unsafe.Pointer, len(p.Params))
		for k, pt := range p.Params {
			if pt.DType != ir.F32 {
				args = nil
				break
			}
			v := eval.New(pt)
			buf := make([]byte, pt.Bytes()+1)
			for e := range v.F {
				x := float32(rnd.IntN(17)-8) / 4 // exact in every float type
				v.F[e] = float64(x)
				binary.LittleEndian.PutUint32(buf[4*e:], math.Float32bits(x))
			}
			args[k], ptrs[k] = v, unsafe.Pointer(&buf[0])
		}
		if args == nil {
			continue
		}
		want, err := eval.Run(p, args)
		if err != nil {
			if strings.Contains(err.Error(), "not supported") {
				continue
			}
			t.Fatalf("the interpreter failed: %v\n%s", err, p)
		}
		exe, err := d.Compile(p)
		if err != nil {
			t.Fatalf("Compile: %v\n%s", err, p)
		}
		rt := p.ResultTypes()[0]
		out := make([]byte, rt.Bytes()+1)
		if err := d.Run(exe, ptrs, []unsafe.Pointer{unsafe.Pointer(&out[0])}); err != nil {
			t.Fatalf("Run: %v\n%s", err, p)
		}
		last := p.Instrs[p.Results[0]].Op
		for e, w := range want[0].F {
			got := float64(math.Float32frombits(binary.LittleEndian.Uint32(out[4*e:])))
			if !(got == w || math.IsNaN(got) && math.IsNaN(w) || math.Abs(got-w) <= 1e-5*math.Max(1, math.Abs(w))) {
				t.Fatalf("%s: element %d is %g on the host driver, %g in the interpreter\n%s", last, e, got, w, p)
			}
		}
		compared[last]++
	}
	t.Logf("programs compared, by final op: %v", compared)
	if len(compared) < 8 {
		t.Errorf("only %d kinds of program compared", len(compared))
	}
}

// TestRegionsAgreeWithTheReferenceInterpreter: while, case, call and a
// variadic reduction, on the host driver and in the interpreter.
func TestRegionsAgreeWithTheReferenceInterpreter(t *testing.T) {
	i32, f := ir.TensorType{DType: ir.I32}, ir.TensorType{DType: ir.F32}
	vec := ir.TensorType{DType: ir.F32, Shape: ir.Shape{3, 4}}
	sub := func(params []ir.TensorType, build func(b *ir.Builder, xs []ir.Value) []ir.Value) *ir.Program {
		b := ir.NewBuilder()
		xs := make([]ir.Value, len(params))
		for i, p := range params {
			xs[i] = b.Parameter(p)
		}
		p, err := b.Build(build(b, xs)...)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	cond := sub([]ir.TensorType{i32, vec}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return []ir.Value{b.Compare(ir.CmpGT, xs[0], b.Scalar(ir.I32, 0))}
	})
	body := sub([]ir.TensorType{i32, vec}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return []ir.Value{b.Binary(ir.OpSub, xs[0], b.Scalar(ir.I32, 1)), b.Unary(ir.OpTanh, b.Binary(ir.OpAdd, xs[1], xs[1]))}
	})
	neg := sub([]ir.TensorType{vec}, func(b *ir.Builder, xs []ir.Value) []ir.Value { return []ir.Value{b.Unary(ir.OpNeg, xs[0])} })
	exp := sub([]ir.TensorType{vec}, func(b *ir.Builder, xs []ir.Value) []ir.Value { return []ir.Value{b.Unary(ir.OpExp, xs[0])} })
	argmax := sub([]ir.TensorType{f, i32, f, i32}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		take := b.Compare(ir.CmpGT, xs[2], xs[0])
		return []ir.Value{b.Select(take, xs[2], xs[0]), b.Select(take, xs[3], xs[1])}
	})
	b := ir.NewBuilder()
	n, x, which := b.Parameter(i32), b.Parameter(vec), b.Parameter(i32)
	looped := b.Results(b.While(cond, body, n, x))[1]
	picked := b.GetResult(b.Case(which, []*ir.Program{neg, exp}, looped), 0)
	called := b.GetResult(b.Call(neg, picked), 0)
	am := b.ReduceRegion(argmax, []ir.Value{called, b.Iota(ir.TensorType{DType: ir.I32, Shape: ir.Shape{3, 4}}, 1)},
		[]ir.Value{b.Scalar(ir.F32, math.Inf(-1)), b.Scalar(ir.I32, 0)}, []int{1})
	byKey := sub([]ir.TensorType{f, f, f, f}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return []ir.Value{b.Compare(ir.CmpGT, xs[0], xs[1])}
	})
	sorted := b.GetResult(b.SortRegion(byKey, 1, called, x), 1)
	p, err := b.Build(b.GetResult(am, 0), b.GetResult(am, 1), sorted)
	if err != nil {
		t.Fatal(err)
	}
	d := New(Options{})
	exe, err := d.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ n, which int32 }{{0, 0}, {3, 1}, {2, 5}} {
		xv := eval.New(vec)
		xb := make([]byte, vec.Bytes())
		for k := range xv.F {
			v := float32(k%5-2) / 3
			xv.F[k] = float64(v)
			binary.LittleEndian.PutUint32(xb[4*k:], math.Float32bits(v))
		}
		nv, wv := eval.New(i32), eval.New(i32)
		nv.I[0], wv.I[0] = int64(c.n), int64(c.which)
		nb, wb := make([]byte, 4), make([]byte, 4)
		binary.LittleEndian.PutUint32(nb, uint32(c.n))
		binary.LittleEndian.PutUint32(wb, uint32(c.which))
		want, err := eval.Run(p, []eval.Tensor{nv, xv, wv})
		if err != nil {
			t.Fatal(err)
		}
		outs := [][]byte{make([]byte, 12), make([]byte, 12), make([]byte, 48)}
		if err := d.Run(exe, []unsafe.Pointer{unsafe.Pointer(&nb[0]), unsafe.Pointer(&xb[0]), unsafe.Pointer(&wb[0])},
			[]unsafe.Pointer{unsafe.Pointer(&outs[0][0]), unsafe.Pointer(&outs[1][0]), unsafe.Pointer(&outs[2][0])}); err != nil {
			t.Fatal(err)
		}
		for r, w := range want {
			for k := range w.Type.Shape.Size() {
				var got float64
				if w.Type.DType == ir.I32 {
					got = float64(int32(binary.LittleEndian.Uint32(outs[r][4*k:])))
				} else {
					got = float64(math.Float32frombits(binary.LittleEndian.Uint32(outs[r][4*k:])))
				}
				if math.Abs(got-w.At(k)) > 1e-5*math.Max(1, math.Abs(w.At(k))) {
					t.Errorf("n=%d case %d: result %d element %d: host %g, interpreter %g", c.n, c.which, r, k, got, w.At(k))
				}
			}
		}
	}
}

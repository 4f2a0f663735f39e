package rewrite_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

func scalar(d ir.DType) ir.TensorType { return ir.TensorType{DType: d} }

func tensor(d ir.DType, dims ...int) ir.TensorType {
	return ir.TensorType{DType: d, Shape: ir.Shape(dims)}
}

func build(t *testing.T, b *ir.Builder, results ...ir.Value) *ir.Program {
	t.Helper()
	p, err := b.Build(results...)
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(p); err != nil {
		t.Fatalf("the test's own program does not verify: %v\n%s", err, p)
	}
	return p
}

// count is how many instructions of op p holds, its regions' included.
func count(p *ir.Program, op ir.Op) int {
	n := 0
	for _, in := range p.Instrs {
		if in.Op == op {
			n++
		}
		for _, r := range in.Regions {
			n += count(r, op)
		}
	}
	return n
}

// randomArgs are inputs for p's parameters: normal floats, integers in
// [lo, hi], random bools.
func randomArgs(rng *rand.Rand, p *ir.Program, lo, hi int) []eval.Tensor {
	args := make([]eval.Tensor, len(p.Params))
	for i, pt := range p.Params {
		v := eval.New(pt)
		for k := range pt.Shape.Size() {
			switch {
			case pt.DType.IsFloat():
				v.Set(k, rng.NormFloat64())
			case pt.DType == ir.Bool:
				v.Set(k, float64(rng.IntN(2)))
			default:
				v.Set(k, float64(lo+rng.IntN(hi-lo+1)))
			}
		}
		args[i] = v
	}
	return args
}

// sameResults runs p and q on args and requires every result of q to
// have the type and the bytes of p's.
func sameResults(t *testing.T, p, q *ir.Program, args []eval.Tensor) {
	t.Helper()
	want, err := eval.Run(p, args)
	if err != nil {
		t.Fatalf("the original program: %v", err)
	}
	got, err := eval.Run(q, args)
	if err != nil {
		t.Fatalf("the rewritten program: %v\n%s", err, q)
	}
	if len(got) != len(want) {
		t.Fatalf("%d results, the original %d", len(got), len(want))
	}
	for i := range want {
		if g, w := got[i].Type, want[i].Type; g.DType != w.DType || !g.Shape.Equal(w.Shape) {
			t.Errorf("result %d is %v, the original's %v", i, g, w)
			continue
		}
		if g, w := got[i].Bytes(), want[i].Bytes(); !bytes.Equal(g, w) {
			t.Errorf("result %d differs: %v, the original gives %v", i, got[i].Floats(), want[i].Floats())
		}
	}
}

// sameSignature requires q to take p's parameters and give p's result
// types, and to verify.
func sameSignature(t *testing.T, p, q *ir.Program) {
	t.Helper()
	if err := ir.Verify(q); err != nil {
		t.Fatalf("the rewritten program does not verify: %v", err)
	}
	if len(q.Params) != len(p.Params) {
		t.Fatalf("%d parameters, the original %d", len(q.Params), len(p.Params))
	}
	for i := range p.Params {
		if q.Params[i].String() != p.Params[i].String() {
			t.Errorf("parameter %d is %v, the original's %v", i, q.Params[i], p.Params[i])
		}
	}
	pr, qr := p.ResultTypes(), q.ResultTypes()
	if len(pr) != len(qr) {
		t.Fatalf("%d results, the original %d", len(qr), len(pr))
	}
	for i := range pr {
		if pr[i].String() != qr[i].String() {
			t.Errorf("result %d is %v, the original's %v", i, qr[i], pr[i])
		}
	}
}

// untouched runs f on p and requires p to be as it was (rewrites are
// pure: programs are shared and cached by key).
func untouched(t *testing.T, p *ir.Program, f func()) {
	t.Helper()
	before, key := p.String(), p.Key()
	f()
	if p.String() != before || p.Key() != key {
		t.Errorf("the rewrite changed its input:\nbefore\n%s\nafter\n%s", before, p.String())
	}
}

// forLoop builds the while jax writes for fori_loop(lo, hi, body) with
// Python-int bounds (through scan): carried (k, i, x...), cond k < hi
// with hi a constant of cond, body k+1, i+1, and x = step(b, i, x...).
// It returns the loop's results after k and i.
func forLoop(t *testing.T, b *ir.Builder, d ir.DType, lo, hi int, step func(b *ir.Builder, i ir.Value, xs []ir.Value) []ir.Value, xs ...ir.Value) []ir.Value {
	t.Helper()
	types := []ir.TensorType{scalar(d), scalar(d)}
	for _, x := range xs {
		types = append(types, b.Type(x))
	}
	cb := ir.NewBuilder()
	var cp []ir.Value
	for _, ty := range types {
		cp = append(cp, cb.Parameter(ty))
	}
	cond := build(t, cb, cb.Compare(ir.CmpLT, cp[0], cb.Scalar(d, float64(hi))))
	bb := ir.NewBuilder()
	var bp []ir.Value
	for _, ty := range types {
		bp = append(bp, bb.Parameter(ty))
	}
	one := bb.Scalar(d, 1)
	outs := append([]ir.Value{bb.Binary(ir.OpAdd, bp[0], one), bb.Binary(ir.OpAdd, bp[1], one)}, step(bb, bp[1], bp[2:])...)
	body := build(t, bb, outs...)
	k0 := b.Scalar(d, float64(lo))
	rs := b.Results(b.While(cond, body, append([]ir.Value{k0, k0}, xs...)...))
	if b.Err() != nil {
		t.Fatal(b.Err())
	}
	return rs[2:]
}

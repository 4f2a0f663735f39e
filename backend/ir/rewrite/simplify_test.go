package rewrite_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/rewrite"
)

func TestSimplify(t *testing.T) {
	rec := withRecorder(t)
	f := tensor(ir.F32, 3)
	b := ir.NewBuilder()
	x, unused, n := b.Parameter(f), b.Parameter(tensor(ir.I32, 2)), b.Parameter(scalar(ir.I32))
	_ = unused
	two, twoAgain := b.Full(f, 2), b.Full(f, 2)
	y := b.Binary(ir.OpMul, x, two)
	y = b.Binary(ir.OpAdd, y, twoAgain)
	b.Unary(ir.OpExp, y) // dead
	// A dead host call, and a dead case holding one: both run.
	b.HostCall(7, b.Constant(ir.TokenType, nil), []ir.Value{y}, []ir.TensorType{f})
	hb := ir.NewBuilder()
	ha := hb.Parameter(f)
	withCall := build(t, hb, hb.GetResult(hb.HostCall(8, hb.Constant(ir.TokenType, nil), []ir.Value{ha}, []ir.TensorType{f}), 1))
	pb := ir.NewBuilder()
	plain := build(t, pb, pb.Unary(ir.OpNeg, pb.Parameter(f)))
	b.Case(n, []*ir.Program{plain, withCall}, x)
	// A dead loop of data-dependent count stays, a dead loop of 10 trips
	// goes.
	boundedBy(t, b, n, x, func(bb *ir.Builder, _, acc ir.Value) ir.Value { return bb.Unary(ir.OpNeg, acc) })
	forLoop(t, b, ir.I32, 0, 10, func(bb *ir.Builder, _ ir.Value, v []ir.Value) []ir.Value {
		return []ir.Value{bb.Unary(ir.OpNeg, v[0])}
	}, x)
	// A live loop whose body computes something it drops.
	kept := forLoop(t, b, ir.I32, 0, 2, func(bb *ir.Builder, _ ir.Value, v []ir.Value) []ir.Value {
		bb.Unary(ir.OpTanh, v[0])
		return []ir.Value{bb.Unary(ir.OpNeg, v[0])}
	}, y)
	// An index computed from constants.
	idx := b.Binary(ir.OpSub, b.Binary(ir.OpMul, b.Scalar(ir.I32, 3), b.Scalar(ir.I32, 2)), b.Scalar(ir.I32, 5))
	picked := b.Reshape(b.Gather(kept[0], b.Reshape(idx, ir.Shape{1}), ir.GatherDims{CollapsedSliceDims: []int{0},
		StartIndexMap: []int{0}, IndexVectorDim: 1, SliceSizes: []int{1}}), nil)
	p := build(t, b, kept[0], picked)

	var q *ir.Program
	untouched(t, p, func() {
		var err error
		if q, err = rewrite.Simplify(p); err != nil {
			t.Fatal(err)
		}
	})
	sameSignature(t, p, q)
	text := q.String()
	if got := count(q, ir.OpHostCall); got != 2 {
		t.Errorf("%d host calls left, want both:\n%s", got, text)
	}
	if got := count(q, ir.OpCase); got != 1 {
		t.Errorf("the case holding a host call went:\n%s", text)
	}
	if got := count(q, ir.OpWhile); got != 2 {
		t.Errorf("%d loops left, want the one of unknown count and the live one:\n%s", got, text)
	}
	if count(q, ir.OpExp) != 0 || count(q, ir.OpTanh) != 0 {
		t.Errorf("dead instructions left, in the program or in a body:\n%s", text)
	}
	if strings.Count(text, "constant 0x00000040 : float32[]") != 1 {
		t.Errorf("the constant 2.0 is not made once:\n%s", text)
	}
	if count(q, ir.OpMul) != 1 || count(q, ir.OpSub) != 0 {
		t.Errorf("the index 3*2-5 was not folded (one multiply, of floats, should be left):\n%s", text)
	}
	params := 0
	for _, in := range q.Instrs {
		if in.Op == ir.OpParameter {
			params++
		}
	}
	if params != 3 {
		t.Errorf("%d parameters left, want all 3, the unused one too:\n%s", params, text)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for range 3 {
		sameCalls(t, rec, p, q, randomArgs(rng, p, -1, 4))
	}
	if r, err := rewrite.Simplify(q); err != nil || r != q {
		t.Errorf("a simplified program simplified again (%v):\n%s", err, r)
	}
}

package rewrite_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/metalplug/metalplug/backend/hostcall"
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
	"github.com/metalplug/metalplug/backend/ir/rewrite"
)

// callees: h(x) = exp(x); g(x, y) = (x*y + h(x), x - y).
func callees(t *testing.T) (g, h *ir.Program) {
	t.Helper()
	f := tensor(ir.F32, 3)
	hb := ir.NewBuilder()
	h = build(t, hb, hb.Unary(ir.OpExp, hb.Parameter(f)))
	gb := ir.NewBuilder()
	x, y := gb.Parameter(f), gb.Parameter(f)
	hx := gb.GetResult(gb.Call(h, x), 0)
	g = build(t, gb, gb.Binary(ir.OpAdd, gb.Binary(ir.OpMul, x, y), hx), gb.Binary(ir.OpSub, x, y))
	return g, h
}

// callsEverywhere calls g at the top, in a loop's body (three times
// round) and in a case's branch.
func callsEverywhere(t *testing.T) *ir.Program {
	t.Helper()
	g, h := callees(t)
	f := tensor(ir.F32, 3)
	b := ir.NewBuilder()
	x, y, idx := b.Parameter(f), b.Parameter(f), b.Parameter(scalar(ir.I32))
	top := b.Results(b.Call(g, x, y))
	looped := forLoop(t, b, ir.I32, 0, 3, func(bb *ir.Builder, _ ir.Value, xs []ir.Value) []ir.Value {
		r := bb.Results(bb.Call(g, xs[0], xs[1]))
		return []ir.Value{r[0], xs[1]}
	}, top[0], y)

	br0 := ir.NewBuilder()
	a0, a1 := br0.Parameter(f), br0.Parameter(f)
	branch0 := build(t, br0, br0.GetResult(br0.Call(g, a0, a1), 1))
	br1 := ir.NewBuilder()
	c0, _ := br1.Parameter(f), br1.Parameter(f)
	branch1 := build(t, br1, br1.GetResult(br1.Call(h, c0), 0))
	chosen := b.GetResult(b.Case(idx, []*ir.Program{branch0, branch1}, x, looped[0]), 0)
	return build(t, b, top[1], looped[0], chosen)
}

func TestInlineCalls(t *testing.T) {
	p := callsEverywhere(t)
	if count(p, ir.OpCall) != 7 {
		t.Fatalf("the test program has %d calls, want 7 (g calls h):\n%s", count(p, ir.OpCall), p)
	}
	var q *ir.Program
	untouched(t, p, func() {
		var err error
		if q, err = rewrite.InlineCalls(p); err != nil {
			t.Fatal(err)
		}
	})
	sameSignature(t, p, q)
	if n := count(q, ir.OpCall); n != 0 {
		t.Errorf("%d calls left:\n%s", n, q)
	}
	if count(q, ir.OpWhile) != 1 || count(q, ir.OpCase) != 1 {
		t.Errorf("the loop and the case should stay:\n%s", q)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 5 {
		sameResults(t, p, q, randomArgs(rng, p, -1, 2))
	}
	// Nothing left to do: the same program back.
	if r, err := rewrite.InlineCalls(q); err != nil || r != q {
		t.Errorf("a program without calls came back changed (%v)", err)
	}
}

// recorder is a host-call runner that writes down each call: its id and
// its first operand's bytes.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) run(id uint64, args, results [][]byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, fmt.Sprintf("%d%v", id, args))
	for _, res := range results {
		for i := range res {
			res[i] = byte(id)
		}
	}
	return nil
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls
	r.calls = nil
	return c
}

// withRecorder makes a recorder the process's host-call runner for the
// test.
func withRecorder(t *testing.T) *recorder {
	t.Helper()
	r := &recorder{}
	hostcall.Set(r.run)
	t.Cleanup(func() { hostcall.Set(nil) })
	return r
}

// TestInlineCallsKeepsEffectsInOrder: the callee's host call runs where
// the call was, between the caller's own, on the same operands.
func TestInlineCallsKeepsEffectsInOrder(t *testing.T) {
	rec := withRecorder(t)
	f := tensor(ir.F32, 2)
	cb := ir.NewBuilder()
	tok, x := cb.Parameter(ir.TokenType), cb.Parameter(f)
	hc := cb.Results(cb.HostCall(2, tok, []ir.Value{x}, []ir.TensorType{f}))
	callee := build(t, cb, hc[0], cb.Binary(ir.OpAdd, hc[1], x))

	b := ir.NewBuilder()
	in := b.Parameter(f)
	first := b.Results(b.HostCall(1, b.Constant(ir.TokenType, nil), []ir.Value{in}, []ir.TensorType{f}))
	mid := b.Results(b.Call(callee, first[0], b.Unary(ir.OpNeg, in)))
	last := b.Results(b.HostCall(3, mid[0], []ir.Value{mid[1]}, []ir.TensorType{f}))
	p := build(t, b, last[1], mid[1])

	q, err := rewrite.InlineCalls(p)
	if err != nil {
		t.Fatal(err)
	}
	args := randomArgs(rand.New(rand.NewPCG(5, 6)), p, 0, 1)
	sameResults(t, p, q, args)
	want := rec.take()
	if len(want) != 6 { // sameResults ran each program once
		t.Fatalf("%d host calls, want 3 per run: %v", len(want), want)
	}
	if !slices.Equal(want[:3], want[3:]) {
		t.Errorf("the inlined program calls %v, the original %v", want[3:], want[:3])
	}
	if got, err := eval.Run(q, args); err != nil || len(got) != 2 {
		t.Fatal(err)
	}
	if calls := rec.take(); len(calls) != 3 || calls[0][0] != '1' || calls[1][0] != '2' || calls[2][0] != '3' {
		t.Errorf("host calls %v, want 1, 2, 3 in order", calls)
	}
}

// sameCalls runs p, then q, on args, and requires q to make the host
// calls p makes, in p's order, on the same operands (and the same
// results, by sameResults).
func sameCalls(t *testing.T, rec *recorder, p, q *ir.Program, args []eval.Tensor) {
	t.Helper()
	rec.take()
	if _, err := eval.Run(p, args); err != nil {
		t.Fatal(err)
	}
	want := rec.take()
	if _, err := eval.Run(q, args); err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); !slices.Equal(got, want) {
		t.Errorf("host calls %v, the original's %v", got, want)
	}
	sameResults(t, p, q, args)
	rec.take()
}

package rewrite_test

import (
	"math/rand/v2"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/rewrite"
)

// foriLoop is lax.fori_loop(0, 10, lambda i, acc: acc * 0.9 + w * i, x),
// as jax writes it (the loops fixture's first loop, on a vector).
func foriLoop(t *testing.T) *ir.Program {
	b := ir.NewBuilder()
	f := tensor(ir.F32, 2)
	x, w := b.Parameter(f), b.Parameter(f)
	rs := forLoop(t, b, ir.I32, 0, 10, func(bb *ir.Builder, i ir.Value, xs []ir.Value) []ir.Value {
		acc, w := xs[0], xs[1]
		fi := bb.BroadcastInDim(bb.Convert(i, ir.F32), ir.Shape{2}, nil)
		return []ir.Value{bb.Binary(ir.OpAdd, bb.Binary(ir.OpMul, acc, bb.Full(f, 0.9)), bb.Binary(ir.OpMul, w, fi)), w}
	}, x, w)
	return build(t, b, rs[0])
}

// scanLoop is lax.scan over the rows of xs [5, 3]: the carry becomes
// tanh(carry) * 0.9 + xs[i], and row i of ys [5, 3] is set to it, with a
// gather and a scatter at [i, 0] as jax writes the dynamic slice and the
// dynamic update slice.
func scanLoop(t *testing.T) *ir.Program {
	b := ir.NewBuilder()
	xs, c0 := b.Parameter(tensor(ir.F32, 5, 3)), b.Parameter(tensor(ir.F32, 3))
	ys0 := b.Full(tensor(ir.F32, 5, 3), 0)
	rs := forLoop(t, b, ir.I32, 0, 5, func(bb *ir.Builder, i ir.Value, v []ir.Value) []ir.Value {
		xs, carry, ys := v[0], v[1], v[2]
		at := bb.Concat(0, bb.Reshape(i, ir.Shape{1}), bb.Reshape(bb.Scalar(ir.I32, 0), ir.Shape{1}))
		row := bb.Reshape(bb.Gather(xs, at, ir.GatherDims{OffsetDims: []int{0, 1}, StartIndexMap: []int{0, 1}, SliceSizes: []int{1, 3}}), ir.Shape{3})
		next := bb.Binary(ir.OpAdd, bb.Binary(ir.OpMul, bb.Unary(ir.OpTanh, carry), bb.Full(tensor(ir.F32, 3), 0.9)), row)
		ys = bb.Scatter(ys, at, bb.Reshape(next, ir.Shape{1, 3}), ir.ScatterDims{UpdateWindowDims: []int{0, 1},
			ScatterDimsToOperandDims: []int{0, 1}, Kind: ir.ScatterReplace})
		return []ir.Value{xs, next, ys}
	}, xs, c0, ys0)
	return build(t, b, rs[1], rs[2])
}

// boundedBy is the loop jax writes for fori_loop(0, n, ...) with n a
// value: carried (n, j, acc), cond j < n, the body hands n on and adds
// step(j) to acc.
func boundedBy(t *testing.T, b *ir.Builder, n, acc ir.Value, step func(bb *ir.Builder, j, acc ir.Value) ir.Value) ir.Value {
	t.Helper()
	types := []ir.TensorType{b.Type(n), b.Type(n), b.Type(acc)}
	cb := ir.NewBuilder()
	cn, cj := cb.Parameter(types[0]), cb.Parameter(types[1])
	cb.Parameter(types[2])
	cond := build(t, cb, cb.Compare(ir.CmpLT, cj, cn))
	bb := ir.NewBuilder()
	bn, bj, ba := bb.Parameter(types[0]), bb.Parameter(types[1]), bb.Parameter(types[2])
	body := build(t, bb, bn, bb.Binary(ir.OpAdd, bj, bb.Scalar(ir.I32, 1)), step(bb, bj, ba))
	return b.GetResult(b.While(cond, body, n, b.Scalar(ir.I32, 0), acc), 2)
}

// nestedLoops is the loops fixture's third loop, and a fixed inner loop:
// for i in range(4): for j in range(i): acc += i*j; for j in range(3):
// acc = acc * 0.5 + j.
func nestedLoops(t *testing.T) *ir.Program {
	b := ir.NewBuilder()
	x := b.Parameter(tensor(ir.F32))
	rs := forLoop(t, b, ir.I32, 0, 4, func(bb *ir.Builder, i ir.Value, v []ir.Value) []ir.Value {
		acc := boundedBy(t, bb, i, v[0], func(ib *ir.Builder, j, acc ir.Value) ir.Value {
			// i is not the inner body's: it is passed in, as jax passes what
			// a body captures, here through the carried bound.
			return ib.Binary(ir.OpAdd, acc, ib.Convert(ib.Binary(ir.OpMul, j, j), ir.F32))
		})
		inner := forLoop(t, bb, ir.I32, 0, 3, func(ib *ir.Builder, j ir.Value, w []ir.Value) []ir.Value {
			return []ir.Value{ib.Binary(ir.OpAdd, ib.Binary(ir.OpMul, w[0], ib.Scalar(ir.F32, 0.5)), ib.Convert(j, ir.F32))}
		}, acc)
		return []ir.Value{inner[0]}
	}, x)
	return build(t, b, rs[0])
}

// dataBound is while k < n (n an input) around the fixed inner loop of
// nestedLoops: the outer loop's count is the data's, the inner one's known.
func dataBound(t *testing.T) *ir.Program {
	b := ir.NewBuilder()
	x, n := b.Parameter(tensor(ir.F32)), b.Parameter(scalar(ir.I32))
	acc := boundedBy(t, b, n, x, func(bb *ir.Builder, j, acc ir.Value) ir.Value {
		inner := forLoop(t, bb, ir.I32, 0, 3, func(ib *ir.Builder, k ir.Value, w []ir.Value) []ir.Value {
			return []ir.Value{ib.Binary(ir.OpAdd, ib.Binary(ir.OpMul, w[0], ib.Scalar(ir.F32, 0.5)), ib.Convert(k, ir.F32))}
		}, acc)
		return bb.Binary(ir.OpAdd, inner[0], bb.Convert(j, ir.F32))
	})
	return build(t, b, acc)
}

// zeroTrip is fori_loop(5, 3, ...): the body never runs.
func zeroTrip(t *testing.T) *ir.Program {
	b := ir.NewBuilder()
	x := b.Parameter(tensor(ir.F32, 2))
	rs := forLoop(t, b, ir.I32, 5, 3, func(bb *ir.Builder, _ ir.Value, v []ir.Value) []ir.Value {
		return []ir.Value{bb.Unary(ir.OpExp, v[0])}
	}, x)
	return build(t, b, rs[0])
}

// countdown steps an int64 counter from 20 down by 3 while it is > 0 (7
// trips), doubling a vector and adding the counter to it.
func countdown(t *testing.T) *ir.Program {
	b := ir.NewBuilder()
	f := tensor(ir.F32, 3)
	x := b.Parameter(f)
	types := []ir.TensorType{scalar(ir.I64), f}
	cb := ir.NewBuilder()
	ck := cb.Parameter(types[0])
	cb.Parameter(types[1])
	cond := build(t, cb, cb.Compare(ir.CmpLT, cb.Scalar(ir.I64, 0), ck))
	bb := ir.NewBuilder()
	bk, bx := bb.Parameter(types[0]), bb.Parameter(types[1])
	kf := bb.BroadcastInDim(bb.Convert(bk, ir.F32), ir.Shape{3}, nil)
	body := build(t, bb, bb.Binary(ir.OpSub, bk, bb.Scalar(ir.I64, 3)), bb.Binary(ir.OpAdd, bb.Binary(ir.OpAdd, bx, bx), kf))
	k0 := b.Convert(b.Scalar(ir.I32, 20), ir.I64)
	return build(t, b, b.Results(b.While(cond, body, k0, x))[1])
}

func TestUnroll(t *testing.T) {
	cases := []struct {
		name      string
		build     func(t *testing.T) *ir.Program
		trips     []int // TripCount of each top-level loop, in order (-1: not known)
		whileLeft int   // loops left with a budget large enough for all
		lo, hi    int   // the range of integer inputs
	}{
		{"fori_loop", foriLoop, []int{10}, 0, 0, 0},
		{"scan", scanLoop, []int{5}, 0, 0, 0},
		{"nested, inner bound from the outer counter", nestedLoops, []int{4}, 0, 0, 0},
		{"bound from the data", dataBound, []int{-1}, 1, 0, 6},
		{"zero trips", zeroTrip, []int{0}, 0, 0, 0},
		{"counting down", countdown, []int{7}, 0, 0, 0},
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.build(t)
			var trips []int
			for i, in := range p.Instrs {
				if in.Op == ir.OpWhile {
					n, ok := rewrite.TripCount(p, i)
					if !ok {
						n = -1
					}
					trips = append(trips, n)
				}
			}
			if len(trips) != len(c.trips) {
				t.Fatalf("trip counts %v, want %v", trips, c.trips)
			}
			for i := range trips {
				if trips[i] != c.trips[i] {
					t.Errorf("trip counts %v, want %v", trips, c.trips)
				}
			}
			var q *ir.Program
			untouched(t, p, func() {
				var err error
				if q, err = rewrite.Unroll(p, 1<<20); err != nil {
					t.Fatal(err)
				}
			})
			sameSignature(t, p, q)
			if n := count(q, ir.OpWhile); n != c.whileLeft {
				t.Errorf("%d loops left, want %d:\n%s", n, c.whileLeft, q)
			}
			for range 4 {
				sameResults(t, p, q, randomArgs(rng, p, c.lo, c.hi))
			}
			s, err := rewrite.Simplify(q)
			if err != nil {
				t.Fatal(err)
			}
			sameSignature(t, p, s)
			sameResults(t, p, s, randomArgs(rng, p, c.lo, c.hi))
			if rewrite.Size(s) > rewrite.Size(q) {
				t.Errorf("Simplify grew the program from %d to %d instructions", rewrite.Size(q), rewrite.Size(s))
			}
		})
	}
}

// TestUnrollNestedInnerFirst: the fixed inner loop of a loop whose own
// count is the data's is unrolled inside the body, which stays a loop.
func TestUnrollNestedInnerFirst(t *testing.T) {
	p := dataBound(t)
	q, err := rewrite.Unroll(p, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if count(p, ir.OpWhile) != 2 || count(q, ir.OpWhile) != 1 {
		t.Fatalf("%d loops became %d, want 2 to 1:\n%s", count(p, ir.OpWhile), count(q, ir.OpWhile), q)
	}
	for i, in := range q.Instrs {
		if in.Op == ir.OpWhile {
			if n := count(in.Regions[1], ir.OpWhile); n != 0 {
				t.Errorf("the outer loop's body still holds %d loops", n)
			}
			if _, ok := rewrite.TripCount(q, i); ok {
				t.Error("the outer loop's trip count became known")
			}
		}
	}
}

// TestUnrollBudget: each budget keeps the result within it; below what a
// loop needs, the loop stays; the nested loops unroll piecewise as the
// budget allows (the inner fixed loop first; then the outer one, whose
// copies hold the loops bound by its counter, which then unroll to fewer
// instructions than they held rolled: so the whole needs a budget above
// its final size).
func TestUnrollBudget(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	p := nestedLoops(t)
	full, err := rewrite.Unroll(p, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	need := rewrite.Size(full)
	seen := map[int]bool{}
	for max := rewrite.Size(p) - 1; max <= 2*need; max++ {
		q, err := rewrite.Unroll(p, max)
		if err != nil {
			t.Fatal(err)
		}
		if q != p && rewrite.Size(q) > max {
			t.Fatalf("budget %d: %d instructions", max, rewrite.Size(q))
		}
		seen[count(q, ir.OpWhile)] = true
		if max%7 == 0 {
			sameSignature(t, p, q)
			sameResults(t, p, q, randomArgs(rng, p, 0, 0))
		}
	}
	if len(seen) != 3 || !seen[0] || !seen[2] || !seen[3] {
		t.Errorf("loops left over the budgets: %v; want all 3, the 2 unknown in the body's context, none", seen)
	}
	// Below what the only loop that grows needs: nothing changes.
	f := foriLoop(t)
	if q, err := rewrite.Unroll(f, rewrite.Size(f)); err != nil || q != f {
		t.Errorf("a budget of the program's own size unrolled a loop of 10 trips (%v)", err)
	}
}

func TestUnrollWithoutLoops(t *testing.T) {
	b := ir.NewBuilder()
	x := b.Parameter(tensor(ir.F32, 2))
	p := build(t, b, b.Unary(ir.OpExp, x))
	if q, err := rewrite.Unroll(p, 1000); err != nil || q != p {
		t.Errorf("a program without loops came back changed (%v)", err)
	}
	if _, err := rewrite.Unroll(nil, 1000); err == nil {
		t.Error("a nil program unrolled")
	}
}

// TestUnrollKeepsConditionEffects: a loop of known count whose condition
// calls a host function (jax.debug.print in cond_fun) stays: unrolled, the
// condition and its calls would go. One whose body calls is unrolled, its
// calls made as often, in order.
func TestUnrollKeepsConditionEffects(t *testing.T) {
	rec := withRecorder(t)
	f := tensor(ir.F32, 2)
	loop := func(inCond bool) *ir.Program {
		types := []ir.TensorType{scalar(ir.I32), f}
		cb := ir.NewBuilder()
		ck, cx := cb.Parameter(types[0]), cb.Parameter(types[1])
		if inCond {
			cb.HostCall(1, cb.Constant(ir.TokenType, nil), []ir.Value{cx}, nil)
		}
		cond := build(t, cb, cb.Compare(ir.CmpLT, ck, cb.Scalar(ir.I32, 3)))
		bb := ir.NewBuilder()
		bk, bx := bb.Parameter(types[0]), bb.Parameter(types[1])
		if !inCond {
			bx = bb.GetResult(bb.HostCall(2, bb.Constant(ir.TokenType, nil), []ir.Value{bx}, []ir.TensorType{f}), 1)
		}
		body := build(t, bb, bb.Binary(ir.OpAdd, bk, bb.Scalar(ir.I32, 1)), bb.Unary(ir.OpNeg, bx))
		b := ir.NewBuilder()
		x := b.Parameter(f)
		return build(t, b, b.GetResult(b.While(cond, body, b.Scalar(ir.I32, 0), x), 1))
	}
	args := randomArgs(rand.New(rand.NewPCG(19, 20)), loop(true), 0, 0)
	for _, inCond := range []bool{true, false} {
		p := loop(inCond)
		if n, ok := rewrite.TripCount(p, len(p.Instrs)-2); !ok || n != 3 {
			t.Fatalf("TripCount = %d, %v; want 3\n%s", n, ok, p)
		}
		q, err := rewrite.Unroll(p, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if unrolled := q != p; unrolled == inCond {
			t.Errorf("host call in the condition %v: unrolled %v\n%s", inCond, unrolled, q)
		}
		sameCalls(t, rec, p, q, args)
	}
}

package rewrite_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
	"github.com/metalplug/metalplug/backend/ir/rewrite"
)

// branch builds a branch of (float32[3], float32[2,2]) operands.
func branch(t *testing.T, f func(b *ir.Builder, v, m ir.Value) []ir.Value) *ir.Program {
	t.Helper()
	b := ir.NewBuilder()
	v, m := b.Parameter(tensor(ir.F32, 3)), b.Parameter(tensor(ir.F32, 2, 2))
	return build(t, b, f(b, v, m)...)
}

// threeResults: a vector, a matrix and a scalar, as each branch computes
// them differently.
func threeResults(t *testing.T, k float64) *ir.Program {
	return branch(t, func(b *ir.Builder, v, m ir.Value) []ir.Value {
		s := b.Scalar(ir.F32, k)
		return []ir.Value{
			b.Binary(ir.OpMul, v, b.BroadcastInDim(s, ir.Shape{3}, nil)),
			b.Binary(ir.OpAdd, m, b.BroadcastInDim(s, ir.Shape{2, 2}, nil)),
			b.Binary(ir.OpAdd, b.Reduce(v, ir.ReduceSum, []int{0}), s),
		}
	})
}

// caseOf builds index -> case(branches) on (v, m) and returns its results.
func caseOf(t *testing.T, branches []*ir.Program, fromBool bool) *ir.Program {
	t.Helper()
	b := ir.NewBuilder()
	var idx ir.Value
	if fromBool {
		idx = b.Convert(b.Parameter(scalar(ir.Bool)), ir.I32) // lax.cond
	} else {
		idx = b.Parameter(scalar(ir.I32))
	}
	v, m := b.Parameter(tensor(ir.F32, 3)), b.Parameter(tensor(ir.F32, 2, 2))
	return build(t, b, b.Results(b.Case(idx, branches, v, m))...)
}

// withIndex replaces args[0] by the index i.
func withIndex(args []eval.Tensor, i int) []eval.Tensor {
	args = slices.Clone(args)
	args[0] = eval.FromFloats(scalar(ir.I32), float64(i))
	return args
}

func TestCaseToSelect(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	two := []*ir.Program{threeResults(t, 1), threeResults(t, -2)}
	three := append(slices.Clone(two), threeResults(t, 0.5))
	for _, c := range []struct {
		name     string
		branches []*ir.Program
		fromBool bool
	}{
		{"cond (two branches, a bool index)", two, true},
		{"switch of two", two, false},
		{"switch of three", three, false},
		{"one branch", three[:1], false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := caseOf(t, c.branches, c.fromBool)
			var q *ir.Program
			untouched(t, p, func() {
				var err error
				if q, err = rewrite.CaseToSelect(p, nil); err != nil {
					t.Fatal(err)
				}
			})
			sameSignature(t, p, q)
			if count(q, ir.OpCase) != 0 {
				t.Fatalf("a case is left:\n%s", q)
			}
			if want := 3 * (len(c.branches) - 1); count(q, ir.OpSelect) != want {
				t.Errorf("%d selects, want %d (one per result and branch but the last):\n%s", count(q, ir.OpSelect), want, q)
			}
			if c.fromBool {
				for range 4 {
					sameResults(t, p, q, randomArgs(rng, p, 0, 1))
				}
				return
			}
			// Every index, and out of range on both sides: the last branch.
			args := randomArgs(rng, p, 0, 0)
			for _, i := range []int{-1 << 31, -7, -1, 0, 1, 2, 3, 4, 100, 1<<31 - 1} {
				sameResults(t, p, q, withIndex(args, i))
			}
		})
	}
}

// TestCaseToSelectLeavesEffects: a case whose branch calls a host
// function, anywhere (in a loop's body inside it too), stays; so does one
// whose branch holds a loop of unknown count; the pure case beside them is
// rewritten, and the host calls the program makes are the same.
func TestCaseToSelectLeavesEffects(t *testing.T) {
	rec := withRecorder(t)
	f := tensor(ir.F32, 3)
	printing := branch(t, func(b *ir.Builder, v, m ir.Value) []ir.Value {
		r := b.Results(b.HostCall(1, b.Constant(ir.TokenType, nil), []ir.Value{v}, []ir.TensorType{f}))
		return []ir.Value{r[1], m, b.Reduce(v, ir.ReduceSum, []int{0})}
	})
	printingInLoop := branch(t, func(b *ir.Builder, v, m ir.Value) []ir.Value {
		rs := forLoop(t, b, ir.I32, 0, 2, func(bb *ir.Builder, _ ir.Value, xs []ir.Value) []ir.Value {
			r := bb.Results(bb.HostCall(2, bb.Constant(ir.TokenType, nil), []ir.Value{xs[0]}, []ir.TensorType{f}))
			return []ir.Value{r[1]}
		}, v)
		return []ir.Value{rs[0], m, b.Reduce(v, ir.ReduceSum, []int{0})}
	})
	// A loop while sum(v) > 0: v -= 1 (all of v). Not taken, it would still
	// end here, but nothing says so.
	unknownLoop := branch(t, func(b *ir.Builder, v, m ir.Value) []ir.Value {
		cb := ir.NewBuilder()
		cv := cb.Parameter(f)
		cond := build(t, cb, cb.Compare(ir.CmpGT, cb.Reduce(cv, ir.ReduceSum, []int{0}), cb.Scalar(ir.F32, 0)))
		bb := ir.NewBuilder()
		bv := bb.Parameter(f)
		body := build(t, bb, bb.Binary(ir.OpSub, bv, bb.Full(f, 1)))
		out := b.GetResult(b.While(cond, body, v), 0)
		return []ir.Value{out, m, b.Reduce(out, ir.ReduceSum, []int{0})}
	})
	knownLoop := branch(t, func(b *ir.Builder, v, m ir.Value) []ir.Value {
		rs := forLoop(t, b, ir.I32, 0, 3, func(bb *ir.Builder, _ ir.Value, xs []ir.Value) []ir.Value {
			return []ir.Value{bb.Unary(ir.OpTanh, xs[0])}
		}, v)
		return []ir.Value{rs[0], m, b.Reduce(v, ir.ReduceSum, []int{0})}
	})
	pure := threeResults(t, 3)

	for _, c := range []struct {
		name      string
		branches  []*ir.Program
		rewritten bool
	}{
		{"a host call", []*ir.Program{pure, printing}, false},
		{"a host call in a loop", []*ir.Program{printingInLoop, pure}, false},
		{"a loop of unknown count", []*ir.Program{pure, unknownLoop}, false},
		{"a loop of known count", []*ir.Program{knownLoop, pure, pure}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The case under test, then a pure one beside it.
			b := ir.NewBuilder()
			idx, v, m := b.Parameter(scalar(ir.I32)), b.Parameter(f), b.Parameter(tensor(ir.F32, 2, 2))
			first := b.Results(b.Case(idx, c.branches, v, m))
			second := b.Results(b.Case(idx, []*ir.Program{pure, threeResults(t, -1)}, first[0], m))
			p := build(t, b, append(first, second...)...)
			q, err := rewrite.CaseToSelect(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			sameSignature(t, p, q)
			want := 0
			if !c.rewritten {
				want = 1
			}
			if got := count(q, ir.OpCase); got != want {
				t.Errorf("%d cases left, want %d:\n%s", got, want, q)
			}
			args := randomArgs(rand.New(rand.NewPCG(15, 16)), p, 0, 0)
			for i := range len(c.branches) + 1 {
				sameCalls(t, rec, p, q, withIndex(args, i))
			}
		})
	}
	// Nothing to rewrite: the same program.
	p := caseOf(t, []*ir.Program{printing, pure}, false)
	if q, err := rewrite.CaseToSelect(p, nil); err != nil || q != p {
		t.Errorf("a case with a host call was rewritten (%v)", err)
	}
}

// TestCaseToSelectAsks: ok decides for each case, seeing its branches
// (rewritten inside: the inner case is gone when the outer one is asked
// about); a refusal leaves the case.
func TestCaseToSelectAsks(t *testing.T) {
	inner := caseOf(t, []*ir.Program{threeResults(t, 2), threeResults(t, 4)}, false)
	// A branch taking (v, m) that runs the inner case on index 1.
	outerBranch := branch(t, func(b *ir.Builder, v, m ir.Value) []ir.Value {
		return b.Results(b.Call(inner, b.Scalar(ir.I32, 1), v, m))
	})
	inlined, err := rewrite.InlineCalls(outerBranch)
	if err != nil {
		t.Fatal(err)
	}
	p := caseOf(t, []*ir.Program{inlined, threeResults(t, 5)}, false)
	if count(p, ir.OpCase) != 2 {
		t.Fatalf("the test program has %d cases, want 2", count(p, ir.OpCase))
	}
	var asked []int
	q, err := rewrite.CaseToSelect(p, func(br *ir.Program) bool {
		asked = append(asked, count(br, ir.OpCase))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if count(q, ir.OpCase) != 0 {
		t.Errorf("cases left:\n%s", q)
	}
	if !slices.Equal(asked, []int{0, 0, 0, 0}) {
		t.Errorf("ok saw branches holding %v cases, want four branches holding none", asked)
	}
	args := randomArgs(rand.New(rand.NewPCG(17, 18)), p, 0, 0)
	for i := range 3 {
		sameResults(t, p, q, withIndex(args, i))
	}
	// Refusing branches that select leaves the outer case, with the inner
	// one as selects in its branch.
	q, err = rewrite.CaseToSelect(p, func(br *ir.Program) bool { return count(br, ir.OpSelect) == 0 })
	if err != nil {
		t.Fatal(err)
	}
	if count(q, ir.OpCase) != 1 || count(q, ir.OpSelect) != 3 {
		t.Errorf("want the inner case as selects inside the outer one:\n%s", q)
	}
	sameResults(t, p, q, withIndex(args, 0))
	if r, err := rewrite.CaseToSelect(p, func(*ir.Program) bool { return false }); err != nil || r != p {
		t.Errorf("refusing every branch changed the program (%v)", err)
	}
}

package stablehlo

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
	"github.com/metalplug/metalplug/backend/ir/rewrite"
)

// The rewrites of backend/ir/rewrite on what jax really writes: every
// fixture whose translation holds a while, a case or a call, rewritten step
// by step as the split execution will (calls inlined, cases of pure
// branches to selects, loops of known count unrolled, the rest simplified),
// must compute, on the reference interpreter and the fixture's inputs, the
// very bits the translation computes; so on inputs that take the other
// branches and loop other numbers of times (each scalar int32 or bool
// input set to other values in turn). The trip counts are asserted, and
// checked against the interpreter's own count where the loop is at the top.

// fixtureTripCounts are the TripCount of each while of a fixture's
// translation, in program order, a loop's regions after the loop (-1: not
// known).
var fixtureTripCounts = map[string][]int{
	"bool_ops":    {},
	"cond_switch": {3}, // the fori_loop(0, 3) inside cond's branch
	// fori_loop(0, 10); while_loop on s[1] < n, an input; the outer
	// fori_loop(0, 4); inside its body fori_loop(0, i), whose bound is
	// the outer counter, known only once the outer loop is unrolled.
	"loops": {10, -1, 4, -1},
	"scan":  {5, 5}, // scan and scan(reverse=True) over 5 rows
	// The permutation from the pivots, one loop per matrix of the
	// batch's shape (int64 counters).
	"linalg_lu": {5, 4, 3, 4, 3, 3, 1, 4},
	// QDWH: two fixed iterations of each kind, and loops until the
	// iteration converges.
	"linalg_svd": {2, 2, -1, -1, -1, 2, 2, -1, 2, 2, -1, -1, -1, 2, 2, -1, 2, 2, -1, -1, -1, 2, 2, -1},
	// threefry2x32's fori_loop(0, 5) over its rounds, one per draw.
	"random":           {5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5},
	"random_typed_key": {5, 5, 5, 5, 5},
}

// fixtureLoopsLeft are the loops a fixture keeps after the rewrites (all
// of unknown count); the others keep none.
var fixtureLoopsLeft = map[string]int{"loops": 1, "linalg_svd": 12}

func TestRewritesOnFixtures(t *testing.T) {
	seen := map[string]bool{}
	for _, file := range loadFixtures(t) {
		name, p := fixtureProgram(t, file)
		var err error
		if countOp(p, ir.OpWhile)+countOp(p, ir.OpCase)+countOp(p, ir.OpCall) == 0 {
			continue
		}
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			want, ok := fixtureTripCounts[name]
			if !ok {
				t.Fatalf("a fixture with control flow not in fixtureTripCounts: trip counts %v", tripCounts(p))
			}
			if got := tripCounts(p); !slices.Equal(got, want) {
				t.Errorf("trip counts %v, want %v", got, want)
			}
			inputs := inputVariants(fixtureInputs(t, file))
			results := make([][]eval.Tensor, len(inputs))
			for k, args := range inputs {
				if results[k], err = eval.Run(p, args); err != nil {
					t.Fatal(err)
				}
				checkTripCountsRun(t, p, args)
			}

			before := p.String()
			q := p
			for _, step := range []struct {
				name string
				f    func(*ir.Program) (*ir.Program, error)
			}{
				{"InlineCalls", rewrite.InlineCalls},
				{"CaseToSelect", func(p *ir.Program) (*ir.Program, error) { return rewrite.CaseToSelect(p, nil) }},
				{"Unroll", func(p *ir.Program) (*ir.Program, error) { return rewrite.Unroll(p, 1<<16) }},
				{"Simplify", rewrite.Simplify},
			} {
				if q, err = step.f(q); err != nil {
					t.Fatalf("%s: %v", step.name, err)
				}
				if err := ir.Verify(q); err != nil {
					t.Fatalf("%s: %v", step.name, err)
				}
				if !slices.EqualFunc(q.Params, p.Params, func(a, b ir.TensorType) bool { return a.String() == b.String() }) {
					t.Fatalf("%s: parameters %v, the translation's %v", step.name, q.Params, p.Params)
				}
				for k, args := range inputs {
					got, err := eval.Run(q, args)
					if err != nil {
						t.Fatalf("%s: %v", step.name, err)
					}
					for i, want := range results[k] {
						if got[i].Type.String() != want.Type.String() || !bytes.Equal(got[i].Bytes(), want.Bytes()) {
							t.Errorf("%s, inputs %d: result %d is %v %v, the translation's %v %v", step.name, k, i,
								got[i].Type, got[i].Floats(), want.Type, want.Floats())
						}
					}
				}
			}
			if p.String() != before {
				t.Error("the rewrites changed the translated program")
			}
			if n := countOp(q, ir.OpWhile); n != fixtureLoopsLeft[name] {
				t.Errorf("%d loops left, want %d", n, fixtureLoopsLeft[name])
			}
			if n := countOp(q, ir.OpCase) + countOp(q, ir.OpCall); n != 0 {
				t.Errorf("%d cases and calls left", n)
			}
			t.Logf("%d instructions, %d after the rewrites", rewrite.Size(p), rewrite.Size(q))
		})
	}
	for name := range fixtureTripCounts {
		if !seen[name] {
			t.Errorf("%s has no control flow any more (or is gone): drop it from fixtureTripCounts", name)
		}
	}
}

// checkTripCountsRun runs each loop at the top of p on the values it
// starts from and counts its iterations: where TripCount knows the count,
// it must be this one.
func checkTripCountsRun(t *testing.T, p *ir.Program, args []eval.Tensor) {
	t.Helper()
	for i, in := range p.Instrs {
		if in.Op != ir.OpWhile {
			continue
		}
		n, ok := rewrite.TripCount(p, i)
		if !ok {
			continue
		}
		prefix := &ir.Program{Params: p.Params, Instrs: p.Instrs[:i], Results: in.Args}
		vals, err := eval.Run(prefix, args)
		if err != nil {
			t.Fatalf("the values loop %%%d starts from: %v", i, err)
		}
		runs := 0
		for ; ; runs++ {
			c, err := eval.Run(in.Regions[0], vals)
			if err != nil {
				t.Fatal(err)
			}
			if c[0].I[0] == 0 {
				break
			}
			if vals, err = eval.Run(in.Regions[1], vals); err != nil {
				t.Fatal(err)
			}
		}
		if runs != n {
			t.Errorf("loop %%%d runs %d times, TripCount says %d", i, runs, n)
		}
	}
}

// inputVariants are args, then args with each scalar int32 input set to
// -1, 0, 1, 2, 3 and 9 in turn, and each scalar bool input negated: a
// fixture's inputs take one branch of each case and loop one number of
// times.
func inputVariants(args []eval.Tensor) [][]eval.Tensor {
	out := [][]eval.Tensor{args}
	for j, a := range args {
		if a.Type.Shape.Rank() != 0 {
			continue
		}
		var values []float64
		switch a.Type.DType {
		case ir.I32:
			values = []float64{-1, 0, 1, 2, 3, 9}
		case ir.Bool:
			values = []float64{1 - a.At(0)}
		}
		for _, v := range values {
			variant := slices.Clone(args)
			variant[j] = eval.FromFloats(a.Type, v)
			out = append(out, variant)
		}
	}
	return out
}

// fixtureProgram is a fixture's name and its translated program.
func fixtureProgram(t *testing.T, file string) (string, *ir.Program) {
	t.Helper()
	name := strings.TrimSuffix(filepath.Base(file), ".json")
	code, err := os.ReadFile(strings.TrimSuffix(file, ".json") + ".mlir.bc")
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := Read(code)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return name, p
}

// fixtureInputs are a fixture's inputs.
func fixtureInputs(t *testing.T, file string) []eval.Tensor {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var fx fixture
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	args := make([]eval.Tensor, len(fx.Inputs))
	for i, in := range fx.Inputs {
		if args[i], err = in.tensor(); err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
	}
	return args
}

// tripCounts lists TripCount of every while of p, in program order, a
// loop's regions after the loop, -1 where not known.
func tripCounts(p *ir.Program) []int {
	out := []int{}
	for i, in := range p.Instrs {
		if in.Op == ir.OpWhile {
			n, ok := rewrite.TripCount(p, i)
			if !ok {
				n = -1
			}
			out = append(out, n)
		}
		for _, r := range in.Regions {
			out = append(out, tripCounts(r)...)
		}
	}
	return out
}

func countOp(p *ir.Program, op ir.Op) int {
	n := 0
	for _, in := range p.Instrs {
		if in.Op == op {
			n++
		}
		for _, r := range in.Regions {
			n += countOp(r, op)
		}
	}
	return n
}

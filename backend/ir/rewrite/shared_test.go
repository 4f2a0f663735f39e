package rewrite_test

import (
	"sync"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/rewrite"
)

// TestSharedPrograms runs every rewrite on the same programs from several
// goroutines at once, as caches share them: under -race, a write to an
// input (or to anything the results share with it) shows.
func TestSharedPrograms(t *testing.T) {
	progs := []*ir.Program{callsEverywhere(t), nestedLoops(t), scanLoop(t), dataBound(t),
		caseOf(t, []*ir.Program{threeResults(t, 1), threeResults(t, 2), threeResults(t, 3)}, false)}
	steps := []func(*ir.Program) (*ir.Program, error){
		rewrite.InlineCalls,
		func(p *ir.Program) (*ir.Program, error) { return rewrite.CaseToSelect(p, nil) },
		func(p *ir.Program) (*ir.Program, error) { return rewrite.Unroll(p, 1<<12) },
		rewrite.Simplify,
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(progs)*len(steps))
	for range 4 {
		for _, p := range progs {
			wg.Go(func() {
				q := p
				for _, step := range steps {
					var err error
					if q, err = step(q); err != nil {
						errs <- err
						return
					}
				}
				// And again on what came out, which shares with p.
				for _, step := range steps {
					if _, err := step(q); err != nil {
						errs <- err
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestMalformedProgram: a program that does not verify makes a rewrite
// fail with an error, not a panic.
func TestMalformedProgram(t *testing.T) {
	p := foriLoop(t)
	bad := ir.Program{Params: p.Params, Instrs: append([]ir.Instr(nil), p.Instrs...), Results: p.Results}
	for i, in := range bad.Instrs {
		if in.Op == ir.OpWhile {
			in.Args = append([]ir.Value(nil), in.Args...)
			in.Args[0] = ir.Value(len(bad.Instrs) + 5) // no such value
			bad.Instrs[i] = in
		}
	}
	for name, f := range map[string]func(*ir.Program) (*ir.Program, error){
		"Unroll":   func(p *ir.Program) (*ir.Program, error) { return rewrite.Unroll(p, 1000) },
		"Simplify": rewrite.Simplify,
	} {
		if q, err := f(&bad); err == nil {
			t.Errorf("%s of a malformed program: no error\n%s", name, q)
		}
	}
}

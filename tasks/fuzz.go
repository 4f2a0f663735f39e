package tasks

import (
	"fmt"
	"time"
)

// fuzzTarget is one fuzz target, the package that holds it and how long
// Test runs it on every push (0: not at all).
type fuzzTarget struct {
	pkg, name string
	push      time.Duration
}

// FuzzTargets are every fuzz target of the tree: the MLIR bytecode reader,
// the host driver on built programs, jax's path from a mutated artifact to
// a run (reader, translation, ir.Verify, host driver) and TensorFlow's
// from a mutated kernel call to a run (lowering, ir.Verify, host driver).
// On every push they run for 39s in all; the reader's not at all, as the
// StableHLO target reads artifacts too.
var FuzzTargets = []fuzzTarget{
	{"./plugin/pjrt/mlir", "FuzzRead", 0},
	{"./backend/driver/host", "FuzzBuildAndRun", 15 * time.Second},
	{"./plugin/pjrt/stablehlo", "FuzzStableHLOProgram", 12 * time.Second},
	{"./plugin/tf/lower", "FuzzKernel", 12 * time.Second},
}

// fuzz runs one target for d. New coverage is minimized for 10s at most,
// not Go's default minute: the StableHLO target's inputs are artifacts of
// kilobytes, whose minimization would take most of a short run.
func fuzz(env []string, t fuzzTarget, d time.Duration) error {
	return run(env, "go", "test", "-run=^$", "-fuzz=^"+t.name+"$", "-fuzztime="+d.String(), "-fuzzminimizetime=10s", t.pkg)
}

// Fuzz runs every fuzz target for d each (the weekly workflow's long run).
// A failure stops it; Go writes the input under the package's
// testdata/fuzz, to be committed with the fix as a regression seed.
func Fuzz(logf Logf, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("fuzz: a duration of %v", d)
	}
	for _, t := range FuzzTargets {
		logf("== fuzzing %s (%s) for %v", t.name, t.pkg, d)
		if err := fuzz(nil, t, d); err != nil {
			return err
		}
	}
	return nil
}

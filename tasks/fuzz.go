package tasks

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
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
//
// Go 1.26's fuzzing coordinator can fail a run that found nothing at the
// moment its time is up, reporting its own deadline (go.dev/issue/75804,
// fixed in Go 1.27): such a run, which wrote no failing input and failed
// for nothing else, is said and counted as passed. Anything else fails.
func fuzz(env []string, t fuzzTarget, d time.Duration) error {
	args := []string{"test", "-run=^$", "-fuzz=^" + t.name + "$", "-fuzztime=" + d.String(), "-fuzzminimizetime=10s", t.pkg}
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.MultiWriter(os.Stdout, &out), io.MultiWriter(os.Stderr, &out)
	err := cmd.Run()
	if err != nil && coordinatorDeadline(out.String()) {
		fmt.Printf("%s: the fuzzing coordinator's own deadline at the end of its time, no failing input (go.dev/issue/75804): passed\n", t.name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// coordinatorDeadline reports whether a fuzz run's output shows only the
// coordinator's deadline race: its one failure "context deadline
// exceeded", and no failing input written, panic or other failure.
func coordinatorDeadline(out string) bool {
	if strings.Contains(out, "Failing input written") || strings.Contains(out, "panic:") {
		return false
	}
	fails := strings.Count(out, "--- FAIL:")
	_, after, ok := strings.Cut(out, "--- FAIL:")
	if !ok || fails != 1 {
		return false
	}
	// The failure's own lines: indented, up to the test binary's verdict.
	lines := strings.Split(after, "\n")[1:]
	var said []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "    ") {
			break
		}
		said = append(said, strings.TrimSpace(l))
	}
	return len(said) == 1 && said[0] == "context deadline exceeded"
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

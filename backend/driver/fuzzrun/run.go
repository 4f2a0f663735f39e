// Package fuzzrun runs programs a fuzzer made on a driver, within bounds,
// and tells a driver's bugs from a program's demands. A mutated program
// may ask for terabytes, or loop for ever; neither is a bug of the driver,
// but a run that panics (even one the driver recovers into an error),
// writes past its results or takes far longer than its size allows is. The
// fuzz targets of the frontends (plugin/pjrt/stablehlo, plugin/tf/lower)
// end in Run.
package fuzzrun

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/ir"
)

// Limits bound what Run lets a program do.
type Limits struct {
	// Elements is the most elements any one value may hold.
	Elements float64
	// Work is the most element operations (Cost) a run may take.
	Work float64
	// Trips is the most times any one loop may run (Fuel).
	Trips int
	// Timeout is how long a run within the limits above may take before
	// it counts as a hang: far more than Work takes on the host driver,
	// even under the race detector on a busy machine.
	Timeout time.Duration
}

// Default are the limits the fuzz targets use: values up to 8 MiB of
// float64, a run of a second or two at most on the host driver.
var Default = Limits{Elements: 1 << 20, Work: 1 << 24, Trips: 64, Timeout: 30 * time.Second}

// ErrTooCostly is wrapped by Run's error for a program beyond its limits,
// which it did not run.
var ErrTooCostly = errors.New("fuzzrun: program beyond the limits")

// guard is how many bytes past each result must stay untouched.
const guard = 64

// Run compiles p on d and runs it once, after giving every loop its fuel,
// with arguments whose bytes repeat data (zeros when data is empty). It
// returns the compile's or the run's error, which a fuzz target accepts
// (a driver may refuse what a frontend made), or ErrTooCostly. It fails t
// for what is a bug whatever the program: a panic (recovered or not), a
// run past Timeout, a result written beyond its size. p must pass
// ir.Verify: what a failure of that means is the caller's to say.
func Run(t testing.TB, d driver.Driver, p *ir.Program, data []byte, lim Limits) error {
	t.Helper()
	work, largest := Cost(p, lim.Trips)
	if largest > lim.Elements || work > lim.Work {
		return fmt.Errorf("%w: a value of %g elements, %g element operations (limits %g and %g)",
			ErrTooCostly, largest, work, lim.Elements, lim.Work)
	}
	fueled := Fuel(p, lim.Trips)
	if err := ir.Verify(fueled); err != nil {
		t.Fatalf("fuzzrun: the program with fuel for its loops does not verify: %v\n%s", err, fueled)
	}
	exe, err := d.Compile(fueled)
	if err != nil {
		failOnPanic(t, "compile", err, fueled)
		return err
	}
	var args, results []unsafe.Pointer
	var sizes []int
	defer func() {
		for _, m := range append(args, results...) {
			_ = d.Free(m)
		}
	}()
	k := 0
	for _, pt := range fueled.Params {
		m, err := d.Allocate(pt.Bytes())
		if err != nil {
			return err
		}
		buf := unsafe.Slice((*byte)(m), pt.Bytes())
		for i := range buf {
			if len(data) > 0 {
				buf[i] = data[k%len(data)]
				k++
			}
		}
		args = append(args, m)
	}
	for _, rt := range fueled.ResultTypes() {
		m, err := d.Allocate(rt.Bytes() + guard) // zeroed
		if err != nil {
			return err
		}
		results = append(results, m)
		sizes = append(sizes, rt.Bytes())
	}
	s, err := d.NewStream()
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		s.Execute(exe, args, results)
		done <- s.Synchronize()
	}()
	select {
	case err = <-done:
	case <-time.After(lim.Timeout):
		// The stream's goroutine is stuck; failing ends the process
		// before anything frees what it may still touch.
		args, results = nil, nil
		t.Fatalf("fuzzrun: the run took more than %v (estimated %g element operations): a hang\n%s", lim.Timeout, work, fueled)
	}
	_ = s.Close()
	if err != nil {
		failOnPanic(t, "run", err, fueled)
		return err
	}
	for i, m := range results {
		tail := unsafe.Slice((*byte)(unsafe.Add(m, sizes[i])), guard)
		for _, b := range tail {
			if b != 0 {
				t.Fatalf("fuzzrun: result %d (%v) was written past its %d bytes\n%s", i, fueled.ResultTypes()[i], sizes[i], fueled)
			}
		}
	}
	return nil
}

// failOnPanic fails t when err is a panic a driver recovered: the
// drivers' boundaries turn panics into errors so that a process survives
// them, but each one is a missing check.
func failOnPanic(t testing.TB, what string, err error, p *ir.Program) {
	t.Helper()
	if strings.Contains(err.Error(), "panic") {
		t.Fatalf("fuzzrun: %s recovered a panic: %v\n%s", what, err, p)
	}
}

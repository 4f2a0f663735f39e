package split_test

import (
	"sync/atomic"
	"testing"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/driver/drivertest"
	"github.com/metalplug/metalplug/backend/driver/metal"
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/split"
)

// scattered is the model of MPSGraph, but it declines every other
// instruction it could run (besides those Place declines), so that every
// program of the conformance suite with two instructions or more is cut
// into parts: the cut program must compute what the whole one does.
type scattered struct {
	*metal.Driver
}

func (s scattered) Place(p *ir.Program) ([]*driver.Unsupported, error) {
	places, err := s.Driver.Place(p)
	if err != nil {
		return nil, err
	}
	n := 0
	for i, in := range p.Instrs {
		if in.Op == ir.OpParameter || in.Op == ir.OpConstant || in.Op == ir.OpGetResult {
			continue
		}
		if n++; places[i] == nil && n%2 == 0 {
			places[i] = &driver.Unsupported{Instr: i, Op: in.Op, Reason: "declined by the test, to cut the program"}
		}
	}
	return places, nil
}

func (s scattered) Declines(d ir.DType) bool { return s.Driver.Declines(d) }

// TestConformanceCutEverywhere runs the suite every driver passes through
// split with parts declined at random places: every boundary kind (device
// to host and back, values crossing several parts, results written by
// one part and read by the next, loops driven from the host) on every op.
func TestConformanceCutEverywhere(t *testing.T) {
	var cut, parts, loops, multi atomic.Int64
	drivertest.Run(t, func() driver.Driver {
		m, err := metal.OpenModel(metal.ModelOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return counting{Driver: splitNew(scattered{m}), cut: &cut, parts: &parts, loops: &loops, multi: &multi}
	})
	t.Logf("%d programs of two instructions or more", multi.Load())
	t.Logf("%d programs cut, into %d parts (%d loops driven from the host)", cut.Load(), parts.Load(), loops.Load())
	if multi.Load() < 50 || cut.Load() < multi.Load()*8/10 {
		t.Errorf("%d of %d programs of two instructions or more were cut: the test no longer cuts the suite's programs", cut.Load(), multi.Load())
	}
}

// counting counts the programs compiled into more than one part.
type counting struct {
	*split.Driver
	cut, parts, loops, multi *atomic.Int64
}

func (c counting) Compile(p *ir.Program) (driver.Executable, error) {
	e, err := c.Driver.Compile(p)
	nodes := 0
	for _, in := range p.Instrs {
		if in.Op != ir.OpParameter && in.Op != ir.OpConstant && in.Op != ir.OpGetResult {
			nodes++
		}
	}
	if nodes >= 2 {
		c.multi.Add(1)
	}
	if err == nil {
		if segs := e.(*split.Executable).Segments(); len(segs) > 1 {
			c.cut.Add(1)
			c.parts.Add(int64(len(segs)))
			for _, s := range segs {
				if s.Where == "loop" {
					c.loops.Add(1)
				}
			}
		}
	}
	return e, err
}

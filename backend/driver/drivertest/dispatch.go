package drivertest

import (
	"testing"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/ir"
)

// CheckExecuteWaitInline checks a driver's synchronous path: on an idle
// stream, ExecuteWait runs from the caller's thread (no task for the
// stream's goroutine) and waits for the device at most once per run.
func CheckExecuteWaitInline(t *testing.T, d driver.Driver) {
	s := newStream(t, d)
	if _, ok := s.(driver.WaitingExecutor); !ok {
		t.Fatalf("%s streams do not implement driver.WaitingExecutor", d.Name())
	}
	exe := incProgram(t, d)
	a, b := alloc(t, d, 4), alloc(t, d, 4)
	before := driver.Dispatch()
	const runs = 100
	for i := range runs {
		in, out := a, b
		if i%2 == 1 {
			in, out = b, a
		}
		if err := driver.ExecuteWait(s, "inc", exe, []unsafe.Pointer{in}, []unsafe.Pointer{out}); err != nil {
			t.Fatal(err)
		}
	}
	c := driver.Dispatch().Sub(before)
	if got := *(*int32)(a); got != runs {
		t.Errorf("after %d chained increments the value is %d", runs, got)
	}
	if c.Handoffs != 0 || c.Inline != runs || c.Waits > runs {
		t.Errorf("%d runs on an idle stream: %d hand-offs, %d inline, %d waits; want 0, %d, at most %d", runs, c.Handoffs, c.Inline, c.Waits, runs, runs)
	}
}

// BenchmarkDispatch measures what one tiny kernel (a scalar float32 add)
// costs the caller besides its arithmetic, the way a synchronous frontend
// runs it: Execute then Synchronize, and ExecuteWait. Besides time and Go
// allocations it reports hand-offs to a stream's goroutine and waits per
// run, which on a Mac are thread wake-ups and GPU round trips.
func BenchmarkDispatch(b *testing.B, d driver.Driver) {
	bl := ir.NewBuilder()
	f32 := ir.TensorType{DType: ir.F32, Shape: ir.Shape{}}
	p, err := bl.Build(bl.Binary(ir.OpAdd, bl.Parameter(f32), bl.Parameter(f32)))
	if err != nil {
		b.Fatal(err)
	}
	exe, err := d.Compile(p)
	if err != nil {
		b.Fatal(err)
	}
	args, results := make([]unsafe.Pointer, 2), make([]unsafe.Pointer, 1)
	for _, ps := range [][]unsafe.Pointer{args, results} {
		for i := range ps {
			if ps[i], err = d.Allocate(4); err != nil {
				b.Fatal(err)
			}
			defer d.Free(ps[i])
		}
	}
	s, err := d.NewStream()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	measure := func(b *testing.B, run func() error) {
		b.ReportAllocs()
		before := driver.Dispatch()
		for b.Loop() {
			if err := run(); err != nil {
				b.Fatal(err)
			}
		}
		c := driver.Dispatch().Sub(before)
		b.ReportMetric(float64(c.Handoffs)/float64(b.N), "handoffs/op")
		b.ReportMetric(float64(c.Waits)/float64(b.N), "waits/op")
	}
	b.Run("ExecuteSynchronize", func(b *testing.B) {
		measure(b, func() error {
			s.Execute(exe, args, results)
			return s.Synchronize()
		})
	})
	b.Run("ExecuteWait", func(b *testing.B) {
		measure(b, func() error { return driver.ExecuteWait(s, "", exe, args, results) })
	})
}

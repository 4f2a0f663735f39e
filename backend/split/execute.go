package split

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/stats"
)

// stream wraps a device stream: executions of split executables become
// their steps, in order, on it; everything else passes through.
type stream struct {
	d     *Driver
	inner driver.Stream
	c     *stats.Counters
	// dirty is set when device work was enqueued since the host last
	// waited for this stream: the next wait is a real one on a Mac.
	dirty atomic.Bool
}

var _ driver.Stream = (*stream)(nil)

func (d *Driver) newStream(c *stats.Counters) (driver.Stream, error) {
	s, err := d.Driver.NewStream()
	if err != nil {
		return nil, err
	}
	return &stream{d: d, inner: s, c: c}, nil
}

// event counts the waits of the host on it that really wait.
type event struct {
	driver.Event
	c *stats.Counters
}

func (d *Driver) newEvent(c *stats.Counters) driver.Event {
	return &event{Event: d.Driver.NewEvent(), c: c}
}

func (e *event) Wait() error {
	if e.Event.Status() == driver.EventPending {
		e.c.Waited()
	}
	return e.Event.Wait()
}

// OnComplete passes driver.Notifier through; an event that cannot notify
// is waited for by a goroutine of its own.
func (e *event) OnComplete(fn func(error)) {
	if n, ok := e.Event.(driver.Notifier); ok {
		n.OnComplete(fn)
		return
	}
	go func() { fn(e.Event.Wait()) }()
}

// unwrap is the device's own event, which its streams take.
func unwrap(ev driver.Event) driver.Event {
	if e, ok := ev.(*event); ok {
		return e.Event
	}
	return ev
}

func (s *stream) Execute(exe driver.Executable, args, results []unsafe.Pointer) {
	s.ExecuteNamed("", exe, args, results)
}

// ExecuteNamed runs exe's steps on the stream (driver.NamedExecutor).
func (s *stream) ExecuteNamed(name string, exe driver.Executable, args, results []unsafe.Pointer) {
	e, ok := exe.(*Executable)
	if !ok || e.d != s.d {
		s.inner.HostCallback(func() error {
			return fmt.Errorf("%s: execute: executable %T was not compiled by this driver", s.d.Name(), exe)
		})
		return
	}
	s.c.Executed()
	s.run(name, e, args, results)
}

// ExecuteWait runs exe and waits for the stream (driver.WaitingExecutor):
// a program that runs whole on the device goes to the device stream's own
// ExecuteWait, which can run it from the caller's thread.
func (s *stream) ExecuteWait(name string, exe driver.Executable, args, results []unsafe.Pointer) error {
	if e, ok := exe.(*Executable); ok && e.d == s.d && e.direct && e.steps[0].exe != nil && e.steps[0].where == onDevice {
		s.c.Executed()
		s.c.DeviceExecuted(1)
		s.dirty.Store(false)
		s.c.Waited()
		return driver.ExecuteWait(s.inner, name, e.steps[0].exe, args, results)
	}
	if e, ok := exe.(*Executable); ok && e.d == s.d && !e.direct && len(args) == len(e.prog.Params) && len(results) == len(e.prog.Results) {
		// The intermediates between the parts first: a program that does
		// not fit fails its caller alone, before anything is enqueued,
		// and the stream goes on.
		temps, err := e.getTemps()
		if err != nil {
			return err
		}
		s.c.Executed()
		s.runWith(name, e, args, results, temps)
		return s.Synchronize()
	}
	s.ExecuteNamed(name, exe, args, results)
	return s.Synchronize()
}

// run enqueues e's steps.
func (s *stream) run(name string, e *Executable, args, results []unsafe.Pointer) {
	if e.direct {
		// The common case, a program that runs whole on one side: its
		// own arguments and results, no bookkeeping.
		s.step(name, &e.steps[0], args, results)
		return
	}
	if len(args) != len(e.prog.Params) || len(results) != len(e.prog.Results) {
		err := fmt.Errorf("%s: execute: program takes %d arguments and %d results, got %d and %d",
			s.d.Name(), len(e.prog.Params), len(e.prog.Results), len(args), len(results))
		s.inner.HostCallback(func() error { return err })
		return
	}
	temps, err := e.getTemps()
	if err != nil {
		s.inner.HostCallback(func() error { return err })
		return
	}
	s.runWith(name, e, args, results, temps)
}

// runWith enqueues the steps of e, not direct, with its temporaries.
func (s *stream) runWith(name string, e *Executable, args, results, temps []unsafe.Pointer) {
	at := func(o origin) unsafe.Pointer {
		switch o.kind {
		case fromParam:
			return args[o.index]
		case toResult:
			return results[o.index]
		case viaTemp:
			return temps[o.index]
		}
		return e.literals[o.index]
	}
	for i := range e.steps {
		st := &e.steps[i]
		in := make([]unsafe.Pointer, len(st.in))
		for j, o := range st.in {
			in[j] = at(o)
		}
		out := make([]unsafe.Pointer, len(st.out))
		for j, o := range st.out {
			out[j] = at(o)
		}
		switch {
		case st.loop != nil && st.loop.branches != nil:
			s.branch(st.loop, in, out, temps)
			continue
		case st.loop != nil:
			s.loop(st.loop, in, out, temps)
			continue
		}
		s.step(name, st, in, out)
	}
	if len(temps) > 0 {
		// The temporaries go back to the pool once the device is done
		// with this execution, without holding the stream up.
		ev := s.d.Driver.NewEvent()
		s.inner.Record(ev)
		go func() {
			ev.Wait()
			e.putTemps(temps)
		}()
	}
}

// step enqueues one device or host step, or the copy of a result no step
// computes.
func (s *stream) step(name string, st *step, in, out []unsafe.Pointer) {
	switch {
	case st.exe == nil: // a parameter or constant returned as it is
		s.inner.Memcpy(out[0], in[0], st.size)
	case st.where == onDevice:
		s.c.DeviceExecuted(1)
		s.dirty.Store(true)
		driver.Execute(s.inner, name, st.exe, in, out)
	default:
		if s.dirty.Swap(false) {
			s.c.Waited() // the host part waits for the device work before it
		}
		s.c.RanOnHost(st.reason)
		exe, host := st.exe, s.d.host
		s.inner.HostCallback(func() error { return host.Run(exe, in, out) })
	}
}

// loop enqueues a host-driven while: the carried values start as in, and
// out receives the get_results the program uses. A known trip count
// enqueues the body that many times and never waits; otherwise the host
// runs the condition, waits for it and reads it, once per iteration, from
// a host callback on this stream, driving a private device stream.
func (s *stream) loop(lp *loop, in, out []unsafe.Pointer, temps []unsafe.Pointer) {
	a := pick(temps, lp.a)
	b := pick(temps, lp.b)
	if lp.trips >= 0 {
		for k, p := range in {
			s.inner.Memcpy(a[k], p, lp.carried[k].Bytes())
		}
		for range lp.trips {
			s.run("", lp.body, a, b)
			a, b = b, a
		}
		for j, p := range out {
			s.inner.Memcpy(p, a[lp.outs[j]], lp.carried[lp.outs[j]].Bytes())
		}
		return
	}
	if s.dirty.Swap(false) {
		s.c.Waited()
	}
	flag := temps[lp.flag]
	s.inner.HostCallback(func() error {
		ps, err := s.d.privateStream(s.c)
		if err != nil {
			return err
		}
		defer s.d.returnPrivate(ps)
		for k, p := range in {
			copyBytes(a[k], p, lp.carried[k].Bytes())
		}
		cur, next := a, b
		for {
			ps.run("", lp.cond, cur, []unsafe.Pointer{flag})
			if ps.dirty.Swap(false) {
				s.c.Waited()
			}
			if err := ps.inner.Synchronize(); err != nil {
				return err
			}
			if *(*byte)(flag) == 0 {
				break
			}
			ps.run("", lp.body, cur, next)
			cur, next = next, cur
		}
		for j, p := range out {
			copyBytes(p, cur[lp.outs[j]], lp.carried[lp.outs[j]].Bytes())
		}
		return nil
	})
}

// branch enqueues a case driven from the host: after the work before it
// (one wait), a host callback reads the index and runs the branch it
// picks (out of range: the last, StableHLO's rule) on the case's operands,
// driving a private device stream; out receives the results the program
// uses, written in place where it can be.
func (s *stream) branch(lp *loop, in, out []unsafe.Pointer, temps []unsafe.Pointer) {
	if s.dirty.Swap(false) {
		s.c.Waited()
	}
	res := pick(temps, lp.a)
	for j, p := range out {
		if k := lp.outs[j]; res[k] == temps[lp.a[k]] {
			res[k] = p
		}
	}
	s.inner.HostCallback(func() error {
		k := int(*(*int32)(in[0]))
		if k < 0 || k >= len(lp.branches) {
			k = len(lp.branches) - 1
		}
		ps, err := s.d.privateStream(s.c)
		if err != nil {
			return err
		}
		defer s.d.returnPrivate(ps)
		ps.run("", lp.branches[k], in[1:], res)
		if ps.dirty.Swap(false) {
			s.c.Waited()
		}
		if err := ps.inner.Synchronize(); err != nil {
			return err
		}
		for j, p := range out {
			if src := res[lp.outs[j]]; src != p { // a result the program reads twice
				copyBytes(p, src, lp.carried[lp.outs[j]].Bytes())
			}
		}
		return nil
	})
}

func pick(temps []unsafe.Pointer, idx []int) []unsafe.Pointer {
	out := make([]unsafe.Pointer, len(idx))
	for i, k := range idx {
		out[i] = temps[k]
	}
	return out
}

// copyBytes copies between two buffers the host can address (unified
// memory): inside a host callback, after the device work before it.
func copyBytes(dst, src unsafe.Pointer, n int) {
	if n > 0 {
		copy(unsafe.Slice((*byte)(dst), n), unsafe.Slice((*byte)(src), n))
	}
}

// privateStream is an idle device stream for a host-driven loop, which
// runs inside a host callback of its own stream and so cannot enqueue on
// it.
func (d *Driver) privateStream(c *stats.Counters) (*stream, error) {
	d.mu.Lock()
	var inner driver.Stream
	if n := len(d.private); n > 0 {
		inner, d.private = d.private[n-1], d.private[:n-1]
	}
	d.mu.Unlock()
	if inner == nil {
		var err error
		if inner, err = d.Driver.NewStream(); err != nil {
			return nil, fmt.Errorf("%s: a stream for a loop: %w", d.Name(), err)
		}
	}
	return &stream{d: d, inner: inner, c: c}, nil
}

// returnPrivate keeps a loop's stream for the next, or closes a failed one.
func (d *Driver) returnPrivate(s *stream) {
	if s.inner.Synchronize() != nil {
		s.inner.Close()
		return
	}
	d.mu.Lock()
	d.private = append(d.private, s.inner)
	d.mu.Unlock()
}

// getTemps is a set of temporaries for one execution: from the pool, or
// newly allocated from the device.
func (e *Executable) getTemps() ([]unsafe.Pointer, error) {
	select {
	case set := <-e.pool:
		return set, nil
	default:
	}
	set := make([]unsafe.Pointer, len(e.temps))
	for i, t := range e.temps {
		if t.Bytes() == 0 {
			continue
		}
		p, err := e.d.Driver.Allocate(t.Bytes())
		if err != nil {
			freeSet(e.d.Driver, set)
			return nil, fmt.Errorf("%s: execute: an intermediate of %v between parts of the program: %w", e.d.Name(), t, err)
		}
		set[i] = p
	}
	return set, nil
}

// putTemps keeps a set for the next execution, or frees it when the pool
// is full.
func (e *Executable) putTemps(set []unsafe.Pointer) {
	select {
	case e.pool <- set:
	default:
		freeSet(e.d.Driver, set)
	}
}

func freeSet(d driver.Driver, set []unsafe.Pointer) {
	for _, p := range set {
		if p != nil {
			d.Free(p)
		}
	}
}

func (s *stream) Memcpy(dst, src unsafe.Pointer, n int)        { s.inner.Memcpy(dst, src, n) }
func (s *stream) Memset(dst unsafe.Pointer, b byte, n int)     { s.inner.Memset(dst, b, n) }
func (s *stream) Memset32(dst unsafe.Pointer, v uint32, n int) { s.inner.Memset32(dst, v, n) }
func (s *stream) Record(ev driver.Event)                       { s.inner.Record(unwrap(ev)) }
func (s *stream) Wait(ev driver.Event)                         { s.inner.Wait(unwrap(ev)) }

// HostCallback runs fn after the work before it; on a Mac that is a wait
// for the device work enqueued since the last one.
func (s *stream) HostCallback(fn func() error) {
	if s.dirty.Swap(false) {
		s.c.Waited()
	}
	s.inner.HostCallback(fn)
}

func (s *stream) Err() error   { return s.inner.Err() }
func (s *stream) Close() error { return s.inner.Close() }

// Synchronize waits for the stream; it counts as a wait for the device
// when device work was enqueued since the last one.
func (s *stream) Synchronize() error {
	if s.dirty.Swap(false) {
		s.c.Waited()
	}
	return s.inner.Synchronize()
}

package drivertest

import (
	"encoding/binary"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/ir"
)

func testMemory(t *testing.T, d driver.Driver) {
	t.Run("AlignedZeroedDistinct", func(t *testing.T) {
		s := newStream(t, d)
		page := uintptr(os.Getpagesize())
		seen := map[unsafe.Pointer]bool{}
		for _, n := range []int{0, 0, 1, 100, 4097, 1 << 20} {
			p, err := d.Allocate(n)
			if err != nil {
				t.Fatalf("Allocate(%d): %v", n, err)
			}
			defer d.Free(p)
			if uintptr(p)%page != 0 {
				t.Errorf("Allocate(%d) = %p, not aligned to the %d-byte page", n, p, page)
			}
			if seen[p] {
				t.Errorf("Allocate(%d) = %p, an address already handed out", n, p)
			}
			seen[p] = true
			if n == 0 {
				continue
			}
			host := make([]byte, n)
			for i := range host {
				host[i] = 0xff
			}
			s.Memcpy(unsafe.Pointer(&host[0]), p, n)
			if err := s.Synchronize(); err != nil {
				t.Fatal(err)
			}
			for i, b := range host {
				if b != 0 {
					t.Fatalf("Allocate(%d): byte %d is %#x, want zeroed memory", n, i, b)
				}
			}
		}
	})
	t.Run("Free", func(t *testing.T) {
		p, err := d.Allocate(64)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Free(p); err != nil {
			t.Fatalf("Free: %v", err)
		}
		if err := d.Free(p); err == nil {
			t.Errorf("second Free of %p succeeded, want an error", p)
		}
		var local [16]byte
		if err := d.Free(unsafe.Pointer(&local[0])); err == nil {
			t.Errorf("Free of a pointer the driver never returned succeeded, want an error")
		}
	})
	t.Run("OverCapacity", func(t *testing.T) {
		_, total := d.MemoryUsage()
		if total <= 0 {
			t.Fatalf("MemoryUsage total = %d, want a positive capacity", total)
		}
		if p, err := d.Allocate(int(total) + 1); err == nil {
			d.Free(p)
			t.Errorf("Allocate(%d) beyond the capacity %d succeeded", total+1, total)
		}
	})
	t.Run("Usage", func(t *testing.T) {
		u0, _ := d.MemoryUsage()
		const n = 3 << 20
		p, err := d.Allocate(n)
		if err != nil {
			t.Fatal(err)
		}
		u1, _ := d.MemoryUsage()
		if u1-u0 < n {
			t.Errorf("usage grew by %d bytes after allocating %d", u1-u0, n)
		}
		if err := d.Free(p); err != nil {
			t.Fatal(err)
		}
		if u2, _ := d.MemoryUsage(); u2 != u0 {
			t.Errorf("usage is %d after freeing, was %d before allocating", u2, u0)
		}
	})
}

func newStream(t *testing.T, d driver.Driver) driver.Stream {
	t.Helper()
	s, err := d.NewStream()
	if err != nil {
		t.Fatalf("NewStream: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func alloc(t *testing.T, d driver.Driver, n int) unsafe.Pointer {
	t.Helper()
	p, err := d.Allocate(n)
	if err != nil {
		t.Fatalf("Allocate(%d): %v", n, err)
	}
	t.Cleanup(func() { d.Free(p) })
	return p
}

// incProgram adds one to an int32[1].
func incProgram(t *testing.T, d driver.Driver) driver.Executable {
	b := ir.NewBuilder()
	x := b.Parameter(tt(ir.I32, 1))
	p, err := b.Build(b.Binary(ir.OpAdd, x, b.Full(tt(ir.I32, 1), 1)))
	if err != nil {
		t.Fatal(err)
	}
	exe, err := d.Compile(p)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return exe
}

func testStreams(t *testing.T, d driver.Driver) {
	t.Run("OrderOfExecutes", func(t *testing.T) {
		s := newStream(t, d)
		exe := incProgram(t, d)
		a, b := alloc(t, d, 4), alloc(t, d, 4)
		// Each execute reads what the previous one wrote: any reordering
		// loses increments.
		for range 100 {
			s.Execute(exe, []unsafe.Pointer{a}, []unsafe.Pointer{b})
			s.Execute(exe, []unsafe.Pointer{b}, []unsafe.Pointer{a})
		}
		var out int32
		s.Memcpy(unsafe.Pointer(&out), a, 4)
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if out != 200 {
			t.Errorf("after 200 chained increments the value is %d", out)
		}
	})
	t.Run("OrderOfCopies", func(t *testing.T) {
		s := newStream(t, d)
		dev := alloc(t, d, 4)
		host := make([]byte, 4*64)
		for i := range 64 {
			s.Memset32(dev, uint32(i)*0x01010101, 4)
			s.Memcpy(unsafe.Pointer(&host[4*i]), dev, 4)
		}
		s.Memset(dev, 7, 4)
		var last [4]byte
		s.Memcpy(unsafe.Pointer(&last[0]), dev, 4)
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		for i := range 64 {
			if got := binary.LittleEndian.Uint32(host[4*i:]); got != uint32(i)*0x01010101 {
				t.Fatalf("copy %d read %#x, want %#x", i, got, uint32(i)*0x01010101)
			}
		}
		if last != [4]byte{7, 7, 7, 7} {
			t.Errorf("Memset wrote %v", last)
		}
	})
	t.Run("HostCallbackOrder", func(t *testing.T) {
		s := newStream(t, d)
		var mu sync.Mutex
		var order []int
		for i := range 50 {
			s.HostCallback(func() error {
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				return nil
			})
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		for i, v := range order {
			if v != i {
				t.Fatalf("callbacks ran in order %v", order)
			}
		}
		if len(order) != 50 {
			t.Errorf("%d of 50 callbacks ran", len(order))
		}
	})
	t.Run("EnqueueDoesNotBlock", func(t *testing.T) {
		s := newStream(t, d)
		release := make(chan struct{})
		s.HostCallback(func() error { <-release; return nil })
		done := make(chan struct{})
		go func() {
			for range 10000 {
				s.HostCallback(func() error { return nil })
			}
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("enqueueing blocked while the stream was busy")
		}
		close(release)
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("Synchronize", func(t *testing.T) {
		s := newStream(t, d)
		var flag atomic.Bool
		s.HostCallback(func() error {
			time.Sleep(20 * time.Millisecond)
			flag.Store(true)
			return nil
		})
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if !flag.Load() {
			t.Error("Synchronize returned before earlier work ran")
		}
	})
	t.Run("ExecuteWait", func(t *testing.T) {
		s := newStream(t, d)
		exe := incProgram(t, d)
		a, b := alloc(t, d, 4), alloc(t, d, 4)
		for range 50 {
			if err := driver.ExecuteWait(s, "inc", exe, []unsafe.Pointer{a}, []unsafe.Pointer{b}); err != nil {
				t.Fatal(err)
			}
			if err := driver.ExecuteWait(s, "inc", exe, []unsafe.Pointer{b}, []unsafe.Pointer{a}); err != nil {
				t.Fatal(err)
			}
		}
		if got := *(*int32)(a); got != 100 {
			t.Errorf("after 100 chained increments the value is %d", got)
		}
		// Behind queued work the run keeps its place.
		s.HostCallback(func() error {
			time.Sleep(20 * time.Millisecond)
			*(*int32)(a) = 41
			return nil
		})
		if err := driver.ExecuteWait(s, "inc", exe, []unsafe.Pointer{a}, []unsafe.Pointer{b}); err != nil {
			t.Fatal(err)
		}
		if got := *(*int32)(b); got != 42 {
			t.Errorf("a run behind a callback that wrote 41 computed %d, want 42", got)
		}
		// On a failed stream it reports the failure and does not run.
		boom := errors.New("boom")
		s.HostCallback(func() error { return boom })
		if err := s.Synchronize(); !errors.Is(err, boom) {
			t.Fatalf("Synchronize = %v, want the callback's error", err)
		}
		if err := driver.ExecuteWait(s, "inc", exe, []unsafe.Pointer{b}, []unsafe.Pointer{a}); !errors.Is(err, boom) {
			t.Errorf("ExecuteWait on a failed stream = %v, want the callback's error", err)
		}
		if got := *(*int32)(a); got != 41 {
			t.Errorf("a run on a failed stream wrote %d", got)
		}
	})
	t.Run("ReadBackKeepsOrder", func(t *testing.T) {
		// A read-back right after a program sees that program's result,
		// not a later one's, and an event recorded after it completes
		// only once the copy is done.
		s := newStream(t, d)
		exe := incProgram(t, d)
		a, b, c := alloc(t, d, 4), alloc(t, d, 4), alloc(t, d, 4)
		for i := range int32(50) {
			*(*int32)(a) = 10 * i
			*(*int32)(c) = -1
			var got int32
			ev := d.NewEvent()
			s.Execute(exe, []unsafe.Pointer{a}, []unsafe.Pointer{b}) // b = 10i+1
			s.Memcpy(unsafe.Pointer(&got), b, 4)
			s.Record(ev)
			s.Execute(exe, []unsafe.Pointer{c}, []unsafe.Pointer{b}) // b = 0
			if err := ev.Wait(); err != nil {
				t.Fatal(err)
			}
			if got != 10*i+1 {
				t.Fatalf("round %d: the read-back saw %d, want %d", i, got, 10*i+1)
			}
			if err := s.Synchronize(); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("ErrorFailsStream", func(t *testing.T) {
		s := newStream(t, d)
		boom := errors.New("boom")
		ev := d.NewEvent()
		var after atomic.Bool
		s.HostCallback(func() error { return boom })
		s.HostCallback(func() error { after.Store(true); return nil })
		s.Record(ev)
		err := s.Synchronize()
		if !errors.Is(err, boom) {
			t.Errorf("Synchronize = %v, want the callback's error", err)
		}
		if !errors.Is(s.Err(), boom) {
			t.Errorf("Err = %v, want the callback's error", s.Err())
		}
		if after.Load() {
			t.Error("work after the failure ran")
		}
		if st := ev.Status(); st != driver.EventError {
			t.Errorf("event recorded after the failure has status %v, want EventError", st)
		}
		if err := ev.Wait(); err == nil {
			t.Error("Wait on an event of a failed stream returned nil")
		}
	})
	t.Run("Close", func(t *testing.T) {
		s, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		var ran atomic.Bool
		s.HostCallback(func() error {
			time.Sleep(10 * time.Millisecond)
			ran.Store(true)
			return nil
		})
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if !ran.Load() {
			t.Error("Close did not drain the queue")
		}
		// A closed stream must not crash its user.
		var x [4]byte
		s.Memset(unsafe.Pointer(&x[0]), 1, 4)
		s.HostCallback(func() error { return nil })
		s.Record(d.NewEvent())
		if s.Err() == nil {
			t.Error("Err on a closed stream is nil")
		}
		s.Synchronize()
		s.Close()
	})
}

func testEvents(t *testing.T, d driver.Driver) {
	t.Run("NeverRecorded", func(t *testing.T) {
		ev := d.NewEvent()
		if st := ev.Status(); st != driver.EventComplete {
			t.Errorf("Status = %v, want EventComplete", st)
		}
		if err := ev.Wait(); err != nil {
			t.Errorf("Wait = %v", err)
		}
		s := newStream(t, d)
		s.Wait(ev)
		if err := s.Synchronize(); err != nil {
			t.Errorf("stream waiting on a never-recorded event: %v", err)
		}
	})
	t.Run("PendingThenComplete", func(t *testing.T) {
		s := newStream(t, d)
		ev := d.NewEvent()
		release := make(chan struct{})
		s.HostCallback(func() error { <-release; return nil })
		s.Record(ev)
		if st := ev.Status(); st != driver.EventPending {
			t.Errorf("Status before the stream reaches the record = %v, want EventPending", st)
		}
		close(release)
		if err := ev.Wait(); err != nil {
			t.Fatal(err)
		}
		if st := ev.Status(); st != driver.EventComplete {
			t.Errorf("Status after Wait = %v, want EventComplete", st)
		}
	})
	t.Run("CrossStream", func(t *testing.T) {
		a, b := newStream(t, d), newStream(t, d)
		buf := alloc(t, d, 4)
		ev := d.NewEvent()
		a.HostCallback(func() error { time.Sleep(20 * time.Millisecond); return nil })
		a.Memset32(buf, 7, 4)
		a.Record(ev)
		b.Wait(ev)
		var got uint32
		b.Memcpy(unsafe.Pointer(&got), buf, 4)
		if err := b.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if got != 7 {
			t.Errorf("stream B read %d, want 7 written by stream A before the event", got)
		}
	})
	t.Run("WaitHoldsTheRecordItFollows", func(t *testing.T) {
		// B waits for A's record; C then re-records the event. B must
		// proceed when A gets there, whatever C is doing.
		a, b, c := newStream(t, d), newStream(t, d), newStream(t, d)
		ev := d.NewEvent()
		gateA, gateC := make(chan struct{}), make(chan struct{})
		defer close(gateC)
		a.HostCallback(func() error { <-gateA; return nil })
		a.Record(ev)
		b.Wait(ev)
		var bDone atomic.Bool
		b.HostCallback(func() error { bDone.Store(true); return nil })
		c.HostCallback(func() error { <-gateC; return nil })
		c.Record(ev)
		close(gateA)
		synced := make(chan error, 1)
		go func() { synced <- b.Synchronize() }()
		select {
		case err := <-synced:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("stream B waited for a record made after its Wait")
		}
		if !bDone.Load() {
			t.Error("B's work did not run")
		}
		if st := ev.Status(); st != driver.EventPending {
			t.Errorf("Status = %v, want EventPending: the latest record (on C) is not reached", st)
		}
	})
}

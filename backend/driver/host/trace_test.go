package host

import (
	"testing"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/ir"
)

// TestTrace: while a trace is on, the stream records each named program
// and each copy, in the order they ran, not overlapping, with the copy's
// direction; before and after, nothing.
func TestTrace(t *testing.T) {
	d := New(Options{})
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := ir.NewBuilder()
	tt := ir.TensorType{DType: ir.F32, Shape: ir.Shape{1024}}
	x := b.Parameter(tt)
	p, err := b.Build(b.Unary(ir.OpTanh, x))
	if err != nil {
		t.Fatal(err)
	}
	exe, err := d.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	buf, err := d.Allocate(2 * tt.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(buf)
	in, out := buf, unsafe.Add(buf, tt.Bytes())
	host := make([]byte, tt.Bytes())
	run := func(name string) {
		s.Memcpy(in, unsafe.Pointer(&host[0]), len(host))
		driver.Execute(s, name, exe, []unsafe.Pointer{in}, []unsafe.Pointer{out})
		s.Memcpy(unsafe.Pointer(&host[0]), out, len(host))
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
	}
	run("before")
	driver.StartTrace()
	run("t/Tanh:Tanh")
	run("t/Tanh:Tanh")
	driver.StopTrace()
	run("after")
	events := driver.TakeTrace()
	want := []string{"MemcpyHostToDevice", "t/Tanh:Tanh", "MemcpyDeviceToHost", "MemcpyHostToDevice", "t/Tanh:Tanh", "MemcpyDeviceToHost"}
	if len(events) != len(want) {
		t.Fatalf("%d events, want %d: %v", len(events), len(want), events)
	}
	for i, e := range events {
		if e.Name != want[i] || e.Stream != s.(*stream).id || e.End.Before(e.Start) {
			t.Errorf("event %d: %+v, want %s on stream %d", i, e, want[i], s.(*stream).id)
		}
		if i > 0 && e.Start.Before(events[i-1].End) {
			t.Errorf("event %d starts before event %d ends", i, i-1)
		}
	}
	if len(driver.TakeTrace()) != 0 {
		t.Error("TakeTrace kept events")
	}
}

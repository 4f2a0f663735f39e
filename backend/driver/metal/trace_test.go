package metal

import (
	"testing"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
)

// TestTrace: a named program's event carries the command buffer's own
// times (the model's run; a Mac's GPUStartTime and GPUEndTime), copies
// their direction, and nothing is recorded outside a trace.
func TestTrace(t *testing.T) {
	d := open(t, Options{})
	exe := addOne(t, d, 256)
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	buf, err := d.Allocate(2048)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(buf)
	host := make([]byte, 1024)
	run := func(name string) {
		s.Memcpy(buf, unsafe.Pointer(&host[0]), 1024)
		driver.Execute(s, name, exe, []unsafe.Pointer{buf}, []unsafe.Pointer{unsafe.Add(buf, 1024)})
		s.Memcpy(unsafe.Pointer(&host[0]), unsafe.Add(buf, 1024), 1024)
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
	}
	run("before")
	driver.StartTrace()
	run("add/AddV2:AddV2")
	driver.StopTrace()
	run("after")
	events := driver.TakeTrace()
	want := []string{"MemcpyHostToDevice", "add/AddV2:AddV2", "MemcpyDeviceToHost"}
	if len(events) != len(want) {
		t.Fatalf("events %+v, want %v", events, want)
	}
	for i, e := range events {
		if e.Name != want[i] || e.Stream != s.(*stream).id || e.Start.IsZero() || e.End.Before(e.Start) {
			t.Errorf("event %d: %+v, want %s", i, e, want[i])
		}
		if i > 0 && e.Start.Before(events[i-1].End) {
			t.Errorf("event %d starts before event %d ends", i, i-1)
		}
	}
	if events[1].Kind != driver.TraceKernel || events[0].Kind != driver.TraceCopy {
		t.Errorf("kinds %v, %v", events[1].Kind, events[0].Kind)
	}
}

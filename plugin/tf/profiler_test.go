package tf

import (
	"testing"
	"time"

	"github.com/metalplug/metalplug/backend/driver"
)

// TestTraceSpace: the trace as an XPlane: one line per stream, events in
// time order at their offsets from the line's first, metadata named by what
// ran and shared between runs of the same name.
func TestTraceSpace(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	at := func(us int) time.Time { return t0.Add(time.Duration(us) * time.Microsecond) }
	events := []driver.TraceEvent{
		{Stream: 2, Kind: driver.TraceCopy, Name: "MemcpyHostToDevice", Start: at(5), End: at(6)},
		{Stream: 1, Kind: driver.TraceKernel, Name: "dense/MatMul:MatMul", Start: at(0), End: at(3)},
		{Stream: 1, Kind: driver.TraceKernel, Name: "dense/MatMul:MatMul", Start: at(4), End: at(7)},
		{Stream: 1, Kind: driver.TraceKernel, Name: "", Start: at(8), End: at(8)},
	}
	space := traceSpace("METALPLUG_HOST", events)
	if len(space.Planes) != 1 || space.Planes[0].Name != "/device:METALPLUG_HOST:0" {
		t.Fatalf("planes %v", space.Planes)
	}
	p := space.Planes[0]
	if len(p.Lines) != 2 || p.Lines[0].Id != 1 || p.Lines[1].Id != 2 || p.Lines[0].TimestampNs != t0.UnixNano() {
		t.Fatalf("lines %v", p.Lines)
	}
	l := p.Lines[0]
	var names []string
	for _, e := range l.Events {
		names = append(names, p.EventMetadata[e.MetadataId].Name)
	}
	if len(l.Events) != 3 || names[0] != "dense/MatMul:MatMul" || names[1] != names[0] || names[2] != "program" ||
		l.Events[0].MetadataId != l.Events[1].MetadataId {
		t.Fatalf("events %v named %v", l.Events, names)
	}
	if l.Events[1].GetOffsetPs() != 4_000_000 || l.Events[1].DurationPs != 3_000_000 || l.Events[2].DurationPs != 1000 {
		t.Errorf("times: offset %d ps, duration %d ps; a zero-length run %d ps", l.Events[1].GetOffsetPs(), l.Events[1].DurationPs, l.Events[2].DurationPs)
	}
}

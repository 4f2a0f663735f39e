package statsapi

import (
	"encoding/json"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/stats"
	"github.com/metalplug/metalplug/plugin/device"
)

var sink [][]byte

// The report carries every frontend's figures and the process's dispatch
// costs, which move with the work done.
func TestSnapshot(t *testing.T) {
	before := snapshot()
	for range 100 {
		sink = append(sink, make([]byte, 64))
	}
	stats.TensorFlow.Executed()
	after := snapshot()
	js, err := json.Marshal(after)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Driver    string                   `json:"driver"`
		Frontends map[string]stats.Figures `json:"frontends"`
		Process   map[string]int64         `json:"process"`
	}
	if err := json.Unmarshal(js, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Frontends) != 3 || r.Frontends["tensorflow"].Executions < 1 {
		t.Errorf("frontends %+v", r.Frontends)
	}
	for _, k := range []string{"go_allocations", "cgo_calls", "handoffs", "inline", "driver_waits"} {
		if _, ok := r.Process[k]; !ok {
			t.Errorf("no process figure %q in %s", k, js)
		}
	}
	if got := after.Process.GoAllocations - before.Process.GoAllocations; got < 100 {
		t.Errorf("100 allocations counted as %d", got)
	}
}

// The report carries the driver's memory in use and its compiled programs,
// which move with allocations and compiles.
func TestSnapshotMemory(t *testing.T) {
	t.Setenv("METALPLUG_HOST_DEVICE", "1") // read through C's getenv, which Setenv reaches under cgo
	d, _, why := device.Driver()
	if d == nil {
		t.Fatalf("no driver: %s", why)
	}
	before := snapshot().Memory
	p, err := d.Allocate(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(p)
	b := ir.NewBuilder()
	x := b.Parameter(ir.TensorType{DType: ir.F32, Shape: ir.Shape{3, 5}})
	prog, err := b.Build(b.Binary(ir.OpMul, x, x))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Compile(prog); err != nil {
		t.Fatal(err)
	}
	m := snapshot().Memory
	if m.TotalBytes <= 0 || m.UsedBytes-before.UsedBytes < 1<<20 || m.UsedBytes > m.TotalBytes {
		t.Errorf("memory %+v after allocating 1 MiB (before %+v)", m, before)
	}
	if m.CachedExecutables < before.CachedExecutables+1 {
		t.Errorf("%d cached executables after a compile, %d before", m.CachedExecutables, before.CachedExecutables)
	}
}

package statsapi

import (
	"encoding/json"
	"testing"

	"github.com/metalplug/metalplug/backend/stats"
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

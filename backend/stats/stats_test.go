package stats

import (
	"encoding/json"
	"testing"
)

func TestSnapshotAndSub(t *testing.T) {
	c := &Counters{name: "test"}
	before := c.Snapshot()
	c.Executed()
	c.Compiled()
	c.DeviceExecuted(3)
	c.Waited()
	c.RanOnHost("cholesky: a decomposition")
	c.RanOnHost("cholesky: a decomposition")
	d := c.Snapshot().Sub(before)
	if d.Executions != 1 || d.Compiles != 1 || d.DeviceExecutions != 3 || d.Waits != 1 || d.HostSegments != 2 ||
		d.HostReasons["cholesky: a decomposition"] != 2 || len(d.HostReasons) != 1 {
		t.Errorf("delta %+v", d)
	}
}

func TestSnapshotReport(t *testing.T) {
	JAX.Executed()
	var r Report
	js, err := json.Marshal(Snapshot("metal-model"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, &r); err != nil {
		t.Fatal(err)
	}
	if r.Driver != "metal-model" || r.Frontends["jax"].Executions < 1 || len(r.Frontends) != 3 {
		t.Errorf("report %+v", r)
	}
	if _, ok := r.Frontends["tensorflow"]; !ok {
		t.Error("no tensorflow figures")
	}
}

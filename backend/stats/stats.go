// Package stats counts, per frontend, what decides speed on a Mac: programs
// run, programs compiled, executions on the device (one MPSGraph dispatch
// each on Metal), parts run on the host with their reasons, and the times
// the host waited for the device. backend/split counts; the frontends pick
// the counters their work goes to; metalplug.stats() in Python reads them
// through the library's metalplug_stats export, as JSON.
package stats

import (
	"maps"
	"sync"
	"sync/atomic"
)

// Counters are one frontend's figures since the process started. The zero
// value is ready; every method is safe for concurrent use.
type Counters struct {
	name string

	executions       atomic.Int64
	compiles         atomic.Int64
	deviceExecutions atomic.Int64
	hostSegments     atomic.Int64
	waits            atomic.Int64
	outputBytes      atomic.Int64

	mu      sync.Mutex
	reasons map[string]int64 // host segments run, by reason
}

// The frontends' counters; Other takes what no frontend attributed (tests
// that drive a driver directly).
var (
	TensorFlow = &Counters{name: "tensorflow"}
	JAX        = &Counters{name: "jax"}
	Other      = &Counters{name: "other"}
)

var all = []*Counters{TensorFlow, JAX, Other}

// Executed counts one program run.
func (c *Counters) Executed() { c.executions.Add(1) }

// Compiled counts one program compiled for the device (a cache miss).
func (c *Counters) Compiled() { c.compiles.Add(1) }

// DeviceExecuted counts n executions on the device.
func (c *Counters) DeviceExecuted(n int) { c.deviceExecutions.Add(int64(n)) }

// Waited counts one wait of the host for the device.
func (c *Counters) Waited() { c.waits.Add(1) }

// AllocatedOutput counts the bytes of one output a frontend had allocated
// on the device for a program's result: for TensorFlow, the tensors its
// kernels hand each other, which a cluster keeps inside its program.
func (c *Counters) AllocatedOutput(bytes int) { c.outputBytes.Add(int64(bytes)) }

// RanOnHost counts one part of a program run on the host, and why.
func (c *Counters) RanOnHost(reason string) {
	c.hostSegments.Add(1)
	c.mu.Lock()
	if c.reasons == nil {
		c.reasons = map[string]int64{}
	}
	c.reasons[reason]++
	c.mu.Unlock()
}

// Figures are a snapshot of one frontend's counters.
type Figures struct {
	Executions       int64            `json:"executions"`
	Compiles         int64            `json:"compiles"`
	DeviceExecutions int64            `json:"device_executions"`
	HostSegments     int64            `json:"host_segments"`
	Waits            int64            `json:"waits"`
	OutputBytes      int64            `json:"output_bytes"`
	HostReasons      map[string]int64 `json:"host_reasons"`
}

// Sub is f minus an earlier snapshot g: what happened in between.
func (f Figures) Sub(g Figures) Figures {
	d := Figures{
		Executions:       f.Executions - g.Executions,
		Compiles:         f.Compiles - g.Compiles,
		DeviceExecutions: f.DeviceExecutions - g.DeviceExecutions,
		HostSegments:     f.HostSegments - g.HostSegments,
		Waits:            f.Waits - g.Waits,
		OutputBytes:      f.OutputBytes - g.OutputBytes,
		HostReasons:      map[string]int64{},
	}
	for r, n := range f.HostReasons {
		if n -= g.HostReasons[r]; n != 0 {
			d.HostReasons[r] = n
		}
	}
	return d
}

// Snapshot reads the counters. The fields are read one after another, so a
// snapshot taken while work runs may be a few counts apart between fields.
func (c *Counters) Snapshot() Figures {
	c.mu.Lock()
	reasons := maps.Clone(c.reasons)
	c.mu.Unlock()
	if reasons == nil {
		reasons = map[string]int64{}
	}
	return Figures{
		Executions:       c.executions.Load(),
		Compiles:         c.compiles.Load(),
		DeviceExecutions: c.deviceExecutions.Load(),
		HostSegments:     c.hostSegments.Load(),
		Waits:            c.waits.Load(),
		OutputBytes:      c.outputBytes.Load(),
		HostReasons:      reasons,
	}
}

// Report is every frontend's figures, by name, with the driver that backs
// the device.
type Report struct {
	Driver    string             `json:"driver"`
	Frontends map[string]Figures `json:"frontends"`
}

// Snapshot reads every frontend's counters.
func Snapshot(driverName string) Report {
	r := Report{Driver: driverName, Frontends: map[string]Figures{}}
	for _, c := range all {
		r.Frontends[c.name] = c.Snapshot()
	}
	return r
}

// Package device picks the one driver that backs the device for every
// frontend in the process: TensorFlow's and JAX's share it (one memory
// pool, one set of streams' worth of threads), whichever asks first.
package device

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/driver/host"
	"github.com/metalplug/metalplug/plugin/cenv"
)

// Kind says which driver backs the device.
type Kind int

const (
	None  Kind = iota // no device is offered
	Host              // the host reference driver (pure Go, the CPU)
	Metal             // the Metal driver (Apple silicon)
)

var chosen struct {
	once sync.Once
	d    driver.Driver
	kind Kind
	why  string
}

// Driver is the process's driver and its kind, chosen once from the
// settings of the process start: off macOS the host reference driver when
// METALPLUG_HOST_DEVICE=1 asks for it, on macOS the Metal driver (or the host
// driver, asked for the same way, for comparing the two). With no driver,
// why says what to do.
func Driver() (d driver.Driver, kind Kind, why string) {
	chosen.once.Do(func() { chosen.d, chosen.kind, chosen.why = choose() })
	return chosen.d, chosen.kind, chosen.why
}

// hostDriver makes the host reference driver: METALPLUG_HOST_MEMORY_MB caps
// its memory; METALPLUG_HOST_STREAM_DELAY_US (a test hook) delays every
// stream operation.
func hostDriver() (driver.Driver, Kind, string) {
	var mem int64
	if s := cenv.Get("METALPLUG_HOST_MEMORY_MB"); s != "" {
		mb, err := strconv.ParseInt(s, 10, 64)
		if err != nil || mb <= 0 {
			return nil, None, "METALPLUG_HOST_MEMORY_MB=" + s + " is not a positive number of MiB: offering no device"
		}
		mem = mb << 20
	}
	var delay time.Duration
	if s := cenv.Get("METALPLUG_HOST_STREAM_DELAY_US"); s != "" {
		us, err := strconv.ParseInt(s, 10, 64)
		if err != nil || us < 0 {
			return nil, None, "METALPLUG_HOST_STREAM_DELAY_US=" + s + " is not a non-negative number of microseconds: offering no device"
		}
		fmt.Fprintf(os.Stderr, "metalplug: test hook: each host stream operation waits %d µs first (METALPLUG_HOST_STREAM_DELAY_US)\n", us)
		delay = time.Duration(us) * time.Microsecond
	}
	return host.New(host.Options{MemoryBytes: mem, StreamDelay: delay}), Host, ""
}

// Package device picks the one driver that backs the device for every
// frontend in the process: TensorFlow's and JAX's share it (one memory
// pool, one set of streams' worth of threads), whichever asks first.
package device

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/driver/host"
	"github.com/metalplug/metalplug/backend/driver/metal"
	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
	"github.com/metalplug/metalplug/backend/split"
	"github.com/metalplug/metalplug/backend/stats"
	"github.com/metalplug/metalplug/plugin/cenv"
)

// Kind says which driver backs the device.
type Kind int

const (
	None       Kind = iota // no device is offered
	Host                   // the host reference driver (pure Go, the CPU)
	Metal                  // the Metal driver (Apple silicon)
	MetalModel             // the Metal driver on the model of MPSGraph (the CPU; for tests)
)

var chosen struct {
	once sync.Once
	d    *split.Driver
	kind Kind
	why  string
}

// Driver is the process's driver and its kind, chosen once from the
// settings of the process start: off macOS the host reference driver when
// METALPLUG_HOST_DEVICE=1 asks for it, on macOS the Metal driver (or the host
// driver, asked for the same way, for comparing the two). With
// METALPLUG_HOST_DEVICE=1, METALPLUG_DRIVER=metal-model picks instead the
// Metal driver on the model of MPSGraph, on any OS. With no driver, why
// says what to do.
//
// The driver is wrapped by backend/split, which runs on the host what the
// device does not (on Metal; the host driver runs everything itself) and
// counts what ran where: For gives a frontend the view that counts its work.
func Driver() (d driver.Driver, kind Kind, why string) {
	return For(stats.Other)
}

// For is Driver as one frontend uses it: its work is counted in c.
func For(c *stats.Counters) (d driver.Driver, kind Kind, why string) {
	chosen.once.Do(func() {
		var dev driver.Driver
		dev, chosen.kind, chosen.why = choose()
		if dev != nil {
			var hostDrv *host.Driver
			if chosen.kind == Metal || chosen.kind == MetalModel {
				hostDrv = host.New(host.Options{MemoryBytes: 1 << 62}) // the memory is the device's
			}
			chosen.d = split.New(dev, hostDrv, SplitOptions())
			chosenDriver.Store(chosen.d)
		}
	})
	if chosen.d == nil {
		return nil, chosen.kind, chosen.why
	}
	return chosen.d.For(c), chosen.kind, chosen.why
}

// Chosen is the name of the driver that backs the device ("host", "metal"
// or "metal-model"), or "" while no frontend has asked for one or when
// there is none; it never chooses one itself.
func Chosen() string {
	if d := chosenDriver.Load(); d != nil {
		return d.Name()
	}
	return ""
}

var chosenDriver atomic.Pointer[split.Driver]

// Usage is the chosen driver's memory in use and capacity, and the
// compiled programs it keeps; ok is false while none is chosen.
func Usage() (used, total int64, executables int, ok bool) {
	d := chosenDriver.Load()
	if d == nil {
		return 0, 0, 0, false
	}
	used, total = d.MemoryUsage()
	return used, total, d.CachedExecutables(), true
}

// hostSide is the driver METALPLUG_HOST_DEVICE=1 asks for: the host
// reference driver, or with METALPLUG_DRIVER=metal-model the Metal driver
// on the model of MPSGraph (METALPLUG_MODEL_MACOS=13.0, say, models an older
// release).
func hostSide() (driver.Driver, Kind, string) {
	switch v := cenv.Get("METALPLUG_DRIVER"); v {
	case "", "host":
		return hostDriver()
	case "metal-model":
		opts := metal.ModelOptions{Options: MetalOptions()}
		mem, why := memoryCap()
		if why != "" {
			return nil, None, why
		}
		opts.MemoryBytes = mem
		if s := cenv.Get("METALPLUG_MODEL_MACOS"); s != "" {
			var maj, min int
			if n, err := fmt.Sscanf(s, "%d.%d", &maj, &min); n != 2 || err != nil {
				return nil, None, "METALPLUG_MODEL_MACOS=" + s + " is not a macOS release such as 14.0: offering no device"
			}
			opts.MacOS = gpu.Version{Major: maj, Minor: min}
		}
		m, err := metal.OpenModel(opts)
		if err != nil {
			return nil, None, "the MPSGraph model: " + err.Error() + ": offering no device"
		}
		return m, MetalModel, ""
	default:
		return nil, None, "METALPLUG_DRIVER=" + v + " is not a driver: use host or metal-model; offering no device"
	}
}

// MetalOptions are the Metal driver's settings.
func MetalOptions() metal.Options { return metal.Options{} }

// SplitOptions are the settings of running parts of programs on the host:
// METALPLUG_NO_CPU_FALLBACK=1 makes a program that needs the host (an op or
// case the lowering does not express in MPSGraph, or a decomposition) an
// error instead, for sweeping what the lowering itself runs, and
// METALPLUG_NO_CPU_FALLBACK=unplanned does so but for the ops whose home is
// the host (decompositions, callbacks); METALPLUG_DEBUG=1 logs each
// program's parts once. A part that leaves the GPU for want of a lowering
// is said on stderr once per op and reason, whatever the settings.
func SplitOptions() split.Options {
	say := func(msg string) { fmt.Fprintf(os.Stderr, "metalplug: %s\n", msg) }
	o := split.Options{Warn: say}
	switch v := cenv.Get("METALPLUG_NO_CPU_FALLBACK"); v {
	case "", "0":
	case "1":
		o.Host = split.NoHostPart
	case "unplanned":
		o.Host = split.PlannedOnly
	default:
		say("METALPLUG_NO_CPU_FALLBACK=" + v + " is not a setting (1: no part of a program on the CPU; unplanned: only the decompositions and callbacks); taking 1")
		o.Host = split.NoHostPart
	}
	if cenv.Get("METALPLUG_DEBUG") == "1" {
		o.Debug = say
	}
	return o
}

// memoryCap is METALPLUG_HOST_MEMORY_MB in bytes (0 when unset), which caps
// the memory of the drivers METALPLUG_HOST_DEVICE=1 offers.
func memoryCap() (int64, string) {
	s := cenv.Get("METALPLUG_HOST_MEMORY_MB")
	if s == "" {
		return 0, ""
	}
	mb, err := strconv.ParseInt(s, 10, 64)
	if err != nil || mb <= 0 {
		return 0, "METALPLUG_HOST_MEMORY_MB=" + s + " is not a positive number of MiB: offering no device"
	}
	return mb << 20, ""
}

// hostDriver makes the host reference driver: METALPLUG_HOST_MEMORY_MB caps
// its memory; METALPLUG_HOST_STREAM_DELAY_US (a test hook) delays every
// stream operation.
func hostDriver() (driver.Driver, Kind, string) {
	mem, why := memoryCap()
	if why != "" {
		return nil, None, why
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

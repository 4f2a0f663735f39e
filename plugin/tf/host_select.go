package tf

import (
	"strconv"
	"time"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/driver/host"
	"github.com/metalplug/metalplug/plugin/cenv"
)

// Names of the host reference driver's device. TensorFlow requires
// [A-Z][A-Z_]*; a type of its own keeps it from shadowing a real GPU.
const (
	hostDeviceType = "METALPLUG_HOST"
	hostPlatform   = "METALPLUG_HOST_REFERENCE"
)

// hostDriver makes the host reference driver with its device names.
func hostDriver() (d driver.Driver, deviceType, platform, why string) {
	var mem int64
	if s := cenv.Get("METALPLUG_HOST_MEMORY_MB"); s != "" {
		mb, err := strconv.ParseInt(s, 10, 64)
		if err != nil || mb <= 0 {
			return nil, "", "", "METALPLUG_HOST_MEMORY_MB=" + s + " is not a positive number of MiB: offering no device"
		}
		mem = mb << 20
	}
	// Test hook: every host stream operation waits this long before it
	// runs (host.Options.StreamDelay).
	var delay time.Duration
	if s := cenv.Get("METALPLUG_HOST_STREAM_DELAY_US"); s != "" {
		us, err := strconv.ParseInt(s, 10, 64)
		if err != nil || us < 0 {
			return nil, "", "", "METALPLUG_HOST_STREAM_DELAY_US=" + s + " is not a non-negative number of microseconds: offering no device"
		}
		logf("test hook: each host stream operation waits %d µs first (METALPLUG_HOST_STREAM_DELAY_US)", us)
		delay = time.Duration(us) * time.Microsecond
	}
	d = host.New(host.Options{MemoryBytes: mem, StreamDelay: delay})
	return d, hostDeviceType, hostPlatform, ""
}

func debug() bool { return cenv.Get("METALPLUG_DEBUG") == "1" }

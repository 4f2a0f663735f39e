package tf

import (
	"os"
	"strconv"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/driver/host"
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
	if s := os.Getenv("METALPLUG_HOST_MEMORY_MB"); s != "" {
		mb, err := strconv.ParseInt(s, 10, 64)
		if err != nil || mb <= 0 {
			return nil, "", "", "METALPLUG_HOST_MEMORY_MB=" + s + " is not a positive number of MiB: offering no device"
		}
		mem = mb << 20
	}
	return host.New(host.Options{MemoryBytes: mem}), hostDeviceType, hostPlatform, ""
}

func debug() bool { return os.Getenv("METALPLUG_DEBUG") == "1" }

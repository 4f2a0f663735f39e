//go:build darwin

package device

import (
	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/driver/metal"
	"github.com/metalplug/metalplug/plugin/cenv"
)

// choose picks the Metal driver; METALPLUG_HOST_DEVICE=1 picks the host
// reference driver instead, for comparing the two.
func choose() (driver.Driver, Kind, string) {
	if cenv.Get("METALPLUG_HOST_DEVICE") == "1" {
		return hostSide()
	}
	m, err := metal.Open(MetalOptions())
	if err != nil {
		return nil, None, "no Metal device: " + err.Error() + "; offering no device"
	}
	return m, Metal, ""
}

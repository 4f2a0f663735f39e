//go:build !darwin

package device

import (
	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/plugin/cenv"
)

// choose: off macOS there is no Metal, only the host reference driver, and
// only when asked for.
func choose() (driver.Driver, Kind, string) {
	if cenv.Get("METALPLUG_HOST_DEVICE") != "1" {
		return nil, None, "no device offered: set METALPLUG_HOST_DEVICE=1 to use the host reference driver (the Metal driver runs on Apple silicon only)"
	}
	return hostSide()
}

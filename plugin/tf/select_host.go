//go:build !darwin

package tf

import (
	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/plugin/cenv"
)

// selectDriver picks the driver that backs the device. Off macOS there is no
// Metal: the host reference driver, when METALPLUG_HOST_DEVICE=1 asks for it.
func selectDriver() (d driver.Driver, deviceType, platform, why string) {
	if cenv.Get("METALPLUG_HOST_DEVICE") != "1" {
		return nil, "", "", "no device offered: set METALPLUG_HOST_DEVICE=1 to use the host reference driver (the Metal driver runs on Apple silicon only)"
	}
	return hostDriver()
}

//go:build darwin

package tf

import (
	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/driver/metal"
	"github.com/metalplug/metalplug/plugin/cenv"
)

// On macOS the device is the GPU: TensorFlow's macOS wheels carry no GPU
// kernels of their own, so the type "GPU" collides with nothing, and Keras
// and tf.* code written for a GPU runs unchanged.
const (
	metalDeviceType = "GPU"
	metalPlatform   = "METAL"
)

// selectDriver picks the Metal driver; METALPLUG_HOST_DEVICE=1 picks the host
// reference driver instead (its own device type), for comparing the two.
func selectDriver() (d driver.Driver, deviceType, platform, why string) {
	if cenv.Get("METALPLUG_HOST_DEVICE") == "1" {
		return hostDriver()
	}
	m, err := metal.Open(metal.Options{})
	if err != nil {
		return nil, "", "", "no Metal device: " + err.Error() + "; offering no device"
	}
	return m, metalDeviceType, metalPlatform, ""
}

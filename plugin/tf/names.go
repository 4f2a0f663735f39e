package tf

import (
	"github.com/metalplug/metalplug/plugin/cenv"
	"github.com/metalplug/metalplug/plugin/device"
)

// deviceNames are the device type and platform TensorFlow sees for the
// driver's kind. On macOS the Metal device is the GPU: TensorFlow's macOS
// wheels carry no GPU kernels of their own, so the type "GPU" collides with
// nothing, and Keras and tf.* code written for a GPU runs unchanged. The
// host reference driver has a type of its own (TensorFlow requires
// [A-Z][A-Z_]*), so it never shadows or collides with a real GPU.
func deviceNames(k device.Kind) (deviceType, platform string) {
	if k == device.Metal {
		return "GPU", "METAL"
	}
	if k == device.MetalModel { // a type of its own would change every test that selects the device
		return "METALPLUG_HOST", "METALPLUG_METAL_MODEL"
	}
	return "METALPLUG_HOST", "METALPLUG_HOST_REFERENCE"
}

func debug() bool { return cenv.Get("METALPLUG_DEBUG") == "1" }

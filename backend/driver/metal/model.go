package metal

import (
	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
	"github.com/metalplug/metalplug/backend/driver/metal/model"
	"github.com/metalplug/metalplug/backend/ir"
)

// ModelOptions configure a driver on the model of MPSGraph.
type ModelOptions struct {
	Options
	// MacOS is the release whose MPSGraph is modelled; zero means the
	// newest the contract knows (macOS 15).
	MacOS gpu.Version
}

// OpenModel makes the Metal driver on the model of MPSGraph (package
// model): the same lowering, binding and stream scheduling as on a Mac,
// executed by Go on the CPU. Its name is "metal-model".
func OpenModel(opts ModelOptions) (*Driver, error) {
	return newDriver(model.New(model.Options{MacOS: opts.MacOS, WorkingSet: opts.MemoryBytes}), "metal-model", opts.Options)
}

// Declines reports the dtypes the driver alone refuses: Metal has no
// float64, whose parts backend/split runs on the host (drivertest.Decliner).
func (d *Driver) Declines(t ir.DType) bool { return t == ir.F64 }

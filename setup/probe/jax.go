package probe

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
)

// Jax is the installed jax and jaxlib, and what the plugin must speak to
// them, measured from the installed jaxlib.
type Jax struct {
	Version       string `json:"jax_version"`    // jax, as the package index spells it
	JaxlibVersion string `json:"jaxlib_version"` // jaxlib, which the library is built against
	JaxlibDir     string `json:"jaxlib_dir"`
	// The StableHLO versions this jaxlib's serializer writes: the newest
	// (what the plugin asks programs to be written in) and the oldest.
	StablehloCurrent string `json:"stablehlo_current"`
	StablehloMinimum string `json:"stablehlo_minimum"`
	// The PJRT C API version jaxlib itself speaks, and the oldest a plugin
	// may report (pjrt.go measures both).
	PJRTFramework string `json:"pjrt_framework"`
	PJRTMinimum   string `json:"pjrt_minimum"`
}

// stablehloScript asks jaxlib's own StableHLO bindings for the version
// range; importing jaxlib's MLIR takes about a second, so it runs only when
// jaxlib is there.
const stablehloScript = `from jaxlib.mlir.dialects import stablehlo
print(stablehlo.get_current_version(), stablehlo.get_minimum_version())`

// measureJax fills j's StableHLO versions by asking the jaxlib python has.
func measureJax(python string, j *Jax) error {
	var stderr bytes.Buffer
	cmd := exec.Command(python, "-I", "-c", stablehloScript)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("jaxlib %s (%s) does not report its StableHLO versions (%v%s): reinstall it (`%s -m pip install --force-reinstall jaxlib==%s`)",
			j.JaxlibVersion, j.JaxlibDir, err, indent(stderr.String()), python, j.JaxlibVersion)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 || strings.Count(f[0], ".") != 2 || strings.Count(f[1], ".") != 2 {
		return fmt.Errorf("jaxlib %s printed %q for its StableHLO versions, not two versions such as 1.22.0 0.9.0", j.JaxlibVersion, truncate(string(out), 200))
	}
	j.StablehloCurrent, j.StablehloMinimum = f[0], f[1]
	return measurePJRT(python, j)
}

// HasTensorFlow reports whether the probed interpreter has TensorFlow.
func (r *Report) HasTensorFlow() bool { return r.TensorFlow.Version != "" }

// HasJax reports whether the probed interpreter has jaxlib.
func (r *Report) HasJax() bool { return r.Jax != nil }

// RunTensorFlow is Run for the tools that need TensorFlow (the tests of the
// TensorFlow frontend, the sweep, the matrix, the per-version wheels).
func RunTensorFlow(python string) (*Report, error) {
	r, err := Run(python)
	if err == nil && !r.HasTensorFlow() {
		err = &NoTensorFlowError{Python: r.Interpreter.Path}
	}
	return r, err
}

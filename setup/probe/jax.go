package probe

import (
	"fmt"
	"os"
	"os/exec"
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

// measureJax asks the jaxlib python has, in one process (importing
// jaxlib's MLIR takes about a second): its StableHLO bindings for the
// version range its serializer writes, then its plugin loader for the PJRT
// versions (pjrt.go).
func measureJax(python string, j *Jax) error {
	lib, err := pjrtProbeLibrary()
	if err != nil {
		return err
	}
	cmd := exec.Command(python, "-I", "-c", jaxScript, lib)
	cmd.Env = append(os.Environ(), "TF_CPP_MIN_LOG_LEVEL=0") // the framework version is an info line
	out, _ := cmd.CombinedOutput()
	m := stablehloRE.FindSubmatch(out)
	if m == nil {
		return fmt.Errorf("jaxlib %s (%s) does not report its StableHLO versions (it printed %q): reinstall it (`%s -m pip install --force-reinstall jaxlib==%s`)",
			j.JaxlibVersion, j.JaxlibDir, truncate(string(out), 400), python, j.JaxlibVersion)
	}
	j.StablehloCurrent, j.StablehloMinimum = string(m[1]), string(m[2])
	return readPJRT(out, j)
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

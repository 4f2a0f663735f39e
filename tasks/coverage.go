package tasks

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"time"

	"github.com/metalplug/metalplug/plugin/version"
	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/setup/docs"
	"github.com/metalplug/metalplug/setup/venv"
)

//go:embed coverage_registry.py
var coverageRegistryScript string

// CoverageDistribution is the wheel whose GPU registry docs/coverage.md is
// measured against: the full `tensorflow`, whose Linux wheel carries the CUDA
// kernels (tensorflow-cpu, which the tests install, has almost none, and the
// macOS wheels none).
const CoverageDistribution = "tensorflow"

// CoverageRegistry refreshes docs/tf_gpu_registry.json from the kernel
// registry of the pinned minor's full `tensorflow` wheel (about 600 MB, in a
// venv of its own, installed once), then regenerates docs/coverage.md.
func CoverageRegistry(logf Logf) error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("the snapshot is read from TensorFlow's Linux wheel, the one with CUDA kernels; this is %s", runtime.GOOS)
	}
	start := time.Now()
	pin, err := build.ReadPin(".")
	if err != nil {
		return err
	}
	minor := version.Minor(pin)
	req := fmt.Sprintf("%s==%s.*", CoverageDistribution, minor)
	dir, err := venv.Ensure("coverage-"+CoverageDistribution+"-"+minor, "", []string{req}, logf)
	if err != nil {
		return err
	}
	python := venv.Python(dir)
	cmd := exec.Command(python, "-c", coverageRegistryScript, CoverageDistribution)
	cmd.Env = append(os.Environ(), "TF_CPP_MIN_LOG_LEVEL=3", "CUDA_VISIBLE_DEVICES=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("reading the kernel registry with %s: %v\n%s", python, err, stderr.Bytes())
	}
	var raw struct {
		docs.RegistrySource
		Kernels []docs.RawKernel
		OpDefs  map[string]docs.OpFacts `json:"op_defs"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &raw); err != nil {
		return fmt.Errorf("reading the kernel registry with %s: %v", python, err)
	}
	reg := docs.NewRegistry(raw.RegistrySource, raw.Kernels, raw.OpDefs)
	// A wheel built without CUDA registers a few GPU kernels of TensorFlow's
	// runtime but none for the ops of a model.
	if len(reg.Ops["Conv2D"].GPU) == 0 {
		return fmt.Errorf("%s %s (%s) has no GPU kernel for Conv2D: it was built without CUDA kernels", raw.Distribution, raw.Version, raw.Platform)
	}
	b, err := reg.Encode()
	if err != nil {
		return err
	}
	if err := os.WriteFile(docs.RegistryPath, b, 0o644); err != nil {
		return err
	}
	logf("wrote %s: %d ops with GPU kernels in %s %s (%s), in %s", docs.RegistryPath, len(reg.GPUOps()), raw.Distribution, raw.Version, raw.Platform, time.Since(start).Round(time.Second))
	md, err := docs.Coverage(".")
	if err != nil {
		return err
	}
	return os.WriteFile(docs.CoveragePath, []byte(md), 0o644)
}

// checkCoverageSnapshot fails when docs/tf_gpu_registry.json was read from
// another TensorFlow minor than the pin. Like the protos, it is not held
// against a pin moved for one run.
func checkCoverageSnapshot(logf Logf) error {
	if pinMoved() {
		return nil
	}
	pin, err := build.ReadPin(".")
	if err != nil {
		return err
	}
	reg, err := docs.ReadRegistry(".")
	if err != nil {
		return err
	}
	if !version.SameMinor(reg.Version, pin) {
		return fmt.Errorf("%s was read from %s %s, but the pin is %s: run `go tool mage coverageRegistry` and commit it", docs.RegistryPath, reg.Distribution, reg.Version, pin)
	}
	logf("== %s: %s %s, the pinned minor", docs.RegistryPath, reg.Distribution, reg.Version)
	return nil
}

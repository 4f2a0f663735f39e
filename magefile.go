//go:build mage

// metalplug: a Metal GPU backend for TensorFlow, written in Go. Targets take the
// Python interpreter from PYTHON, else the active venv, else python3.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/magefile/mage/mg"

	"github.com/metalplug/metalplug/ci"
	"github.com/metalplug/metalplug/ci/release"
	"github.com/metalplug/metalplug/jaxsuite"
	"github.com/metalplug/metalplug/matrix"
	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/setup/docs"
	"github.com/metalplug/metalplug/setup/install"
	"github.com/metalplug/metalplug/setup/probe"
	"github.com/metalplug/metalplug/setup/toolchain"
	"github.com/metalplug/metalplug/tasks"
	"github.com/metalplug/metalplug/wheels"
)

var Default = Build

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

// Probe reports the TensorFlow and jax the build would target and writes build/probe.json.
func Probe() error {
	r, err := probe.Run("")
	if err != nil {
		return err
	}
	fmt.Print(r.Text())
	return r.WriteJSON(filepath.Join("build", "probe.json"))
}

// Build compiles build/libmetalplug.so (.dylib on macOS) against the probed TensorFlow and jaxlib.
func Build() error {
	mg.Deps(Probe)
	r, err := probe.ReadJSON(filepath.Join("build", "probe.json"))
	if err != nil {
		return err
	}
	_, err = toolchain.Build(r, toolchain.Options{Root: ".", Out: filepath.Join("build", build.LibraryName(r.GOOS)), Log: logf})
	return err
}

// Install builds, then puts the library into the probed site-packages (tensorflow-plugins/, jax_plugins/metalplug/).
func Install() error {
	mg.Deps(Build)
	r, err := probe.ReadJSON(filepath.Join("build", "probe.json"))
	if err != nil {
		return err
	}
	wrote, err := install.Install(filepath.Join("build", build.LibraryName(r.GOOS)), r)
	if err != nil {
		return err
	}
	for _, dst := range wrote {
		logf("installed %s", dst)
	}
	return nil
}

// Test runs vet, the unit tests, the TensorFlow integration tests, the sweep and the distribution tests.
func Test() { mg.SerialDeps(testLibrary, testDistribution) }

// testLibrary is vet, the unit, integration and model tiers, and the sweeps.
func testLibrary() error { return tasks.Test(logf) }

// testDistribution is the sdist and wheel tests that need no package index.
func testDistribution() error { return release.Check(".", false, logf) }

// Fuzz runs every fuzz target (the MLIR reader, the host driver, the StableHLO path from artifact to run, the TensorFlow kernels) for seconds each; a failing input is written under its package's testdata/fuzz.
func Fuzz(seconds int) error { return tasks.Fuzz(logf, time.Duration(seconds)*time.Second) }

// Jaxfixtures regenerates the committed jax artifacts (plugin/pjrt/mlir/testdata, plugin/pjrt/stablehlo/testdata) with the pinned jax.
func Jaxfixtures() error { return tasks.JaxFixtures(logf) }

// Jaxsuite runs jax's own tests/ (of checkout, a jax checkout at the installed release's tag) on the device (the host driver off macOS) and on jax's CPU, every module not run yet, and updates docs/jax_suite.json and docs/jax_suite.md.
func Jaxsuite(checkout string) error {
	return jaxsuite.Measure(jaxsuite.Options{Root: ".", Checkout: checkout, Log: logf})
}

// JaxsuiteModules runs (again) only the named modules of jax's tests/, comma or space separated (for example "api_test,lax_test"), and merges them into docs/jax_suite.json.
func JaxsuiteModules(checkout, modules string) error {
	return jaxsuiteModules(checkout, modules, jaxsuite.DriverHost)
}

// JaxsuiteModel runs jax's own tests/ as jaxsuite does, on the Metal driver's lowering over the model of MPSGraph (host parts only for decompositions and callbacks), every module not run there yet.
func JaxsuiteModel(checkout string) error {
	return jaxsuite.Measure(jaxsuite.Options{Root: ".", Checkout: checkout, Driver: jaxsuite.DriverModel, Log: logf})
}

// JaxsuiteModelModules runs (again) only the named modules of jax's tests/ on the model of MPSGraph, comma or space separated, and merges them into docs/jax_suite.json.
func JaxsuiteModelModules(checkout, modules string) error {
	return jaxsuiteModules(checkout, modules, jaxsuite.DriverModel)
}

func jaxsuiteModules(checkout, modules, driver string) error {
	list := jaxsuite.ParseModules(modules)
	if len(list) == 0 {
		return fmt.Errorf("no modules named")
	}
	return jaxsuite.Measure(jaxsuite.Options{Root: ".", Checkout: checkout, Modules: list, Driver: driver, Log: logf})
}

// JaxsuiteReport classifies the failures in docs/jax_suite.json again with the current rules and renders docs/jax_suite.md (the host driver's and the model's runs side by side), running nothing.
func JaxsuiteReport() error { return jaxsuite.Render(".") }

// Endurance runs the long runs (Keras and flax/optax trainings of steps steps each, both frameworks in one process from four threads) on each driver and checks memory, caches and results stay put (weekly and before a release: about 20 minutes at 10000 steps here).
func Endurance(steps int) error { return tasks.Endurance(logf, steps) }

// Demo makes a venv with the pinned TensorFlow, installs the plugin and trains a Keras model on the device.
func Demo() error { return tasks.Demo(logf) }

// Sdist writes dist/metalplug-<version>.tar.gz with the Go modules vendored.
func Sdist() error { return tasks.Sdist(logf) }

// Kernels regenerates docs/kernels.md (the kernel registry), docs/coverage.md (TensorFlow's GPU ops against it), docs/drivers.md (IR ops by driver) and docs/jax.md (StableHLO ops).
func Kernels() error {
	drivers, err := docs.Drivers(".")
	if err != nil {
		return err
	}
	coverage, err := docs.Coverage(".")
	if err != nil {
		return err
	}
	if err := os.MkdirAll("docs", 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(docs.KernelsPath, []byte(docs.Kernels(".")), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(docs.CoveragePath, []byte(coverage), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(docs.JaxPath, []byte(docs.Jax()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(docs.DriversPath, []byte(drivers), 0o644)
}

// CoverageRegistry refreshes docs/tf_gpu_registry.json from the kernel registry of the pinned minor's full tensorflow wheel (Linux, about 600 MB, installed once into a venv of its own) and regenerates docs/coverage.md.
func CoverageRegistry() error { return tasks.CoverageRegistry(logf) }

// Protos regenerates plugin/tfproto, the Go types of TensorFlow's GraphDef and XSpace protos, from the pinned TensorFlow's descriptors.
func Protos() error { return tasks.Protos(logf) }

// Darwincheck type-checks the darwin-only packages (the Metal driver) for darwin/arm64.
func Darwincheck() error { return tasks.Darwincheck(logf) }

// Gputest runs the Metal driver's conformance suite, region forms and dispatch path on this Mac's Metal device (MPSGraph itself, not the model); it fails where there is none.
func Gputest() error { return tasks.GPUTest(logf) }

// Macreport writes build/macreport.md, the file to attach to an issue from a Mac: macOS and the chip, the Metal driver's conformance suite on the GPU and on the model side by side (the cases that differ first), the TensorFlow and JAX end-to-end checks on the GPU, and the op sweep there (the long part; macreportQuick leaves it out). Without a Mac or a usable GPU it says so in one line and runs the model's suite.
func Macreport() error { return tasks.Macreport(logf, true) }

// MacreportQuick is macreport without the op sweep.
func MacreportQuick() error { return tasks.Macreport(logf, false) }

// Wheeltest installs the universal wheel `go tool mage wheel` built for this platform into a venv with the pinned TensorFlow and jax and runs both frameworks on it (the host reference device: no GPU needed); the release runs it on each platform it publishes a wheel for.
func Wheeltest() error { return tasks.WheelTest(logf) }

// Loadtest builds the library and runs only the load and decline tests (for machines without a usable GPU).
func Loadtest() error { return tasks.Loadtest(logf) }

// Workflows installs ci/workflows into .github/workflows.
func Workflows() error { return ci.Install(".") }

// Pin moves TF_SUPPORTED_VERSION to the minor release of version (for example 2.22.0 or 2.22).
func Pin(version string) error {
	pin, err := tasks.MovePin(".", version)
	if err != nil {
		return err
	}
	logf("TF_SUPPORTED_VERSION is now %s", pin)
	return nil
}

// Sweep runs every registered (op, dtype) on the device and on the CPU and writes docs/op_errors.md.
func Sweep() error { return tasks.Sweep(logf, tasks.SweepOptions{}) }

// SweepModel runs the same sweep on the Metal driver's lowering against the model of MPSGraph, and writes docs/op_errors_metal_model.md.
func SweepModel() error { return tasks.Sweep(logf, tasks.SweepOptions{Model: true}) }

// SweepOp reruns one op for one dtype (for example MatMul float32) verbosely, printing inputs and both outputs.
func SweepOp(op, dtype string) error {
	return tasks.Sweep(logf, tasks.SweepOptions{Op: op, DType: dtype, Verbose: true})
}

// Matrix builds and tests the plugin against each TensorFlow of the matrix (2.19.1, 2.20.0, 2.21.0, the newest release and the newest nightly, with every python3.X on PATH) and each jax (the newest release and the newest of the minor before, with a Python 3.12+), and writes docs/matrix.md and docs/matrix.json.
func Matrix() error { return matrix.Measure(".", "", logf) }

// MatrixCell runs only the matrix cells a filter selects (for example 2.19.1, nightly, "release py3.11", jax or "jax 0.12") and updates their rows in docs/matrix.md and docs/matrix.json.
func MatrixCell(filter string) error { return matrix.Measure(".", filter, logf) }

// PinNewest moves TF_SUPPORTED_VERSION to the newest TensorFlow of a channel (release or nightly) for one CI run; never commit it.
func PinNewest(channel string) error {
	r, err := matrix.Newest(channel, "")
	if err != nil {
		return err
	}
	pin, err := tasks.MovePin(".", r.Version)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(tasks.PinnedRequirementPath), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(tasks.PinnedRequirementPath, []byte(r.Requirement()+"\n"), 0o644); err != nil {
		return err
	}
	logf("TF_SUPPORTED_VERSION is now %s: %s is the newest %s here (%s)", pin, r.Requirement(), channel, r.Wheel)
	return nil
}

// Bench measures the device against TensorFlow's CPU, alternating in one process, and writes BENCHMARKS.md and its plot.
func Bench() error { return tasks.Bench(logf) }

// Wheels builds one wheel per TensorFlow release of the matrix into dist/wheelhouse, a PEP 503 simple index.
func Wheels() error {
	dir := filepath.Join("dist", "wheelhouse")
	built, err := wheels.BuildWheelhouse(wheels.HouseOptions{Root: ".", Dir: dir, Releases: matrix.Releases,
		Distribution: matrix.ReleaseDistribution, Log: logf})
	if err != nil {
		return err
	}
	for _, b := range built {
		logf("%s  %d bytes  sha256 %s  (%s)", b.File, b.Size, b.SHA256, b.Requires)
	}
	abs, err := filepath.Abs(filepath.Join(dir, wheels.SimpleDir))
	if err != nil {
		return err
	}
	logf("install into a venv that has TensorFlow: pip install --index-url file://%s metalplug", filepath.ToSlash(abs))
	return nil
}

// Wheel builds dist/metalplug-<version>-py3-none-<platform>.whl, the wheel a release publishes: a build per TensorFlow release of the matrix and one for jax alone, chosen at load.
func Wheel() error {
	jax, err := wheels.EnsureJax(".", logf)
	if err != nil {
		return err
	}
	u, err := wheels.BuildUniversal(wheels.UniversalOptions{Root: ".", Dir: "dist", Releases: matrix.Releases,
		Distribution: matrix.ReleaseDistribution, Jax: jax.Report, Log: logf})
	if err != nil {
		return err
	}
	logf("dist/%s  %d bytes  sha256 %s  in %s", u.File, u.Size, u.SHA256, u.Elapsed.Round(time.Second))
	for _, b := range u.Builds {
		logf("  %s", b)
	}
	return nil
}

// Release builds the sdist, wheels and SHA256SUMS for tag (v<version>); publish true uploads them (GITHUB_TOKEN, PYPI_TOKEN), else a dry run.
func Release(ctx context.Context, tag string, publish bool) error {
	return tasks.Release(ctx, tag, publish)
}

// Disttest builds the sdist, the per-release wheels and the universal wheel, and runs all the distribution tests: test's, and the universal wheel from a package index into users' venvs (weekly and before a release).
func Disttest() error { return release.Check(".", true, logf) }

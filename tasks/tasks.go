// Package tasks holds the logic of the Mage targets that chain several steps
// (test, demo, sdist), so that magefile.go stays an index.
package tasks

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/metalplug/metalplug/plugin/version"
	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/setup/darwincheck"
	"github.com/metalplug/metalplug/setup/probe"
	"github.com/metalplug/metalplug/setup/toolchain"
	"github.com/metalplug/metalplug/setup/toolmod"
	"github.com/metalplug/metalplug/wheels"
)

// Logf prints progress.
type Logf func(format string, args ...any)

// pinnedVenv makes (or reuses) venv <prefix><distribution>-<pin> with the
// pinned TensorFlow and probes it. The demo installs the plugin into its venv,
// so it uses a prefix: the tests load the library by hand, and a second
// registration of the platform would abort TensorFlow.
func pinnedVenv(prefix string, logf Logf) (req string, r *probe.Report, err error) {
	t, req, err := pinnedToolchain(prefix, "", logf)
	if err != nil {
		return "", nil, err
	}
	return req, t.Report, nil
}

// pinnedToolchain is pinnedVenv with the library built at out (relative to
// the tree; none when empty).
func pinnedToolchain(prefix, out string, logf Logf) (*toolchain.Toolchain, string, error) {
	pin, err := build.ReadPin(".")
	if err != nil {
		return nil, "", err
	}
	dist, req := pinnedRequirement(pin)
	t, err := toolchain.Ensure(toolchain.Options{Venv: prefix + dist + "-" + version.Minor(pin), Requirements: []string{req},
		Needs: toolchain.TensorFlow, Root: ".", Out: out, Pin: pin, Log: logf})
	return t, req, err
}

// libraryPath is where the library for OS goos is built under build/.
func libraryPath(goos string, dirs ...string) string {
	return filepath.Join(append(append([]string{"build"}, dirs...), build.LibraryName(goos))...)
}

func run(env []string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

// PinnedRequirementPath, when it exists, holds the exact TensorFlow the test
// venvs install for the pin, as `mage pinNewest` resolved it (build/ is never
// committed). It is needed for the nightly channel: no tensorflow-cpu release
// has a nightly's minor. A requirement of another minor than the pin is
// ignored, so a stale file cannot outlive a pin moved back.
const PinnedRequirementPath = "build/pinned-requirement.txt"

// pinnedRequirement is the distribution and pip requirement for pin.
func pinnedRequirement(pin string) (dist, req string) {
	if b, err := os.ReadFile(PinnedRequirementPath); err == nil {
		req := strings.TrimSpace(string(b))
		if d, v, ok := strings.Cut(req, "=="); ok && version.SameMinor(v, pin) {
			return d, req
		}
	}
	return build.TestDistribution, fmt.Sprintf("%s==%s.*", build.TestDistribution, version.Minor(pin))
}

// pinMoved reports whether TF_SUPPORTED_VERSION differs from the committed
// one: the weekly job moves it for one run, and the generated tables then
// describe another TensorFlow, so they are not held against the commit.
func pinMoved() bool {
	committed, err := exec.Command("git", "show", "HEAD:TF_SUPPORTED_VERSION").Output()
	if err != nil {
		return false
	}
	pin, err := build.ReadPin(".")
	return err == nil && strings.TrimSpace(string(committed)) != pin
}

// frameworks makes (or reuses) the venvs of the pinned TensorFlow and of
// jax: the requirement installed, the TensorFlow venv's probe, and jax's.
func frameworks(logf Logf) (req string, r *probe.Report, jax *wheels.JaxEnv, err error) {
	if req, r, err = pinnedVenv("", logf); err != nil {
		return "", nil, nil, err
	}
	if jax, err = jaxVenv(logf); err != nil {
		return "", nil, nil, err
	}
	return req, r, jax, nil
}

// Test runs every tier that runs here: gofmt and vet, the unit tests with the
// race detector, bounded fuzz runs (the host driver, the StableHLO path and
// the TensorFlow kernels), the integration tests against the
// pinned TensorFlow and jax (including installs from the sdist), the JAX
// end-to-end tests, and the sweep.
func Test(logf Logf) error {
	start := time.Now()
	req, r, jax, err := frameworks(logf)
	if err != nil {
		return err
	}
	env := build.Env(r)
	out, err := exec.Command("gofmt", "-l", "backend", "plugin", "setup", "sweep", "tests", "wheels", "ci", "matrix", "bench", "jaxsuite", "tasks", "cmd", "tools", "magefile.go").CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		return fmt.Errorf("gofmt would change these files (run gofmt -w):\n%s%v", out, err)
	}
	if err := checkProtos(r, logf); err != nil {
		return err
	}
	if err := checkCoverageSnapshot(logf); err != nil {
		return err
	}
	logf("== go vet")
	if err := run(env, "go", "vet", "./..."); err != nil {
		return err
	}
	if err := run(nil, "go", "-C", toolmod.Dir, "vet", "./..."); err != nil {
		return err
	}
	logf("== darwincheck: darwin-only packages type-checked for darwin/arm64")
	if err := Darwincheck(logf); err != nil {
		return err
	}
	logf("== unit tests (race detector on)")
	if err := run(env, "go", "test", "-race", "-count=1", "./backend/...", "./setup/...", "./tasks/...", "./cmd/...", "./plugin/...", "./wheels/...", "./ci/...", "./sweep/...", "./tests/layout/...", "./matrix/...", "./bench/...", "./jaxsuite/..."); err != nil {
		return err
	}
	logf("== the tools module's unit tests (race detector on)")
	if err := run(nil, "go", "-C", toolmod.Dir, "test", "-race", "-count=1", "./..."); err != nil {
		return err
	}
	// Briefly, beside the unit tests that replay every target's seeds and
	// regression inputs: the weekly workflow runs them for long (Fuzz).
	for _, t := range FuzzTargets {
		if t.push == 0 {
			continue
		}
		logf("== fuzzing %s for %v", t.name, t.push)
		if err := fuzz(env, t, t.push); err != nil {
			return err
		}
	}
	ienv, err := integrationEnv(env, r, req, jax, logf)
	if err != nil {
		return err
	}
	logf("== integration tests against %s %s", r.TensorFlow.Distribution, r.TensorFlow.Version)
	if err := run(ienv, "go", "test", "-count=1", "-v", "-timeout=30m", "./tests/integration/"); err != nil {
		return err
	}
	logf("== integration tests that run graphs, with clustering off (METALPLUG_CLUSTER=0)")
	cenv := append(ienv, "METALPLUG_CLUSTER=0")
	if err := run(cenv, "go", "test", "-count=1", "-v", "-timeout=20m", "-run", "^("+strings.Join(ClusterOffIntegrationTests, "|")+")$", "./tests/integration/"); err != nil {
		return err
	}
	logf("== integration tests with the Metal driver's lowering on the model of MPSGraph")
	menv := append(ienv, "METALPLUG_DRIVER=metal-model")
	if err := run(menv, "go", "test", "-count=1", "-v", "-timeout=20m", "-run", "^("+strings.Join(ModelIntegrationTests, "|")+")$", "./tests/integration/"); err != nil {
		return err
	}
	if err := jaxTier(env, jax, logf); err != nil {
		return err
	}
	logf("== the op sweep: every registered (op, dtype) against the CPU")
	if err := Sweep(logf, SweepOptions{CheckDocs: !pinMoved()}); err != nil {
		return err
	}
	logf("== the op sweep on the Metal driver's lowering against the model of MPSGraph")
	if err := Sweep(logf, SweepOptions{CheckDocs: !pinMoved(), Model: true}); err != nil {
		return err
	}
	logf("all tests passed in %s", time.Since(start).Round(time.Second))
	return nil
}

// integrationEnv builds the libraries and the sdist tests/integration
// loads (the library for r's TensorFlow, the same stamped with another
// minor, the sdist) and returns env with the variables that name them and
// the frameworks (req, jax) the tests install.
func integrationEnv(env []string, r *probe.Report, req string, jax *wheels.JaxEnv, logf Logf) ([]string, error) {
	logf("== building the libraries the integration tests load")
	absLib, absMismatch, err := loadTestLibraries(r, logf)
	if err != nil {
		return nil, err
	}
	sdist, err := wheels.Sdist(".", filepath.Join("build", "dist"), "")
	if err != nil {
		return nil, err
	}
	absSdist, _ := filepath.Abs(filepath.Join("build", "dist", sdist))
	return append(slices.Clone(env),
		"METALPLUG_REQUIRE_INTEGRATION=1",
		"METALPLUG_TEST_PYTHON="+r.Interpreter.Path,
		"METALPLUG_TEST_LIB="+absLib,
		"METALPLUG_TEST_LIB_MISMATCH="+absMismatch,
		"METALPLUG_TEST_SDIST="+absSdist,
		"METALPLUG_TEST_TF_REQUIREMENT="+req,
		"METALPLUG_TEST_MISMATCH_VERSION="+otherMinor(r.TensorFlow.Version),
		"METALPLUG_TEST_TF_MINOR="+version.Minor(r.TensorFlow.Version),
		"METALPLUG_TEST_JAX_REQUIREMENT="+jax.Requirement,
		"METALPLUG_TEST_JAX_BASE="+jax.Base,
		"METALPLUG_TEST_JAX_PYTHON="+jax.Report.Interpreter.Path,
	), nil
}

// ClusterOffIntegrationTests run a second time with clustering off
// (METALPLUG_CLUSTER=0): the ones whose work is graphs, where the graph
// pass forms clusters (Keras training, variables, real models, the
// profiler, threads, a training step that does not fit). The op sweep and
// the other tests run eager ops, which no graph pass sees.
var ClusterOffIntegrationTests = []string{
	"TestKerasTrainingMatchesCPU", "TestTwoThreadsTrain", "TestProfilerTimeline", "TestRealModelsMatchFloat64",
	"TestVariableKernelsWithExperimentalAPI", "TestMemoryPressure",
}

// ModelIntegrationTests are the integration tests that run a second time
// with the device backed by the Metal driver on the model of MPSGraph
// (METALPLUG_DRIVER=metal-model): the device appears, ops match the CPU,
// Keras trains with Adam as on the CPU, wrong input is an error, running
// out of memory is ResourceExhaustedError and the process goes on, the graph
// pass fuses, and the profiler's timeline has the command buffers' times.
var ModelIntegrationTests = []string{
	"TestDeviceAppearsAndRunsMatMul", "TestOpsMatchCPU", "TestKerasTrainingMatchesCPU",
	"TestTwoThreadsTrain", "TestWrongInputIsATensorFlowError", "TestMemoryPressure", "TestGraphPass", "TestProfilerTimeline", "TestClusters",
}

// otherMinor is a version one minor below v, for the mismatch build.
func otherMinor(v string) string {
	sv, err := version.Parse(v)
	if err != nil || sv.Minor() == 0 {
		return "1.0.0"
	}
	return fmt.Sprintf("%d.%d.0", sv.Major(), sv.Minor()-1)
}

// Sdist writes dist/metalplug-<version>.tar.gz.
func Sdist(logf Logf) error {
	name, err := wheels.Sdist(".", "dist", "")
	if err != nil {
		return err
	}
	logf("wrote dist/%s", name)
	return nil
}

// Darwincheck type-checks every darwin-only package (the Metal driver) for
// darwin/arm64 with cgo's C treated as opaque: there is no macOS SDK here, so
// this is the whole of what can be checked of the Metal code on Linux.
func Darwincheck(logf Logf) error {
	r, err := darwincheck.Run(".")
	if err != nil {
		return err
	}
	for _, e := range r.Tolerated {
		logf("darwincheck: tolerated in a dependency: %v", e)
	}
	if len(r.Errors) > 0 {
		msgs := make([]string, len(r.Errors))
		for i, e := range r.Errors {
			msgs[i] = e.Error()
		}
		return fmt.Errorf("darwincheck: %d type errors for darwin/arm64:\n%s", len(r.Errors), strings.Join(msgs, "\n"))
	}
	logf("darwincheck: %d packages clean for %s/%s (%d type-checked with dependencies) in %.1fs: %s",
		len(r.Packages), darwincheck.TargetGOOS, darwincheck.TargetGOARCH, r.Loaded, r.Elapsed.Seconds(), strings.Join(r.Packages, ", "))
	return nil
}

// GPUTest runs the Metal driver's tests on the machine's Metal device,
// failing rather than falling back to the model where there is none.
func GPUTest(logf Logf) error {
	logf("== the Metal driver's tests on this machine's Metal device")
	return run([]string{"METALPLUG_TEST_REQUIRE_GPU=1"}, "go", "test", "-count=1", "-timeout", "30m", "./backend/driver/metal/")
}

// WheelTest installs the universal wheel `go tool mage wheel` built for
// this platform (dist/metalplug-<version>-py3-none-<platform>.whl) into a
// venv with the pinned TensorFlow and jax, and runs TestUniversalWheel on
// it: both frameworks load its builds and compute on the host reference
// device (which needs no GPU, so a hosted Mac runner can run it). The
// release runs it on each platform it publishes a wheel for.
func WheelTest(logf Logf) error {
	req, r, jax, err := frameworks(logf)
	if err != nil {
		return err
	}
	ver, err := wheels.ProjectVersion(".")
	if err != nil {
		return err
	}
	found, err := filepath.Glob(filepath.Join("dist", "metalplug-"+ver+"-py3-none-*.whl"))
	if err != nil {
		return err
	}
	var mine []string
	for _, f := range found {
		if forPlatform(filepath.Base(f), r.GOOS, r.GOARCH) {
			mine = append(mine, f)
		}
	}
	if len(mine) != 1 {
		return fmt.Errorf("dist holds %d universal wheels of metalplug %s for %s/%s (%v): run `go tool mage wheel` first", len(mine), ver, r.GOOS, r.GOARCH, found)
	}
	abs, err := filepath.Abs(mine[0])
	if err != nil {
		return err
	}
	logf("== the wheel %s in a venv with %s and jax %s", filepath.Base(abs), req, jax.Report.Jax.Version)
	env := append(build.Env(r), "METALPLUG_REQUIRE_INTEGRATION=1", "METALPLUG_TEST_HOST_DEVICE=1", "METALPLUG_TEST_WHEEL="+abs,
		"METALPLUG_TEST_TF_REQUIREMENT="+req, "METALPLUG_TEST_JAX_REQUIREMENT="+jax.Requirement, "METALPLUG_TEST_JAX_BASE="+jax.Base)
	return run(env, "go", "test", "-count=1", "-v", "-timeout=20m", "-run=^TestUniversalWheel$", "./tests/integration/")
}

// forPlatform says whether a wheel's file name is for goos/goarch: a macOS
// arm64 wheel, or a (many)linux one of the architecture.
func forPlatform(name, goos, goarch string) bool {
	if goos == "darwin" {
		return strings.Contains(name, "-macosx_") && strings.HasSuffix(name, "_arm64.whl")
	}
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[goarch]
	return strings.Contains(name, "linux_") && strings.HasSuffix(name, "_"+arch+".whl")
}

// Loadtest builds the library and runs only the load tests: the device
// appears or the plugin says why not, and every decline path keeps
// TensorFlow alive. It is what runs on machines whose GPU cannot run kernels.
func Loadtest(logf Logf) error {
	_, r, err := pinnedVenv("", logf)
	if err != nil {
		return err
	}
	absLib, absMismatch, err := loadTestLibraries(r, logf)
	if err != nil {
		return err
	}
	env := append(build.Env(r), "METALPLUG_REQUIRE_INTEGRATION=1", "METALPLUG_TEST_LOAD_ONLY=1",
		"METALPLUG_TEST_MISMATCH_VERSION="+otherMinor(r.TensorFlow.Version), "METALPLUG_TEST_TF_MINOR="+version.Minor(r.TensorFlow.Version),
		"METALPLUG_TEST_PYTHON="+r.Interpreter.Path, "METALPLUG_TEST_LIB="+absLib, "METALPLUG_TEST_LIB_MISMATCH="+absMismatch)
	return run(env, "go", "test", "-count=1", "-v", "-run=TestDeclinePaths", "./tests/integration/")
}

// loadTestLibraries builds the library for r's TensorFlow and the same
// stamped with another minor (which must be declined), returning their
// absolute paths.
func loadTestLibraries(r *probe.Report, logf Logf) (lib, mismatch string, err error) {
	if lib, err = toolchain.Build(r, toolchain.Options{Root: ".", Out: libraryPath(r.GOOS), Log: logf}); err != nil {
		return "", "", err
	}
	mismatch, err = toolchain.Build(r, toolchain.Options{Root: ".", Out: libraryPath(r.GOOS, "mismatch"),
		StampVersion: otherMinor(r.TensorFlow.Version), Log: logf})
	return lib, mismatch, err
}

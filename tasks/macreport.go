package tasks

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/setup/docs"
	"github.com/metalplug/metalplug/setup/macreport"
	"github.com/metalplug/metalplug/sweep"
)

// macreportDir holds the raw material of the report (each go test -json
// stream, the GPU sweep's whole table), for CI to keep beside it.
const macreportDir = "build/macreport"

// metalPackage is the Metal driver, whose tests run the conformance suite
// (backend/driver/drivertest) on the GPU or on the model of MPSGraph.
const metalPackage = "./backend/driver/metal/"

// gpuProbeTest decides whether this Mac's GPU is usable: it opens the
// device, compiles a program and runs it with arguments in device and in
// host memory, checking the numbers. Where it fails, every other run on
// the GPU would fail the same way, and the report says why in one line.
const gpuProbeTest = "TestPointerKinds"

// describeTest logs "on <the driver's description>" (metal_test.go): on a
// Mac, the Metal device's name.
const describeTest = "TestConformance"

// MacEndToEndTests are tests/integration's checks that compute on the
// device with TensorFlow or jax and compare with their CPU; on a Mac the
// device is TensorFlow's GPU and jax's metalplug platform, both backed by
// the Metal driver on the GPU (the tests ask for no host device there).
var MacEndToEndTests = []string{
	"TestDeviceAppearsAndRunsMatMul", "TestOpsMatchCPU", "TestKerasTrainingMatchesCPU", "TestTwoThreadsTrain",
	"TestRealModelsMatchFloat64", "TestReductionsAndContractionsAsAccurateAsCPU", "TestGraphPass", "TestClusters",
	"TestInstallWithJax", "TestBothFrameworksInOneProcess",
}

// Macreport writes macreport.Path, the file a Mac user attaches to an
// issue: the machine; the Metal driver's tests on the GPU (if it is
// usable) and on the model; the end-to-end checks on the GPU; and, with
// withSweep, the op sweep on the GPU, the long part. Off a Mac, or on one
// whose GPU the driver cannot use, it says so in one line and runs the
// model's suite. It fails when something that ran failed, after writing
// the report.
func Macreport(logf Logf, withSweep bool) error {
	start := time.Now()
	rep := &macreport.Report{Generated: start, Machine: machine()}
	rep.GPU.Command = "METALPLUG_TEST_REQUIRE_GPU=1 go test " + metalPackage
	rep.Model.Command = "METALPLUG_TEST_MODEL=1 go test " + metalPackage
	rep.EndToEnd.Command = "go test ./tests/integration/ (the checks below, with the environment `go tool mage test` gives them)"
	// The GPU's runs fail rather than fall back to the model; the model's
	// run stays on the model even on a Mac.
	gpuEnv := []string{"METALPLUG_TEST_REQUIRE_GPU=1", "METALPLUG_TEST_MODEL="}
	modelEnv := []string{"METALPLUG_TEST_MODEL=1", "METALPLUG_TEST_REQUIRE_GPU="}
	raw := func(name string) string { return filepath.Join(macreportDir, name+".json") }
	// A previous run's raw files (a GPU run where this one had none) would
	// be kept beside a report that does not hold them.
	if err := os.RemoveAll(macreportDir); err != nil {
		return err
	}

	if runtime.GOOS != "darwin" {
		rep.NoGPU = fmt.Sprintf("No Mac: this is %s/%s, so only the model's conformance suite ran; the GPU's suite, "+
			"the end-to-end checks and the sweep need a Mac with Apple silicon.", runtime.GOOS, runtime.GOARCH)
	} else {
		logf("== is this Mac's GPU usable? (%s on it)", gpuProbeTest)
		probe, err := goTestJSON(logf, raw("probe"), gpuEnv, "-count=1", "-timeout=10m", "-run", "^"+gpuProbeTest+"$", metalPackage)
		switch {
		case err != nil:
			rep.NoGPU = "No usable GPU: the probe did not run: " + err.Error()
		case probe.Failed():
			rep.NoGPU = "No usable GPU: " + probe.Why(gpuProbeTest)
		}
		if rep.NoGPU != "" {
			rep.NoGPU += "; only the model's conformance suite ran."
		}
	}
	if rep.NoGPU != "" {
		logf("%s", rep.NoGPU) // the one line a CI log or a user needs
		why := "no usable GPU (see the top)"
		if runtime.GOOS != "darwin" {
			why = "not a Mac (see the top)"
		}
		rep.GPU.Skipped, rep.EndToEnd.Skipped, rep.Sweep.Skipped = why, why, why
	} else {
		logf("== the conformance suite on the GPU")
		if run, err := goTestJSON(logf, raw("gpu"), gpuEnv, "-count=1", "-timeout=30m", metalPackage); err != nil {
			rep.GPU.Err = err.Error()
		} else {
			rep.GPU.Run = run
			rep.Machine.GPU = run.Logged(describeTest, "on ")
		}
	}

	logf("== the conformance suite on the model of MPSGraph")
	if run, err := goTestJSON(logf, raw("model"), modelEnv, "-count=1", "-timeout=30m", metalPackage); err != nil {
		rep.Model.Err = err.Error()
	} else {
		rep.Model.Run = run
	}

	if rep.NoGPU == "" {
		macEndToEnd(rep, logf, raw("endtoend"))
		if withSweep {
			macSweep(rep, logf)
		} else {
			rep.Sweep.Skipped = "left out (`go tool mage macreportQuick`); `go tool mage macreport` runs it"
		}
	}

	if err := os.MkdirAll(filepath.Dir(macreport.Path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(macreport.Path, []byte(rep.Markdown()), 0o644); err != nil {
		return err
	}
	abs, _ := filepath.Abs(macreport.Path)
	logf("macreport: wrote %s in %s: attach it to an issue", abs, time.Since(start).Round(time.Second))
	if f := rep.Failures(); len(f) > 0 {
		return fmt.Errorf("macreport: %s (details in %s)", strings.Join(f, "; "), abs)
	}
	return nil
}

// macEndToEnd runs MacEndToEndTests in the venvs and with the libraries
// `go tool mage test` makes, and notes the frameworks they ran with.
func macEndToEnd(rep *macreport.Report, logf Logf, raw string) {
	logf("== the TensorFlow and JAX end-to-end checks on the GPU")
	req, r, jax, err := frameworks(logf)
	if err != nil {
		rep.EndToEnd.Err = err.Error()
		return
	}
	rep.Machine.TensorFlow = r.TensorFlow.Distribution + " " + r.TensorFlow.Version
	rep.Machine.Jax = jax.Report.Jax.Version + " (jaxlib " + jax.Report.Jax.JaxlibVersion + ")"
	env, err := integrationEnv(build.Env(r), r, req, jax, logf)
	if err != nil {
		rep.EndToEnd.Err = err.Error()
		return
	}
	run, err := goTestJSON(logf, raw, env, "-count=1", "-timeout=60m", "-run", "^("+strings.Join(MacEndToEndTests, "|")+")$", "./tests/integration/")
	if err != nil {
		rep.EndToEnd.Err = err.Error()
		return
	}
	rep.EndToEnd.Run = run
}

// gpuSweepAbout heads the GPU sweep's whole table.
const gpuSweepAbout = "Driver: the Metal driver on this Mac's GPU (TensorFlow's `GPU` device), with no part of a program allowed on the CPU " +
	"(`METALPLUG_NO_CPU_FALLBACK=1`), as the model's sweep runs: its verdicts compare row for row with docs/op_errors_metal_model.md."

// macSweep runs the op sweep on TensorFlow's GPU, writes its whole table
// beside the report and puts its counts and non-verified rows, each with
// the committed model table's verdict, in the report.
func macSweep(rep *macreport.Report, logf Logf) {
	logf("== the op sweep on the GPU")
	opts, err := sweepSetup(logf)
	if err != nil {
		rep.Sweep.Err = err.Error()
		return
	}
	opts.DeviceType = "GPU"
	// The workers offer the host device (METALPLUG_HOST_DEVICE=1) so that
	// off a Mac there is one; here that would put the host driver where
	// the GPU should be, so it is unset again (of a variable given twice,
	// the last counts).
	opts.Env = []string{"METALPLUG_HOST_DEVICE=", "METALPLUG_NO_CPU_FALLBACK=1"}
	opts.About = gpuSweepAbout
	res, err := sweep.Run(opts)
	if err != nil {
		rep.Sweep.Err = err.Error()
		return
	}
	full := filepath.Join(macreportDir, "op_errors_gpu.md")
	if err := os.MkdirAll(macreportDir, 0o755); err != nil {
		rep.Sweep.Err = err.Error()
		return
	}
	if err := os.WriteFile(full, []byte(res.OpErrorsMarkdown()), 0o644); err != nil {
		rep.Sweep.Err = err.Error()
		return
	}
	model, err := os.ReadFile(docs.OpErrorsModelPath)
	if err != nil {
		logf("macreport: %v: the sweep's rows go without the model's verdicts", err)
	}
	if rep.Machine.TensorFlow == "" { // the end-to-end checks name the distribution too
		rep.Machine.TensorFlow = res.TFVersion
	}
	rep.Sweep.Result = sweepSummary(res, sweep.Verdicts(model), docs.OpErrorsModelPath, full)
}

// sweepSummary is the report's part of a sweep: its counts, and each case
// it did not verify with the model's verdict for the same case.
func sweepSummary(res *sweep.Report, model map[[2]string]sweep.Status, modelTable, fullTable string) *macreport.Sweep {
	s := &macreport.Sweep{
		TensorFlow: res.TFVersion, Kernels: res.Kernels, Cases: len(res.Cases), Verified: res.Verified,
		NeedsEntryPoint: res.NeedsEntryPoint, NeedsCPU: res.NeedsCPU, Unaccounted: res.Unaccounted,
		AuditProblems: res.AuditProblems, Problems: res.Problems, Wall: res.Wall,
		ModelTable: modelTable, FullTable: fullTable,
	}
	text := func(st sweep.Status) string { return strings.ReplaceAll(string(st), "-", " ") } // as op_errors.md writes it
	for _, c := range res.Cases {
		if c.Status == sweep.Verified {
			continue
		}
		s.Rows = append(s.Rows, macreport.SweepRow{Op: c.Op, DTypes: c.DTypes, Status: text(c.Status),
			Model: text(model[[2]string{c.Op, c.DTypes}]), Detail: c.Detail})
	}
	return s
}

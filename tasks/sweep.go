package tasks

import (
	"bytes"
	"fmt"
	"os"
	"runtime"

	"github.com/metalplug/metalplug/bench"
	"github.com/metalplug/metalplug/plugin/tf/lower"
	"github.com/metalplug/metalplug/setup/docs"
	"github.com/metalplug/metalplug/setup/toolchain"
	"github.com/metalplug/metalplug/sweep"
)

// OpErrorsPath is the sweep's generated table.
const OpErrorsPath = docs.OpErrorsPath

// SweepOptions narrow a sweep: one op (and dtype), verbosely, or a check that
// the committed docs/op_errors.md is what the sweep produces.
type SweepOptions struct {
	Op, DType string
	Verbose   bool
	// CheckDocs fails the sweep when docs/op_errors.md was stale (it is
	// rewritten either way, ready to commit).
	CheckDocs bool
	// Model sweeps the Metal driver's lowering on the model of MPSGraph
	// instead of the host driver, with no part of a program allowed on the CPU, and writes
	// docs/op_errors_metal_model.md: a case passes if the device's answer
	// is TensorFlow's CPU's or the lowering says the program needs the CPU.
	Model bool
}

// modelAbout heads the model's sweep table.
const modelAbout = "Driver: the Metal driver's lowering run against the model of MPSGraph (`backend/driver/metal/model`, macOS 15.0), " +
	"on the CPU, with no part of a program allowed on the CPU (`METALPLUG_DRIVER=metal-model METALPLUG_NO_CPU_FALLBACK=1`). " +
	"\"verified\" means that the MPSGraph program the lowering built, run with the documented semantics of each primitive, " +
	"gave TensorFlow's CPU answers; it is not a result of a GPU. \"needs cpu\" cases are programs the driver hands to the CPU " +
	"on a Mac, for the reasons listed below."

// Sweep builds the library against the pinned TensorFlow and runs every
// (op, dtype) it registers on the device and on the CPU. A full sweep writes
// docs/op_errors.md.
func Sweep(logf Logf, o SweepOptions) error {
	opts, err := sweepSetup(logf)
	if err != nil {
		return err
	}
	opts.Verbose = o.Verbose
	table := OpErrorsPath
	if o.Model {
		opts.Env = []string{"METALPLUG_DRIVER=metal-model", "METALPLUG_NO_CPU_FALLBACK=1"}
		opts.About = modelAbout
		table = docs.OpErrorsModelPath
	}
	if o.Op != "" {
		opts.Ops = []string{o.Op}
	}
	if o.DType != "" {
		opts.DTypes = []string{o.DType}
	}
	rep, err := sweep.Run(opts)
	if err != nil {
		return err
	}
	logf("%s", rep.Summary())
	if o.Op == "" && o.DType == "" {
		doc := []byte(rep.OpErrorsMarkdown())
		old, _ := os.ReadFile(table)
		if err := os.WriteFile(table, doc, 0o644); err != nil {
			return err
		}
		// The kernel table carries the sweep's verdicts: regenerate it too.
		kernels := []byte(docs.Kernels("."))
		oldKernels, _ := os.ReadFile(docs.KernelsPath)
		if err := os.WriteFile(docs.KernelsPath, kernels, 0o644); err != nil {
			return err
		}
		if o.CheckDocs && !bytes.Equal(oldKernels, kernels) {
			old = nil // report it as stale below
		}
		if o.CheckDocs && !sweep.SameVerdicts(old, doc) {
			if err := rep.Err(); err != nil {
				return err
			}
			return fmt.Errorf("%s or %s was stale: the sweep rewrote them; commit the new ones", table, docs.KernelsPath)
		}
	}
	return rep.Err()
}

// sweepSetup makes the pinned TensorFlow's venv, builds the library
// against it, and returns the sweep's options for them: every sweep (the
// host driver's, the model's, a Mac's GPU's) starts from these.
func sweepSetup(logf Logf) (sweep.Options, error) {
	t, _, err := pinnedToolchain("", libraryPath(runtime.GOOS), logf)
	if err != nil {
		return sweep.Options{}, err
	}
	opts := sweep.Options{Python: t.Python(), Library: t.Library, Out: os.Stdout}
	if !t.Report.ResourceVariableAPI() {
		opts.NeedsEntryPoint = lower.VariableOps()
	}
	return opts, nil
}

// Bench builds the library against the pinned TensorFlow and measures it
// against TensorFlow's CPU (package bench), writing BENCHMARKS.md, its plot
// and the measurement it renders from.
func Bench(logf Logf) error {
	t, _, err := pinnedToolchain("", libraryPath(runtime.GOOS), logf)
	if err != nil {
		return err
	}
	rep, err := bench.Run(bench.Options{Root: ".", Python: t.Python(), Lib: t.Library, Log: logf})
	if err != nil {
		return err
	}
	if rep.ModelSteps, err = bench.RunModelSteps(bench.StepOptions{Root: ".", Python: t.Python(), Lib: t.Library, Log: logf}); err != nil {
		return err
	}
	j, err := jaxVenv(logf)
	if err != nil {
		return err
	}
	jabs, err := toolchain.Build(j.Report, toolchain.Options{Root: ".", Out: libraryPath(j.Report.GOOS, "jax"), Log: logf})
	if err != nil {
		return err
	}
	if rep.Jax, err = bench.RunJax(bench.JaxOptions{Root: ".", Python: j.Report.Interpreter.Path, Lib: jabs, Log: logf}); err != nil {
		return err
	}
	if rep.Dispatch, err = bench.RunDispatch(bench.DispatchOptions{Root: ".", Log: logf, Frontends: []bench.DispatchFrontend{
		{Name: "tensorflow", Python: t.Python(), Lib: t.Library},
		{Name: "jax", Python: j.Report.Interpreter.Path, Lib: jabs},
	}}); err != nil {
		return err
	}
	if err := rep.Plot(bench.PlotPath); err != nil {
		return err
	}
	if err := rep.WriteJSON(bench.JSONPath); err != nil {
		return err
	}
	// Render from what was written, which names no machine's paths.
	saved, err := bench.ReadJSON(bench.JSONPath)
	if err != nil {
		return err
	}
	return os.WriteFile("BENCHMARKS.md", []byte(saved.Markdown()), 0o644)
}

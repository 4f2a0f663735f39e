// Package jaxsuite runs jax's own test suite (the tests/ directory of a jax
// checkout at the installed release's tag) on the metalplug device, on the
// host driver (the default) or on the Metal driver's lowering over the model
// of MPSGraph, and on jax's CPU as the reference, module by module, and
// keeps the results of both drivers in docs/jax_suite.json, from which
// docs/jax_suite.md is rendered. Every failure on the device is classified by explicit rules
// (classify.go); one that matches none counts as a bug of ours.
package jaxsuite

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// The committed results, relative to the source root.
const (
	JSONPath     = "docs/jax_suite.json"
	MarkdownPath = "docs/jax_suite.md"
)

// Report is docs/jax_suite.json: the jax the suite is from and what each
// module measured.
type Report struct {
	// Jax and Jaxlib are the installed release (the checkout is at its tag).
	Jax    string `json:"jax"`
	Jaxlib string `json:"jaxlib"`
	Python string `json:"python"`
	// Machine says where the wall times were measured: the OS, the
	// architecture and the number of cores.
	Machine string `json:"machine"`
	// Workers is the number of pytest-xdist workers each run used.
	Workers int `json:"workers"`
	// Generated is jax's number of generated cases per parameterized test
	// (JAX_NUM_GENERATED_CASES; jax's default unless it was set).
	Generated int `json:"generated_cases"`
	// Modules are the test modules of the checkout's tests/ directory:
	// every one, run or not, so the report says which were not.
	Modules []Module `json:"modules"`
}

// Module is one test module (tests/<name>.py): its results on the default
// driver (the host reference driver off macOS), kept where they always
// were, and its results on the Metal driver's lowering over the model of
// MPSGraph.
type Module struct {
	Name    string `json:"name"` // api_test, lax_numpy_test, ...
	Results        // on the default driver
	// Model is the module's run with METALPLUG_DRIVER=metal-model; nil
	// while it has not run there.
	Model *Results `json:"model,omitempty"`
}

// Results are what one driver's run of a module measured: the run on the
// device, the CPU's run of the device's failures, and those failures.
type Results struct {
	// Date is when the module last ran (UTC, RFC 3339); empty when it has
	// not run.
	Date string `json:"date,omitempty"`
	// Jax is the jax release it ran with; Commit the commit of this tree
	// the library was built from ("+changes" when the tree had changes
	// beside the report).
	Jax       string `json:"jax,omitempty"`
	Commit    string `json:"commit,omitempty"`
	Metalplug *Run   `json:"metalplug,omitempty"`
	// CPU is the reference run on jax's CPU of the device's failures. On
	// the model it runs only the failures whose CPU result the default
	// driver's run of the same release has not already given.
	CPU *Run `json:"cpu,omitempty"`
	// Failures are the tests that failed on the device, classified.
	Failures []Failure `json:"failures,omitempty"`
}

// Run is one pytest run of a module on one platform.
type Run struct {
	Passed  int     `json:"passed"`
	Failed  int     `json:"failed"` // failures and errors
	Skipped int     `json:"skipped"`
	Seconds float64 `json:"seconds"`
	// Platforms is the run's JAX_PLATFORMS; empty in the runs from before
	// it was recorded, which had the device alone ("metalplug").
	Platforms string `json:"platforms,omitempty"`
	// Rerun is set on a CPU run of the device's failures only (every
	// module measured since the CPU stopped running whole modules); a
	// CPU run without it ran the whole module.
	Rerun bool `json:"rerun,omitempty"`
	// Error says why the run has no per-test results (pytest could not
	// start, or the module timed out as a whole).
	Error string `json:"error,omitempty"`
}

// Failure is one test that failed on the device.
type Failure struct {
	ID    string `json:"id"`    // tests/api_test.py::APITest::testFoo
	Error string `json:"error"` // the first line of what it raised
	Class Class  `json:"class"`
	Rule  string `json:"rule"` // the rule that classified it
}

// On is the module's results on driver (DriverHost or DriverModel); nil
// for the model while it has not run there.
func (m *Module) On(driver string) *Results {
	if driver == DriverModel {
		return m.Model
	}
	return &m.Results
}

// Alone reports whether the module ran on the device without jax's CPU
// beside it (JAX_PLATFORMS=metalplug), as the first runs did.
func (r *Results) Alone() bool {
	return r != nil && r.Metalplug != nil && (r.Metalplug.Platforms == "" || r.Metalplug.Platforms == OnDevice)
}

// Ran reports whether there are results.
func (r *Results) Ran() bool { return r != nil && r.Metalplug != nil && r.CPU != nil }

// Counts of a module on the device: passed, failed (the failures that pass
// on CPU; Gaps of them for want of a lowering, see GapRule), failed on CPU
// too, and skipped.
type Counts struct {
	Passed, Failed, CPUToo, Skipped int
	Gaps                            int
}

// Counts splits the device run by class.
func (r *Results) Counts() Counts {
	var c Counts
	if r == nil || r.Metalplug == nil {
		return c
	}
	c.Passed, c.Skipped = r.Metalplug.Passed, r.Metalplug.Skipped
	for _, f := range r.Failures {
		switch {
		case f.Class == ClassCPU:
			c.CPUToo++
		case f.Rule == GapRule.Name:
			c.Failed++
			c.Gaps++
		default:
			c.Failed++
		}
	}
	return c
}

func (c *Counts) add(o Counts) {
	c.Passed += o.Passed
	c.Failed += o.Failed
	c.CPUToo += o.CPUToo
	c.Skipped += o.Skipped
	c.Gaps += o.Gaps
}

// Rate is the pass rate over the tests that ran, were not skipped and do
// not fail on jax's CPU too, in percent.
func (c Counts) Rate() float64 {
	if c.Passed+c.Failed == 0 {
		return 0
	}
	return 100 * float64(c.Passed) / float64(c.Passed+c.Failed)
}

// Load reads a report; a missing file is an empty report.
func Load(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return &Report{}, nil
	}
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// Save writes the report as indented JSON.
func (r *Report) Save(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Module returns the named module, adding it (not run) if it is new.
func (r *Report) Module(name string) *Module {
	for i := range r.Modules {
		if r.Modules[i].Name == name {
			return &r.Modules[i]
		}
	}
	r.Modules = append(r.Modules, Module{Name: name})
	sort.Slice(r.Modules, func(i, j int) bool { return r.Modules[i].Name < r.Modules[j].Name })
	return r.Module(name)
}

// SetModules makes the report list exactly the modules names (the
// checkout's), keeping the results of those it had.
func (r *Report) SetModules(names []string) {
	var keep []Module
	for _, m := range r.Modules {
		if slices.Contains(names, m.Name) {
			keep = append(keep, m)
		}
	}
	r.Modules = keep
	for _, n := range names {
		r.Module(n)
	}
}

// Totals sums the modules that ran on the default driver.
func (r *Report) Totals() (c Counts, ran int) { return r.TotalsOn(DriverHost) }

// TotalsOn sums the modules that ran on driver.
func (r *Report) TotalsOn(driver string) (c Counts, ran int) {
	for i := range r.Modules {
		if res := r.Modules[i].On(driver); res.Ran() {
			c.add(res.Counts())
			ran++
		}
	}
	return c, ran
}

// firstLine is the first non-empty line of s, at most n bytes.
func firstLine(s string, n int) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > n {
				l = l[:n] + "..."
			}
			return l
		}
	}
	return ""
}

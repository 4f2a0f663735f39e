package jaxsuite

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// PriorArt is the pass rate the prior art reports for the suite of the jax
// release it pins (27,649 of 27,779 tests), the figure to beat.
const PriorArt = 99.53

// classMeaning says what each class means, for the report.
var classMeaning = map[Class]string{
	ClassOurs:   "a bug of ours: a wrong value, a missing op or feature, a crash (the default for anything no rule explains)",
	ClassPolicy: "what the platform does on purpose (float64 compute, denormals, one device) where the test expects otherwise",
	ClassJax:    "jax turns the platform away itself (hard-coded platform lists)",
	ClassCPU:    "fails on jax's CPU too: counted apart, not in the pass rate",
}

// driverTitle names each driver in the report's tables.
var driverTitle = map[string]string{
	DriverHost:  "host driver",
	DriverModel: "Metal lowering on the model",
}

// Markdown renders docs/jax_suite.md from the report: the default driver's
// results and the model's, side by side.
func (r *Report) Markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# jax's own test suite on the device\n\n")
	w("Generated from [jax_suite.json](jax_suite.json) by `go tool mage jaxsuite <jax checkout>` (or `jaxsuiteModules <jax checkout> <modules>`) on the host driver and `go tool mage jaxsuiteModel <jax checkout>` (or `jaxsuiteModelModules <jax checkout> <modules>`) on the model; a test checks that this file renders from it. ")
	w("The run needs a checkout of jax at the installed release's tag (jax's tests are in neither its wheel nor its sdist), so it runs in a session, not in CI, and its result is committed.\n\n")
	w("What runs: the modules of jax %s's `tests/` (tag `jax-v%s`), each with pytest with `JAX_PLATFORMS=metalplug,cpu`: the device is jax's default backend, so every test runs on it, on the **host reference driver** (pure Go, on the CPU; the Metal driver's lowering is the second run, below), and jax's CPU is beside it as on any GPU machine, for what needs a local CPU device by design (jax.debug.callback, colocated Python, a cross-platform device_put); modules marked *alone* ran with `JAX_PLATFORMS=metalplug` only. then the tests that failed there run again with `JAX_PLATFORMS=cpu`, jax's own CPU backend, as the reference (modules marked *whole* ran whole on CPU too). ", r.Jax, r.Jax)
	w("jaxlib %s, Python %s, %d pytest-xdist workers, %s; jax's defaults otherwise (%d generated cases per parameterized test, x64 off). ", r.Jaxlib, r.Python, r.Workers, r.Machine, r.Generated)
	w("Both platforms offer one device, so multi-device tests skip on both.\n\n")
	w("The second run, **the model**: the same modules the same way, with the device on the Metal driver's lowering over the model of MPSGraph (`METALPLUG_HOST_DEVICE=1 METALPLUG_DRIVER=metal-model`, macOS 15, the model's default). ")
	w("Each program is lowered to MPSGraph's primitives as on a Mac, and the model runs them with their documented semantics, on the CPU: its figures are those of the lowering against a model of MPSGraph, not of a GPU. ")
	w("With `METALPLUG_NO_CPU_FALLBACK=unplanned` a part of a program may run on the host only where it is the host's by design (matrix decompositions, host callbacks, and float64, which Apple GPUs lack); a program that needs the host for anything else fails to compile, naming the op and the reason, and counts as ours (rule *%s*; the table [Not on the GPU yet](#not-on-the-gpu-yet-the-model) says which missing lowerings cost how many tests). ", GapRule.Name)
	w("Its failures are classified by the same rules; the CPU reference of a test that failed on the host driver too (with the same jax) is that run's, and the model's other failures run again on jax's CPU.\n\n")

	tot, ran := r.Totals()
	mtot, mran := r.TotalsOn(DriverModel)
	var devWall, cpuWall, mDevWall, mCPUWall float64
	var cpuSkipped int
	var notRun, modelNotRun []string
	var both, mboth Counts
	var nboth int
	for i := range r.Modules {
		m := &r.Modules[i]
		if m.Model.Ran() {
			mDevWall += m.Model.Metalplug.Seconds
			mCPUWall += m.Model.CPU.Seconds
		} else {
			modelNotRun = append(modelNotRun, m.Name)
		}
		if !m.Ran() {
			notRun = append(notRun, m.Name)
			continue
		}
		devWall += m.Metalplug.Seconds
		cpuWall += m.CPU.Seconds
		if !m.CPU.Rerun {
			cpuSkipped += m.CPU.Skipped
		}
		if m.Model.Ran() {
			both.add(m.Counts())
			mboth.add(m.Model.Counts())
			nboth++
		}
	}
	w("## Summary\n\n")
	// mcell is a cell of the model's column: blank while it has not run.
	mcell := func(format string, args ...any) string {
		if mran == 0 {
			return ""
		}
		return fmt.Sprintf(format, args...)
	}
	w("| | %s | %s |\n| --- | ---: | ---: |\n", driverTitle[DriverHost], driverTitle[DriverModel])
	w("| modules run | %d of %d | %d of %d |\n", ran, len(r.Modules), mran, len(r.Modules))
	w("| passed | %d | %s |\n", tot.Passed, mcell("%d", mtot.Passed))
	w("| failed (passing on jax's CPU) | %d | %s |\n", tot.Failed, mcell("%d", mtot.Failed))
	w("| of which not on the GPU yet | %d | %s |\n", tot.Gaps, mcell("%d", mtot.Gaps))
	w("| fail on jax's CPU too | %d | %s |\n", tot.CPUToo, mcell("%d", mtot.CPUToo))
	w("| skipped | %d | %s |\n", tot.Skipped, mcell("%d", mtot.Skipped))
	w("| pass rate of the tests that ran and were not skipped, leaving apart those failing on CPU too | **%.2f%%** | %s |\n", tot.Rate(), mcell("**%.2f%%**", mtot.Rate()))
	if nboth > 0 && (nboth < ran || nboth < mran) {
		w("| the same, over the modules both have run (%d) | %.2f%% | %.2f%% |\n", nboth, both.Rate(), mboth.Rate())
	}
	w("| wall time on the device | %s | %s |\n\n", dur(devWall), mcell("%s", dur(mDevWall)))

	w("On the host driver:\n\n")
	if ran < len(r.Modules) {
		w("**%d of %d modules have run**: the figures are of those modules only, not of the whole suite (the modules not run are listed below).\n\n", ran, len(r.Modules))
	} else {
		w("All %d modules have run.\n\n", ran)
	}
	w("- Pass rate over the tests that ran and were not skipped, leaving apart the %d that fail on jax's CPU too: **%.2f%%** (%d passed, %d failed); the prior art reports %.2f%% for the whole suite of the release it pins.\n", tot.CPUToo, tot.Rate(), tot.Passed, tot.Failed, PriorArt)
	w("- Counting the CPU's failures too: %.2f%% (%d of %d).\n", pct(tot.Passed, tot.Passed+tot.Failed+tot.CPUToo), tot.Passed, tot.Passed+tot.Failed+tot.CPUToo)
	ours := r.classCount(DriverHost, ClassOurs)
	w("- Leaving apart the jax-side and policy failures too, that is over what the plugin itself is asked to do: %.2f%% (%d passed, %d failed).\n", pct(tot.Passed, tot.Passed+ours), tot.Passed, ours)
	w("- Skipped on the device: %d (jax's tests skip on one device what needs several, and run some cases only on cpu, gpu or tpu, by jax's own test_device_matches); on CPU, in the modules that ran whole there: %d.\n", tot.Skipped, cpuSkipped)
	w("- Wall time on this machine: %s on the device, %s on CPU.\n", dur(devWall), dur(cpuWall))
	rules := r.ruleCounts(DriverHost)
	if l := largest(rules); l != "" {
		w("- Largest remaining classes: %s.\n", l)
	}
	w("\nOn the model:\n\n")
	switch {
	case mran == 0:
		w("No module has run yet.\n")
	default:
		if mran < len(r.Modules) {
			w("**%d of %d modules have run**: the figures are of those modules only, not of the whole suite.\n\n", mran, len(r.Modules))
		} else {
			w("All %d modules have run.\n\n", mran)
		}
		w("- Pass rate over the tests that ran and were not skipped, leaving apart the %d that fail on jax's CPU too: **%.2f%%** (%d passed, %d failed).\n", mtot.CPUToo, mtot.Rate(), mtot.Passed, mtot.Failed)
		w("- Not on the GPU yet: %d of the failures are programs that need the host for an op whose home is not the host (%d ops and reasons, below).\n", mtot.Gaps, len(r.gaps()))
		mours := r.classCount(DriverModel, ClassOurs)
		w("- Leaving apart the jax-side and policy failures too: %.2f%% (%d passed, %d failed).\n", pct(mtot.Passed, mtot.Passed+mours), mtot.Passed, mours)
		w("- Skipped on the device: %d.\n", mtot.Skipped)
		w("- Wall time on this machine: %s on the device (the model, on the CPU: no measure of a GPU), %s on CPU (the model's own failures).\n", dur(mDevWall), dur(mCPUWall))
		if l := largest(r.ruleCounts(DriverModel)); l != "" {
			w("- Largest remaining classes: %s.\n", l)
		}
	}

	w("\n## Failures by class\n\n| class | %s | %s | what it means |\n| --- | ---: | ---: | --- |\n", driverTitle[DriverHost], driverTitle[DriverModel])
	for _, c := range Classes {
		w("| %s | %d | %s | %s |\n", c, r.classCount(DriverHost, c), mcell("%d", r.classCount(DriverModel, c)), classMeaning[c])
	}
	w("\n## Failures by rule\n\nThe rules (jaxsuite/classify.go) are tried in order and the first that matches a failure's test id and error line classifies it; a failure that matches none is a bug of ours.\n\n")
	w("| rule | class | %s | %s | why |\n| --- | --- | ---: | ---: | --- |\n", driverTitle[DriverHost], driverTitle[DriverModel])
	mrules := map[string]int{}
	for _, rc := range r.ruleCounts(DriverModel) {
		mrules[rc.rule.Name] = rc.n
	}
	sort.SliceStable(rules, func(i, j int) bool {
		return rules[i].n+mrules[rules[i].rule.Name] > rules[j].n+mrules[rules[j].rule.Name]
	})
	for _, rc := range rules {
		w("| %s | %s | %d | %s | %s |\n", cell(rc.rule.Name), rc.rule.Class, rc.n, mcell("%d", mrules[rc.rule.Name]), cell(rc.rule.Why))
	}

	w("\n## Not on the GPU yet (the model)\n\n")
	gaps := r.gaps()
	switch {
	case mran == 0:
		w("The model has not run yet.\n")
	case len(gaps) == 0:
		w("No test of the modules run on the model failed for want of a lowering.\n")
	default:
		w("The model's failures by rule *%s*, by the op and the reason the compile error names: `tests` fail for it (a program may name several, and counts for each), `only` of them for it alone, so that its lowering would make them compile.\n\n", GapRule.Name)
		w("| op | reason | tests | only | modules |\n| --- | --- | ---: | ---: | --- |\n")
		for _, g := range gaps {
			w("| %s | %s | %d | %d | %s |\n", cell(g.Op), cell(g.Reason), g.tests, g.only, strings.Join(g.modules, ", "))
		}
	}

	w("\n## Modules\n\n`failed` is the device's failures that pass on CPU; `cpu too` those that fail there too; `commit` the commit of this tree the library was built from (a fix made later is not in that module's figures); the CPU columns count the CPU's run of the device's failures, or of the whole module where it says *whole*. ")
	w("The model's columns are blank where the module has not run on it; `not on GPU` is those of its failures for want of a lowering.\n\n")
	w("| module | date | commit | passed | failed | cpu too | skipped | wall | CPU passed | CPU failed | CPU skipped | CPU wall | model passed | model failed | not on GPU | model cpu too | model skipped | model wall |\n")
	w("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for i := range r.Modules {
		m := &r.Modules[i]
		if !m.Ran() && !m.Model.Ran() {
			continue
		}
		name := m.Name
		if m.Alone() {
			name += " *alone*"
		}
		host := strings.Repeat(" |", 11)
		if m.Ran() {
			c := m.Counts()
			if !m.CPU.Rerun {
				name += " *whole*"
			}
			host = fmt.Sprintf(" %s | %s | %d | %d | %d | %d | %s | %d | %d | %d | %s |", day(m.Date), orDash(m.Commit), c.Passed, c.Failed, c.CPUToo, c.Skipped,
				dur(m.Metalplug.Seconds), m.CPU.Passed, m.CPU.Failed, m.CPU.Skipped, dur(m.CPU.Seconds))
		}
		model := strings.Repeat(" |", 6)
		if m.Model.Ran() {
			c := m.Model.Counts()
			model = fmt.Sprintf(" %d | %d | %d | %d | %d | %s |", c.Passed, c.Failed, c.Gaps, c.CPUToo, c.Skipped, dur(m.Model.Metalplug.Seconds))
		}
		w("| %s |%s%s\n", name, host, model)
	}
	for _, m := range r.Modules {
		for _, run := range []struct {
			on string
			r  *Run
		}{{OnDevice, m.Metalplug}, {OnCPU, m.CPU}} {
			if run.r != nil && run.r.Error != "" {
				w("\n%s on %s: %s\n", m.Name, run.on, run.r.Error)
			}
		}
		if m.Model != nil {
			for _, run := range []struct {
				on string
				r  *Run
			}{{OnDevice, m.Model.Metalplug}, {OnCPU, m.Model.CPU}} {
				if run.r != nil && run.r.Error != "" {
					w("\n%s on %s, the model's run: %s\n", m.Name, run.on, run.r.Error)
				}
			}
		}
	}
	if len(notRun) > 0 {
		w("\nNot run yet (%d): %s.\n", len(notRun), strings.Join(notRun, ", "))
	}
	switch {
	case mran == 0:
		w("\nNot run on the model yet: any module.\n")
	case len(modelNotRun) > 0:
		w("\nNot run on the model yet (%d): %s.\n", len(modelNotRun), strings.Join(modelNotRun, ", "))
	}
	w("\n## Failures\n")
	for _, m := range r.Modules {
		failureTable(w, m.Name, "", m.Failures)
	}
	if mtot.Failed+mtot.CPUToo > 0 {
		w("\n## Failures on the model\n")
		for _, m := range r.Modules {
			if m.Model != nil {
				failureTable(w, m.Name, " on the model", m.Model.Failures)
			}
		}
	}
	return b.String()
}

// failureTable writes the failures of a module's run, if any.
func failureTable(w func(string, ...any), module, on string, failures []Failure) {
	if len(failures) == 0 {
		return
	}
	w("\n### %s%s (%d)\n\n| test | class | rule | error |\n| --- | --- | --- | --- |\n", module, on, len(failures))
	for _, f := range failures {
		w("| %s | %s | %s | %s |\n", cell(strings.TrimPrefix(f.ID, "tests/"+module+".py::")), f.Class, cell(f.Rule), cell(f.Error))
	}
}

// largest lists the five rules with most failures but those failing on CPU
// too, for a summary.
func largest(rules []ruleCount) string {
	var out []string
	for _, rc := range rules {
		if rc.rule.Class != ClassCPU && rc.n > 0 && len(out) < 5 {
			out = append(out, fmt.Sprintf("%s (%s, %d)", rc.rule.Name, rc.rule.Class, rc.n))
		}
	}
	return strings.Join(out, "; ")
}

// failuresOn are the failures of every module on driver.
func (r *Report) failuresOn(driver string) []Failure {
	var out []Failure
	for i := range r.Modules {
		if res := r.Modules[i].On(driver); res != nil {
			out = append(out, res.Failures...)
		}
	}
	return out
}

// classCount counts the failures of class c on driver.
func (r *Report) classCount(driver string, c Class) int {
	n := 0
	for _, f := range r.failuresOn(driver) {
		if f.Class == c {
			n++
		}
	}
	return n
}

// gapCount is the tests one op and reason keeps from compiling on the
// model.
type gapCount struct {
	Gap
	tests, only int // failing for it; for it alone
	modules     []string
}

// gaps counts the model's failures of GapRule by op and reason, most tests
// first (ties by op, then reason).
func (r *Report) gaps() []gapCount {
	at := map[Gap]int{}
	var out []gapCount
	for i := range r.Modules {
		m := &r.Modules[i]
		if m.Model == nil {
			continue
		}
		for _, f := range m.Model.Failures {
			if f.Rule != GapRule.Name {
				continue
			}
			gs := Gaps(f.Error)
			for _, g := range gs {
				k, ok := at[g]
				if !ok {
					k = len(out)
					at[g] = k
					out = append(out, gapCount{Gap: g})
				}
				out[k].tests++
				if len(gs) == 1 {
					out[k].only++
				}
				if !slices.Contains(out[k].modules, m.Name) {
					out[k].modules = append(out[k].modules, m.Name)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.tests != b.tests {
			return a.tests > b.tests
		}
		if a.Op != b.Op {
			return a.Op < b.Op
		}
		return a.Reason < b.Reason
	})
	return out
}

type ruleCount struct {
	rule Rule
	n    int
}

// ruleCounts counts the failures on driver of each rule, most first (ties
// in rule order), every rule listed.
func (r *Report) ruleCounts(driver string) []ruleCount {
	all := AllRules()
	counts := make([]ruleCount, len(all))
	at := map[string]int{}
	for i, rule := range all {
		counts[i].rule = rule
		at[rule.Name] = i
	}
	for _, f := range r.failuresOn(driver) {
		if i, ok := at[f.Rule]; ok {
			counts[i].n++
		} else {
			counts[at[DefaultRule.Name]].n++
		}
	}
	sort.SliceStable(counts, func(i, j int) bool { return counts[i].n > counts[j].n })
	return counts
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// dur shows seconds as 1h02m03s, 2m03s or 3s.
func dur(s float64) string {
	return (time.Duration(s) * time.Second).Round(time.Second).String()
}

// day is the date of an RFC 3339 time.
func day(s string) string {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.Format("2006-01-02")
	}
	return s
}

// cell makes text safe in a table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "`", "'")
}

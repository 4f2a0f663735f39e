package jaxsuite

import (
	"fmt"
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

// Markdown renders docs/jax_suite.md from the report.
func (r *Report) Markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# jax's own test suite on the device\n\n")
	w("Generated from [jax_suite.json](jax_suite.json) by `go tool mage jaxsuite <jax checkout>` (or `jaxsuiteModules <jax checkout> <modules>`); a test checks that this file renders from it. ")
	w("The run needs a checkout of jax at the installed release's tag (jax's tests are in neither its wheel nor its sdist), so it runs in a session, not in CI, and its result is committed.\n\n")
	w("What runs: the modules of jax %s's `tests/` (tag `jax-v%s`), each with pytest with `JAX_PLATFORMS=metalplug,cpu`: the device is jax's default backend, so every test runs on it, on the **host reference driver** (pure Go, on the CPU; the Metal driver is not run here), and jax's CPU is beside it as on any GPU machine, for what needs a local CPU device by design (jax.debug.callback, colocated Python, a cross-platform device_put); modules marked *alone* ran with `JAX_PLATFORMS=metalplug` only. then the tests that failed there run again with `JAX_PLATFORMS=cpu`, jax's own CPU backend, as the reference (modules marked *whole* ran whole on CPU too). ", r.Jax, r.Jax)
	w("jaxlib %s, Python %s, %d pytest-xdist workers, %s; jax's defaults otherwise (%d generated cases per parameterized test, x64 off). ", r.Jaxlib, r.Python, r.Workers, r.Machine, r.Generated)
	w("Both platforms offer one device, so multi-device tests skip on both.\n\n")

	tot, ran := r.Totals()
	var devWall, cpuWall float64
	var cpuSkipped int
	var notRun []string
	for _, m := range r.Modules {
		if !m.Ran() {
			notRun = append(notRun, m.Name)
			continue
		}
		devWall += m.Metalplug.Seconds
		cpuWall += m.CPU.Seconds
		if !m.CPU.Rerun {
			cpuSkipped += m.CPU.Skipped
		}
	}
	w("## Summary\n\n")
	if ran < len(r.Modules) {
		w("**%d of %d modules have run**: the figures are of those modules only, not of the whole suite (the modules not run are listed below).\n\n", ran, len(r.Modules))
	} else {
		w("All %d modules have run.\n\n", ran)
	}
	w("- Pass rate over the tests that ran and were not skipped, leaving apart the %d that fail on jax's CPU too: **%.2f%%** (%d passed, %d failed); the prior art reports %.2f%% for the whole suite of the release it pins.\n", tot.CPUToo, tot.Rate(), tot.Passed, tot.Failed, PriorArt)
	w("- Counting the CPU's failures too: %.2f%% (%d of %d).\n", pct(tot.Passed, tot.Passed+tot.Failed+tot.CPUToo), tot.Passed, tot.Passed+tot.Failed+tot.CPUToo)
	ours := r.classCount(ClassOurs)
	w("- Leaving apart the jax-side and policy failures too, that is over what the plugin itself is asked to do: %.2f%% (%d passed, %d failed).\n", pct(tot.Passed, tot.Passed+ours), tot.Passed, ours)
	w("- Skipped on the device: %d (jax's tests skip on one device what needs several, and run some cases only on cpu, gpu or tpu, by jax's own test_device_matches); on CPU, in the modules that ran whole there: %d.\n", tot.Skipped, cpuSkipped)
	w("- Wall time on this machine: %s on the device, %s on CPU.\n", dur(devWall), dur(cpuWall))
	rules := r.ruleCounts()
	var largest []string
	for _, rc := range rules {
		if rc.rule.Class != ClassCPU && rc.n > 0 && len(largest) < 5 {
			largest = append(largest, fmt.Sprintf("%s (%s, %d)", rc.rule.Name, rc.rule.Class, rc.n))
		}
	}
	if len(largest) > 0 {
		w("- Largest remaining classes: %s.\n", strings.Join(largest, "; "))
	}
	w("\n## Failures by class\n\n| class | failures | what it means |\n| --- | ---: | --- |\n")
	for _, c := range Classes {
		w("| %s | %d | %s |\n", c, r.classCount(c), classMeaning[c])
	}
	w("\n## Failures by rule\n\nThe rules (jaxsuite/classify.go) are tried in order and the first that matches a failure's test id and error line classifies it; a failure that matches none is a bug of ours.\n\n")
	w("| rule | class | failures | why |\n| --- | --- | ---: | --- |\n")
	for _, rc := range rules {
		w("| %s | %s | %d | %s |\n", cell(rc.rule.Name), rc.rule.Class, rc.n, cell(rc.rule.Why))
	}
	w("\n## Modules\n\n`failed` is the device's failures that pass on CPU; `cpu too` those that fail there too; `commit` the commit of this tree the library was built from (a fix made later is not in that module's figures); the CPU columns count the CPU's run of the device's failures, or of the whole module where it says *whole*.\n\n")
	w("| module | date | commit | passed | failed | cpu too | skipped | wall | CPU passed | CPU failed | CPU skipped | CPU wall |\n")
	w("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, m := range r.Modules {
		if !m.Ran() {
			continue
		}
		c := m.Counts()
		name := m.Name
		if m.Alone() {
			name += " *alone*"
		}
		if !m.CPU.Rerun {
			name += " *whole*"
		}
		w("| %s | %s | %s | %d | %d | %d | %d | %s | %d | %d | %d | %s |\n", name, day(m.Date), orDash(m.Commit), c.Passed, c.Failed, c.CPUToo, c.Skipped,
			dur(m.Metalplug.Seconds), m.CPU.Passed, m.CPU.Failed, m.CPU.Skipped, dur(m.CPU.Seconds))
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
	}
	if len(notRun) > 0 {
		w("\nNot run yet (%d): %s.\n", len(notRun), strings.Join(notRun, ", "))
	}
	w("\n## Failures\n")
	for _, m := range r.Modules {
		if len(m.Failures) == 0 {
			continue
		}
		w("\n### %s (%d)\n\n| test | class | rule | error |\n| --- | --- | --- | --- |\n", m.Name, len(m.Failures))
		for _, f := range m.Failures {
			w("| %s | %s | %s | %s |\n", cell(strings.TrimPrefix(f.ID, "tests/"+m.Name+".py::")), f.Class, cell(f.Rule), cell(f.Error))
		}
	}
	return b.String()
}

// classCount counts the failures of class c.
func (r *Report) classCount(c Class) int {
	n := 0
	for _, m := range r.Modules {
		for _, f := range m.Failures {
			if f.Class == c {
				n++
			}
		}
	}
	return n
}

type ruleCount struct {
	rule Rule
	n    int
}

// ruleCounts counts the failures of each rule, most first (ties in rule
// order), every rule listed.
func (r *Report) ruleCounts() []ruleCount {
	all := AllRules()
	counts := make([]ruleCount, len(all))
	at := map[string]int{}
	for i, rule := range all {
		counts[i].rule = rule
		at[rule.Name] = i
	}
	for _, m := range r.Modules {
		for _, f := range m.Failures {
			if i, ok := at[f.Rule]; ok {
				counts[i].n++
			} else {
				counts[at[DefaultRule.Name]].n++
			}
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

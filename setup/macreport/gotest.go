package macreport

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Result is a case's outcome in a go test run.
type Result string

// The outcomes. NoResult is a case that started and never ended: the test
// binary crashed, timed out or was killed while it ran.
const (
	Pass     Result = "pass"
	Fail     Result = "fail"
	Skip     Result = "skip"
	NoResult Result = "no result"
)

// Case is one test or subtest of a run.
type Case struct {
	Name   string // as go test names it: TestConformance/Ops/add
	Result Result
	// Output is what the case printed itself (t.Log, t.Error, a panic),
	// without go test's framing lines (=== RUN, --- FAIL) and with the
	// common indentation removed: for a failure, its text.
	Output  string
	Elapsed float64 // seconds
}

// Run is one `go test -json` run of a package.
type Run struct {
	Cases []Case // in the order they started
	// Passed is go test's verdict on the package.
	Passed bool
	// Output is what no case printed: a build failure, a crash outside a
	// test, a timeout's stack, stderr; empty when there was nothing but
	// go test's own PASS/FAIL lines.
	Output  string
	Elapsed float64 // seconds
}

// Event is one line of `go test -json` (cmd/test2json), the fields read
// here; build-output events (Go 1.24 and later) carry a build's errors.
type Event struct {
	Action  string
	Test    string
	Output  string
	Elapsed float64
}

// ParseTestJSON reads a `go test -json` stream of one package. Lines that
// are not JSON (what go test printed before -json took over, or a
// toolchain's own complaint) are kept as the run's output, since they are
// usually why it failed.
func ParseTestJSON(r io.Reader) (*Run, error) {
	run := &Run{}
	byName := map[string]int{}
	outputs := map[string]*strings.Builder{}
	var pkg strings.Builder
	ended := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e Event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			pkg.Write(line)
			pkg.WriteByte('\n')
			continue
		}
		if e.Test == "" {
			switch e.Action {
			case "output", "build-output":
				pkg.WriteString(e.Output)
			case "pass", "fail":
				run.Passed, run.Elapsed, ended = e.Action == "pass", e.Elapsed, true
			}
			continue
		}
		i, seen := byName[e.Test]
		if !seen {
			i = len(run.Cases)
			byName[e.Test] = i
			run.Cases = append(run.Cases, Case{Name: e.Test, Result: NoResult})
			outputs[e.Test] = &strings.Builder{}
		}
		switch e.Action {
		case "output":
			outputs[e.Test].WriteString(e.Output)
		case "pass", "fail", "skip":
			run.Cases[i].Result, run.Cases[i].Elapsed = Result(e.Action), e.Elapsed
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading go test -json: %w", err)
	}
	for i := range run.Cases {
		run.Cases[i].Output = caseText(outputs[run.Cases[i].Name].String())
	}
	run.Output = packageText(pkg.String())
	if !ended {
		run.Passed = false // go test never said: it did not finish
	}
	return run, nil
}

// Case finds a case by name.
func (r *Run) Case(name string) (Case, bool) {
	for _, c := range r.Cases {
		if c.Name == name {
			return c, true
		}
	}
	return Case{}, false
}

// Counts are the run's cases by result.
func (r *Run) Counts() map[Result]int {
	n := map[Result]int{}
	for _, c := range r.Cases {
		n[c.Result]++
	}
	return n
}

// Failed says whether the run failed: go test said so, or a case failed or
// never ended.
func (r *Run) Failed() bool {
	n := r.Counts()
	return !r.Passed || n[Fail] > 0 || n[NoResult] > 0
}

// FailsInSubtests says whether a subtest of the named case failed or never
// ended: a parent fails with its subtests, and its own text is then its log
// (TestConformance's lists what ran on the host), not why it failed.
func (r *Run) FailsInSubtests(name string) bool {
	for _, c := range r.Cases {
		if strings.HasPrefix(c.Name, name+"/") && (c.Result == Fail || c.Result == NoResult) {
			return true
		}
	}
	return false
}

// Why is one line on why the named case did not pass: the first line of
// its failure, or of its first failing subtest's, or else what the run
// printed outside any case (a build failure, a crash before it started).
func (r *Run) Why(name string) string {
	inherited := r.FailsInSubtests(name) // then its own text is its log
	for _, c := range r.Cases {
		own, sub := c.Name == name && !inherited, strings.HasPrefix(c.Name, name+"/")
		if (own || sub) && (c.Result == Fail || c.Result == NoResult) {
			if l := firstLine(c.Output); l != "" {
				return l
			}
		}
	}
	if c, ok := r.Case(name); ok && c.Result == Skip {
		return "it was skipped: " + firstLine(c.Output)
	}
	if l := firstLine(r.Output); l != "" {
		return l
	}
	if _, ok := r.Case(name); !ok {
		return name + " did not run"
	}
	return name + " did not pass, and said nothing"
}

// logLine is a t.Log line: file.go:N: message.
var logLine = regexp.MustCompile(`^\S+\.go:\d+: (.*)$`)

// Logged is the first message test logged that starts with prefix, without
// the prefix: TestConformance logs "on <the driver's description>".
func (r *Run) Logged(test, prefix string) string {
	c, ok := r.Case(test)
	if !ok {
		return ""
	}
	for _, l := range strings.Split(c.Output, "\n") {
		if m := logLine.FindStringSubmatch(strings.TrimSpace(l)); m != nil && strings.HasPrefix(m[1], prefix) {
			return strings.TrimPrefix(m[1], prefix)
		}
	}
	return ""
}

// framing are go test's own lines around a case's output.
var framing = []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- PASS", "--- FAIL", "--- SKIP", "--- BENCH"}

// caseText is a case's output without the framing lines and without the
// indentation go test gives a (sub)test's lines, which grows with its depth
// and would make the same failure read differently at two depths.
func caseText(s string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		t := strings.TrimSpace(l)
		if t == "" || hasAnyPrefix(t, framing) {
			continue
		}
		lines = append(lines, strings.TrimRight(l, " \t"))
	}
	return dedent(lines)
}

// packageText is a package's own output without go test's verdict lines.
func packageText(s string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		t := strings.TrimSpace(l)
		if t == "" || t == "PASS" || t == "FAIL" || hasAnyPrefix(l, []string{"ok  \t", "FAIL\t", "coverage: "}) {
			continue
		}
		lines = append(lines, strings.TrimRight(l, " \t"))
	}
	return dedent(lines)
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// dedent removes the indentation all lines share.
func dedent(lines []string) string {
	common := -1
	for _, l := range lines {
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if common < 0 || n < common {
			common = n
		}
	}
	for i, l := range lines {
		lines[i] = l[max(common, 0):]
	}
	return strings.Join(lines, "\n")
}

// firstLine is s's first non-blank line that is not a build's "# package"
// heading, which says where and not what.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "# ") {
			return t
		}
	}
	return ""
}

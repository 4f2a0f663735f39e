// Package macreport is the report `go tool mage macreport` writes for a Mac
// user to attach to an issue: the machine, the Metal driver's conformance
// suite on the GPU and on the model of MPSGraph side by side (the cases
// where they differ first), the TensorFlow and JAX end-to-end checks on
// the GPU, and the op sweep's verdicts there. It only renders what the
// caller ran (tasks runs it), so that the rendering is tested here
// on fixtures, off a Mac.
package macreport

import (
	"fmt"
	"strings"
	"time"
)

// Path is where the report is written, relative to the repository.
const Path = "build/macreport.md"

// Machine is what the report says about where it ran.
type Machine struct {
	OS     string // "macOS 15.3.1 (24D70)", or the system that is not macOS
	Chip   string // sysctl machdep.cpu.brand_string: "Apple M2 Pro"
	GPU    string // the Metal device as the driver describes it; empty if none opened
	Go     string // `go version`
	Commit string // the library's commit, and whether the tree had changes
	// TensorFlow and Jax are the frameworks the end-to-end checks and the
	// sweep ran with; empty when those did not run.
	TensorFlow, Jax string
}

// Section is one go test run of the report.
type Section struct {
	Command string // what ran, for a reader to run it again
	Run     *Run   // nil when it did not run
	// Skipped says why it was not run (no usable GPU, left out by choice):
	// not a failure.
	Skipped string
	// Err says why it could not run (a venv, a build, go itself): a failure.
	Err string
}

// Sweep is the op sweep's outcome on the GPU, as counts and the rows that
// are not verified.
type Sweep struct {
	TensorFlow                                              string
	Kernels                                                 int // TensorFlow's kernel registrations for the device
	Cases, Verified, NeedsEntryPoint, NeedsCPU, Unaccounted int
	AuditProblems, Problems                                 []string
	Wall                                                    time.Duration
	Rows                                                    []SweepRow
	ModelTable                                              string // the committed table Rows' Model verdicts come from
	FullTable                                               string // where the whole table of this sweep was written
}

// SweepRow is one (op, dtypes) case the GPU did not verify.
type SweepRow struct {
	Op, DTypes string
	Status     string // the GPU's verdict
	Model      string // the model's verdict in the committed table; "" if it has no such row
	Detail     string // the first line of why
}

// SweepSection is the sweep's part of the report.
type SweepSection struct {
	Result  *Sweep
	Skipped string // why it was not run: not a failure
	Err     string // why it could not run: a failure
}

// Report is everything the file says.
type Report struct {
	Generated time.Time
	Machine   Machine
	// NoGPU, when not empty, is the one line that says why nothing ran on
	// a GPU (not a Mac, or a Mac whose GPU the driver cannot use); the
	// report opens with it.
	NoGPU    string
	GPU      Section // the conformance suite through the darwin adapter
	Model    Section // the same suite on the model of MPSGraph
	EndToEnd Section // TensorFlow and jax on the device
	Sweep    SweepSection
}

// Failures are the report's failures, one line each; none when everything
// that ran passed. A GPU that was not there is not a failure: NoGPU says it.
func (r *Report) Failures() []string {
	var out []string
	for _, s := range []struct {
		name string
		sec  Section
	}{{"the conformance suite on the GPU", r.GPU}, {"the conformance suite on the model", r.Model}, {"the end-to-end checks", r.EndToEnd}} {
		switch {
		case s.sec.Err != "":
			out = append(out, fmt.Sprintf("%s could not run: %s", s.name, s.sec.Err))
		case s.sec.Run != nil && s.sec.Run.Failed():
			n := s.sec.Run.Counts()
			line := fmt.Sprintf("%s: %d of %d cases failed, %d without a result", s.name, n[Fail], len(s.sec.Run.Cases), n[NoResult])
			if !s.sec.Run.Passed && n[Fail] == 0 && n[NoResult] == 0 {
				line = fmt.Sprintf("%s: go test failed outside any case: %s", s.name, firstLine(s.sec.Run.Output))
			}
			out = append(out, line)
		}
	}
	switch sw := r.Sweep; {
	case sw.Err != "":
		out = append(out, "the sweep could not run: "+sw.Err)
	case sw.Result != nil && (sw.Result.Unaccounted > 0 || len(sw.Result.AuditProblems) > 0 || len(sw.Result.Problems) > 0):
		out = append(out, fmt.Sprintf("the sweep: %d cases unaccounted, %d registration problems, %d worker deaths not pinned on a case",
			sw.Result.Unaccounted, len(sw.Result.AuditProblems), len(sw.Result.Problems)))
	}
	return out
}

// Markdown renders the report.
func (r *Report) Markdown() string {
	var b strings.Builder
	b.WriteString("# metalplug on a Mac: report\n\n")
	if r.NoGPU != "" {
		fmt.Fprintf(&b, "**%s**\n\n", oneLine(r.NoGPU))
	}
	fmt.Fprintf(&b, "Written by `go tool mage macreport` on %s. Attach this file to an issue (failure texts "+
		"may name paths on this machine).\n\n", r.Generated.UTC().Format("2006-01-02 15:04 MST"))
	if f := r.Failures(); len(f) > 0 {
		b.WriteString("Failed:\n\n")
		for _, l := range f {
			fmt.Fprintf(&b, "- %s\n", oneLine(l))
		}
		b.WriteString("\n")
	} else {
		b.WriteString("Everything that ran passed.\n\n")
	}
	r.writeMachine(&b)
	r.writeConformance(&b)
	r.writeEndToEnd(&b)
	r.writeSweep(&b)
	return b.String()
}

func (r *Report) writeMachine(b *strings.Builder) {
	m := r.Machine
	b.WriteString("## Machine\n\n| | |\n| --- | --- |\n")
	for _, kv := range [][2]string{
		{"system", m.OS}, {"chip", m.Chip}, {"Metal device", m.GPU}, {"Go", m.Go}, {"metalplug", m.Commit},
		{"TensorFlow", m.TensorFlow}, {"jax", m.Jax},
	} {
		if kv[1] == "" {
			if kv[0] != "Metal device" {
				continue
			}
			kv[1] = "none opened"
		}
		fmt.Fprintf(b, "| %s | %s |\n", kv[0], cell(kv[1]))
	}
	b.WriteString("\n")
}

func (r *Report) writeConformance(b *strings.Builder) {
	b.WriteString("## Conformance suite (`backend/driver/metal`)\n\n")
	b.WriteString("The Metal driver's tests, the conformance suite every driver passes among them: once on the GPU through the darwin adapter, " +
		"once on the model of MPSGraph the lowering is developed against.\n\n")
	sides := []struct {
		name string
		sec  Section
	}{{"GPU", r.GPU}, {"model", r.Model}}
	var ran []string
	for _, s := range sides {
		fmt.Fprintf(b, "- %s: %s\n", s.name, summary(s.sec))
		if s.sec.Run != nil {
			ran = append(ran, s.name)
		}
	}
	b.WriteString("\n")
	if len(ran) == 0 {
		return
	}
	rows := Compare(r.GPU.Run, r.Model.Run)
	if len(ran) == 2 {
		n := 0
		for _, row := range rows {
			if row.Differs {
				n++
			}
		}
		if n == 0 {
			b.WriteString("The GPU and the model agree on every case.\n\n")
		} else {
			fmt.Fprintf(b, "**%d cases differ** between the GPU and the model (in one run only, another result, or another failure); they come first, in bold.\n\n", n)
		}
	}
	b.WriteString("| case |")
	for _, s := range ran {
		fmt.Fprintf(b, " %s |", s)
	}
	b.WriteString("\n| --- |" + strings.Repeat(" --- |", len(ran)) + "\n")
	for _, row := range rows {
		name := "`" + cell(row.Name) + "`"
		if row.Differs {
			name = "**" + name + "**"
		}
		b.WriteString("| " + name + " |")
		if r.GPU.Run != nil {
			b.WriteString(" " + resultCell(row.GPU, row.InheritedGPU) + " |")
		}
		if r.Model.Run != nil {
			b.WriteString(" " + resultCell(row.Model, row.InheritedModel) + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	var texts []string
	for _, row := range rows {
		for _, side := range []struct {
			name      string
			c         *Case
			inherited bool
		}{{"GPU", row.GPU, row.InheritedGPU}, {"model", row.Model, row.InheritedModel}} {
			if side.c != nil && !side.inherited && (side.c.Result == Fail || side.c.Result == NoResult) && side.c.Output != "" {
				texts = append(texts, fmt.Sprintf("#### `%s` on the %s\n\n%s", row.Name, side.name, fenced(side.c.Output)))
			}
		}
	}
	for _, s := range sides {
		if s.sec.Run != nil && s.sec.Run.Failed() && s.sec.Run.Output != "" {
			texts = append(texts, fmt.Sprintf("#### The %s's run, outside any case\n\n%s", s.name, fenced(s.sec.Run.Output)))
		}
	}
	if len(texts) > 0 {
		b.WriteString("### Failure texts\n\n" + strings.Join(texts, "\n") + "\n")
	}
}

func (r *Report) writeEndToEnd(b *strings.Builder) {
	b.WriteString("## TensorFlow and JAX end-to-end checks on the GPU\n\n")
	b.WriteString("tests/integration's checks that compute on the device: TensorFlow's `GPU` and jax's `metalplug` platform, " +
		"each checked against its own CPU.\n\n")
	run := r.EndToEnd.Run
	if run == nil && r.EndToEnd.Err == "" {
		fmt.Fprintf(b, "Not run: %s\n\n", oneLine(r.EndToEnd.Skipped))
		return
	}
	fmt.Fprintf(b, "%s\n\n", summary(r.EndToEnd))
	if run == nil {
		return
	}
	b.WriteString("| check | result |\n| --- | --- |\n")
	for i := range run.Cases {
		c := &run.Cases[i]
		fmt.Fprintf(b, "| `%s` | %s |\n", cell(c.Name), resultCell(c, run.FailsInSubtests(c.Name)))
	}
	b.WriteString("\n")
	var texts []string
	for _, c := range run.Cases {
		if (c.Result == Fail || c.Result == NoResult) && c.Output != "" && !run.FailsInSubtests(c.Name) {
			texts = append(texts, fmt.Sprintf("#### `%s`\n\n%s", c.Name, fenced(c.Output)))
		}
	}
	if run.Failed() && run.Output != "" {
		texts = append(texts, "#### Outside any check\n\n"+fenced(run.Output))
	}
	if len(texts) > 0 {
		b.WriteString("### Failure texts\n\n" + strings.Join(texts, "\n") + "\n")
	}
}

func (r *Report) writeSweep(b *strings.Builder) {
	b.WriteString("## Op sweep on the GPU\n\n")
	sw := r.Sweep
	switch {
	case sw.Err != "":
		fmt.Fprintf(b, "Could not run: %s\n", oneLine(sw.Err))
		return
	case sw.Result == nil:
		fmt.Fprintf(b, "Not run: %s\n", oneLine(sw.Skipped))
		return
	}
	s := sw.Result
	b.WriteString("Every (op, dtypes) the plugin registers for TensorFlow's `GPU`, run on the GPU and on TensorFlow's CPU, " +
		"with no part of a program allowed on the CPU (`METALPLUG_NO_CPU_FALLBACK=1`), as the model's sweep runs, so that the verdicts " +
		"compare row for row.\n\n")
	fmt.Fprintf(b, "TensorFlow %s, %d kernel registrations: **%d cases, %d verified, %d need an entry point this TensorFlow lacks, "+
		"%d need the CPU, %d unaccounted**; %d registration problems; %s.\n\n",
		s.TensorFlow, s.Kernels, s.Cases, s.Verified, s.NeedsEntryPoint, s.NeedsCPU, s.Unaccounted, len(s.AuditProblems), s.Wall.Round(time.Second))
	if s.FullTable != "" {
		fmt.Fprintf(b, "The whole table is in `%s` (not in this file).\n\n", s.FullTable)
	}
	for _, p := range append(append([]string{}, s.AuditProblems...), s.Problems...) {
		fmt.Fprintf(b, "- %s\n", oneLine(p))
	}
	if len(s.AuditProblems)+len(s.Problems) > 0 {
		b.WriteString("\n")
	}
	if len(s.Rows) == 0 {
		b.WriteString("Every case was verified.\n")
		return
	}
	var differ, same []SweepRow
	for _, row := range s.Rows {
		if row.Status != row.Model {
			differ = append(differ, row)
		} else {
			same = append(same, row)
		}
	}
	fmt.Fprintf(b, "%d cases not verified; the %d whose verdict is not the model's (`%s`) come first, in bold.\n\n", len(s.Rows), len(differ), s.ModelTable)
	b.WriteString("| op | dtypes | GPU | model | why |\n| --- | --- | --- | --- | --- |\n")
	for i, row := range append(differ, same...) {
		op := cell(row.Op)
		if i < len(differ) {
			op = "**" + op + "**"
		}
		// As in op_errors.md: " | " starts the dumped tensors and the
		// stderr tail, which belong in the sweep's full table.
		why, _, _ := strings.Cut(row.Detail, " | ")
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", op, cell(orDash(row.DTypes)), cell(row.Status), cell(orDash(row.Model)), oneLine(why))
	}
}

// summary is one line about a section: its counts and time, or why it did
// not run.
func summary(s Section) string {
	switch {
	case s.Err != "":
		return fmt.Sprintf("could not run (`%s`): %s", s.Command, oneLine(s.Err))
	case s.Run == nil:
		return "not run: " + oneLine(s.Skipped)
	}
	n := s.Run.Counts()
	verdict := "passed"
	if s.Run.Failed() {
		verdict = "failed"
	}
	return fmt.Sprintf("`%s` %s: %d cases, %d pass, %d fail, %d skipped, %d without a result (%.1f s)",
		s.Command, verdict, len(s.Run.Cases), n[Pass], n[Fail], n[Skip], n[NoResult], s.Run.Elapsed)
}

// resultCell is a case's result in a table: a failure with its first line,
// or, inherited from its subtests, saying so.
func resultCell(c *Case, inherited bool) string {
	switch {
	case c == nil:
		return "-"
	case c.Result == Fail && inherited:
		return "**fail** (in its subtests)"
	case c.Result == Fail:
		if l := firstLine(c.Output); l != "" {
			return "**fail**: " + oneLine(l)
		}
		return "**fail**"
	case c.Result == NoResult:
		return "**no result**"
	}
	return string(c.Result)
}

// maxText bounds a failure text in the file: the first lines say what
// failed; a whole dump would bury the rest of the report.
const maxText = 60

// fenced is text in a code block, at most maxText lines, fenced with more
// backticks than any run of them in text.
func fenced(text string) string {
	lines := strings.Split(text, "\n")
	if len(lines) > maxText {
		lines = append(lines[:maxText], fmt.Sprintf("... %d more lines", len(lines)-maxText))
	}
	text = strings.Join(lines, "\n")
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	return fence + "text\n" + text + "\n" + fence + "\n"
}

// oneLine is s's first line, at most 200 characters, for a table cell.
func oneLine(s string) string {
	s = firstLine(s)
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "..."
	}
	return cell(s)
}

// cell escapes a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

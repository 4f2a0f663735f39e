package matrix

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/metalplug/metalplug/setup/venv"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The generated files.
const (
	MarkdownPath = "docs/matrix.md"
	JSONPath     = "docs/matrix.json"
)

// Result is a run of the matrix: docs/matrix.json.
type Result struct {
	Generated time.Time `json:"generated"`
	// Filter is the last run's filter; cells it did not select keep their
	// earlier results.
	Filter       string        `json:"filter,omitempty"`
	Platform     string        `json:"platform"`
	WallSeconds  float64       `json:"wall_seconds"`
	Interpreters []Interpreter `json:"interpreters"`
	// JaxInterpreters are the Pythons the jax cells use that are not on
	// the Python axis (found by setup/venv.FindPython: 3.12 or newer).
	JaxInterpreters []Interpreter `json:"jax_interpreters,omitempty"`
	// JaxSupported is the jaxlib minor the tree supports (JAX_SUPPORTED_VERSION).
	JaxSupported string       `json:"jax_supported,omitempty"`
	Resolutions  []Resolution `json:"resolutions"`
	// Plan is every cell of the matrix; Cells those measured, in plan order.
	Plan  []Cell       `json:"plan"`
	Cells []CellResult `json:"cells"`
}

// CellResult is what one cell found.
type CellResult struct {
	Cell
	Measured time.Time `json:"measured"`
	// Skipped: the cell did not run here (Cell.Skip). Error: the step that
	// failed, and how.
	Skipped string `json:"skipped,omitempty"`
	Error   string `json:"error,omitempty"`
	// Installed is the distribution and version the probe found in the venv.
	Installed string `json:"installed,omitempty"`
	Compiled  bool   `json:"compiled"`
	Loaded    bool   `json:"loaded"`
	// Mode is the execution mode the load line named; LoadLine the line.
	Mode     string `json:"mode,omitempty"`
	LoadLine string `json:"load_line,omitempty"`
	// The symbol probe: whether the headers have kernels_experimental.h, how
	// many of its EntryPoints the framework exports, and whether that is
	// all of them (the resource-variable C API).
	KernelsExperimentalHeader bool `json:"kernels_experimental_header"`
	EntryPoints               int  `json:"entry_points"`
	EntryPointsExported       int  `json:"entry_points_exported"`
	ResourceVariableAPI       bool `json:"resource_variable_api"`
	// ExpectedAPI is ExpectedResourceVariableAPI's word, nil where it has none.
	ExpectedAPI *bool        `json:"expected_api,omitempty"`
	Sweep       *SweepCounts `json:"sweep,omitempty"`
	GraphPass   *GraphPass   `json:"graph_pass,omitempty"`
	// Jax is what a jax cell found (its TensorFlow fields stay empty).
	Jax         *JaxResult `json:"jax,omitempty"`
	Steps       []StepTime `json:"steps,omitempty"`
	WallSeconds float64    `json:"wall_seconds"`
	VenvBytes   int64      `json:"venv_bytes"`
}

// GraphPass is what the graph pass's Session test found: how many patterns
// ran, and each departure from what the pass must do.
type GraphPass struct {
	Cases    int      `json:"cases"`
	Problems []string `json:"problems,omitempty"`
}

// graphPassText is the graph pass column: the patterns that did what the
// pass must, of those that ran.
func graphPassText(g *GraphPass) string {
	switch {
	case g == nil:
		return "-"
	case len(g.Problems) == 0:
		return fmt.Sprintf("%d of %d", g.Cases, g.Cases)
	}
	return fmt.Sprintf("%d problems in %d", len(g.Problems), g.Cases)
}

// SweepCounts is the sweep's outcome in numbers.
type SweepCounts struct {
	Kernels         int     `json:"kernels"`
	Cases           int     `json:"cases"`
	Verified        int     `json:"verified"`
	NeedsEntryPoint int     `json:"needs_entry_point"`
	Unaccounted     int     `json:"unaccounted"`
	AuditProblems   int     `json:"audit_problems"`
	Seconds         float64 `json:"seconds"`
	// VariableCases are cases of lower.VariableOps() the plugin registered:
	// the device's own resource-variable kernels. VariableVerified of them
	// were verified.
	VariableCases    int `json:"variable_cases"`
	VariableVerified int `json:"variable_verified"`
}

// StepTime is how long a step of a cell took.
type StepTime struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// Failed says whether the cell ran and failed (a skipped cell has not).
func (c CellResult) Failed() bool { return c.Error != "" }

// Summary is one line for the log.
func (c CellResult) Summary() string {
	switch {
	case c.Skipped != "":
		return "skipped: " + c.Skipped
	case c.Failed():
		return "FAILED at " + c.Error
	case c.Jax != nil:
		return c.Jax.summary(c)
	}
	s := fmt.Sprintf("compiled, loaded (%s), resource-variable API %s", c.Mode, yesNo(c.ResourceVariableAPI))
	if c.Sweep != nil {
		s += fmt.Sprintf(", sweep %d verified, %d need an entry point, %d unaccounted", c.Sweep.Verified, c.Sweep.NeedsEntryPoint, c.Sweep.Unaccounted)
	}
	return s + fmt.Sprintf(", %s, venv %s", seconds(c.WallSeconds), bytesText(c.VenvBytes))
}

// Behaviour says whether the plugin did what the symbol probe implies:
// with the resource-variable API exported, its own variable kernels and
// asynchronous execution; without it, no variable kernels and synchronous
// execution. ok is false where it did otherwise.
func (c CellResult) Behaviour() (text string, ok bool) {
	if !c.Loaded {
		return "not loaded", true
	}
	vars := -1
	if c.Sweep != nil {
		vars = c.Sweep.VariableCases
	}
	varText := "no sweep to count device variable kernels"
	switch {
	case vars > 0:
		varText = fmt.Sprintf("%d device variable kernel cases (%d verified)", vars, c.Sweep.VariableVerified)
	case vars == 0:
		varText = "no device variable kernels"
	}
	if c.ResourceVariableAPI {
		ok = c.Mode == "asynchronous" && vars > 0
		if ok {
			return fmt.Sprintf("API exported: %s, %s execution, as it should", varText, c.Mode), true
		}
		return fmt.Sprintf("API exported, but %s, %s execution: expected device variable kernels and asynchronous execution", varText, orDash(c.Mode)), false
	}
	ok = c.Mode == "synchronous" && vars <= 0
	if ok {
		return fmt.Sprintf("API not exported: %s, %s execution, as it should", varText, c.Mode), true
	}
	return fmt.Sprintf("API not exported, but %s, %s execution: expected no device variable kernels and synchronous execution", varText, orDash(c.Mode)), false
}

// Err is nil unless a cell that ran failed.
func (r *Result) Err() error {
	var failed []string
	for _, c := range r.Cells {
		if c.Failed() {
			failed = append(failed, c.Name+" ("+firstLine(c.Error)+")")
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return errors.New("matrix: failed cells: " + strings.Join(failed, "; "))
}

// Merge returns cur with prev's results for the cells of cur's plan that
// cur did not measure: a filtered run updates its rows and keeps the rest.
// Cells no longer in the plan (last week's nightly) are dropped.
func Merge(prev, cur *Result) *Result {
	if prev == nil {
		return cur
	}
	out := *cur
	measured := map[string]CellResult{}
	for _, c := range prev.Cells {
		measured[c.Name] = c
	}
	for _, c := range cur.Cells {
		measured[c.Name] = c
	}
	out.Cells = nil
	for _, p := range cur.Plan {
		if c, ok := measured[p.Name]; ok {
			// The plan's axes and channel are today's.
			c.Cell.Axes, c.Cell.Channel = p.Axes, p.Channel
			out.Cells = append(out.Cells, c)
		}
	}
	return &out
}

// ReadJSON reads a result written by WriteFiles.
func ReadJSON(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// WriteFiles writes docs/matrix.json and docs/matrix.md under root.
func WriteFiles(root string, r *Result) error {
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	// The committed report names no machine's home directory; the Markdown
	// renders from the same redacted data, so a test can check the two agree.
	b = venv.RedactHome(b)
	var red Result
	if err := json.Unmarshal(b, &red); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, JSONPath), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, MarkdownPath), []byte(red.Markdown()), 0o644)
}

// Markdown is docs/matrix.md: the TensorFlow table and notes on how each
// cell's plugin behaved given its TensorFlow's exports, the jaxlib table
// and its notes (report_jax.go), then the axes, the errors and the time
// each step took.
func (r *Result) Markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Version matrix: TensorFlow and jaxlib\n\n")
	w("Generated by `go tool mage matrix` (or `go tool mage matrixCell FILTER` for some cells, `jax` for the jax ones); do not edit by hand. ")
	w("Each cell installs one framework release into a venv of its own, builds the plugin against it and runs it there: ")
	w("the TensorFlow releases of the axis and the newest release and nightly, and the newest jax release and the newest of the minor before it.\n\n")
	w("Last run: %s on %s", r.Generated.Format("2006-01-02 15:04 UTC"), r.Platform)
	if r.Filter != "" {
		w(", only the cells matching %q (the others are from earlier runs)", r.Filter)
	}
	w(", wall time %s.\n\n", seconds(r.WallSeconds))

	w("## TensorFlow\n\n")
	w("Each cell probes its TensorFlow, builds the plugin against it with the cell's own pin, ")
	w("runs the load test (`tests/integration/py/devices.py`: the `%s` device must appear and a MatMul on it match NumPy) ", deviceType)
	w("the op sweep, and the graph pass's Session test (`tests/integration/py/graph_pass.py`: each Conv2D and MatMul chain runs fused on the device, left alone where it must be, no Transpose, the CPU's results). The resource-variable column is the symbol probe's count of the `kernels_experimental.h` entry points the framework library exports, ")
	w("with what was expected; the execution column is what the plugin's load line said.\n\n")
	w("| TensorFlow | Python | Axis | Compiled | Loaded | Execution | Resource-variable API (expected) | Device variable kernels | Sweep verified | Needs entry point | Unaccounted | Graph pass | Wall | Venv disk |\n")
	w("| --- | --- | --- | --- | --- | --- | --- | --- | ---: | ---: | ---: | --- | ---: | ---: |\n")
	for _, c := range r.Cells {
		if c.IsJax() {
			continue
		}
		if c.Skipped != "" {
			w("| %s %s | %s | %s | skipped | | | | | | | | | | |\n", c.Release.Distribution, c.Release.Version, c.Python.Minor(), strings.Join(c.Axes, ", "))
			continue
		}
		api := "-"
		if c.EntryPoints > 0 {
			api = fmt.Sprintf("%s, %d/%d", yesNo(c.ResourceVariableAPI), c.EntryPointsExported, c.EntryPoints)
			if c.ExpectedAPI != nil {
				api += fmt.Sprintf(" (expected %s)", yesNo(*c.ExpectedAPI))
			}
		}
		vars, verified, needs, unacc := "-", "-", "-", "-"
		if s := c.Sweep; s != nil {
			vars = fmt.Sprint(s.VariableCases)
			if s.VariableCases > 0 {
				vars = fmt.Sprintf("%d (%d verified)", s.VariableCases, s.VariableVerified)
			}
			verified = fmt.Sprintf("%d of %d", s.Verified, s.Cases)
			needs, unacc = fmt.Sprint(s.NeedsEntryPoint), fmt.Sprint(s.Unaccounted)
		}
		loaded := yesNo(c.Loaded)
		if !c.Compiled {
			loaded = "-"
		}
		w("| %s %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			c.Release.Distribution, c.Release.Version, c.Python.Minor(), strings.Join(c.Axes, ", "),
			yesNo(c.Compiled), loaded, orDash(c.Mode), api, vars, verified, needs, unacc, graphPassText(c.GraphPass), seconds(c.WallSeconds), bytesText(c.VenvBytes))
	}

	w("\n### Behaviour\n\n")
	for _, c := range r.Cells {
		if c.Skipped != "" || c.IsJax() {
			continue
		}
		if c.EntryPoints == 0 {
			w("- %s: not probed.\n", c.Name)
			continue
		}
		expect := "no expectation"
		if c.ExpectedAPI != nil {
			expect = "as expected"
			if *c.ExpectedAPI != c.ResourceVariableAPI {
				expect = map[bool]string{true: "**expected all**", false: "**expected not all**"}[*c.ExpectedAPI]
			}
		}
		header := "present"
		if !c.KernelsExperimentalHeader {
			header = "absent"
		}
		what, ok := c.Behaviour()
		mark := ""
		if !ok {
			mark = " **Not as it should.**"
		}
		w("- %s: exports %d of %d `kernels_experimental.h` entry points (%s; the header is %s). %s.%s\n",
			c.Name, c.EntryPointsExported, c.EntryPoints, expect, header, what, mark)
		if c.LoadLine != "" {
			w("  Load line: `%s`\n", c.LoadLine)
		}
	}

	r.jaxMarkdown(w)

	w("\n## Axes\n\n")
	for _, res := range r.Resolutions {
		switch {
		case res.Frontend == FrontendJax:
			w("%s", res.jaxLine())
		case res.Error != "":
			w("- %s (Python %s): %s\n", res.Axis, res.Python, res.Error)
		case strings.HasPrefix(res.Axis, "newest"):
			w("- %s (Python %s): %s %s (`%s`)\n", res.Axis, res.Python, res.Release.Distribution, res.Release.Version, res.Release.Wheel)
		default:
			w("- %s (Python %s): %s `%s`\n", res.Axis, res.Python, res.Release.Distribution, orDash(res.Release.Wheel))
		}
		for _, n := range res.Notes {
			w("  - passed over: %s\n", n)
		}
	}
	// Interpreters left out for the same reason (a row of pyenv shims for
	// versions not selected) share a line.
	var reasons []string
	left := map[string][]string{}
	for _, in := range r.Interpreters {
		if in.Python != nil {
			w("- Python %s: `%s` (%s)\n", in.Python.Version, in.Command, in.Python.Path)
			continue
		}
		why := strings.ReplaceAll(in.Skipped, in.Command, "python3.X")
		if _, ok := left[why]; !ok {
			reasons = append(reasons, why)
		}
		left[why] = append(left[why], "`"+in.Command+"`")
	}
	for _, why := range reasons {
		w("- not on the Python axis: %s: %s\n", strings.Join(left[why], ", "), why)
	}
	for _, in := range r.JaxInterpreters {
		if in.Python != nil {
			w("- Python %s for jax: %s, found off the Python axis by setup/venv's FindPython (the axis has no Python 3.%d or newer)\n", in.Python.Version, in.Python.Path, JaxMinPython)
		} else {
			w("- for jax, %s was found off the Python axis but cannot be used: %s\n", in.Found, in.Skipped)
		}
	}

	var problems []string
	for _, c := range r.Cells {
		switch {
		case c.Skipped != "":
			problems = append(problems, fmt.Sprintf("- %s: skipped: %s\n", c.Name, c.Skipped))
		case c.Error != "":
			problems = append(problems, fmt.Sprintf("- %s (measured %s):\n\n```\n%s\n```\n", c.Name, c.Measured.Format("2006-01-02"), tail(c.Error, 3000)))
		}
	}
	if len(problems) > 0 {
		w("\n## Errors and skipped cells\n\n%s", strings.Join(problems, ""))
	}

	w("\n## Time per step\n\n")
	for _, c := range r.Cells {
		if len(c.Steps) == 0 {
			continue
		}
		parts := make([]string, len(c.Steps))
		for i, s := range c.Steps {
			parts[i] = s.Name + " " + seconds(s.Seconds)
		}
		w("- %s (measured %s): %s\n", c.Name, c.Measured.Format("2006-01-02 15:04"), strings.Join(parts, ", "))
	}
	return b.String()
}

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}

// seconds renders a duration for people: 45s, 3m12s, 1h02m.
func seconds(s float64) string {
	d := time.Duration(s * float64(time.Second)).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// bytesText renders a size in binary units, as du -h does.
func bytesText(n int64) string {
	switch {
	case n <= 0:
		return "-"
	case n < 1<<20:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
}

package matrix

import (
	"fmt"
	"strings"
)

// The jaxlib part of docs/matrix.md: a table of the jax cells and a note per
// cell on what the plugin said and did.

// jaxMarkdown writes the jaxlib section.
func (r *Result) jaxMarkdown(w func(format string, args ...any)) {
	w("\n## jaxlib\n\n")
	w("Each cell installs jax and the jaxlib the axis resolved, and no TensorFlow, into a venv of its own; probes it ")
	w("(jax and jaxlib, the StableHLO versions its serializer writes, and the PJRT C API versions measured by loading a probe plugin into that jaxlib: its own, and the oldest plugin version it accepts); ")
	w("builds the library with the JAX frontend only (tag `notf`) against that jaxlib, which is stamped into it; installs it beside the `jax_plugins.metalplug` module (`setup/install`); ")
	w("asks jax for its `metalplug` devices and runs the smoke test, `tests/integration/py/jax_ops.py` (jitted programs from a matmul and a grad to 30 steps of Adam, each on the device and on jax's CPU, which must agree), ")
	w("with `%s`.", strings.Join(jaxAsk, " "))
	if r.JaxSupported != "" {
		w(" The tree pins jaxlib %s (`JAX_SUPPORTED_VERSION`, what a user's build accepts); each cell is built for its own jaxlib minor, as each TensorFlow cell gets its own pin, ", r.JaxSupported)
		w("so the table says whether the tree works with that release. A refusal by the build or the `jax_plugins` module's decline is recorded as declined, not as a failure.")
	}
	w("\n\n")
	var cells []CellResult
	for _, c := range r.Cells {
		if c.IsJax() {
			cells = append(cells, c)
		}
	}
	if len(cells) == 0 {
		w("No jax cell has been measured.\n")
		return
	}
	w("| jax | jaxlib | Python | Axis | Compiled | Loaded | Smoke test | PJRT API (measured in jaxlib; the plugin's) | StableHLO (oldest to newest) | Wall | Venv disk |\n")
	w("| --- | --- | --- | --- | --- | --- | --- | --- | --- | ---: | ---: |\n")
	for _, c := range cells {
		jaxlib, py := "-", "-"
		if c.Jaxlib != nil {
			jaxlib = c.Jaxlib.Version
		}
		if c.Python.Version != "" {
			py = c.Python.Minor()
		}
		axes := strings.Join(c.Axes, ", ")
		if c.Skipped != "" {
			w("| %s | %s | %s | %s | skipped | | | | | | |\n", orDash(c.Release.Version), jaxlib, py, axes)
			continue
		}
		j := c.Jax
		if j == nil {
			j = &JaxResult{}
		}
		compiled, loaded := yesNo(c.Compiled), yesNo(c.Loaded)
		switch {
		case j.Declined != "" && !c.Compiled:
			compiled, loaded = "declined", "-"
		case j.Declined != "":
			loaded = "declined"
		case !c.Compiled:
			loaded = "-"
		}
		pjrt := "-"
		if j.PJRTFramework != "" {
			pjrt = fmt.Sprintf("%s (accepts %s and up); plugin %s", j.PJRTFramework, j.PJRTMinimum, orDash(j.PJRTPlugin))
		}
		hlo := "-"
		if j.StablehloCurrent != "" {
			hlo = j.StablehloMinimum + " to " + j.StablehloCurrent
		}
		w("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", c.Release.Version, jaxlib, py, axes,
			compiled, loaded, j.Smoke.Passed(), pjrt, hlo, seconds(c.WallSeconds), bytesText(c.VenvBytes))
	}
	w("\n### Devices, declines and what the plugin said\n\n")
	for _, c := range cells {
		if c.Skipped != "" {
			continue
		}
		j := c.Jax
		if j == nil {
			w("- %s: not probed.\n", c.Name)
			continue
		}
		var parts []string
		if c.Installed != "" {
			parts = append(parts, "installed "+c.Installed)
		}
		if j.Declined != "" {
			parts = append(parts, "declined: "+code(j.Declined))
		}
		if len(j.Devices) > 0 {
			ds := make([]string, len(j.Devices))
			for i, d := range j.Devices {
				ds[i] = code(d)
			}
			parts = append(parts, fmt.Sprintf("devices %s (kind %s, platform version %s)", strings.Join(ds, ", "), code(j.DeviceKind), code(j.PlatformVersion)))
		}
		if s := j.Smoke; s != nil {
			parts = append(parts, "smoke test: "+s.Passed()+" with jax's CPU")
		}
		if len(parts) == 0 {
			parts = append(parts, "stopped before the probe finished")
		}
		w("- %s: %s.\n", c.Name, strings.Join(parts, "; "))
		for _, l := range j.Lines {
			if l != j.Declined {
				w("  The plugin said: %s\n", code(l))
			}
		}
	}
}

// code is s as a Markdown code span: the build's errors quote commands in
// backticks, so the fence is one backtick longer than any run inside, and
// padded with spaces then (CommonMark strips one on each side).
func code(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if longest > 0 {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// jaxLine is a jax axis entry in the Axes list.
func (res Resolution) jaxLine() string {
	py := "no Python"
	if res.Python != "" {
		py = "Python " + res.Python
	}
	switch {
	case res.Error != "":
		return fmt.Sprintf("- jax %s (%s): %s\n", res.Axis, py, res.Error)
	case res.Jaxlib == nil:
		return fmt.Sprintf("- jax %s (%s): jax %s (`%s`), no jaxlib\n", res.Axis, py, res.Release.Version, res.Release.Wheel)
	}
	return fmt.Sprintf("- jax %s (%s): jax %s (`%s`) with jaxlib %s (`%s`)\n", res.Axis, py, res.Release.Version, res.Release.Wheel, res.Jaxlib.Version, res.Jaxlib.Wheel)
}

// summary is a jax cell's line for the log.
func (j *JaxResult) summary(c CellResult) string {
	tail := fmt.Sprintf(", %s, venv %s", seconds(c.WallSeconds), bytesText(c.VenvBytes))
	if j.Declined != "" {
		return "declined (" + firstLine(j.Declined) + ")" + tail
	}
	return fmt.Sprintf("compiled, loaded (%d device(s), kind %s), smoke test %s, PJRT API %s (accepts %s and up; the plugin's %s), StableHLO %s to %s",
		len(j.Devices), orDash(j.DeviceKind), j.Smoke.Passed(), orDash(j.PJRTFramework), orDash(j.PJRTMinimum), j.PJRTPlugin, orDash(j.StablehloMinimum), orDash(j.StablehloCurrent)) + tail
}

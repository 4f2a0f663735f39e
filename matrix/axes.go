package matrix

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/metalplug/metalplug/plugin/version"
	"github.com/metalplug/metalplug/setup/build"
)

// The axes of the matrix, in one place: the TensorFlow versions and the
// Python interpreters. A cell is one TensorFlow version with one Python.

// Releases are the fixed TensorFlow releases every run covers: the
// supported ones (build.Releases).
var Releases = build.Releases

// The channels whose newest version the matrix resolves at run time from the
// package index.
const (
	// ChannelRelease is the newest final release (no rc, a or b).
	ChannelRelease = "release"
	// ChannelNightly is the newest .devN nightly.
	ChannelNightly = "nightly"
)

// Channels lists the channels in the order the report shows them.
var Channels = []string{ChannelRelease, ChannelNightly}

// ReleaseDistribution is the distribution the releases are installed from:
// the one the tests use (tensorflow-cpu on Linux, whose wheels exist for
// every release here and carry no CUDA kernels; tensorflow on macOS).
var ReleaseDistribution = build.TestDistribution

// NightlyDistributions are searched for the newest nightly, the lighter one
// first: on a tie it wins. Both are searched because tf-nightly-cpu has
// stopped being published for stretches (its last one can lag tf-nightly's
// by weeks), and a nightly axis that lags is not the newest nightly.
var NightlyDistributions = map[bool][]string{
	true:  {"tf-nightly"},
	false: {"tf-nightly-cpu", "tf-nightly"},
}[runtime.GOOS == "darwin"]

// channelDistributions are the distributions searched for each channel.
func channelDistributions(channel string) ([]string, error) {
	switch channel {
	case ChannelRelease:
		return []string{ReleaseDistribution}, nil
	case ChannelNightly:
		return NightlyDistributions, nil
	}
	return nil, fmt.Errorf("unknown channel %q: want %s or %s", channel, ChannelRelease, ChannelNightly)
}

// firstExportingNightly is the first nightly that exports the
// kernels_experimental.h functions again after 2.20.0 and 2.21.0 stopped.
const firstExportingNightly = "2.22.0.dev20260914"

// ExpectedResourceVariableAPI is what the matrix expects the symbol probe to
// find for a version: 2.19 and older export the resource-variable C API,
// 2.20 and 2.21 declare it without exporting it, and nightlies from
// firstExportingNightly on export it again. known is false for versions the
// expectation says nothing about (a later release, for instance): the
// measurement is the answer there. The first run (2026-11-30) measured
// otherwise for 2.19.1: it exports none of them (2.18.1 exports them), and
// docs/matrix.md marks the difference; the expectation is left as stated
// until that is confirmed.
func ExpectedResourceVariableAPI(v string) (exported, known bool) {
	sv, err := version.Parse(v)
	if err != nil {
		return false, false
	}
	first, _ := version.Parse(firstExportingNightly)
	switch {
	case sv.Major() == 2 && sv.Minor() <= 19:
		return true, true
	case sv.Major() == 2 && (sv.Minor() == 20 || sv.Minor() == 21):
		return false, true
	case isDev(v):
		return !sv.LessThan(first), true
	}
	return false, false
}

// devRelease is PEP 440's developmental-release suffix, the form every
// tf-nightly version has.
var devRelease = regexp.MustCompile(`(?i)[._-]?dev[._-]?\d+$`)

// isDev reports whether a PEP 440 version is a developmental release.
func isDev(v string) bool { return devRelease.MatchString(strings.TrimSpace(v)) }

// Python is one interpreter of the Python axis.
type Python struct {
	// Command is the name found on PATH (python3.11); Path what it really
	// runs (sys.executable), which the cell's venv is made from: a pyenv
	// shim resolves differently in another directory.
	Command string `json:"command"`
	Path    string `json:"path"`
	Version string `json:"version"` // 3.11.7
	// Glibc is the C library version the interpreter runs on (manylinux
	// wheels need at least theirs); empty off glibc.
	Glibc string `json:"glibc,omitempty"`
}

// Minor is "3.11".
func (p Python) Minor() string {
	parts := strings.SplitN(p.Version, ".", 3)
	if len(parts) < 2 {
		return p.Version
	}
	return parts[0] + "." + parts[1]
}

// Tag is the CPython wheel tag, "cp311".
func (p Python) Tag() string { return "cp" + strings.ReplaceAll(p.Minor(), ".", "") }

// Interpreter is a python3.X found on PATH and whether it made the axis.
type Interpreter struct {
	Command string  `json:"command"`
	Found   string  `json:"found"` // where PATH found it
	Python  *Python `json:"python,omitempty"`
	// Skipped says why it is not on the axis: it did not run (a pyenv shim
	// for a version not selected), it is not CPython, or it cannot make a venv.
	Skipped string `json:"skipped,omitempty"`
}

// describeScript prints what the matrix needs of an interpreter. ensurepip is
// imported because `python -m venv` needs it, and some distributions ship
// Python without it.
const describeScript = `import json, platform, sys
libc = platform.libc_ver()
err = ""
try:
    import ensurepip, venv
except ImportError as e:
    err = "cannot make a venv: %s" % e
print(json.dumps({"path": sys.executable, "version": "%d.%d.%d" % sys.version_info[:3],
    "implementation": sys.implementation.name, "glibc": libc[1] if libc[0] == "glibc" else "", "error": err}))
`

var pythonName = regexp.MustCompile(`^python3\.(\d+)$`)

// FindPythons lists the python3.X executables on path (a PATH value), each
// name once as a shell would find it, sorted by version, and runs each to
// see whether it belongs on the axis.
func FindPythons(path string) []Interpreter {
	seen := map[string]bool{}
	var names []string
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if pythonName.MatchString(e.Name()) && !seen[e.Name()] {
				seen[e.Name()] = true
				names = append(names, e.Name())
			}
		}
	}
	minor := func(n string) int { m, _ := strconv.Atoi(pythonName.FindStringSubmatch(n)[1]); return m }
	sort.Slice(names, func(i, j int) bool { return minor(names[i]) < minor(names[j]) })
	var out []Interpreter
	for _, n := range names {
		out = append(out, describe(n, lookPath(n, path)))
	}
	return out
}

// lookPath is exec.LookPath against an explicit PATH value.
func lookPath(name, path string) string {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// DescribePython runs one interpreter (a name on PATH or a path).
func DescribePython(command string) Interpreter {
	p, err := exec.LookPath(command)
	if err != nil {
		return Interpreter{Command: command, Skipped: err.Error()}
	}
	return describe(filepath.Base(command), p)
}

func describe(name, found string) Interpreter {
	in := Interpreter{Command: name, Found: found}
	if found == "" {
		in.Skipped = "not found"
		return in
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, found, "-I", "-c", describeScript)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		in.Skipped = fmt.Sprintf("does not run (%v): %s", err, firstLine(stderr.String()))
		return in
	}
	var d struct {
		Path, Version, Implementation, Glibc, Error string
	}
	if err := json.Unmarshal(out, &d); err != nil {
		in.Skipped = fmt.Sprintf("printed %q, not a description", firstLine(string(out)))
		return in
	}
	switch {
	case d.Implementation != "cpython":
		in.Skipped = d.Implementation + ", not CPython: TensorFlow publishes CPython wheels only"
	case d.Error != "":
		in.Skipped = d.Error
	default:
		in.Python = &Python{Command: name, Path: d.Path, Version: d.Version, Glibc: d.Glibc}
	}
	return in
}

// Pythons are the interpreters that made the axis.
func Pythons(ins []Interpreter) []Python {
	var ps []Python
	for _, in := range ins {
		if in.Python != nil {
			ps = append(ps, *in.Python)
		}
	}
	return ps
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

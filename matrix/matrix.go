// Package matrix builds and tests the plugin against several TensorFlow
// releases at once: the fixed releases of the axis (axes.go), the newest
// release and the newest nightly found on the package index at run time,
// each with every Python on the machine. Per cell it makes a venv, probes
// the TensorFlow there, builds the library against it with the cell's own
// pin, runs the load test and the op sweep, and records what it saw
// (docs/matrix.md, docs/matrix.json): whether the release exports the
// resource-variable C API, and whether the plugin then ran its own variable
// kernels asynchronously or fell back to synchronous execution.
//
// "Newest" is read from the Simple JSON API (PEP 691): pre-releases are
// skipped for the release channel, the highest .devN is the nightly, and a
// version counts only when a file that is not yanked is a wheel for this
// Python and platform.
package matrix

import (
	"fmt"
	"path/filepath"
)

// Measure runs the matrix (the cells filter selects, all when empty) from
// the source tree at root, writes docs/matrix.md and docs/matrix.json, and
// fails if a cell failed. A filtered run keeps the other cells' earlier
// results in both files.
func Measure(root, filter string, log Logf) error {
	res, err := Run(Options{Root: root, Filter: filter, Log: log})
	if err != nil {
		return err
	}
	if filter != "" {
		if prev, err := ReadJSON(filepath.Join(root, JSONPath)); err == nil {
			res = Merge(prev, res)
		}
	}
	if err := WriteFiles(root, res); err != nil {
		return err
	}
	log("matrix: wrote %s and %s in %s", MarkdownPath, JSONPath, seconds(res.WallSeconds))
	return res.Err()
}

// Newest resolves a channel's newest TensorFlow (release or nightly) with a
// wheel for python (python3 when empty: the interpreter the test venvs are
// made from) on this machine.
func Newest(channel, python string) (Release, error) {
	if python == "" {
		python = "python3"
	}
	in := DescribePython(python)
	if in.Python == nil {
		return Release{}, fmt.Errorf("%s: %s", python, in.Skipped)
	}
	rs := &Resolver{Index: &Index{}, Platform: ThisPlatform(in.Python.Glibc)}
	r, _, err := rs.Newest(channel, *in.Python)
	return r, err
}

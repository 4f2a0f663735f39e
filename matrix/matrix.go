// Package matrix builds and tests the plugin against several framework
// releases at once. For TensorFlow: the fixed releases of the axis
// (axes.go), the newest release and the newest nightly found on the package
// index at run time, each with every Python on the machine. Per cell it
// makes a venv, probes the TensorFlow there, builds the library against it
// with the cell's own pin, runs the load test and the op sweep, and records
// what it saw: whether the release exports the resource-variable C API, and
// whether the plugin then ran its own variable kernels asynchronously or
// fell back to synchronous execution. For jax (jaxaxis.go, jaxrun.go): the
// newest jax release and the newest of the minor before it, each with its
// own jaxlib and a Python 3.12 or newer; per cell a venv with jax only, the
// probe (versions, StableHLO range, PJRT API measured in that jaxlib), a
// build with the JAX frontend alone, the install, and a smoke test of jitted
// programs against jax's CPU. Both go to docs/matrix.md and docs/matrix.json.
//
// "Newest" is read from the Simple JSON API (PEP 691): pre-releases are
// skipped for the release channels, the highest .devN is the nightly, and a
// version counts only when a file that is not yanked is a wheel for this
// Python and platform.
package matrix

import (
	"fmt"
	"path/filepath"
)

// Measure runs the matrix (the cells filter selects, all when empty; "jax"
// selects the jax cells) from the source tree at root, writes
// docs/matrix.md and docs/matrix.json, and fails if a cell it ran failed. A
// filtered run keeps the other cells' earlier results in both files; their
// failures are not this run's (the weekly job that runs the jax cells must
// not fail for an earlier run's nightly).
func Measure(root, filter string, log Logf) error {
	return measure(Options{Root: root, Filter: filter, Log: log})
}

// measure is Measure with every option open to tests.
func measure(o Options) error {
	o.defaults()
	res, err := Run(o)
	if err != nil {
		return err
	}
	ran := res.Err()
	if o.Filter != "" {
		if prev, err := ReadJSON(filepath.Join(o.Root, JSONPath)); err == nil {
			res = Merge(prev, res)
		}
	}
	if err := WriteFiles(o.Root, res); err != nil {
		return err
	}
	o.Log("matrix: wrote %s and %s in %s", MarkdownPath, JSONPath, seconds(res.WallSeconds))
	return ran
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

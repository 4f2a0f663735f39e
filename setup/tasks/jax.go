package tasks

import (
	"fmt"
	"path/filepath"

	"github.com/metalplug/metalplug/plugin/version"
	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/setup/probe"
	"github.com/metalplug/metalplug/setup/venv"
)

// jaxMinPython is the oldest Python the supported jax has wheels for.
const jaxMinPython = 12

// jaxEnv is what the JAX tier of the tests needs: the base interpreter
// (Python 3.12 or newer), the jax requirement of the pin, and a venv with it,
// probed.
type jaxEnv struct {
	base, req string
	report    *probe.Report
}

// jaxVenv makes (or reuses) venv jax-<pin> with the pinned jax and probes it.
func jaxVenv(logf Logf) (*jaxEnv, error) {
	pin, err := build.ReadJaxPin(".")
	if err != nil {
		return nil, err
	}
	base, err := venv.FindPython(jaxMinPython)
	if err != nil {
		return nil, err
	}
	req := fmt.Sprintf("jax==%s.*", version.Minor(pin))
	dir, err := venv.Ensure("jax-"+version.Minor(pin), base, []string{req}, logf)
	if err != nil {
		return nil, err
	}
	r, err := probe.Run(venv.Python(dir))
	if err != nil {
		return nil, err
	}
	if !r.HasJax() {
		return nil, fmt.Errorf("%s: jax is not importable after installing %s", venv.Python(dir), req)
	}
	return &jaxEnv{base: base, req: req, report: r}, nil
}

// jaxTier runs the tests that need a real jax: the probe of a jax-only
// venv and the PJRT frontend's end-to-end test in jax. (The install of the
// sdist into a jax venv runs with the other integration tests.)
func jaxTier(env []string, j *jaxEnv, logf Logf) error {
	py := j.report.Interpreter.Path
	logf("== JAX: jax %s, jaxlib %s on %s", j.report.Jax.Version, j.report.Jax.JaxlibVersion, py)
	jenv := append(env, "METALPLUG_TEST_PYTHON="+py, "METALPLUG_TEST_JAX_PYTHON="+py)
	return run(jenv, "go", "test", "-count=1", "-v", "-run=TestJaxOnly|TestJaxEndToEnd", "./setup/probe/", "./plugin/pjrt/")
}

// jaxFixtureDirs are the committed jax artifacts and the generators that
// write them: the reader's (artifacts with jaxlib's own print of each) and
// the translation's (artifacts with inputs and jax's CPU outputs).
var jaxFixtureDirs = []string{"plugin/pjrt/mlir/testdata", "plugin/pjrt/stablehlo/testdata"}

// JaxFixtures regenerates the committed jax artifacts with the pinned jax,
// running each directory's generate.py into that directory. The artifacts
// are deterministic: a second run changes nothing; a new jax or an edited
// generator does, and the golden tests then say what.
func JaxFixtures(logf Logf) error {
	j, err := jaxVenv(logf)
	if err != nil {
		return err
	}
	for _, dir := range jaxFixtureDirs {
		logf("== %s/generate.py with jax %s", dir, j.report.Jax.Version)
		if err := run(nil, j.report.Interpreter.Path, filepath.Join(dir, "generate.py"), dir); err != nil {
			return err
		}
	}
	return nil
}

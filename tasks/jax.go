package tasks

import (
	"path/filepath"

	"github.com/metalplug/metalplug/wheels"
)

// jaxVenv is the venv with the pinned jax the JAX tier runs in.
func jaxVenv(logf Logf) (*wheels.JaxEnv, error) { return wheels.EnsureJax(".", logf) }

// jaxTier runs the tests that need a real jax: the probe of a jax-only
// venv and the PJRT frontend's end-to-end test in jax. (The install of the
// sdist into a jax venv runs with the other integration tests.)
func jaxTier(env []string, j *wheels.JaxEnv, logf Logf) error {
	py := j.Report.Interpreter.Path
	logf("== JAX: jax %s, jaxlib %s on %s", j.Report.Jax.Version, j.Report.Jax.JaxlibVersion, py)
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
		logf("== %s/generate.py with jax %s", dir, j.Report.Jax.Version)
		if err := run(nil, j.Report.Interpreter.Path, filepath.Join(dir, "generate.py"), dir); err != nil {
			return err
		}
	}
	return nil
}

package release

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/metalplug/metalplug/matrix"
	"github.com/metalplug/metalplug/wheels"
)

// PushTests are the distribution tests that need built artifacts, real
// TensorFlow venvs, auditwheel, pypiserver and pip, and run on every push.
const PushTests = "TestWheelhouse|TestAudit|TestBuildIsReproducible|TestSdist|TestReleaseToPypiserver"

// WeeklyTests are the rest, which run weekly and before a release: the
// universal wheel from an index into users' venvs, two of which hold
// gigabyte-sized TensorFlow wheels and one the newest tf-nightly, which can
// break on any day without a change here.
const WeeklyTests = "TestUniversalWheelFromAnIndex"

// Check runs the heavy distribution tests (PushTests, and WeeklyTests too
// when weekly is set): it builds the sdist, a
// wheelhouse (one wheel per matrix release) and the universal wheel under
// root/build, and runs the tests of ./wheels and ./ci/release with the
// environment that turns them on:
//
//	METALPLUG_TEST_WHEELHOUSE  the wheelhouse
//	METALPLUG_TEST_SDIST       the sdist
//	METALPLUG_TEST_UNIVERSAL   the universal wheel
//	METALPLUG_TEST_PYTHON      an interpreter with the newest matrix release, for the reproducibility build
//	METALPLUG_REQUIRE_INTEGRATION=1, so that a missing one fails instead of skipping
func Check(root string, weekly bool, logf func(string, ...any)) error {
	dist := filepath.Join(root, "build", "release-check")
	sdist, err := wheels.Sdist(root, dist, "")
	if err != nil {
		return err
	}
	house := filepath.Join(dist, "wheelhouse")
	if _, err := wheels.BuildWheelhouse(wheels.HouseOptions{Root: root, Dir: house, Releases: matrix.Releases,
		Distribution: matrix.ReleaseDistribution, Log: logf}); err != nil {
		return err
	}
	u, err := BuildUniversal(root, dist, logf)
	if err != nil {
		return err
	}
	python, err := wheels.FindPython(matrix.ReleaseDistribution, matrix.Releases[len(matrix.Releases)-1], logf)
	if err != nil {
		return err
	}
	absHouse, _ := filepath.Abs(house)
	absSdist, _ := filepath.Abs(filepath.Join(dist, sdist))
	// -p=1: one package at a time, so a TensorFlow install and a compile never overlap.
	tests := PushTests
	if weekly {
		tests += "|" + WeeklyTests
	}
	cmd := exec.Command("go", "test", "-p=1", "-count=1", "-v", "-timeout=60m", "-run="+tests, "./wheels/", "./ci/release/")
	cmd.Dir = root
	cmd.Env = append(os.Environ(),
		"METALPLUG_REQUIRE_INTEGRATION=1",
		"METALPLUG_TEST_WHEELHOUSE="+absHouse,
		"METALPLUG_TEST_SDIST="+absSdist,
		"METALPLUG_TEST_UNIVERSAL="+filepath.Join(filepath.Dir(absSdist), u.File),
		"METALPLUG_TEST_PYTHON="+python)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("distribution tests: %w", err)
	}
	return nil
}

// Package version maps TensorFlow's version strings onto semantic versions, in
// one place. The package index spells them in PEP 440 (2.21.0, 2.22.0rc1,
// 2.23.0.dev20261026); tf.__version__ and TF_Version spell them semver-like
// (2.22.0-rc1, 2.23.0-dev20261026). Both map to Masterminds/semver versions
// whose order is PEP 440's: dev < a < b < rc < final.
package version

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// pep440 matches the release forms TensorFlow publishes. Post releases,
// epochs and local labels have no faithful semver form and are refused.
var pep440 = regexp.MustCompile(`^(\d+)\.(\d+)(?:\.(\d+))?(?:[-.]?(a|b|rc|dev)[-.]?(\d+))?$`)

// Parse reads a TensorFlow version in either spelling.
func Parse(s string) (*semver.Version, error) {
	m := pep440.FindStringSubmatch(strings.TrimSpace(strings.ToLower(s)))
	if m == nil {
		return nil, fmt.Errorf("version %q is not a TensorFlow release version (X.Y.Z, optionally with rcN, aN, bN or .devN)", s)
	}
	patch := m[3]
	if patch == "" {
		patch = "0"
	}
	v := m[1] + "." + m[2] + "." + patch
	switch m[4] {
	case "":
	case "dev":
		// "0." sorts the dev release before a, b and rc of the same version.
		v += "-0.dev." + m[5]
	default:
		v += "-" + m[4] + "." + m[5]
	}
	return semver.StrictNewVersion(v)
}

// Minor is "X.Y" of a version string, or "" when it does not parse.
// jaxlib's four-component releases (0.12.0.1), which Parse refuses since
// semver cannot order them, have a minor too.
func Minor(s string) string {
	v, err := Parse(s)
	if err != nil {
		if m := fourPart.FindStringSubmatch(strings.TrimSpace(s)); m != nil {
			return m[1] + "." + m[2]
		}
		return ""
	}
	return fmt.Sprintf("%d.%d", v.Major(), v.Minor())
}

// fourPart is a release X.Y.Z.N, as jaxlib numbers its rebuilds.
var fourPart = regexp.MustCompile(`^(\d+)\.(\d+)\.\d+\.\d+$`)

// SameMinor reports whether a and b are the same TensorFlow minor release,
// which is what the C API's struct layouts follow.
func SameMinor(a, b string) bool {
	ma := Minor(a)
	return ma != "" && ma == Minor(b)
}

// MatchesPin reports whether version v satisfies a pin "X.Y" (or "X.Y.Z").
func MatchesPin(v, pin string) bool { return SameMinor(v, pin) }

// Less orders two versions as PEP 440 does; a version that does not parse
// sorts first.
func Less(a, b string) bool {
	va, errA := Parse(a)
	vb, errB := Parse(b)
	switch {
	case errA != nil:
		return errB == nil
	case errB != nil:
		return false
	}
	return va.LessThan(vb)
}

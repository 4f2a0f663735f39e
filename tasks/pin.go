package tasks

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/metalplug/metalplug/plugin/version"
)

// MovePin rewrites TF_SUPPORTED_VERSION under root to the minor release of v.
// Everything that reads the pin (the build's check and stamp, the test venvs,
// the wheel's requirement, the load-time check through the stamp) follows it.
// The weekly CI job moves it for the length of one run and commits nothing.
func MovePin(root, v string) (string, error) {
	m := version.Minor(v)
	if m == "" {
		return "", fmt.Errorf("%q is not a TensorFlow version (want X.Y or X.Y.Z, optionally rcN or .devN)", v)
	}
	return m, os.WriteFile(filepath.Join(root, "TF_SUPPORTED_VERSION"), []byte(m+"\n"), 0o644)
}

package tasks

import (
	_ "embed"
	"os"
	"path/filepath"
	"runtime"

	"github.com/metalplug/metalplug/setup/install"
)

//go:embed demo.py
var demoScript string

// Demo is the main job on a fresh machine: a venv with the pinned TensorFlow,
// the library built against it and installed into its tensorflow-plugins,
// and a small Keras model trained on the device, printing where ops ran.
func Demo(logf Logf) error {
	t, _, err := pinnedToolchain("demo-", libraryPath(runtime.GOOS), logf)
	if err != nil {
		return err
	}
	r := t.Report
	dst, err := install.Library(t.Library, r)
	if err != nil {
		return err
	}
	logf("installed %s", dst)
	script := filepath.Join("build", "demo.py")
	if err := os.WriteFile(script, []byte(demoScript), 0o644); err != nil {
		return err
	}
	return run([]string{"METALPLUG_HOST_DEVICE=1", "TF_CPP_MIN_LOG_LEVEL=2"}, r.Interpreter.Path, script)
}

package tasks

import (
	"os"
	"path/filepath"

	"github.com/metalplug/metalplug/setup/probe"
	"github.com/metalplug/metalplug/setup/protos"
)

// Protos regenerates plugin/tfproto from the proto descriptors of the pinned
// TensorFlow (its venv made if need be).
func Protos(logf Logf) error {
	_, r, err := pinnedVenv("", logf)
	if err != nil {
		return err
	}
	names, modules, err := protos.Write(".", r.Interpreter.Path)
	if err != nil {
		return err
	}
	for _, root := range protos.Roots {
		logf("%s: read from %s of %s %s", root.File, modules[root.File], r.TensorFlow.Distribution, r.TensorFlow.Version)
	}
	for _, name := range names {
		path := filepath.Join(protos.Dir, name)
		if st, err := os.Stat(path); err == nil {
			logf("wrote %s (%d bytes)", path, st.Size())
		}
	}
	return nil
}

// checkProtos fails when plugin/tfproto is not what `go tool mage protos`
// makes from r's TensorFlow. Like the generated tables, it is not held
// against the commit when the pin was moved for one run.
func checkProtos(r *probe.Report, logf Logf) error {
	if pinMoved() {
		return nil
	}
	logf("== %s against the protos of %s %s", protos.Dir, r.TensorFlow.Distribution, r.TensorFlow.Version)
	return protos.Check(".", r.Interpreter.Path)
}

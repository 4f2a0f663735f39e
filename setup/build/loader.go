package build

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/metalplug/metalplug/setup/probe"
)

// LoaderSources are the loader's C sources, relative to the source root.
// They are not in a Go package: the loader is compiled on its own, with no
// Go runtime in it.
var LoaderSources = []string{"plugin/loader/loader.c", "plugin/loader/declined.c"}

// LoaderName is the loader's file in tensorflow-plugins. It differs from
// the builds' name, so that a look at a process's mapped files tells the
// loader from the build holding the Go runtime.
func LoaderName(goos string) string {
	if goos == "darwin" {
		return "libmetalplug-loader.dylib"
	}
	return "libmetalplug-loader.so"
}

// LoaderExports are the loader's exported functions, and all of them.
var LoaderExports = []string{"SE_InitPlugin", "TF_InitGraph", "TF_InitKernel", "TF_InitProfiler", "metalplug_loader_build"}

// BuildLoader compiles the loader into out against the headers of the
// probed TensorFlow (any supported release's: the structs it fills are
// versioned by their struct_size) with $CC, else cc, and checks what it
// exports.
func BuildLoader(root, out string, r *probe.Report) error {
	if !r.HasTensorFlow() {
		return fmt.Errorf("the loader is compiled against TensorFlow's headers, and %s has no TensorFlow", r.Interpreter.Path)
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	args := []string{"-shared", "-fPIC", "-O2", "-fvisibility=hidden", "-Wall", "-Wno-unused-parameter", "-Wno-format-truncation", "-I" + r.TensorFlow.IncludeDir}
	if r.GOOS == "darwin" {
		args = append(args, "-mmacosx-version-min="+DarwinDeploymentTarget, "-Wno-unknown-warning-option")
	}
	args = append(args, "-o", out)
	for _, src := range LoaderSources {
		args = append(args, filepath.Join(root, src))
	}
	if r.GOOS != "darwin" {
		args = append(args, "-ldl", "-lpthread")
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	cmd := exec.Command(cc, args...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("compiling the loader (%s %s): %v\n%s", cc, strings.Join(args, " "), err, log.String())
	}
	got, err := probe.ExportedSymbols(out)
	if err != nil {
		return err
	}
	var ours []string
	for _, s := range got {
		s = strings.TrimPrefix(s, "_") // Mach-O's leading underscore
		if strings.HasPrefix(s, "SE_") || strings.HasPrefix(s, "TF_") || strings.HasPrefix(s, "metalplug_") {
			ours = append(ours, s)
		}
	}
	sort.Strings(ours)
	if strings.Join(ours, " ") != strings.Join(LoaderExports, " ") {
		return fmt.Errorf("%s exports %v, want exactly %v", out, ours, LoaderExports)
	}
	return nil
}

// Package probe finds the TensorFlow and the jax a build targets and reports
// what they offer: the interpreter; for TensorFlow the distribution and
// version, the include and library directories, header features, and which C
// API entry points the framework library really exports (read from its
// dynamic symbol table, since some releases declare functions they do not
// export); for jax the jax and jaxlib versions and the StableHLO versions the
// installed jaxlib writes (jax.go).
package probe

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/metalplug/metalplug/plugin/tf/capi"
)

//go:embed probe.py
var probeScript string

// Report is everything the build needs to know about the targeted TensorFlow.
type Report struct {
	Interpreter Interpreter `json:"interpreter"`
	TensorFlow  TensorFlow  `json:"tensorflow"` // the zero value when TensorFlow is not installed
	Jax         *Jax        `json:"jax,omitempty"`
	Headers     Headers     `json:"headers"`
	Symbols     []Symbol    `json:"symbols"`
	GOOS        string      `json:"goos"`
	GOARCH      string      `json:"goarch"`
}

// Interpreter is the Python that was asked, and why it was chosen.
type Interpreter struct {
	Path    string `json:"path"`
	Version string `json:"version"`
	Prefix  string `json:"prefix"`
	Venv    bool   `json:"venv"`
	Source  string `json:"source"` // "PYTHON", "VIRTUAL_ENV" or "PATH"
}

// TensorFlow is the installed framework.
type TensorFlow struct {
	Distribution     string `json:"distribution"` // tensorflow, tensorflow-cpu, tf-nightly, ...
	Version          string `json:"version"`      // as the package index spells it (PEP 440)
	PackageDir       string `json:"package_dir"`
	IncludeDir       string `json:"include_dir"`
	LibDir           string `json:"lib_dir"`
	FrameworkLibrary string `json:"framework_library"`
	CCLibrary        string `json:"cc_library,omitempty"`
}

// Headers are facts read from the installed C headers.
type Headers struct {
	StreamExecutor string `json:"stream_executor"`
	// Features maps a feature the build depends on to whether the headers have it.
	Features map[string]bool `json:"features"`
}

// Symbol is one C API entry point the plugin uses.
type Symbol struct {
	Name string `json:"name"`
	// Header declares it; Linked says the plugin links it directly, rather
	// than looking it up at run time.
	Header   string `json:"header"`
	Linked   bool   `json:"linked"`
	Exported bool   `json:"exported"`
	// Library is the base name of the library that exports it, if any.
	Library string `json:"library,omitempty"`
}

// Feature names in Headers.Features.
const (
	FeatureStreamOptions       = "SP_StreamOptions"
	FeatureForceMemoryGrowth   = "SP_Platform.force_memory_growth"
	FeatureKernelsExperimental = "kernels_experimental.h"
)

// Has reports whether a header feature is present.
func (r *Report) Has(feature string) bool { return r.Headers.Features[feature] }

// Missing lists the symbols the plugin links directly that the framework
// library does not export: a build against it would fail to load.
func (r *Report) Missing() []string {
	var m []string
	for _, s := range r.Symbols {
		if s.Linked && !s.Exported {
			m = append(m, s.Name)
		}
	}
	return m
}

// ResourceVariableAPI reports whether all of kernels_experimental.h is exported.
func (r *Report) ResourceVariableAPI() bool {
	n := 0
	for _, s := range r.Symbols {
		if s.Header == "kernels_experimental.h" {
			if !s.Exported {
				return false
			}
			n++
		}
	}
	return n == len(capi.KernelsExperimental)
}

// Interpreter picks the Python to probe: $PYTHON, else the active venv's, else
// python3 on PATH.
func FindInterpreter() (path, source string, err error) {
	if p := os.Getenv("PYTHON"); p != "" {
		return p, "PYTHON", nil
	}
	if v := os.Getenv("VIRTUAL_ENV"); v != "" {
		p := filepath.Join(v, "bin", "python")
		if _, err := os.Stat(p); err == nil {
			return p, "VIRTUAL_ENV", nil
		}
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		return "", "", errors.New("no Python found: set PYTHON to a python3 executable (a venv's bin/python), activate a venv, or put python3 on PATH")
	}
	return p, "PATH", nil
}

// Run probes the TensorFlow that python (found by FindInterpreter if empty)
// imports.
func Run(python string) (*Report, error) {
	source := "argument"
	if python == "" {
		var err error
		if python, source, err = FindInterpreter(); err != nil {
			return nil, err
		}
	}
	var py struct {
		Interpreter Interpreter `json:"interpreter"`
		TensorFlow  *struct {
			PackageDir    string `json:"package_dir"`
			Distributions []struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"distributions"`
		} `json:"tensorflow"`
		Jax *Jax `json:"jax"`
	}
	var stderr bytes.Buffer
	cmd := exec.Command(python, "-I", "-c", probeScript)
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s=%s is not a working Python 3 interpreter (%v%s): set PYTHON to a python3 executable, for example a venv's bin/python",
			envName(source), python, err, indent(stderr.String()))
	}
	if err := json.Unmarshal(stdout, &py); err != nil {
		return nil, fmt.Errorf("%s: the probe printed %q, not a report: is it Python 3.9 or newer?", python, truncate(string(stdout), 200))
	}
	r := &Report{Interpreter: py.Interpreter, GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, Jax: py.Jax}
	r.Interpreter.Source = source
	if r.Jax != nil {
		if err := measureJax(python, r.Jax); err != nil {
			return nil, err
		}
	}
	if py.TensorFlow == nil || len(py.TensorFlow.Distributions) == 0 {
		if r.Jax != nil {
			return r, nil // a JAX-only build
		}
		return nil, &NoFrameworkError{Python: r.Interpreter.Path}
	}
	d := py.TensorFlow.Distributions[0]
	tf := TensorFlow{
		Distribution: d.Name,
		Version:      d.Version,
		PackageDir:   py.TensorFlow.PackageDir,
		IncludeDir:   filepath.Join(py.TensorFlow.PackageDir, "include"),
		LibDir:       py.TensorFlow.PackageDir,
	}
	r.TensorFlow = tf
	if err := r.readHeaders(); err != nil {
		return nil, err
	}
	if err := r.readSymbols(); err != nil {
		return nil, err
	}
	return r, nil
}

// NoFrameworkError says the interpreter has neither TensorFlow nor jax.
type NoFrameworkError struct{ Python string }

func (e *NoFrameworkError) Error() string {
	return fmt.Sprintf("neither TensorFlow nor jax is installed for %s: install one first, for example `%s -m pip install tensorflow-cpu==%s.*` (or tensorflow) or `%s -m pip install jax` (Python 3.12 or newer), then run this again",
		e.Python, e.Python, pinOrDefault(), e.Python)
}

// NoTensorFlowError says the interpreter has no TensorFlow.
type NoTensorFlowError struct{ Python string }

func (e *NoTensorFlowError) Error() string {
	return fmt.Sprintf("TensorFlow is not installed for %s: install it first, for example `%s -m pip install tensorflow-cpu==%s.*` (or tensorflow), then run this again",
		e.Python, e.Python, pinOrDefault())
}

func pinOrDefault() string {
	if b, err := os.ReadFile("TF_SUPPORTED_VERSION"); err == nil {
		return strings.TrimSpace(string(b))
	}
	return "2.21"
}

func (r *Report) readHeaders() error {
	inc := r.TensorFlow.IncludeDir
	se := filepath.Join(inc, "tensorflow", "c", "experimental", "stream_executor", "stream_executor.h")
	text, err := os.ReadFile(se)
	if err != nil {
		return fmt.Errorf("TensorFlow %s (%s) has no C headers: %s is missing; reinstall the wheel (`%s -m pip install --force-reinstall %s==%s`)",
			r.TensorFlow.Version, r.TensorFlow.Distribution, se, r.Interpreter.Path, r.TensorFlow.Distribution, r.TensorFlow.Version)
	}
	for _, h := range []string{"kernels.h", "c_api_macros.h", "tf_status.h", "tf_tensor.h"} {
		p := filepath.Join(inc, "tensorflow", "c", h)
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("TensorFlow %s headers are incomplete: %s is missing; reinstall the wheel", r.TensorFlow.Version, p)
		}
	}
	_, kxErr := os.Stat(filepath.Join(inc, "tensorflow", "c", "kernels_experimental.h"))
	r.Headers = Headers{
		StreamExecutor: se,
		Features: map[string]bool{
			FeatureStreamOptions:       bytes.Contains(text, []byte("SP_StreamOptions")),
			FeatureForceMemoryGrowth:   bytes.Contains(text, []byte("force_memory_growth")),
			FeatureKernelsExperimental: kxErr == nil,
		},
	}
	return nil
}

func (r *Report) readSymbols() error {
	dir := r.TensorFlow.LibDir
	fw := filepath.Join(dir, frameworkLibraryName(r.GOOS))
	if _, err := os.Stat(fw); err != nil {
		return fmt.Errorf("TensorFlow %s has no framework library at %s: the build links against it; reinstall the wheel", r.TensorFlow.Version, fw)
	}
	r.TensorFlow.FrameworkLibrary = fw
	libs := []string{fw}
	if cc := filepath.Join(dir, ccLibraryName(r.GOOS)); fileExists(cc) {
		r.TensorFlow.CCLibrary = cc
		libs = append(libs, cc)
	}
	exported := map[string]string{} // symbol -> library base name
	for _, lib := range libs {
		syms, err := cachedCAPIExports(lib)
		if err != nil {
			return err
		}
		for _, s := range syms {
			if _, ok := exported[s]; !ok {
				exported[s] = filepath.Base(lib)
			}
		}
	}
	fwBase := filepath.Base(fw)
	add := func(names []string, header string, linked bool) {
		for _, n := range names {
			lib, ok := exported[n]
			// A linked symbol only counts when the framework library has it:
			// that is the one library the plugin names as a dependency.
			if linked && lib != fwBase {
				ok, lib = false, ""
			}
			r.Symbols = append(r.Symbols, Symbol{Name: n, Header: header, Linked: linked, Exported: ok, Library: lib})
		}
	}
	add(capi.LinkedKernels, "kernels.h", true)
	add(capi.LinkedStatusTensor, "tf_status.h/tf_tensor.h", true)
	add(capi.LinkedOps, "ops.h", true)
	add(capi.KernelsExperimental, "kernels_experimental.h", false)
	add(capi.RuntimeLookups, "c_api.h", false)
	return nil
}

func frameworkLibraryName(goos string) string {
	if goos == "darwin" {
		return "libtensorflow_framework.2.dylib"
	}
	return "libtensorflow_framework.so.2"
}

func ccLibraryName(goos string) string {
	if goos == "darwin" {
		return "libtensorflow_cc.2.dylib"
	}
	return "libtensorflow_cc.so.2"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func envName(source string) string {
	switch source {
	case "PYTHON":
		return "PYTHON"
	case "VIRTUAL_ENV":
		return "the active venv's python"
	}
	return "python"
}

func indent(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	return ": " + truncate(s, 400)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

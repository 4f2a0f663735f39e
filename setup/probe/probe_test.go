package probe

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// sharedObject compiles C source into a shared library with the system C
// compiler, so the symbol readers are tested on a real dynamic symbol table.
func sharedObject(t *testing.T, src string) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("builds an ELF shared object")
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	dir := t.TempDir()
	c := filepath.Join(dir, "x.c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(dir, "libx.so")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", so, c).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	return so
}

func TestSymbolTables(t *testing.T) {
	so := sharedObject(t, `
extern int TF_NeededFromElsewhere(void);
int TF_Provided(void) { return TF_NeededFromElsewhere() + 1; }
static int hidden(void) { return 2; }
int visible_too(void) { return hidden(); }
`)
	exp, err := ExportedSymbols(so)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"TF_Provided", "visible_too"} {
		if !slices.Contains(exp, want) {
			t.Errorf("exported symbols lack %s: %v", want, exp)
		}
	}
	for _, not := range []string{"hidden", "TF_NeededFromElsewhere"} {
		if slices.Contains(exp, not) {
			t.Errorf("exported symbols include %s", not)
		}
	}
	und, err := UndefinedSymbols(so)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(und, "TF_NeededFromElsewhere") || slices.Contains(und, "TF_Provided") {
		t.Errorf("undefined symbols = %v", und)
	}
}

func TestExportedSymbolsNamesTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "not-a-library.so")
	os.WriteFile(p, []byte("hello, world"), 0o644)
	_, err := ExportedSymbols(p)
	if err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("error %v does not name %s", err, p)
	}
}

func TestInterpreterChoice(t *testing.T) {
	t.Setenv("PYTHON", "/opt/some/python")
	if p, src, _ := FindInterpreter(); p != "/opt/some/python" || src != "PYTHON" {
		t.Errorf("with PYTHON set: %s from %s", p, src)
	}
	t.Setenv("PYTHON", "")
	venv := t.TempDir()
	os.MkdirAll(filepath.Join(venv, "bin"), 0o755)
	os.WriteFile(filepath.Join(venv, "bin", "python"), nil, 0o755)
	t.Setenv("VIRTUAL_ENV", venv)
	if p, src, _ := FindInterpreter(); p != filepath.Join(venv, "bin", "python") || src != "VIRTUAL_ENV" {
		t.Errorf("with a venv active: %s from %s", p, src)
	}
}

func TestWrongInterpreterSaysHowToFix(t *testing.T) {
	_, err := Run(filepath.Join(t.TempDir(), "no-such-python"))
	if err == nil || !strings.Contains(err.Error(), "not a working Python 3 interpreter") || !strings.Contains(err.Error(), "set PYTHON") {
		t.Fatalf("error = %v", err)
	}
	notPython := filepath.Join(t.TempDir(), "fake")
	os.WriteFile(notPython, []byte("#!/bin/sh\necho hello\n"), 0o755)
	_, err = Run(notPython)
	if err == nil || !strings.Contains(err.Error(), "not a report") {
		t.Fatalf("a program that is not Python: error = %v", err)
	}
}

func TestMissingFrameworksSayInstallFirst(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	// -I in the probe hides any user site; an empty venv is the clean case.
	dir := t.TempDir()
	if out, err := exec.Command(py, "-m", "venv", "--without-pip", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot make a venv: %v\n%s", err, out)
	}
	py = filepath.Join(dir, "bin", "python")
	_, err = Run(py)
	var nf *NoFrameworkError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), "install one first") || !strings.Contains(err.Error(), "pip install jax") {
		t.Fatalf("error = %v, want a NoFrameworkError saying to install TensorFlow or jax first", err)
	}
	_, err = RunTensorFlow(py)
	var nt *NoTensorFlowError
	if !errors.As(err, &nf) && !errors.As(err, &nt) {
		t.Fatalf("RunTensorFlow: error = %v, want one saying what to install", err)
	}
}

// TestJaxOnly probes a venv that has jax but no TensorFlow, when one is given
// (METALPLUG_TEST_JAX_PYTHON, which go tool mage test provides): a report
// with jax and the StableHLO versions measured from its jaxlib, and no
// TensorFlow.
func TestJaxOnly(t *testing.T) {
	py := os.Getenv("METALPLUG_TEST_JAX_PYTHON")
	if py == "" {
		t.Skip("METALPLUG_TEST_JAX_PYTHON is not set: run go tool mage test")
	}
	r, err := Run(py)
	if err != nil {
		t.Fatal(err)
	}
	if r.HasTensorFlow() || !r.HasJax() {
		t.Fatalf("TensorFlow %v, jax %+v: want jax alone", r.HasTensorFlow(), r.Jax)
	}
	if r.Jax.JaxlibVersion == "" || strings.Count(r.Jax.StablehloCurrent, ".") != 2 || r.Jax.StablehloMinimum == "" ||
		strings.Count(r.Jax.PJRTFramework, ".") != 1 || strings.Count(r.Jax.PJRTMinimum, ".") != 1 {
		t.Errorf("jax report %+v", *r.Jax)
	}
	if _, err := RunTensorFlow(py); err == nil || !strings.Contains(err.Error(), "TensorFlow is not installed") {
		t.Errorf("RunTensorFlow on a jax-only venv: %v", err)
	}
	t.Logf("jax %s, jaxlib %s, StableHLO %s..%s, PJRT %s (from %s)", r.Jax.Version, r.Jax.JaxlibVersion, r.Jax.StablehloMinimum, r.Jax.StablehloCurrent,
		r.Jax.PJRTFramework, r.Jax.PJRTMinimum)
}

func TestHeaderFeaturesAndMissingHeaders(t *testing.T) {
	inc := t.TempDir()
	se := filepath.Join(inc, "tensorflow", "c", "experimental", "stream_executor")
	os.MkdirAll(se, 0o755)
	r := &Report{TensorFlow: TensorFlow{Version: "2.21.0", Distribution: "tensorflow", IncludeDir: inc}}
	if err := r.readHeaders(); err == nil || !strings.Contains(err.Error(), "no C headers") {
		t.Fatalf("no headers: error = %v", err)
	}
	os.WriteFile(filepath.Join(se, "stream_executor.h"), []byte("typedef struct SP_StreamOptions {int x;} SP_StreamOptions;\nTF_Bool force_memory_growth;"), 0o644)
	for _, h := range []string{"kernels.h", "c_api_macros.h", "tf_status.h", "tf_tensor.h"} {
		os.WriteFile(filepath.Join(inc, "tensorflow", "c", h), nil, 0o644)
	}
	if err := r.readHeaders(); err != nil {
		t.Fatal(err)
	}
	if !r.Has(FeatureStreamOptions) || !r.Has(FeatureForceMemoryGrowth) || r.Has(FeatureKernelsExperimental) {
		t.Errorf("features = %v", r.Headers.Features)
	}
}

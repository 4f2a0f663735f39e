package build

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/setup/probe"
)

func lib(t *testing.T, src string) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("builds an ELF shared object")
	}
	dir := t.TempDir()
	c := filepath.Join(dir, "x.c")
	os.WriteFile(c, []byte(src), 0o644)
	so := filepath.Join(dir, "libx.so")
	if out, err := exec.Command("cc", "-shared", "-fPIC", "-o", so, c).CombinedOutput(); err != nil {
		t.Skipf("cc: %v\n%s", err, out)
	}
	return so
}

const entryPoints = "void SE_InitPlugin(void* p, void* s) {}\nvoid TF_InitKernel(void) {}\nvoid TF_InitGraph(void* p, void* s) {}\nvoid TF_InitProfiler(void* p, void* s) {}\n"

// tfReport is a probe of a TensorFlow-only environment.
var tfReport = &probe.Report{TensorFlow: probe.TensorFlow{Distribution: "tensorflow", Version: "2.21.0"}}

// TestCheckLibraryFollowsTheFrameworks: a library exports the entry points
// of the frontends its environment has, and no others.
func TestCheckLibraryFollowsTheFrameworks(t *testing.T) {
	jaxOnly := &probe.Report{Jax: &probe.Jax{JaxlibVersion: "0.12.0.1", PJRTFramework: "0.116", PJRTMinimum: "0.29"}}
	both := &probe.Report{TensorFlow: tfReport.TensorFlow, Jax: jaxOnly.Jax}
	pjrt := lib(t, "void GetPjrtApi(void) {}\n")
	if err := CheckLibrary(pjrt, jaxOnly); err != nil {
		t.Errorf("a JAX-only library for a jax environment: %v", err)
	}
	if err := CheckLibrary(pjrt, both); err == nil || !strings.Contains(err.Error(), "SE_InitPlugin") {
		t.Errorf("a JAX-only library where TensorFlow is installed too: %v", err)
	}
	tf := lib(t, entryPoints)
	if err := CheckLibrary(tf, jaxOnly); err == nil {
		t.Errorf("a TensorFlow-only library for a jax environment: %v", err)
	}
	if got := Tags(jaxOnly); len(got) != 1 || got[0] != "notf" {
		t.Errorf("tags for jax alone: %v", got)
	}
	if got := Tags(both); len(got) != 0 {
		t.Errorf("tags for both: %v", got)
	}
}

// TestBuildRefusesAnotherJaxlib: a jaxlib of another minor than the pin is
// refused with the fix.
func TestBuildRefusesAnotherJaxlib(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "JAX_SUPPORTED_VERSION"), []byte("0.12\n"), 0o644)
	r := &probe.Report{Interpreter: probe.Interpreter{Path: "/venv/bin/python"}, Jax: &probe.Jax{JaxlibVersion: "0.11.3"}}
	_, err := Build(Options{Report: r, Root: root, Out: filepath.Join(t.TempDir(), "x.so")})
	for _, want := range []string{"0.11.3", "0.12", "pip install 'jax==0.12.*'"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v does not mention %q", err, want)
		}
	}
}

func TestCheckLibraryAcceptsTheLinkedSet(t *testing.T) {
	so := lib(t, entryPoints+"extern void TF_NewStatus(void);\nvoid f(void) { TF_NewStatus(); }\n")
	if err := CheckLibrary(so, tfReport); err != nil {
		t.Fatal(err)
	}
}

func TestCheckLibraryRejectsLinkedRuntimeOnlySymbols(t *testing.T) {
	so := lib(t, entryPoints+"extern void TF_AssignVariable(void);\nvoid f(void) { TF_AssignVariable(); }\n")
	err := CheckLibrary(so, tfReport)
	if err == nil || !strings.Contains(err.Error(), "TF_AssignVariable") || !strings.Contains(err.Error(), "run time") {
		t.Fatalf("error = %v", err)
	}
}

func TestCheckLibraryRejectsUnlistedSymbols(t *testing.T) {
	so := lib(t, entryPoints+"extern void TF_SomethingNew(void);\nvoid f(void) { TF_SomethingNew(); }\n")
	err := CheckLibrary(so, tfReport)
	if err == nil || !strings.Contains(err.Error(), "TF_SomethingNew") || !strings.Contains(err.Error(), "capi") {
		t.Fatalf("error = %v", err)
	}
}

func TestCheckLibraryWantsEntryPoints(t *testing.T) {
	so := lib(t, "void TF_InitKernel(void) {}\n")
	if err := CheckLibrary(so, tfReport); err == nil || !strings.Contains(err.Error(), "SE_InitPlugin") {
		t.Fatalf("error = %v", err)
	}
}

func TestBuildRefusesAnotherRelease(t *testing.T) {
	r := &probe.Report{Interpreter: probe.Interpreter{Path: "/venv/bin/python"},
		TensorFlow: probe.TensorFlow{Distribution: "tensorflow", Version: "2.20.0"}}
	_, err := Build(Options{Report: r, Pin: "2.21", Root: t.TempDir(), Out: filepath.Join(t.TempDir(), "x.so")})
	for _, want := range []string{"2.20.0", "2.21", "pip install 'tensorflow==2.21.*'"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v does not mention %q", err, want)
		}
	}
}

func TestBuildRefusesMissingExports(t *testing.T) {
	r := &probe.Report{TensorFlow: probe.TensorFlow{Distribution: "tensorflow", Version: "2.21.0", FrameworkLibrary: "libtensorflow_framework.so.2"},
		Symbols: []probe.Symbol{{Name: "TF_GetStream", Linked: true, Exported: false}}}
	_, err := Build(Options{Report: r, Pin: "2.21", Root: t.TempDir(), Out: filepath.Join(t.TempDir(), "x.so")})
	if err == nil || !strings.Contains(err.Error(), "TF_GetStream") {
		t.Fatalf("error = %v", err)
	}
}

func TestReadPin(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "TF_SUPPORTED_VERSION"), []byte("2.21\n"), 0o644)
	if p, err := ReadPin(dir); err != nil || p != "2.21" {
		t.Fatalf("ReadPin = %q, %v", p, err)
	}
	os.WriteFile(filepath.Join(dir, "TF_SUPPORTED_VERSION"), []byte("latest\n"), 0o644)
	if _, err := ReadPin(dir); err == nil {
		t.Fatal("a pin of \"latest\" was accepted")
	}
}

// TestFingerprintFollowsTensorFlowAndSources: the up-to-date check must see a
// different TensorFlow, not only changed sources.
func TestFingerprintFollowsTensorFlowAndSources(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "a.go")
	os.WriteFile(src, []byte("package a\n"), 0o644)
	tfdir := t.TempDir()
	fw := filepath.Join(tfdir, "libtensorflow_framework.so.2")
	hdr := filepath.Join(tfdir, "stream_executor.h")
	os.WriteFile(fw, []byte("lib"), 0o644)
	os.WriteFile(hdr, []byte("hdr"), 0o644)
	report := func(v string) *probe.Report {
		return &probe.Report{TensorFlow: probe.TensorFlow{Version: v, FrameworkLibrary: fw}, Headers: probe.Headers{StreamExecutor: hdr}}
	}
	key := func(r *probe.Report) string {
		k, err := fingerprint(root, r, []string{"build"}, buildEnv(r))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	base := key(report("2.21.0"))
	if key(report("2.21.0")) != base {
		t.Fatal("the fingerprint is not stable")
	}
	if key(report("2.21.1")) == base {
		t.Error("a different TensorFlow version keeps the fingerprint")
	}
	os.WriteFile(fw, []byte("another library"), 0o644)
	if key(report("2.21.0")) == base {
		t.Error("a different framework library keeps the fingerprint")
	}
	os.WriteFile(fw, []byte("lib"), 0o644)
	os.WriteFile(src, []byte("package a // changed\n"), 0o644)
	if key(report("2.21.0")) == base {
		t.Error("a changed source keeps the fingerprint")
	}
}

// TestDarwinBuildFlags: on macOS the library is a .dylib, links the framework
// library by its install name with a loader-relative rpath, and carries the
// deployment target in both the compile and the link.
func TestDarwinBuildFlags(t *testing.T) {
	r := &probe.Report{GOOS: "darwin", GOARCH: "arm64", TensorFlow: probe.TensorFlow{Version: "2.21.0", IncludeDir: "/tf/include", LibDir: "/tf"}}
	env := strings.Join(buildEnv(r), "\n")
	for _, want := range []string{"GOOS=darwin", "GOARCH=arm64", "-ltensorflow_framework.2", "@loader_path/../tensorflow",
		"-mmacosx-version-min=" + DarwinDeploymentTarget, "MACOSX_DEPLOYMENT_TARGET=" + DarwinDeploymentTarget} {
		if !strings.Contains(env, want) {
			t.Errorf("darwin build environment lacks %q:\n%s", want, env)
		}
	}
	if LibraryName("darwin") != "libmetalplug.dylib" {
		t.Errorf("darwin library name %q", LibraryName("darwin"))
	}
}

// TestPJRTVersion: PJRTVersion is what plugin/pjrt/abi.h declares, and a
// jaxlib that would refuse it is refused at build time.
func TestPJRTVersion(t *testing.T) {
	abi, err := os.ReadFile(filepath.Join("..", "..", "plugin", "pjrt", "abi.h"))
	if err != nil {
		t.Fatal(err)
	}
	var major, minor string
	for _, line := range strings.Split(string(abi), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "#define" {
			switch f[1] {
			case "MP_PJRT_MAJOR":
				major = f[2]
			case "MP_PJRT_MINOR":
				minor = f[2]
			}
		}
	}
	if major+"."+minor != PJRTVersion {
		t.Errorf("abi.h declares PJRT %s.%s, PJRTVersion is %s", major, minor, PJRTVersion)
	}
	ok := &probe.Jax{JaxlibVersion: "0.12.0.1", PJRTFramework: "0.116", PJRTMinimum: "0.29"}
	if err := checkPJRT(ok); err != nil {
		t.Errorf("jaxlib 0.12's range: %v", err)
	}
	for _, bad := range []*probe.Jax{
		{JaxlibVersion: "9", PJRTFramework: "1.3", PJRTMinimum: "1.0"},
		{JaxlibVersion: "9", PJRTFramework: "0.140", PJRTMinimum: "0.120"},
	} {
		if err := checkPJRT(bad); err == nil || !strings.Contains(err.Error(), "would not load") {
			t.Errorf("PJRT %s from %s: %v", bad.PJRTFramework, bad.PJRTMinimum, err)
		}
	}
}

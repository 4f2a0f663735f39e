package wheels

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/metalplug/metalplug/plugin/version"
	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/setup/probe"
	"github.com/metalplug/metalplug/setup/toolchain"
	"github.com/metalplug/metalplug/setup/venv"
)

// Distribution is the TensorFlow distribution the wheels are built against
// and pin when HouseOptions does not say: tensorflow-cpu on Linux (the one
// without CUDA kernels), tensorflow on macOS (the only one there), as
// matrix.ReleaseDistribution.
func Distribution(goos string) string {
	if goos == "darwin" {
		return "tensorflow"
	}
	return "tensorflow-cpu"
}

// WheelVersion is the version of the wheel built for TensorFlow tf: the
// project version with a post-release segment naming TensorFlow's
// major*100+minor, 0.1.0 for 2.19.1 giving 0.1.0.post219. Each TensorFlow
// minor gets its own public version, because one version of a distribution
// cannot carry two wheels with the same tags and different dependencies (an
// index holds one file per name, and pip's resolver takes one file per
// version); a local label (0.1.0+tf2.19) would do the same but PyPI refuses
// local versions.
func WheelVersion(project, tf string) (string, error) {
	v, err := version.Parse(tf)
	if err != nil {
		return "", err
	}
	if v.Minor() >= 100 {
		return "", fmt.Errorf("TensorFlow %s: a minor of 100 or more does not fit the post-release scheme", tf)
	}
	if !regexp_release.MatchString(project) {
		return "", fmt.Errorf("project version %q: the wheel scheme appends .postN, so it must be a plain release (X.Y.Z, optionally aN, bN or rcN)", project)
	}
	return fmt.Sprintf("%s.post%d", project, v.Major()*100+v.Minor()), nil
}

// HouseOptions say which wheels to build and where.
type HouseOptions struct {
	// Root is the source tree; Dir the wheelhouse (dist/wheelhouse).
	Root, Dir string
	// Releases are the TensorFlow releases, one wheel each: matrix.Releases
	// (package wheels cannot import matrix, which imports it through
	// tasks, so the caller passes the list).
	Releases []string
	// Distribution is the TensorFlow distribution; Distribution(GOOS) when
	// empty.
	Distribution string
	// Python finds an interpreter with exactly TensorFlow release tf of the
	// distribution; FindPython when nil.
	Python func(dist, tf string, log func(string, ...any)) (string, error)
	// Auditwheel is the auditwheel command; one from a venv of its own
	// (EnsureAuditwheel) when empty. Linux only.
	Auditwheel string
	// LibDir keeps the built libraries between runs, one directory per
	// release, so a second run with nothing changed does not compile;
	// <Root>/build/wheels when empty.
	LibDir string
	Log    func(format string, args ...any)
}

// Built is one wheel in the wheelhouse.
type Built struct {
	File       string // file name in the wheelhouse
	Version    string // the wheel's version
	TensorFlow string // the release it was built against
	Requires   string // its Requires-Dist on TensorFlow
	Size       int64
	SHA256     string
	GLIBC      string // the newest glibc symbol version it needs (Linux)
	Auditwheel string // the tag auditwheel found it consistent with (Linux)
}

// BuildWheelhouse builds one wheel per release into o.Dir and writes the
// PEP 503 simple index over every wheel there.
func BuildWheelhouse(o HouseOptions) ([]Built, error) {
	logf := o.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	releases := o.Releases
	if len(releases) == 0 {
		return nil, fmt.Errorf("no TensorFlow releases to build wheels for")
	}
	findPython := o.Python
	if findPython == nil {
		findPython = FindPython
	}
	libDir := o.LibDir
	if libDir == "" {
		libDir = filepath.Join(o.Root, "build", "wheels")
	}
	project, err := ProjectVersion(o.Root)
	if err != nil {
		return nil, err
	}
	auditwheel := o.Auditwheel
	if runtime.GOOS == "linux" && auditwheel == "" {
		if auditwheel, err = EnsureAuditwheel(logf); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	dist := o.Distribution
	if dist == "" {
		dist = Distribution(runtime.GOOS)
	}
	var out []Built
	for _, tf := range releases {
		r, err := probeRelease(findPython, dist, tf, logf)
		if err != nil {
			return nil, err
		}
		lib := filepath.Join(libDir, "tf-"+tf, build.LibraryName(r.GOOS))
		b, err := BuildOne(o.Root, o.Dir, project, lib, r, auditwheel, logf)
		if err != nil {
			return nil, fmt.Errorf("the wheel for %s %s: %w", dist, tf, err)
		}
		out = append(out, *b)
	}
	if err := WriteIndex(o.Dir); err != nil {
		return nil, err
	}
	return out, nil
}

// BuildOne compiles the library against the probed TensorFlow (at lib,
// skipped when current) and writes its wheel into dir. On Linux the wheel is
// checked by auditwheel and tagged manylinux_X_Y for the glibc it needs.
func BuildOne(root, dir, project, lib string, r *probe.Report, auditwheel string, logf func(string, ...any)) (*Built, error) {
	tf := r.TensorFlow.Version
	wv, err := WheelVersion(project, tf)
	if err != nil {
		return nil, err
	}
	if _, err := toolchain.Build(r, toolchain.Options{Root: root, Out: absPath(lib), Pin: version.Minor(tf), Log: logf}); err != nil {
		return nil, err
	}
	b := &Built{Version: wv, TensorFlow: tf, Requires: Requirement(r)}
	spec := Spec{Version: wv, Platform: PlatformTag(r), Lib: lib, Report: r}
	scratch, err := os.MkdirTemp("", "metalplug-wheel-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	if r.GOOS == "linux" {
		data, err := PortableRunpath(lib)
		if err != nil {
			return nil, err
		}
		spec.Lib = filepath.Join(scratch, filepath.Base(lib))
		if err := os.WriteFile(spec.Lib, data, 0o755); err != nil {
			return nil, err
		}
		needs, err := ReadELFNeeds(spec.Lib)
		if err != nil {
			return nil, err
		}
		if err := needs.CheckManylinux(); err != nil {
			return nil, err
		}
		b.GLIBC = needs.GLIBC
		arch := strings.TrimPrefix(spec.Platform, "linux_")
		// auditwheel judges the wheel as built (linux_<arch>); the final
		// wheel is written anew with the tag it found, so WHEEL and RECORD
		// say the same thing as the file name.
		plain, err := WriteWheel(scratch, spec)
		if err != nil {
			return nil, err
		}
		tag, err := Audit(auditwheel, filepath.Join(scratch, plain), arch)
		if err != nil {
			return nil, err
		}
		b.Auditwheel = tag
		if want := ManylinuxTag(needs.GLIBC, arch); strings.Split(tag, ".")[0] != want {
			return nil, fmt.Errorf("auditwheel says %s, but the library's newest glibc symbol version is %s (%s): one of the two is wrong", tag, needs.GLIBC, want)
		}
		spec.Platform = tag
	}
	// Drop this version's wheels from an earlier run (another tag, say).
	old, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("%s-%s-*.whl", Name, wv)))
	for _, p := range old {
		if filepath.Base(p) != spec.FileName() {
			os.Remove(p)
			os.Remove(p + ".metadata")
		}
	}
	name, err := WriteWheel(dir, spec)
	if err != nil {
		return nil, err
	}
	b.File = name
	if b.SHA256, b.Size, err = fileSHA256(filepath.Join(dir, name)); err != nil {
		return nil, err
	}
	logf("%s: %s, %.1f MB, Requires-Dist %s", name, tf, float64(b.Size)/1e6, b.Requires)
	return b, nil
}

// probeRelease probes the interpreter findPython gives for exactly dist==tf.
func probeRelease(findPython func(dist, tf string, log func(string, ...any)) (string, error), dist, tf string, logf func(string, ...any)) (*probe.Report, error) {
	python, err := findPython(dist, tf, logf)
	if err != nil {
		return nil, err
	}
	r, err := probe.RunTensorFlow(python)
	if err != nil {
		return nil, err
	}
	if r.TensorFlow.Distribution != dist || r.TensorFlow.Version != tf {
		return nil, fmt.Errorf("%s has %s %s, not %s %s", python, r.TensorFlow.Distribution, r.TensorFlow.Version, dist, tf)
	}
	return r, nil
}

// FindPython returns an interpreter with exactly dist==tf installed. It reuses
// a venv that already has it (the matrix's, matrix-<dist>-<tf>-py*, or the
// tests', <dist>-<minor>) and otherwise makes wheels-<dist>-<tf>. Building
// only reads TensorFlow's headers and library, so borrowing is harmless.
func FindPython(dist, tf string, logf func(string, ...any)) (string, error) {
	root, err := venv.Dir()
	if err != nil {
		return "", err
	}
	var candidates []string
	m, _ := filepath.Glob(filepath.Join(root, fmt.Sprintf("matrix-%s-%s-py*", dist, tf)))
	sort.Sort(sort.Reverse(sort.StringSlice(m)))
	candidates = append(candidates, m...)
	candidates = append(candidates, filepath.Join(root, dist+"-"+version.Minor(tf)), filepath.Join(root, "wheels-"+dist+"-"+tf))
	for _, c := range candidates {
		if _, err := os.Stat(filepath.Join(c, ".metalplug-ready")); err != nil {
			continue // absent, or still being made
		}
		if installedVersion(c, dist) == tf {
			return venv.Python(c), nil
		}
	}
	dir, err := venv.Ensure("wheels-"+dist+"-"+tf, "", []string{dist + "==" + tf}, logf)
	if err != nil {
		return "", err
	}
	return venv.Python(dir), nil
}

// installedVersion reads the version of dist installed in the venv at dir
// from its dist-info directory name, without starting Python.
func installedVersion(dir, dist string) string {
	pattern := filepath.Join(dir, "lib", "python3*", "site-packages", strings.ReplaceAll(dist, "-", "_")+"-*.dist-info")
	m, _ := filepath.Glob(pattern)
	if len(m) != 1 {
		return ""
	}
	base := strings.TrimSuffix(filepath.Base(m[0]), ".dist-info")
	return base[strings.LastIndex(base, "-")+1:]
}

// absPath is p made absolute (the toolchain reads a relative library path
// as relative to the tree, and these already include it).
func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

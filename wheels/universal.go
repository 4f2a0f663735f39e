package wheels

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	jaxplugin "github.com/metalplug/metalplug/plugin/pjrt/python"
	"github.com/metalplug/metalplug/plugin/python"
	"github.com/metalplug/metalplug/plugin/version"
	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/setup/probe"
	"github.com/metalplug/metalplug/setup/toolchain"
)

// The universal wheel is what a release publishes to the index, one per
// platform: the library built for each supported TensorFlow release, with
// the JAX frontend in each (metalplug/builds/tf-X.Y/), a build for processes
// without TensorFlow (metalplug/builds/jax/), the loader TensorFlow finds in
// tensorflow-plugins, which loads the build of the running TensorFlow, the
// jax_plugins module, which loads the same one, and the metalplug module
// (metalplug.stats()), in whose package directory the builds are data. It
// requires neither TensorFlow nor jax, so installing it never moves either.
// The per-release wheels (BuildWheelhouse) stay for whoever pins one.

// BuildsDir is where the universal wheel puts the builds, relative to
// site-packages. The loader finds it as ../metalplug/builds from
// tensorflow-plugins, and jax_plugins.metalplug as ../../metalplug/builds.
const BuildsDir = "metalplug/builds"

// JaxBuild is the name of the build for processes without TensorFlow.
const JaxBuild = "jax"

// TFBuild is the name of the build for TensorFlow minor release tf.
func TFBuild(tf string) string { return "tf-" + version.Minor(tf) }

// UniversalOptions say what goes into the universal wheel.
type UniversalOptions struct {
	// Root is the source tree; Dir where the wheel is written.
	Root, Dir string
	// Releases are the TensorFlow releases, one build each (matrix.Releases).
	Releases []string
	// Distribution is the TensorFlow distribution the builds compile
	// against; Distribution(GOOS) when empty. The builds serve tensorflow
	// and tensorflow-cpu alike: both ship the same framework library.
	Distribution string
	// Python finds an interpreter with exactly one TensorFlow release;
	// FindPython when nil.
	Python func(dist, tf string, log func(string, ...any)) (string, error)
	// Jax is the probe of an interpreter with the supported jaxlib
	// (JAX_SUPPORTED_VERSION): its jaxlib and StableHLO versions are
	// stamped into every build. The JAX frontend needs no header or
	// library of jaxlib, so TensorFlow's interpreter need not have it.
	Jax *probe.Report
	// Auditwheel is the auditwheel command (Linux); EnsureAuditwheel's
	// when empty.
	Auditwheel string
	// LibDir keeps the builds between runs; <Root>/build/universal when
	// empty.
	LibDir string
	Log    func(format string, args ...any)
}

// Universal is the universal wheel as built.
type Universal struct {
	File    string
	Version string
	Size    int64
	SHA256  string
	// Builds name each build and what it was built against, in the order
	// of the wheel ("tf-2.21: tensorflow-cpu 2.21.0 and jaxlib 0.12.0").
	Builds     []string
	GLIBC      string // the newest glibc symbol version any library needs (Linux)
	Auditwheel string // the tag auditwheel found the wheel consistent with (Linux)
	Elapsed    time.Duration
}

// BuildUniversal compiles every build (skipping those that are current),
// the loader, and writes the universal wheel into o.Dir.
func BuildUniversal(o UniversalOptions) (*Universal, error) {
	start := time.Now()
	logf := o.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if len(o.Releases) == 0 {
		return nil, fmt.Errorf("no TensorFlow releases to build for")
	}
	if o.Jax == nil || !o.Jax.HasJax() {
		return nil, fmt.Errorf("the universal wheel needs the probe of an interpreter with jaxlib %s", readJaxPin(o.Root))
	}
	findPython := o.Python
	if findPython == nil {
		findPython = FindPython
	}
	libDir := o.LibDir
	if libDir == "" {
		libDir = filepath.Join(o.Root, "build", "universal")
	}
	dist := o.Distribution
	if dist == "" {
		dist = Distribution(runtime.GOOS)
	}
	project, err := ProjectVersion(o.Root)
	if err != nil {
		return nil, err
	}
	var builds []universalBuild
	var newest *probe.Report
	for _, tf := range o.Releases {
		r, err := probeRelease(findPython, dist, tf, logf)
		if err != nil {
			return nil, err
		}
		both := *r
		both.Jax = o.Jax.Jax
		name := TFBuild(tf)
		lib := filepath.Join(libDir, name, build.LibraryName(r.GOOS))
		if _, err := toolchain.Build(&both, toolchain.Options{Root: o.Root, Out: absPath(lib), Pin: version.Minor(tf), Log: logf}); err != nil {
			return nil, fmt.Errorf("the build for %s %s: %w", dist, tf, err)
		}
		builds = append(builds, universalBuild{name, lib, fmt.Sprintf("%s %s and jaxlib %s", dist, tf, o.Jax.Jax.JaxlibVersion)})
		if newest == nil || version.Less(newest.TensorFlow.Version, tf) {
			newest = r
		}
	}
	jaxOnly := *o.Jax // the interpreter may have TensorFlow too; this build leaves it out
	jaxOnly.TensorFlow = probe.TensorFlow{}
	jaxLib := filepath.Join(libDir, JaxBuild, build.LibraryName(o.Jax.GOOS))
	if _, err := toolchain.Build(&jaxOnly, toolchain.Options{Root: o.Root, Out: absPath(jaxLib), Log: logf}); err != nil {
		return nil, fmt.Errorf("the JAX-only build: %w", err)
	}
	builds = append(builds, universalBuild{JaxBuild, jaxLib, "jaxlib " + o.Jax.Jax.JaxlibVersion})
	loader := filepath.Join(libDir, "loader", build.LoaderName(newest.GOOS))
	if err := build.BuildLoader(o.Root, loader, newest); err != nil {
		return nil, err
	}

	u := &Universal{Version: project}
	files, err := universalFiles(loader, builds, func(lib string) ([]byte, error) {
		if newest.GOOS == "linux" {
			return portableLinux(lib, &u.GLIBC)
		}
		return os.ReadFile(lib)
	})
	if err != nil {
		return nil, err
	}
	for _, b := range builds {
		u.Builds = append(u.Builds, b.name+": "+b.what)
	}
	meta := UniversalMetadata(project, o.Releases, o.Jax.Jax.JaxlibVersion)
	platform := PlatformTag(newest)
	if newest.GOOS == "linux" {
		auditwheel := o.Auditwheel
		if auditwheel == "" {
			if auditwheel, err = EnsureAuditwheel(logf); err != nil {
				return nil, err
			}
		}
		scratch, err := os.MkdirTemp("", "metalplug-universal-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(scratch)
		plain, err := assemble(scratch, project, platform, files, meta, true)
		if err != nil {
			return nil, err
		}
		if platform, err = auditedTag(auditwheel, filepath.Join(scratch, plain), strings.TrimPrefix(platform, "linux_"), u.GLIBC); err != nil {
			return nil, err
		}
		u.Auditwheel = platform
	}
	old, _ := filepath.Glob(filepath.Join(o.Dir, fmt.Sprintf("%s-%s-py3-none-*.whl", Name, project)))
	for _, p := range old {
		os.Remove(p)
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	if u.File, err = assemble(o.Dir, project, platform, files, meta, true); err != nil {
		return nil, err
	}
	if u.SHA256, u.Size, err = fileSHA256(filepath.Join(o.Dir, u.File)); err != nil {
		return nil, err
	}
	u.Elapsed = time.Since(start)
	logf("%s: %.1f MB, builds %s", u.File, float64(u.Size)/1e6, strings.Join(u.Builds, "; "))
	return u, nil
}

// universalBuild is one build of the library in the universal wheel: its
// name under BuildsDir, the library, and what it was built against.
type universalBuild struct{ name, lib, what string }

// universalFiles lays out the universal wheel (all but the dist-info): the
// loader in tensorflow-plugins, each build in BuildsDir/<name>/, the
// jax_plugins module and the metalplug module, in that order. The builds
// stay data: metalplug/ gains an __init__.py, metalplug/builds none. read
// gives a library's bytes as the wheel holds them.
func universalFiles(loader string, builds []universalBuild, read func(lib string) ([]byte, error)) ([]file, error) {
	var files []file
	add := func(name, lib string) error {
		data, err := read(lib)
		if err != nil {
			return err
		}
		files = append(files, file{name, data, 0o755})
		return nil
	}
	if err := add("tensorflow-plugins/"+filepath.Base(loader), loader); err != nil {
		return nil, err
	}
	for _, b := range builds {
		if err := add(BuildsDir+"/"+b.name+"/"+filepath.Base(b.lib), b.lib); err != nil {
			return nil, err
		}
	}
	return append(files, file{jaxplugin.ModulePath, jaxplugin.Module, 0o644}, file{python.ModulePath, python.Module, 0o644}), nil
}

// UniversalMetadata is the universal wheel's core metadata. It has no
// Requires-Dist: whichever TensorFlow (tensorflow, tensorflow-cpu) or jax a
// user has stays as it is, and a JAX-only user gets no TensorFlow.
func UniversalMetadata(project string, releases []string, jaxlib string) []byte {
	var minors []string
	for _, tf := range releases {
		minors = append(minors, version.Minor(tf))
	}
	sort.Slice(minors, func(i, j int) bool { return version.Less(minors[i]+".0", minors[j]+".0") })
	lines := []string{
		"Metadata-Version: 2.1",
		"Name: " + Name,
		"Version: " + project,
		fmt.Sprintf("Summary: A Metal GPU backend for TensorFlow and JAX, written in Go (for TensorFlow %s and jaxlib %s; the sdist builds for any other)",
			strings.Join(minors, ", "), version.Minor(jaxlib)),
		"License: Apache-2.0",
		"Requires-Python: >=3.9",
	}
	return []byte(strings.Join(append(lines, "", ""), "\n"))
}

// portableLinux returns lib's bytes without the build machine's absolute
// runpath, after checking that it links only what manylinux allows, and
// raises *glibc to the newest glibc symbol version it needs.
func portableLinux(lib string, glibc *string) ([]byte, error) {
	data, err := PortableRunpath(lib)
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp("", "metalplug-lib-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return nil, err
	}
	tmp.Close()
	needs, err := ReadELFNeeds(tmp.Name())
	if err != nil {
		return nil, err
	}
	if err := needs.CheckManylinux(); err != nil {
		return nil, fmt.Errorf("%s: %w", lib, err)
	}
	if glibcLess(*glibc, needs.GLIBC) {
		*glibc = needs.GLIBC
	}
	return data, nil
}

// auditedTag asks auditwheel for the platform tag of the linux_<arch> wheel
// and holds it to the one the libraries' newest glibc symbol version gives.
func auditedTag(auditwheel, wheel, arch, glibc string) (string, error) {
	tag, err := Audit(auditwheel, wheel, arch)
	if err != nil {
		return "", err
	}
	if want := ManylinuxTag(glibc, arch); strings.Split(tag, ".")[0] != want {
		return "", fmt.Errorf("auditwheel says %s, but the newest glibc symbol version the libraries need is %s (%s): one of the two is wrong", tag, glibc, want)
	}
	return tag, nil
}

func readJaxPin(root string) string {
	pin, err := build.ReadJaxPin(root)
	if err != nil {
		return "(JAX_SUPPORTED_VERSION unreadable)"
	}
	return pin
}

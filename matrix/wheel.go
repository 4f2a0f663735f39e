package matrix

import (
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"github.com/metalplug/metalplug/plugin/version"
)

// Wheel is a wheel file name split into its parts (the binary distribution
// format: name-version[-build]-python-abi-platform.whl). Each tag may be a
// set written with dots (manylinux_2_17_x86_64.manylinux2014_x86_64).
type Wheel struct {
	Name, Version string
	Python        []string
	ABI           []string
	Platform      []string
}

// ParseWheel splits a wheel file name; ok is false for anything else (an
// sdist, a malformed name).
func ParseWheel(filename string) (w Wheel, ok bool) {
	base, found := strings.CutSuffix(filename, ".whl")
	if !found {
		return w, false
	}
	parts := strings.Split(base, "-")
	if len(parts) != 5 && len(parts) != 6 {
		return w, false
	}
	n := len(parts)
	return Wheel{
		Name:     parts[0],
		Version:  parts[1],
		Python:   strings.Split(parts[n-3], "."),
		ABI:      strings.Split(parts[n-2], "."),
		Platform: strings.Split(parts[n-1], "."),
	}, true
}

// Platform is the machine a wheel must run on.
type Platform struct {
	GOOS, GOARCH string
	// Glibc is the C library's version, "2.36"; when empty every manylinux
	// level is taken as supported.
	Glibc string
}

// ThisPlatform is the machine this runs on, with the glibc an interpreter
// reported (they all share the machine's).
func ThisPlatform(glibc string) Platform {
	return Platform{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, Glibc: glibc}
}

// arch is the wheel tags' name for the CPU.
func (p Platform) arch() string {
	switch {
	case p.GOARCH == "amd64":
		return "x86_64"
	case p.GOARCH == "arm64" && p.GOOS == "linux":
		return "aarch64"
	}
	return p.GOARCH
}

// String names the wheels that fit, as the report says it.
func (p Platform) String() string {
	switch p.GOOS {
	case "linux":
		s := "manylinux*_" + p.arch()
		if p.Glibc != "" {
			s += " (glibc " + p.Glibc + ")"
		}
		return s
	case "darwin":
		return "macosx_*_" + p.arch()
	}
	return p.GOOS + "/" + p.GOARCH
}

var manylinux = regexp.MustCompile(`^manylinux_(\d+)_(\d+)_(\w+)$`)

// legacyManylinux are PEP 600's aliases: the glibc each older tag stands for.
var legacyManylinux = map[string][2]int{"manylinux1": {2, 5}, "manylinux2010": {2, 12}, "manylinux2014": {2, 17}}

// Fits reports whether a platform tag installs here. Only manylinux (on
// Linux) and macosx (on macOS) count, and "any" (pure-Python wheels, such as
// jax's): plain linux_* wheels are not portable, and PyPI refuses them
// anyway.
func (p Platform) Fits(tag string) bool {
	if tag == "any" {
		return true
	}
	switch p.GOOS {
	case "linux":
		var major, minor int
		if m := manylinux.FindStringSubmatch(tag); m != nil {
			if m[3] != p.arch() {
				return false
			}
			major, _ = strconv.Atoi(m[1])
			minor, _ = strconv.Atoi(m[2])
		} else {
			legacy, arch, ok := strings.Cut(tag, "_")
			glibc, known := legacyManylinux[legacy]
			if !ok || !known || arch != p.arch() {
				return false
			}
			major, minor = glibc[0], glibc[1]
		}
		return p.glibcAtLeast(major, minor)
	case "darwin":
		return strings.HasPrefix(tag, "macosx_") && (strings.HasSuffix(tag, "_"+p.arch()) || strings.HasSuffix(tag, "_universal2"))
	}
	return false
}

func (p Platform) glibcAtLeast(major, minor int) bool {
	if p.Glibc == "" {
		return true
	}
	hMajor, hMinor, _ := strings.Cut(p.Glibc, ".")
	a, err1 := strconv.Atoi(hMajor)
	b, err2 := strconv.Atoi(hMinor)
	if err1 != nil || err2 != nil {
		return true
	}
	return a > major || a == major && b >= minor
}

// fitsPython reports whether a wheel's Python and ABI tags take py.
func fitsPython(w Wheel, py Python) bool {
	tag := py.Tag()
	pyOK := false
	for _, t := range w.Python {
		if t == tag || t == "py3" || t == "py"+strings.TrimPrefix(tag, "cp") {
			pyOK = true
		}
	}
	if !pyOK {
		return false
	}
	for _, a := range w.ABI {
		if a == tag || a == "abi3" || a == "none" {
			return true
		}
	}
	return false
}

// fileFits says why a file cannot be installed with py on plat, or "" when
// it can.
func fileFits(f File, py Python, plat Platform) string {
	w, ok := ParseWheel(f.Filename)
	switch {
	case !ok:
		return "not a wheel"
	case f.Yanked.Yanked:
		return "yanked"
	case !fitsPython(w, py):
		return "not for " + py.Tag()
	}
	fits := false
	for _, t := range w.Platform {
		if plat.Fits(t) {
			fits = true
		}
	}
	if !fits {
		return "not for " + plat.String()
	}
	if ok, why := RequiresPython(f.RequiresPython, py.Version); !ok {
		return why
	}
	return ""
}

// RequiresPython evaluates a requires-python specifier set (">=3.10",
// ">=3.9,<3.13", "!=3.0.*") for an interpreter version. A clause it cannot
// read is let through, as pip lets through a metadata value it cannot parse.
func RequiresPython(spec, pyVersion string) (bool, string) {
	if strings.TrimSpace(spec) == "" {
		return true, ""
	}
	pv, err := version.Parse(pyVersion)
	if err != nil {
		return true, ""
	}
	for _, clause := range strings.Split(spec, ",") {
		clause = strings.TrimSpace(clause)
		op := ""
		for _, o := range []string{"===", "~=", "==", "!=", "<=", ">=", "<", ">"} {
			if strings.HasPrefix(clause, o) {
				op = o
				break
			}
		}
		if op == "" {
			continue
		}
		target := strings.TrimSpace(clause[len(op):])
		if prefix, wild := strings.CutSuffix(target, ".*"); wild {
			match := pyVersion == prefix || strings.HasPrefix(pyVersion, prefix+".")
			if op == "==" && !match || op == "!=" && match {
				return false, fmt.Sprintf("requires Python %s", spec)
			}
			continue
		}
		tv, err := version.Parse(target)
		if err != nil {
			continue
		}
		c := pv.Compare(tv)
		ok := true
		switch op {
		case "==", "===":
			ok = c == 0
		case "!=":
			ok = c != 0
		case "<=":
			ok = c <= 0
		case ">=":
			ok = c >= 0
		case "<":
			ok = c < 0
		case ">":
			ok = c > 0
		case "~=":
			// ~=X.Y means >=X.Y, ==X.*; ~=X.Y.Z means >=X.Y.Z, ==X.Y.*.
			parts := strings.Split(target, ".")
			prefix := strings.Join(parts[:max(len(parts)-1, 1)], ".")
			ok = c >= 0 && (pyVersion == prefix || strings.HasPrefix(pyVersion, prefix+"."))
		}
		if !ok {
			return false, fmt.Sprintf("requires Python %s", spec)
		}
	}
	return true, ""
}

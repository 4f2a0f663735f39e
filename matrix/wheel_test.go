package matrix

import (
	"strings"
	"testing"
)

func TestParseWheel(t *testing.T) {
	w, ok := ParseWheel("tensorflow_cpu-2.19.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl")
	if !ok || w.Name != "tensorflow_cpu" || w.Version != "2.19.1" || strings.Join(w.Python, ",") != "cp311" ||
		strings.Join(w.Platform, ",") != "manylinux_2_17_x86_64,manylinux2014_x86_64" {
		t.Fatalf("%+v %v", w, ok)
	}
	// A build tag is the optional sixth part.
	if w, ok := ParseWheel("x-1.0-1b-py3-none-any.whl"); !ok || w.Version != "1.0" || w.ABI[0] != "none" {
		t.Errorf("with a build tag: %+v %v", w, ok)
	}
	for _, bad := range []string{"tensorflow_cpu-2.21.2.tar.gz", "a-b.whl", "x-1.0-py3-none.whl"} {
		if _, ok := ParseWheel(bad); ok {
			t.Errorf("%s parsed as a wheel", bad)
		}
	}
}

func TestPlatformFits(t *testing.T) {
	p := Platform{GOOS: "linux", GOARCH: "amd64", Glibc: "2.36"}
	for tag, want := range map[string]bool{
		"manylinux_2_27_x86_64":  true,
		"manylinux_2_36_x86_64":  true,
		"manylinux_2_39_x86_64":  false, // newer glibc than this machine's
		"manylinux2014_x86_64":   true,
		"manylinux2010_x86_64":   true,
		"manylinux1_x86_64":      true,
		"manylinux_2_27_aarch64": false,
		"linux_x86_64":           false, // not portable
		"win_amd64":              false,
		"macosx_12_0_arm64":      false,
		"musllinux_1_2_x86_64":   false,
		"any":                    true, // pure-Python wheels (jax's)
	} {
		if got := p.Fits(tag); got != want {
			t.Errorf("linux/amd64 glibc 2.36 fits %s = %v, want %v", tag, got, want)
		}
	}
	mac := Platform{GOOS: "darwin", GOARCH: "arm64"}
	for tag, want := range map[string]bool{"macosx_12_0_arm64": true, "macosx_11_0_universal2": true, "macosx_10_15_x86_64": false, "manylinux_2_27_aarch64": false} {
		if got := mac.Fits(tag); got != want {
			t.Errorf("darwin/arm64 fits %s = %v, want %v", tag, got, want)
		}
	}
	arm := Platform{GOOS: "linux", GOARCH: "arm64"}
	if !arm.Fits("manylinux_2_27_aarch64") || arm.Fits("manylinux_2_27_x86_64") {
		t.Error("linux/arm64 takes aarch64 wheels only")
	}
	if got := p.String(); got != "manylinux*_x86_64 (glibc 2.36)" {
		t.Errorf("String = %q", got)
	}
}

func TestRequiresPython(t *testing.T) {
	for _, c := range []struct {
		spec, py string
		ok       bool
	}{
		{"", "3.11.7", true},
		{">=3.10", "3.11.7", true},
		{">=3.10", "3.9.18", false},
		{">=3.9,<3.13", "3.13.0", false},
		{">=3.9, <3.13", "3.12.1", true},
		{"!=3.0.*,>=3.7", "3.11.7", true},
		{"==3.11.*", "3.11.7", true},
		{"==3.11.*", "3.12.1", false},
		{"~=3.10", "3.11.7", true},
		{"~=3.10", "4.0.0", false},
		{"~=3.11.2", "3.11.7", true},
		{"~=3.11.2", "3.12.0", false},
		{">3.11.7", "3.11.7", false},
		{"<=3.11.7", "3.11.7", true},
		{"garbage", "3.11.7", true}, // unreadable: let through, as pip does
	} {
		if ok, why := RequiresPython(c.spec, c.py); ok != c.ok {
			t.Errorf("RequiresPython(%q, %s) = %v (%s), want %v", c.spec, c.py, ok, why, c.ok)
		}
	}
}

func TestPythonTags(t *testing.T) {
	p := Python{Version: "3.11.7"}
	if p.Minor() != "3.11" || p.Tag() != "cp311" {
		t.Errorf("minor %s tag %s", p.Minor(), p.Tag())
	}
	w, _ := ParseWheel("x-1.0-cp311-abi3-manylinux_2_17_x86_64.whl")
	if !fitsPython(w, p) {
		t.Error("an abi3 cp311 wheel does not fit 3.11")
	}
	w, _ = ParseWheel("x-1.0-cp312-cp312-manylinux_2_17_x86_64.whl")
	if fitsPython(w, p) {
		t.Error("a cp312 wheel fits 3.11")
	}
}

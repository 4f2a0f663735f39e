package matrix

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestExpectedResourceVariableAPI(t *testing.T) {
	for v, want := range map[string]string{
		"2.18.0":             "yes",
		"2.19.1":             "yes",
		"2.20.0":             "no",
		"2.21.0":             "no",
		"2.21.0rc1":          "no",
		"2.22.0.dev20260905": "no",
		"2.22.0.dev20260914": "yes",
		"2.23.0.dev20261026": "yes",
		"2.22.0":             "unknown", // a later release: the measurement says
		"not a version":      "unknown",
	} {
		exported, known := ExpectedResourceVariableAPI(v)
		got := map[bool]string{true: "yes", false: "no"}[exported]
		if !known {
			got = "unknown"
		}
		if got != want {
			t.Errorf("%s: %s, want %s", v, got, want)
		}
	}
}

// TestFindPythons puts fake interpreters on a PATH: one that answers, a
// pyenv-like shim that refuses, one found twice (the first wins), one that
// cannot make a venv, and a PyPy.
func TestFindPythons(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell scripts")
	}
	a, b := t.TempDir(), t.TempDir()
	script := func(dir, name, body string) {
		os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755)
	}
	answer := func(version, impl, err string) string {
		return `echo '{"path": "/opt/py/` + version + `/bin/python", "version": "` + version + `", "implementation": "` + impl + `", "glibc": "2.36", "error": "` + err + `"}'`
	}
	script(a, "python3.11", answer("3.11.7", "cpython", ""))
	script(b, "python3.11", answer("3.11.1", "cpython", ""))
	script(a, "python3.12", `echo "pyenv: python3.12: command not found" >&2; exit 127`)
	script(b, "python3.9", answer("3.9.18", "cpython", "cannot make a venv: No module named 'ensurepip'"))
	script(b, "python3.10", answer("3.10.13", "pypy", ""))
	script(b, "python3.13-config", "exit 1")
	os.WriteFile(filepath.Join(b, "python3.14"), []byte("not executable"), 0o644)

	ins := FindPythons(a + string(os.PathListSeparator) + b)
	var got []string
	for _, in := range ins {
		s := in.Command + "="
		if in.Python != nil {
			s += in.Python.Version
		} else {
			s += "skipped:" + in.Skipped
		}
		got = append(got, s)
	}
	joined := strings.Join(got, "\n")
	for _, want := range []string{
		"python3.9=skipped:cannot make a venv",
		"python3.10=skipped:pypy, not CPython",
		"python3.11=3.11.7",
		"python3.12=skipped:does not run (exit status 127): pyenv: python3.12: command not found",
		"python3.14=skipped:not found",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("lacks %q:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "3.13") {
		t.Errorf("python3.13-config was taken for an interpreter:\n%s", joined)
	}
	// Sorted by version number, not as strings (3.9 before 3.10).
	if !strings.HasPrefix(got[0], "python3.9=") || !strings.HasPrefix(got[1], "python3.10=") {
		t.Errorf("order:\n%s", joined)
	}
	ps := Pythons(ins)
	if len(ps) != 1 || ps[0].Path != "/opt/py/3.11.7/bin/python" || ps[0].Glibc != "2.36" || ps[0].Tag() != "cp311" {
		t.Errorf("axis: %+v", ps)
	}
}

func TestDiskUsage(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 100<<10)
	os.WriteFile(filepath.Join(dir, "a"), data, 0o644)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "b"), data, 0o644)
	// A hard link is counted once, as du counts it.
	if err := os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "sub", "a-link")); err != nil {
		t.Skip("no hard links here")
	}
	n, err := diskUsage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n < 200<<10 || n > 300<<10 {
		t.Errorf("disk usage %d bytes, want about 200 KiB", n)
	}
}

package python

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fakeLibrary exports metalplug_stats as the library does (the whole
// length returned, at most capacity bytes written, -1 on failure), serving
// whatever report the test sets, and counts its calls.
const fakeLibrary = `#include <stdint.h>
#include <string.h>

static const char *report = "";
static int fail;
static int64_t calls, last_capacity;

void fake_set(const char *json, int failing) { report = json; fail = failing; }
int64_t fake_calls(void) { return calls; }
int64_t fake_last_capacity(void) { return last_capacity; }

int64_t metalplug_stats(char *buf, int64_t capacity) {
	calls++;
	last_capacity = capacity;
	if (fail) return -1;
	int64_t n = (int64_t)strlen(report);
	if (buf != NULL && capacity > 0) memcpy(buf, report, (size_t)(n < capacity ? n : capacity));
	return n;
}
`

// oldLibrary is a libmetalplug* without the export: a build from before
// metalplug_stats, or (named so) the universal wheel's loader.
const oldLibrary = "const char *metalplug_loader_build(void) { return 0; }\n"

func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not on PATH: the metalplug module's test needs it (%v)", name, err)
	}
	return p
}

func sharedLibrary(t *testing.T, gcc, dir, name, src string) string {
	t.Helper()
	c := filepath.Join(dir, strings.TrimSuffix(name, ".so")+".c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(dir, name)
	if out, err := exec.Command(gcc, "-shared", "-fPIC", "-o", so, c).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", name, err, out)
	}
	return so
}

// TestStatsReadsTheLoadedLibrary runs the module as installed (Module at
// ModulePath in a site directory that also holds the universal wheel's
// builds) in python3 against fake libraries named as the maps scan looks
// for them: no library loaded (or only the loader) is an error saying what
// to do; a libmetalplug* without metalplug_stats is passed over, and one
// mapped but not loaded is never loaded; the report parses, from one call
// when it fits the first buffer and from a second, larger one when it does
// not; a failing library is an error; measure() and stats_delta give the
// difference per frontend and per reason.
func TestStatsReadsTheLoadedLibrary(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the module reads the loaded images on Linux and macOS")
	}
	python, gcc := tool(t, "python3"), tool(t, "gcc")
	dir := t.TempDir()
	site := filepath.Join(dir, "site-packages")
	mod := filepath.Join(site, filepath.FromSlash(ModulePath))
	build := filepath.Join(site, "metalplug", "builds", "jax", "libmetalplug.so")
	for p, data := range map[string][]byte{mod: Module, build: []byte("not loaded")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fake := sharedLibrary(t, gcc, dir, "libmetalplug_fake.so", fakeLibrary)
	old := sharedLibrary(t, gcc, dir, "libmetalplug_old.so", oldLibrary)
	mapped := sharedLibrary(t, gcc, dir, "libmetalplug_mapped.so", fakeLibrary)
	loader := sharedLibrary(t, gcc, dir, "libmetalplug-loader.so", oldLibrary)
	script, err := filepath.Abs(filepath.Join("testdata", "stats_check.py"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "-I", "-B", script, site, fake, old, mapped, loader)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if err != nil || strings.TrimSpace(stdout.String()) != "OK" {
		t.Fatalf("stats_check.py: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
}

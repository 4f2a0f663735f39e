package opgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestGenerate(t *testing.T) {
	dir := write(t, map[string]string{
		"b.go":      "package ir\n\nvar bOps = opDefs{\n\t// OpB is second\n\t// by file name.\n\t{OpB, info()},\n}\n",
		"a.go":      "package ir\n\nvar aOps = opDefs{\n\t{OpA1, info()}, // beside\n\t{OpA2, info()},\n}\n\nvar notOps = []int{1}\n",
		"a_test.go": "package ir\n\nvar testOps = opDefs{{OpT, info()}}\n",
	})
	out, err := Generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{
		"OpInvalid Op = iota",
		"OpA1 // beside\n\tOpA2\n",
		"// OpB is second\n\t// by file name.\n\tOpB\n",
		"numOps\n)",
		"var opFamilies = [...]opDefs{aOps, bOps}",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if strings.Index(s, "OpA2") > strings.Index(s, "OpB\n") || strings.Contains(s, "OpT") {
		t.Errorf("order by file, test files skipped:\n%s", s)
	}
}

func TestGenerateRefuses(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"a duplicate":     {"a.go": "package ir\nvar x = opDefs{{OpA, i()}}\n", "b.go": "package ir\nvar y = opDefs{{OpA, i()}}\n"},
		"a malformed def": {"a.go": "package ir\nvar x = opDefs{{i()}}\n"},
		"no definitions":  {"a.go": "package ir\nvar x = 1\n"},
		"an empty family": {"a.go": "package ir\nvar x = opDefs{}\n"},
	} {
		if _, err := Generate(write(t, files)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

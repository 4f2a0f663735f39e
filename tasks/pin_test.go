package tasks

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/metalplug/metalplug/setup/build"
)

func TestMovePin(t *testing.T) {
	dir := t.TempDir()
	// In order: the last accepted pin is the one a refused pin must leave.
	for _, c := range [][2]string{{"2.22.0", "2.22"}, {"2.23.0.dev20261026", "2.23"}, {"2.19", "2.19"}, {"2.24.0rc1", "2.24"}} {
		in, want := c[0], c[1]
		got, err := MovePin(dir, in)
		if err != nil || got != want {
			t.Fatalf("MovePin(%q) = %q, %v", in, got, err)
		}
		if p, err := build.ReadPin(dir); err != nil || p != want {
			t.Fatalf("after MovePin(%q) the build reads the pin as %q, %v", in, p, err)
		}
	}
	if _, err := MovePin(dir, "newest"); err == nil {
		t.Fatal("a pin of \"newest\" was accepted")
	}
	b, _ := os.ReadFile(filepath.Join(dir, "TF_SUPPORTED_VERSION"))
	if string(b) != "2.24\n" {
		t.Fatalf("a refused pin changed the file to %q", b)
	}
}

func TestVenvPart(t *testing.T) {
	for req, want := range map[string]string{"tensorflow-cpu==2.21.*": "tensorflow-cpu-2.21", "jax==0.12.*": "jax-0.12", "flax>=0.12,<1": "flax-0.12-1"} {
		if got := venvPart(req); got != want {
			t.Errorf("venvPart(%q) = %q, want %q", req, got, want)
		}
	}
}

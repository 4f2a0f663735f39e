package cenv

import (
	"syscall"
	"testing"

	"github.com/metalplug/metalplug/plugin/cenv/internal/cenvtest"
)

// TestSeesTheLiveEnvironment sets a variable behind Go's back, as Python's
// os.environ does in a process that loaded the library, and reads it.
func TestSeesTheLiveEnvironment(t *testing.T) {
	const name = "METALPLUG_CENV_TEST"
	if _, ok := Lookup(name); ok {
		t.Fatalf("%s is already set", name)
	}
	if err := cenvtest.Setenv(name, "from C"); err != nil {
		t.Fatal(err)
	}
	defer cenvtest.Unsetenv(name)
	if got, ok := Lookup(name); !ok || got != "from C" {
		t.Fatalf("Lookup(%s) = %q, %v; want \"from C\", true", name, got, ok)
	}
	if v, ok := syscall.Getenv(name); ok && v != "from C" {
		t.Fatalf("Go's copy holds %q", v)
	}
	if Get("METALPLUG_CENV_TEST_UNSET") != "" {
		t.Fatal("an unset variable must read as empty")
	}
}

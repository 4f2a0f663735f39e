package device

import (
	"runtime"
	"strings"
	"testing"
)

// TestChoice: off macOS the host driver is offered only when
// METALPLUG_HOST_DEVICE=1 asks for it, and the reason says how; bad
// settings of the host driver are refused by name.
func TestChoice(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("on macOS the Metal driver is the default")
	}
	t.Setenv("METALPLUG_HOST_DEVICE", "")
	if d, k, why := choose(); d != nil || k != None || !strings.Contains(why, "set METALPLUG_HOST_DEVICE=1") {
		t.Errorf("without the setting: driver %v, kind %v, reason %q", d, k, why)
	}
	t.Setenv("METALPLUG_HOST_DEVICE", "1")
	if d, k, _ := choose(); d == nil || k != Host {
		t.Errorf("with the setting: driver %v, kind %v", d, k)
	}
	t.Setenv("METALPLUG_HOST_MEMORY_MB", "lots")
	if d, _, why := choose(); d != nil || !strings.Contains(why, "METALPLUG_HOST_MEMORY_MB=lots") {
		t.Errorf("a bad memory cap: driver %v, reason %q", d, why)
	}
	t.Setenv("METALPLUG_HOST_MEMORY_MB", "")
	t.Setenv("METALPLUG_HOST_STREAM_DELAY_US", "-3")
	if d, _, why := choose(); d != nil || !strings.Contains(why, "METALPLUG_HOST_STREAM_DELAY_US=-3") {
		t.Errorf("a bad delay: driver %v, reason %q", d, why)
	}
}

// TestOneDriver: every caller gets the same driver.
func TestOneDriver(t *testing.T) {
	t.Setenv("METALPLUG_HOST_DEVICE", "1")
	a, _, _ := Driver()
	b, _, _ := Driver()
	if a != b {
		t.Error("two drivers in one process")
	}
}

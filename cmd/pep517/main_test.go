package main

import (
	"strings"
	"testing"

	"github.com/metalplug/metalplug/setup/probe"
)

// TestSdistPin: an install from the sdist builds for the installed
// TensorFlow's minor from the oldest supported release on, says so when
// that is newer than the tree's pin, and keeps the pin (which the build
// refuses, naming the fix) below it.
func TestSdistPin(t *testing.T) {
	for _, c := range []struct {
		installed, want string
		says            bool
	}{
		{"2.21.0", "2.21", false},
		{"2.19.1", "2.19", false},
		{"2.20.0", "2.20", false},
		{"2.23.0-dev20261026", "2.23", true},
		{"2.22.0rc1", "2.22", true},
		{"2.18.0", "2.21", false},
		{"", "2.21", false}, // JAX only
	} {
		r := &probe.Report{}
		r.TensorFlow.Version, r.TensorFlow.Distribution = c.installed, "tf-nightly"
		var said []string
		got := sdistPin(r, "2.21", func(f string, a ...any) { said = append(said, f) })
		if got != c.want || (len(said) > 0) != c.says {
			t.Errorf("TensorFlow %q: pin %q, said %q; want %q, saying something %v", c.installed, got, said, c.want, c.says)
		}
		if c.says && !strings.Contains(said[0], "newer than") {
			t.Errorf("TensorFlow %q: said %q", c.installed, said)
		}
	}
}

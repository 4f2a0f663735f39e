// Command pep517 does the work of the Python build backend (setup/pep517):
// `wheel DIR` probes the TensorFlow and jax of $PYTHON, builds the library against them
// and writes a wheel into DIR; `sdist DIR` writes the sdist. It prints the
// file name it wrote on the last line of stdout.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/metalplug/metalplug/plugin/version"
	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/setup/probe"
	"github.com/metalplug/metalplug/wheels"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "metalplug:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 2 {
		return errors.New("usage: pep517 wheel|sdist DIR")
	}
	dir, err := filepath.Abs(args[1])
	if err != nil {
		return err
	}
	logf := func(format string, a ...any) { fmt.Fprintf(os.Stderr, "metalplug: "+format+"\n", a...) }
	switch args[0] {
	case "sdist":
		name, err := wheels.Sdist(".", dir, "")
		if err != nil {
			return err
		}
		fmt.Println(name)
		return nil
	case "wheel":
		r, err := probe.Run("")
		if err != nil {
			return err
		}
		pin, err := build.ReadPin(".")
		if err != nil {
			return err
		}
		pin = sdistPin(r, pin, logf)
		ver, err := wheels.ProjectVersion(".")
		if err != nil {
			return err
		}
		scratch, err := os.MkdirTemp("", "metalplug-wheel-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(scratch)
		lib := filepath.Join(scratch, build.LibraryName(r.GOOS))
		if _, err := build.Build(build.Options{Report: r, Root: ".", Out: lib, Pin: pin, Log: logf}); err != nil {
			return err
		}
		name, err := wheels.Wheel(dir, ver, lib, r)
		if err != nil {
			return err
		}
		logf("built %s for %s", name, strings.Join(wheels.Requirements(r), " and "))
		fmt.Println(name)
		return nil
	}
	return fmt.Errorf("unknown command %q: want wheel or sdist", args[0])
}

// sdistPin is the pin an install from the sdist builds with: the minor of
// the installed TensorFlow, from the oldest supported release on
// (an install from the sdist is compiled against exactly what is installed;
// a TensorFlow newer than the tree's pin, such as a nightly, is what the
// universal wheel's loader sends its users here for). A TensorFlow older
// than that keeps the tree's pin, so that the build refuses it with the fix.
func sdistPin(r *probe.Report, pin string, logf func(string, ...any)) string {
	if !r.HasTensorFlow() || version.MatchesPin(r.TensorFlow.Version, pin) {
		return pin
	}
	oldest := build.Releases[0]
	if version.Less(r.TensorFlow.Version, oldest) {
		return pin
	}
	if version.Less(pin+".0", r.TensorFlow.Version) {
		logf("building for %s %s, newer than the releases this version was tested with (TensorFlow %s to %s)",
			r.TensorFlow.Distribution, r.TensorFlow.Version, version.Minor(oldest), pin)
	}
	return version.Minor(r.TensorFlow.Version)
}

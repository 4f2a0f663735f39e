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

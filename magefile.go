//go:build mage

// metalplug: a Metal GPU backend for TensorFlow, written in Go. Targets take the
// Python interpreter from PYTHON, else the active venv, else python3.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/magefile/mage/mg"

	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/setup/docs"
	"github.com/metalplug/metalplug/setup/install"
	"github.com/metalplug/metalplug/setup/probe"
	"github.com/metalplug/metalplug/setup/tasks"
)

var Default = Build

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

// Probe reports the TensorFlow the build would target and writes build/probe.json.
func Probe() error {
	r, err := probe.Run("")
	if err != nil {
		return err
	}
	fmt.Print(r.Text())
	return r.WriteJSON(filepath.Join("build", "probe.json"))
}

// Build compiles build/libmetalplug.so (.dylib on macOS) against the probed TensorFlow.
func Build() error {
	start := time.Now()
	r, err := probe.Run("")
	if err != nil {
		return err
	}
	if err := r.WriteJSON(filepath.Join("build", "probe.json")); err != nil {
		return err
	}
	pin, err := build.ReadPin(".")
	if err != nil {
		return err
	}
	out := filepath.Join("build", build.LibraryName(r.GOOS))
	built, err := build.Build(build.Options{Report: r, Root: ".", Out: out, Pin: pin, Log: logf})
	if err != nil {
		return err
	}
	what := "up to date"
	if built {
		what = "built"
	}
	logf("%s: %s in %.1fs", out, what, time.Since(start).Seconds())
	return nil
}

// Install builds, then copies the library into the probed site-packages/tensorflow-plugins.
func Install() error {
	mg.Deps(Build)
	r, err := probe.ReadJSON(filepath.Join("build", "probe.json"))
	if err != nil {
		return err
	}
	dst, err := install.Library(filepath.Join("build", build.LibraryName(r.GOOS)), r)
	if err != nil {
		return err
	}
	logf("installed %s", dst)
	return nil
}

// Test runs vet, the unit tests and the TensorFlow integration tests (in a venv it makes).
func Test() error { return tasks.Test(logf) }

// Demo makes a venv with the pinned TensorFlow, installs the plugin and trains a Keras model on the device.
func Demo() error { return tasks.Demo(logf) }

// Sdist writes dist/metalplug-<version>.tar.gz with the Go modules vendored.
func Sdist() error { return tasks.Sdist(logf) }

// Kernels regenerates docs/kernels.md (the kernel registry) and docs/drivers.md (IR ops by driver).
func Kernels() error {
	drivers, err := docs.Drivers(".")
	if err != nil {
		return err
	}
	if err := os.MkdirAll("docs", 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(docs.KernelsPath, []byte(docs.Kernels()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(docs.DriversPath, []byte(drivers), 0o644)
}

// Darwincheck type-checks the darwin-only packages (the Metal driver) for darwin/arm64.
func Darwincheck() error { return tasks.Darwincheck(logf) }

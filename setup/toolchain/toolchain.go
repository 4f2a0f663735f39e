// Package toolchain is the one step every pipeline starts from: a venv
// with the frameworks it needs, the probe of what that venv has, and the
// library built against exactly that. The Mage targets, the sweeps, the
// benchmark, the endurance runs, jax's suite, the matrix's cells and the
// wheels each ask for it with their own venv and library path, instead of
// writing out pin, venv, probe and build again.
package toolchain

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/metalplug/metalplug/plugin/version"
	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/setup/probe"
	"github.com/metalplug/metalplug/setup/venv"
)

// Frameworks is what a venv must import.
type Frameworks uint8

const (
	TensorFlow Frameworks = 1 << iota
	Jax
)

// Options says which venv and which library.
type Options struct {
	// Venv names the venv (under venv's cache); Base is the interpreter it
	// is made from ("" for python3) and Requirements what it installs.
	Venv         string
	Base         string
	Requirements []string
	// Needs is what the probe must find in the venv; a TensorFlow-only
	// probe (probe.RunTensorFlow) runs when Needs is TensorFlow alone.
	Needs Frameworks
	// Root is the source tree; Out the library to build, relative to Root
	// unless absolute (none is built when empty).
	Root, Out string
	// Pin is the TensorFlow minor the build must match; TF_SUPPORTED_VERSION
	// when empty and the venv has TensorFlow.
	Pin string
	// JaxPinProbed builds for the probed jaxlib's own minor rather than
	// JAX_SUPPORTED_VERSION's (jax's suite and the matrix measure the tree
	// against the release they run, not against the pin).
	JaxPinProbed bool
	// StampVersion stamps another TensorFlow version into the library (the
	// load tests' mismatched build).
	StampVersion string
	Log          func(format string, args ...any)
}

// Toolchain is a ready venv and the library built for it.
type Toolchain struct {
	Venv   string
	Report *probe.Report
	// Library is the built library's absolute path ("" when Out was).
	Library string
}

// Python is the venv's interpreter.
func (t *Toolchain) Python() string { return t.Report.Interpreter.Path }

// Ensure makes (or reuses) the venv, probes it and builds the library.
func Ensure(o Options) (*Toolchain, error) {
	dir, err := venv.Ensure(o.Venv, o.Base, o.Requirements, o.Log)
	if err != nil {
		return nil, err
	}
	var r *probe.Report
	if o.Needs == TensorFlow {
		r, err = probe.RunTensorFlow(venv.Python(dir))
	} else {
		r, err = probe.Run(venv.Python(dir))
	}
	if err != nil {
		return nil, err
	}
	if o.Needs&TensorFlow != 0 && !r.HasTensorFlow() {
		return nil, fmt.Errorf("%s: TensorFlow is not importable after installing %v", venv.Python(dir), o.Requirements)
	}
	if o.Needs&Jax != 0 && !r.HasJax() {
		return nil, fmt.Errorf("%s: jax is not importable after installing %v", venv.Python(dir), o.Requirements)
	}
	t := &Toolchain{Venv: dir, Report: r}
	if o.Out == "" {
		return t, nil
	}
	t.Library, err = Build(r, o)
	return t, err
}

// Build builds the library of o.Out against report r (a venv made
// elsewhere), unless it is up to date, says which in o.Log, and returns its
// absolute path.
func Build(r *probe.Report, o Options) (string, error) {
	pin := o.Pin
	if pin == "" && r.HasTensorFlow() {
		p, err := build.ReadPin(o.Root)
		if err != nil {
			return "", err
		}
		pin = p
	}
	b := build.Options{Report: r, Root: o.Root, Out: o.out(), Pin: pin, StampVersion: o.StampVersion, Log: o.Log}
	if o.JaxPinProbed && r.HasJax() {
		b.JaxPin = version.Minor(r.Jax.JaxlibVersion)
	}
	start := time.Now()
	built, err := build.Build(b)
	if err != nil {
		return "", err
	}
	if o.Log != nil {
		what := "up to date"
		if built {
			what = fmt.Sprintf("built in %.1fs", time.Since(start).Seconds())
		}
		o.Log("%s: %s", b.Out, what)
	}
	return filepath.Abs(b.Out)
}

// out is the library's path: Out under Root, or Out itself if absolute.
func (o Options) out() string {
	if filepath.IsAbs(o.Out) {
		return o.Out
	}
	return filepath.Join(o.Root, o.Out)
}

package wheels

import (
	"fmt"

	"github.com/metalplug/metalplug/plugin/version"
	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/setup/probe"
	"github.com/metalplug/metalplug/setup/toolchain"
	"github.com/metalplug/metalplug/setup/venv"
)

// JaxMinPython is the oldest Python 3 minor the supported jax has wheels
// for.
const JaxMinPython = 12

// JaxEnv is a venv with the supported jax (JAX_SUPPORTED_VERSION), probed:
// what the universal wheel's builds are stamped from and the JAX tier of
// the tests runs in.
type JaxEnv struct {
	// Base is the interpreter the venv was made from (Python 3.12 or
	// newer); Requirement the jax requirement it installed.
	Base, Requirement string
	Report            *probe.Report
}

// EnsureJax makes (or reuses) venv jax-<pin> with the supported jax from
// the tree at root, and probes it.
func EnsureJax(root string, logf func(string, ...any)) (*JaxEnv, error) {
	pin, err := build.ReadJaxPin(root)
	if err != nil {
		return nil, err
	}
	base, err := venv.FindPython(JaxMinPython)
	if err != nil {
		return nil, err
	}
	req := fmt.Sprintf("jax==%s.*", version.Minor(pin))
	t, err := toolchain.Ensure(toolchain.Options{Venv: "jax-" + version.Minor(pin), Base: base, Requirements: []string{req}, Needs: toolchain.Jax, Log: logf})
	if err != nil {
		return nil, err
	}
	return &JaxEnv{Base: base, Requirement: req, Report: t.Report}, nil
}

// Package python holds the jax_plugins.metalplug module, for the installer
// and the wheel builder to write out as it is.
package python

import _ "embed"

// Module is jax_plugins/metalplug/__init__.py.
//
//go:embed jax_plugins/metalplug/__init__.py
var Module []byte

// ModulePath is where Module goes, relative to site-packages.
const ModulePath = "jax_plugins/metalplug/__init__.py"

// EntryPoints is the dist-info entry_points.txt that names the module to
// jax's plugin discovery (besides the namespace package itself).
const EntryPoints = "[jax_plugins]\nmetalplug = jax_plugins.metalplug\n"

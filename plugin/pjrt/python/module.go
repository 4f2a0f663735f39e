// Package python holds the jax_plugins.metalplug module, for the installer
// and the wheel builder to write out as it is.
package python

import (
	_ "embed"
	"strings"
)

// Module is jax_plugins/metalplug/__init__.py.
//
//go:embed jax_plugins/metalplug/__init__.py
var Module []byte

// ModulePath is where Module goes, relative to site-packages.
const ModulePath = "jax_plugins/metalplug/__init__.py"

// EntryPoints is the dist-info entry_points.txt that names the module to
// jax's plugin discovery (besides the namespace package itself).
const EntryPoints = "[jax_plugins]\nmetalplug = jax_plugins.metalplug\n"

// CleanEnv is environ without the settings that would change what jax or
// the plugin do (METALPLUG_*, JAX_*, PJRT_NAMES_AND_LIBRARY_PATHS,
// PYTHONPATH): the base of every jax run a test or the matrix starts.
func CleanEnv(environ []string) []string {
	var env []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "METALPLUG_") || strings.HasPrefix(name, "JAX_") || name == "PJRT_NAMES_AND_LIBRARY_PATHS" || name == "PYTHONPATH" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// Package python holds the metalplug Python module (metalplug.stats(): what
// ran where, read from the library loaded in the process), for the
// installer and the wheel builders to write out as it is. It goes into
// every install, whichever frameworks it serves, next to the universal
// wheel's builds (site-packages/metalplug/builds stays data: the package
// gains an __init__.py, the builds no Python).
package python

import _ "embed"

// Module is metalplug/__init__.py.
//
//go:embed metalplug/__init__.py
var Module []byte

// ModulePath is where Module goes, relative to site-packages.
const ModulePath = "metalplug/__init__.py"

package probe

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
)

// The PJRT C API version a jaxlib speaks is measured, not looked up: a probe
// plugin reporting version 0.0 is loaded into the installed jaxlib, which
// refuses it, saying on the way its own (framework) version and the oldest
// plugin version it accepts. The probe plugin is a few lines of C: just the
// head of the PJRT_Api struct (struct_size, extension_start, then the version
// struct), which is all jaxlib reads before it refuses.
const pjrtProbeC = `#include <stddef.h>
typedef struct { size_t struct_size; void* extension_start; int major_version; int minor_version; } version;
typedef struct { size_t struct_size; void* extension_start; version pjrt_api_version; void* slots[256]; } api;
static api probe_api = {sizeof(api), NULL, {sizeof(version), NULL, 0, 0}, {NULL}};
const api* GetPjrtApi(void) { return &probe_api; }
`

// jaxScript prints the StableHLO versions, then loads the probe plugin.
const jaxScript = `import sys
from jaxlib.mlir.dialects import stablehlo
print("STABLEHLO", stablehlo.get_current_version(), stablehlo.get_minimum_version(), flush=True)
from jax._src.lib import xla_client
xla_client.load_pjrt_plugin_dynamically("metalplug_probe", sys.argv[1])
try:
    xla_client.initialize_pjrt_plugin("metalplug_probe")
except Exception as e:
    print(e)
`

var (
	stablehloRE = regexp.MustCompile(`STABLEHLO (\d+\.\d+\.\d+) (\d+\.\d+\.\d+)`)
	frameworkRE = regexp.MustCompile(`framework PJRT API version is (\d+)\.(\d+)`)
	minimumRE   = regexp.MustCompile(`minimum supported version (\d+)\.(\d+)`)
)

// readPJRT fills j's PJRT versions from what jaxlib printed on refusing
// the probe plugin.
func readPJRT(out []byte, j *Jax) error {
	f, m := frameworkRE.FindSubmatch(out), minimumRE.FindSubmatch(out)
	if f == nil || m == nil {
		return fmt.Errorf("jaxlib %s did not say which PJRT API versions it accepts when given a plugin of version 0.0 (it printed %q): this jaxlib loads plugins differently; report it",
			j.JaxlibVersion, truncate(string(out), 400))
	}
	j.PJRTFramework = string(f[1]) + "." + string(f[2])
	j.PJRTMinimum = string(m[1]) + "." + string(m[2])
	return nil
}

// pjrtProbeLibrary compiles the probe plugin once into the user cache,
// named after its source.
func pjrtProbeLibrary() (string, error) {
	sum := sha256.Sum256([]byte(pjrtProbeC))
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "metalplug", "probe")
	lib := filepath.Join(dir, "pjrt-probe-"+hex.EncodeToString(sum[:6])+".so")
	if fileExists(lib) {
		return lib, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src := lib + ".c"
	if err := os.WriteFile(src, []byte(pjrtProbeC), 0o644); err != nil {
		return "", err
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	tmp := lib + ".tmp"
	var stderr bytes.Buffer
	build := exec.Command(cc, "-shared", "-fPIC", "-o", tmp, src)
	build.Stderr = &stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("compiling the PJRT probe plugin with %s (a C compiler is needed, as for cgo): %v%s", cc, err, indent(stderr.String()))
	}
	return lib, os.Rename(tmp, lib)
}

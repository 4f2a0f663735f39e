// Package pjrt is the JAX frontend: the PJRT C API (GetPjrtApi and the
// functions of its table) exported from the shared library jax loads as
// the "metalplug" platform. A client owns one device, backed by the driver
// select_*.go picks; buffers live in driver memory; compiled programs run
// on the driver's in-order stream, and events follow that stream.
//
// The ABI is declared by us in abi.h (jaxlib ships no header), checked
// field by field against XLA's by abi_test.go. abi.c holds the table and
// what must be C; every behaviour is Go, behind the recover boundary of
// boundary.go.
//
// Turning the StableHLO jax sends into an IR program is not this package's
// work: Translate (compile.go) is the seam the translation package fills.
//
// Settings, read from the live C environment (plugin/cenv) when used:
//
//	METALPLUG_HOST_DEVICE=1          the host reference driver backs the device (off macOS, the
//	                                 only one; without it no client can be made there)
//	METALPLUG_DISABLE=1              offer no device: PJRT_Client_Create fails, saying so
//	METALPLUG_HOST_MEMORY_MB=N       the device's memory, in MiB, on the host driver (default 8192)
//	                                 and on the MPSGraph model (its working set; default 8192)
//	METALPLUG_HOST_STREAM_DELAY_US=N test hook: every host stream operation waits N µs first
//	METALPLUG_TEST_PANIC=name[@N]    test hook: the named exports panic (boundary.go)
//	METALPLUG_PJRT_TRACE=1           log the first call of each PJRT function
//
// The driver settings are plugin/tf's, with its meanings; the driver is
// chosen once, at the first PJRT_Client_Create.
package pjrt

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// PlatformName is the platform's name: the registration name jax_plugins
// uses, and what PJRT_Client_PlatformName returns, so that JAX_PLATFORMS,
// jax.devices("metalplug") and lowering rules all say the same word.
const PlatformName = "metalplug"

// The StableHLO versions the plugin reports as the plugin attributes
// stablehlo_current_version and stablehlo_minimum_version. jax serializes
// each program to (at most) the current version; without the attribute it
// picks an old default. The build stamps these (-ldflags -X) with what the
// linked StableHLO translator reads; the defaults are jaxlib 0.12's own
// stablehlo.get_current_version() and get_minimum_version().
var (
	StablehloCurrentVersion = "1.22.0"
	StablehloMinimumVersion = "0.9.0"
)

// BuiltAgainstJaxlib is the jaxlib release the library was built against,
// stamped by the build. The jax_plugins module compares it with the running
// jaxlib before it registers the platform, and declines with one line on a
// different minor: jax aborts a process whose plugin's client cannot be
// made, so the check cannot wait for PJRT_Client_Create.
var BuiltAgainstJaxlib = ""

// builtAgainst is BuiltAgainstJaxlib as a C string, made once.
var builtAgainst = sync.OnceValue(func() *C.char { return C.CString(BuiltAgainstJaxlib) })

// metalplug_jaxlib_built_against returns BuiltAgainstJaxlib ("" when not
// stamped), for the jax_plugins module to read through ctypes.
//
//export metalplug_jaxlib_built_against
func metalplug_jaxlib_built_against() (v *C.char) {
	defer boundary("metalplug_jaxlib_built_against", nil)
	hook("metalplug_jaxlib_built_against")
	return builtAgainst()
}

// parseVersion reads "X.Y.Z" as the three integers the attribute holds.
func parseVersion(s string) ([]int64, error) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("StableHLO version %q is not X.Y.Z", s)
	}
	v := make([]int64, 3)
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("StableHLO version %q is not X.Y.Z", s)
		}
		v[i] = n
	}
	return v, nil
}

// GetPjrtApi returns the function table, or NULL after a panic: it has no
// PJRT_Error to report in, so it defers boundary itself rather than run
// through export (as do the two ctypes entry points).
//
//export GetPjrtApi
func GetPjrtApi() (api *C.PJRT_Api) {
	defer boundary("GetPjrtApi", nil)
	hook("GetPjrtApi")
	return (*C.PJRT_Api)(unsafe.Pointer(C.mp_api()))
}

//export mp_PJRT_Plugin_Initialize
func mp_PJRT_Plugin_Initialize(args *C.PJRT_Plugin_Initialize_Args) errT {
	return export("mp_PJRT_Plugin_Initialize", args, C.PJRT_Plugin_Initialize_Args_STRUCT_SIZE, pluginInitialize)
}

func pluginInitialize(args *C.PJRT_Plugin_Initialize_Args) error {
	// Nothing to set up: the driver is chosen when a client is created,
	// so that loading the plugin costs nothing when jax never asks for it.
	return nil
}

// attributes are the plugin's, built once; the caller keeps the pointer
// for the life of the process.
var attributes struct {
	once  sync.Once
	arena arena
	list  *C.PJRT_NamedValue
	n     int
}

func attributeList() (*C.PJRT_NamedValue, int) {
	attributes.once.Do(func() {
		a := &attributes.arena
		versions := []struct{ name, value, fallback string }{
			{"stablehlo_current_version", StablehloCurrentVersion, "1.22.0"},
			{"stablehlo_minimum_version", StablehloMinimumVersion, "0.9.0"},
		}
		list := a.alloc(len(versions) * C.sizeof_PJRT_NamedValue)
		for i, v := range versions {
			nums, err := parseVersion(v.value)
			if err != nil {
				// The caller aborts on a failure here, and reads exactly
				// three numbers: a bad stamp falls back, loudly.
				logf("%v (the build's stamp); reporting %s as %s", err, v.name, v.fallback)
				nums, _ = parseVersion(v.fallback)
			}
			name, _ := a.str(v.name)
			C.mp_named_int64_list(namedValueAt(list, i), name, a.int64s(nums), C.size_t(len(nums)))
		}
		attributes.list, attributes.n = (*C.PJRT_NamedValue)(list), len(versions)
	})
	return attributes.list, attributes.n
}

//export mp_PJRT_Plugin_Attributes
func mp_PJRT_Plugin_Attributes(args *C.PJRT_Plugin_Attributes_Args) errT {
	return export("mp_PJRT_Plugin_Attributes", args, C.PJRT_Plugin_Attributes_Args_STRUCT_SIZE, pluginAttributes)
}

func pluginAttributes(args *C.PJRT_Plugin_Attributes_Args) error {
	list, n := attributeList()
	args.attributes = list
	args.num_attributes = C.size_t(n)
	return nil
}

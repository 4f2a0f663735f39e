// Package tf is the TensorFlow frontend: the PluggableDevice entry points
// (SE_InitPlugin, TF_InitKernel) exported from the shared library, the
// StreamExecutor callbacks, and the kernel glue that runs each op's IR
// program on the selected driver. Behaviour lives in Go; the C files only
// fill TensorFlow's tables with trampolines.
package tf

/*
#cgo linux LDFLAGS: -ldl
#include "plugin.h"
*/
import "C"

import (
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/metalplug/metalplug/backend/stats"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/plugin/cenv"
	"github.com/metalplug/metalplug/plugin/device"
	_ "github.com/metalplug/metalplug/plugin/statsapi" // metalplug_stats, for metalplug.stats()
	"github.com/metalplug/metalplug/plugin/tf/capi"
	"github.com/metalplug/metalplug/plugin/version"
)

// Set by the build (-ldflags -X): the TensorFlow release the library was
// compiled against, and the pin of the tree it came from.
var (
	BuiltAgainst string
	Pin          string
)

// state is the process-wide plugin state. TensorFlow loads the library once
// and never unloads it.
var state struct {
	mu          sync.Mutex
	drv         driver.Driver // nil when the plugin declined
	devices     int
	synchronous bool
	reason      string // why no device is offered, when drv is nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "metalplug: "+format+"\n", args...)
}

// runningVersion asks the TensorFlow in this process for its version.
func runningVersion() string {
	name := C.CString("TF_Version")
	defer C.free(unsafe.Pointer(name))
	fn := C.metalplug_lookup(name)
	if fn == nil {
		return ""
	}
	return C.GoString(C.metalplug_call_version(fn))
}

// decide picks the driver and device, or the reason to offer none.
func decide() {
	if cenv.Get("METALPLUG_DISABLE") == "1" {
		state.reason = "METALPLUG_DISABLE=1 is set: offering no device"
		return
	}
	running := runningVersion()
	if cenv.Get("METALPLUG_SKIP_VERSION_CHECK") != "1" {
		if !version.SameMinor(running, BuiltAgainst) {
			state.reason = fmt.Sprintf("built for TensorFlow %s but TensorFlow %s is running: offering no device (rebuild against %s, or set METALPLUG_SKIP_VERSION_CHECK=1 to load anyway)",
				BuiltAgainst, orUnknown(running), orUnknown(running))
			return
		}
	}
	d, kind, why := device.For(stats.TensorFlow)
	if d == nil {
		state.reason = why
		return
	}
	typ, platform := deviceNames(kind)
	state.drv, state.devices = d, 1
	setNames(platform, typ, d.Description())
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// setNames fills the C strings TensorFlow keeps; they are never freed.
func setNames(platform, typ, hardware string) {
	C.metalplug_platform_name = C.CString(platform)
	C.metalplug_device_type = C.CString(typ)
	C.metalplug_hardware_name = C.CString(hardware)
}

// DeviceType is the device type TensorFlow sees, for kernel registration.
func DeviceType() string { return C.GoString(C.metalplug_device_type) }

//export SE_InitPlugin
func SE_InitPlugin(params *C.SE_PlatformRegistrationParams, status *C.TF_Status) {
	// A non-OK status here aborts TensorFlow, so every failure, a panic
	// included, becomes "no device", and the tables are filled either way.
	defer C.metalplug_fill_platform(params)
	defer boundary("SE_InitPlugin", failure{sink: func(err error) {
		state.drv, state.devices = nil, 0
		logf("%v: offering no device", err)
	}})
	hook("SE_InitPlugin")
	state.mu.Lock()
	defer state.mu.Unlock()
	decide()
	if state.drv == nil {
		logf("%s", state.reason)
		return
	}
	state.synchronous = synchronousMode()
	mode := "asynchronous"
	if state.synchronous {
		mode = "synchronous"
	}
	logf("%s device %s:0 on the %s driver (built against TensorFlow %s, %s execution%s)",
		C.GoString(C.metalplug_platform_name), DeviceType(), state.drv.Name(), BuiltAgainst, mode, syncReason())
}

// synchronousMode: METALPLUG_SYNCHRONOUS forces it either way; otherwise
// kernels wait for their stream when TensorFlow lacks the resource-variable
// C API, because then variables are updated by TensorFlow's own kernels,
// which do not order themselves behind our streams.
func synchronousMode() bool {
	switch cenv.Get("METALPLUG_SYNCHRONOUS") {
	case "1":
		return true
	case "0":
		return false
	}
	return !resourceVariableAPI()
}

func syncReason() string {
	switch cenv.Get("METALPLUG_SYNCHRONOUS") {
	case "1", "0":
		return ", forced by METALPLUG_SYNCHRONOUS"
	}
	if !resourceVariableAPI() {
		return ", because this TensorFlow does not export the kernels_experimental.h resource-variable API"
	}
	return ""
}

func resourceVariableAPI() bool {
	for _, n := range capi.KernelsExperimental {
		cn := C.CString(n)
		p := C.metalplug_lookup(cn)
		C.free(unsafe.Pointer(cn))
		if p == nil {
			return false
		}
	}
	return true
}

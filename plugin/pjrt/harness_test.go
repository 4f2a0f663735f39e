package pjrt

import (
	"unsafe"

	"github.com/metalplug/metalplug/plugin/pjrt/internal/pjrtharness"
)

// The tests drive the plugin as jax does, through GetPjrtApi's table, with
// the harness of internal/pjrtharness (a test file cannot use cgo). These
// names are the harness's, as the tests call them.

func init() { pjrtharness.Use(unsafe.Pointer(GetPjrtApi())) }

type (
	hClient     = pjrtharness.Client
	hEvent      = pjrtharness.Event
	hBuffer     = pjrtharness.Buffer
	hExecutable = pjrtharness.Executable
	pjrtError   = pjrtharness.Error
)

var (
	hNewClient          = pjrtharness.NewClient
	hNewEvent           = pjrtharness.NewEvent
	newHostArray        = pjrtharness.NewHostArray
	fired               = pjrtharness.Fired
	errorCode           = pjrtharness.ErrorCode
	userDataDtors       = pjrtharness.UserDataDtors
	callTopologyCreate  = pjrtharness.CallTopologyCreate
	callTooSmall        = pjrtharness.CallTooSmall
	callLarger          = pjrtharness.CallLarger
	pluginAttributeList = pjrtharness.PluginAttributeList
	layoutTable         = pjrtharness.LayoutTable
)

// takeError converts and frees an export's PJRT_Error (nil for none).
func takeError(e errT) error { return pjrtharness.TakeError(unsafe.Pointer(e)) }

// errorPaths makes an error of code c and message msg, and checks it
// through every way a caller reads errors (abi.c's table and vtable).
func errorPaths(c code, msg string) int {
	return pjrtharness.ErrorPaths(unsafe.Pointer(newCError(c, msg)), int(c), msg)
}

// wrapClient is c, made by a test on a driver of its own, as the harness
// drives it.
func wrapClient(c *client) *hClient { return pjrtharness.WrapClient(unsafe.Pointer(c.c)) }

// apiSlots reads the table GetPjrtApi returns: the version it reports, its
// struct_size, and which of its slots are NULL, by offset.
func apiSlots() (major, minor int, size uintptr, null []uintptr) {
	return pjrtharness.APISlots(unsafe.Pointer(GetPjrtApi()))
}

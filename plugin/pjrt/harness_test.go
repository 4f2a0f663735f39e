package pjrt

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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

// TestHarnessStaysInTheTests: only test files import the harness, so the
// library never links it (Go's internal rule already keeps it within
// plugin/pjrt).
func TestHarnessStaysInTheTests(t *testing.T) {
	const harness = "github.com/metalplug/metalplug/plugin/pjrt/internal/pjrtharness"
	files := 0
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		if strings.HasPrefix(filepath.ToSlash(p), "internal/pjrtharness/") {
			return nil
		}
		files++
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == harness {
				t.Errorf("%s imports %s: only tests may", p, harness)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 20 {
		t.Fatalf("found only %d non-test Go files under plugin/pjrt", files)
	}
}

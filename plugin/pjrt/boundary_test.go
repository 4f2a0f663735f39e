package pjrt

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"
	"unsafe"

	"github.com/metalplug/metalplug/backend/status"
	"github.com/metalplug/metalplug/plugin/internal/exports"

	"github.com/metalplug/metalplug/plugin/testhook"
)

// TestEveryExportRecovers holds every function exported to C to the shape
// boundary.go describes: one call of export with its own name, or, for the
// few that return no PJRT_Error, nothing that can panic before
// `defer boundary("<its name>", ...)`, then `hook("<its name>")`.
func TestEveryExportRecovers(t *testing.T) {
	exports := exportedFunctions(t, ".")
	if len(exports) < 80 {
		t.Fatalf("found %d exported functions, expected every //export of plugin/pjrt", len(exports))
	}
	for name, fn := range exports {
		check := checkWrapped
		if ownBoundary[name] {
			check = checkBoundary
		}
		if err := check(name, fn); err != "" {
			t.Errorf("%s: %s", name, err)
		}
	}
}

// ownBoundary are the exports that return no PJRT_Error (GetPjrtApi's
// failure is a NULL table; the ctypes entry points return a pointer or an
// int) and take no argument struct, so export cannot be their body: they
// defer boundary themselves.
var ownBoundary = map[string]bool{"GetPjrtApi": true, "metalplug_jaxlib_built_against": true, "metalplug_set_host_callback": true}

// exportCall is the call of four arguments that is fn's whole body,
// returned, or nil.
func exportCall(fn *ast.FuncDecl) *ast.CallExpr {
	if len(fn.Body.List) != 1 {
		return nil
	}
	ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return nil
	}
	call, _ := ret.Results[0].(*ast.CallExpr)
	if call == nil || len(call.Args) != 4 {
		return nil
	}
	return call
}

// exportedFunctions is every //export of dir, by its exported name.
func exportedFunctions(t *testing.T, dir string) map[string]*ast.FuncDecl {
	t.Helper()
	fns, err := exports.Functions(dir)
	if err != nil {
		t.Fatal(err)
	}
	return fns
}

// checkWrapped returns what is wrong with fn as a PJRT function, or "":
// its body must be `return export("<its name>", <its argument>, <size>,
// <a named function>)`, the size a constant (or fieldEnd of a field), so
// that nothing runs before export has deferred boundary.
func checkWrapped(name string, fn *ast.FuncDecl) string {
	params := fn.Type.Params.List
	if len(params) != 1 || len(params[0].Names) != 1 {
		return "must take one argument, the argument struct"
	}
	call := exportCall(fn)
	if call == nil || !callsWith(call, "export", name) {
		return `the body must be one statement, return export("` + name + `", args, size, body)`
	}
	if id, ok := call.Args[1].(*ast.Ident); !ok || id.Name != params[0].Names[0].Name {
		return "export must be given the function's own argument struct"
	}
	if _, ok := call.Args[3].(*ast.Ident); !ok {
		return "the body given to export must be a named function"
	}
	bad := ""
	ast.Inspect(call.Args[2], func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok && bad == "" {
			switch f := types.ExprString(c.Fun); f {
			case "fieldEnd", "unsafe.Offsetof", "unsafe.Sizeof":
			default:
				bad = "the size must be a constant or fieldEnd of a field, not a call of " + f
			}
		}
		return true
	})
	return bad
}

// checkBoundary returns what is wrong with fn's first statements, or "".
func checkBoundary(name string, fn *ast.FuncDecl) string {
	stmts := fn.Body.List
	if len(stmts) < 2 {
		return "does not start with defer boundary(...) and hook(...)"
	}
	d, ok := stmts[0].(*ast.DeferStmt)
	if !ok || !callsWith(d.Call, "boundary", name) {
		return "the first statement must be defer boundary(\"" + name + "\", ...)"
	}
	// The report goes to the named result (or nowhere, for GetPjrtApi).
	if len(d.Call.Args) != 2 {
		return "boundary takes the name and where the error goes"
	}
	if u, ok := d.Call.Args[1].(*ast.UnaryExpr); ok {
		id, _ := u.X.(*ast.Ident)
		res := fn.Type.Results
		if u.Op != token.AND || id == nil || res == nil || len(res.List) != 1 || len(res.List[0].Names) != 1 || res.List[0].Names[0].Name != id.Name {
			return "boundary must be given the address of the function's named result"
		}
	} else if id, ok := d.Call.Args[1].(*ast.Ident); !ok || id.Name != "nil" {
		return "boundary's second argument must be &<named result> or nil"
	}
	e, ok := stmts[1].(*ast.ExprStmt)
	call, _ := e.X.(*ast.CallExpr)
	if !ok || call == nil || !callsWith(call, "hook", name) {
		return "defer boundary must be followed by hook(\"" + name + "\")"
	}
	return ""
}

var callsWith = exports.CallsWith

// TestBoundaryCheckCatches: the shape checks reject what they must.
func TestBoundaryCheckCatches(t *testing.T) {
	src := `package p
func ok(a *T) (res errT) { defer boundary("ok", &res); hook("ok"); return nil }
func late(a *T) (res errT) { x := get(a); defer boundary("late", &res); hook("late"); return x }
func misnamed(a *T) (res errT) { defer boundary("other", &res); hook("misnamed"); return nil }
func nohook(a *T) (res errT) { defer boundary("nohook", &res); work(); return nil }
func elsewhere(a *T) (res errT) { var e errT; defer boundary("elsewhere", &e); hook("elsewhere"); return nil }
func none(a *T) errT { return work() }
func wrapped(a *T) errT { return export("wrapped", a, C.T_STRUCT_SIZE, body) }
`
	wrapped := `package p
func ok(a *T) errT { return export("ok", a, C.T_STRUCT_SIZE, body) }
func field(a *T) errT { return export("field", a, fieldEnd(unsafe.Offsetof(a.x), unsafe.Sizeof(a.x)), body) }
func misnamed(a *T) errT { return export("other", a, C.T_STRUCT_SIZE, body) }
func before(a *T) errT { work(); return export("before", a, C.T_STRUCT_SIZE, body) }
func another(a *T) errT { return export("another", b, C.T_STRUCT_SIZE, body) }
func literal(a *T) errT { return export("literal", a, C.T_STRUCT_SIZE, func(*T) error { return nil }) }
func computed(a *T) errT { return export("computed", a, sizeOf(a), body) }
func direct(a *T) errT { return fail("direct", body(a)) }
func deferred(a *T) (res errT) { defer boundary("deferred", &res); hook("deferred"); return nil }
func two(a, b *T) errT { return export("two", a, C.T_STRUCT_SIZE, body) }
`
	for _, c := range []struct {
		check func(string, *ast.FuncDecl) string
		src   string
		want  map[string]bool
	}{
		{checkBoundary, src, map[string]bool{"ok": true}},
		{checkWrapped, wrapped, map[string]bool{"ok": true, "field": true}},
	} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "p.go", c.src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn := d.(*ast.FuncDecl)
			if got := c.check(fn.Name.Name, fn) == ""; got != c.want[fn.Name.Name] {
				t.Errorf("%s: accepted = %v, want %v", fn.Name.Name, got, c.want[fn.Name.Name])
			}
		}
	}
}

// fakeArgs stands for a PJRT argument struct: struct_size first, as
// size_t (need reads it so), then a field a body writes.
type fakeArgs struct {
	structSize uintptr
	out        int
}

const fakeSize = unsafe.Sizeof(fakeArgs{})

// TestExportWrapper: what every PJRT function does through export. A panic
// (in the body or the hook) becomes INTERNAL naming the function; a NULL
// or short struct is refused with INVALID_ARGUMENT before the body runs;
// the body's error is prefixed with the function's name and reported with
// its class's code, except an asIs status, which passes as it is.
func TestExportWrapper(t *testing.T) {
	call := func(name string, args *fakeArgs, body func(*fakeArgs) error) (*pjrtError, bool) {
		ran := false
		err := takeError(export(name, args, fakeSize, func(a *fakeArgs) error { ran = true; return body(a) }))
		pe, _ := err.(*pjrtError)
		if err != nil && pe == nil {
			t.Fatalf("%s: %v is not an export's error", name, err)
		}
		return pe, ran
	}
	full := func() *fakeArgs { return &fakeArgs{structSize: fakeSize} }
	expect := func(what string, got *pjrtError, code int, msg string) {
		t.Helper()
		switch {
		case code == 0 && got != nil:
			t.Errorf("%s: %v, want no error", what, got)
		case code != 0 && got == nil:
			t.Errorf("%s: no error, want code %d: %s", what, code, msg)
		case code != 0 && (got.Code != code || !strings.HasPrefix(got.Msg, msg)):
			t.Errorf("%s: %v, want code %d: %s...", what, got, code, msg)
		}
	}

	got, _ := call("mp_Test_Panic", full(), func(*fakeArgs) error { panic("boom") })
	expect("a panic in the body", got, int(codeInternal), "metalplug: internal error in Test_Panic: boom")

	disarm := armPanic("mp_Test_Hook")
	got, ran := call("mp_Test_Hook", full(), func(*fakeArgs) error { return nil })
	disarm()
	expect("a panic in the hook", got, int(codeInternal), "metalplug: internal error in Test_Hook: forced panic in mp_Test_Hook")
	if ran {
		t.Error("the body ran after the hook panicked")
	}

	got, ran = call("mp_Test_Null", nil, func(*fakeArgs) error { return nil })
	expect("NULL args", got, int(codeInvalidArgument), "metalplug: Test_Null: the argument struct is NULL")
	if ran {
		t.Error("the body ran with NULL args")
	}

	short := full()
	short.structSize--
	got, ran = call("mp_Test_Short", short, func(*fakeArgs) error { return nil })
	expect("a short struct", got, int(codeInvalidArgument), fmt.Sprintf("metalplug: Test_Short: the caller's pjrt.fakeArgs has struct_size %d, smaller than the %d bytes", fakeSize-1, fakeSize))
	if ran {
		t.Error("the body ran with a short struct")
	}

	got, _ = call("mp_Test_Plain", full(), func(*fakeArgs) error { return status.Invalidf("x is NULL") })
	expect("an error", got, int(codeInvalidArgument), "metalplug: Test_Plain: x is NULL")
	got, _ = call("mp_Test_Unclassified", full(), func(*fakeArgs) error { return errors.New("odd") })
	expect("an unclassified error", got, int(codeInternal), "metalplug: Test_Unclassified: odd")

	lost := status.Errorf(status.DataLoss, "metalplug: copying to the host: lost")
	got, _ = call("mp_Test_AsIs", full(), func(*fakeArgs) error { return asIs{lost} })
	expect("an asIs status", got, int(pjrtCodes[status.DataLoss]), "metalplug: copying to the host: lost")
	if got != nil && got.Msg != lost.Error() {
		t.Errorf("an asIs status: message %q, want %q as it is", got.Msg, lost.Error())
	}
	got, _ = call("mp_Test_AsIsNil", full(), func(*fakeArgs) error { return asIs{nil} })
	expect("an asIs success", got, 0, "")

	args := full()
	got, _ = call("mp_Test_Ok", args, func(a *fakeArgs) error { a.out = 7; return nil })
	expect("success", got, 0, "")
	if args.out != 7 {
		t.Errorf("the body's output: %d, want 7", args.out)
	}
}

// exportCalls calls every export that takes an argument struct, with NULL.
var exportCalls = map[string]func() errT{
	"mp_PJRT_Buffer_CopyRawToHost":                         func() errT { return mp_PJRT_Buffer_CopyRawToHost(nil) },
	"mp_PJRT_Buffer_CopyToDevice":                          func() errT { return mp_PJRT_Buffer_CopyToDevice(nil) },
	"mp_PJRT_Buffer_CopyToMemory":                          func() errT { return mp_PJRT_Buffer_CopyToMemory(nil) },
	"mp_PJRT_Buffer_DecreaseExternalReferenceCount":        func() errT { return mp_PJRT_Buffer_DecreaseExternalReferenceCount(nil) },
	"mp_PJRT_Buffer_Delete":                                func() errT { return mp_PJRT_Buffer_Delete(nil) },
	"mp_PJRT_Buffer_Destroy":                               func() errT { return mp_PJRT_Buffer_Destroy(nil) },
	"mp_PJRT_Buffer_Device":                                func() errT { return mp_PJRT_Buffer_Device(nil) },
	"mp_PJRT_Buffer_Dimensions":                            func() errT { return mp_PJRT_Buffer_Dimensions(nil) },
	"mp_PJRT_Buffer_DynamicDimensionIndices":               func() errT { return mp_PJRT_Buffer_DynamicDimensionIndices(nil) },
	"mp_PJRT_Buffer_ElementType":                           func() errT { return mp_PJRT_Buffer_ElementType(nil) },
	"mp_PJRT_Buffer_GetMemoryLayout":                       func() errT { return mp_PJRT_Buffer_GetMemoryLayout(nil) },
	"mp_PJRT_Buffer_IncreaseExternalReferenceCount":        func() errT { return mp_PJRT_Buffer_IncreaseExternalReferenceCount(nil) },
	"mp_PJRT_Buffer_IsDeleted":                             func() errT { return mp_PJRT_Buffer_IsDeleted(nil) },
	"mp_PJRT_Buffer_IsOnCpu":                               func() errT { return mp_PJRT_Buffer_IsOnCpu(nil) },
	"mp_PJRT_Buffer_Memory":                                func() errT { return mp_PJRT_Buffer_Memory(nil) },
	"mp_PJRT_Buffer_OnDeviceSizeInBytes":                   func() errT { return mp_PJRT_Buffer_OnDeviceSizeInBytes(nil) },
	"mp_PJRT_Buffer_OpaqueDeviceMemoryDataPointer":         func() errT { return mp_PJRT_Buffer_OpaqueDeviceMemoryDataPointer(nil) },
	"mp_PJRT_Buffer_ReadyEvent":                            func() errT { return mp_PJRT_Buffer_ReadyEvent(nil) },
	"mp_PJRT_Buffer_ToHostBuffer":                          func() errT { return mp_PJRT_Buffer_ToHostBuffer(nil) },
	"mp_PJRT_Buffer_UnpaddedDimensions":                    func() errT { return mp_PJRT_Buffer_UnpaddedDimensions(nil) },
	"mp_PJRT_Buffer_UnsafePointer":                         func() errT { return mp_PJRT_Buffer_UnsafePointer(nil) },
	"mp_PJRT_Client_AddressableDevices":                    func() errT { return mp_PJRT_Client_AddressableDevices(nil) },
	"mp_PJRT_Client_AddressableMemories":                   func() errT { return mp_PJRT_Client_AddressableMemories(nil) },
	"mp_PJRT_Client_BufferFromHostBuffer":                  func() errT { return mp_PJRT_Client_BufferFromHostBuffer(nil) },
	"mp_PJRT_Client_Compile":                               func() errT { return mp_PJRT_Client_Compile(nil) },
	"mp_PJRT_Client_Create":                                func() errT { return mp_PJRT_Client_Create(nil) },
	"mp_PJRT_Client_CreateUninitializedBuffer":             func() errT { return mp_PJRT_Client_CreateUninitializedBuffer(nil) },
	"mp_PJRT_Client_DefaultDeviceAssignment":               func() errT { return mp_PJRT_Client_DefaultDeviceAssignment(nil) },
	"mp_PJRT_Client_Destroy":                               func() errT { return mp_PJRT_Client_Destroy(nil) },
	"mp_PJRT_Client_Devices":                               func() errT { return mp_PJRT_Client_Devices(nil) },
	"mp_PJRT_Client_LookupAddressableDevice":               func() errT { return mp_PJRT_Client_LookupAddressableDevice(nil) },
	"mp_PJRT_Client_LookupDevice":                          func() errT { return mp_PJRT_Client_LookupDevice(nil) },
	"mp_PJRT_Client_PlatformName":                          func() errT { return mp_PJRT_Client_PlatformName(nil) },
	"mp_PJRT_Client_PlatformVersion":                       func() errT { return mp_PJRT_Client_PlatformVersion(nil) },
	"mp_PJRT_Client_ProcessIndex":                          func() errT { return mp_PJRT_Client_ProcessIndex(nil) },
	"mp_PJRT_DeviceDescription_Attributes":                 func() errT { return mp_PJRT_DeviceDescription_Attributes(nil) },
	"mp_PJRT_DeviceDescription_DebugString":                func() errT { return mp_PJRT_DeviceDescription_DebugString(nil) },
	"mp_PJRT_DeviceDescription_Id":                         func() errT { return mp_PJRT_DeviceDescription_Id(nil) },
	"mp_PJRT_DeviceDescription_Kind":                       func() errT { return mp_PJRT_DeviceDescription_Kind(nil) },
	"mp_PJRT_DeviceDescription_ProcessIndex":               func() errT { return mp_PJRT_DeviceDescription_ProcessIndex(nil) },
	"mp_PJRT_DeviceDescription_ToString":                   func() errT { return mp_PJRT_DeviceDescription_ToString(nil) },
	"mp_PJRT_Device_AddressableMemories":                   func() errT { return mp_PJRT_Device_AddressableMemories(nil) },
	"mp_PJRT_Device_ClearMemoryStats":                      func() errT { return mp_PJRT_Device_ClearMemoryStats(nil) },
	"mp_PJRT_Device_DefaultMemory":                         func() errT { return mp_PJRT_Device_DefaultMemory(nil) },
	"mp_PJRT_Device_GetAttributes":                         func() errT { return mp_PJRT_Device_GetAttributes(nil) },
	"mp_PJRT_Device_GetDescription":                        func() errT { return mp_PJRT_Device_GetDescription(nil) },
	"mp_PJRT_Device_IsAddressable":                         func() errT { return mp_PJRT_Device_IsAddressable(nil) },
	"mp_PJRT_Device_LocalHardwareId":                       func() errT { return mp_PJRT_Device_LocalHardwareId(nil) },
	"mp_PJRT_Device_MemoryStats":                           func() errT { return mp_PJRT_Device_MemoryStats(nil) },
	"mp_PJRT_Event_Await":                                  func() errT { return mp_PJRT_Event_Await(nil) },
	"mp_PJRT_Event_Create":                                 func() errT { return mp_PJRT_Event_Create(nil) },
	"mp_PJRT_Event_Destroy":                                func() errT { return mp_PJRT_Event_Destroy(nil) },
	"mp_PJRT_Event_Error":                                  func() errT { return mp_PJRT_Event_Error(nil) },
	"mp_PJRT_Event_IsReady":                                func() errT { return mp_PJRT_Event_IsReady(nil) },
	"mp_PJRT_Event_OnReady":                                func() errT { return mp_PJRT_Event_OnReady(nil) },
	"mp_PJRT_Event_Set":                                    func() errT { return mp_PJRT_Event_Set(nil) },
	"mp_PJRT_Executable_Destroy":                           func() errT { return mp_PJRT_Executable_Destroy(nil) },
	"mp_PJRT_Executable_Fingerprint":                       func() errT { return mp_PJRT_Executable_Fingerprint(nil) },
	"mp_PJRT_Executable_GetCompileOptions":                 func() errT { return mp_PJRT_Executable_GetCompileOptions(nil) },
	"mp_PJRT_Executable_GetCompiledMemoryStats":            func() errT { return mp_PJRT_Executable_GetCompiledMemoryStats(nil) },
	"mp_PJRT_Executable_GetCostAnalysis":                   func() errT { return mp_PJRT_Executable_GetCostAnalysis(nil) },
	"mp_PJRT_Executable_Name":                              func() errT { return mp_PJRT_Executable_Name(nil) },
	"mp_PJRT_Executable_NumOutputs":                        func() errT { return mp_PJRT_Executable_NumOutputs(nil) },
	"mp_PJRT_Executable_NumPartitions":                     func() errT { return mp_PJRT_Executable_NumPartitions(nil) },
	"mp_PJRT_Executable_NumReplicas":                       func() errT { return mp_PJRT_Executable_NumReplicas(nil) },
	"mp_PJRT_Executable_OutputDimensions":                  func() errT { return mp_PJRT_Executable_OutputDimensions(nil) },
	"mp_PJRT_Executable_OutputElementTypes":                func() errT { return mp_PJRT_Executable_OutputElementTypes(nil) },
	"mp_PJRT_Executable_OutputMemoryKinds":                 func() errT { return mp_PJRT_Executable_OutputMemoryKinds(nil) },
	"mp_PJRT_Executable_ParameterMemoryKinds":              func() errT { return mp_PJRT_Executable_ParameterMemoryKinds(nil) },
	"mp_PJRT_Executable_SizeOfGeneratedCodeInBytes":        func() errT { return mp_PJRT_Executable_SizeOfGeneratedCodeInBytes(nil) },
	"mp_PJRT_LoadedExecutable_AddressableDeviceLogicalIds": func() errT { return mp_PJRT_LoadedExecutable_AddressableDeviceLogicalIds(nil) },
	"mp_PJRT_LoadedExecutable_AddressableDevices":          func() errT { return mp_PJRT_LoadedExecutable_AddressableDevices(nil) },
	"mp_PJRT_LoadedExecutable_Delete":                      func() errT { return mp_PJRT_LoadedExecutable_Delete(nil) },
	"mp_PJRT_LoadedExecutable_Destroy":                     func() errT { return mp_PJRT_LoadedExecutable_Destroy(nil) },
	"mp_PJRT_LoadedExecutable_Execute":                     func() errT { return mp_PJRT_LoadedExecutable_Execute(nil) },
	"mp_PJRT_LoadedExecutable_Fingerprint":                 func() errT { return mp_PJRT_LoadedExecutable_Fingerprint(nil) },
	"mp_PJRT_LoadedExecutable_GetDeviceAssignment":         func() errT { return mp_PJRT_LoadedExecutable_GetDeviceAssignment(nil) },
	"mp_PJRT_LoadedExecutable_GetExecutable":               func() errT { return mp_PJRT_LoadedExecutable_GetExecutable(nil) },
	"mp_PJRT_LoadedExecutable_IsDeleted":                   func() errT { return mp_PJRT_LoadedExecutable_IsDeleted(nil) },
	"mp_PJRT_Memory_AddressableByDevices":                  func() errT { return mp_PJRT_Memory_AddressableByDevices(nil) },
	"mp_PJRT_Memory_DebugString":                           func() errT { return mp_PJRT_Memory_DebugString(nil) },
	"mp_PJRT_Memory_Id":                                    func() errT { return mp_PJRT_Memory_Id(nil) },
	"mp_PJRT_Memory_Kind":                                  func() errT { return mp_PJRT_Memory_Kind(nil) },
	"mp_PJRT_Memory_Kind_Id":                               func() errT { return mp_PJRT_Memory_Kind_Id(nil) },
	"mp_PJRT_Memory_ToString":                              func() errT { return mp_PJRT_Memory_ToString(nil) },
	"mp_PJRT_Plugin_Attributes":                            func() errT { return mp_PJRT_Plugin_Attributes(nil) },
	"mp_PJRT_Plugin_Initialize":                            func() errT { return mp_PJRT_Plugin_Initialize(nil) },
}

// armPanic makes the export name panic on every call, as
// METALPLUG_TEST_PANIC does, and returns the function that disarms it.
func armPanic(name string) (disarm func()) { return testhook.Arm(name) }

// TestEveryExportSurvivesAPanic forces a panic in every export and calls
// it as C would: the panic must not escape, and the export must return an
// INTERNAL error naming the function and the panic.
func TestEveryExportSurvivesAPanic(t *testing.T) {
	for name := range exportedFunctions(t, ".") {
		if ownBoundary[name] {
			continue // no PJRT_Error to return (TestVersionExportRecovers, TestHostCallbackExportRecovers)
		}
		call, ok := exportCalls[name]
		if !ok {
			t.Errorf("%s is exported to C but exportCalls does not call it: add it", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			disarm := armPanic(name)
			defer disarm()
			err := takeError(call())
			if errorCode(err) != int(codeInternal) || !strings.Contains(err.Error(), "internal error in "+slotName(name)) || !strings.Contains(err.Error(), "forced panic in "+name) {
				t.Errorf("got %v; want INTERNAL naming %s and the panic", err, slotName(name))
			}
		})
	}
	t.Run("GetPjrtApi", func(t *testing.T) {
		disarm := armPanic("GetPjrtApi")
		defer disarm()
		if GetPjrtApi() != nil {
			t.Error("after a panic GetPjrtApi must return NULL")
		}
	})
}

// TestNullArgs: every export refuses a NULL argument struct with
// INVALID_ARGUMENT, rather than crash.
func TestNullArgs(t *testing.T) {
	for name, call := range exportCalls {
		err := takeError(call())
		if errorCode(err) != int(codeInvalidArgument) || !strings.Contains(err.Error(), slotName(name)+": the argument struct is NULL") {
			t.Errorf("%s(NULL): %v; want INVALID_ARGUMENT naming it", name, err)
		}
	}
}

// TestStructSizes: a caller's struct smaller than what a function writes is
// refused with a message that says so; a larger one (a newer caller) is
// fine.
func TestStructSizes(t *testing.T) {
	err := callTooSmall()
	if errorCode(err) != int(codeInvalidArgument) || !strings.Contains(err.Error(), "PJRT_Buffer_Dimensions_Args has struct_size 39, smaller than the 40 bytes") {
		t.Errorf("a struct one byte short: %v", err)
	}
	h := testClient(t)
	idx, err := callLarger(h)
	if err != nil || idx != 0 {
		t.Errorf("a larger struct: index %d, %v; want 0, nil", idx, err)
	}
}

// TestVersionExportRecovers: a panic in the version export gives NULL, which
// the jax_plugins module reads as unstamped, not a crash.
// TestHostCallbackExportRecovers: a panic in metalplug_set_host_callback
// returns 0 (failure); without one it returns 1.
func TestHostCallbackExportRecovers(t *testing.T) {
	disarm := armPanic("metalplug_set_host_callback")
	if rc := metalplug_set_host_callback(nil); rc != 0 {
		t.Errorf("after a panic: %d, want 0 (failed)", rc)
	}
	disarm()
	if rc := metalplug_set_host_callback(nil); rc != 1 {
		t.Errorf("removing the runner: %d, want 1", rc)
	}
}

func TestVersionExportRecovers(t *testing.T) {
	disarm := armPanic("metalplug_jaxlib_built_against")
	defer disarm()
	if v := metalplug_jaxlib_built_against(); v != nil {
		t.Errorf("after a panic: %p, want NULL", v)
	}
}

// The codes the tests expect, in PJRT's numbers.
var (
	codeInvalidArgument    = pjrtCodes[status.InvalidArgument]
	codeResourceExhausted  = pjrtCodes[status.ResourceExhausted]
	codeFailedPrecondition = pjrtCodes[status.FailedPrecondition]
	codeUnimplemented      = pjrtCodes[status.Unimplemented]
)

// TestErrorCodesTable: every class of backend/status has its own PJRT code,
// numbered as PJRT numbers it, and a code a caller hands in comes back as
// the same class.
func TestErrorCodesTable(t *testing.T) {
	if len(pjrtCodes) != len(status.Codes) {
		t.Fatalf("%d PJRT codes for %d classes", len(pjrtCodes), len(status.Codes))
	}
	for _, c := range status.Codes {
		p, ok := pjrtCodes[c]
		if !ok || int(p) != int(c) {
			t.Errorf("%v: PJRT code %d (present %v), want %d, PJRT's number for it", c, p, ok, int(c))
		}
		if back := statusOf(p); back != c {
			t.Errorf("%v: back from PJRT as %v", c, back)
		}
		if got := codeOf(status.Errorf(c, "x")); got != p {
			t.Errorf("%v: reported as %d", c, got)
		}
	}
	if codeOf(errors.New("unclassified")) != codeInternal || statusOf(99) != status.Internal {
		t.Error("an unclassified error, or an unknown PJRT code, must be INTERNAL")
	}
}

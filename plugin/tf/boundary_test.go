package tf

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/metalplug/metalplug/backend/status"
	"github.com/metalplug/metalplug/plugin/internal/exports"
	"github.com/metalplug/metalplug/plugin/testhook"
	"github.com/metalplug/metalplug/plugin/tf/internal/tfharness"
)

// ownBoundary are the exports TensorFlow gives no way to fail, which do
// something else instead and so defer boundary themselves: the init
// functions fill TensorFlow's tables whatever happens (a deferred C call
// before boundary), an event must exist, a host callback must be called,
// and a variable callback deletes its tensors and fails its kernel.
var ownBoundary = map[string]bool{
	"SE_InitPlugin": true, "TF_InitGraph": true, "TF_InitProfiler": true,
	"goCreateEvent": true, "goHostCallback": true, "goVarUpdate": true, "goVarCopy": true,
}

// TestEveryExportRecovers holds every function exported to C to the shape
// boundary.go describes: one call of export or exportValue named for it
// (after declarations that cannot panic), or, for ownBoundary, nothing that
// can panic before `defer boundary("<its name>", ...)`, then
// `hook("<its name>")`. The integration test TestPanicsStayInside then
// forces a panic in each.
func TestEveryExportRecovers(t *testing.T) {
	exports := exportedFunctions(t, ".")
	if len(exports) < 25 {
		t.Fatalf("found %d exported functions, expected every //export of plugin/tf", len(exports))
	}
	for name := range ownBoundary {
		if exports[name] == nil {
			t.Errorf("ownBoundary names %s, which is not exported", name)
		}
	}
	for name, fn := range exports {
		check := checkExport
		if ownBoundary[name] {
			check = checkBoundary
		}
		if err := check(name, fn); err != "" {
			t.Errorf("%s: %s", name, err)
		}
	}
}

// checkExport returns what is wrong with fn as a wrapped export, or "": its
// body is declarations that cannot panic, then one call (or the return of
// one) of export or exportValue with its own name.
func checkExport(name string, fn *ast.FuncDecl) string {
	stmts := fn.Body.List
	i := 0
	for ; i < len(stmts) && harmless(stmts[i]); i++ {
	}
	if i != len(stmts)-1 {
		return "must be one call of export or exportValue"
	}
	var call *ast.CallExpr
	switch s := stmts[i].(type) {
	case *ast.ExprStmt:
		call, _ = s.X.(*ast.CallExpr)
	case *ast.ReturnStmt:
		if len(s.Results) == 1 {
			call, _ = s.Results[0].(*ast.CallExpr)
		}
	}
	if call == nil || !(callsWith(call, "export", name) || callsWith(call, "exportValue", name)) {
		return "must be one call of export(\"" + name + "\", ...) or exportValue(\"" + name + "\", ...)"
	}
	return ""
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

// checkBoundary returns what is wrong with fn's first statements, or "".
func checkBoundary(name string, fn *ast.FuncDecl) string {
	stmts := fn.Body.List
	i := 0
	for ; i < len(stmts) && harmless(stmts[i]); i++ {
	}
	if i+1 >= len(stmts) {
		return "does not start with defer boundary(...) and hook(...)"
	}
	d, ok := stmts[i].(*ast.DeferStmt)
	if !ok || !callsWith(d.Call, "boundary", name) {
		return "the first statement that can panic must be defer boundary(\"" + name + "\", ...)"
	}
	e, ok := stmts[i+1].(*ast.ExprStmt)
	call, _ := e.X.(*ast.CallExpr)
	if !ok || call == nil || !callsWith(call, "hook", name) {
		return "defer boundary must be followed by hook(\"" + name + "\")"
	}
	return ""
}

// harmless statements cannot panic: declarations, assignments of
// literals, and deferred C calls (which run after boundary recovered).
func harmless(s ast.Stmt) bool {
	switch s := s.(type) {
	case *ast.DeclStmt: // var x T, or of literals
		g := s.Decl.(*ast.GenDecl)
		for _, sp := range g.Specs {
			if vs, ok := sp.(*ast.ValueSpec); ok && !literals(vs.Values) {
				return false
			}
		}
		return true
	case *ast.AssignStmt:
		return literals(s.Rhs)
	case *ast.DeferStmt:
		sel, ok := s.Call.Fun.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		pkg, ok := sel.X.(*ast.Ident)
		return ok && pkg.Name == "C"
	}
	return false
}

func literals(es []ast.Expr) bool {
	for _, e := range es {
		switch e.(type) {
		case *ast.BasicLit, *ast.Ident:
		default:
			return false
		}
	}
	return true
}

var callsWith = exports.CallsWith

// TestBoundaryCheckCatches: the shape check rejects what it must.
func TestBoundaryCheckCatches(t *testing.T) {
	src := `package p
func ok(st *C.TF_Status) (r C.int) { r = 2; defer boundary("ok", failure{}); hook("ok"); return 1 }
func late(h C.uintptr_t) { x := get(h); defer boundary("late", failure{}); hook("late"); _ = x }
func misnamed() { defer boundary("other", failure{}); hook("misnamed") }
func nohook() { defer boundary("nohook", failure{}); work() }
func none() { work() }
func wrapped(st *C.TF_Status) { export("wrapped", failure{st: st}, func() error { return work() }) }
func valued() C.int { return exportValue("valued", failure{}, 0, count) }
func declared() { var c call; export("declared", failure{detail: c.detail}, c.run) }
func computed(h C.uintptr_t) { x := get(h); export("computed", failure{}, x.run) }
func two() { export("two", failure{}, work); work() }
func other() { export("wrapped", failure{}, work) }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"ok": true, "late": false, "misnamed": false, "nohook": false, "none": false}
	wantExport := map[string]bool{"wrapped": true, "valued": true, "declared": true, "computed": false, "two": false, "other": false, "ok": false, "none": false}
	for _, d := range f.Decls {
		fn := d.(*ast.FuncDecl)
		name := fn.Name.Name
		if w, ok := want[name]; ok {
			if got := checkBoundary(name, fn) == ""; got != w {
				t.Errorf("%s: boundary check accepted = %v, want %v", name, got, w)
			}
		}
		if w, ok := wantExport[name]; ok {
			if got := checkExport(name, fn) == ""; got != w {
				t.Errorf("%s: export check accepted = %v, want %v", name, got, w)
			}
		}
	}
}

// TestEveryExportSurvivesAPanic forces a panic in every exported function
// (the test hook) and calls it as C would: the panic must not escape, an
// export with a status must report INTERNAL naming the panic, and the
// results C reads must be the documented fallbacks. TestPanicsStayInside
// (tests/integration) does the same through a real TensorFlow.
func TestEveryExportSurvivesAPanic(t *testing.T) {
	calls := map[string]func(st statusT) (check func() string){
		"SE_InitPlugin": func(st statusT) func() string {
			SE_InitPlugin(paramsOf(tfharness.NewPlatformParams(), SE_InitPlugin), st)
			return none
		},
		"TF_InitKernel": func(st statusT) func() string { TF_InitKernel(); return none },
		"TF_InitGraph": func(st statusT) func() string {
			TF_InitGraph(nil, st)
			defer passBroken.Store(false)
			return wantNil(passBroken.Load()) // the pass turned itself off
		},
		"goOptimize":      func(st statusT) func() string { goOptimize(nil, 0, nil, nil, st); return internal(st, "goOptimize") },
		"TF_InitProfiler": func(st statusT) func() string { TF_InitProfiler(nil, st); return none },
		"goProfilerStart": func(st statusT) func() string { goProfilerStart(st); return internal(st, "goProfilerStart") },
		"goProfilerStop":  func(st statusT) func() string { goProfilerStop(st); return internal(st, "goProfilerStop") },
		"goProfilerCollect": func(st statusT) func() string {
			goProfilerCollect(nil, nil, st)
			return internal(st, "goProfilerCollect")
		},
		"goKernelCreate":      func(st statusT) func() string { return wantZero(uint64(goKernelCreate(nil, 0))) },
		"goKernelDelete":      func(st statusT) func() string { goKernelDelete(1); return none },
		"goKernelCompute":     func(st statusT) func() string { goKernelCompute(1, nil); return none },
		"goVarUpdate":         func(st statusT) func() string { goVarUpdate(nil, nil, nil); return none },
		"goVarCopy":           func(st statusT) func() string { goVarCopy(nil, nil, nil); return none },
		"metalplug_op_counts": func(st statusT) func() string { return wantNil(metalplug_op_counts() == nil) },
		"goDeviceCount":       func(st statusT) func() string { goDeviceCount(st); return internal(st, "goDeviceCount") },
		"goAllocate":          func(st statusT) func() string { return wantNil(goAllocate(64) == nil) },
		"goDeallocate":        func(st statusT) func() string { goDeallocate(nil); return none },
		// A device of no memory, not a failure TensorFlow cannot start past.
		"goAllocatorStats": func(st statusT) func() string { return wantOne(int(goAllocatorStats(nil, nil, nil))) },
		"goCreateStream":   func(st statusT) func() string { goCreateStream(st); return internal(st, "goCreateStream") },
		"goDestroyStream":  func(st statusT) func() string { goDestroyStream(1); return none },
		"goStreamDependency": func(st statusT) func() string {
			goStreamDependency(1, 2, st)
			return internal(st, "goStreamDependency")
		},
		"goStreamStatus":      func(st statusT) func() string { goStreamStatus(1, st); return internal(st, "goStreamStatus") },
		"goCreateEvent":       func(st statusT) func() string { return wantNonZero(uint64(goCreateEvent(st))) },
		"goDestroyEvent":      func(st statusT) func() string { goDestroyEvent(1); return none },
		"goEventStatus":       func(st statusT) func() string { return wantOne(int(goEventStatus(1))) },
		"goRecordEvent":       func(st statusT) func() string { goRecordEvent(1, 2, st); return internal(st, "goRecordEvent") },
		"goWaitForEvent":      func(st statusT) func() string { goWaitForEvent(1, 2, st); return internal(st, "goWaitForEvent") },
		"goMemcpy":            func(st statusT) func() string { goMemcpy(1, nil, nil, 8, st); return internal(st, "goMemcpy") },
		"goSyncMemcpy":        func(st statusT) func() string { goSyncMemcpy(nil, nil, 8, st); return internal(st, "goSyncMemcpy") },
		"goBlockHostForEvent": func(st statusT) func() string { goBlockHostForEvent(1, st); return internal(st, "goBlockHostForEvent") },
		"goBlockHostUntilDone": func(st statusT) func() string {
			goBlockHostUntilDone(1, st)
			return internal(st, "goBlockHostUntilDone")
		},
		"goSynchronizeAll": func(st statusT) func() string { goSynchronizeAll(st); return internal(st, "goSynchronizeAll") },
		"goMemset":         func(st statusT) func() string { goMemset(1, nil, 0, 8, st); return internal(st, "goMemset") },
		"goMemset32":       func(st statusT) func() string { goMemset32(1, nil, 0, 8, st); return internal(st, "goMemset32") },
		"goHostCallback": func(st statusT) func() string {
			before := tfharness.Callbacks()
			ok := int(goHostCallback(1, tfharness.Callback(), nil))
			return func() string {
				if ok != 1 || tfharness.Callbacks() != before+1 {
					return "a failed host callback must be called at once with the error (or TensorFlow waits forever)"
				}
				return ""
			}
		},
	}
	for name := range exportedFunctions(t, ".") {
		call, ok := calls[name]
		if !ok {
			t.Errorf("%s is exported to C but this test does not force a panic in it: add it", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			disarm := testhook.Arm(name)
			defer disarm()
			st := statusT(tfharness.NewStatus())
			defer tfharness.DeleteStatus(unsafe.Pointer(st))
			if msg := call(st)(); msg != "" {
				t.Error(msg)
			}
		})
	}
}

func none() string { return "" }

func internal(st statusT, name string) func() string {
	return func() string {
		code, msg := tfharness.StatusText(unsafe.Pointer(st))
		if code != tfharness.Internal || !strings.Contains(msg, "forced panic in "+name) {
			return "status " + strconv.Itoa(code) + " " + strconv.Quote(msg) + ": want INTERNAL naming the panic"
		}
		return ""
	}
}

// The results reach these as Go integers, converted at the call: a test
// file cannot name cgo's types, but can convert their values.
func wantZero(v uint64) func() string {
	return func() string {
		if v != 0 {
			return "the result must be 0 after a panic"
		}
		return ""
	}
}

func wantNonZero(v uint64) func() string {
	return func() string {
		if v == 0 {
			return "the result must be a usable handle after a panic"
		}
		return ""
	}
}

func wantOne(v int) func() string {
	return func() string {
		if v != 1 {
			return "the result must be 1 after a panic"
		}
		return ""
	}
}

func wantNil(isNil bool) func() string {
	return func() string {
		if !isNil {
			return "the result must be NULL after a panic"
		}
		return ""
	}
}

// TestErrorCodesTable: every class of backend/status has its own TF_Code,
// numbered as TensorFlow numbers it.
func TestErrorCodesTable(t *testing.T) {
	if len(tfCodes) != len(status.Codes) {
		t.Fatalf("%d TF codes for %d classes", len(tfCodes), len(status.Codes))
	}
	for _, c := range status.Codes {
		if got := tfCode(status.Errorf(c, "x")); int(got) != int(c) {
			t.Errorf("%v: reported as TF_Code %d, want %d", c, got, int(c))
		}
	}
	if int(tfCode(errors.New("unclassified"))) != int(status.Internal) {
		t.Error("an unclassified error must be TF_INTERNAL")
	}
}

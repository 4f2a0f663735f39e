package pjrt

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime/cgo"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/metalplug/metalplug/backend/status"
	"github.com/metalplug/metalplug/plugin/cenv"
	"github.com/metalplug/metalplug/plugin/testhook"
)

// The C boundary. A Go panic that unwinds into C aborts the process that
// hosts us (a Python running jax), so every function exported to C runs
// under a recover. A PJRT function is its signature and one line,
//
//	func mp_PJRT_X(args *C.PJRT_X_Args) errT {
//		return export("mp_PJRT_X", args, C.PJRT_X_Args_STRUCT_SIZE, x)
//	}
//
// and its body x is plain Go returning an error: export recovers a panic
// into an INTERNAL error naming the function, checks the argument struct,
// and reports the body's error as fail does. Only the exports that return
// no PJRT_Error (GetPjrtApi, whose failure is a NULL table, and the two
// ctypes entry points) begin with
//
//	defer boundary("<its export name>", nil)
//	hook("<its export name>")
//
// themselves. boundary_test.go holds every //export to one of these two
// shapes, and forces a panic in each.
//
// This mirrors plugin/tf/boundary.go (the PJRT_Error in place of the
// TF_Status); the panic hook and its variable are the same.

// errT is the type every export returns, under a name the tests can write
// (a _test.go file cannot use cgo).
type errT = *C.PJRT_Error

// slotName is the PJRT name of an export: mp_PJRT_Buffer_Delete is the
// table's PJRT_Buffer_Delete.
func slotName(export string) string { return strings.TrimPrefix(export, "mp_") }

// boundary recovers a panic in the export name and reports it in *res.
func boundary(name string, res *errT) {
	r := recover()
	if r == nil {
		return
	}
	err := fmt.Errorf("internal error in %s: %v", slotName(name), r)
	// Reporting runs under a recover of its own: a second panic here would
	// reach C as surely as the first.
	defer func() {
		if r := recover(); r != nil {
			logPanic(name, fmt.Errorf("%v; then, reporting it: %v", err, r))
		}
	}()
	if res == nil {
		logPanic(name, err)
		return
	}
	*res = newCError(codeInternal, "metalplug: "+err.Error())
}

// export is every PJRT function: it recovers a panic in the export name,
// calls hook, checks that args is at least size bytes (need: usually the
// struct's *_STRUCT_SIZE, less where the function reads no further, for
// callers of older minors), then runs body and reports its error. Nothing
// here can panic before the deferred boundary is in place.
func export[T any](name string, args *T, size uintptr, body func(*T) error) (res errT) {
	defer boundary(name, &res)
	hook(name)
	if err := need(args, size); err != nil {
		return fail(name, err)
	}
	return report(name, body(args))
}

// asIs is what a body returns for an error that is not its own failure
// but a status it hands over (an event's, for PJRT_Event_Error and
// PJRT_Event_Await): reported with cErrorOf, as the message already says
// where it arose, and as no error when err is nil.
type asIs struct{ err error }

func (a asIs) Error() string {
	if a.err == nil {
		return "no error"
	}
	return a.err.Error()
}

func (a asIs) Unwrap() error { return a.err }

// report is the PJRT_Error for what the body of the export name returned:
// an asIs status as it is, any other error prefixed by fail.
func report(name string, err error) errT {
	if a, ok := err.(asIs); ok {
		return cErrorOf(a.err)
	}
	return fail(name, err)
}

// panicLogLimit bounds the log lines per exported function.
const panicLogLimit = 3

var panicLogs sync.Map // export name -> *atomic.Int64

func logPanic(name string, err error) {
	c, _ := panicLogs.LoadOrStore(name, new(atomic.Int64))
	switch n := c.(*atomic.Int64).Add(1); {
	case n <= panicLogLimit:
		logf("%v", err)
	case n == panicLogLimit+1:
		logf("%v (further failures in %s are not logged)", err, name)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "metalplug: "+format+"\n", args...)
}

// safely runs fn on a goroutine of ours (event callbacks, stream waits):
// there is no caller to report to, so a panic is logged, never let loose.
func safely(what string, fn func()) {
	defer func() {
		if r := recover(); r != nil {
			logPanic(what, fmt.Errorf("internal error in %s: %v", what, r))
		}
	}()
	fn()
}

// TraceEnv, set to 1, logs the first call of each exported function: which
// of the PJRT API a caller uses, in the order it first uses it.
const TraceEnv = "METALPLUG_PJRT_TRACE"

var trace struct {
	once sync.Once
	on   bool     // TraceEnv is 1
	seen sync.Map // export names traced so far
}

// hook is what every export calls first: the trace, then the test hook
// (plugin/testhook).
func hook(name string) {
	trace.once.Do(func() { trace.on = cenv.Get(TraceEnv) == "1" })
	if trace.on {
		if _, seen := trace.seen.LoadOrStore(name, true); !seen {
			logf("PJRT call: %s (first)", slotName(name))
		}
	}
	testhook.Check(name)
}

// ------------------------------------------------------------------ errors

// code is a PJRT_Error_Code.
type code int

// pjrtCodes is backend/status's vocabulary in PJRT's: the one table from an
// error's class to the code it is reported with.
var pjrtCodes = map[status.Code]code{
	status.Cancelled: C.PJRT_Error_Code_CANCELLED, status.Unknown: C.PJRT_Error_Code_UNKNOWN,
	status.InvalidArgument: C.PJRT_Error_Code_INVALID_ARGUMENT, status.DeadlineExceeded: C.PJRT_Error_Code_DEADLINE_EXCEEDED,
	status.NotFound: C.PJRT_Error_Code_NOT_FOUND, status.AlreadyExists: C.PJRT_Error_Code_ALREADY_EXISTS,
	status.PermissionDenied: C.PJRT_Error_Code_PERMISSION_DENIED, status.ResourceExhausted: C.PJRT_Error_Code_RESOURCE_EXHAUSTED,
	status.FailedPrecondition: C.PJRT_Error_Code_FAILED_PRECONDITION, status.Aborted: C.PJRT_Error_Code_ABORTED,
	status.OutOfRange: C.PJRT_Error_Code_OUT_OF_RANGE, status.Unimplemented: C.PJRT_Error_Code_UNIMPLEMENTED,
	status.Internal: C.PJRT_Error_Code_INTERNAL, status.Unavailable: C.PJRT_Error_Code_UNAVAILABLE,
	status.DataLoss: C.PJRT_Error_Code_DATA_LOSS, status.Unauthenticated: C.PJRT_Error_Code_UNAUTHENTICATED,
}

// codeInternal is what a recovered panic is reported with.
var codeInternal = pjrtCodes[status.Internal]

// ErrUnsupported is what a Translator wraps (fmt.Errorf("...: %w",
// pjrt.ErrUnsupported)) when the program uses something metalplug does not
// support; Compile then reports UNIMPLEMENTED rather than INVALID_ARGUMENT.
var ErrUnsupported = status.Unsupported

// codeOf is the PJRT code err is reported with: its backend/status class's,
// INTERNAL when it carries none.
func codeOf(err error) code { return pjrtCodes[status.CodeOf(err)] }

// statusOf is the class of a PJRT code a caller hands us (PJRT_Event_Set),
// INTERNAL for one PJRT does not define.
func statusOf(c code) status.Code {
	for s, p := range pjrtCodes {
		if p == c {
			return s
		}
	}
	return status.Internal
}

// newCError makes a PJRT_Error in C memory (abi.c copies the message).
func newCError(c code, msg string) *C.PJRT_Error {
	return C.mp_error_new(C.PJRT_Error_Code(c), (*C.char)(unsafe.Pointer(unsafe.StringData(msg))), C.size_t(len(msg)))
}

// fail reports err from the export name: "metalplug: PJRT_X: what".
func fail(name string, err error) *C.PJRT_Error {
	if err == nil {
		return nil
	}
	return newCError(codeOf(err), "metalplug: "+slotName(name)+": "+err.Error())
}

// cErrorOf makes a PJRT_Error for an event's status (nil for success);
// the message already says where it arose.
func cErrorOf(err error) *C.PJRT_Error {
	if err == nil {
		return nil
	}
	return newCError(codeOf(err), err.Error())
}

// --------------------------------------------------------- argument checks

// need checks the argument struct a caller passed: present, and at least
// end bytes long by its struct_size, end being where the last field this
// function reads or writes ends (usually the struct's full 0.114 size, the
// *_STRUCT_SIZE of abi.h). Larger is fine: a newer caller's struct has
// fields we do not know.
func need[T any](args *T, end uintptr) error {
	if args == nil {
		return status.Invalidf("the argument struct is NULL")
	}
	got := uintptr(*(*C.size_t)(unsafe.Pointer(args)))
	if got < end {
		return status.Invalidf("the caller's %s has struct_size %d, smaller than the %d bytes this function reads and writes (metalplug implements PJRT %d.%d; the caller's PJRT is older)",
			cTypeName[T](), got, end, C.MP_PJRT_MAJOR, C.MP_PJRT_MINOR)
	}
	return nil
}

// fieldEnd is where a field of the caller's struct ends.
func fieldEnd(offset, size uintptr) uintptr { return offset + size }

// has reports whether the caller's struct (of struct_size got) includes the
// field ending at end: for fields later minors appended, read only if so.
func has(got C.size_t, end uintptr) bool { return uintptr(got) >= end }

// cTypeName is the C name of T, from cgo's spelling of it.
func cTypeName[T any]() string {
	s := fmt.Sprintf("%T", *new(T))
	if i := strings.LastIndex(s, "_Ctype_"); i >= 0 {
		s = strings.TrimPrefix(s[i+len("_Ctype_"):], "struct_")
	}
	return s
}

// --------------------------------------------------------------- handles

// Every object C holds is a small C record (abi.h) whose handle field is a
// cgo.Handle of the Go object, so that C never keeps a Go pointer.

func newHandle(v any) C.uintptr_t { return C.uintptr_t(cgo.NewHandle(v)) }

// lookup maps a record's handle back to its Go object; what names the
// argument in the error for a NULL or dead one.
func lookup[T any](h C.uintptr_t, what string) (v T, err error) {
	defer func() {
		if recover() != nil {
			err = status.Invalidf("%s is not a live metalplug object (destroyed already?)", what)
		}
	}()
	if h == 0 {
		return v, status.Invalidf("%s is not a live metalplug object (destroyed already?)", what)
	}
	v, ok := cgo.Handle(h).Value().(T)
	if !ok {
		return v, status.Invalidf("%s is a metalplug %T, not the object expected", what, cgo.Handle(h).Value())
	}
	return v, nil
}

// dropHandle releases a handle and zeroes the record's copy, so that a
// use after destroy finds nothing rather than another object.
func dropHandle(h *C.uintptr_t) {
	if *h != 0 {
		cgo.Handle(*h).Delete()
		*h = 0
	}
}

// ------------------------------------------------------------------ arena

// arena is C memory an object owns: the strings and arrays it hands out,
// which must outlive the call that returned them, freed with the object.
type arena struct {
	mu   sync.Mutex
	ptrs []unsafe.Pointer
}

// alloc returns n zeroed bytes (at least one).
func (a *arena) alloc(n int) unsafe.Pointer {
	p := C.calloc(C.size_t(max(n, 1)), 1)
	if p == nil {
		panic(fmt.Sprintf("out of host memory allocating %d bytes", n))
	}
	a.mu.Lock()
	a.ptrs = append(a.ptrs, p)
	a.mu.Unlock()
	return p
}

// str is s as a NUL-terminated C string, and its length.
func (a *arena) str(s string) (*C.char, C.size_t) {
	p := a.alloc(len(s) + 1)
	copy(unsafe.Slice((*byte)(p), len(s)), s)
	return (*C.char)(p), C.size_t(len(s))
}

// int64s copies vs into C memory.
func (a *arena) int64s(vs []int64) *C.int64_t {
	p := a.alloc(len(vs) * 8)
	copy(unsafe.Slice((*int64)(p), len(vs)), vs)
	return (*C.int64_t)(p)
}

// namedValueAt is element i of a C array of PJRT_NamedValue at list.
func namedValueAt(list unsafe.Pointer, i int) *C.PJRT_NamedValue {
	return (*C.PJRT_NamedValue)(unsafe.Add(list, i*C.sizeof_PJRT_NamedValue))
}

func (a *arena) free() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range a.ptrs {
		C.free(p)
	}
	a.ptrs = nil
}

package tf

// #include "plugin.h"
import "C"

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/metalplug/metalplug/backend/status"
	"github.com/metalplug/metalplug/plugin/testhook"
)

// The C boundary. A Go panic that unwinds into C aborts the process that
// hosts us, so every function exported to C is one call of export (or
// exportValue, for a function with a result):
//
//	export("goName", failure{st: st}, func() error { return work(args) })
//
// which defers boundary before anything can panic, calls the test hook,
// runs the body (plain Go returning an error) and reports its error where
// failure says. The few that TensorFlow gives no way to fail (an event
// that must exist, a callback that must be called) defer boundary
// themselves, with what to do instead. A test (boundary_test.go) holds
// every //export to one of the two shapes.

// failure says where a recovered panic goes: the TF_Status the caller hands
// back to TensorFlow, the kernel context or construction to fail, or, when
// TensorFlow offers no way to report an error, the log. detail, when set,
// names what was running (the op and its inputs). sink, when set, takes the
// error instead: a callback TensorFlow makes from inside one of our kernels
// hands it to that kernel.
type failure struct {
	st     *C.TF_Status
	ctx    *C.TF_OpKernelContext
	kc     *C.TF_OpKernelConstruction
	detail func() string
	sink   func(error)
}

// boundary recovers a panic and reports it as an INTERNAL error: a panic is
// always the plugin's own failure.
func boundary(name string, to failure) {
	r := recover()
	if r == nil {
		return
	}
	what := name
	if to.detail != nil {
		if d := to.detail(); d != "" {
			what = d + " (" + name + ")"
		}
	}
	err := status.InternalError(fmt.Errorf("internal error in %s: %v", what, r))
	// Reporting runs under a recover of its own: a second panic here would
	// reach C as surely as the first.
	defer func() {
		if r := recover(); r != nil {
			logPanic(name, fmt.Errorf("%v; then, reporting it: %v", err, r))
		}
	}()
	to.report(name, err)
}

// report hands err to where to says: the sink, the kernel context or
// construction, the status, or else the log.
func (to failure) report(name string, err error) {
	switch {
	case to.sink != nil:
		to.sink(err)
	case to.ctx != nil:
		failKernel(to.ctx, err)
	case to.kc != nil:
		failConstruction(to.kc, err)
	case to.st != nil:
		setStatus(to.st, err)
	default:
		logPanic(name, err)
	}
}

// export is every function TensorFlow calls: it recovers a panic in the
// export name (an INTERNAL error, reported where to says), calls the test
// hook, runs body and reports its error the same way. body is called, never
// kept, so a func literal for it stays on the stack.
func export(name string, to failure, body func() error) {
	defer boundary(name, to)
	hook(name)
	if err := body(); err != nil {
		to.report(name, err)
	}
}

// exportValue is export for a function with a result: body's, or failed
// (the value that tells C it failed) when body fails or panics.
func exportValue[R any](name string, to failure, failed R, body func() (R, error)) (r R) {
	r = failed
	defer boundary(name, to)
	hook(name)
	v, err := body()
	if err != nil {
		to.report(name, err)
		return failed
	}
	return v
}

// panicLogLimit bounds the log lines per exported function: TensorFlow
// retries some calls (allocation) thousands of times a second.
const panicLogLimit = 3

var panicLogs sync.Map // exported function name -> *atomic.Int64

// logPanic logs err, where TensorFlow offers no other way to report it.
func logPanic(name string, err error) {
	c, _ := panicLogs.LoadOrStore(name, new(atomic.Int64))
	switch n := c.(*atomic.Int64).Add(1); {
	case n <= panicLogLimit:
		logf("%v", err)
	case n == panicLogLimit+1:
		logf("%v (further failures in %s are not logged)", err, name)
	}
}

// tfCodes is backend/status's vocabulary in TensorFlow's: the one table
// from an error's class to the TF_Code it is reported with.
var tfCodes = map[status.Code]C.TF_Code{
	status.Cancelled: C.TF_CANCELLED, status.Unknown: C.TF_UNKNOWN, status.InvalidArgument: C.TF_INVALID_ARGUMENT,
	status.DeadlineExceeded: C.TF_DEADLINE_EXCEEDED, status.NotFound: C.TF_NOT_FOUND, status.AlreadyExists: C.TF_ALREADY_EXISTS,
	status.PermissionDenied: C.TF_PERMISSION_DENIED, status.ResourceExhausted: C.TF_RESOURCE_EXHAUSTED,
	status.FailedPrecondition: C.TF_FAILED_PRECONDITION, status.Aborted: C.TF_ABORTED, status.OutOfRange: C.TF_OUT_OF_RANGE,
	status.Unimplemented: C.TF_UNIMPLEMENTED, status.Internal: C.TF_INTERNAL, status.Unavailable: C.TF_UNAVAILABLE,
	status.DataLoss: C.TF_DATA_LOSS, status.Unauthenticated: C.TF_UNAUTHENTICATED,
}

// tfCode is the TF_Code err is reported with: its class's, INTERNAL when
// it carries none.
func tfCode(err error) C.TF_Code { return tfCodes[status.CodeOf(err)] }

// setStatus reports err, classified, in st; a nil err leaves st alone.
func setStatus(st *C.TF_Status, err error) {
	if err == nil {
		return
	}
	msg := C.CString("metalplug: " + err.Error())
	defer C.free(unsafe.Pointer(msg))
	C.TF_SetStatus(st, tfCode(err), msg)
}

// failKernel fails a kernel's compute with err.
func failKernel(ctx *C.TF_OpKernelContext, err error) {
	if ctx == nil { // TensorFlow always passes one; never dereference a missing one
		logf("%v", err)
		return
	}
	st := C.TF_NewStatus()
	defer C.TF_DeleteStatus(st)
	setStatus(st, err)
	C.TF_OpKernelContext_Failure(ctx, st)
}

// failConstruction fails a kernel's construction with err.
func failConstruction(ctx *C.TF_OpKernelConstruction, err error) {
	if ctx == nil {
		logf("%v", err)
		return
	}
	st := C.TF_NewStatus()
	defer C.TF_DeleteStatus(st)
	setStatus(st, err)
	C.TF_OpKernelConstruction_Failure(ctx, st)
}

// hook is the test hook every export calls first (plugin/testhook).
func hook(name string) { testhook.Check(name) }

// statusT is *C.TF_Status under a name the tests can write (a test file
// cannot name cgo's types); an alias, it adds nothing to the library. What
// else the tests need of C is in internal/tfharness.
type statusT = *C.TF_Status

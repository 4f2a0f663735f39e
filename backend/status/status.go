// Package status is the one error vocabulary of the library and the one
// rule for error codes at both C boundaries (TensorFlow's TF_Status, PJRT's
// PJRT_Error): an error is classified by who must act on it. What the
// caller got wrong (shapes, attributes, dtypes, inputs) is InvalidArgument;
// memory the device does not have is ResourceExhausted; what metalplug does
// not do is Unimplemented (Unsupported); a call out of turn is
// FailedPrecondition; everything else, the plugin's own failures and
// recovered panics above all, is Internal. An error that carries no class is
// Internal, so a forgotten classification can only ever blame the plugin.
//
// The codes are the canonical ones (absl's, gRPC's), numbered as they are,
// which is how TF_Code and PJRT_Error_Code number them too: each boundary
// converts a Code with one table, checked against its C enum by a test.
package status

import (
	"errors"
	"fmt"
)

// Code is an error's class: a canonical error code.
type Code uint8

const (
	Cancelled          Code = 1
	Unknown            Code = 2
	InvalidArgument    Code = 3
	DeadlineExceeded   Code = 4
	NotFound           Code = 5
	AlreadyExists      Code = 6
	PermissionDenied   Code = 7
	ResourceExhausted  Code = 8
	FailedPrecondition Code = 9
	Aborted            Code = 10
	OutOfRange         Code = 11
	Unimplemented      Code = 12
	Internal           Code = 13
	Unavailable        Code = 14
	DataLoss           Code = 15
	Unauthenticated    Code = 16
)

// Codes lists every code, for the boundaries' tables and their tests.
var Codes = []Code{Cancelled, Unknown, InvalidArgument, DeadlineExceeded, NotFound, AlreadyExists, PermissionDenied,
	ResourceExhausted, FailedPrecondition, Aborted, OutOfRange, Unimplemented, Internal, Unavailable, DataLoss, Unauthenticated}

var codeNames = [...]string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
	"PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
	"UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}

func (c Code) String() string {
	if c > 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "INTERNAL"
}

// Unsupported is what an error about something metalplug does not support
// wraps (fmt.Errorf("...: %w", status.Unsupported)), as opposed to input
// that is malformed: its class is Unimplemented.
var Unsupported error = &Error{Code: Unimplemented, Err: errors.New("not supported by metalplug")}

// Error is an error with its class. Its message is the wrapped error's.
type Error struct {
	Code Code
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// New gives err the class c (nil stays nil).
func New(c Code, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: c, Err: err}
}

// Errorf is New(c, fmt.Errorf(...)).
func Errorf(c Code, format string, args ...any) error { return New(c, fmt.Errorf(format, args...)) }

// Invalid marks err as the caller's mistake.
func Invalid(err error) error { return New(InvalidArgument, err) }

// Invalidf is Invalid(fmt.Errorf(...)).
func Invalidf(format string, args ...any) error {
	return Invalid(fmt.Errorf(format, args...))
}

// Exhausted marks err as a lack of device memory.
func Exhausted(err error) error { return New(ResourceExhausted, err) }

// InternalError marks err as the plugin's own failure, so that an outer Or
// cannot reclassify it.
func InternalError(err error) error { return New(Internal, err) }

// Or gives err the class c unless it already has one: a frontend wraps
// what a lowering returns with Or(err, InvalidArgument), and a panic the
// lowering recovered stays Internal.
func Or(err error, c Code) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Code: c, Err: err}
}

// CodeOf is err's class: the outermost one it carries, else Internal.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// Package status is the one rule for error codes at both C boundaries
// (TensorFlow's TF_Status, PJRT's PJRT_Error): an error is classified by who
// must act on it. What the caller got wrong (shapes, attributes, dtypes,
// inputs) is InvalidArgument; memory the device does not have is
// ResourceExhausted; everything else, the plugin's own failures and
// recovered panics above all, is Internal. An error that carries no class is
// Internal, so a forgotten classification can only ever blame the plugin.
package status

import (
	"errors"
	"fmt"
)

// Code is an error's class.
type Code uint8

const (
	Internal Code = iota
	InvalidArgument
	ResourceExhausted
)

func (c Code) String() string {
	switch c {
	case InvalidArgument:
		return "INVALID_ARGUMENT"
	case ResourceExhausted:
		return "RESOURCE_EXHAUSTED"
	}
	return "INTERNAL"
}

// Error is an error with its class. Its message is the wrapped error's.
type Error struct {
	Code Code
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func with(c Code, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: c, Err: err}
}

// Invalid marks err as the caller's mistake.
func Invalid(err error) error { return with(InvalidArgument, err) }

// Invalidf is Invalid(fmt.Errorf(...)).
func Invalidf(format string, args ...any) error {
	return Invalid(fmt.Errorf(format, args...))
}

// Exhausted marks err as a lack of device memory.
func Exhausted(err error) error { return with(ResourceExhausted, err) }

// InternalError marks err as the plugin's own failure, so that an outer Or
// cannot reclassify it.
func InternalError(err error) error { return with(Internal, err) }

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

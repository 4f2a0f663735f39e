// Package model executes MPSGraph graphs in Go, so that the Metal driver's
// lowering runs, and is tested, on machines without a Mac.
//
// It implements gpu.Device and the interfaces behind it: buffers over Go
// memory, graphs that record the nodes gpu.Graph has checked, executables,
// and command queues that run committed command buffers in order on a
// goroutine of their own.
//
// Each primitive computes what Apple documents for it, exactly: float
// results are rounded to float32 or float16 after every primitive, integers
// wrap to their width. Where MPSGraph leaves a result unspecified (integer
// division by zero, out-of-range casts, NaN operands of maximum, the sign and
// payload of a NaN that arithmetic gives, the order of sort ties, which
// duplicate update a scatter keeps, the row stride of an
// MPSNDArray that does not ask for packed rows) the model deliberately makes
// the choice a lowering is least likely to expect, so that code relying on
// unspecified behaviour fails here rather than on a Mac. Each such choice is
// commented where it is made, with the words "unspecified" or "undefined".
package model

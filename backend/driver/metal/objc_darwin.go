//go:build darwin

package metal

import (
	"fmt"

	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/objc"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
)

// msg sends selector sel to recv. The driver sends messages itself, rather
// than through darwinkit's generated methods, wherever v0.5.0's binding is
// unusable:
//
//   - parameters typed *foundation.Array or *foundation.Dictionary: darwinkit
//     passes the address of the Go struct, not the Objective-C object inside
//     it (objc.convertToObjcValue treats every Go pointer as a raw pointer),
//     so shapes, feeds and paddings would arrive as garbage;
//   - protocol-typed parameters (metal.PBuffer, PDevice, PCommandQueue,
//     PCommandBuffer): darwinkit wraps them in a Go-implemented adaptor
//     object (objc.WrapAsProtocol), which MPS cannot use as a real
//     MTLBuffer or MTLDevice;
//   - methods newer than darwinkit's SDK (macOS 13 and later: sort, bitwise
//     ops, reinterpret casts; macOS 15: MPSNDArray initWithBuffer:offset:
//     descriptor:).
//
// Arguments must be what objc.Call converts faithfully: objects (any
// objc.Handle), Go numbers of the C parameter's width, bool, []byte (as
// NSData), unsafe.Pointer, or nil.
func msg[T any](recv objc.Handle, sel string, args ...any) T {
	return objc.Call[T](recv, objc.Sel(sel), args...)
}

// withPool runs fn inside an autorelease pool, so that the autoreleased
// objects it makes (arrays, numbers, descriptors) are freed when it returns:
// the goroutines here are not threads with a run loop draining a pool. A
// panic in fn (darwinkit converts arguments by reflection, and a lowering
// bug can index out of range) is recovered inside the pool's callback and
// returned as an error: unwinding it through the Objective-C frame of the
// pool would leave the pool stack broken.
func withPool(fn func() error) (err error) {
	objc.WithAutoreleasePool(func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		err = fn()
	})
	return err
}

// nsInts is an NSArray of NSNumbers, for shapes and axes.
func nsInts(v []int) foundation.Array {
	nums := make([]foundation.Number, len(v))
	for i, x := range v {
		nums[i] = foundation.Number_NumberWithLongLong(int64(x))
	}
	return foundation.ArrayOf(nums)
}

// numbers is v as the []foundation.INumber darwinkit's array parameters
// take (those it converts correctly: slices of objects become NSArrays).
func numbers(v []int) []foundation.INumber {
	out := make([]foundation.INumber, len(v))
	for i, x := range v {
		out[i] = foundation.Number_NumberWithLongLong(int64(x))
	}
	return out
}

// missingMethods lists the MPSGraph methods the contract says macOS v has
// (and does not deprecate, since the lowering calls no deprecated method)
// and this one lacks: the table's releases checked against the running
// system, at Open.
func missingMethods(v gpu.Version) []string {
	var missing []string
	for _, op := range gpu.Ops() {
		if op.On(v) && !instancesRespond("MPSGraph", op.Method()) {
			missing = append(missing, op.Method())
		}
	}
	return missing
}

// errorText is an NSError's description, or a fallback when there is none.
func errorText(e foundation.Error, fallback string) string {
	if e.Ptr() == nil {
		return fallback
	}
	return e.LocalizedDescription()
}

//go:build darwin

package metal

import (
	"fmt"

	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/macos/mps"
	"github.com/progrium/darwinkit/macos/mpsgraph"
	"github.com/progrium/darwinkit/objc"
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

// features are the optional MPS and MPSGraph methods of the running macOS,
// found by asking the classes (respondsToSelector), which is exact where
// comparing OS versions would be a proxy.
type features struct {
	sort        bool // sortWithTensor / argSortWithTensor, macOS 13.0
	bitwise     bool // bitwiseAND/OR/XOR, shifts, macOS 13.0
	cumsum      bool // cumulativeSumWithTensor, macOS 13.0
	reinterpret bool // reinterpretCastTensor, macOS 13.2
	ndOffset    bool // MPSNDArray initWithBuffer:offset:descriptor:, macOS 15.0
}

func detectFeatures() features {
	g := mpsgraph.GraphClass
	has := func(sel string) bool { return g.RespondsToSelector(objc.Sel(sel)) }
	return features{
		sort:        has("sortWithTensor:axis:descending:name:") && has("argSortWithTensor:axis:descending:name:"),
		bitwise:     has("bitwiseANDWithPrimaryTensor:secondaryTensor:name:") && has("bitwiseRightShiftWithPrimaryTensor:secondaryTensor:name:"),
		cumsum:      has("cumulativeSumWithTensor:axis:name:"),
		reinterpret: has("reinterpretCastTensor:toType:name:"),
		ndOffset:    mps.NDArrayClass.RespondsToSelector(objc.Sel("initWithBuffer:offset:descriptor:")),
	}
}

// required are MPSGraph methods the lowerings call without a fallback,
// newer than the deployment target (macOS 12.0): they came with macOS
// 12.3, and on 12.0 to 12.2 an unrecognised selector would abort the
// process at the first program that uses one.
var required = []string{
	"gatherAlongAxis:withUpdatesTensor:indicesTensor:name:",
	"scatterNDWithDataTensor:updatesTensor:indicesTensor:batchDimensions:mode:name:",
	"maximumWithNaNPropagationWithPrimaryTensor:secondaryTensor:name:",
	"minimumWithNaNPropagationWithPrimaryTensor:secondaryTensor:name:",
}

// missingRequired lists the required methods this macOS lacks.
func missingRequired() []string {
	var missing []string
	for _, sel := range required {
		if !mpsgraph.GraphClass.RespondsToSelector(objc.Sel(sel)) {
			missing = append(missing, sel)
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

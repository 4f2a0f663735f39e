//go:build darwin

package metal

// #cgo CFLAGS: -x objective-c -fobjc-arc
// #cgo LDFLAGS: -framework Metal -framework Foundation -framework MetalPerformanceShaders
// #include <stdint.h>
// #include <stdlib.h>
// #include <string.h>
// #include <Metal/Metal.h>
// #include <MetalPerformanceShaders/MetalPerformanceShaders.h>
// #include <objc/message.h>
// #include <objc/runtime.h>
//
// // metalplugInstancesRespond reports whether instances of the class named
// // cls answer sel. In C, because a BOOL returned through darwinkit's
// // libffi call is stored as 8 bytes into a 1-byte Go object.
// static int metalplugInstancesRespond(const char *cls, const char *sel) {
// 	Class c = objc_getClass(cls);
// 	return c != nil && class_respondsToSelector(c, sel_registerName(sel));
// }
//
// // metalplugCompile compiles graph for device, feeds (a dictionary of
// // shaped types by placeholder) to targets, at optimisation level 0 where
// // the release has levels (level 1, the default, adds a placement pass
// // over the Neural Engine and the CPU and slower compiles), inside @try:
// // MPSGraph reports what it cannot compile with an exception. It writes,
// // for each feed and target of the executable in its own order, the
// // position of that tensor in feedList and targetList, and the number of
// // feeds in *nFeeds: MPSGraph may prune a placeholder nothing reads (a
// // parameter the program ignores), which is then not bound at all. It
// // returns the executable retained, or NULL and the reason (*err,
// // malloc'd).
// static void *metalplugCompile(void *graph, void *device, void *feedDict, void *feedList, void *targetList,
// 		int32_t *feedPos, int32_t *nFeeds, int32_t *targetPos, char **err) {
// 	@autoreleasepool {
// 		@try {
// 			MPSGraph *g = (__bridge MPSGraph *)graph;
// 			NSArray<MPSGraphTensor *> *feeds = (__bridge NSArray<MPSGraphTensor *> *)feedList;
// 			NSArray<MPSGraphTensor *> *targets = (__bridge NSArray<MPSGraphTensor *> *)targetList;
// 			MPSGraphCompilationDescriptor *desc = [MPSGraphCompilationDescriptor new];
// 			SEL level = sel_registerName("setOptimizationLevel:");
// 			if ([desc respondsToSelector:level]) {
// 				((void (*)(id, SEL, NSUInteger))objc_msgSend)(desc, level, 0);
// 			}
// 			MPSGraphExecutable *exe = [g compileWithDevice:(__bridge MPSGraphDevice *)device
// 				feeds:(__bridge MPSGraphTensorShapedTypeDictionary *)feedDict targetTensors:targets targetOperations:nil compilationDescriptor:desc];
// 			if (exe == nil) {
// 				*err = strdup("MPSGraph did not compile the graph");
// 				return NULL;
// 			}
// 			NSArray<MPSGraphTensor *> *ef = exe.feedTensors, *et = exe.targetTensors;
// 			if (ef.count > feeds.count || et.count != targets.count) {
// 				asprintf(err, "MPSGraph's executable has %lu feeds and %lu targets, want %lu and %lu",
// 					(unsigned long)ef.count, (unsigned long)et.count, (unsigned long)feeds.count, (unsigned long)targets.count);
// 				return NULL;
// 			}
// 			for (NSUInteger k = 0; k < ef.count; k++) {
// 				NSUInteger p = [feeds indexOfObjectIdenticalTo:ef[k]];
// 				if (p == NSNotFound) {
// 					*err = strdup("MPSGraph's executable feeds a tensor that is no input");
// 					return NULL;
// 				}
// 				feedPos[k] = (int32_t)p;
// 			}
// 			*nFeeds = (int32_t)ef.count;
// 			for (NSUInteger k = 0; k < et.count; k++) {
// 				NSUInteger p = [targets indexOfObjectIdenticalTo:et[k]];
// 				if (p == NSNotFound) {
// 					*err = strdup("MPSGraph's executable computes a tensor that is no target");
// 					return NULL;
// 				}
// 				targetPos[k] = (int32_t)p;
// 			}
// 			return (__bridge_retained void *)exe;
// 		} @catch (NSException *e) {
// 			asprintf(err, "Objective-C exception %s: %s", e.name.UTF8String ? e.name.UTF8String : "?",
// 				e.reason.UTF8String ? e.reason.UTF8String : "no reason given");
// 			return NULL;
// 		}
// 	}
// }
//
// // darwinkit v0.5.0 has no binding for MTLCreateSystemDefaultDevice, a C
// // function rather than a method. The returned device is retained for the
// // caller (a Create function), which keeps it for the process's life.
// static void *metalplugCreateSystemDefaultDevice(void) {
// 	return (__bridge_retained void *)MTLCreateSystemDefaultDevice();
// }
import "C"

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/macos/mps"
	"github.com/progrium/darwinkit/macos/mpsgraph"
	"github.com/progrium/darwinkit/objc"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
)

// The darwin adapter: gpu's interfaces over the system Metal device,
// MPSGraph and MPS, each call one darwinkit (or objc) send. Every method
// runs inside its own autorelease pool (withPool), since the goroutines
// calling it are not threads with a run loop; objects kept across calls are
// retained.

// device is the system Metal device.
type device struct {
	mtl   metal.DeviceObject
	gdev  mpsgraph.Device
	name  string
	macOS gpu.Version
}

// Open makes a driver on the system's default Metal device. It declines a
// macOS older than MinimumMacOS, and one whose MPSGraph lacks a method the
// contract says its release has (naming the methods), since a missing
// selector would abort the process at the first program that sends it.
func Open(opts Options) (*Driver, error) {
	p := C.metalplugCreateSystemDefaultDevice()
	if p == nil {
		return nil, ErrNoDevice
	}
	dev := &device{mtl: metal.DeviceObject{Object: objc.ObjectFrom(unsafe.Pointer(p))}}
	err := withPool(func() error {
		dev.name = dev.mtl.Name()
		// darwinkit's DeviceWithMTLDevice would pass a Go adaptor, not the
		// device (see msg).
		dev.gdev = msg[mpsgraph.Device](mpsgraph.DeviceClass, "deviceWithMTLDevice:", dev.mtl)
		dev.gdev.Retain()
		v := foundation.ProcessInfo_ProcessInfo().OperatingSystemVersion()
		dev.macOS = gpu.Version{Major: int(v.MajorVersion), Minor: int(v.MinorVersion)}
		if !dev.macOS.AtLeast(MinimumMacOS) {
			return fmt.Errorf("%v is too old: metalplug needs %v or later", dev.macOS, MinimumMacOS)
		}
		if m := missingMethods(dev.macOS); len(m) > 0 {
			return fmt.Errorf("MPSGraph on %v lacks %s, which that release should have: please report it", dev.macOS, strings.Join(m, ", "))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("metal: open: %w", err)
	}
	return newDriver(dev, "metal", opts)
}

func (d *device) Name() string       { return d.name }
func (d *device) MacOS() gpu.Version { return d.macOS }

func (d *device) WorkingSet() int64 {
	var n int64
	withPool(func() error { n = int64(d.mtl.RecommendedMaxWorkingSetSize()); return nil })
	return n
}

func (d *device) AllocatedBytes() int64 {
	var n int64
	withPool(func() error { n = int64(d.mtl.CurrentAllocatedSize()); return nil })
	return n
}

// buffer is a retained shared-storage MTLBuffer and the bytes it is.
type buffer struct {
	obj metal.BufferObject
	mem []byte
}

func (b *buffer) Bytes() []byte { return b.mem }
func (b *buffer) Release()      { withPool(func() error { b.obj.Release(); return nil }) }

// NewBuffer wraps mem with newBufferWithBytesNoCopy: on Apple silicon the GPU
// reads and writes the very pages the frontend's pointers address. Metal
// requires the pointer and length of a no-copy buffer to be page-aligned,
// which the driver's anonymous mappings of whole pages are. The deallocator
// block is nil: the driver unmaps the pages itself, after releasing the
// buffer (darwinkit's binding turns a Go func into a block and cannot pass
// nil, so the message is sent directly).
func (d *device) NewBuffer(mem []byte) (gpu.Buffer, error) {
	var obj metal.BufferObject
	withPool(func() error {
		obj = msg[metal.BufferObject](d.mtl, "newBufferWithBytesNoCopy:length:options:deallocator:",
			unsafe.Pointer(&mem[0]), uint(len(mem)), metal.ResourceStorageModeShared, unsafe.Pointer(nil))
		return nil
	})
	if obj.Ptr() == nil {
		return nil, fmt.Errorf("the device refused a %d-byte no-copy buffer", len(mem))
	}
	return &buffer{obj: obj, mem: mem}, nil
}

// NewScratch is a temporary shared buffer for data that does not live in an
// allocation: host-memory tensors, and (before macOS 15) tensors at an
// offset inside one.
func (d *device) NewScratch(n int) (gpu.Buffer, error) {
	var obj metal.BufferObject
	withPool(func() error {
		obj = msg[metal.BufferObject](d.mtl, "newBufferWithLength:options:", uint(max(n, 1)), metal.ResourceStorageModeShared)
		return nil
	})
	if obj.Ptr() == nil {
		return nil, fmt.Errorf("cannot allocate a %d-byte scratch buffer", n)
	}
	return &buffer{obj: obj, mem: unsafe.Slice((*byte)(obj.Contents()), max(n, 1))[:n]}, nil
}

// dataType is the MPSDataType of a gpu type.
func dataType(t gpu.DataType) mps.DataType {
	switch t {
	case gpu.Float32:
		return mps.DataTypeFloat32
	case gpu.Float16:
		return mps.DataTypeFloat16
	case gpu.Int8:
		return mps.DataTypeInt8
	case gpu.Int16:
		return mps.DataTypeInt16
	case gpu.Int32:
		return mps.DataTypeInt32
	case gpu.Int64:
		return mps.DataTypeInt64
	case gpu.UInt8:
		return mps.DataTypeUInt8
	case gpu.UInt16:
		return mps.DataTypeUInt16
	case gpu.UInt32:
		return mps.DataTypeUInt32
	case gpu.UInt64:
		return mps.DataTypeUInt64
	case gpu.Bool:
		return mps.DataTypeBool
	}
	return mps.DataTypeInvalid
}

// queue is a retained MTLCommandQueue.
type queue struct{ obj metal.CommandQueueObject }

func (d *device) NewQueue() (gpu.Queue, error) {
	var q metal.CommandQueueObject
	withPool(func() error { q = d.mtl.NewCommandQueue(); return nil })
	if q.Ptr() == nil {
		return nil, fmt.Errorf("the device refused a new command queue")
	}
	return &queue{obj: q}, nil
}

func (q *queue) Release() { withPool(func() error { q.obj.Release(); return nil }) }

// NewCommandBuffer starts a command buffer of q (submit_darwin.go): nothing
// reaches Metal before it is committed.
func (q *queue) NewCommandBuffer() (gpu.CommandBuffer, error) { return &commandBuffer{q: q}, nil }

// graph is one MPSGraph being built: the tensor of every node, by ID.
type graph struct {
	dev     *device
	g       mpsgraph.Graph
	tensors []mpsgraph.Tensor
	err     error // the first node Add could not send
}

func (d *device) NewGraph() gpu.Backend {
	var g mpsgraph.Graph
	withPool(func() error { g = mpsgraph.NewGraph(); g.Retain(); return nil })
	return &graph{dev: d, g: g}
}

func (b *graph) Release() { withPool(func() error { b.g.Release(); return nil }) }

func (b *graph) t(x gpu.Tensor) mpsgraph.Tensor { return b.tensors[x.ID-1] }

// Add sends the node's method. Graph has checked it against the contract,
// so every argument here is one MPSGraph accepts.
// Add sends n. A node MPSGraph refused (a panic in darwinkit's reflection,
// recovered by withPool) still takes its place, as a nil tensor, so that
// later nodes bind to the right ones, and its error fails Compile.
func (b *graph) Add(n *gpu.Node) {
	var t mpsgraph.Tensor
	err := withPool(func() error {
		t = b.send(n)
		return nil
	})
	if err != nil && b.err == nil {
		b.err = fmt.Errorf("node %d (%v): %w", len(b.tensors)+1, n.Op, err)
	}
	b.tensors = append(b.tensors, t)
}

func (b *graph) send(n *gpu.Node) mpsgraph.Tensor {
	g := b.g
	var x, y mpsgraph.Tensor
	if len(n.Args) > 0 {
		x = b.t(n.Args[0])
	}
	if len(n.Args) > 1 {
		y = b.t(n.Args[1])
	}
	dt := dataType(n.Out.DType)
	switch n.Op {
	case gpu.OpPlaceholder:
		return msg[mpsgraph.Tensor](g, "placeholderWithShape:dataType:name:", nsInts(n.Shape), dt, nil)
	case gpu.OpConstant:
		return msg[mpsgraph.Tensor](g, "constantWithData:shape:dataType:", n.Data, nsInts(n.Shape), dt)
	case gpu.OpFill:
		return msg[mpsgraph.Tensor](g, "constantWithScalar:shape:dataType:", n.Value, nsInts(n.Shape), dt)
	case gpu.OpScalar:
		// constantWithScalar:dataType: is likely rank 0, where the Go side
		// records [1]: asking for shape [1] leaves no doubt.
		return msg[mpsgraph.Tensor](g, "constantWithScalar:shape:dataType:", n.Value, nsInts([]int{1}), dt)
	case gpu.OpCast:
		// The 12.3 header declares the name nonnull, unlike the other ops'.
		return msg[mpsgraph.Tensor](g, n.Op.Method(), x, dataType(n.To), foundation.String_StringWithString("cast"))
	case gpu.OpReinterpretCast:
		return msg[mpsgraph.Tensor](g, n.Op.Method(), x, dataType(n.To), nil)
	case gpu.OpReshape, gpu.OpBroadcast:
		return msg[mpsgraph.Tensor](g, n.Op.Method(), x, nsInts(n.Shape), nil)
	case gpu.OpTranspose:
		return g.TransposeTensorDimensionWithDimensionName(x, uint(n.Axis), uint(n.Axis2), "")
	case gpu.OpSlice:
		return g.SliceTensorStartsEndsStridesName(x, numbers(n.Starts), numbers(n.Ends), numbers(n.Strides), "")
	case gpu.OpConcat:
		its := make([]mpsgraph.ITensor, len(n.Args))
		for i, a := range n.Args {
			its[i] = b.t(a)
		}
		return g.ConcatTensorsDimensionName(its, n.Axis, "")
	case gpu.OpPad:
		return msg[mpsgraph.Tensor](g, n.Op.Method(), x, mpsgraph.PaddingModeConstant, nsInts(n.Starts), nsInts(n.Ends), n.Value, nil)
	case gpu.OpReverse:
		return g.ReverseTensorAxesName(x, numbers(n.Axes), "")
	case gpu.OpReductionSum, gpu.OpReductionProduct, gpu.OpReductionMaximum, gpu.OpReductionMinimum,
		gpu.OpReductionMaximumNaN, gpu.OpReductionMinimumNaN:
		return msg[mpsgraph.Tensor](g, n.Op.Method(), x, nsInts(n.Axes), nil)
	case gpu.OpArgSort:
		return msg[mpsgraph.Tensor](g, n.Op.Method(), x, n.Axis, false, nil)
	case gpu.OpCumulativeSum:
		return msg[mpsgraph.Tensor](g, n.Op.Method(), x, n.Axis, nil)
	case gpu.OpGather:
		return g.GatherWithUpdatesTensorIndicesTensorAxisBatchDimensionsName(x, y, uint(n.Axis), 0, "")
	case gpu.OpGatherAlongAxis:
		return g.GatherAlongAxisWithUpdatesTensorIndicesTensorName(n.Axis, x, y, "")
	case gpu.OpScatterND:
		return g.ScatterNDWithDataTensorUpdatesTensorIndicesTensorBatchDimensionsModeName(x, y, b.t(n.Args[2]), 0, scatterMode(n.Mode), "")
	case gpu.OpSelect:
		return g.SelectWithPredicateTensorTruePredicateTensorFalsePredicateTensorName(x, y, b.t(n.Args[2]), "")
	case gpu.OpConvolution2D:
		desc := mpsgraph.Convolution2DOpDescriptorClass.New()
		desc.SetStrideInY(uint(n.Conv.StrideY))
		desc.SetStrideInX(uint(n.Conv.StrideX))
		desc.SetDilationRateInY(uint(n.Conv.DilationY))
		desc.SetDilationRateInX(uint(n.Conv.DilationX))
		desc.SetGroups(uint(n.Conv.Groups))
		desc.SetPaddingStyle(mpsgraph.PaddingStyleExplicit)
		desc.SetExplicitPaddingWithPaddingLeftPaddingRightPaddingTopPaddingBottom(0, 0, 0, 0)
		desc.SetDataLayout(mpsgraph.TensorNamedDataLayoutNHWC)
		desc.SetWeightsLayout(mpsgraph.TensorNamedDataLayoutHWIO)
		return g.Convolution2DWithSourceTensorWeightsTensorDescriptorName(x, y, desc, "")
	}
	// The elementwise ops and matrix multiplication: name: is the last
	// argument of each selector.
	switch len(n.Args) {
	case 1:
		return msg[mpsgraph.Tensor](g, n.Op.Method(), x, nil)
	case 2:
		return msg[mpsgraph.Tensor](g, n.Op.Method(), x, y, nil)
	}
	panic(fmt.Sprintf("metal: no send for %v", n))
}

func scatterMode(m gpu.ScatterMode) mpsgraph.ScatterMode {
	switch m {
	case gpu.ScatterAdd:
		return mpsgraph.ScatterModeAdd
	case gpu.ScatterMul:
		return mpsgraph.ScatterModeMul
	case gpu.ScatterMax:
		return mpsgraph.ScatterModeMax
	case gpu.ScatterMin:
		return mpsgraph.ScatterModeMin
	}
	return mpsgraph.ScatterModeSet
}

// compiled is an MPSGraphExecutable and, for each of its feeds and targets
// (in the order it chose), the position of that tensor in the order the
// driver compiled with; inputs is how many feeds the driver compiled with
// (MPSGraph may have pruned some: those are not bound).
type compiled struct {
	exe       mpsgraph.Executable
	inputs    int
	feedPos   []int
	targetPos []int
}

func (e *compiled) Release() { withPool(func() error { e.exe.Release(); return nil }) }

func (b *graph) Compile(feeds, targets []gpu.Tensor) (gpu.Executable, error) {
	if b.err != nil {
		return nil, b.err
	}
	var out *compiled
	err := withPool(func() error {
		dict := foundation.NewMutableDictionaryWithCapacity(uint(len(feeds)))
		for _, f := range feeds {
			st := msg[mpsgraph.ShapedType](mpsgraph.ShapedTypeClass.Alloc(), "initWithShape:dataType:", nsInts(f.Shape), dataType(f.DType))
			dict.SetObjectForKeyObject(st, b.t(f))
			st.Release() // the dictionary holds it
		}
		ts := make([]mpsgraph.Tensor, len(targets))
		for i, t := range targets {
			ts[i] = b.t(t)
		}
		fs := make([]mpsgraph.Tensor, len(feeds))
		for i, f := range feeds {
			fs[i] = b.t(f)
		}
		feedPos := make([]C.int32_t, len(feeds)+1)
		targetPos := make([]C.int32_t, len(targets)+1)
		var why *C.char
		var nFeeds C.int32_t
		p := C.metalplugCompile(b.g.Ptr(), b.dev.gdev.Ptr(), dict.Ptr(), foundation.ArrayOf(fs).Ptr(), foundation.ArrayOf(ts).Ptr(),
			&feedPos[0], &nFeeds, &targetPos[0], &why)
		if p == nil {
			if err := errorFromC(why); err != nil {
				return err
			}
			return fmt.Errorf("MPSGraph did not compile the graph")
		}
		out = &compiled{exe: mpsgraph.ExecutableFrom(p), inputs: len(feeds)} // retained by metalplugCompile
		for _, k := range feedPos[:nFeeds] {
			out.feedPos = append(out.feedPos, int(k))
		}
		for _, k := range targetPos[:len(targets)] {
			out.targetPos = append(out.targetPos, int(k))
		}
		return nil
	})
	if err != nil && out != nil {
		out.Release()
		out = nil
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// instancesRespond reports whether instances of the class named cls answer
// sel (metalplugInstancesRespond).
func instancesRespond(cls, sel string) bool {
	c, s := C.CString(cls), C.CString(sel)
	defer C.free(unsafe.Pointer(c))
	defer C.free(unsafe.Pointer(s))
	return C.metalplugInstancesRespond(c, s) != 0
}

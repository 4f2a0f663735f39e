//go:build darwin

package metal

// #include <stdint.h>
// #include <stdio.h>
// #include <stdlib.h>
// #include <string.h>
// #include <Metal/Metal.h>
// #include <MetalPerformanceShaders/MetalPerformanceShaders.h>
//
// // The hot path of every dispatch: one C call binds the tensors, encodes
// // the command buffer, commits it and (synchronously) waits for it, inside
// // its own autorelease pool and @try, with no reflection and no call back
// // into Go but the completion of an asynchronous commit.
//
// #define METALPLUG_MAX_RANK 16
// #define METALPLUG_ENCODE 0
// #define METALPLUG_COPY 1
//
// // metalplugData binds one tensor: a buffer, an offset into it (an
// // MPSNDArray at that offset, macOS 15, when not 0), a type and a shape.
// typedef struct {
// 	void *buffer;   // id<MTLBuffer>
// 	uint64_t offset;
// 	uint32_t dtype; // MPSDataType
// 	int32_t rank;
// 	int32_t packed; // preferPackedRows, for an MPSNDArray
// 	int64_t shape[METALPLUG_MAX_RANK];
// } metalplugData;
//
// // metalplugCommand is one thing a command buffer does: a run of an
// // executable (its data entries are the feeds, then the targets, in the
// // executable's own order, from first) or a blit.
// typedef struct {
// 	int32_t kind;
// 	int32_t nIn, nOut, first;
// 	void *exe; // MPSGraphExecutable
// 	void *src, *dst; // id<MTLBuffer>
// 	uint64_t srcOffset, dstOffset, size;
// } metalplugCommand;
//
// void metalplugCommandBufferDone(uintptr_t handle, char *message, double start, double end);
//
// // metalplugBufferResult reads a completed MPSCommandBuffer's outcome: its
// // error text (malloc'd, for Go to free) or NULL, and the GPU's start (of
// // the root buffer) and end, in seconds since the epoch (0 when the device
// // gave none).
// //
// // MPSGraph may commitAndContinue while encoding (its headers say so): the
// // root command buffer is then committed early and encoding goes on in a
// // new one, which completes after the others (one queue runs its buffers
// // in order); the root's error is read too. A failure in a buffer between
// // the two, if MPSGraph ever committed twice, would not be seen: no public
// // hook reaches those.
// static char *metalplugBufferResult(id<MTLCommandBuffer> root, id<MTLCommandBuffer> last, double *start, double *end) {
// 	NSError *err = nil;
// 	BOOL failed = NO;
// 	if (root.status == MTLCommandBufferStatusError) { failed = YES; err = root.error; }
// 	if (!failed && last.status == MTLCommandBufferStatusError) { failed = YES; err = last.error; }
// 	char *message = NULL;
// 	if (failed) {
// 		const char *text = err ? err.localizedDescription.UTF8String : "no error description";
// 		// Memory the GPU had not is marked for Go (outOfMemoryMark in
// 		// done_darwin.go), which reports it as exhausted, not as a fault.
// 		BOOL oom = err && [err.domain isEqualToString:MTLCommandBufferErrorDomain] && err.code == MTLCommandBufferErrorOutOfMemory;
// 		asprintf(&message, "%s%s", oom ? "out of memory: " : "", text ? text : "no error description");
// 	}
// 	// The host clock GPUStartTime uses (mach time, as systemUptime),
// 	// turned into seconds since the epoch.
// 	double s = root.GPUStartTime, e = last.GPUEndTime;
// 	if (s > 0 && e >= s) {
// 		double since = NSDate.date.timeIntervalSince1970 - NSProcessInfo.processInfo.systemUptime;
// 		*start = s + since;
// 		*end = e + since;
// 	} else {
// 		*start = *end = 0;
// 	}
// 	return message;
// }
//
// // The macOS 15 methods, declared here so that an older SDK builds the
// // library too (a category without an implementation: the runtime finds
// // the methods where the system has them, and they are asked for first).
// @interface MPSNDArray (metalplugMacOS15)
// - (instancetype)initWithBuffer:(id<MTLBuffer>)buffer offset:(NSUInteger)offset descriptor:(MPSNDArrayDescriptor *)descriptor;
// @end
// @interface MPSNDArrayDescriptor (metalplugMacOS15)
// - (void)setPreferPackedRows:(BOOL)preferPackedRows;
// @end
//
// // metalplugTensorData binds d, or says why it cannot (*why, malloc'd).
// static MPSGraphTensorData *metalplugTensorData(const metalplugData *d, char **why) {
// 	id<MTLBuffer> buf = (__bridge id<MTLBuffer>)d->buffer;
// 	NSMutableArray<NSNumber *> *shape = [NSMutableArray arrayWithCapacity:(NSUInteger)d->rank];
// 	for (int32_t i = 0; i < d->rank; i++) {
// 		[shape addObject:[NSNumber numberWithLongLong:d->shape[i]]];
// 	}
// 	if (d->offset == 0) {
// 		return [[MPSGraphTensorData alloc] initWithMTLBuffer:buf shape:shape dataType:(MPSDataType)d->dtype];
// 	}
// 	MPSNDArrayDescriptor *desc = [MPSNDArrayDescriptor descriptorWithDataType:(MPSDataType)d->dtype shape:shape];
// 	if (d->packed) {
// 		if (![desc respondsToSelector:@selector(setPreferPackedRows:)]) {
// 			*why = strdup("MPSNDArrayDescriptor has no preferPackedRows on this macOS");
// 			return nil;
// 		}
// 		[desc setPreferPackedRows:YES];
// 	}
// 	if (![MPSNDArray instancesRespondToSelector:@selector(initWithBuffer:offset:descriptor:)]) {
// 		*why = strdup("MPSNDArray has no initWithBuffer:offset:descriptor: on this macOS");
// 		return nil;
// 	}
// 	MPSNDArray *nd = [[MPSNDArray alloc] initWithBuffer:buf offset:(NSUInteger)d->offset descriptor:desc];
// 	if (nd == nil) {
// 		asprintf(why, "MPSNDArray refused offset %llu into a %lu-byte buffer", (unsigned long long)d->offset, (unsigned long)buf.length);
// 		return nil;
// 	}
// 	return [[MPSGraphTensorData alloc] initWithMPSNDArray:nd];
// }
//
// // metalplugSubmit makes a command buffer on queue, does cmds in it and
// // commits it. With wait it then waits for it on this thread and returns
// // its outcome; otherwise the completion reports to Go through
// // metalplugCommandBufferDone(handle, ...). *committed says whether it was
// // committed (an error before that means no completion will come). The
// // tensor data stay alive until the buffer completes: the block holds them.
// static char *metalplugSubmit(void *queue, const metalplugCommand *cmds, int n, const metalplugData *data,
// 		int wait, uintptr_t handle, double *start, double *end, int *committed) {
// 	*committed = 0;
// 	*start = *end = 0;
// 	@autoreleasepool {
// 		@try {
// 			MPSCommandBuffer *cb = [MPSCommandBuffer commandBufferFromCommandQueue:(__bridge id<MTLCommandQueue>)queue];
// 			if (cb == nil) {
// 				return strdup("the command queue refused a command buffer");
// 			}
// 			NSMutableArray *keep = [NSMutableArray array];
// 			for (int i = 0; i < n; i++) {
// 				const metalplugCommand *c = &cmds[i];
// 				if (c->kind == METALPLUG_COPY) {
// 					id<MTLBlitCommandEncoder> blit = [cb blitCommandEncoder];
// 					[blit copyFromBuffer:(__bridge id<MTLBuffer>)c->src sourceOffset:(NSUInteger)c->srcOffset
// 						toBuffer:(__bridge id<MTLBuffer>)c->dst destinationOffset:(NSUInteger)c->dstOffset size:(NSUInteger)c->size];
// 					[blit endEncoding];
// 					continue;
// 				}
// 				NSMutableArray<MPSGraphTensorData *> *ins = [NSMutableArray arrayWithCapacity:(NSUInteger)c->nIn];
// 				NSMutableArray<MPSGraphTensorData *> *outs = [NSMutableArray arrayWithCapacity:(NSUInteger)c->nOut];
// 				for (int32_t k = 0; k < c->nIn + c->nOut; k++) {
// 					char *why = NULL;
// 					MPSGraphTensorData *td = metalplugTensorData(&data[c->first + k], &why);
// 					if (td == nil) {
// 						char *message = NULL;
// 						asprintf(&message, "%s %d: %s", k < c->nIn ? "feed" : "target", k < c->nIn ? k : k - c->nIn, why ? why : "MPSGraph refused the tensor data");
// 						free(why);
// 						return message;
// 					}
// 					[(k < c->nIn ? ins : outs) addObject:td];
// 					[keep addObject:td];
// 				}
// 				[(__bridge MPSGraphExecutable *)c->exe encodeToCommandBuffer:cb inputsArray:ins resultsArray:outs executionDescriptor:nil];
// 			}
// 			id<MTLCommandBuffer> root = cb.rootCommandBuffer;
// 			if (wait) {
// 				[cb commit];
// 				*committed = 1;
// 				[cb waitUntilCompleted];
// 				return metalplugBufferResult(root, cb.commandBuffer, start, end);
// 			}
// 			[cb addCompletedHandler:^(id<MTLCommandBuffer> last) {
// 				(void)keep;
// 				double s = 0, e = 0;
// 				char *message = metalplugBufferResult(root, last, &s, &e);
// 				metalplugCommandBufferDone(handle, message, s, e);
// 			}];
// 			[cb commit];
// 			*committed = 1;
// 			return NULL;
// 		} @catch (NSException *e) {
// 			char *message = NULL;
// 			asprintf(&message, "Objective-C exception %s: %s", e.name.UTF8String ? e.name.UTF8String : "?",
// 				e.reason.UTF8String ? e.reason.UTF8String : "no reason given");
// 			return message;
// 		}
// 	}
// }
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/cgo"
	"time"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
)

// commandBuffer records what a command buffer will do, as plain C structs;
// Commit and CommitAndWait hand it all to Metal in one call
// (metalplugSubmit), so that a dispatch costs one cgo call and no
// darwinkit reflection.
type commandBuffer struct {
	q          *queue
	cmds       []C.metalplugCommand
	data       []C.metalplugData
	committed  bool
	start, end time.Time // the GPU's, set before done runs
}

// Times implements gpu.Timed with the command buffers' GPUStartTime and
// GPUEndTime.
func (c *commandBuffer) Times() (start, end time.Time, ok bool) {
	return c.start, c.end, !c.start.IsZero()
}

// maxNDArrayElements is MPSNDArray's limit: fewer than 2^31 elements.
const maxNDArrayElements = 1<<31 - 1

// cData binds data for C, refusing what MPSGraph would abort on.
func cData(data gpu.Data) (C.metalplugData, error) {
	var d C.metalplugData
	b, ok := data.Buffer.(*buffer)
	if !ok {
		return d, fmt.Errorf("buffer %T was not made by the Metal device", data.Buffer)
	}
	if len(data.Shape) > C.METALPLUG_MAX_RANK {
		return d, fmt.Errorf("%d dimensions: MPSGraph's tensor data take at most %d", len(data.Shape), C.METALPLUG_MAX_RANK)
	}
	n := 1
	for _, x := range data.Shape {
		n *= x
	}
	if data.Offset > 0 && n > maxNDArrayElements {
		return d, fmt.Errorf("%d elements at an offset: an MPSNDArray holds fewer than 2^31", n)
	}
	d.buffer = b.obj.Ptr()
	d.offset = C.uint64_t(data.Offset)
	d.dtype = C.uint32_t(dataType(data.DType))
	d.rank = C.int32_t(len(data.Shape))
	if data.PackedRows {
		d.packed = 1
	}
	for i, x := range data.Shape {
		d.shape[i] = C.int64_t(x)
	}
	return d, nil
}

func (c *commandBuffer) Encode(exe gpu.Executable, inputs, outputs []gpu.Data) error {
	e, ok := exe.(*compiled)
	if !ok {
		return fmt.Errorf("executable %T was not compiled by the Metal device", exe)
	}
	if c.committed {
		return fmt.Errorf("encode after commit")
	}
	if len(inputs) != e.inputs || len(outputs) != len(e.targetPos) {
		return fmt.Errorf("%d inputs and %d outputs for an executable of %d and %d", len(inputs), len(outputs), e.inputs, len(e.targetPos))
	}
	first := len(c.data)
	for _, pos := range e.feedPos {
		d, err := cData(inputs[pos])
		if err != nil {
			c.data = c.data[:first]
			return fmt.Errorf("input %d: %w", pos, err)
		}
		c.data = append(c.data, d)
	}
	for _, pos := range e.targetPos {
		d, err := cData(outputs[pos])
		if err != nil {
			c.data = c.data[:first]
			return fmt.Errorf("output %d: %w", pos, err)
		}
		c.data = append(c.data, d)
	}
	c.cmds = append(c.cmds, C.metalplugCommand{
		kind: C.METALPLUG_ENCODE, exe: e.exe.Ptr(),
		nIn: C.int32_t(len(e.feedPos)), nOut: C.int32_t(len(e.targetPos)), first: C.int32_t(first),
	})
	return nil
}

func (c *commandBuffer) Copy(src gpu.Buffer, srcOffset int, dst gpu.Buffer, dstOffset, n int) error {
	s, ok1 := src.(*buffer)
	d, ok2 := dst.(*buffer)
	if !ok1 || !ok2 {
		return fmt.Errorf("buffers %T and %T were not made by the Metal device", src, dst)
	}
	if c.committed {
		return fmt.Errorf("copy after commit")
	}
	c.cmds = append(c.cmds, C.metalplugCommand{
		kind: C.METALPLUG_COPY, src: s.obj.Ptr(), dst: d.obj.Ptr(),
		srcOffset: C.uint64_t(srcOffset), dstOffset: C.uint64_t(dstOffset), size: C.uint64_t(n),
	})
	return nil
}

// Commit submits the buffer; done runs from Metal's completion thread,
// through metalplugCommandBufferDone, or from a goroutine of its own when
// the buffer could not be committed.
func (c *commandBuffer) Commit(done func(error)) {
	if done == nil {
		done = func(error) {}
	}
	if c.committed {
		go done(errors.New("commit: the command buffer was already committed"))
		return
	}
	c.committed = true
	h := cgo.NewHandle(func(err error, start, end time.Time) {
		c.start, c.end = start, end
		done(err)
	})
	if committed, err := c.submit(false, h); !committed {
		h.Delete()
		go done(err)
	}
}

// CommitAndWait submits the buffer and waits for it, in the same call.
func (c *commandBuffer) CommitAndWait() error {
	if c.committed {
		return errors.New("commit: the command buffer was already committed")
	}
	c.committed = true
	_, err := c.submit(true, 0)
	return err
}

// submit is the one call into Objective-C per command buffer.
func (c *commandBuffer) submit(wait bool, h cgo.Handle) (committed bool, err error) {
	var cmds *C.metalplugCommand
	var data *C.metalplugData
	if len(c.cmds) > 0 {
		cmds = &c.cmds[0]
	}
	if len(c.data) > 0 {
		data = &c.data[0]
	}
	var start, end C.double
	var ok C.int
	var w C.int
	if wait {
		w = 1
	}
	message := C.metalplugSubmit(c.q.obj.Ptr(), cmds, C.int(len(c.cmds)), data, w, C.uintptr_t(h), &start, &end, &ok)
	runtime.KeepAlive(c)
	if wait {
		c.start, c.end = gpuTimes(float64(start), float64(end))
	}
	return ok != 0, commandBufferError(message)
}

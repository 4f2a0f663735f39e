package tf

// #include "profiler.h"
import "C"

import (
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"google.golang.org/protobuf/proto"

	"github.com/metalplug/metalplug/backend/driver"
	pb "github.com/metalplug/metalplug/plugin/tfproto"
)

// TF_InitProfiler registers the plugin's profiler for its device type:
// during tf.profiler.experimental.start/stop (and Keras' TensorBoard
// profile_batch) the driver records every kernel its streams run, by
// TensorFlow's op name and type, and every copy, with the times the work
// ran on the stream (driver.Timed), and the trace becomes a plane of
// TensorFlow's XSpace. As with TF_InitGraph, TensorFlow would abort on a
// non-OK status here, so a failure only leaves the profiler empty.
//
//export TF_InitProfiler
func TF_InitProfiler(params *C.TF_ProfilerRegistrationParams, st *C.TF_Status) {
	defer C.metalplug_fill_profiler(params, C.metalplug_device_type)
	defer boundary("TF_InitProfiler", failure{sink: func(err error) { logf("%v: the profiler records nothing", err) }})
	hook("TF_InitProfiler")
}

//export goProfilerStart
func goProfilerStart(st *C.TF_Status) {
	export("goProfilerStart", failure{st: st}, func() error { driver.StartTrace(); return nil })
}

//export goProfilerStop
func goProfilerStop(st *C.TF_Status) {
	export("goProfilerStop", failure{st: st}, func() error { driver.StopTrace(); return nil })
}

// collected is the serialized XSpace between TensorFlow's two calls of
// collect_data_xspace: the first asks for the size, the second for the
// bytes, and what the trace holds must not change in between.
var collected struct {
	sync.Mutex
	b []byte
}

// goProfilerCollect: with a nil buffer, serializes the trace taken so far
// and says its size; with a buffer, copies what the first call serialized
// (at most *size bytes) and forgets it.
//
//export goProfilerCollect
func goProfilerCollect(buf *C.uint8_t, size *C.size_t, st *C.TF_Status) {
	export("goProfilerCollect", failure{st: st}, func() error { return profilerCollect(buf, size) })
}

func profilerCollect(buf *C.uint8_t, size *C.size_t) error {
	collected.Lock()
	defer collected.Unlock()
	if buf == nil {
		b, err := proto.Marshal(traceSpace(DeviceType(), driver.TakeTrace()))
		if err != nil {
			*size = 0
			return fmt.Errorf("profiler: %w", err)
		}
		collected.b = b
		*size = C.size_t(len(b))
		return nil
	}
	n := copy(unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(*size)), collected.b)
	*size = C.size_t(n)
	collected.b = nil
	return nil
}

// traceSpace is the trace as one XPlane of TensorFlow's XSpace, named for
// the device as TensorFlow names device planes ("/device:GPU:0"): a line per
// stream, an event per piece of work, each event's metadata named by what
// ran ("dense/MatMul:MatMul", "MemcpyHostToDevice"), times in the line's
// picoseconds from its first event.
func traceSpace(deviceType string, events []driver.TraceEvent) *pb.XSpace {
	plane := &pb.XPlane{
		Id:            1,
		Name:          "/device:" + deviceType + ":0",
		EventMetadata: map[int64]*pb.XEventMetadata{},
	}
	ids := map[string]int64{}
	lines := map[uint64]*pb.XLine{}
	slices.SortStableFunc(events, func(a, b driver.TraceEvent) int { return a.Start.Compare(b.Start) })
	for _, e := range events {
		name := e.Name
		if name == "" {
			name = "program" // run without a name: not a TensorFlow kernel
		}
		id, ok := ids[name]
		if !ok {
			id = int64(len(ids) + 1)
			ids[name] = id
			plane.EventMetadata[id] = &pb.XEventMetadata{Id: id, Name: name, DisplayName: name}
		}
		l := lines[e.Stream]
		if l == nil {
			l = &pb.XLine{Id: int64(e.Stream), DisplayId: int64(e.Stream), Name: fmt.Sprintf("Stream #%d", e.Stream),
				DisplayName: fmt.Sprintf("Stream #%d", e.Stream), TimestampNs: e.Start.UnixNano()}
			lines[e.Stream] = l
			plane.Lines = append(plane.Lines, l)
		}
		l.Events = append(l.Events, &pb.XEvent{
			MetadataId: id,
			Data:       &pb.XEvent_OffsetPs{OffsetPs: (e.Start.UnixNano() - l.TimestampNs) * 1000},
			DurationPs: max(e.End.Sub(e.Start).Nanoseconds(), 1) * 1000,
		})
	}
	return &pb.XSpace{Planes: []*pb.XPlane{plane}}
}

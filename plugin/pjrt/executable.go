package pjrt

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/status"
)

// loadedExecutable is a program loaded on a client's device: what
// PJRT_Client_Compile returns and PJRT_LoadedExecutable_Execute runs.
type loadedExecutable struct {
	client  *client
	c       *C.PJRT_LoadedExecutable
	prog    *program
	deleted atomic.Bool

	arena      arena
	logicalIDs *C.PJRT_LogicalDeviceIds // {replica 0, partition 0}
}

func newLoadedExecutable(c *client, pr *program) *loadedExecutable {
	le := &loadedExecutable{client: c, prog: pr.acquire()}
	le.logicalIDs = (*C.PJRT_LogicalDeviceIds)(le.arena.alloc(C.sizeof_PJRT_LogicalDeviceIds))
	le.c = (*C.PJRT_LoadedExecutable)(le.arena.alloc(C.sizeof_PJRT_LoadedExecutable))
	le.c.handle = newHandle(le)
	return le
}

func loadedOf(p *C.PJRT_LoadedExecutable) (*loadedExecutable, error) {
	if p == nil {
		return nil, status.Invalidf("executable is NULL")
	}
	return lookup[*loadedExecutable](p.handle, "executable")
}

func programOf(p *C.PJRT_Executable) (*program, error) {
	if p == nil {
		return nil, status.Invalidf("executable is NULL")
	}
	return lookup[*program](p.handle, "executable")
}

// deviceAssignment is the serialized xla.DeviceAssignmentProto of one
// replica and one computation on device 0: replica_count = 1 (field 1),
// computation_count = 1 (field 2), and one ComputationDevice (field 3)
// whose replica_device_ids (field 1, packed) are [0]. XLA's client parses
// it and aborts on bytes it cannot.
var deviceAssignment = []byte{
	1<<3 | wireVarint, 1,
	2<<3 | wireVarint, 1,
	3<<3 | wireBytes, 3, 1<<3 | wireBytes, 1, deviceID,
}

// run executes the program on args (already checked against its
// parameters) into new result buffers, all on the client's stream.
func (le *loadedExecutable) run(args []*buffer) ([]*buffer, *event, error) {
	c, pr := le.client, le.prog
	outs := make([]*buffer, 0, len(pr.results))
	cleanup := func() {
		for _, b := range outs {
			b.destroy()
		}
	}
	for i, t := range pr.results {
		b, err := c.newBuffer(pr.resultTypes[i], dims64(t.Shape))
		if err != nil {
			cleanup()
			return nil, nil, fmt.Errorf("result %d: %w", i, err)
		}
		outs = append(outs, b)
	}
	var done *event
	err := c.withStream(func(s driver.Stream) error {
		in := make([]unsafe.Pointer, len(args))
		for i, b := range args {
			p, err := b.usable(c)
			if err != nil {
				return fmt.Errorf("argument %d: %w", i, err)
			}
			in[i] = p
		}
		if pr.exe == nil {
			done = readyEvent(nil) // no results: nothing to run
			return nil
		}
		out := make([]unsafe.Pointer, len(outs), len(outs)+pr.hidden) // the hidden tokens hold no bytes: nil
		out = out[:len(outs)+pr.hidden]
		for i, b := range outs {
			out[i] = b.ptr
		}
		s.Execute(pr.exe, in, out)
		done = streamEvent(c.drv, s, "running "+C.GoString(pr.name.p))
		for _, b := range outs {
			b.gen, b.ready = c.gen, done
		}
		return nil
	})
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return outs, done, nil
}

func dims64(s ir.Shape) []int64 {
	d := make([]int64, len(s))
	for i, n := range s {
		d[i] = int64(n)
	}
	return d
}

// checkArgs matches the caller's argument buffers to the parameters.
func (pr *program) checkArgs(c *client, bufs []*buffer) error {
	if len(bufs) != len(pr.params) {
		return status.Invalidf("%d arguments for a program of %d parameters", len(bufs), len(pr.params))
	}
	for i, b := range bufs {
		if b.client != c {
			return status.Invalidf("argument %d (%s) belongs to another client", i, b)
		}
		want, wt := pr.params[i], pr.paramTypes[i]
		if b.typ != wt || !equalDims(b.dims, want.Shape) {
			return status.Invalidf("argument %d is %s; the program's parameter %d is %s", i, b, i, shapeString(wt, dims64(want.Shape)))
		}
	}
	return nil
}

func equalDims(a []int64, b ir.Shape) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != int64(b[i]) {
			return false
		}
	}
	return true
}

// ------------------------------------------------- loaded executable exports

//export mp_PJRT_LoadedExecutable_Destroy
func mp_PJRT_LoadedExecutable_Destroy(args *C.PJRT_LoadedExecutable_Destroy_Args) errT {
	return export("mp_PJRT_LoadedExecutable_Destroy", args, C.PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE, loadedExecutableDestroy)
}

func loadedExecutableDestroy(args *C.PJRT_LoadedExecutable_Destroy_Args) error {
	if args.executable == nil {
		return nil
	}
	le, err := loadedOf(args.executable)
	if err != nil {
		return err
	}
	// Executions in flight hold the driver's executable themselves.
	le.deleted.Store(true)
	dropHandle(&le.c.handle)
	le.prog.release()
	le.arena.free()
	return nil
}

//export mp_PJRT_LoadedExecutable_GetExecutable
func mp_PJRT_LoadedExecutable_GetExecutable(args *C.PJRT_LoadedExecutable_GetExecutable_Args) errT {
	return export("mp_PJRT_LoadedExecutable_GetExecutable", args, C.PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE, loadedExecutableGetExecutable)
}

func loadedExecutableGetExecutable(args *C.PJRT_LoadedExecutable_GetExecutable_Args) error {
	le, err := loadedOf(args.loaded_executable)
	if err != nil {
		return err
	}
	p := (*C.PJRT_Executable)(C.calloc(1, C.sizeof_PJRT_Executable))
	if p == nil {
		panic("out of host memory for a PJRT_Executable")
	}
	p.handle = newHandle(le.prog.acquire())
	args.executable = p
	return nil
}

//export mp_PJRT_LoadedExecutable_AddressableDevices
func mp_PJRT_LoadedExecutable_AddressableDevices(args *C.PJRT_LoadedExecutable_AddressableDevices_Args) errT {
	return export("mp_PJRT_LoadedExecutable_AddressableDevices", args, C.PJRT_LoadedExecutable_AddressableDevices_Args_STRUCT_SIZE, loadedExecutableAddressableDevices)
}

func loadedExecutableAddressableDevices(args *C.PJRT_LoadedExecutable_AddressableDevices_Args) error {
	le, err := loadedOf(args.executable)
	if err != nil {
		return err
	}
	args.addressable_devices, args.num_addressable_devices = le.client.devices, 1
	return nil
}

//export mp_PJRT_LoadedExecutable_AddressableDeviceLogicalIds
func mp_PJRT_LoadedExecutable_AddressableDeviceLogicalIds(args *C.PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args) errT {
	return export("mp_PJRT_LoadedExecutable_AddressableDeviceLogicalIds", args, C.PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args_STRUCT_SIZE, loadedExecutableAddressableDeviceLogicalIDs)
}

func loadedExecutableAddressableDeviceLogicalIDs(args *C.PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args) error {
	le, err := loadedOf(args.executable)
	if err != nil {
		return err
	}
	args.addressable_device_logical_ids, args.num_addressable_device_logical_ids = le.logicalIDs, 1
	return nil
}

//export mp_PJRT_LoadedExecutable_GetDeviceAssignment
func mp_PJRT_LoadedExecutable_GetDeviceAssignment(args *C.PJRT_LoadedExecutable_GetDeviceAssignment_Args) errT {
	return export("mp_PJRT_LoadedExecutable_GetDeviceAssignment", args, C.PJRT_LoadedExecutable_GetDeviceAssignment_Args_STRUCT_SIZE, loadedExecutableGetDeviceAssignment)
}

func loadedExecutableGetDeviceAssignment(args *C.PJRT_LoadedExecutable_GetDeviceAssignment_Args) error {
	if _, err := loadedOf(args.executable); err != nil {
		return err
	}
	C.mp_give_device_assignment(args, (*C.char)(unsafe.Pointer(&deviceAssignment[0])), C.size_t(len(deviceAssignment)))
	return nil
}

//export mp_PJRT_LoadedExecutable_Delete
func mp_PJRT_LoadedExecutable_Delete(args *C.PJRT_LoadedExecutable_Delete_Args) errT {
	return export("mp_PJRT_LoadedExecutable_Delete", args, C.PJRT_LoadedExecutable_Delete_Args_STRUCT_SIZE, loadedExecutableDelete)
}

func loadedExecutableDelete(args *C.PJRT_LoadedExecutable_Delete_Args) error {
	le, err := loadedOf(args.executable)
	if err != nil {
		return err
	}
	le.deleted.Store(true)
	return nil
}

//export mp_PJRT_LoadedExecutable_IsDeleted
func mp_PJRT_LoadedExecutable_IsDeleted(args *C.PJRT_LoadedExecutable_IsDeleted_Args) errT {
	return export("mp_PJRT_LoadedExecutable_IsDeleted", args, C.PJRT_LoadedExecutable_IsDeleted_Args_STRUCT_SIZE, loadedExecutableIsDeleted)
}

func loadedExecutableIsDeleted(args *C.PJRT_LoadedExecutable_IsDeleted_Args) error {
	le, err := loadedOf(args.executable)
	if err != nil {
		return err
	}
	args.is_deleted = C.bool(le.deleted.Load())
	return nil
}

//export mp_PJRT_LoadedExecutable_Fingerprint
func mp_PJRT_LoadedExecutable_Fingerprint(args *C.PJRT_LoadedExecutable_Fingerprint_Args) errT {
	return export("mp_PJRT_LoadedExecutable_Fingerprint", args, C.PJRT_LoadedExecutable_Fingerprint_Args_STRUCT_SIZE, loadedExecutableFingerprint)
}

func loadedExecutableFingerprint(args *C.PJRT_LoadedExecutable_Fingerprint_Args) error {
	le, err := loadedOf(args.executable)
	if err != nil {
		return err
	}
	args.executable_fingerprint, args.executable_fingerprint_size = le.prog.fp.p, le.prog.fp.n
	return nil
}

//export mp_PJRT_LoadedExecutable_Execute
func mp_PJRT_LoadedExecutable_Execute(args *C.PJRT_LoadedExecutable_Execute_Args) errT {
	return export("mp_PJRT_LoadedExecutable_Execute", args, C.PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE, loadedExecutableExecute)
}

func loadedExecutableExecute(args *C.PJRT_LoadedExecutable_Execute_Args) error {
	le, err := loadedOf(args.executable)
	if err != nil {
		return err
	}
	if le.deleted.Load() {
		return status.Errorf(status.FailedPrecondition, "the executable has been deleted")
	}
	if err := checkExecuteOptions(args.options); err != nil {
		return err
	}
	c := le.client
	if args.num_devices != 1 {
		return status.Invalidf("%d devices' argument lists; metalplug executes on one device", args.num_devices)
	}
	if args.execute_device != nil {
		if err := c.placeOf(args.execute_device, nil); err != nil {
			return fmt.Errorf("execute_device: %w", err)
		}
	}
	if args.argument_lists == nil || args.output_lists == nil {
		return status.Invalidf("argument_lists or output_lists is NULL")
	}
	n := int(args.num_args)
	in := make([]*buffer, n)
	if n > 0 {
		list := *args.argument_lists
		if list == nil {
			return status.Invalidf("argument_lists[0] is NULL for %d arguments", n)
		}
		for i, p := range unsafe.Slice(list, n) {
			if in[i], err = bufferOf(p); err != nil {
				return fmt.Errorf("argument %d: %w", i, err)
			}
		}
	}
	if err := le.prog.checkArgs(c, in); err != nil {
		return err
	}
	outList := *args.output_lists
	if outList == nil && len(le.prog.results) > 0 {
		return status.Invalidf("output_lists[0] is NULL")
	}
	// Results are always fresh buffers, so no input is ever written; a
	// donated one is consumed: deleted once the execution is enqueued
	// (its memory is freed after the stream has run it), as XLA's runtimes
	// do, so that jax sees it deleted.
	consumed, err := le.prog.consumed(in, notDonatable(args.options))
	if err != nil {
		return err
	}
	outs, done, err := le.run(in)
	if err != nil {
		return err
	}
	for _, b := range consumed {
		b.delete()
	}
	for j, b := range outs {
		unsafe.Slice(outList, len(outs))[j] = b.c
	}
	if args.device_complete_events != nil {
		*args.device_complete_events = newCEvent(done)
	}
	return nil
}

// notDonatable is the set of argument positions the call says not to
// consume, though the program donates them (jax passes, for example, an
// argument it still needs).
func notDonatable(o *C.PJRT_ExecuteOptions) map[int]bool {
	if o == nil || o.num_non_donatable_input_indices == 0 || o.non_donatable_input_indices == nil {
		return nil
	}
	idx := unsafe.Slice((*int64)(unsafe.Pointer(o.non_donatable_input_indices)), int(o.num_non_donatable_input_indices))
	keep := make(map[int]bool, len(idx))
	for _, i := range idx {
		keep[int(i)] = true
	}
	return keep
}

// consumed are the buffers an execution consumes: those of the donated
// parameters not in keep. A buffer donated at one position and passed
// again at another is refused, as XLA refuses it: the execution would read
// what it consumes.
func (pr *program) consumed(in []*buffer, keep map[int]bool) ([]*buffer, error) {
	var out []*buffer
	for i, b := range in {
		if !marked(pr.donated, i) || keep[i] {
			continue
		}
		for j, o := range in {
			if j != i && o == b {
				return nil, status.Invalidf("Attempt to donate the same buffer twice in Execute() (argument %d, donated, is argument %d too): "+
					"pass a copy, or do not donate it (f(donate(a), a))", i, j)
			}
		}
		out = append(out, b)
	}
	return out, nil
}

// checkExecuteOptions refuses what an execution asks for that we cannot
// do: host send/recv and output callbacks (jax.debug.callback, io_callback
// compiled into the program), which need the Callback extension.
func checkExecuteOptions(o *C.PJRT_ExecuteOptions) error {
	if o == nil {
		return nil
	}
	if err := need(o, fieldEnd(unsafe.Offsetof(o.num_recv_ops), unsafe.Sizeof(o.num_recv_ops))); err != nil {
		return fmt.Errorf("options: %w", err)
	}
	if o.num_send_ops > 0 || o.num_recv_ops > 0 {
		return status.Errorf(status.Unimplemented, "host send/recv callbacks (%d sends, %d receives) are not supported by metalplug", o.num_send_ops, o.num_recv_ops)
	}
	if has(o.struct_size, fieldEnd(unsafe.Offsetof(o.num_hlo_output_callbacks), unsafe.Sizeof(o.num_hlo_output_callbacks))) && o.num_hlo_output_callbacks > 0 {
		return status.Errorf(status.Unimplemented, "HLO output callbacks (%d) are not supported by metalplug", o.num_hlo_output_callbacks)
	}
	return nil
}

// ---------------------------------------------------------- executable exports

//export mp_PJRT_Executable_Destroy
func mp_PJRT_Executable_Destroy(args *C.PJRT_Executable_Destroy_Args) errT {
	return export("mp_PJRT_Executable_Destroy", args, C.PJRT_Executable_Destroy_Args_STRUCT_SIZE, executableDestroy)
}

func executableDestroy(args *C.PJRT_Executable_Destroy_Args) error {
	if args.executable == nil {
		return nil
	}
	pr, err := programOf(args.executable)
	if err != nil {
		return err
	}
	dropHandle(&args.executable.handle)
	C.free(unsafe.Pointer(args.executable))
	pr.release()
	return nil
}

//export mp_PJRT_Executable_Name
func mp_PJRT_Executable_Name(args *C.PJRT_Executable_Name_Args) errT {
	return export("mp_PJRT_Executable_Name", args, C.PJRT_Executable_Name_Args_STRUCT_SIZE, executableName)
}

func executableName(args *C.PJRT_Executable_Name_Args) error {
	pr, err := programOf(args.executable)
	if err != nil {
		return err
	}
	args.executable_name, args.executable_name_size = pr.name.p, pr.name.n
	return nil
}

//export mp_PJRT_Executable_NumReplicas
func mp_PJRT_Executable_NumReplicas(args *C.PJRT_Executable_NumReplicas_Args) errT {
	return export("mp_PJRT_Executable_NumReplicas", args, C.PJRT_Executable_NumReplicas_Args_STRUCT_SIZE, executableNumReplicas)
}

func executableNumReplicas(args *C.PJRT_Executable_NumReplicas_Args) error {
	if _, err := programOf(args.executable); err != nil {
		return err
	}
	args.num_replicas = 1
	return nil
}

//export mp_PJRT_Executable_NumPartitions
func mp_PJRT_Executable_NumPartitions(args *C.PJRT_Executable_NumPartitions_Args) errT {
	return export("mp_PJRT_Executable_NumPartitions", args, C.PJRT_Executable_NumPartitions_Args_STRUCT_SIZE, executableNumPartitions)
}

func executableNumPartitions(args *C.PJRT_Executable_NumPartitions_Args) error {
	if _, err := programOf(args.executable); err != nil {
		return err
	}
	args.num_partitions = 1
	return nil
}

//export mp_PJRT_Executable_NumOutputs
func mp_PJRT_Executable_NumOutputs(args *C.PJRT_Executable_NumOutputs_Args) errT {
	return export("mp_PJRT_Executable_NumOutputs", args, C.PJRT_Executable_NumOutputs_Args_STRUCT_SIZE, executableNumOutputs)
}

func executableNumOutputs(args *C.PJRT_Executable_NumOutputs_Args) error {
	pr, err := programOf(args.executable)
	if err != nil {
		return err
	}
	args.num_outputs = C.size_t(len(pr.results))
	return nil
}

//export mp_PJRT_Executable_SizeOfGeneratedCodeInBytes
func mp_PJRT_Executable_SizeOfGeneratedCodeInBytes(args *C.PJRT_Executable_SizeOfGeneratedCodeInBytes_Args) errT {
	return export("mp_PJRT_Executable_SizeOfGeneratedCodeInBytes", args, C.PJRT_Executable_SizeOfGeneratedCodeInBytes_Args_STRUCT_SIZE, executableSizeOfGeneratedCodeInBytes)
}

func executableSizeOfGeneratedCodeInBytes(args *C.PJRT_Executable_SizeOfGeneratedCodeInBytes_Args) error {
	if _, err := programOf(args.executable); err != nil {
		return err
	}
	args.size_in_bytes = 0 // no machine code of ours: the driver keeps what it compiled
	return nil
}

//export mp_PJRT_Executable_GetCostAnalysis
func mp_PJRT_Executable_GetCostAnalysis(args *C.PJRT_Executable_GetCostAnalysis_Args) errT {
	return export("mp_PJRT_Executable_GetCostAnalysis", args, C.PJRT_Executable_GetCostAnalysis_Args_STRUCT_SIZE, executableGetCostAnalysis)
}

func executableGetCostAnalysis(args *C.PJRT_Executable_GetCostAnalysis_Args) error {
	if _, err := programOf(args.executable); err != nil {
		return err
	}
	args.num_properties, args.properties = 0, nil // no cost model
	return nil
}

//export mp_PJRT_Executable_OutputMemoryKinds
func mp_PJRT_Executable_OutputMemoryKinds(args *C.PJRT_Executable_OutputMemoryKinds_Args) errT {
	return export("mp_PJRT_Executable_OutputMemoryKinds", args, C.PJRT_Executable_OutputMemoryKinds_Args_STRUCT_SIZE, executableOutputMemoryKinds)
}

func executableOutputMemoryKinds(args *C.PJRT_Executable_OutputMemoryKinds_Args) error {
	pr, err := programOf(args.executable)
	if err != nil {
		return err
	}
	args.num_outputs = C.size_t(len(pr.results))
	args.memory_kinds, args.memory_kind_sizes = pr.outKinds, pr.outKindLens
	return nil
}

//export mp_PJRT_Executable_ParameterMemoryKinds
func mp_PJRT_Executable_ParameterMemoryKinds(args *C.PJRT_Executable_ParameterMemoryKinds_Args) errT {
	return export("mp_PJRT_Executable_ParameterMemoryKinds", args, C.PJRT_Executable_ParameterMemoryKinds_Args_STRUCT_SIZE, executableParameterMemoryKinds)
}

func executableParameterMemoryKinds(args *C.PJRT_Executable_ParameterMemoryKinds_Args) error {
	pr, err := programOf(args.executable)
	if err != nil {
		return err
	}
	args.num_parameters = C.size_t(len(pr.params))
	args.memory_kinds, args.memory_kind_sizes = pr.inKinds, pr.inKindLens
	return nil
}

//export mp_PJRT_Executable_OutputElementTypes
func mp_PJRT_Executable_OutputElementTypes(args *C.PJRT_Executable_OutputElementTypes_Args) errT {
	return export("mp_PJRT_Executable_OutputElementTypes", args, C.PJRT_Executable_OutputElementTypes_Args_STRUCT_SIZE, executableOutputElementTypes)
}

func executableOutputElementTypes(args *C.PJRT_Executable_OutputElementTypes_Args) error {
	pr, err := programOf(args.executable)
	if err != nil {
		return err
	}
	args.output_types, args.num_output_types = pr.outTypes, C.size_t(len(pr.results))
	return nil
}

//export mp_PJRT_Executable_OutputDimensions
func mp_PJRT_Executable_OutputDimensions(args *C.PJRT_Executable_OutputDimensions_Args) errT {
	return export("mp_PJRT_Executable_OutputDimensions", args, C.PJRT_Executable_OutputDimensions_Args_STRUCT_SIZE, executableOutputDimensions)
}

func executableOutputDimensions(args *C.PJRT_Executable_OutputDimensions_Args) error {
	pr, err := programOf(args.executable)
	if err != nil {
		return err
	}
	args.num_outputs = C.size_t(len(pr.results))
	args.dims, args.dim_sizes = pr.outDims, pr.outRanks
	return nil
}

//export mp_PJRT_Executable_Fingerprint
func mp_PJRT_Executable_Fingerprint(args *C.PJRT_Executable_Fingerprint_Args) errT {
	return export("mp_PJRT_Executable_Fingerprint", args, C.PJRT_Executable_Fingerprint_Args_STRUCT_SIZE, executableFingerprint)
}

func executableFingerprint(args *C.PJRT_Executable_Fingerprint_Args) error {
	pr, err := programOf(args.executable)
	if err != nil {
		return err
	}
	args.executable_fingerprint, args.executable_fingerprint_size = pr.fp.p, pr.fp.n
	return nil
}

//export mp_PJRT_Executable_GetCompiledMemoryStats
func mp_PJRT_Executable_GetCompiledMemoryStats(args *C.PJRT_Executable_GetCompiledMemoryStats_Args) errT {
	return export("mp_PJRT_Executable_GetCompiledMemoryStats", args, C.PJRT_Executable_GetCompiledMemoryStats_Args_STRUCT_SIZE, executableGetCompiledMemoryStats)
}

func executableGetCompiledMemoryStats(args *C.PJRT_Executable_GetCompiledMemoryStats_Args) error {
	pr, err := programOf(args.executable)
	if err != nil {
		return err
	}
	var in, out int64
	for _, t := range pr.params {
		in += int64(t.Bytes())
	}
	for _, t := range pr.results {
		out += int64(t.Bytes())
	}
	// What the arrays take is known; what the driver allocates inside an
	// execution is not, so temporaries and peaks read as 0.
	args.generated_code_size_in_bytes = 0
	args.argument_size_in_bytes = C.int64_t(in)
	args.output_size_in_bytes = C.int64_t(out)
	args.alias_size_in_bytes = 0
	args.temp_size_in_bytes = 0
	args.host_generated_code_size_in_bytes = 0
	args.host_argument_size_in_bytes = 0
	args.host_output_size_in_bytes = 0
	args.host_alias_size_in_bytes = 0
	args.host_temp_size_in_bytes = 0
	args.peak_memory_in_bytes = C.int64_t(in + out)
	args.total_size_in_bytes = C.int64_t(in + out)
	args.total_allocation_bytes = C.int64_t(out)
	args.indefinite_allocations = 0
	args.peak_unpadded_heap_bytes = 0
	return nil
}

//export mp_PJRT_Executable_GetCompileOptions
func mp_PJRT_Executable_GetCompileOptions(args *C.PJRT_Executable_GetCompileOptions_Args) errT {
	return export("mp_PJRT_Executable_GetCompileOptions", args, C.PJRT_Executable_GetCompileOptions_Args_STRUCT_SIZE, executableGetCompileOptions)
}

func executableGetCompileOptions(args *C.PJRT_Executable_GetCompileOptions_Args) error {
	pr, err := programOf(args.executable)
	if err != nil {
		return err
	}
	var data *C.char
	if len(pr.options) > 0 {
		data = (*C.char)(unsafe.Pointer(&pr.options[0]))
	}
	C.mp_give_compile_options(args, data, C.size_t(len(pr.options)))
	return nil
}

package tf

// #include "graph.h"
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"google.golang.org/protobuf/proto"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/plugin/cenv"
	"github.com/metalplug/metalplug/plugin/tf/graphpass"
	"github.com/metalplug/metalplug/plugin/tf/lower"
	pb "github.com/metalplug/metalplug/plugin/tfproto"
)

// TF_InitGraph registers the plugin's Grappler optimizer for its device
// type (graphpass: bias and activation folded into convolutions and matrix
// multiplications, then device subgraphs grouped into clusters) and turns TensorFlow's layout optimizer off for it.
// TensorFlow calls it once, after SE_InitPlugin; a plugin that declined
// still registers, for a device type no node is placed on. TensorFlow
// aborts the process on a non-OK status here (measured with 2.21: a CHECK
// in RegisterPluggableDevicePlugin), so a failure only turns the pass off,
// with one log line, and the table is filled either way.
//
//export TF_InitGraph
func TF_InitGraph(params *C.TP_OptimizerRegistrationParams, st *C.TF_Status) {
	defer C.metalplug_fill_optimizer(params, C.metalplug_device_type)
	defer boundary("TF_InitGraph", failure{sink: func(err error) {
		passBroken.Store(true)
		logf("%v: the graph pass is off", err)
	}})
	hook("TF_InitGraph")
}

// passBroken is set when TF_InitGraph failed: the optimizer then hands
// graphs back unchanged.
var passBroken atomic.Bool

// goOptimize runs the pass over one serialized GraphDef and writes the
// result to out. On failure the status says why and out is left alone:
// Grappler then keeps the graph it had. METALPLUG_GRAPH_PASS=0 hands the
// graph back unchanged.
//
//export goOptimize
func goOptimize(data unsafe.Pointer, n C.size_t, item unsafe.Pointer, out *C.TF_Buffer, st *C.TF_Status) {
	export("goOptimize", failure{st: st}, func() error { return optimizeBuffer(data, n, item, out) })
}

func optimizeBuffer(data unsafe.Pointer, n C.size_t, item unsafe.Pointer, out *C.TF_Buffer) error {
	in := unsafe.Slice((*byte)(data), int(n))
	lib := C.metalplug_new_library(data, n)
	defer C.metalplug_delete_library(lib)
	defs := map[string]*pb.OpDef{}
	def := func(op string) *pb.OpDef {
		d, ok := defs[op]
		if !ok {
			d = opDef(lib, op)
			defs[op] = d
		}
		return d
	}
	result, err := optimize(in, func() ([]string, bool) { return nodesToPreserve(item) }, def)
	if err != nil {
		return err
	}
	var p unsafe.Pointer
	if len(result) > 0 {
		p = unsafe.Pointer(&result[0])
	}
	C.metalplug_set_buffer(out, p, C.size_t(len(result)))
	return nil
}

// optimize is goOptimize without C: the rewritten graph's bytes, or the
// input's when nothing changed. preserve lists the nodes TensorFlow says to
// keep; without that list nothing is rewritten, since a fetched
// intermediate must not disappear.
func optimize(in []byte, preserve func() ([]string, bool), def func(op string) *pb.OpDef) ([]byte, error) {
	if cenv.Get("METALPLUG_GRAPH_PASS") == "0" || passBroken.Load() {
		return in, nil
	}
	keep, ok := preserve()
	if !ok {
		warnOnce.Do(func() {
			logf("graph pass: this TensorFlow does not export TF_GetNodesToPreserveList, so the pass cannot tell fetched nodes apart: graphs are left as they are")
		})
		return in, nil
	}
	var g pb.GraphDef
	if err := proto.Unmarshal(in, &g); err != nil {
		return nil, fmt.Errorf("graph pass: the GraphDef TensorFlow passed does not parse: %w", err)
	}
	fused := graphpass.Rewrite(&g, graphpass.Options{
		DeviceType:  DeviceType(),
		ConvTypes:   fusedTypes("_FusedConv2D"),
		MatMulTypes: fusedTypes("_FusedMatMul"),
		Preserve:    keep,
		OpDefs:      map[string]*pb.OpDef{"_FusedConv2D": def("_FusedConv2D"), "_FusedMatMul": def("_FusedMatMul")},
	})
	var clusters []graphpass.Cluster
	if clustering() {
		clusters = graphpass.Clusters(&g, graphpass.ClusterOptions{
			DeviceType: DeviceType(),
			Preserve:   keep,
			Member:     clusterMember(def),
			OpDef:      def,
		})
	}
	if len(fused) == 0 && len(clusters) == 0 {
		return in, nil
	}
	if debug() && len(fused) > 0 {
		names := make([]string, len(fused))
		for i, f := range fused {
			names[i] = fmt.Sprintf("%s (%s: %s)", f.Name, f.Op, strings.Join(f.FusedOps, "+"))
		}
		logf("graph pass: fused %d chains: %s", len(fused), strings.Join(names, ", "))
	}
	if debug() && len(clusters) > 0 {
		sizes := make([]string, len(clusters))
		for i, c := range clusters {
			sizes[i] = fmt.Sprintf("%s (%d nodes)", c.Name, len(c.Members))
		}
		logf("graph pass: %d clusters: %s", len(clusters), strings.Join(sizes, ", "))
	}
	return proto.Marshal(&g)
}

// clustering reports whether the pass forms clusters: unless
// METALPLUG_CLUSTER=0, once TensorFlow knows the cluster op.
func clustering() bool {
	return cenv.Get("METALPLUG_CLUSTER") != "0" && clusterOpDefined.Load()
}

// clusterMember is graphpass.ClusterOptions.Member: a node whose own
// kernel here would run it on the device (lower.ClusterMember), and that
// TensorFlow does not call stateful, since a stateful op's every run
// counts (a random draw advances its counter).
func clusterMember(def func(op string) *pb.OpDef) func(n *pb.NodeDef) ([]int, bool) {
	return func(n *pb.NodeDef) ([]int, bool) {
		d := def(n.Op)
		if d == nil || d.IsStateful {
			return nil, false
		}
		return lower.ClusterMember(n)
	}
}

var warnOnce sync.Once

// nodesToPreserve asks TensorFlow for the item's nodes to preserve.
func nodesToPreserve(item unsafe.Pointer) ([]string, bool) {
	var total C.size_t
	packed := C.metalplug_nodes_to_preserve((*C.TF_GrapplerItem)(item), &total)
	if packed == nil {
		return nil, false
	}
	defer C.free(unsafe.Pointer(packed))
	s := string(unsafe.Slice((*byte)(unsafe.Pointer(packed)), int(total)))
	return strings.FieldsFunc(s, func(r rune) bool { return r == 0 }), true
}

// opDef is op's definition in lib (metalplug_new_library), or nil.
func opDef(lib *C.TF_FunctionLibraryDefinition, op string) *pb.OpDef {
	name := C.CString(op)
	defer C.free(unsafe.Pointer(name))
	var size C.size_t
	b := C.metalplug_op_def(lib, name, &size)
	if b == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(b))
	var d pb.OpDef
	if err := proto.Unmarshal(unsafe.Slice((*byte)(unsafe.Pointer(b)), int(size)), &d); err != nil {
		return nil
	}
	return &d
}

// tfTypes are the proto DataTypes of the IR dtypes a fused kernel may be
// registered for.
var tfTypes = map[ir.DType]pb.DataType{
	ir.F32: pb.DataType_DT_FLOAT, ir.F16: pb.DataType_DT_HALF, ir.BF16: pb.DataType_DT_BFLOAT16,
}

// fusedTypes are the T values op's kernel is registered for.
func fusedTypes(op string) []pb.DataType {
	var out []pb.DataType
	for _, k := range lower.Kernels() {
		if k.Op != op {
			continue
		}
		for _, combo := range k.Combinations() {
			if t, ok := tfTypes[combo["T"]]; ok {
				out = append(out, t)
			}
		}
	}
	return out
}

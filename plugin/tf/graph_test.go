package tf

import (
	"strings"
	"testing"
	"unsafe"

	"google.golang.org/protobuf/proto"

	"github.com/metalplug/metalplug/plugin/tf/internal/tfharness"
	pb "github.com/metalplug/metalplug/plugin/tfproto"
)

// TestOptimize: the optimizer's Go side, without TensorFlow: a chain on the
// device is fused when TensorFlow gives the list of nodes to preserve and the
// fused op's definition; it is handed back unchanged with
// METALPLUG_GRAPH_PASS=0 or without the list; a GraphDef that does not
// parse is an error.
func TestOptimize(t *testing.T) {
	dev := "/job:localhost/replica:0/task:0/device:" + DeviceType() + ":0"
	typ := func() *pb.AttrValue { return &pb.AttrValue{Value: &pb.AttrValue_Type{Type: pb.DataType_DT_FLOAT}} }
	g := &pb.GraphDef{Node: []*pb.NodeDef{
		{Name: "x", Op: "Placeholder", Device: dev}, {Name: "w", Op: "Const", Device: dev}, {Name: "b", Op: "Const", Device: dev},
		{Name: "mm", Op: "MatMul", Device: dev, Input: []string{"x", "w"}, Attr: map[string]*pb.AttrValue{"T": typ()}},
		{Name: "bias", Op: "BiasAdd", Device: dev, Input: []string{"mm", "b"}, Attr: map[string]*pb.AttrValue{"T": typ()}},
	}}
	in, err := proto.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	preserve := func() ([]string, bool) { return []string{"bias"}, true }
	def := func(op string) *pb.OpDef {
		return &pb.OpDef{Name: op, Attr: []*pb.OpDef_AttrDef{{Name: "T"}, {Name: "num_args"}, {Name: "fused_ops"}, {Name: "epsilon"},
			{Name: "leakyrelu_alpha"}, {Name: "transpose_a", DefaultValue: &pb.AttrValue{}}, {Name: "transpose_b", DefaultValue: &pb.AttrValue{}}}}
	}
	if len(fusedTypes("_FusedMatMul")) == 0 {
		t.Fatal("_FusedMatMul has no registered dtypes")
	}
	out, err := optimize(in, preserve, def)
	if err != nil {
		t.Fatal(err)
	}
	var got pb.GraphDef
	if err := proto.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Node) != 4 || got.Node[3].Op != "_FusedMatMul" || got.Node[3].Name != "bias" {
		t.Errorf("optimized graph %v", got.Node)
	}

	if out, _ := optimize(in, func() ([]string, bool) { return nil, false }, def); string(out) != string(in) {
		t.Error("without the list of nodes to preserve the graph changed")
	}
	t.Setenv("METALPLUG_GRAPH_PASS", "0")
	if out, _ := optimize(in, preserve, def); string(out) != string(in) {
		t.Error("METALPLUG_GRAPH_PASS=0 changed the graph")
	}
	t.Setenv("METALPLUG_GRAPH_PASS", "")
	if _, err := optimize([]byte{0xff, 0xff, 0xff}, preserve, def); err == nil || !strings.Contains(err.Error(), "does not parse") {
		t.Errorf("a malformed GraphDef: %v", err)
	}
}

// TestRegistrations: the tables TF_InitGraph and TF_InitProfiler fill,
// handed to them zeroed as TensorFlow hands them and checked as TensorFlow
// reads them (internal/tfharness), for the device type; the layout
// optimizer off for the device is the one effect of the configuration that
// only a device of type GPU (a Mac) shows.
func TestRegistrations(t *testing.T) {
	st := statusT(tfharness.NewStatus())
	defer tfharness.DeleteStatus(unsafe.Pointer(st))
	if !tfharness.OptimizerFilled(DeviceType(), func(p unsafe.Pointer) { TF_InitGraph(paramsOf(p, TF_InitGraph), st) }) {
		t.Error("the optimizer's registration is not filled as it must be")
	}
	if !tfharness.ProfilerFilled(DeviceType(), func(p unsafe.Pointer) { TF_InitProfiler(paramsOf(p, TF_InitProfiler), st) }) {
		t.Error("the profiler's registration is not filled as it must be")
	}
	if code, msg := tfharness.StatusText(unsafe.Pointer(st)); code != tfharness.OK {
		t.Errorf("registering left status %d %q, on which TensorFlow aborts", code, msg)
	}
}

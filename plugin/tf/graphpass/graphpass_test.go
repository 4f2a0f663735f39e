package graphpass

import (
	"slices"
	"strings"
	"testing"

	pb "github.com/metalplug/metalplug/plugin/tfproto"
)

const dev = "/job:localhost/replica:0/task:0/device:METALPLUG_HOST:0"
const cpu = "/job:localhost/replica:0/task:0/device:CPU:0"

func node(name, op, device string, t pb.DataType, inputs ...string) *pb.NodeDef {
	return &pb.NodeDef{Name: name, Op: op, Device: device, Input: inputs,
		Attr: map[string]*pb.AttrValue{"T": {Value: &pb.AttrValue_Type{Type: t}}}}
}

func withS(n *pb.NodeDef, k, v string) *pb.NodeDef {
	n.Attr[k] = &pb.AttrValue{Value: &pb.AttrValue_S{S: []byte(v)}}
	return n
}

func withB(n *pb.NodeDef, k string, v bool) *pb.NodeDef {
	n.Attr[k] = &pb.AttrValue{Value: &pb.AttrValue_B{B: v}}
	return n
}

// opDef declares attrs; those named with a trailing "=" have a default.
// With typeList, the args input is typed by the list attribute TArgs (as in
// TensorFlow 2.21's _FusedConv2D); else by T and num_args.
func opDef(name string, typeList bool, attrs ...string) *pb.OpDef {
	d := &pb.OpDef{Name: name}
	args := &pb.OpDef_ArgDef{Name: "args", TypeAttr: "T", NumberAttr: "num_args"}
	if typeList {
		args = &pb.OpDef_ArgDef{Name: "args", TypeListAttr: "TArgs"}
		attrs = append(attrs, "TArgs")
	}
	d.InputArg = []*pb.OpDef_ArgDef{{Name: "a", TypeAttr: "T"}, {Name: "b", TypeAttr: "T"}, args}
	for _, a := range attrs {
		ad := &pb.OpDef_AttrDef{Name: strings.TrimSuffix(a, "=")}
		if strings.HasSuffix(a, "=") {
			ad.DefaultValue = &pb.AttrValue{}
		}
		d.Attr = append(d.Attr, ad)
	}
	return d
}

var fusedDefs = map[string]*pb.OpDef{
	"_FusedConv2D": opDef("_FusedConv2D", true, "T", "num_args", "num_host_args=", "strides", "padding", "explicit_paddings=",
		"data_format=", "dilations=", "use_cudnn_on_gpu=", "fused_ops=", "epsilon=", "leakyrelu_alpha="),
	"_FusedMatMul": opDef("_FusedMatMul", false, "T", "num_args", "transpose_a=", "transpose_b=", "fused_ops=", "epsilon=", "leakyrelu_alpha="),
}

var opts = Options{
	DeviceType:  "METALPLUG_HOST",
	ConvTypes:   []pb.DataType{pb.DataType_DT_FLOAT, pb.DataType_DT_HALF},
	MatMulTypes: []pb.DataType{pb.DataType_DT_FLOAT},
	OpDefs:      fusedDefs,
}

const f32 = pb.DataType_DT_FLOAT

// convChain is x, w, b -> Conv2D -> BiasAdd -> act -> out (an Identity that
// reads the activation).
func convChain(act string, device string, t pb.DataType) *pb.GraphDef {
	conv := withS(node("conv", "Conv2D", device, t, "x", "w"), "padding", "SAME")
	conv.Attr["strides"] = &pb.AttrValue{Value: &pb.AttrValue_List{List: &pb.AttrValue_ListValue{I: []int64{1, 1, 1, 1}}}}
	g := &pb.GraphDef{Node: []*pb.NodeDef{
		node("x", "Placeholder", device, t), node("w", "Const", device, t), node("b", "Const", device, t),
		conv, node("bias", "BiasAdd", device, t, "conv", "b"),
	}}
	last := "bias"
	if act != "" {
		g.Node = append(g.Node, node("act", act, device, t, "bias"))
		last = "act"
	}
	g.Node = append(g.Node, node("out", "Identity", device, t, last))
	return g
}

func names(g *pb.GraphDef) []string {
	var out []string
	for _, n := range g.Node {
		out = append(out, n.Name+":"+n.Op)
	}
	return out
}

func find(g *pb.GraphDef, name string) *pb.NodeDef {
	for _, n := range g.Node {
		if n.Name == name {
			return n
		}
	}
	return nil
}

func fusedOps(n *pb.NodeDef) []string {
	var out []string
	for _, s := range n.Attr["fused_ops"].GetList().GetS() {
		out = append(out, string(s))
	}
	return out
}

func TestConvBiasActivation(t *testing.T) {
	for _, act := range []string{"Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"} {
		g := convChain(act, dev, f32)
		fused := Rewrite(g, opts)
		if len(fused) != 1 || fused[0].Name != "act" || !slices.Equal(fused[0].Removed, []string{"conv", "bias", "act"}) {
			t.Fatalf("%s: fusions %+v", act, fused)
		}
		want := []string{"x:Placeholder", "w:Const", "b:Const", "act:_FusedConv2D", "out:Identity"}
		if got := names(g); !slices.Equal(got, want) {
			t.Fatalf("%s: nodes %v, want %v", act, got, want)
		}
		n := find(g, "act")
		if !slices.Equal(n.Input, []string{"x", "w", "b"}) || n.Device != dev || !slices.Equal(fusedOps(n), []string{"BiasAdd", act}) {
			t.Errorf("%s: fused node %v", act, n)
		}
		if n.Attr["T"].GetType() != f32 || string(n.Attr["padding"].GetS()) != "SAME" || n.Attr["num_args"].GetI() != 1 ||
			!slices.Equal(n.Attr["strides"].GetList().GetI(), []int64{1, 1, 1, 1}) ||
			!slices.Equal(n.Attr["TArgs"].GetList().GetType(), []pb.DataType{f32}) {
			t.Errorf("%s: attributes %v", act, n.Attr)
		}
	}
}

func TestLeakyReluAlpha(t *testing.T) {
	g := convChain("LeakyRelu", dev, f32)
	find(g, "act").Attr["alpha"] = &pb.AttrValue{Value: &pb.AttrValue_F{F: 0.3}}
	Rewrite(g, opts)
	if a := find(g, "act").Attr["leakyrelu_alpha"].GetF(); a != 0.3 {
		t.Errorf("leakyrelu_alpha = %v, want 0.3", a)
	}
}

func TestMatMulBias(t *testing.T) {
	mm := withB(withB(node("mm", "MatMul", dev, f32, "x", "w"), "transpose_b", true), "grad_a", false)
	g := &pb.GraphDef{Node: []*pb.NodeDef{
		node("x", "Placeholder", dev, f32), node("w", "Const", dev, f32), node("b", "Const", dev, f32),
		mm, node("bias", "BiasAdd", dev, f32, "mm:0", "b", "^x"), node("out", "Square", dev, f32, "bias"),
	}}
	fused := Rewrite(g, opts)
	if len(fused) != 1 || fused[0].Op != "_FusedMatMul" || !slices.Equal(fused[0].FusedOps, []string{"BiasAdd"}) {
		t.Fatalf("fusions %+v", fused)
	}
	n := find(g, "bias")
	if n.Op != "_FusedMatMul" || !slices.Equal(n.Input, []string{"x", "w", "b", "^x"}) || !n.Attr["transpose_b"].GetB() {
		t.Errorf("fused node %v", n)
	}
	if _, ok := n.Attr["TArgs"]; ok {
		t.Error("a _FusedMatMul whose definition has no TArgs got one")
	}
	if _, ok := n.Attr["grad_a"]; ok {
		t.Error("MatMul's grad_a, which _FusedMatMul does not have, was carried over")
	}
	if find(g, "mm") != nil || find(g, "out").Input[0] != "bias" {
		t.Errorf("nodes %v", names(g))
	}
}

// TestLeftAlone: the chains the pass must not touch.
func TestLeftAlone(t *testing.T) {
	cases := map[string]func() (*pb.GraphDef, Options){
		"not on the device": func() (*pb.GraphDef, Options) { return convChain("Relu", cpu, f32), opts },
		"a dtype the fused kernel lacks": func() (*pb.GraphDef, Options) {
			return convChain("Relu", dev, pb.DataType_DT_DOUBLE), opts
		},
		"the convolution's output read elsewhere": func() (*pb.GraphDef, Options) {
			g := convChain("Relu", dev, f32)
			g.Node = append(g.Node, node("peek", "Identity", dev, f32, "conv"))
			return g, opts
		},
		"the convolution read by a control edge": func() (*pb.GraphDef, Options) {
			g := convChain("", dev, f32)
			g.Node = append(g.Node, node("after", "NoOp", dev, f32, "^conv"))
			return g, opts
		},
		"the convolution fetched": func() (*pb.GraphDef, Options) {
			o := opts
			o.Preserve = []string{"conv"}
			return convChain("Relu", dev, f32), o
		},
		"no definition of the fused op": func() (*pb.GraphDef, Options) {
			o := opts
			o.OpDefs = nil
			return convChain("Relu", dev, f32), o
		},
		"a required attribute the pass cannot fill": func() (*pb.GraphDef, Options) {
			o := opts
			o.OpDefs = map[string]*pb.OpDef{"_FusedConv2D": opDef("_FusedConv2D", true, "T", "num_args", "strides", "padding", "something_new")}
			return convChain("Relu", dev, f32), o
		},
		"NCHW": func() (*pb.GraphDef, Options) {
			g := convChain("Relu", dev, f32)
			withS(find(g, "conv"), "data_format", "NCHW")
			withS(find(g, "bias"), "data_format", "NCHW")
			return g, opts
		},
		"the bias on the CPU": func() (*pb.GraphDef, Options) {
			g := convChain("", dev, f32)
			find(g, "bias").Device = cpu
			return g, opts
		},
	}
	for name, build := range cases {
		g, o := build()
		before := names(g)
		if fused := Rewrite(g, o); len(fused) != 0 || !slices.Equal(names(g), before) {
			t.Errorf("%s: rewritten: %+v, nodes %v", name, fused, names(g))
		}
	}
}

// TestPreservedBiasStopsTheChain: a fetched BiasAdd keeps its name and
// output, so the activation after it stays.
func TestPreservedBiasStopsTheChain(t *testing.T) {
	o := opts
	o.Preserve = []string{"bias"}
	g := convChain("Relu", dev, f32)
	fused := Rewrite(g, o)
	if len(fused) != 1 || fused[0].Name != "bias" || !slices.Equal(fused[0].FusedOps, []string{"BiasAdd"}) {
		t.Fatalf("fusions %+v", fused)
	}
	if find(g, "act").Op != "Relu" || find(g, "act").Input[0] != "bias" || find(g, "bias").Op != "_FusedConv2D" {
		t.Errorf("nodes %v", names(g))
	}
}

func TestInputNames(t *testing.T) {
	for in, want := range map[string][2]string{"a": {"a", "a"}, "a:0": {"a", "a"}, "a:1": {"a", ""}, "^a": {"a", ""}} {
		if nodeOf(in) != want[0] || dataInput(in) != want[1] {
			t.Errorf("%q: node %q, data input %q; want %q, %q", in, nodeOf(in), dataInput(in), want[0], want[1])
		}
	}
}

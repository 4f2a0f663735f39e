package graphpass

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/metalplug/metalplug/plugin/tfproto"
)

const i32 = pb.DataType_DT_INT32

// outputArg is an output argument: typed by an attribute ("T"), "N*T" for a
// number_attr list, "[T]" for a type_list_attr, or a fixed dtype.
func outputArg(spec any) *pb.OpDef_ArgDef {
	switch s := spec.(type) {
	case pb.DataType:
		return &pb.OpDef_ArgDef{Type: s}
	case string:
		if n, t, ok := strings.Cut(s, "*"); ok {
			return &pb.OpDef_ArgDef{NumberAttr: n, TypeAttr: t}
		}
		if len(s) > 2 && s[0] == '[' {
			return &pb.OpDef_ArgDef{TypeListAttr: s[1 : len(s)-1]}
		}
		return &pb.OpDef_ArgDef{TypeAttr: s}
	}
	panic(spec)
}

func defOutputs(op string, specs ...any) *pb.OpDef {
	d := &pb.OpDef{Name: op}
	for _, s := range specs {
		d.OutputArg = append(d.OutputArg, outputArg(s))
	}
	return d
}

// clusterDefs are the output arguments of the ops the tests use, as
// TensorFlow declares them (Parts is made up: N tensors of T, then an
// int32).
var clusterDefs = map[string]*pb.OpDef{}

func init() {
	for _, d := range []*pb.OpDef{
		defOutputs("Placeholder", "dtype"), defOutputs("Const", "dtype"), defOutputs("Identity", "T"), defOutputs("NoOp"),
		defOutputs("Neg", "T"), defOutputs("Relu", "T"), defOutputs("Square", "T"), defOutputs("Abs", "T"),
		defOutputs("Add", "T"), defOutputs("Mul", "T"), defOutputs("Reshape", "T"),
		defOutputs("Split", "num_split*T"), defOutputs("IdentityN", "[T]"), defOutputs("Parts", "N*T", i32),
		defOutputs("Switch", "T", "T"), defOutputs("Merge", "T", i32), defOutputs("Enter", "T"), defOutputs("Exit", "T"),
		defOutputs("NextIteration", "T"), defOutputs("LoopCond", pb.DataType_DT_BOOL),
	} {
		clusterDefs[d.Name] = d
	}
}

// lowered are the ops the tests' Member takes, with their host inputs.
var lowered = map[string][]int{
	"Neg": nil, "Relu": nil, "Square": nil, "Abs": nil, "Add": nil, "Mul": nil,
	"Reshape": {1}, "Split": {0}, "IdentityN": nil, "Parts": nil,
}

func member(n *pb.NodeDef) ([]int, bool) {
	host, ok := lowered[n.Op]
	return host, ok
}

// wantClusters clusters g with clusterOpts and fails unless the result
// prints as want.
func wantClusters(t *testing.T, g *pb.GraphDef, want string) []Cluster {
	t.Helper()
	cs := Clusters(g, clusterOpts())
	if fmt.Sprint(cs) != want {
		t.Fatalf("clusters %v, want %v", cs, want)
	}
	return cs
}

func clusterOpts() ClusterOptions {
	return ClusterOptions{
		DeviceType: "METALPLUG_HOST",
		Member:     member,
		OpDef:      func(op string) *pb.OpDef { return clusterDefs[op] },
	}
}

// source is a node without inputs typed by dtype (Placeholder, Const).
func source(name, op, device string, t pb.DataType) *pb.NodeDef {
	return &pb.NodeDef{Name: name, Op: op, Device: device,
		Attr: map[string]*pb.AttrValue{"dtype": {Value: &pb.AttrValue_Type{Type: t}}}}
}

func withI(n *pb.NodeDef, k string, v int64) *pb.NodeDef {
	n.Attr[k] = &pb.AttrValue{Value: &pb.AttrValue_I{I: v}}
	return n
}

func typesAttr(n *pb.NodeDef, k string) []pb.DataType { return n.Attr[k].GetList().GetType() }

func stringsAttr(n *pb.NodeDef, k string) []string {
	out := []string{}
	for _, s := range n.Attr[k].GetList().GetS() {
		out = append(out, string(s))
	}
	return out
}

func membersGraph(t *testing.T, n *pb.NodeDef) *pb.GraphDef {
	t.Helper()
	var g pb.GraphDef
	if err := proto.Unmarshal(n.Attr["members"].GetS(), &g); err != nil {
		t.Fatalf("members of %s: %v", n.Name, err)
	}
	return &g
}

// clusterOf is the name of the cluster holding member, or "".
func clusterOf(cs []Cluster, member string) string {
	for _, c := range cs {
		if slices.Contains(c.Members, member) {
			return c.Name
		}
	}
	return ""
}

func TestClusterChain(t *testing.T) {
	g := &pb.GraphDef{Node: []*pb.NodeDef{
		source("x", "Placeholder", dev, f32),
		node("a", "Neg", dev, f32, "x:0"),
		node("b", "Relu", dev, f32, "a"),
		node("c", "Mul", dev, f32, "b", "x"),
		node("out", "Identity", dev, f32, "c"),
		node("peek", "Identity", cpu, f32, "b:0"),
	}}
	cs := Clusters(g, clusterOpts())
	want := []Cluster{{Name: "metalplug_cluster_0", Members: []string{"a", "b", "c"}, Ops: []string{"Neg", "Relu", "Mul"}}}
	if fmt.Sprint(cs) != fmt.Sprint(want) {
		t.Fatalf("clusters %+v, want %+v", cs, want)
	}
	if got, want := names(g), []string{"x:Placeholder", "out:Identity", "peek:Identity", "metalplug_cluster_0:_MetalplugCluster"}; !slices.Equal(got, want) {
		t.Fatalf("nodes %v, want %v", got, want)
	}
	n := find(g, "metalplug_cluster_0")
	if n.Device != dev || !slices.Equal(n.Input, []string{"x"}) {
		t.Errorf("cluster node device %q, inputs %q", n.Device, n.Input)
	}
	if !slices.Equal(typesAttr(n, "Tin"), []pb.DataType{f32}) || len(typesAttr(n, "Thost")) != 0 ||
		!slices.Equal(typesAttr(n, "Tout"), []pb.DataType{f32, f32}) {
		t.Errorf("Tin %v, Thost %v, Tout %v", typesAttr(n, "Tin"), typesAttr(n, "Thost"), typesAttr(n, "Tout"))
	}
	if !slices.Equal(stringsAttr(n, "inputs"), []string{"x"}) || len(stringsAttr(n, "host_inputs")) != 0 {
		t.Errorf("inputs %q, host_inputs %q", stringsAttr(n, "inputs"), stringsAttr(n, "host_inputs"))
	}
	// out comes before peek in the graph: c is output 0, b output 1.
	if got := stringsAttr(n, "outputs"); !slices.Equal(got, []string{"c", "b"}) {
		t.Errorf("outputs %q, want [c b]", got)
	}
	if !slices.Equal(find(g, "out").Input, []string{"metalplug_cluster_0"}) ||
		!slices.Equal(find(g, "peek").Input, []string{"metalplug_cluster_0:1"}) {
		t.Errorf("consumers read %q and %q", find(g, "out").Input, find(g, "peek").Input)
	}
}

// TestClusterMembersGraph: the members attribute parses, in topological
// order though the graph stores them otherwise, each member as it was but
// for its control inputs.
func TestClusterMembersGraph(t *testing.T) {
	a := node("a", "Neg", dev, f32, "x", "^k")
	b := node("b", "Relu", dev, f32, "a")
	c := withS(node("c", "Square", dev, f32, "b:0", "^a", "^k"), "_note", "kept")
	want := []*pb.NodeDef{
		node("a", "Neg", dev, f32, "x"),
		node("b", "Relu", dev, f32, "a"),
		withS(node("c", "Square", dev, f32, "b:0"), "_note", "kept"),
	}
	g := &pb.GraphDef{Node: []*pb.NodeDef{
		source("x", "Placeholder", dev, f32), c, node("out", "Identity", dev, f32, "c"), b,
		node("k", "NoOp", dev, f32), a,
	}}
	cs := Clusters(g, clusterOpts())
	if len(cs) != 1 || !slices.Equal(cs[0].Members, []string{"a", "b", "c"}) {
		t.Fatalf("clusters %+v", cs)
	}
	n := find(g, cs[0].Name)
	if !slices.Equal(n.Input, []string{"x", "^k"}) {
		t.Errorf("cluster inputs %q, want [x ^k]", n.Input)
	}
	members := membersGraph(t, n)
	if len(members.Node) != len(want) {
		t.Fatalf("members %v", names(members))
	}
	for i, m := range members.Node {
		if !proto.Equal(m, want[i]) {
			t.Errorf("member %d: %v, want %v", i, m, want[i])
		}
	}
}

// TestClusterNoCycle: a -> X -> b with X no member, and a -> b: joining a
// and b would make the cluster read X, which reads the cluster.
func TestClusterNoCycle(t *testing.T) {
	for name, bInputs := range map[string][]string{
		"data path":    {"a", "X"},
		"control path": {"a", "x", "^X"},
	} {
		g := &pb.GraphDef{Node: []*pb.NodeDef{
			source("x", "Placeholder", dev, f32),
			node("a1", "Neg", dev, f32, "x"),
			node("a", "Relu", dev, f32, "a1"),
			node("X", "Identity", dev, f32, "a"),
			node("b", "Add", dev, f32, bInputs...),
			node("b2", "Neg", dev, f32, "b"),
			node("out", "Identity", dev, f32, "b2"),
		}}
		cs := Clusters(g, clusterOpts())
		if len(cs) != 2 || clusterOf(cs, "a") == clusterOf(cs, "b") {
			t.Fatalf("%s: clusters %+v", name, cs)
		}
		// The second reads the first through its output, in its node's
		// inputs, its inputs attribute and its member's inputs alike.
		first, second := find(g, "metalplug_cluster_0"), find(g, "metalplug_cluster_1")
		if !slices.Equal(find(g, "X").Input, []string{"metalplug_cluster_0"}) || !slices.Contains(second.Input, "metalplug_cluster_0") ||
			!slices.Contains(stringsAttr(second, "inputs"), "metalplug_cluster_0") ||
			membersGraph(t, second).Node[0].Input[0] != "metalplug_cluster_0" {
			t.Errorf("%s: X reads %q; second cluster: inputs %q, members %v", name, find(g, "X").Input, second.Input, membersGraph(t, second).Node)
		}
		if !slices.Equal(stringsAttr(first, "outputs"), []string{"a"}) {
			t.Errorf("%s: first cluster's outputs %q", name, stringsAttr(first, "outputs"))
		}
	}
}

// TestClusterHostEdge: a reads b's value on the host (Reshape's shape), so a
// and b never share a cluster, though P connects them on the device.
func TestClusterHostEdge(t *testing.T) {
	g := &pb.GraphDef{Node: []*pb.NodeDef{
		source("s", "Placeholder", dev, i32),
		node("A", "Abs", dev, i32, "s"),
		node("P", "Neg", dev, i32, "A"),
		node("B", "Reshape", dev, i32, "P", "A"),
		node("D", "Relu", dev, i32, "B"),
		node("out", "Identity", dev, i32, "D"),
	}}
	wantClusters(t, g, "[{metalplug_cluster_0 [A P] [Abs Neg]} {metalplug_cluster_1 [B D] [Reshape Relu]}]")
	first, second := find(g, "metalplug_cluster_0"), find(g, "metalplug_cluster_1")
	if got := stringsAttr(first, "outputs"); !slices.Equal(got, []string{"P", "A"}) {
		t.Errorf("first cluster's outputs %q", got)
	}
	if !slices.Equal(second.Input, []string{"metalplug_cluster_0", "metalplug_cluster_0:1"}) ||
		!slices.Equal(stringsAttr(second, "inputs"), []string{"metalplug_cluster_0"}) ||
		!slices.Equal(stringsAttr(second, "host_inputs"), []string{"metalplug_cluster_0:1"}) ||
		!slices.Equal(typesAttr(second, "Tin"), []pb.DataType{i32}) || !slices.Equal(typesAttr(second, "Thost"), []pb.DataType{i32}) {
		t.Errorf("second cluster: %v", second)
	}
	if in := membersGraph(t, second).Node[0].Input; !slices.Equal(in, []string{"metalplug_cluster_0", "metalplug_cluster_0:1"}) {
		t.Errorf("B in the members reads %q", in)
	}
}

// TestClusterHostArg: a Const read on the host is a host arg; a tensor read
// both ways is in both lists.
func TestClusterHostArg(t *testing.T) {
	g := &pb.GraphDef{Node: []*pb.NodeDef{
		source("x", "Placeholder", dev, f32),
		source("shape", "Const", dev, i32),
		node("p", "Neg", dev, f32, "x"),
		node("r", "Reshape", dev, f32, "p", "shape"),
		node("q", "Relu", dev, f32, "r"),
		node("r2", "Reshape", dev, i32, "shape", "shape"),
		node("out", "Identity", dev, f32, "q"),
		node("out2", "Identity", dev, i32, "r2"),
	}}
	cs := Clusters(g, clusterOpts())
	if len(cs) != 1 || !slices.Equal(cs[0].Members, []string{"p", "r", "q"}) {
		t.Fatalf("clusters %+v", cs)
	}
	n := find(g, cs[0].Name)
	if !slices.Equal(n.Input, []string{"x", "shape"}) || !slices.Equal(stringsAttr(n, "inputs"), []string{"x"}) ||
		!slices.Equal(stringsAttr(n, "host_inputs"), []string{"shape"}) ||
		!slices.Equal(typesAttr(n, "Tin"), []pb.DataType{f32}) || !slices.Equal(typesAttr(n, "Thost"), []pb.DataType{i32}) {
		t.Errorf("cluster node %v", n)
	}

	o := clusterOpts()
	o.MinSize = 1
	cs = Clusters(g, o)
	n = find(g, clusterOf(cs, "r2"))
	if n == nil || !slices.Equal(n.Input, []string{"shape", "shape"}) || !slices.Equal(stringsAttr(n, "inputs"), []string{"shape"}) ||
		!slices.Equal(stringsAttr(n, "host_inputs"), []string{"shape"}) {
		t.Errorf("r2's cluster: %v", n)
	}
}

// chain is x -> a -> b -> c -> out, all on the device.
func chain() *pb.GraphDef {
	return &pb.GraphDef{Node: []*pb.NodeDef{
		source("x", "Placeholder", dev, f32),
		node("a", "Neg", dev, f32, "x"),
		node("b", "Relu", dev, f32, "a"),
		node("c", "Square", dev, f32, "b"),
		node("out", "Identity", dev, f32, "c"),
	}}
}

// TestClusterLeftOut: a chain broken in the middle has two single nodes
// left, which are no clusters.
func TestClusterLeftOut(t *testing.T) {
	cases := map[string]func(g *pb.GraphDef, o *ClusterOptions){
		"preserved":                     func(g *pb.GraphDef, o *ClusterOptions) { o.Preserve = []string{"b"} },
		"on the CPU":                    func(g *pb.GraphDef, o *ClusterOptions) { find(g, "b").Device = cpu },
		"on another device of the type": func(g *pb.GraphDef, o *ClusterOptions) { find(g, "b").Device = dev[:len(dev)-1] + "1" },
		"no lowering":                   func(g *pb.GraphDef, o *ClusterOptions) { find(g, "b").Op = "Identity" },
		"a cluster node": func(g *pb.GraphDef, o *ClusterOptions) {
			find(g, "b").Op = ClusterOp
			o.Member = func(n *pb.NodeDef) ([]int, bool) {
				if n.Op == ClusterOp {
					return nil, true // Clusters must not believe it
				}
				return member(n)
			}
		},
		"no Member": func(g *pb.GraphDef, o *ClusterOptions) {
			o.Member = nil
		},
	}
	for name, change := range cases {
		g, o := chain(), clusterOpts()
		change(g, &o)
		before := proto.Clone(g)
		if cs := Clusters(g, o); cs != nil || !proto.Equal(g, before) {
			t.Errorf("%s: clusters %+v, nodes %v", name, cs, names(g))
		}
	}

	g, o := chain(), clusterOpts()
	o.Preserve = []string{"c"}
	if cs := Clusters(g, o); fmt.Sprint(cs) != "[{metalplug_cluster_0 [a b] [Neg Relu]}]" || find(g, "c").Input[0] != "metalplug_cluster_0" {
		t.Errorf("c preserved: clusters %v, nodes %v", cs, names(g))
	}
}

func TestClusterControlEdges(t *testing.T) {
	g := &pb.GraphDef{Node: []*pb.NodeDef{
		source("x", "Placeholder", dev, f32),
		node("k", "NoOp", dev, f32),
		node("a", "Neg", dev, f32, "x", "^k"),
		node("b", "Relu", dev, f32, "a", "^a", "^k"),
		node("c", "Square", dev, f32, "b"),
		node("after", "NoOp", dev, f32, "^b", "^c", "^x"),
		node("out", "Identity", dev, f32, "b"),
	}}
	cs := Clusters(g, clusterOpts())
	if len(cs) != 1 || !slices.Equal(cs[0].Members, []string{"a", "b", "c"}) {
		t.Fatalf("clusters %+v", cs)
	}
	n := find(g, cs[0].Name)
	if !slices.Equal(n.Input, []string{"x", "^k"}) {
		t.Errorf("cluster inputs %q, want [x ^k]", n.Input)
	}
	// c goes only to a control edge: it is no output.
	if got := stringsAttr(n, "outputs"); !slices.Equal(got, []string{"b"}) {
		t.Errorf("outputs %q, want [b]", got)
	}
	if got := find(g, "after").Input; !slices.Equal(got, []string{"^metalplug_cluster_0", "^x"}) {
		t.Errorf("after reads %q", got)
	}
	for _, m := range membersGraph(t, n).Node {
		if slices.ContainsFunc(m.Input, func(in string) bool { return in[0] == '^' }) {
			t.Errorf("member %s keeps control inputs %q", m.Name, m.Input)
		}
	}
}

// loopGraph is a v1 while loop over pre's output, with a chain before it,
// one in its body, one after it. mix reads the body and, wrongly, the root
// frame directly.
func loopGraph() *pb.GraphDef {
	enter := withS(node("enter", "Enter", dev, f32, "pre2"), "frame_name", "loop")
	penter := withS(node("penter", "Enter", dev, pb.DataType_DT_BOOL, "p"), "frame_name", "loop")
	inner := withS(node("inner", "Enter", dev, f32, "body2"), "frame_name", "inner")
	return &pb.GraphDef{Node: []*pb.NodeDef{
		source("x", "Placeholder", dev, f32),
		source("p", "Placeholder", dev, pb.DataType_DT_BOOL),
		node("pre1", "Neg", dev, f32, "x"),
		node("pre2", "Relu", dev, f32, "pre1"),
		enter, penter,
		node("merge", "Merge", dev, f32, "enter", "next"),
		node("cond", "LoopCond", dev, f32, "penter"),
		node("sw", "Switch", dev, f32, "merge", "cond"),
		node("ident", "Identity", dev, f32, "sw:1"),
		node("body1", "Neg", dev, f32, "ident"),
		node("body2", "Relu", dev, f32, "body1"),
		node("next", "NextIteration", dev, f32, "body2"),
		inner,
		node("inner1", "Neg", dev, f32, "inner"),
		node("innerExit", "Exit", dev, f32, "inner1"),
		node("back", "Neg", dev, f32, "innerExit"),
		node("mix", "Add", dev, f32, "body2", "pre2"),
		node("exit", "Exit", dev, f32, "sw"),
		node("post1", "Neg", dev, f32, "exit"),
		node("post2", "Relu", dev, f32, "post1"),
		node("out", "Identity", dev, f32, "post2"),
		node("out2", "Identity", dev, f32, "mix"),
		node("out3", "Identity", dev, f32, "back"),
	}}
}

func TestClusterFrames(t *testing.T) {
	g := loopGraph()
	x := indexGraph(g)
	order, ok := x.topoOrder()
	if !ok {
		t.Fatal("the loop graph has no topological order")
	}
	frame, _ := controlFlow(x, order)
	of := func(name string) int { return frame[x.index[name]] }
	root, loop, inner := of("x"), of("body1"), of("inner1")
	if root != 0 || loop == root || inner == root || inner == loop {
		t.Fatalf("frames: root %d, loop %d, inner %d", root, loop, inner)
	}
	for name, want := range map[string]int{
		"pre2": root, "enter": loop, "merge": loop, "sw": loop, "body2": loop, "next": loop,
		"innerExit": loop, "back": loop, "exit": root, "post2": root, "mix": -1, "out2": -1,
	} {
		if of(name) != want {
			t.Errorf("%s in frame %d, want %d", name, of(name), want)
		}
	}
}

func TestClusterLoop(t *testing.T) {
	g := loopGraph()
	cs := wantClusters(t, g, "[{metalplug_cluster_0 [pre1 pre2] [Neg Relu]} {metalplug_cluster_1 [body1 body2] [Neg Relu]} {metalplug_cluster_2 [post1 post2] [Neg Relu]}]")
	if c := clusterOf(cs, "mix"); c != "" {
		t.Errorf("mix, with inputs in two frames, went into %s", c)
	}
	// The loop now runs through the body's cluster, and has no other cycle.
	if _, ok := indexGraph(g).topoOrder(); !ok || !slices.Equal(find(g, "next").Input, []string{"metalplug_cluster_1"}) ||
		!slices.Equal(find(g, "enter").Input, []string{"metalplug_cluster_0"}) {
		t.Errorf("acyclic but for the loop: %v; next reads %q, enter %q", ok, find(g, "next").Input, find(g, "enter").Input)
	}
}

// TestClusterLoopVariables: a loop's body reads each loop variable
// through its own Merge and Switch; all are live in every iteration, so
// what reads one variable clusters with what reads the other.
func TestClusterLoopVariables(t *testing.T) {
	g := &pb.GraphDef{Node: []*pb.NodeDef{
		source("x", "Placeholder", dev, f32),
		source("y", "Placeholder", dev, f32),
		source("p", "Placeholder", dev, pb.DataType_DT_BOOL),
		withS(node("ex", "Enter", dev, f32, "x"), "frame_name", "loop"),
		withS(node("ey", "Enter", dev, f32, "y"), "frame_name", "loop"),
		withS(node("ep", "Enter", dev, pb.DataType_DT_BOOL, "p"), "frame_name", "loop"),
		node("mx", "Merge", dev, f32, "ex", "nx"),
		node("my", "Merge", dev, f32, "ey", "ny"),
		node("cond", "LoopCond", dev, f32, "ep"),
		node("sx", "Switch", dev, f32, "mx", "cond"),
		node("sy", "Switch", dev, f32, "my", "cond"),
		node("ix", "Identity", dev, f32, "sx:1"),
		node("iy", "Identity", dev, f32, "sy:1"),
		node("a", "Neg", dev, f32, "ix"),
		node("b", "Relu", dev, f32, "iy"),
		node("c", "Add", dev, f32, "a", "b"),
		node("nx", "NextIteration", dev, f32, "c"),
		node("ny", "NextIteration", dev, f32, "b"),
		node("exit", "Exit", dev, f32, "sx"),
		node("exit2", "Exit", dev, f32, "sy"),
		node("a2", "Neg", dev, f32, "exit"),
		node("b2", "Neg", dev, f32, "exit2"),
		node("c2", "Add", dev, f32, "a2", "b2"),
		node("out", "Identity", dev, f32, "c2"),
	}}
	// Both Exits are live when the loop ends: what follows clusters too.
	wantClusters(t, g, "[{metalplug_cluster_0 [a b c] [Neg Relu Add]} {metalplug_cluster_1 [a2 b2 c2] [Neg Neg Add]}]")
}

// TestClusterSwitch: u is live whichever way sw goes, v only when it goes
// to port 1: they may not share a cluster, though an edge joins them.
// Each branch clusters, and so does what follows the Merge, which is live
// either way, unlike both, which reads both branches (and is never live).
func TestClusterSwitch(t *testing.T) {
	g := &pb.GraphDef{Node: []*pb.NodeDef{
		source("y", "Placeholder", dev, f32),
		source("pred", "Placeholder", dev, pb.DataType_DT_BOOL),
		node("u", "Neg", dev, f32, "y"),
		node("sw", "Switch", dev, f32, "y", "pred"),
		node("v", "Add", dev, f32, "u", "sw:1"),
		node("w", "Relu", dev, f32, "v"),
		node("f1", "Neg", dev, f32, "sw"),
		node("f2", "Relu", dev, f32, "f1"),
		node("both", "Add", dev, f32, "w", "f2"),
		node("m", "Merge", dev, f32, "w", "f2"),
		node("after1", "Add", dev, f32, "m", "both"),
		node("after2", "Relu", dev, f32, "after1"),
		node("out", "Identity", dev, f32, "after2"),
		node("out2", "Identity", dev, f32, "both"),
	}}
	wantClusters(t, g, "[{metalplug_cluster_0 [v w] [Add Relu]} {metalplug_cluster_1 [f1 f2] [Neg Relu]} {metalplug_cluster_2 [after1 after2] [Add Relu]}]")
}

// TestClusterSwitchesOfOnePredicate: the Switches of one loop or cond
// share their predicate, so what reads port 1 of either is live together
// and may share a cluster; a Switch on another predicate keeps its
// readers apart.
func TestClusterSwitchesOfOnePredicate(t *testing.T) {
	g := &pb.GraphDef{Node: []*pb.NodeDef{
		source("x", "Placeholder", dev, f32),
		source("y", "Placeholder", dev, f32),
		source("pred", "Placeholder", dev, pb.DataType_DT_BOOL),
		source("other", "Placeholder", dev, pb.DataType_DT_BOOL),
		node("s1", "Switch", dev, f32, "x", "pred:0"),
		node("s2", "Switch", dev, f32, "y", "pred"),
		node("s3", "Switch", dev, f32, "y", "other"),
		node("a", "Neg", dev, f32, "s1:1"),
		node("b", "Neg", dev, f32, "s2:1"),
		node("c", "Add", dev, f32, "a", "b"),
		node("d", "Add", dev, f32, "c", "s3:1"),
		node("out", "Identity", dev, f32, "d"),
	}}
	wantClusters(t, g, "[{metalplug_cluster_0 [a b c] [Neg Neg Add]}]")
}

func TestClusterMinSize(t *testing.T) {
	for minSize, want := range map[int]string{
		0: "[{metalplug_cluster_0 [a b c] [Neg Relu Square]}]",
		3: "[{metalplug_cluster_0 [a b c] [Neg Relu Square]}]",
		4: "[]",
	} {
		g, o := chain(), clusterOpts()
		o.MinSize = minSize
		before := proto.Clone(g)
		cs := Clusters(g, o)
		if fmt.Sprint(cs) != want || len(cs) == 0 && !proto.Equal(g, before) {
			t.Errorf("MinSize %d: clusters %v, want %v", minSize, cs, want)
		}
	}
	g := &pb.GraphDef{Node: []*pb.NodeDef{source("x", "Placeholder", dev, f32), node("a", "Neg", dev, f32, "x"), node("out", "Identity", dev, f32, "a")}}
	if cs := Clusters(g, clusterOpts()); cs != nil {
		t.Errorf("a lone node clustered: %v", cs)
	}
}

// TestClusterAgain: Grappler runs the pass again over its output, which
// then changes nothing, but may cluster new candidates after a cluster.
func TestClusterAgain(t *testing.T) {
	o := clusterOpts()
	o.Member = func(n *pb.NodeDef) ([]int, bool) {
		if n.Op == ClusterOp {
			return nil, true // Clusters must not believe it
		}
		return member(n)
	}
	g := chain()
	Clusters(g, o)
	first := proto.Clone(g).(*pb.GraphDef)
	if cs := Clusters(g, o); cs != nil || !proto.Equal(g, first) {
		t.Fatalf("the second run: %v, nodes %v", cs, names(g))
	}

	g.Node = append(g.Node,
		node("d", "Neg", dev, f32, "metalplug_cluster_0"),
		node("e", "Relu", dev, f32, "d"),
		node("out2", "Identity", dev, f32, "e"))
	cs := Clusters(g, o)
	if fmt.Sprint(cs) != "[{metalplug_cluster_1 [d e] [Neg Relu]}]" {
		t.Fatalf("clusters %v", cs)
	}
	n := find(g, "metalplug_cluster_1")
	if !slices.Equal(n.Input, []string{"metalplug_cluster_0"}) || !slices.Equal(typesAttr(n, "Tin"), []pb.DataType{f32}) {
		t.Errorf("the new cluster: %v", n)
	}
	if !proto.Equal(find(g, "metalplug_cluster_0"), find(first, "metalplug_cluster_0")) {
		t.Errorf("the first cluster changed: %v", find(g, "metalplug_cluster_0"))
	}

	g = chain()
	g.Node = append(g.Node, source("metalplug_cluster_0", "Placeholder", dev, f32))
	if cs := Clusters(g, o); len(cs) != 1 || cs[0].Name != "metalplug_cluster_1" {
		t.Errorf("with a node named metalplug_cluster_0: %v", cs)
	}
}

// TestClusterListOutputs: output k counts the tensors of list outputs.
func TestClusterListOutputs(t *testing.T) {
	idn := node("idn", "IdentityN", dev, f32, "a", "k")
	idn.Attr["T"] = &pb.AttrValue{Value: &pb.AttrValue_List{List: &pb.AttrValue_ListValue{Type: []pb.DataType{f32, i32}}}}
	g := &pb.GraphDef{Node: []*pb.NodeDef{
		source("x", "Placeholder", dev, f32),
		source("axis", "Const", dev, i32),
		source("k", "Placeholder", dev, i32),
		withI(node("split", "Split", cpu, f32, "axis", "x"), "num_split", 3),
		node("a", "Neg", dev, f32, "split:1"),
		idn,
		withI(node("parts", "Parts", dev, f32, "idn"), "N", 3),
		node("o1", "Identity", dev, i32, "idn:1"),
		node("o2", "Identity", dev, i32, "parts:3"),
		node("o3", "Identity", dev, f32, "parts:2"),
	}}
	cs := Clusters(g, clusterOpts())
	if len(cs) != 1 || !slices.Equal(cs[0].Members, []string{"a", "idn", "parts"}) {
		t.Fatalf("clusters %+v", cs)
	}
	n := find(g, cs[0].Name)
	if !slices.Equal(n.Input, []string{"split:1", "k"}) || !slices.Equal(typesAttr(n, "Tin"), []pb.DataType{f32, i32}) {
		t.Errorf("inputs %q, Tin %v", n.Input, typesAttr(n, "Tin"))
	}
	if !slices.Equal(stringsAttr(n, "outputs"), []string{"idn:1", "parts:3", "parts:2"}) ||
		!slices.Equal(typesAttr(n, "Tout"), []pb.DataType{i32, i32, f32}) {
		t.Errorf("outputs %q, Tout %v", stringsAttr(n, "outputs"), typesAttr(n, "Tout"))
	}
	for name, want := range map[string]string{"o1": "metalplug_cluster_0", "o2": "metalplug_cluster_0:1", "o3": "metalplug_cluster_0:2"} {
		if got := find(g, name).Input[0]; got != want {
			t.Errorf("%s reads %q, want %q", name, got, want)
		}
	}
}

func TestClusterUnknownTypes(t *testing.T) {
	cases := map[string]func(g *pb.GraphDef, o *ClusterOptions){
		"no definition of a member's op": func(g *pb.GraphDef, o *ClusterOptions) {
			o.OpDef = func(op string) *pb.OpDef {
				if op == "Square" {
					return nil
				}
				return clusterDefs[op]
			}
		},
		"no definition of the producer's op": func(g *pb.GraphDef, o *ClusterOptions) { find(g, "x").Op = "Mystery" },
		"no OpDef":                           func(g *pb.GraphDef, o *ClusterOptions) { o.OpDef = nil },
		"a type attribute missing":           func(g *pb.GraphDef, o *ClusterOptions) { delete(find(g, "c").Attr, "T") },
		"an output past the op's": func(g *pb.GraphDef, o *ClusterOptions) {
			find(g, "out").Input[0] = "c:1"
		},
		"a list's length missing": func(g *pb.GraphDef, o *ClusterOptions) {
			g.Node[0] = node("x", "Split", cpu, f32)
			find(g, "a").Input[0] = "x:1"
		},
	}
	for name, change := range cases {
		g, o := chain(), clusterOpts()
		change(g, &o)
		before := proto.Clone(g)
		if cs := Clusters(g, o); cs != nil || !proto.Equal(g, before) {
			t.Errorf("%s: clusters %+v, nodes %v", name, cs, names(g))
		}
	}
}

// trainingLike is n forward nodes, each read by the next and by a backward
// node, which reads the backward node after it: as a training step keeps
// activations for the gradients. Every gap-th forward node has no lowering.
func trainingLike(n, gap int) *pb.GraphDef {
	g := &pb.GraphDef{Node: []*pb.NodeDef{source("x", "Placeholder", dev, f32)}}
	prev := "x"
	for i := range n {
		op := []string{"Neg", "Relu"}[i%2]
		if gap > 0 && i%gap == gap-1 {
			op = "Identity"
		}
		name := fmt.Sprintf("f%d", i)
		g.Node = append(g.Node, node(name, op, dev, f32, prev))
		prev = name
	}
	for i := n - 1; i >= 0; i-- {
		g.Node = append(g.Node, node(fmt.Sprintf("b%d", i), "Mul", dev, f32, prev, fmt.Sprintf("f%d", i)))
		prev = fmt.Sprintf("b%d", i)
	}
	g.Node = append(g.Node, node("out", "Identity", dev, f32, prev))
	return g
}

// longChain is x -> n0 -> ... -> n<n-1> -> out, stored backwards, so that
// the stored order is no help.
func longChain(n int) *pb.GraphDef {
	g := &pb.GraphDef{Node: []*pb.NodeDef{source("x", "Placeholder", dev, f32)}}
	for i := range n {
		g.Node = append(g.Node, node(fmt.Sprintf("n%d", i), []string{"Neg", "Relu"}[i%2], dev, f32, g.Node[len(g.Node)-1].Name))
	}
	g.Node = append(g.Node, node("out", "Identity", dev, f32, g.Node[len(g.Node)-1].Name))
	slices.Reverse(g.Node)
	return g
}

// TestClusterLarge: 10,000 nodes, a chain and a training-like graph, go
// through in one pass (BenchmarkClusters says how fast), the same way
// every time, and leave a graph without cycles.
func TestClusterLarge(t *testing.T) {
	g := longChain(10000)
	cs := Clusters(g, clusterOpts())
	if len(cs) != 1 || len(cs[0].Members) != 10000 || cs[0].Members[0] != "n0" || cs[0].Members[9999] != "n9999" {
		t.Fatalf("chain: %d clusters", len(cs))
	}
	if n := find(g, cs[0].Name); !slices.Equal(n.Input, []string{"x"}) || !slices.Equal(find(g, "out").Input, []string{cs[0].Name}) {
		t.Errorf("chain: the cluster reads %q, out reads %q", n.Input, find(g, "out").Input)
	}

	a, b := trainingLike(5000, 50), trainingLike(5000, 50)
	ca, cb := Clusters(a, clusterOpts()), Clusters(b, clusterOpts())
	if len(ca) == 0 || fmt.Sprint(ca) != fmt.Sprint(cb) || !proto.Equal(a, b) {
		t.Fatalf("two runs over one graph differ (%d and %d clusters)", len(ca), len(cb))
	}
	members := 0
	for _, c := range ca {
		members += len(c.Members)
	}
	if _, ok := indexGraph(a).topoOrder(); !ok || members != 10000-100 {
		t.Errorf("training-like: %d members in %d clusters (want all 9,900 nodes with a lowering); acyclic: %v", members, len(ca), ok)
	}
}

func BenchmarkClusters(b *testing.B) {
	graphs := map[string]*pb.GraphDef{
		"chain":                    longChain(10000),
		"training-like":            trainingLike(5000, 0),
		"training-like,gaps":       trainingLike(5000, 50),
		"training-like,dense-gaps": trainingLike(5000, 3),
	}
	for _, name := range slices.Sorted(maps.Keys(graphs)) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				g := proto.Clone(graphs[name]).(*pb.GraphDef)
				b.StartTimer()
				Clusters(g, clusterOpts())
			}
		})
	}
}

func TestParseInput(t *testing.T) {
	for in, want := range map[string]string{"a": "a 0 false", "a:0": "a 0 false", "a:2": "a 2 false", "^a": "a 0 true", "a:b": "a:b 0 false"} {
		name, port, control := parseInput(in)
		if got := fmt.Sprint(name, " ", port, " ", control); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
	if canonical("a", 0) != "a" || canonical("a", 3) != "a:3" {
		t.Error("canonical names")
	}
}

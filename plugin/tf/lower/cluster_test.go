package lower

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
	pb "github.com/metalplug/metalplug/plugin/tfproto"
)

func nodeDef(name, op string, attrs map[string]*pb.AttrValue, inputs ...string) *pb.NodeDef {
	return &pb.NodeDef{Name: name, Op: op, Input: inputs, Attr: attrs}
}

func typeAttr(d pb.DataType) *pb.AttrValue { return &pb.AttrValue{Value: &pb.AttrValue_Type{Type: d}} }
func intAttr(i int64) *pb.AttrValue        { return &pb.AttrValue{Value: &pb.AttrValue_I{I: i}} }

// clusterAttrs is what graphpass.Clusters writes for these members.
func clusterAttrs(t testing.TB, members []*pb.NodeDef, inputs, hostInputs, outputs []string) attrs {
	t.Helper()
	b, err := proto.Marshal(&pb.GraphDef{Node: members})
	if err != nil {
		t.Fatal(err)
	}
	return A().S("members", string(b)).Ss("inputs", inputs...).Ss("host_inputs", hostInputs...).Ss("outputs", outputs...)
}

// exampleMembers: add = x + y; relu = Relu(add); r = Reshape(relu, shape);
// Split(0, r) into two, the second of which is an output.
func exampleMembers() []*pb.NodeDef {
	f := map[string]*pb.AttrValue{"T": typeAttr(pb.DataType_DT_FLOAT)}
	return []*pb.NodeDef{
		nodeDef("add", "AddV2", f, "x", "y:1"),
		nodeDef("relu", "Relu", f, "add:0", "^ignored"),
		nodeDef("r", "Reshape", map[string]*pb.AttrValue{"T": typeAttr(pb.DataType_DT_FLOAT), "Tshape": typeAttr(pb.DataType_DT_INT32)}, "relu", "shape"),
		nodeDef("split", "Split", map[string]*pb.AttrValue{"T": typeAttr(pb.DataType_DT_FLOAT), "num_split": intAttr(2)}, "dim", "r"),
	}
}

func TestClusterComposesMembersLowerings(t *testing.T) {
	x := val(ir.F32, ir.Shape{2, 3}, -1, 2, -3, 4, -5, 6)
	y := val(ir.F32, ir.Shape{2, 3}, 0.5, 0.5, 0.5, -8, 0.5, 0.5)
	shape := val(ir.I32, ir.Shape{2}, 6, 1)
	dim := val(ir.I32, nil, 0)
	a := clusterAttrs(t, exampleMembers(), []string{"x", "y:1"}, []string{"shape", "dim"}, []string{"split:1", "add"})
	k, _ := Lookup(ClusterOp)
	types := []ir.TensorType{x.Type, y.Type, shape.Type, dim.Type}
	l, err := k.Build(a.Attrs, types, map[int][]int64{2: {6, 1}, 3: {0}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Program.Params) != 2 || l.Rng {
		t.Fatalf("%d parameters (rng %v), want the two device inputs", len(l.Program.Params), l.Rng)
	}
	got, err := eval.Run(l.Program, []eval.Tensor{x, y})
	if err != nil {
		t.Fatal(err)
	}
	// The same ops one by one, each with its own lowering.
	add := run(t, "AddV2", A().T("T", ir.F32), x, y)[0]
	relu := run(t, "Relu", A().T("T", ir.F32), add)[0]
	r := run(t, "Reshape", A().T("T", ir.F32).T("Tshape", ir.I32), relu, shape)[0]
	split := run(t, "Split", A().T("T", ir.F32).I("num_split", 2), dim, r)
	for i, want := range []eval.Tensor{split[1], add} {
		if !got[i].Type.Shape.Equal(want.Type.Shape) || got[i].Type.DType != want.Type.DType {
			t.Fatalf("output %d is %v, want %v", i, got[i].Type, want.Type)
		}
		for j := range want.Type.Shape.Size() {
			if got[i].At(j) != want.At(j) {
				t.Errorf("output %d element %d = %v, want %v", i, j, got[i].At(j), want.At(j))
			}
		}
	}
}

func TestClusterErrorsNameTheMember(t *testing.T) {
	k, _ := Lookup(ClusterOp)
	f32x := []ir.TensorType{f32(2, 3), f32(2, 3), i32(2), i32()}
	host := map[int][]int64{2: {6, 1}, 3: {0}}
	for _, c := range []struct {
		name string
		a    attrs
		want []string
	}{
		{"members not a GraphDef", A().S("members", "\xff\xff").Ss("inputs", "x", "y:1").Ss("host_inputs", "shape", "dim").Ss("outputs", "add"),
			[]string{"members", "GraphDef"}},
		{"input not given", clusterAttrs(t, exampleMembers(), []string{"x", "z"}, []string{"shape", "dim"}, []string{"add"}),
			[]string{"member add", "y:1"}},
		{"host input not given", clusterAttrs(t, exampleMembers(), []string{"x", "y:1"}, []string{"dim", "shape2"}, []string{"add"}),
			[]string{"member r", "host", "shape"}},
		{"output not produced", clusterAttrs(t, exampleMembers(), []string{"x", "y:1"}, []string{"shape", "dim"}, []string{"split:2"}),
			[]string{"output 0", "split:2"}},
		{"a member's own error", clusterAttrs(t, exampleMembers(), []string{"x", "y:1"}, []string{"shape", "dim"}, []string{"add"}),
			[]string{"Reshape", "member r"}}, // shape [6,1] of 6 elements is fine, [7,1] below is not
	} {
		h := host
		if c.name == "a member's own error" {
			h = map[int][]int64{2: {7, 1}, 3: {0}}
		}
		_, err := k.Build(c.a.Attrs, f32x, h, nil)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", c.name, err, w)
			}
		}
	}
}

func TestClusterMember(t *testing.T) {
	f := func(d pb.DataType) map[string]*pb.AttrValue { return map[string]*pb.AttrValue{"T": typeAttr(d)} }
	reshape := map[string]*pb.AttrValue{"T": typeAttr(pb.DataType_DT_FLOAT), "Tshape": typeAttr(pb.DataType_DT_INT32)}
	for _, c := range []struct {
		n    *pb.NodeDef
		ok   bool
		host []int
	}{
		{nodeDef("a", "Relu", f(pb.DataType_DT_FLOAT), "x", "^c"), true, nil},
		{nodeDef("a", "Reshape", reshape, "x", "s"), true, []int{1}},
		{nodeDef("a", "Relu", f(pb.DataType_DT_DOUBLE), "x"), false, nil},            // float64 is not registered on the device
		{nodeDef("a", "Relu", nil, "x"), false, nil},                                 // T missing
		{nodeDef("a", "Where", f(pb.DataType_DT_FLOAT), "x"), false, nil},            // reads its input on the host
		{nodeDef("a", "NoSuchOp", f(pb.DataType_DT_FLOAT), "x"), false, nil},         // no lowering
		{nodeDef("a", ClusterOp, f(pb.DataType_DT_FLOAT), "x"), false, nil},          // clusters do not nest
		{nodeDef("a", "AssignVariableOp", f(pb.DataType_DT_FLOAT), "x"), false, nil}, // TensorFlow owns variables
	} {
		host, ok := ClusterMember(c.n)
		if ok != c.ok || len(host) != len(c.host) || ok && len(host) > 0 && host[0] != c.host[0] {
			t.Errorf("%s %v: (%v, %v), want (%v, %v)", c.n.Op, c.n.Attr, host, ok, c.host, c.ok)
		}
	}
}

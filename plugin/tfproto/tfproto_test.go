package tfproto

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
)

func TestGraphDefRoundTrips(t *testing.T) {
	in := &GraphDef{
		Node: []*NodeDef{{
			Name:   "matmul",
			Op:     "MatMul",
			Input:  []string{"a", "b:0", "^init"},
			Device: "/job:localhost/replica:0/task:0/device:METALPLUG_HOST:0",
			Attr: map[string]*AttrValue{
				"T":       {Value: &AttrValue_Type{Type: DataType_DT_FLOAT}},
				"_labels": {Value: &AttrValue_List{List: &AttrValue_ListValue{S: [][]byte{[]byte("x"), []byte("y")}}}},
			},
		}},
		Versions: &VersionDef{Producer: 2105, MinConsumer: 12},
	}
	b, err := proto.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out := &GraphDef{}
	if err := proto.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(in, out) {
		t.Fatalf("round trip changed the graph:\n in %v\nout %v", in, out)
	}
	if len(out.GetNode()) != 1 {
		t.Fatalf("%d nodes after the round trip, want 1", len(out.GetNode()))
	}
	n := out.GetNode()[0]
	if n.GetOp() != "MatMul" || n.GetName() != "matmul" || n.GetDevice() != in.Node[0].Device {
		t.Errorf("node op %q name %q device %q", n.GetOp(), n.GetName(), n.GetDevice())
	}
	if !slices.Equal(n.GetInput(), []string{"a", "b:0", "^init"}) {
		t.Errorf("inputs %q", n.GetInput())
	}
	if got := n.GetAttr()["T"].GetType(); got != DataType_DT_FLOAT {
		t.Errorf("attr T = %v, want DT_FLOAT", got)
	}
	var labels []string
	for _, s := range n.GetAttr()["_labels"].GetList().GetS() {
		labels = append(labels, string(s))
	}
	if !slices.Equal(labels, []string{"x", "y"}) {
		t.Errorf("attr _labels = %q, want [x y]", labels)
	}
	if out.GetVersions().GetProducer() != 2105 || out.GetVersions().GetMinConsumer() != 12 {
		t.Errorf("versions %v", out.GetVersions())
	}
}

func TestXSpaceMarshals(t *testing.T) {
	space := &XSpace{
		Planes: []*XPlane{{
			Id:            1,
			Name:          "/device:METALPLUG_HOST:0",
			EventMetadata: map[int64]*XEventMetadata{1: {Id: 1, Name: "MatMul"}},
			Lines: []*XLine{{
				Id:          1,
				Name:        "stream 0",
				TimestampNs: 1_000,
				Events:      []*XEvent{{MetadataId: 1, Data: &XEvent_OffsetPs{OffsetPs: 5_000}, DurationPs: 2_000_000}},
			}},
		}},
		Hostnames: []string{"localhost"},
	}
	b, err := proto.Marshal(space)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 {
		t.Fatal("an XSpace with a plane marshals to nothing")
	}
	back := &XSpace{}
	if err := proto.Unmarshal(b, back); err != nil {
		t.Fatal(err)
	}
	ev := back.GetPlanes()[0].GetLines()[0].GetEvents()[0]
	if ev.GetOffsetPs() != 5_000 || ev.GetDurationPs() != 2_000_000 || ev.GetMetadataId() != 1 {
		t.Errorf("event after a round trip: %v", ev)
	}
	if !proto.Equal(space, back) {
		t.Errorf("round trip changed the space:\n in %v\nout %v", space, back)
	}
}

package protos

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// smallFiles are two hand-made proto files, the importer first: demo/graph.proto's
// Graph holds a repeated demo.Node of demo/node.proto.
func smallFiles() []*descriptorpb.FileDescriptorProto {
	node := &descriptorpb.FileDescriptorProto{
		Name:    proto.String("demo/node.proto"),
		Package: proto.String("demo"),
		Syntax:  proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("Node"),
			Field: []*descriptorpb.FieldDescriptorProto{{
				Name: proto.String("op"), JsonName: proto.String("op"), Number: proto.Int32(1),
				Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
				Type:  descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(),
			}},
		}},
	}
	graph := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("demo/graph.proto"),
		Package:    proto.String("demo"),
		Syntax:     proto.String("proto3"),
		Dependency: []string{"demo/node.proto"},
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("Graph"),
			Field: []*descriptorpb.FieldDescriptorProto{{
				Name: proto.String("node"), JsonName: proto.String("node"), Number: proto.Int32(1),
				Label:    descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum(),
				Type:     descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(),
				TypeName: proto.String(".demo.Node"),
			}},
		}},
	}
	return []*descriptorpb.FileDescriptorProto{graph, node}
}

func TestRequestOrdersAndMapsEveryFile(t *testing.T) {
	req, err := Request(smallFiles(), "example.com/gen/demopb")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, f := range req.ProtoFile {
		order = append(order, f.GetName())
	}
	if got, want := strings.Join(order, " "), "demo/node.proto demo/graph.proto"; got != want {
		t.Errorf("ProtoFile order %q, want %q (dependencies first)", got, want)
	}
	if got, want := strings.Join(req.FileToGenerate, " "), "demo/node.proto demo/graph.proto"; got != want {
		t.Errorf("FileToGenerate %q, want %q", got, want)
	}
	for _, p := range []string{"paths=source_relative", "Mdemo/node.proto=example.com/gen/demopb;demopb", "Mdemo/graph.proto=example.com/gen/demopb;demopb"} {
		if !strings.Contains(","+req.GetParameter()+",", ","+p+",") {
			t.Errorf("parameter %q lacks %q", req.GetParameter(), p)
		}
	}
	if _, err := Request(smallFiles()[:1], "example.com/gen/demopb"); err == nil || !strings.Contains(err.Error(), "demo/node.proto") {
		t.Errorf("a missing import: err %v, want one naming demo/node.proto", err)
	}
}

// TestGenerateSmallDescriptor runs protoc-gen-go (the go.mod tool) on the
// hand-made files: one flat Go file per proto file, in one package, with
// the messages as Go types.
func TestGenerateSmallDescriptor(t *testing.T) {
	req, err := Request(smallFiles(), "example.com/gen/demopb")
	if err != nil {
		t.Fatal(err)
	}
	files, err := Run(".", req)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Errorf("generated %d files, want 2: %v", len(files), sortedNames(files))
	}
	for name, want := range map[string][]string{
		"demo_node.pb.go":  {"package demopb", "type Node struct", "func (x *Node) GetOp() string"},
		"demo_graph.pb.go": {"package demopb", "type Graph struct", "Node []*Node", "source: demo/graph.proto"},
	} {
		src, ok := files[name]
		if !ok {
			t.Errorf("no %s among %v", name, sortedNames(files))
			continue
		}
		// Compare with runs of blanks folded: gofmt aligns the struct's fields.
		flat := strings.Join(strings.Fields(string(src)), " ")
		for _, w := range want {
			if !strings.Contains(flat, w) {
				t.Errorf("%s lacks %q", name, w)
			}
		}
	}

	// The staleness check passes on what was written and names what differs.
	dir := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "doc.go"), []byte("package demopb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := compare(dir, files); err != nil {
		t.Errorf("fresh files: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "demo_node.pb.go"), []byte("package demopb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "old.pb.go"), []byte("package demopb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	delete(files, "demo_graph.pb.go")
	err = compare(dir, files)
	if err == nil {
		t.Fatal("stale files passed the check")
	}
	for _, w := range []string{"demo_node.pb.go (differs)", "old.pb.go (no longer generated)", "go tool mage protos"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
}

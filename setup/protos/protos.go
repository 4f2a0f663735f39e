// Package protos generates plugin/tfproto, the Go types of the TensorFlow
// protos the plugin reads and writes (the Grappler optimizer's GraphDef, the
// profiler's XSpace), from the .proto definitions the pinned TensorFlow
// ships. The wheel has no .proto files, but each of its generated Python
// modules (*_pb2.py) carries its file's serialized FileDescriptorProto: a
// script run by that TensorFlow's Python collects the roots' descriptors and
// their transitive dependencies, and protoc-gen-go (a tool of go.mod), run
// as a protoc plugin without protoc, turns them into one Go package.
package protos

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"
)

// Dir is the generated package, relative to the repository root.
const Dir = "plugin/tfproto"

// ImportPath is the generated package's import path.
const ImportPath = "github.com/metalplug/metalplug/plugin/tfproto"

// Root is a proto file the plugin needs, and the Python modules that may
// hold it, tried in order.
type Root struct {
	File    string
	Modules []string
}

// Roots are the files generated, with all they import.
var Roots = []Root{
	{File: "tensorflow/core/framework/graph.proto", Modules: []string{"tensorflow.core.framework.graph_pb2"}},
	{File: "tsl/profiler/protobuf/xplane.proto", Modules: []string{"tensorflow.tsl.profiler.protobuf.xplane_pb2", "tsl.profiler.protobuf.xplane_pb2"}},
}

//go:embed extract.py
var extractScript string

// Extract runs python (the pinned TensorFlow's) to read the descriptors of
// roots and of their transitive dependencies. It also returns, for each
// root, the Python module it was read from.
func Extract(python string, roots []Root) ([]*descriptorpb.FileDescriptorProto, map[string]string, error) {
	args := []string{"-c", extractScript}
	for _, r := range roots {
		args = append(args, r.File+"="+strings.Join(r.Modules, ","))
	}
	cmd := exec.Command(python, args...)
	cmd.Env = append(os.Environ(), "TF_CPP_MIN_LOG_LEVEL=3")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, nil, fmt.Errorf("reading TensorFlow's proto descriptors with %s: %v\n%s", python, err, stderr.Bytes())
	}
	var out struct {
		Modules map[string]string
		Files   []struct{ Name, Descriptor string }
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return nil, nil, fmt.Errorf("reading TensorFlow's proto descriptors with %s: %v", python, err)
	}
	files := make([]*descriptorpb.FileDescriptorProto, len(out.Files))
	for i, f := range out.Files {
		raw, err := base64.StdEncoding.DecodeString(f.Descriptor)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %v", f.Name, err)
		}
		files[i] = &descriptorpb.FileDescriptorProto{}
		if err := proto.Unmarshal(raw, files[i]); err != nil {
			return nil, nil, fmt.Errorf("%s: %v", f.Name, err)
		}
		if files[i].GetName() != f.Name {
			return nil, nil, fmt.Errorf("the descriptor of %s names itself %s", f.Name, files[i].GetName())
		}
	}
	return files, out.Modules, nil
}

// Request is the CodeGeneratorRequest that has protoc-gen-go generate every
// file of files into the one Go package importPath (named after its last
// element), each output at the proto file's own path. The files are put in
// dependency order (each after the files it imports, as protoc sends them),
// and every import must be among them.
func Request(files []*descriptorpb.FileDescriptorProto, importPath string) (*pluginpb.CodeGeneratorRequest, error) {
	byName := map[string]*descriptorpb.FileDescriptorProto{}
	for _, f := range files {
		if byName[f.GetName()] != nil {
			return nil, fmt.Errorf("%s is given twice", f.GetName())
		}
		byName[f.GetName()] = f
	}
	var ordered []*descriptorpb.FileDescriptorProto
	state := map[string]int{} // 1: being visited, 2: done
	var visit func(f *descriptorpb.FileDescriptorProto) error
	visit = func(f *descriptorpb.FileDescriptorProto) error {
		switch state[f.GetName()] {
		case 1:
			return fmt.Errorf("%s imports itself through its dependencies", f.GetName())
		case 2:
			return nil
		}
		state[f.GetName()] = 1
		for _, dep := range f.GetDependency() {
			d := byName[dep]
			if d == nil {
				return fmt.Errorf("%s imports %s, which is not among the files", f.GetName(), dep)
			}
			if err := visit(d); err != nil {
				return err
			}
		}
		state[f.GetName()] = 2
		ordered = append(ordered, f)
		return nil
	}
	for _, f := range files {
		if err := visit(f); err != nil {
			return nil, err
		}
	}
	params := []string{"paths=source_relative"}
	req := &pluginpb.CodeGeneratorRequest{ProtoFile: ordered}
	for _, f := range ordered {
		req.FileToGenerate = append(req.FileToGenerate, f.GetName())
		params = append(params, "M"+f.GetName()+"="+importPath+";"+path.Base(importPath))
	}
	req.Parameter = proto.String(strings.Join(params, ","))
	return req, nil
}

// Run pipes req to protoc-gen-go (`go tool protoc-gen-go`, run in dir, a
// directory of this module) and returns the files it wrote, by flat name:
// the proto file's path with its slashes as underscores
// (tensorflow/core/framework/graph.proto gives
// tensorflow_core_framework_graph.pb.go).
func Run(dir string, req *pluginpb.CodeGeneratorRequest) (map[string][]byte, error) {
	in, err := proto.Marshal(req)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("go", "tool", "protoc-gen-go")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go tool protoc-gen-go: %v\n%s", err, stderr.Bytes())
	}
	resp := &pluginpb.CodeGeneratorResponse{}
	if err := proto.Unmarshal(stdout.Bytes(), resp); err != nil {
		return nil, fmt.Errorf("go tool protoc-gen-go: reading its response: %v", err)
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("go tool protoc-gen-go: %s", resp.GetError())
	}
	out := map[string][]byte{}
	for _, f := range resp.File {
		if f.GetInsertionPoint() != "" {
			return nil, fmt.Errorf("go tool protoc-gen-go: unexpected insertion point %s in %s", f.GetInsertionPoint(), f.GetName())
		}
		name := strings.ReplaceAll(f.GetName(), "/", "_")
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("go tool protoc-gen-go: two files flatten to %s", name)
		}
		out[name] = []byte(f.GetContent())
	}
	return out, nil
}

// Generate reads the roots' descriptors with python and returns the files
// of plugin/tfproto protoc-gen-go makes of them, by name, and the Python
// module each root was read from. root is the repository's root.
func Generate(root, python string) (map[string][]byte, map[string]string, error) {
	files, modules, err := Extract(python, Roots)
	if err != nil {
		return nil, nil, err
	}
	req, err := Request(files, ImportPath)
	if err != nil {
		return nil, nil, err
	}
	out, err := Run(root, req)
	return out, modules, err
}

// generated reports whether name, a file of Dir, is one Generate writes.
func generated(name string) bool { return strings.HasSuffix(name, ".pb.go") }

// Write regenerates plugin/tfproto under root from python's TensorFlow,
// removing generated files no longer made, and returns the names of the
// files written.
func Write(root, python string) ([]string, map[string]string, error) {
	files, modules, err := Generate(root, python)
	if err != nil {
		return nil, nil, err
	}
	dir := filepath.Join(root, Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		if _, keep := files[e.Name()]; !keep && generated(e.Name()) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return nil, nil, err
			}
		}
	}
	names := sortedNames(files)
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			return nil, nil, err
		}
	}
	return names, modules, nil
}

// Check regenerates plugin/tfproto in memory from python's TensorFlow and
// fails, saying to run `go tool mage protos`, when the files under root
// differ.
func Check(root, python string) error {
	files, _, err := Generate(root, python)
	if err != nil {
		return err
	}
	return compare(filepath.Join(root, Dir), files)
}

// compare fails when the generated files in dir are not exactly want.
func compare(dir string, want map[string][]byte) error {
	var stale []string
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	have := map[string]bool{}
	for _, e := range entries {
		if !generated(e.Name()) {
			continue
		}
		have[e.Name()] = true
		if _, ok := want[e.Name()]; !ok {
			stale = append(stale, e.Name()+" (no longer generated)")
		}
	}
	for _, name := range sortedNames(want) {
		if !have[name] {
			stale = append(stale, name+" (missing)")
			continue
		}
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if !bytes.Equal(got, want[name]) {
			stale = append(stale, name+" (differs)")
		}
	}
	if len(stale) > 0 {
		sort.Strings(stale)
		return fmt.Errorf("%s is stale against the pinned TensorFlow's protos: %s; run `go tool mage protos` and commit the result",
			filepath.ToSlash(dir), strings.Join(stale, ", "))
	}
	return nil
}

func sortedNames(files map[string][]byte) []string {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

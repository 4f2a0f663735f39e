package docs

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestNewRegistryCompactsAndRoundTrips(t *testing.T) {
	raw := []RawKernel{
		{Op: "Cast", Device: "GPU", Constraints: map[string][]string{"SrcT": {"float32"}, "DstT": {"int32"}}},
		{Op: "Cast", Device: "GPU", Constraints: map[string][]string{"SrcT": {"float16"}, "DstT": {"int32"}}},
		{Op: "Cast", Device: "GPU", Constraints: map[string][]string{"SrcT": {"float32"}, "DstT": {"int64"}}},
		{Op: "Cast", Device: "GPU", Constraints: map[string][]string{"SrcT": {"float16"}, "DstT": {"int64"}}},
		{Op: "Cast", Device: "GPU", Constraints: map[string][]string{"SrcT": {"bool"}, "DstT": {"bool"}}},
		{Op: "Cast", Device: "GPU", Constraints: map[string][]string{"SrcT": {"bool"}, "DstT": {"bool"}}}, // another priority: a duplicate
		{Op: "Cast", Device: "CPU", Constraints: map[string][]string{"SrcT": {"float64"}, "DstT": {"bool"}}},
		{Op: "Cast", Device: "GPU", Constraints: map[string][]string{"SrcT": {"int8"}, "DstT": {"int8"}}, Label: "special"},
		{Op: "Identity", Device: "DEFAULT", Constraints: map[string][]string{"T": {"int32", "float32"}}},
		{Op: "Identity", Device: "GPU", Constraints: map[string][]string{}},
	}
	src := RegistrySource{Distribution: "tensorflow", Version: "9.9.0", Platform: "linux-x86_64", GraphDefVersion: 100}
	reg := NewRegistry(src, raw, map[string]OpFacts{"Cast": {Deprecated: 3}, "Unused": {Ref: true}})
	want := map[string]RegistryOp{
		"Cast": {GPU: []Registration{
			{"DstT": {"bool"}, "SrcT": {"bool"}},
			{"DstT": {"int32", "int64"}, "SrcT": {"float16", "float32"}},
		}, OpFacts: OpFacts{Deprecated: 3}},
		"Identity": {GPU: []Registration{{}}, Default: []Registration{{"T": {"float32", "int32"}}}},
	}
	if !reflect.DeepEqual(reg.Ops, want) {
		t.Fatalf("registry\n%#v\nwant\n%#v", reg.Ops, want)
	}
	b, err := reg.Encode()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], `"Cast":`) || !strings.HasPrefix(lines[2], `"Identity":`) {
		t.Errorf("encoded as\n%s\nwant a header line, one line per op in order, and a closing line", b)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, RegistryPath), b, 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := ReadRegistry(root)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, reg) {
		t.Errorf("read back\n%#v\nwant\n%#v", back, reg)
	}
	if !back.Removed("Cast") || back.Removed("Identity") {
		t.Errorf("Removed: Cast %v, Identity %v; want true, false", back.Removed("Cast"), back.Removed("Identity"))
	}
}

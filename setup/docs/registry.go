package docs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// RegistryPath is the committed snapshot of TensorFlow's GPU kernel
// registry that docs/coverage.md is measured against. `go tool mage
// coverageRegistry` refreshes it from the full `tensorflow` wheel (the one
// with CUDA kernels), which CI does not download.
const RegistryPath = "docs/tf_gpu_registry.json"

// The device types of the snapshot: TensorFlow's CUDA kernels, and the
// DEVICE_DEFAULT kernels (device type "DEFAULT" in the registry) that
// every device type, ours too, inherits.
const (
	DeviceGPU     = "GPU"
	DeviceDefault = "DEFAULT"
)

// Registration is one kernel's type constraints: attribute -> the dtypes it
// allows, sorted. An empty one allows any type for every attribute.
type Registration map[string][]string

// key is a stable spelling of r, for sorting and deduplicating.
func (r Registration) key() string {
	attrs := slices.Sorted(maps.Keys(r))
	parts := make([]string, len(attrs))
	for i, a := range attrs {
		parts[i] = a + "=" + strings.Join(r[a], ",")
	}
	return strings.Join(parts, ";")
}

// OpFacts is what an op's definition says that decides whether any
// program can use it.
type OpFacts struct {
	// Ref: an input or output is a reference (a TF1 reference variable's
	// tensor), which only reference variables make.
	Ref bool `json:"ref,omitempty"`
	// Deprecated is the GraphDef version from which TensorFlow refuses to
	// build the op (0: never).
	Deprecated int `json:"deprecated,omitempty"`
}

// RegistryOp is an op's registrations on each device type of the snapshot,
// and the facts of its definition.
type RegistryOp struct {
	GPU     []Registration `json:"GPU,omitempty"`
	Default []Registration `json:"DEFAULT,omitempty"`
	OpFacts
}

// RegistrySource says which TensorFlow a snapshot was read from.
type RegistrySource struct {
	Distribution string `json:"distribution"`
	Version      string `json:"version"`
	Platform     string `json:"platform"`
	// GraphDefVersion is the version of the graphs that TensorFlow builds:
	// an op deprecated at or before it cannot be built.
	GraphDefVersion int `json:"graph_def_version"`
}

// Registry is the snapshot: which TensorFlow it was read from, and every op
// with a GPU or DEVICE_DEFAULT kernel.
type Registry struct {
	RegistrySource
	Ops map[string]RegistryOp `json:"ops"`
}

// Removed reports whether TensorFlow refuses to build op: it was deprecated
// at or before the GraphDef version of the snapshot's TensorFlow.
func (reg *Registry) Removed(op string) bool {
	d := reg.Ops[op].Deprecated
	return d > 0 && d <= reg.GraphDefVersion
}

// RawKernel is one KernelDef as tasks/coverage_registry.py prints it.
type RawKernel struct {
	Op          string              `json:"op"`
	Device      string              `json:"device"`
	Constraints map[string][]string `json:"constraints"`
	Label       string              `json:"label"`
}

// NewRegistry builds the snapshot from the kernels TensorFlow listed and
// the facts of their ops' definitions (an op without a definition has none),
// keeping the GPU and DEFAULT ones, with each registration's dtypes sorted
// and duplicates (kernels that differ only in host-memory arguments or
// priority) dropped. A labelled kernel runs only for nodes that ask for its
// label, which no ordinary program does, so it is left out.
func NewRegistry(src RegistrySource, kernels []RawKernel, facts map[string]OpFacts) *Registry {
	reg := &Registry{RegistrySource: src, Ops: map[string]RegistryOp{}}
	seen := map[string]bool{}
	for _, k := range kernels {
		if k.Label != "" || k.Device != DeviceGPU && k.Device != DeviceDefault {
			continue
		}
		r := Registration{}
		for a, ts := range k.Constraints {
			r[a] = dtypeSet(ts)
		}
		id := k.Op + "\x00" + k.Device + "\x00" + r.key()
		if seen[id] {
			continue
		}
		seen[id] = true
		o := reg.Ops[k.Op]
		o.OpFacts = facts[k.Op]
		if k.Device == DeviceGPU {
			o.GPU = append(o.GPU, r)
		} else {
			o.Default = append(o.Default, r)
		}
		reg.Ops[k.Op] = o
	}
	for op, o := range reg.Ops {
		o.GPU, o.Default = compact(o.GPU), compact(o.Default)
		reg.Ops[op] = o
	}
	return reg
}

// compact merges registrations that differ in the dtypes of one attribute
// only (TensorFlow registers a kernel per dtype: {T: [float32]} and {T:
// [float16]} become {T: [float16, float32]}), until none do, and sorts
// them. The registrations take exactly the combinations they took before;
// sorting first makes the result independent of the order TensorFlow
// listed its kernels in.
func compact(rs []Registration) []Registration {
	sort.Slice(rs, func(i, j int) bool { return rs[i].key() < rs[j].key() })
	for merged := true; merged; {
		merged = false
		for i := 0; i < len(rs); i++ {
			for j := i + 1; j < len(rs); {
				a, ok := differInOne(rs[i], rs[j])
				if !ok {
					j++
					continue
				}
				rs[i][a] = dtypeSet(rs[i][a], rs[j][a]...)
				rs = slices.Delete(rs, j, j+1)
				merged = true
			}
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].key() < rs[j].key() })
	return rs
}

// dtypeSet is ts and more, sorted, each once.
func dtypeSet(ts []string, more ...string) []string {
	return slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(ts), more...))))
}

// differInOne reports the one attribute whose dtypes differ between r and
// s, when they constrain the same attributes and agree on all the others.
func differInOne(r, s Registration) (string, bool) {
	if len(r) != len(s) {
		return "", false
	}
	diff := ""
	for a, ts := range r {
		us, ok := s[a]
		if !ok {
			return "", false
		}
		if !slices.Equal(ts, us) {
			if diff != "" {
				return "", false
			}
			diff = a
		}
	}
	return diff, diff != ""
}

// GPUOps is every op with a GPU kernel, sorted.
func (reg *Registry) GPUOps() []string {
	var ops []string
	for op, o := range reg.Ops {
		if len(o.GPU) > 0 {
			ops = append(ops, op)
		}
	}
	sort.Strings(ops)
	return ops
}

// Encode writes the snapshot as it is committed: one op a line, in op
// order, so that a refresh shows in a diff as the ops that changed.
func (reg *Registry) Encode() ([]byte, error) {
	var b bytes.Buffer
	head, err := json.Marshal(reg.RegistrySource)
	if err != nil {
		return nil, err
	}
	b.Write(head[:len(head)-1]) // without the closing brace: "ops" follows
	b.WriteString(`,"ops":{`)
	ops := slices.Sorted(maps.Keys(reg.Ops))
	for i, op := range ops {
		name, _ := json.Marshal(op)
		line, err := json.Marshal(reg.Ops[op])
		if err != nil {
			return nil, err
		}
		sep := ","
		if i == len(ops)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "\n%s:%s%s", name, line, sep)
	}
	b.WriteString("\n}}\n")
	return b.Bytes(), nil
}

// ReadRegistry reads the committed snapshot under root.
func ReadRegistry(root string) (*Registry, error) {
	path := filepath.Join(root, RegistryPath)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%v: run `go tool mage coverageRegistry`", err)
	}
	var reg Registry
	if err := json.Unmarshal(b, &reg); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if reg.Version == "" || len(reg.GPUOps()) == 0 {
		return nil, fmt.Errorf("%s: no TensorFlow version or no GPU kernels", path)
	}
	return &reg, nil
}

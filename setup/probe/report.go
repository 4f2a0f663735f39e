package probe

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Text is the report as a person reads it.
func (r *Report) Text() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	yes := func(v bool) string {
		if v {
			return "yes"
		}
		return "no"
	}
	w("interpreter        %s (Python %s, from %s%s)", r.Interpreter.Path, r.Interpreter.Version, r.Interpreter.Source, map[bool]string{true: ", a venv"}[r.Interpreter.Venv])
	if j := r.Jax; j != nil {
		w("jax                %s, jaxlib %s (%s)", j.Version, j.JaxlibVersion, j.JaxlibDir)
		w("stablehlo          %s to %s (the versions this jaxlib writes)", j.StablehloMinimum, j.StablehloCurrent)
		w("pjrt api           %s (this jaxlib's), plugins from %s accepted (measured)", j.PJRTFramework, j.PJRTMinimum)
	} else {
		w("jax                not installed: the library has no JAX frontend")
	}
	if !r.HasTensorFlow() {
		w("tensorflow         not installed: the library has no TensorFlow frontend")
		return b.String()
	}
	w("tensorflow         %s %s", r.TensorFlow.Distribution, r.TensorFlow.Version)
	w("include dir        %s", r.TensorFlow.IncludeDir)
	w("lib dir            %s", r.TensorFlow.LibDir)
	w("framework library  %s", r.TensorFlow.FrameworkLibrary)
	features := make([]string, 0, len(r.Headers.Features))
	for f := range r.Headers.Features {
		features = append(features, f)
	}
	sort.Strings(features)
	w("header features")
	for _, f := range features {
		w("  %-34s %s", f, yes(r.Headers.Features[f]))
	}
	header := ""
	for _, s := range r.Symbols {
		if s.Header != header {
			header = s.Header
			how := "linked"
			if !s.Linked {
				how = "looked up at run time"
			}
			w("exported: %s (%s)", header, how)
		}
		where := ""
		if s.Library != "" {
			where = "  (" + s.Library + ")"
		}
		w("  %-46s %s%s", s.Name, yes(s.Exported), where)
	}
	w("resource-variable C API (kernels_experimental.h): %s", map[bool]string{true: "exported: device variable kernels, asynchronous", false: "not exported: synchronous execution"}[r.ResourceVariableAPI()])
	if m := r.Missing(); len(m) > 0 {
		w("MISSING linked entry points: %s", strings.Join(m, ", "))
	}
	return b.String()
}

// WriteJSON writes the report to path, creating its directory.
func (r *Report) WriteJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// ReadJSON reads a report WriteJSON wrote.
func ReadJSON(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

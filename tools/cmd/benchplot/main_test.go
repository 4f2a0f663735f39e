package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/metalplug/metalplug/bench"
)

// TestPlotFromASavedReport draws a report as package bench saves it (the
// ratios, with their spread, of each case) into a PNG sized by its cases.
func TestPlotFromASavedReport(t *testing.T) {
	dir := t.TempDir()
	r := &bench.Report{Cases: []bench.Case{
		{ID: "matmul_1024", Ratio: bench.Stat{Median: 2.0 / 3, Min: 1.0 / 3, Max: 1}},
		{ID: "tiny_add_scalar", Ratio: bench.Stat{Median: 1.5, Min: 1, Max: 2}},
	}}
	saved := filepath.Join(dir, "bench.json")
	if err := r.WriteJSON(saved); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "bench.png")
	if err := run(saved, out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	// 8 in wide, 1.2 + 0.32 in per case high, at gonum/plot's 96 dpi.
	if cfg.Width != 768 || cfg.Height != 177 {
		t.Errorf("the plot is %d×%d pixels, want 768×177", cfg.Width, cfg.Height)
	}
	if err := run(saved, out); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(out); !bytes.Equal(again, b) {
		t.Error("the same report drew another plot")
	}
	if err := run(filepath.Join(dir, "none.json"), out); err == nil {
		t.Error("no error for a missing report")
	}
	empty := filepath.Join(dir, "empty.json")
	(&bench.Report{}).WriteJSON(empty)
	if err := run(empty, filepath.Join(dir, "empty.png")); err == nil {
		t.Error("no error for a report without cases")
	}
}

package matrix

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMarkdownTableAndNotes(t *testing.T) {
	f := newFake()
	f.fail["2.20.0"] = "build"
	res := runFake(t, f, "")
	for _, v := range []string{"3.12", "3.13"} {
		res.Interpreters = append(res.Interpreters, Interpreter{Command: "python" + v, Found: "/home/user/.pyenv/shims/python" + v,
			Skipped: "does not run (exit status 127): pyenv: python" + v + ": command not found"})
	}
	md := res.Markdown()
	for _, want := range []string{
		"# Version matrix: TensorFlow and jaxlib",
		"## TensorFlow",
		"| TensorFlow | Python | Axis | Compiled | Loaded | Execution | Resource-variable API (expected) |",
		"| tensorflow-cpu 2.19.1 | 3.11 | 2.19.1 | yes | yes | asynchronous | yes, 14/14 (expected yes) | 2 (2 verified) | 3 of 3 | 0 | 0 |",
		"| tensorflow-cpu 2.20.0 | 3.11 | 2.20.0 | no | - | - | no, 3/14 (expected no) | - | - | - | - |",
		"| tensorflow-cpu 2.21.0 | 3.11 | 2.21.0, newest release | yes | yes | synchronous | no, 3/14 (expected no) | 0 | 1 of 1 | 0 | 0 |",
		"| tf-nightly 2.23.0.dev20261026 | 3.11 | newest nightly | yes | yes | asynchronous | yes, 14/14 (expected yes) |",
		"1.46 GiB |",
		"- tensorflow-cpu-2.21.0-py3.11: exports 3 of 14 `kernels_experimental.h` entry points (as expected; the header is present). API not exported: no device variable kernels, synchronous execution, as it should.",
		"- tf-nightly-2.23.0.dev20261026-py3.11: exports 14 of 14 `kernels_experimental.h` entry points (as expected; the header is present). API exported: 2 device variable kernel cases (2 verified), asynchronous execution, as it should.",
		"Load line: `metalplug: METALPLUG_HOST device",
		"- newest nightly (Python 3.11): tf-nightly 2.23.0.dev20261026 (`tf_nightly-2.23.0.dev20261026-cp311-cp311-manylinux_2_27_x86_64.whl`)",
		"- not on the Python axis: `python3.12`, `python3.13`: does not run (exit status 127): pyenv: python3.X: command not found",
		"## Errors and skipped cells",
		"build: build broke for 2.20.0",
		"- tensorflow-cpu-2.19.1-py3.11 (measured 2026-11-30 12:02): venv 1m00s, probe 1m00s, build 1m00s, load 1m00s, sweep 1m00s",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the markdown lacks %q:\n%s", want, md)
		}
	}
	// A cell whose probe disagrees with the expectation is marked.
	res.Cells[0].ResourceVariableAPI, res.Cells[0].EntryPointsExported = false, 3
	res.Cells[0].Mode = "synchronous"
	res.Cells[0].Sweep.VariableCases = 0
	if md := res.Markdown(); !strings.Contains(md, "exports 3 of 14 `kernels_experimental.h` entry points (**expected all**; the header is present)") {
		t.Errorf("a disagreement with the expectation is not marked:\n%s", md)
	}
}

func TestMarkdownSkippedCellAndFilter(t *testing.T) {
	res := &Result{Filter: "2.19.1", Cells: []CellResult{{Cell: Cell{Name: "tensorflow-cpu-2.19.1-py3.13", Release: Release{Distribution: "tensorflow-cpu", Version: "2.19.1"},
		Python: Python{Version: "3.13.0"}, Axes: []string{"2.19.1"}}, Skipped: "no wheel for cp313"}}}
	md := res.Markdown()
	for _, want := range []string{"| tensorflow-cpu 2.19.1 | 3.13 | 2.19.1 | skipped |", "only the cells matching \"2.19.1\"", "- tensorflow-cpu-2.19.1-py3.13: skipped: no wheel for cp313"} {
		if !strings.Contains(md, want) {
			t.Errorf("lacks %q:\n%s", want, md)
		}
	}
	if res.Err() != nil {
		t.Errorf("a skipped cell is an error: %v", res.Err())
	}
}

func TestWriteFilesRoundTripAndMerge(t *testing.T) {
	root := t.TempDir()
	full := runFake(t, newFake(), "")
	if err := WriteFiles(root, full); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(filepath.Join(root, JSONPath))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(full)
	b, _ := json.Marshal(back)
	if string(a) != string(b) {
		t.Errorf("docs/matrix.json does not read back as written")
	}
	if md, _ := os.ReadFile(filepath.Join(root, MarkdownPath)); string(md) != full.Markdown() {
		t.Error("docs/matrix.md is not Markdown()")
	}

	// A filtered run replaces its cell and keeps the others, in plan order.
	f := newFake()
	f.fail["2.19.1"] = "load"
	one := runFake(t, f, "2.19.1")
	merged := Merge(back, one)
	if len(merged.Cells) != 6 {
		t.Fatalf("merged %d cells", len(merged.Cells))
	}
	if !merged.Cells[0].Failed() || merged.Cells[1].Failed() || merged.Cells[1].Name != "tensorflow-cpu-2.20.0-py3.11" {
		t.Errorf("merged: %s / %s", merged.Cells[0].Error, merged.Cells[1].Name)
	}
	// A cell no longer in the plan (last week's nightly) is dropped.
	one.Plan = one.Plan[:3]
	if m := Merge(back, one); len(m.Cells) != 3 || m.Cells[2].Name != "tensorflow-cpu-2.21.0-py3.11" {
		t.Errorf("a cell out of the plan was kept: %d cells", len(m.Cells))
	}
	if Merge(nil, one) != one {
		t.Error("merging into nothing is not the run itself")
	}
}

func TestHumanUnits(t *testing.T) {
	for s, want := range map[float64]string{0: "0s", 45.4: "45s", 192: "3m12s", 3720: "1h02m"} {
		if got := seconds(s); got != want {
			t.Errorf("seconds(%v) = %s, want %s", s, got, want)
		}
	}
	for n, want := range map[int64]string{0: "-", 2048: "2 KiB", 5 << 20: "5 MiB", 1536 << 20: "1.50 GiB"} {
		if got := bytesText(n); got != want {
			t.Errorf("bytesText(%d) = %s, want %s", n, got, want)
		}
	}
}

// TestMatrixDocIsCurrent: docs/matrix.md is exactly what the committed
// measurement (docs/matrix.json) renders to; `go tool mage matrix` writes both.
func TestMatrixDocIsCurrent(t *testing.T) {
	r, err := ReadJSON(filepath.Join("..", JSONPath))
	if err != nil {
		t.Fatalf("%v: run `go tool mage matrix`", err)
	}
	got, err := os.ReadFile(filepath.Join("..", MarkdownPath))
	if err != nil || string(got) != r.Markdown() {
		t.Fatalf("%s does not render from %s (%v): run `go tool mage matrix` and commit both", MarkdownPath, JSONPath, err)
	}
}

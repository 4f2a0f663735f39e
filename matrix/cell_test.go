package matrix

import (
	"strings"
	"testing"
)

func testCells() []Cell {
	c := func(dist, v string, py Python, axis, ch string) Cell {
		return newCell(Release{Distribution: dist, Version: v}, py, axis, ch)
	}
	return []Cell{
		c("tensorflow-cpu", "2.19.1", py311, "2.19.1", ""),
		c("tensorflow-cpu", "2.20.0", py311, "2.20.0", ""),
		c("tensorflow-cpu", "2.21.0", py311, "2.21.0", ChannelRelease),
		c("tf-nightly", "2.23.0.dev20261026", py311, "newest nightly", ChannelNightly),
		c("tensorflow-cpu", "2.21.0", py312, "2.21.0", ChannelRelease),
	}
}

func names(cs []Cell) string {
	var n []string
	for _, c := range cs {
		n = append(n, c.Name)
	}
	return strings.Join(n, " ")
}

func TestSelect(t *testing.T) {
	cells := testCells()
	for filter, want := range map[string]string{
		"":                             names(cells),
		"2.19.1":                       "tensorflow-cpu-2.19.1-py3.11",
		"2.20":                         "tensorflow-cpu-2.20.0-py3.11",
		"nightly":                      "tf-nightly-2.23.0.dev20261026-py3.11",
		"tf-nightly":                   "tf-nightly-2.23.0.dev20261026-py3.11",
		"release":                      "tensorflow-cpu-2.21.0-py3.11 tensorflow-cpu-2.21.0-py3.12",
		"release py3.11":               "tensorflow-cpu-2.21.0-py3.11",
		"release,3.12":                 "tensorflow-cpu-2.21.0-py3.12",
		"py3.12":                       "tensorflow-cpu-2.21.0-py3.12",
		"tensorflow-cpu-2.20.0-py3.11": "tensorflow-cpu-2.20.0-py3.11",
	} {
		got, err := Select(cells, filter)
		if err != nil {
			t.Errorf("%q: %v", filter, err)
			continue
		}
		if names(got) != want {
			t.Errorf("%q selects %s, want %s", filter, names(got), want)
		}
	}
	// Terms name cells exactly: "2.2" is no minor of any cell, and a
	// channel is not a distribution's prefix.
	for _, filter := range []string{"2.2", "2.18.0", "nightly py3.12", "tensorflow"} {
		if got, err := Select(cells, filter); err == nil {
			t.Errorf("%q selects %s, want an error", filter, names(got))
		} else if !strings.Contains(err.Error(), "tensorflow-cpu-2.19.1-py3.11") {
			t.Errorf("%q: the error does not list the cells: %v", filter, err)
		}
	}
}

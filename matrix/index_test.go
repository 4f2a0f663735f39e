package matrix

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fakeFile is a file of the fake index: yanked is false, true or a reason.
type fakeFile struct {
	name, requires string
	yanked         any
}

// fakePyPI answers as PyPI's Simple JSON API does: only to the PEP 691
// Accept header (406 otherwise), 404 for unknown projects, versions in
// string order (as PyPI lists them), yanked as false, true or a reason.
func fakePyPI(t *testing.T, projects map[string][]fakeFile, versions map[string][]string) (*httptest.Server, *int) {
	t.Helper()
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		if !strings.Contains(r.Header.Get("Accept"), simpleJSON) {
			http.Error(w, "not acceptable", http.StatusNotAcceptable)
			return
		}
		name := strings.Trim(strings.TrimPrefix(r.URL.Path, "/simple/"), "/")
		files, ok := projects[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		var out struct {
			Meta     map[string]string `json:"meta"`
			Name     string            `json:"name"`
			Versions []string          `json:"versions"`
			Files    []map[string]any  `json:"files"`
		}
		out.Meta = map[string]string{"api-version": "1.1"}
		out.Name = name
		out.Versions = versions[name]
		for _, f := range files {
			y := f.yanked
			if y == nil {
				y = false
			}
			out.Files = append(out.Files, map[string]any{
				"filename": f.name, "url": "https://files.example/" + f.name, "hashes": map[string]string{},
				"requires-python": f.requires, "yanked": y, "size": 1,
			})
		}
		w.Header().Set("Content-Type", simpleJSON)
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv, &requests
}

var (
	py311 = Python{Command: "python3.11", Path: "/usr/bin/python3.11", Version: "3.11.7", Glibc: "2.36"}
	py39  = Python{Command: "python3.9", Path: "/usr/bin/python3.9", Version: "3.9.18", Glibc: "2.36"}
	py312 = Python{Command: "python3.12", Path: "/opt/py/3.12.1/bin/python3.12", Version: "3.12.1", Glibc: "2.36"}
	py313 = Python{Command: "python3", Path: "/opt/py/3.13.0/bin/python3", Version: "3.13.0", Glibc: "2.36"}
	linux = Platform{GOOS: "linux", GOARCH: "amd64", Glibc: "2.36"}
)

// jaxWheel is jax's pure-Python wheel.
func jaxWheel(v string) string { return "jax-" + v + "-py3-none-any.whl" }

func linuxWheel(dist, v, tag string) string {
	return strings.ReplaceAll(dist, "-", "_") + "-" + v + "-" + tag + "-" + tag + "-manylinux_2_27_x86_64.whl"
}

// testIndex is a small PyPI: tensorflow-cpu with finals, an rc, a yanked
// final, a final without a Linux wheel and one too new for this glibc;
// tf-nightly-cpu that stopped early; tf-nightly with a yanked newest dev.
func testIndex(t *testing.T) (*Resolver, *int) {
	cpu := "tensorflow-cpu"
	files := map[string][]fakeFile{
		cpu: {
			{name: "tensorflow_cpu-2.9.3-cp39-cp39-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", requires: ">=3.7"},
			{name: "tensorflow_cpu-2.10.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", requires: ">=3.7"},
			{name: "tensorflow_cpu-2.19.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", requires: ">=3.9"},
			{name: "tensorflow_cpu-2.19.1-cp311-cp311-win_amd64.whl", requires: ">=3.9"},
			{name: "tensorflow_cpu-2.20.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", requires: ">=3.9"},
			{name: linuxWheel(cpu, "2.21.0", "cp311"), requires: ">=3.10"},
			{name: linuxWheel(cpu, "2.21.1", "cp311"), requires: ">=3.10", yanked: true},
			{name: "tensorflow_cpu-2.21.1-cp311-cp311-win_amd64.whl", requires: ">=3.10", yanked: "broken ABI"},
			{name: "tensorflow_cpu-2.21.2-cp311-cp311-win_amd64.whl", requires: ">=3.10"},
			{name: "tensorflow_cpu-2.21.2-cp311-cp311-macosx_12_0_arm64.whl", requires: ">=3.10"},
			{name: "tensorflow_cpu-2.21.2.tar.gz", requires: ">=3.10"},
			{name: "tensorflow_cpu-2.21.3-cp311-cp311-manylinux_2_39_x86_64.whl", requires: ">=3.10"},
			{name: linuxWheel(cpu, "2.22.0rc0", "cp311"), requires: ">=3.10"},
		},
		"tf-nightly-cpu": {
			{name: linuxWheel("tf-nightly-cpu", "2.22.0.dev20260904", "cp311"), requires: ">=3.10"},
			{name: linuxWheel("tf-nightly-cpu", "2.22.0.dev20260905", "cp311"), requires: ">=3.10"},
		},
		"tf-nightly": {
			{name: linuxWheel("tf-nightly", "2.22.0.dev20260905", "cp311"), requires: ">=3.10"},
			{name: linuxWheel("tf-nightly", "2.22.0.dev20260914", "cp311"), requires: ">=3.10"},
			{name: linuxWheel("tf-nightly", "2.23.0rc0", "cp311"), requires: ">=3.10"},
			{name: linuxWheel("tf-nightly", "2.23.0.dev20261025", "cp311"), requires: ">=3.10"},
			{name: linuxWheel("tf-nightly", "2.23.0.dev20261026", "cp311"), requires: ">=3.10", yanked: true},
			{name: linuxWheel("tf-nightly", "2.23.0.dev20261027", "cp312"), requires: ">=3.10"},
		},
	}
	versions := map[string][]string{
		// PyPI's order: strings, so 2.10.0 < 2.9.3 and rc beside finals.
		cpu:              {"2.10.0", "2.19.1", "2.20.0", "2.21.0", "2.21.1", "2.21.2", "2.21.3", "2.22.0rc0", "2.9.3"},
		"tf-nightly-cpu": {"2.22.0.dev20260904", "2.22.0.dev20260905"},
		"tf-nightly":     {"2.22.0.dev20260905", "2.22.0.dev20260914", "2.23.0.dev20261025", "2.23.0.dev20261026", "2.23.0.dev20261027", "2.23.0rc0"},
	}
	srv, n := fakePyPI(t, files, versions)
	return &Resolver{Index: &Index{URL: srv.URL + "/simple/"}, Platform: linux}, n
}

func TestNewestRelease(t *testing.T) {
	rs, _ := testIndex(t)
	r, notes, err := rs.Newest(ChannelRelease, py311)
	if err != nil {
		t.Fatal(err)
	}
	// 2.22.0rc0 is a pre-release; 2.21.3 needs glibc 2.39; 2.21.2 has no
	// Linux wheel; 2.21.1 is yanked (its Linux wheel and its Windows wheel).
	if r.Version != "2.21.0" || r.Distribution != "tensorflow-cpu" || r.Wheel != linuxWheel("tensorflow-cpu", "2.21.0", "cp311") {
		t.Fatalf("newest release = %+v, want tensorflow-cpu 2.21.0", r)
	}
	joined := strings.Join(notes, "\n")
	for _, want := range []string{"2.21.3: no wheel for cp311", "2.21.2: no wheel for cp311", "2.21.1: every file yanked"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notes lack %q:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "rc0") {
		t.Errorf("a pre-release was considered: %s", joined)
	}
	// Without the glibc limit 2.21.3 is installable, and newest.
	rs.Platform.Glibc = "2.39"
	if r, _, _ := rs.Newest(ChannelRelease, py311); r.Version != "2.21.3" {
		t.Errorf("with glibc 2.39 the newest release is %s, want 2.21.3", r.Version)
	}
}

func TestNewestNightlyAcrossDistributions(t *testing.T) {
	rs, requests := testIndex(t)
	r, notes, err := rs.Newest(ChannelNightly, py311)
	if err != nil {
		t.Fatal(err)
	}
	// tf-nightly-cpu stopped at dev20260905; tf-nightly's dev20261026 is
	// yanked and dev20261027 has no cp311 wheel; its rc is no nightly.
	if r.Distribution != "tf-nightly" || r.Version != "2.23.0.dev20261025" {
		t.Fatalf("newest nightly = %+v, want tf-nightly 2.23.0.dev20261025", r)
	}
	joined := strings.Join(notes, "\n")
	for _, want := range []string{"tf-nightly-cpu 2.22.0.dev20260905 is older", "2.23.0.dev20261026: every file yanked", "2.23.0.dev20261027: no wheel for cp311"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notes lack %q:\n%s", want, joined)
		}
	}
	// The index is asked once per project.
	rs.Newest(ChannelNightly, py311)
	if *requests != 2 {
		t.Errorf("%d requests, want 2 (one per project)", *requests)
	}
}

func TestNewestNightlyTiePrefersTheLighterDistribution(t *testing.T) {
	files := map[string][]fakeFile{
		"tf-nightly-cpu": {{name: linuxWheel("tf-nightly-cpu", "2.22.0.dev20260905", "cp311")}},
		"tf-nightly":     {{name: linuxWheel("tf-nightly", "2.22.0.dev20260905", "cp311")}},
	}
	srv, _ := fakePyPI(t, files, map[string][]string{
		"tf-nightly-cpu": {"2.22.0.dev20260905"}, "tf-nightly": {"2.22.0.dev20260905"}})
	rs := &Resolver{Index: &Index{URL: srv.URL + "/simple"}, Platform: linux}
	r, _, err := rs.Newest(ChannelNightly, py311)
	if err != nil || r.Distribution != NightlyDistributions[0] {
		t.Fatalf("tie: %+v, %v; want %s", r, err, NightlyDistributions[0])
	}
}

func TestNewestWhenOneDistributionIsMissing(t *testing.T) {
	srv, _ := fakePyPI(t, map[string][]fakeFile{
		"tf-nightly": {{name: linuxWheel("tf-nightly", "2.23.0.dev20261025", "cp311")}},
	}, nil) // API 1.0: no versions list; they come from the file names
	rs := &Resolver{Index: &Index{URL: srv.URL + "/simple/"}, Platform: linux}
	r, _, err := rs.Newest(ChannelNightly, py311)
	if err != nil || r.Version != "2.23.0.dev20261025" {
		t.Fatalf("%+v, %v", r, err)
	}
	_, _, err = rs.Newest(ChannelRelease, py311)
	var nf *NotFoundError
	if err == nil || !strings.Contains(err.Error(), "no project tensorflow-cpu") {
		t.Fatalf("newest release of a missing project: %v", err)
	}
	if _, err := rs.Index.Project("tensorflow-cpu"); !errors.As(err, &nf) {
		t.Errorf("a 404 is %T, want *NotFoundError", err)
	}
}

func TestCheckFixedRelease(t *testing.T) {
	rs, _ := testIndex(t)
	r, err := rs.Check("tensorflow-cpu", "2.19.1", py311)
	if err != nil || !strings.Contains(r.Wheel, "manylinux2014_x86_64") {
		t.Fatalf("2.19.1: %+v, %v", r, err)
	}
	for v, want := range map[string]string{
		"2.21.1": "every file yanked",
		"2.21.2": "no wheel for cp311",
		"2.18.0": "has no version 2.18.0",
	} {
		_, err := rs.Check("tensorflow-cpu", v, py311)
		if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, errNoWheel) {
			t.Errorf("%s: %v, want %q", v, err, want)
		}
	}
	// requires-python: 2.21.0 needs 3.10, and there is no cp39 wheel.
	if _, err := rs.Check("tensorflow-cpu", "2.21.0", py39); err == nil {
		t.Error("2.21.0 resolved for Python 3.9")
	}
}

func TestIndexRefusesNonJSONAnswers(t *testing.T) {
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html></html>"))
	}))
	defer html.Close()
	if _, err := (&Index{URL: html.URL}).Project("tf-nightly"); err == nil || !strings.Contains(err.Error(), "PEP 691") {
		t.Errorf("an HTML answer: %v", err)
	}
	v2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", simpleJSON)
		w.Write([]byte(`{"meta":{"api-version":"2.0"},"name":"x","files":[]}`))
	}))
	defer v2.Close()
	if _, err := (&Index{URL: v2.URL}).Project("x"); err == nil || !strings.Contains(err.Error(), "version 1") {
		t.Errorf("API 2.0: %v", err)
	}
}

func TestPlanMergesNewestIntoFixedAndSkipsWhatCannotInstall(t *testing.T) {
	rs, _ := testIndex(t)
	cells, res := rs.Plan([]Python{py311, py39})
	var names []string
	for _, c := range cells {
		names = append(names, c.Name)
	}
	// py3.11: 2.19.1, 2.20.0, 2.21.0 (also newest release), the nightly.
	// py3.9: no 2.19.1/2.20.0 cp39 wheel here (skipped cells), 2.21.0 needs
	// 3.10 (skipped), the newest release with a cp39 wheel is 2.9.3, and no
	// nightly has one (no cell, an error in the resolutions).
	want := []string{
		"tensorflow-cpu-2.19.1-py3.11", "tensorflow-cpu-2.20.0-py3.11", "tensorflow-cpu-2.21.0-py3.11", "tf-nightly-2.23.0.dev20261025-py3.11",
		"tensorflow-cpu-2.19.1-py3.9", "tensorflow-cpu-2.20.0-py3.9", "tensorflow-cpu-2.21.0-py3.9", "tensorflow-cpu-2.9.3-py3.9",
	}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("cells\n%v\nwant\n%v", names, want)
	}
	c := cells[2]
	if strings.Join(c.Axes, ",") != "2.21.0,newest release" || c.Channel != ChannelRelease || c.Skip != "" {
		t.Errorf("2.21.0 cell: %+v", c)
	}
	if cells[3].Channel != ChannelNightly || cells[3].VenvName() != "matrix-tf-nightly-py3.11" || cells[3].Pin() != "2.23" {
		t.Errorf("nightly cell: %+v venv %s pin %s", cells[3], cells[3].VenvName(), cells[3].Pin())
	}
	if cells[0].VenvName() != "matrix-tensorflow-cpu-2.19.1-py3.11" || cells[0].Pin() != "2.19" {
		t.Errorf("2.19.1 cell: venv %s pin %s", cells[0].VenvName(), cells[0].Pin())
	}
	for _, i := range []int{4, 5, 6} {
		if cells[i].Skip == "" {
			t.Errorf("%s is not skipped", cells[i].Name)
		}
	}
	nightly39 := false
	for _, r := range res {
		if r.Axis == "newest nightly" && r.Python == "3.9" && r.Error != "" {
			nightly39 = true
		}
	}
	if !nightly39 {
		t.Errorf("no resolution error for the py3.9 nightly: %+v", res)
	}
}

func TestPlanWithoutIndexStillPlansFixedReleases(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusBadGateway)
	}))
	defer srv.Close()
	rs := &Resolver{Index: &Index{URL: srv.URL}, Platform: linux}
	cells, res := rs.Plan([]Python{py311})
	if len(cells) != len(Releases) {
		t.Fatalf("%d cells without an index, want the %d fixed releases", len(cells), len(Releases))
	}
	for _, c := range cells {
		if c.Skip != "" {
			t.Errorf("%s skipped because the index was down: %s", c.Name, c.Skip)
		}
	}
	if len(res) != len(Releases)+len(Channels) || res[len(res)-1].Error == "" {
		t.Errorf("resolutions: %+v", res)
	}
}

func TestYankedForms(t *testing.T) {
	for in, want := range map[string]Yanked{
		`false`:     {},
		`true`:      {Yanked: true},
		`"bad ABI"`: {Yanked: true, Reason: "bad ABI"},
	} {
		var y Yanked
		if err := json.Unmarshal([]byte(in), &y); err != nil || y != want {
			t.Errorf("%s: %+v, %v", in, y, err)
		}
		out, _ := json.Marshal(y)
		if string(out) != in {
			t.Errorf("%s marshals back as %s", in, out)
		}
	}
	var y Yanked
	if err := json.Unmarshal([]byte(`3`), &y); err == nil {
		t.Error("a number was read as a yanked flag")
	}
}

package matrix

import (
	"errors"
	"strings"
	"testing"
)

// jaxIndex is a small PyPI for the jax axis, as PyPI lists it (versions as
// strings, so 0.9.2 after 0.12.x): jax with a pre-release and a nightly
// above the newest release, a newest-looking 0.12.1 whose jax wheel is
// yanked, jaxlib's four-part rebuild 0.12.0.1, and below it a 0.11.3 whose
// jaxlib has no cp312 wheel (only cp313) and a 0.11.2 whose jaxlib is
// yanked.
func jaxIndex(t *testing.T, apiVersions bool) *Resolver {
	t.Helper()
	jaxFiles := []fakeFile{
		{name: jaxWheel("0.9.2"), requires: ">=3.10"},
		{name: jaxWheel("0.10.0"), requires: ">=3.11"},
		{name: jaxWheel("0.11.1"), requires: ">=3.12"},
		{name: jaxWheel("0.11.2"), requires: ">=3.12"},
		{name: jaxWheel("0.11.3"), requires: ">=3.12"},
		{name: "jax-0.11.3.tar.gz", requires: ">=3.12"},
		{name: jaxWheel("0.12.0"), requires: ">=3.12"},
		{name: jaxWheel("0.12.0.1"), requires: ">=3.12"},
		{name: jaxWheel("0.12.1"), requires: ">=3.12", yanked: "breaks jit"},
		{name: jaxWheel("0.13.0rc1"), requires: ">=3.12"},
		{name: jaxWheel("0.13.0.dev20261101"), requires: ">=3.12"},
	}
	lib := func(v, tag string) fakeFile { return fakeFile{name: linuxWheel("jaxlib", v, tag), requires: ">=3.12"} }
	libFiles := []fakeFile{
		{name: linuxWheel("jaxlib", "0.9.2", "cp311"), requires: ">=3.10"},
		lib("0.10.0", "cp312"),
		lib("0.11.1", "cp312"), lib("0.11.1", "cp313"),
		{name: linuxWheel("jaxlib", "0.11.2", "cp312"), requires: ">=3.12", yanked: true},
		lib("0.11.3", "cp313"),
		{name: "jaxlib-0.11.3-cp312-cp312-win_amd64.whl", requires: ">=3.12"},
		lib("0.12.0", "cp312"),
		lib("0.12.0.1", "cp312"), lib("0.12.0.1", "cp313"),
		lib("0.12.1", "cp312"),
		lib("0.13.0rc1", "cp312"),
		lib("0.13.0.dev20261101", "cp312"),
	}
	var versions map[string][]string
	if apiVersions {
		versions = map[string][]string{
			"jax":    {"0.10.0", "0.11.1", "0.11.2", "0.11.3", "0.12.0", "0.12.0.1", "0.12.1", "0.13.0.dev20261101", "0.13.0rc1", "0.9.2"},
			"jaxlib": {"0.10.0", "0.11.1", "0.11.2", "0.11.3", "0.12.0", "0.12.0.1", "0.12.1", "0.13.0.dev20261101", "0.13.0rc1", "0.9.2"},
		}
	}
	srv, _ := fakePyPI(t, map[string][]fakeFile{"jax": jaxFiles, "jaxlib": libFiles}, versions)
	return &Resolver{Index: &Index{URL: srv.URL + "/simple/"}, Platform: linux}
}

func TestJaxAxisNewestAndTheReleaseBefore(t *testing.T) {
	for _, api := range []bool{true, false} { // API 1.1, and 1.0 (versions from the file names)
		rs := jaxIndex(t, api)
		res := rs.JaxAxis(py312)
		if len(res) != 2 {
			t.Fatalf("API versions %v: %d entries, want 2: %+v", api, len(res), res)
		}
		newest, before := res[0], res[1]
		if newest.Axis != JaxNewest || newest.Frontend != FrontendJax || newest.Error != "" ||
			newest.Release != (Release{Distribution: "jax", Version: "0.12.0.1", Wheel: "jax-0.12.0.1-py3-none-any.whl"}) ||
			newest.Jaxlib == nil || *newest.Jaxlib != (Release{Distribution: "jaxlib", Version: "0.12.0.1", Wheel: linuxWheel("jaxlib", "0.12.0.1", "cp312")}) {
			t.Errorf("API versions %v: newest %+v jaxlib %+v, want jax and jaxlib 0.12.0.1", api, newest, newest.Jaxlib)
		}
		// 0.11.3's jaxlib has no cp312 wheel, 0.11.2's is yanked: 0.11.1.
		if before.Axis != JaxBefore || before.Error != "" || before.Release.Version != "0.11.1" || before.Jaxlib == nil || before.Jaxlib.Version != "0.11.1" {
			t.Errorf("API versions %v: release before %+v jaxlib %+v, want jax and jaxlib 0.11.1", api, before, before.Jaxlib)
		}
		if got, want := strings.Join(newest.Notes, "\n"), "jax 0.12.1: every file yanked"; got != want {
			t.Errorf("API versions %v: newest's notes\n%s\nwant\n%s", api, got, want)
		}
		want := "jaxlib 0.11.3: no wheel for cp312 on manylinux*_x86_64 (glibc 2.36) (not for cp312; not for manylinux*_x86_64 (glibc 2.36))\njaxlib 0.11.2: every file yanked"
		if got := strings.Join(before.Notes, "\n"); got != want {
			t.Errorf("API versions %v: before's notes\n%s\nwant\n%s", api, got, want)
		}
	}
	// With Python 3.13, 0.11.3's jaxlib has a wheel.
	res := jaxIndex(t, true).JaxAxis(py313)
	if res[0].Release.Version != "0.12.0.1" || res[1].Release.Version != "0.11.3" || res[1].Jaxlib.Wheel != linuxWheel("jaxlib", "0.11.3", "cp313") || len(res[1].Notes) != 0 {
		t.Errorf("py3.13: %+v / %+v", res[0], res[1])
	}
}

func TestJaxAxisWhatCannotResolve(t *testing.T) {
	// One minor only: the newest resolves, the release before does not.
	srv, _ := fakePyPI(t, map[string][]fakeFile{
		"jax":    {{name: jaxWheel("0.12.0")}, {name: jaxWheel("0.12.0.1")}},
		"jaxlib": {{name: linuxWheel("jaxlib", "0.12.0", "cp312")}, {name: linuxWheel("jaxlib", "0.12.0.1", "cp312")}},
	}, nil)
	rs := &Resolver{Index: &Index{URL: srv.URL + "/simple/"}, Platform: linux}
	res := rs.JaxAxis(py312)
	if res[0].Error != "" || res[0].Release.Version != "0.12.0.1" {
		t.Errorf("newest: %+v", res[0])
	}
	if !strings.Contains(res[1].Error, "jax has no release of a minor before 0.12 that installs with its jaxlib for cp312") || res[1].Jaxlib != nil {
		t.Errorf("release before: %+v", res[1])
	}
	// No jaxlib for this Python at all: neither resolves, and the notes say why.
	res = rs.JaxAxis(py311)
	if !strings.Contains(res[0].Error, "jax has no release that installs with its jaxlib for cp311") || !strings.Contains(res[1].Error, "no release") {
		t.Errorf("py3.11: %+v", res)
	}
	if !strings.Contains(strings.Join(res[0].Notes, "\n"), "jaxlib 0.12.0.1: no wheel for cp311") {
		t.Errorf("py3.11 notes: %v", res[0].Notes)
	}
	// jax without a jaxlib project: both entries carry the index's answer.
	srv, _ = fakePyPI(t, map[string][]fakeFile{"jax": {{name: jaxWheel("0.12.0")}}}, nil)
	rs = &Resolver{Index: &Index{URL: srv.URL + "/simple/"}, Platform: linux}
	for _, r := range rs.JaxAxis(py312) {
		if !strings.Contains(r.Error, "the index has no project jaxlib") {
			t.Errorf("%s without jaxlib: %q", r.Axis, r.Error)
		}
	}
	// A jax release whose jaxlib of the same version is missing is passed over.
	srv, _ = fakePyPI(t, map[string][]fakeFile{
		"jax":    {{name: jaxWheel("0.12.1")}, {name: jaxWheel("0.12.0")}, {name: jaxWheel("0.11.0")}},
		"jaxlib": {{name: linuxWheel("jaxlib", "0.12.0", "cp312")}, {name: linuxWheel("jaxlib", "0.11.0", "cp312")}},
	}, nil)
	rs = &Resolver{Index: &Index{URL: srv.URL + "/simple/"}, Platform: linux}
	res = rs.JaxAxis(py312)
	if res[0].Release.Version != "0.12.0" || res[1].Release.Version != "0.11.0" || strings.Join(res[0].Notes, "") != "jax 0.12.1: no jaxlib 0.12.1" {
		t.Errorf("a jax without its jaxlib: %+v / %+v", res[0], res[1])
	}
}

func TestReleaseParts(t *testing.T) {
	for _, bad := range []string{"0.13.0rc1", "0.13.0.dev20261101", "0.12.0.post1", "0.12.0+cpu", "1!0.12.0", "12", "latest", ""} {
		if p, ok := releaseParts(bad); ok {
			t.Errorf("%q read as the release %v", bad, p)
		}
	}
	order := []string{"0.9.2", "0.10.0", "0.12", "0.12.0.1", "0.12.1", "1.0"}
	for i := 1; i < len(order); i++ {
		a, _ := releaseParts(order[i-1])
		b, _ := releaseParts(order[i])
		if compareParts(a, b) >= 0 || compareParts(b, a) <= 0 {
			t.Errorf("%s does not sort before %s", order[i-1], order[i])
		}
	}
	a, _ := releaseParts("0.12")
	b, _ := releaseParts("0.12.0.0")
	if compareParts(a, b) != 0 || partsKey(a) != partsKey(b) || partsKey(b) != "0.12" || minorOf(b) != "0.12" {
		t.Errorf("0.12 and 0.12.0.0: compare %d, keys %s %s", compareParts(a, b), partsKey(a), partsKey(b))
	}
	if !sameRelease("0.12.0", "0.12") || sameRelease("0.12.0.1", "0.12.0") || !sameRelease("0.13.0rc1", "0.13.0rc1") {
		t.Error("sameRelease")
	}
}

func TestPlanJax(t *testing.T) {
	rs := jaxIndex(t, true)
	cells, res := rs.PlanJax([]Python{py312, py313}, "unused")
	if got := names(cells); got != "jax-0.12.0.1-py3.12 jax-0.11.1-py3.12 jax-0.12.0.1-py3.13 jax-0.11.3-py3.13" {
		t.Fatalf("cells %s", got)
	}
	if len(res) != 4 || res[3].Python != "3.13" || res[3].Axis != JaxBefore {
		t.Errorf("resolutions %+v", res)
	}
	c := cells[1]
	if !c.IsJax() || c.Channel != JaxChannelBefore || strings.Join(c.Axes, ",") != JaxBefore || c.Pin() != "0.11" ||
		c.VenvName() != "matrix-jax-0.11.1-py3.12" || strings.Join(c.Requirements(), " ") != "jax==0.11.1 jaxlib==0.11.1" || c.Python != py312 {
		t.Errorf("release before's cell: %+v pin %s venv %s requirements %v", c, c.Pin(), c.VenvName(), c.Requirements())
	}
	if cells[0].Channel != JaxChannelNewest || cells[0].Pin() != "0.12" || cells[0].Skip != "" {
		t.Errorf("newest cell: %+v", cells[0])
	}

	// Without a Python for jax, each axis entry is a skipped cell saying why.
	cells, res = rs.PlanJax(nil, "no Python 3.12 or newer here")
	if got := names(cells); got != "jax-newest-release jax-release-before" {
		t.Fatalf("cells without a Python: %s", got)
	}
	for i, c := range cells {
		if c.Skip != "no Python 3.12 or newer here" || !c.IsJax() || res[i].Error != c.Skip || res[i].Python != "" {
			t.Errorf("%s: %+v / %+v", c.Name, c, res[i])
		}
	}
	if sel, err := Select(cells, "jax"); err != nil || len(sel) != 2 {
		t.Errorf("jax selects %v, %v", sel, err)
	}
	if sel, err := Select(cells, "previous"); err != nil || names(sel) != "jax-release-before" {
		t.Errorf("previous selects %v, %v", sel, err)
	}
}

func TestSelectJaxCells(t *testing.T) {
	rs := jaxIndex(t, true)
	jcells, _ := rs.PlanJax([]Python{py312}, "")
	cells := append(testCells(), jcells...)
	for filter, want := range map[string]string{
		"jax":                  "jax-0.12.0.1-py3.12 jax-0.11.1-py3.12",
		"jaxlib":               "jax-0.12.0.1-py3.12 jax-0.11.1-py3.12",
		"jax 0.12":             "jax-0.12.0.1-py3.12",
		"jax,0.11":             "jax-0.11.1-py3.12",
		"jaxlib 0.11.1":        "jax-0.11.1-py3.12",
		"0.12.0.1":             "jax-0.12.0.1-py3.12",
		"previous":             "jax-0.11.1-py3.12",
		"jax release":          "jax-0.12.0.1-py3.12",
		"jax-0.11.1-py3.12":    "jax-0.11.1-py3.12",
		"release":              "tensorflow-cpu-2.21.0-py3.11 tensorflow-cpu-2.21.0-py3.12 jax-0.12.0.1-py3.12",
		"py3.12":               "tensorflow-cpu-2.21.0-py3.12 jax-0.12.0.1-py3.12 jax-0.11.1-py3.12",
		"tensorflow-cpu 2.21":  "tensorflow-cpu-2.21.0-py3.11 tensorflow-cpu-2.21.0-py3.12",
		"tf-nightly,nightly":   "tf-nightly-2.23.0.dev20261026-py3.11",
		"release py3.11":       "tensorflow-cpu-2.21.0-py3.11",
		"jax release previous": "",
	} {
		got, err := Select(cells, filter)
		if want == "" {
			if err == nil {
				t.Errorf("%q selects %s, want none", filter, names(got))
			}
			continue
		}
		if err != nil || names(got) != want {
			t.Errorf("%q selects %s (%v), want %s", filter, names(got), err, want)
		}
	}
	// No jax cell for Python 3.11; the error lists the cells there are.
	_, err := Select(cells, "jax py3.11")
	if err == nil || !strings.Contains(err.Error(), "jax-0.12.0.1-py3.12") || !strings.Contains(err.Error(), "previous") {
		t.Errorf("jax py3.11: %v", err)
	}
}

func TestJaxPythons(t *testing.T) {
	calls := 0
	o := Options{FindPython: func(int) (string, error) { calls++; return "", errors.New("none here") }}
	// From the axis: its 3.12 and newer, without looking further.
	ps, found, none := o.jaxPythons([]Python{py311, py312, py313})
	if len(ps) != 2 || ps[0] != py312 || ps[1] != py313 || found != nil || none != "" || calls != 0 {
		t.Errorf("from the axis: %v %v %q (FindPython called %d times)", ps, found, none, calls)
	}
	// Nothing on the axis, nothing elsewhere: why.
	ps, _, none = o.jaxPythons([]Python{py311})
	if ps != nil || calls != 1 || none != "the Python axis has no Python 3.12 or newer, and none was found elsewhere: none here" {
		t.Errorf("none: %v %q", ps, none)
	}
	// Given explicitly, empty: none, without looking.
	o.JaxPythons = []Python{}
	if ps, _, none := o.jaxPythons([]Python{py312}); ps != nil || none != "no Python 3.12 or newer here (jax 0.11 and later need it)" || calls != 1 {
		t.Errorf("explicitly none: %v %q", ps, none)
	}
}

package version

import (
	"sort"
	"testing"

	"github.com/Masterminds/semver/v3"
)

func TestParseForms(t *testing.T) {
	for in, want := range map[string]string{
		"2.21.0":             "2.21.0",
		"2.21":               "2.21.0",
		"2.22.0rc1":          "2.22.0-rc.1",
		"2.22.0-rc1":         "2.22.0-rc.1",
		"2.23.0.dev20261026": "2.23.0-0.dev.20261026",
		"2.23.0-dev20261026": "2.23.0-0.dev.20261026",
		"2.21.0a1":           "2.21.0-a.1",
	} {
		v, err := Parse(in)
		if err != nil {
			t.Errorf("Parse(%q): %v", in, err)
			continue
		}
		if v.String() != want {
			t.Errorf("Parse(%q) = %s, want %s", in, v, want)
		}
	}
}

func TestParseRefusesWhatSemverCannotOrder(t *testing.T) {
	for _, in := range []string{"", "2", "2.21.0.post1", "1!2.21.0", "2.15.0.1", "2.21.0+cu121", "latest"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) succeeded; want an error", in)
		}
	}
}

func TestOrderIsPEP440(t *testing.T) {
	want := []string{"2.22.1", "2.23.0.dev20261026", "2.23.0.dev20261101", "2.23.0a1", "2.23.0b1", "2.23.0rc2", "2.23.0rc10", "2.23.0"}
	shuffled := []string{want[7], want[3], want[0], want[6], want[1], want[5], want[2], want[4]}
	vs := make([]*semver.Version, len(shuffled))
	for i, s := range shuffled {
		v, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		vs[i] = v
	}
	sort.Sort(semver.Collection(vs))
	for i, v := range vs {
		w, _ := Parse(want[i])
		if !v.Equal(w) {
			t.Fatalf("position %d: got %s, want %s (from %s)", i, v, w, want[i])
		}
	}
}

func TestSameMinor(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"2.21.0", "2.21", true},
		{"2.21.1", "2.21.0", true},
		{"2.22.0-dev20261026", "2.22.0.dev20261026", true},
		{"2.20.0", "2.21.0", false},
		{"", "2.21.0", false},
		{"garbage", "garbage", false},
	}
	for _, c := range cases {
		if got := SameMinor(c.a, c.b); got != c.want {
			t.Errorf("SameMinor(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestJaxlibVersions: jaxlib's four-component releases have a minor.
func TestJaxlibVersions(t *testing.T) {
	if m := Minor("0.12.0.1"); m != "0.12" {
		t.Errorf("Minor(0.12.0.1) = %q", m)
	}
	if !SameMinor("0.12.0.1", "0.12") || SameMinor("0.11.3", "0.12") {
		t.Error("SameMinor of jaxlib versions")
	}
}

func TestLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"2.19.1", "2.21.0", true},
		{"2.21.0", "2.19.1", false},
		{"2.21", "2.21.0", false},
		{"2.23.0-dev20261026", "2.23.0", true},
		{"2.21.0", "2.23.0.dev20261026", true},
		{"nonsense", "2.19.0", true},
		{"2.19.0", "nonsense", false},
	} {
		if got := Less(c.a, c.b); got != c.want {
			t.Errorf("Less(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

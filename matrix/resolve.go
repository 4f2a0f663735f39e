package matrix

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/metalplug/metalplug/plugin/version"
)

// Release is one resolved TensorFlow: a distribution, a version as the index
// spells it, and the wheel pip will pick for it here.
type Release struct {
	Distribution string `json:"distribution"`
	Version      string `json:"version"`
	Wheel        string `json:"wheel,omitempty"`
}

// Requirement is the pip requirement that installs exactly this release.
// An exact pin installs a .devN version without --pre.
func (r Release) Requirement() string { return r.Distribution + "==" + r.Version }

// candidate is one version of a project with its files.
type candidate struct {
	spelled string // as the index spells it
	v       *semver.Version
	files   []File
}

// candidates are a project's versions that plugin/version can read, newest
// first. Versions come from the versions list (API 1.1), or from the file
// names when the index has only API 1.0; files are matched to versions
// through the parsed form, so 2.21.0 and 2.21 are one version.
func candidates(p *Project) []candidate {
	byKey := map[string]*candidate{}
	var order []*candidate
	add := func(spelled string) *candidate {
		v, err := version.Parse(spelled)
		if err != nil {
			return nil // post releases, local labels: not TensorFlow's forms
		}
		key := v.String()
		if c, ok := byKey[key]; ok {
			return c
		}
		c := &candidate{spelled: spelled, v: v}
		byKey[key] = c
		order = append(order, c)
		return c
	}
	for _, s := range p.Versions {
		add(s)
	}
	for _, f := range p.Files {
		if w, ok := ParseWheel(f.Filename); ok {
			var c *candidate
			if len(p.Versions) == 0 {
				c = add(w.Version)
			} else if v, err := version.Parse(w.Version); err == nil {
				c = byKey[v.String()]
			}
			if c != nil {
				c.files = append(c.files, f)
			}
		}
	}
	out := make([]candidate, len(order))
	for i, c := range order {
		out[i] = *c
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].v.GreaterThan(out[j].v) })
	return out
}

// wheelFor is the file pip would install for c, or why there is none. A
// version whose every file is yanked, or which has no wheel for this Python
// and platform, has none.
func wheelFor(c candidate, py Python, plat Platform) (File, string) {
	if len(c.files) == 0 {
		return File{}, "no files"
	}
	reasons := map[string]bool{}
	for _, f := range c.files {
		why := fileFits(f, py, plat)
		if why == "" {
			return f, ""
		}
		if why != "not a wheel" {
			reasons[why] = true
		}
	}
	var rs []string
	for r := range reasons {
		rs = append(rs, r)
	}
	sort.Strings(rs)
	allYanked := true
	for _, f := range c.files {
		allYanked = allYanked && f.Yanked.Yanked
	}
	if allYanked {
		return File{}, "every file yanked"
	}
	return File{}, fmt.Sprintf("no wheel for %s on %s (%s)", py.Tag(), plat, strings.Join(rs, "; "))
}

// kindOf is which channel a version belongs to: "release" for a final
// release, "nightly" for a .devN, "" for a pre-release (rc, a, b), which no
// channel takes.
func kindOf(spelled string, v *semver.Version) string {
	switch {
	case isDev(spelled):
		return ChannelNightly
	case v.Prerelease() == "":
		return ChannelRelease
	}
	return ""
}

// newestIn is the newest version of channel in p that installs with py on
// plat; skipped lists the newer versions of the channel passed over, and why.
func newestIn(p *Project, dist, channel string, py Python, plat Platform) (r Release, skipped []string, err error) {
	for _, c := range candidates(p) {
		if kindOf(c.spelled, c.v) != channel {
			continue
		}
		f, why := wheelFor(c, py, plat)
		if why != "" {
			skipped = append(skipped, fmt.Sprintf("%s %s: %s", dist, c.spelled, why))
			continue
		}
		return Release{Distribution: dist, Version: c.spelled, Wheel: f.Filename}, skipped, nil
	}
	return Release{}, skipped, fmt.Errorf("%s has no %s version with a wheel for %s on %s: %w", dist, channel, py.Tag(), plat, errNoWheel)
}

// Resolver answers the matrix's questions of the index for one platform.
type Resolver struct {
	Index    *Index
	Platform Platform
}

// Newest resolves a channel's newest version for py: the highest over the
// channel's distributions, the earlier distribution on a tie. notes say
// what was passed over.
func (rs *Resolver) Newest(channel string, py Python) (r Release, notes []string, err error) {
	dists, err := channelDistributions(channel)
	if err != nil {
		return r, nil, err
	}
	var best *semver.Version
	var errs []string
	for _, d := range dists {
		p, err := rs.Index.Project(d)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		got, skipped, err := newestIn(p, d, channel, py, rs.Platform)
		notes = append(notes, skipped...)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		v, _ := version.Parse(got.Version)
		if best == nil || v.GreaterThan(best) {
			if best != nil {
				notes = append(notes, fmt.Sprintf("%s %s is older", r.Distribution, r.Version))
			}
			best, r = v, got
		} else {
			notes = append(notes, fmt.Sprintf("%s %s is not newer", got.Distribution, got.Version))
		}
	}
	if best == nil {
		return r, notes, fmt.Errorf("newest %s: %s", channel, strings.Join(errs, "; "))
	}
	return r, notes, nil
}

// Check confirms that dist has version v with a wheel for py here.
func (rs *Resolver) Check(dist, v string, py Python) (Release, error) {
	want, err := version.Parse(v)
	if err != nil {
		return Release{}, err
	}
	p, err := rs.Index.Project(dist)
	if err != nil {
		return Release{}, err
	}
	for _, c := range candidates(p) {
		if c.v.Equal(want) {
			f, why := wheelFor(c, py, rs.Platform)
			if why != "" {
				return Release{}, fmt.Errorf("%s %s: %s: %w", dist, v, why, errNoWheel)
			}
			return Release{Distribution: dist, Version: c.spelled, Wheel: f.Filename}, nil
		}
	}
	return Release{}, fmt.Errorf("%s has no version %s: %w", dist, v, errNoWheel)
}

// Resolution is how one axis entry resolved for one Python: a TensorFlow
// one, or a jax one (Frontend FrontendJax, with the jaxlib beside jax).
type Resolution struct {
	Frontend string `json:"frontend,omitempty"`
	// Axis is "2.19.1", "newest release" or "newest nightly" for
	// TensorFlow; "newest release" or "release before" for jax.
	Axis    string   `json:"axis"`
	Python  string   `json:"python"`
	Release Release  `json:"release"`
	Jaxlib  *Release `json:"jaxlib,omitempty"`
	Error   string   `json:"error,omitempty"`
	Notes   []string `json:"notes,omitempty"`
}

// axisName is how a channel's axis entry is named.
func axisName(channel string) string { return "newest " + channel }

// Plan lays out the cells: every TensorFlow of the axis with every Python.
// A version both fixed and newest is one cell with both axis names. A fixed
// release without a wheel for a Python is a skipped cell; a fixed release
// that could not be checked (the index did not answer) is still planned,
// since pip may yet install it; a channel that did not resolve has no cell.
func (rs *Resolver) Plan(pythons []Python) ([]Cell, []Resolution) {
	var cells []Cell
	var res []Resolution
	index := map[string]int{}
	add := func(c Cell) {
		if i, ok := index[c.Name]; ok {
			cells[i].Axes = append(cells[i].Axes, c.Axes...)
			if c.Channel != "" {
				cells[i].Channel = c.Channel
			}
			return
		}
		index[c.Name] = len(cells)
		cells = append(cells, c)
	}
	for _, py := range pythons {
		for _, v := range Releases {
			r, err := rs.Check(ReleaseDistribution, v, py)
			c := newCell(Release{Distribution: ReleaseDistribution, Version: v, Wheel: r.Wheel}, py, v, "")
			entry := Resolution{Axis: v, Python: py.Minor(), Release: c.Release}
			if err != nil {
				entry.Error = err.Error()
				if errors.Is(err, errNoWheel) {
					c.Skip = err.Error()
				}
			}
			res = append(res, entry)
			add(c)
		}
		for _, ch := range Channels {
			r, notes, err := rs.Newest(ch, py)
			entry := Resolution{Axis: axisName(ch), Python: py.Minor(), Release: r, Notes: notes}
			if err != nil {
				entry.Error = err.Error()
				res = append(res, entry)
				continue
			}
			res = append(res, entry)
			add(newCell(r, py, axisName(ch), ch))
		}
	}
	return cells, res
}

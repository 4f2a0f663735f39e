package matrix

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The jax axis: the newest jax release and the newest of the minor before
// it, each with its jaxlib, resolved at run time from the package index as
// the TensorFlow channels are. A jax cell installs jax and jaxlib only (no
// TensorFlow), so the library is built with the JAX frontend alone.

// The distributions of the jax axis.
const (
	JaxDistribution    = "jax"
	JaxlibDistribution = "jaxlib"
)

// JaxMinPython is the oldest Python the jax axis looks for: jax 0.11 and
// later publish wheels for 3.12 and newer only. Each release's own
// requires-python still decides, file by file.
const JaxMinPython = 12

// The jax axis entries, in the order the report shows them, and the
// channel words a filter names them by ("release" is shared with
// TensorFlow's newest release: both are the newest release of their
// framework).
const (
	JaxNewest        = "newest release"
	JaxBefore        = "release before"
	JaxChannelNewest = ChannelRelease
	JaxChannelBefore = "previous"
)

// JaxChannels maps each jax axis entry to its channel word.
var JaxChannels = map[string]string{JaxNewest: JaxChannelNewest, JaxBefore: JaxChannelBefore}

// jaxAxes lists the jax axis entries in report order.
var jaxAxes = []string{JaxNewest, JaxBefore}

// finalRelease is a final release of jax or jaxlib: numbers only. jaxlib
// numbers its rebuilds with a fourth part (0.12.0.1), which plugin/version's
// semver mapping cannot order, so the jax axis compares the parts itself.
// Pre-releases (rc, a, b), developmental, post and local versions are not
// releases and are passed over, as the TensorFlow release channel passes
// over pre-releases.
var finalRelease = regexp.MustCompile(`^\d+(\.\d+)+$`)

// jaxVersion is one final release of a project, with its wheels.
type jaxVersion struct {
	spelled string // as the index spells it
	parts   []int
	files   []File
}

// releaseParts reads a final release's numbers; ok is false for anything else.
func releaseParts(s string) (parts []int, ok bool) {
	s = strings.TrimSpace(s)
	if !finalRelease.MatchString(s) {
		return nil, false
	}
	for _, f := range strings.Split(s, ".") {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, false
		}
		parts = append(parts, n)
	}
	return parts, true
}

// compareParts orders two releases as PEP 440 does: part by part, a missing
// part counting as 0 (0.12 is 0.12.0).
func compareParts(a, b []int) int {
	for i := 0; i < max(len(a), len(b)); i++ {
		var x, y int
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// partsKey is a release's identity: its parts without trailing zeros.
func partsKey(p []int) string {
	n := len(p)
	for n > 1 && p[n-1] == 0 {
		n--
	}
	s := make([]string, n)
	for i := range s {
		s[i] = strconv.Itoa(p[i])
	}
	return strings.Join(s, ".")
}

// minorOf is "X.Y" of a release's parts.
func minorOf(p []int) string { return fmt.Sprintf("%d.%d", p[0], p[1]) }

// jaxVersions are a project's final releases with their wheels, newest
// first: from the versions list (API 1.1), else from the wheel names.
func jaxVersions(p *Project) []jaxVersion {
	byKey := map[string]*jaxVersion{}
	var order []*jaxVersion
	add := func(spelled string) *jaxVersion {
		parts, ok := releaseParts(spelled)
		if !ok {
			return nil
		}
		k := partsKey(parts)
		if v, ok := byKey[k]; ok {
			return v
		}
		v := &jaxVersion{spelled: spelled, parts: parts}
		byKey[k] = v
		order = append(order, v)
		return v
	}
	for _, s := range p.Versions {
		add(s)
	}
	for _, f := range p.Files {
		w, ok := ParseWheel(f.Filename)
		if !ok {
			continue
		}
		var v *jaxVersion
		if len(p.Versions) == 0 {
			v = add(w.Version)
		} else if parts, ok := releaseParts(w.Version); ok {
			v = byKey[partsKey(parts)]
		}
		if v != nil {
			v.files = append(v.files, f)
		}
	}
	out := make([]jaxVersion, len(order))
	for i, v := range order {
		out[i] = *v
	}
	sort.SliceStable(out, func(i, j int) bool { return compareParts(out[i].parts, out[j].parts) > 0 })
	return out
}

// pickJaxlib is the jaxlib a jax release is installed with here: the one
// of the same version, with a wheel for py on plat; why says why there is
// none. jax requires a jaxlib no newer than itself and at least some
// minimum of its own; its own version always satisfies both, so the pair
// always installs, where an older jaxlib of the minor may not.
func pickJaxlib(libs []jaxVersion, jax jaxVersion, py Python, plat Platform) (r *Release, why string) {
	for _, l := range libs {
		if compareParts(l.parts, jax.parts) != 0 {
			continue
		}
		f, reason := wheelFor(candidate{spelled: l.spelled, files: l.files}, py, plat)
		if reason != "" {
			return nil, fmt.Sprintf("%s %s: %s", JaxlibDistribution, l.spelled, reason)
		}
		return &Release{Distribution: JaxlibDistribution, Version: l.spelled, Wheel: f.Filename}, ""
	}
	return nil, fmt.Sprintf("%s %s: no %s %s", JaxDistribution, jax.spelled, JaxlibDistribution, jax.spelled)
}

// JaxAxis resolves the jax axis for py: the newest jax release that
// installs here with the jaxlib of its version, and the newest release of
// an earlier minor that does. It returns one Resolution per entry of the
// axis, with Error set where none was found.
func (rs *Resolver) JaxAxis(py Python) []Resolution {
	res := make([]Resolution, len(jaxAxes))
	for i, a := range jaxAxes {
		res[i] = Resolution{Frontend: FrontendJax, Axis: a, Python: py.Minor()}
	}
	fail := func(err error) []Resolution {
		for i := range res {
			res[i].Error = err.Error()
		}
		return res
	}
	jp, err := rs.Index.Project(JaxDistribution)
	if err != nil {
		return fail(err)
	}
	lp, err := rs.Index.Project(JaxlibDistribution)
	if err != nil {
		return fail(err)
	}
	libs := jaxVersions(lp)
	at := 0           // the entry being resolved
	newestMinor := "" // once the newest is found: its minor
	for _, j := range jaxVersions(jp) {
		if at == len(res) {
			break
		}
		if newestMinor != "" && minorOf(j.parts) == newestMinor {
			continue // an older release of the newest minor: not "the one before"
		}
		cur := &res[at]
		f, why := wheelFor(candidate{spelled: j.spelled, files: j.files}, py, rs.Platform)
		if why != "" {
			cur.Notes = append(cur.Notes, fmt.Sprintf("%s %s: %s", JaxDistribution, j.spelled, why))
			continue
		}
		lib, why := pickJaxlib(libs, j, py, rs.Platform)
		if lib == nil {
			cur.Notes = append(cur.Notes, why)
			continue
		}
		cur.Release = Release{Distribution: JaxDistribution, Version: j.spelled, Wheel: f.Filename}
		cur.Jaxlib = lib
		newestMinor = minorOf(j.parts)
		at++
	}
	for i := at; i < len(res); i++ {
		if i == 0 {
			res[i].Error = fmt.Errorf("%s has no release that installs with its %s for %s on %s: %w", JaxDistribution, JaxlibDistribution, py.Tag(), rs.Platform, errNoWheel).Error()
		} else {
			res[i].Error = fmt.Errorf("%s has no release of a minor before %s that installs with its %s for %s on %s: %w", JaxDistribution, newestMinor, JaxlibDistribution, py.Tag(), rs.Platform, errNoWheel).Error()
		}
	}
	return res
}

// newJaxCell is the cell of a resolved jax axis entry.
func newJaxCell(r Resolution, py Python) Cell {
	jaxlib := *r.Jaxlib
	return Cell{
		Name:     fmt.Sprintf("%s-%s-py%s", r.Release.Distribution, r.Release.Version, py.Minor()),
		Frontend: FrontendJax,
		Release:  r.Release,
		Jaxlib:   &jaxlib,
		Python:   py,
		Axes:     []string{r.Axis},
		Channel:  JaxChannels[r.Axis],
	}
}

// PlanJax lays out the jax cells: each entry of the jax axis with each
// Python. An entry that did not resolve has no cell, as a TensorFlow
// channel that did not resolve has none. Without any Python for jax
// (noPython says why), each entry is one skipped cell, so the report and a
// filtered run say so rather than finding nothing.
func (rs *Resolver) PlanJax(pythons []Python, noPython string) ([]Cell, []Resolution) {
	var cells []Cell
	var res []Resolution
	if len(pythons) == 0 {
		for _, a := range jaxAxes {
			res = append(res, Resolution{Frontend: FrontendJax, Axis: a, Error: noPython})
			cells = append(cells, Cell{Name: "jax-" + strings.ReplaceAll(a, " ", "-"), Frontend: FrontendJax,
				Release: Release{Distribution: JaxDistribution}, Axes: []string{a}, Channel: JaxChannels[a], Skip: noPython})
		}
		return cells, res
	}
	for _, py := range pythons {
		for _, r := range rs.JaxAxis(py) {
			res = append(res, r)
			if r.Error == "" {
				cells = append(cells, newJaxCell(r, py))
			}
		}
	}
	return cells, res
}

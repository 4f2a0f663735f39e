package docs

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/metalplug/metalplug/plugin/tf/lower"
)

// CoveragePath is the table of every op TensorFlow registers a GPU kernel
// for, and what the device has for it.
const CoveragePath = "docs/coverage.md"

// Status is what the device has for one of TensorFlow's GPU ops.
type Status string

const (
	// Ours: the device registers a kernel of its own (plugin/tf/lower).
	Ours Status = "ours"
	// Inherited: TensorFlow's DEVICE_DEFAULT kernels, which every device
	// type inherits, run it on the device.
	Inherited Status = "inherited"
	// Excluded: no kernel of ours should exist, for a Reason.
	Excluded Status = "excluded"
	// Missing: the device has no kernel for it yet; TensorFlow runs it on
	// the CPU (or, with soft placement off, raises).
	Missing Status = "missing"
)

// Statuses is every status, in the order the document counts them.
var Statuses = []Status{Ours, Inherited, Excluded, Missing}

// neverDTypes are never registered by the device (Metal has no 64-bit
// float), so the document does not list them as lacking op by op.
var neverDTypes = []string{"float64", "complex128"}

// DTypes are the dtypes a set of kernels takes, by type attribute. A nil
// list means any type: some kernel leaves the attribute unconstrained.
type DTypes map[string][]string

// OurOp is one op the device registers, as the coverage table sees it.
type OurOp struct {
	Op     string
	DTypes DTypes
	// Variable: registered only where TensorFlow exports the
	// resource-variable C API (lower.VariableOps).
	Variable bool
}

// OpCoverage is one of TensorFlow's GPU ops and what the device has for it.
type OpCoverage struct {
	Op     string
	Status Status
	Reason Reason // when Excluded
	// GPU is what TensorFlow's GPU kernels take; Device what the device's
	// kernels (ours, or the DEVICE_DEFAULT ones) take; Lacking what the
	// first has and the second not, but neverDTypes, for ours and inherited.
	GPU, Device, Lacking DTypes
	// Variable: an op of ours registered only where TensorFlow exports the
	// resource-variable C API (OurOp.Variable); Otherwise is its status
	// where TensorFlow does not, inherited or missing.
	Variable  bool
	Otherwise Status
}

// Classification is every op of a snapshot's GPU registry, classified.
type Classification struct {
	Source RegistrySource
	Ops    []OpCoverage
	// Beyond are ops of ours TensorFlow has no GPU kernel for.
	Beyond []string
	// DefaultOnly counts ops with DEVICE_DEFAULT kernels and no GPU ones,
	// which the device inherits too.
	DefaultOnly int
}

// Count is how many ops have status s (and, when r is not empty, reason r).
func (c *Classification) Count(s Status, r Reason) int {
	n := 0
	for _, o := range c.Ops {
		if o.Status == s && (r == "" || o.Reason == r) {
			n++
		}
	}
	return n
}

// union is what registrations rs take, by attribute.
func union(rs []Registration) DTypes {
	u := DTypes{}
	for _, r := range rs {
		for a, ts := range r {
			if v, seen := u[a]; seen && v == nil {
				continue
			}
			u[a] = append(u[a], ts...)
		}
	}
	for a := range u {
		for _, r := range rs {
			if _, ok := r[a]; !ok {
				u[a] = nil // this kernel takes any type for a
			}
		}
		if u[a] != nil {
			u[a] = dtypeSet(u[a])
		}
	}
	return u
}

// merge is what a or b take.
func merge(a, b DTypes) DTypes {
	m := DTypes{}
	for attr := range a {
		m[attr] = a[attr]
	}
	for attr, ts := range b {
		cur, ok := m[attr]
		switch {
		case !ok:
			m[attr] = ts
		case cur == nil || ts == nil:
			m[attr] = nil
		default:
			m[attr] = dtypeSet(cur, ts...)
		}
	}
	return m
}

// lacking is what want takes and have does not, but neverDTypes. An
// attribute have leaves unconstrained takes everything; one want leaves
// unconstrained cannot be listed, so it is left out.
func lacking(want, have DTypes) DTypes {
	l := DTypes{}
	for a, ts := range want {
		h, constrained := have[a]
		if ts == nil || !constrained || h == nil {
			continue
		}
		for _, t := range ts {
			if !slices.Contains(h, t) && !slices.Contains(neverDTypes, t) {
				l[a] = append(l[a], t)
			}
		}
	}
	return l
}

// covers reports whether have takes everything want does.
func covers(have, want DTypes) bool {
	for a, ts := range want {
		h, constrained := have[a]
		if !constrained || h == nil {
			continue
		}
		if ts == nil {
			return false
		}
		for _, t := range ts {
			if !slices.Contains(h, t) {
				return false
			}
		}
	}
	return true
}

// inherited reports whether the DEVICE_DEFAULT kernels of o give the
// device the op: they take float32 for every attribute the GPU kernels
// take it for (or, for an op whose GPU kernels take no float32, all they
// take). Many DEVICE_DEFAULT kernels take only int32: they are TensorFlow's
// host-memory kernels for shape arithmetic, which keep int32 tensors on the
// host whatever the device, and give the device nothing to compute with.
func inherited(o RegistryOp) bool {
	if len(o.Default) == 0 {
		return false
	}
	gpu, def := union(o.GPU), union(o.Default)
	float32Op := false
	for a, ts := range gpu {
		if ts != nil && !slices.Contains(ts, "float32") {
			continue
		}
		float32Op = true
		if d, constrained := def[a]; constrained && d != nil && !slices.Contains(d, "float32") {
			return false
		}
	}
	return float32Op || covers(def, gpu)
}

// internalName reports whether op is named as TensorFlow's internal ops
// (a leading underscore) or XLA's are.
func internalName(op string) bool {
	return strings.HasPrefix(op, "_") || strings.HasPrefix(op, "Xla")
}

// tableReasons are the reasons the Exclusions table may give.
var tableReasons = func() []Reason {
	var rs []Reason
	for _, r := range Reasons {
		if !r.FromDefinition {
			rs = append(rs, r.Reason)
		}
	}
	return rs
}()

// Classify gives every op with a GPU kernel in reg one status: ours when
// ours registers it, else inherited when its DEVICE_DEFAULT kernels give
// it to the device, else excluded when its definition or the exclusion
// table says so, else missing. It fails on an exclusion table that does not
// fit reg: a reason not in Reasons (or one read from definitions), an op
// without a GPU kernel, an op of ours, an inherited one, one its definition
// already excludes, or an internal one without an internal name.
func Classify(reg *Registry, ours []OurOp, exclusions map[string]Reason) (*Classification, error) {
	mine := map[string]OurOp{}
	for _, o := range ours {
		mine[o.Op] = o
	}
	var errs []error
	for op, r := range exclusions {
		o, inReg := reg.Ops[op]
		_, isOurs := mine[op]
		switch {
		case !slices.Contains(tableReasons, r):
			errs = append(errs, fmt.Errorf("%s: excluded as %q, which is not a reason the table may give (%v); the others come from the op's definition", op, r, tableReasons))
		case !inReg || len(o.GPU) == 0:
			errs = append(errs, fmt.Errorf("%s: excluded as %s, but %s %s registers no GPU kernel for it", op, r, reg.Distribution, reg.Version))
		case isOurs:
			errs = append(errs, fmt.Errorf("%s: excluded as %s, but the device registers it", op, r))
		case inherited(o):
			errs = append(errs, fmt.Errorf("%s: excluded as %s, but TensorFlow's DEVICE_DEFAULT kernels give it to the device", op, r))
		case reg.Removed(op) || o.Ref:
			errs = append(errs, fmt.Errorf("%s: excluded as %s, but its definition already excludes it", op, r))
		case r == Internal && !internalName(op):
			errs = append(errs, fmt.Errorf("%s: excluded as %s, but it has no internal name (_ or Xla)", op, r))
		}
	}
	if len(errs) > 0 {
		sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
		return nil, fmt.Errorf("the exclusion table does not fit %s %s:\n%w", reg.Distribution, reg.Version, errors.Join(errs...))
	}
	c := &Classification{Source: reg.RegistrySource}
	for _, op := range reg.GPUOps() {
		o := reg.Ops[op]
		oc := OpCoverage{Op: op, GPU: union(o.GPU)}
		def := union(o.Default)
		m, isOurs := mine[op]
		switch {
		case isOurs:
			oc.Status, oc.Variable = Ours, m.Variable
			if m.Variable {
				oc.Otherwise = Missing
				if inherited(o) {
					oc.Otherwise = Inherited
				}
			}
			oc.Device = m.DTypes
			oc.Lacking = lacking(oc.GPU, merge(m.DTypes, def))
		case inherited(o):
			oc.Status, oc.Device = Inherited, def
			oc.Lacking = lacking(oc.GPU, def)
		case reg.Removed(op):
			oc.Status, oc.Reason = Excluded, Removed
		case o.Ref:
			oc.Status, oc.Reason = Excluded, RefVariable
		case exclusions[op] != "":
			oc.Status, oc.Reason = Excluded, exclusions[op]
		default:
			oc.Status = Missing
			if len(o.Default) > 0 {
				oc.Device = def
			}
		}
		c.Ops = append(c.Ops, oc)
	}
	for _, o := range ours {
		if len(reg.Ops[o.Op].GPU) == 0 {
			c.Beyond = append(c.Beyond, o.Op)
		}
	}
	sort.Strings(c.Beyond)
	for _, o := range reg.Ops {
		if len(o.GPU) == 0 && len(o.Default) > 0 {
			c.DefaultOnly++
		}
	}
	return c, nil
}

// OurOps is the device's kernel registry (plugin/tf/lower), as Classify
// takes it.
func OurOps() []OurOp {
	var ours []OurOp
	for _, k := range lower.Kernels() {
		o := OurOp{Op: k.Op, DTypes: DTypes{}, Variable: k.Variables.Access != lower.VarNone}
		for _, c := range k.Constraints {
			for _, d := range c.DTypes {
				o.DTypes[c.Attr] = append(o.DTypes[c.Attr], d.String())
			}
			sort.Strings(o.DTypes[c.Attr])
		}
		ours = append(ours, o)
	}
	return ours
}

// Coverage renders docs/coverage.md from the snapshot under root, the
// device's kernel registry and the exclusion table.
func Coverage(root string) (string, error) {
	reg, err := ReadRegistry(root)
	if err != nil {
		return "", err
	}
	c, err := Classify(reg, OurOps(), Exclusions)
	if err != nil {
		return "", err
	}
	return RenderCoverage(c), nil
}

// String spells d as the table does: "T: float16, float32; Tidx: int32",
// or "unconstrained" for kernels without type constraints.
func (d DTypes) String() string {
	if len(d) == 0 {
		return "unconstrained"
	}
	attrs := slices.Sorted(maps.Keys(d))
	parts := make([]string, len(attrs))
	for i, a := range attrs {
		ts := "any"
		if d[a] != nil {
			ts = strings.Join(d[a], ", ")
		}
		parts[i] = a + ": " + ts
	}
	return strings.Join(parts, "; ")
}

// lacks spells a Lacking set: "-" when nothing lacks.
func (d DTypes) lacks() string {
	if len(d) == 0 {
		return "-"
	}
	return d.String()
}

// RenderCoverage renders c as docs/coverage.md.
func RenderCoverage(c *Classification) string {
	var b strings.Builder
	src := c.Source
	fmt.Fprintf(&b, "# Coverage of TensorFlow's GPU ops\n\n")
	fmt.Fprintf(&b, "Generated by `go tool mage kernels` from [tf_gpu_registry.json](tf_gpu_registry.json), the GPU and DEVICE_DEFAULT kernels of `%s` %s (%s) "+
		"as its own registry lists them (refreshed by `go tool mage coverageRegistry`), the device's kernel registry (`plugin/tf/lower`, [kernels.md](kernels.md)) "+
		"and the exclusion table (`setup/docs/exclusions.go`); CI fails when this file is stale.\n\n", src.Distribution, src.Version, src.Platform)
	fmt.Fprintf(&b, "Every op TensorFlow registers a GPU kernel for is here, with one status:\n\n")
	fmt.Fprintf(&b, "- **ours**: the device registers a kernel of its own.\n")
	fmt.Fprintf(&b, "- **inherited**: TensorFlow's DEVICE_DEFAULT kernels, which every device type inherits, run it on the device. "+
		"They must take float32 wherever TensorFlow's GPU kernels do (or, for an op whose GPU kernels take no float32, all they take): "+
		"many take only int32 (TensorFlow's host-memory kernels for shape arithmetic), and such an op, which has no kernel on the device for the dtypes models compute in, is not inherited but missing.\n")
	fmt.Fprintf(&b, "- **excluded**: no kernel of ours should exist, for one of the reasons below.\n")
	fmt.Fprintf(&b, "- **missing**: the device has no kernel for it yet, so TensorFlow runs it on the CPU (or, with soft placement off, raises).\n\n")
	fmt.Fprintf(&b, "| status | ops |\n| --- | --- |\n")
	for _, s := range Statuses {
		n := c.Count(s, "")
		cell := fmt.Sprint(n)
		if s == Ours {
			otherwise := map[Status]int{}
			for _, o := range c.Ops {
				if o.Variable {
					otherwise[o.Otherwise]++
				}
			}
			cell += fmt.Sprintf(" (%d of them only where TensorFlow exports the resource-variable C API, see [kernels.md](kernels.md); elsewhere %d of those are inherited and %d missing)",
				otherwise[Inherited]+otherwise[Missing], otherwise[Inherited], otherwise[Missing])
		}
		fmt.Fprintf(&b, "| %s | %s |\n", s, cell)
		if s == Excluded {
			for _, r := range Reasons {
				fmt.Fprintf(&b, "| excluded: %s | %d |\n", r.Reason, c.Count(Excluded, r.Reason))
			}
		}
	}
	fmt.Fprintf(&b, "| **TensorFlow's GPU ops** | **%d** |\n\n", len(c.Ops))
	fmt.Fprintf(&b, "None is unaccounted: the tests of `setup/docs` fail when an op of the snapshot has no status, or when the exclusion table names an op "+
		"without a GPU kernel, one of ours, an inherited one or one its definition already excludes. "+
		"The snapshot is committed so that CI does not download the full wheel; `go tool mage test` fails when it is of another TensorFlow minor than the pin.\n\n")
	fmt.Fprintf(&b, "The device also inherits the DEVICE_DEFAULT kernels of %d ops TensorFlow registers no GPU kernel for. ", c.DefaultOnly)
	if len(c.Beyond) == 0 {
		fmt.Fprintf(&b, "Every op the device registers has a GPU kernel in TensorFlow.\n\n")
	} else {
		noun := "ops"
		if len(c.Beyond) == 1 {
			noun = "op"
		}
		fmt.Fprintf(&b, "The device registers %d %s TensorFlow has no GPU kernel for: %s.\n\n", len(c.Beyond), noun, strings.Join(c.Beyond, ", "))
	}
	fmt.Fprintf(&b, "## Reasons for an exclusion\n\n| reason | means |\n| --- | --- |\n")
	for _, r := range Reasons {
		fmt.Fprintf(&b, "| %s | %s |\n", r.Reason, r.Means)
	}
	fmt.Fprintf(&b, "\n## Every op\n\n")
	fmt.Fprintf(&b, "Dtypes by type attribute (`any`: a kernel leaves it unconstrained). The last column, for ours and inherited ops, is what TensorFlow's GPU kernels take and the device's do not; "+
		"%s are left out of it, since the device never registers them (Metal has no 64-bit float).\n\n", strings.Join(neverDTypes, " and "))
	fmt.Fprintf(&b, "| op | status | TensorFlow's GPU kernels | the device's kernels | the device lacks |\n| --- | --- | --- | --- | --- |\n")
	for _, o := range c.Ops {
		status, device, lack := string(o.Status), "-", ""
		switch o.Status {
		case Ours:
			device = o.Device.String()
			if o.Variable {
				status = "ours where TensorFlow exports the resource-variable C API, else " + string(o.Otherwise)
			}
			lack = o.Lacking.lacks()
		case Inherited:
			device = "DEVICE_DEFAULT: " + o.Device.String()
			lack = o.Lacking.lacks()
		case Excluded:
			status = "excluded: " + string(o.Reason)
		case Missing:
			if o.Device != nil {
				device = "DEVICE_DEFAULT: " + o.Device.String()
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", o.Op, status, o.GPU, device, lack)
	}
	return b.String()
}

package matrix

import (
	"fmt"
	"slices"
	"strings"

	"github.com/metalplug/metalplug/plugin/version"
)

// The frameworks a cell can test. TensorFlow's is the empty string: the
// cells of the reports written before jax joined the matrix have none.
const (
	FrontendTensorFlow = ""
	FrontendJax        = "jax"
)

// Cell is one TensorFlow with one Python, or one jax (with its jaxlib) with
// one Python.
type Cell struct {
	// Name is "<distribution>-<version>-py<X.Y>": the directory of its build
	// under build/matrix and the key a filtered run merges results by.
	Name string `json:"name"`
	// Frontend is FrontendJax for a jax cell.
	Frontend string  `json:"frontend,omitempty"`
	Release  Release `json:"release"`
	// Jaxlib is the jaxlib a jax cell installs beside Release (jax).
	Jaxlib *Release `json:"jaxlib,omitempty"`
	Python Python   `json:"python"`
	// Axes are the axis entries this cell stands for: "2.21.0", and
	// "newest release" too when that resolved to the same version.
	Axes []string `json:"axes"`
	// Channel is release or nightly when the cell is that channel's newest;
	// for a jax cell, release or previous (JaxChannels).
	Channel string `json:"channel,omitempty"`
	// Skip says why the cell cannot run here (no wheel for its Python).
	Skip string `json:"skip,omitempty"`
}

func newCell(r Release, py Python, axis, channel string) Cell {
	return Cell{
		Name:    fmt.Sprintf("%s-%s-py%s", r.Distribution, r.Version, py.Minor()),
		Release: r,
		Python:  py,
		Axes:    []string{axis},
		Channel: channel,
	}
}

// IsJax reports whether the cell tests jax rather than TensorFlow.
func (c Cell) IsJax() bool { return c.Frontend == FrontendJax }

// Pin is the minor release the cell builds for. A cell tests another
// release than the tree's pin, so it passes its own. A jax cell's is its
// jaxlib's minor, which is what the library is stamped with.
func (c Cell) Pin() string {
	if c.IsJax() {
		if c.Jaxlib == nil {
			return ""
		}
		return version.Minor(c.Jaxlib.Version)
	}
	return version.Minor(c.Release.Version)
}

// Requirements are what pip installs into the cell's venv: the TensorFlow,
// or jax with exactly the jaxlib the axis resolved (jax alone would let pip
// pick any jaxlib its range allows).
func (c Cell) Requirements() []string {
	if c.IsJax() && c.Jaxlib != nil {
		return []string{c.Release.Requirement(), c.Jaxlib.Requirement()}
	}
	return []string{c.Release.Requirement()}
}

// VenvName is the cell's venv under the venv directory. The nightly's venv
// is named without its version: each week's nightly is installed over the
// last one instead of leaving another 2 GB behind.
func (c Cell) VenvName() string {
	if !c.IsJax() && c.Channel == ChannelNightly {
		return fmt.Sprintf("matrix-%s-py%s", c.Release.Distribution, c.Python.Minor())
	}
	return "matrix-" + c.Name
}

// keys are the words a filter term can name a cell by.
func (c Cell) keys() []string {
	k := []string{c.Name, c.Release.Distribution}
	if c.Release.Version != "" {
		k = append(k, c.Release.Version, version.Minor(c.Release.Version))
	}
	if c.Python.Version != "" {
		k = append(k, "py"+c.Python.Minor(), c.Python.Minor())
	}
	if c.Jaxlib != nil {
		k = append(k, c.Jaxlib.Distribution, c.Jaxlib.Version, version.Minor(c.Jaxlib.Version))
	}
	if c.Channel != "" {
		k = append(k, c.Channel)
	}
	return k
}

// Matches reports whether the cell passes a filter: space- or
// comma-separated terms that must all name it exactly, by its name, its
// distribution, its version or minor, its Python ("py3.11" or "3.11"), or
// its channel ("release" is the newest release's cell, of TensorFlow and of
// jax, "nightly" the newest nightly's, "previous" the jax release before
// the newest). A jax cell also answers to "jaxlib" and its jaxlib's
// version and minor: "jax" selects the jax cells, "jax 0.12" the one of
// jax 0.12. An empty filter passes every cell.
func (c Cell) Matches(filter string) bool {
	keys := c.keys()
	for _, term := range strings.FieldsFunc(filter, func(r rune) bool { return r == ' ' || r == ',' }) {
		if !slices.Contains(keys, term) {
			return false
		}
	}
	return true
}

// Select is the cells that pass filter; a filter that passes none is an
// error naming the cells there are.
func Select(cells []Cell, filter string) ([]Cell, error) {
	var out []Cell
	for _, c := range cells {
		if c.Matches(filter) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		names := make([]string, len(cells))
		for i, c := range cells {
			names[i] = c.Name
		}
		return nil, fmt.Errorf("the filter %q selects no cell of the matrix (%s): name a version (2.19.1, 0.12.0), a minor (2.20, 0.12), a distribution (tensorflow-cpu, jax), a Python (py3.11), a channel (release, nightly, previous) or a cell", filter, strings.Join(names, ", "))
	}
	return out, nil
}

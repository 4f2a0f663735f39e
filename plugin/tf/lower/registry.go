// Package lower turns TensorFlow ops into IR programs. It is pure Go and knows
// nothing of cgo: the C boundary (package tf) reads a node's attributes and
// inputs into a Call, and a Kernel's Lower builds the program from it. Each op
// is lowered once here; every driver runs the result.
package lower

import (
	"fmt"
	"sort"

	"github.com/metalplug/metalplug/backend/ir"
)

// Constraint restricts a type attribute to some dtypes; a kernel is registered
// once per combination of its constraints' dtypes.
type Constraint struct {
	Attr   string
	DTypes []ir.DType
}

// Kernel is one TensorFlow op as the device implements it.
type Kernel struct {
	Op          string
	Constraints []Constraint
	// HostInputs names inputs that TensorFlow keeps in host memory and the
	// lowering reads as values (axes, shapes, permutations).
	HostInputs []string
	// HostInputIndex maps each HostInputs name to its input position.
	HostInputIndex []int
	// Attrs are read when TensorFlow constructs the kernel.
	Attrs []AttrSpec
	// Lower builds the op. File says where, for the generated kernel table.
	Lower func(c *Call) error
	File  string
}

var registry = map[string]*Kernel{}

// register adds k; the op's lowering file names itself for docs/kernels.md.
func register(k Kernel) {
	if _, dup := registry[k.Op]; dup {
		panic("lower: " + k.Op + " registered twice")
	}
	if len(k.HostInputs) != len(k.HostInputIndex) {
		panic("lower: " + k.Op + ": HostInputs and HostInputIndex differ in length")
	}
	registry[k.Op] = &k
}

// Kernels lists every registered kernel, sorted by op name.
func Kernels() []*Kernel {
	ks := make([]*Kernel, 0, len(registry))
	for _, k := range registry {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].Op < ks[j].Op })
	return ks
}

// Lookup finds the kernel for op.
func Lookup(op string) (*Kernel, bool) {
	k, ok := registry[op]
	return k, ok
}

// Combinations expands the kernel's constraints into one map per registration.
func (k *Kernel) Combinations() []map[string]ir.DType {
	combos := []map[string]ir.DType{{}}
	for _, c := range k.Constraints {
		var next []map[string]ir.DType
		for _, base := range combos {
			for _, d := range c.DTypes {
				m := make(map[string]ir.DType, len(base)+1)
				for a, v := range base {
					m[a] = v
				}
				m[c.Attr] = d
				next = append(next, m)
			}
		}
		combos = next
	}
	return combos
}

// IsHostInput reports whether input i is one the lowering reads on the host.
func (k *Kernel) IsHostInput(i int) bool {
	for _, h := range k.HostInputIndex {
		if h == i {
			return true
		}
	}
	return false
}

// Call is one invocation of a kernel: its attributes, its device inputs as
// program parameters, and its host inputs as values.
type Call struct {
	Op    string
	B     *ir.Builder
	Attrs *Attrs
	// In holds one program parameter per device input, in input order; host
	// inputs hold -1.
	In []ir.Value
	// Host maps a host input's position to its values.
	Host map[int][]int64
	// Out is set by Lower: one value per op output.
	Out []ir.Value
}

// Type is the type of input i.
func (c *Call) Type(i int) ir.TensorType { return c.B.Type(c.In[i]) }

// Errorf reports bad input to the op, naming it.
func (c *Call) Errorf(format string, args ...any) error {
	return fmt.Errorf("%s: %s", c.Op, fmt.Sprintf(format, args...))
}

// Build lowers k for inputs of the given types and host values into a program
// whose parameters are the device inputs and whose results are the outputs.
func (k *Kernel) Build(attrs *Attrs, in []ir.TensorType, host map[int][]int64) (*ir.Program, error) {
	b := ir.NewBuilder()
	c := &Call{Op: k.Op, B: b, Attrs: attrs, Host: host, In: make([]ir.Value, len(in))}
	for i, t := range in {
		if k.IsHostInput(i) {
			c.In[i] = -1
			continue
		}
		c.In[i] = b.Parameter(t)
	}
	if err := k.Lower(c); err != nil {
		return nil, err
	}
	if err := b.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", k.Op, err)
	}
	p, err := b.Build(c.Out...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.Op, err)
	}
	return p, nil
}

// Common dtype sets, as TensorFlow's GPU registers them.
var (
	Floats     = []ir.DType{ir.F32, ir.F16, ir.BF16}
	FloatsInts = []ir.DType{ir.F32, ir.F16, ir.BF16, ir.I32, ir.I64}
	All        = []ir.DType{ir.F32, ir.F16, ir.BF16, ir.I8, ir.I16, ir.I32, ir.I64, ir.U8, ir.Bool}
)

// T constrains attribute "T" to ds.
func T(ds []ir.DType) []Constraint { return []Constraint{{"T", ds}} }

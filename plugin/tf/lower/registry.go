// Package lower turns TensorFlow ops into IR programs. It is pure Go and knows
// nothing of cgo: the C boundary (package tf) reads a node's attributes and
// inputs into a Call, and a Kernel's Lower builds the program from it. Each op
// is lowered once here; every driver runs the result.
package lower

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/status"
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
	// Inputs are the op's input names in order, as its op definition spells
	// them; a list input (AddN's inputs, ConcatV2's values) counts once.
	// register checks every HostInputs name against them.
	Inputs []string
	// HostInputs names inputs that TensorFlow keeps in host memory and the
	// lowering reads as values (axes, shapes, permutations).
	HostInputs []string
	// HostInputIndex maps each HostInputs name to its input position; a
	// negative position counts from the end (-1 is the last input). register
	// derives it from Inputs; it is given only where a list input comes
	// first, so that positions count from the end (ConcatV2's axis).
	HostInputIndex []int
	// HostInputsOf, for an op whose host input is a list of any length
	// (SparseConcat's shapes, a cluster's host_args), gives the positions of
	// all its host inputs in a call of n inputs of a node with attributes a,
	// overriding HostInputIndex; HostInputs names the list and
	// HostInputIndex holds the position of its last element in a call with
	// one input per list.
	HostInputsOf func(a *Attrs, n int) []int
	// ReadInputs are device inputs whose contents decide the output shape
	// (Where): the frontend waits for the stream, then hands their bytes to
	// Lower in Call.Raw. They remain program parameters too.
	ReadInputs []int
	// ReadInputsOf is ReadInputs for a list input, whose positions depend
	// on the call's number of inputs n (DynamicStitch's indices are the
	// first n/2); it overrides ReadInputs.
	ReadInputsOf func(n int) []int
	// Attrs are read when TensorFlow constructs the kernel.
	Attrs []AttrSpec
	// Variables is set for ops whose leading inputs are resource variables
	// (variables.go).
	Variables Variables
	// Lower builds the op (every op but AssignVariableOp, which TensorFlow
	// computes itself). File says where, for the generated kernel table:
	// register fills it in with the file of the init function registering.
	Lower func(c *Call) error
	File  string
}

var registry = map[string]*Kernel{}

// register adds k; the op's lowering file names itself for docs/kernels.md.
func register(k Kernel) {
	if k.File == "" {
		k.File = callerInit()
	}
	if _, dup := registry[k.Op]; dup {
		panic("lower: " + k.Op + " registered twice")
	}
	k.deriveHostInputIndex()
	if len(k.HostInputs) != len(k.HostInputIndex) {
		panic("lower: " + k.Op + ": HostInputs and HostInputIndex differ in length")
	}
	if err := k.checkInputs(); err != nil {
		panic("lower: " + err.Error())
	}
	if (k.Lower == nil) != (k.Variables.Access == VarAssign) {
		panic("lower: " + k.Op + ": every op has a lowering but AssignVariableOp's kind, which has none")
	}
	registry[k.Op] = &k
}

// deriveHostInputIndex finds each host input's position by its name, unless
// the kernel gave them.
func (k *Kernel) deriveHostInputIndex() {
	if k.HostInputIndex != nil || len(k.HostInputs) == 0 {
		return
	}
	k.HostInputIndex = make([]int, len(k.HostInputs))
	for j, name := range k.HostInputs {
		// An absent name gets len(Inputs), which checkInputs rejects.
		k.HostInputIndex[j] = len(k.Inputs)
		if i := slices.Index(k.Inputs, name); i >= 0 {
			k.HostInputIndex[j] = i
		}
	}
}

// checkInputs verifies that each host input's name is the op input at its
// index, and that read inputs are device inputs.
func (k *Kernel) checkInputs() error {
	if k.Inputs == nil { // an op without inputs (StatelessRandomGetAlg) lists none: []string{}
		return fmt.Errorf("%s: Inputs is empty", k.Op)
	}
	for j, name := range k.HostInputs {
		i := k.HostInputIndex[j]
		if i < 0 {
			i += len(k.Inputs)
		}
		if i < 0 || i >= len(k.Inputs) || k.Inputs[i] != name {
			return fmt.Errorf("%s: host input %q is not input %d of %v", k.Op, name, k.HostInputIndex[j], k.Inputs)
		}
	}
	for _, r := range k.ReadInputs {
		if r < 0 || r >= len(k.Inputs) || k.IsHostInput(nil, r, len(k.Inputs)) {
			return fmt.Errorf("%s: read input %d is not a device input of %v", k.Op, r, k.Inputs)
		}
	}
	return nil
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

// IsHostInput reports whether input i of n, of a node with attributes a
// (nil: none read), is one the lowering reads on the host.
func (k *Kernel) IsHostInput(a *Attrs, i, n int) bool {
	if k.HostInputsOf != nil { // the whole list, whose length may be 0
		return slices.Contains(k.HostInputsOf(a, n), i)
	}
	for _, h := range k.HostInputIndex {
		if h == i || h < 0 && n+h == i {
			return true
		}
	}
	return false
}

// IsReadInput reports whether the lowering needs input i's contents.
func (k *Kernel) IsReadInput(i int) bool {
	for _, r := range k.ReadInputs {
		if r == i {
			return true
		}
	}
	return false
}

// ReadPositions lists the inputs, of a call with n inputs, whose contents
// the lowering needs (Call.Raw).
func (k *Kernel) ReadPositions(n int) []int {
	if k.ReadInputsOf != nil {
		return k.ReadInputsOf(n)
	}
	return k.ReadInputs
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
	// Raw maps each ReadInputs position to its bytes, row-major.
	Raw map[int][]byte
	// Out is set by Lower: one value per op output.
	Out []ir.Value

	types  []ir.TensorType // every input's type, host inputs included
	rng    bool
	member bool // lowered inside a cluster, which has no random state to give
}

// RngState adds the two parameters a random op draws with, after the op's
// own inputs: a Philox key (int64[1]) and counter (int64[2]). The frontend
// fills them on every call, from the op's seed attributes (or a fresh seed)
// and a counter that advances past the numbers already drawn, so the program
// stays the same from call to call while the numbers do not.
func (c *Call) RngState() (key, counter ir.Value) {
	if c.rng {
		panic("lower: " + c.Op + " asked for the random state twice")
	}
	if c.member {
		panic("lower: " + c.Op + " draws random numbers, which no cluster member may: the graph pass leaves stateful ops out")
	}
	c.rng = true
	key = c.B.Parameter(ir.TensorType{DType: ir.I64, Shape: ir.Shape{1}})
	counter = c.B.Parameter(ir.TensorType{DType: ir.I64, Shape: ir.Shape{2}})
	return key, counter
}

// Type is the type of input i, a host input's too; the zero type past the
// last input.
func (c *Call) Type(i int) ir.TensorType {
	if i < 0 || i >= len(c.types) {
		return ir.TensorType{}
	}
	return c.types[i]
}

// Inputs describes the types of every input, for error messages.
func (c *Call) Inputs() string {
	parts := make([]string, len(c.types))
	for i, t := range c.types {
		parts[i] = t.String()
	}
	return strings.Join(parts, ", ")
}

// Errorf reports bad input to the op, naming it.
func (c *Call) Errorf(format string, args ...any) error {
	return fmt.Errorf("%s: %s", c.Op, fmt.Sprintf(format, args...))
}

// Lowered is a built program and what the frontend must feed it.
type Lowered struct {
	Program *ir.Program
	// Rng says the last two parameters are the random state (Call.RngState).
	Rng bool
}

// Build lowers k for inputs of the given types and host values into a program
// whose parameters are the device inputs (then the random state, if the op
// asks for it) and whose results are the outputs.
//
// Bad input gives an error naming the op and the input types; Build never
// panics, even if a lowering has a bug.
func (k *Kernel) Build(attrs *Attrs, in []ir.TensorType, host map[int][]int64, raw map[int][]byte) (l *Lowered, err error) {
	b := ir.NewBuilder()
	if attrs == nil {
		attrs = NewAttrs()
	}
	c := &Call{Op: k.Op, B: b, Attrs: attrs, Host: host, Raw: raw, In: make([]ir.Value, len(in)), types: in}
	defer func() {
		if r := recover(); r != nil {
			l, err = nil, status.InternalError(fmt.Errorf("%s: internal error lowering inputs %s: %v", k.Op, c.Inputs(), r))
		}
	}()
	for i, t := range in {
		if k.IsHostInput(attrs, i, len(in)) {
			c.In[i] = -1
			continue
		}
		c.In[i] = b.Parameter(t)
	}
	if k.Lower == nil {
		return nil, fmt.Errorf("%s: TensorFlow computes this op; it has no program", k.Op)
	}
	if err := k.Lower(c); err != nil {
		return nil, err
	}
	if len(c.Out) == 0 {
		return nil, fmt.Errorf("%s: the lowering produced no outputs for inputs %s", k.Op, c.Inputs())
	}
	if err := b.Err(); err != nil {
		return nil, fmt.Errorf("%s: inputs %s: %w", k.Op, c.Inputs(), err)
	}
	p, err := b.Build(c.Out...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.Op, err)
	}
	// The builder checked each instruction as it went; the verifier checks
	// the program as a driver will see it. A failure here is a lowering bug.
	if err := ir.Verify(p); err != nil {
		return nil, status.InternalError(fmt.Errorf("%s: inputs %s: the lowering built an invalid program: %w", k.Op, c.Inputs(), err))
	}
	return &Lowered{Program: p, Rng: c.rng}, nil
}

// Common dtype sets: what TensorFlow's GPU kernels register, intersected
// with what the device supports (float32, float16, bfloat16, int32, int64,
// uint8, bool; never float64, which Metal lacks). TensorFlow's GPU runs most
// int32 kernels on the host (HostMemory on every input); this device runs them
// itself.
var (
	Floats = []ir.DType{ir.F32, ir.F16, ir.BF16}
	// FloatsInts is the usual set of an arithmetic GPU kernel.
	FloatsInts = []ir.DType{ir.F32, ir.F16, ir.BF16, ir.I32, ir.I64}
	// Numeric adds uint8, which a few arithmetic GPU kernels have.
	Numeric = []ir.DType{ir.F32, ir.F16, ir.BF16, ir.I32, ir.I64, ir.U8}
	// All is every dtype the device supports, for data movement.
	All = []ir.DType{ir.F32, ir.F16, ir.BF16, ir.I32, ir.I64, ir.U8, ir.Bool}
	// Indices are the index dtypes of gathers, scatters and shapes.
	Indices = []ir.DType{ir.I32, ir.I64}
	// Complex is what the FFT ops take.
	Complex = []ir.DType{ir.C64}
)

// T constrains attribute "T" to ds.
func T(ds []ir.DType) []Constraint { return []Constraint{{"T", ds}} }

// Row is one line of the generated kernel table (docs/kernels.md).
type Row struct {
	Op string
	// DTypes has one entry per registration, each rendered like "T=float32"
	// or "SrcT=float32,DstT=int32"; "(none)" for an op without type attributes (LogicalAnd).
	DTypes     []string
	File       string
	HostInputs []string
}

// Table lists every kernel with its registrations, sorted by op, but the
// variable ops (VariableOps), which are registered only where TensorFlow
// exports their C API.
func Table() []Row {
	var rows []Row
	for _, k := range Kernels() {
		if k.Variables.Access != VarNone {
			continue
		}
		r := Row{Op: k.Op, File: k.File, HostInputs: append([]string(nil), k.HostInputs...)}
		for _, combo := range k.Combinations() {
			parts := make([]string, 0, len(k.Constraints))
			for _, c := range k.Constraints {
				parts = append(parts, c.Attr+"="+combo[c.Attr].String())
			}
			s := strings.Join(parts, ",")
			if s == "" {
				s = "(none)"
			}
			r.DTypes = append(r.DTypes, s)
		}
		rows = append(rows, r)
	}
	return rows
}

// callerInit is the file of the package init function that is registering,
// relative to the repository: the file docs/kernels.md names for an op.
func callerInit() string {
	pcs := make([]uintptr, 16)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function[strings.LastIndex(f.Function, "/")+1:], "lower.init.") {
			return "plugin/tf/lower/" + filepath.Base(f.File)
		}
		if !more {
			return ""
		}
	}
}

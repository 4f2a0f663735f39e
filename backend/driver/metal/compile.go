package metal

import (
	"errors"
	"fmt"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/status"
)

// binding ties one tensor of the compiled graph to a program parameter or
// result: which one, and the storage shape and type of its bytes.
type binding struct {
	index int
	shape []int
	dtype gpu.DataType
	bytes int
}

// executable is a compiled program: a graph executable (nil when every
// result is empty, so nothing runs).
type executable struct {
	prog    *ir.Program
	params  []ir.TensorType
	results []ir.TensorType

	exe     gpu.Executable // nil when nothing runs on the GPU
	feeds   []binding      // in the order the executable was compiled with
	targets []binding
}

var _ driver.Executable = (*executable)(nil)

// Program implements driver.Executable.
func (e *executable) Program() *ir.Program { return e.prog }

// signature names the program by its types, for errors of its runs.
func (e *executable) signature() string { return driver.Signature(e.params, e.results) }

func (e *executable) release() {
	if e.exe != nil {
		e.exe.Release()
		e.exe = nil
	}
}

// check validates p: what the caller got wrong is an error before anything
// reaches MPSGraph.
func check(p *ir.Program) error {
	// The IR's verifier checks every operand count, type and attribute the
	// way the frontends' lowerings did.
	if err := ir.Verify(p); err != nil {
		return status.Invalid(fmt.Errorf("metal: compile: %w", err))
	}
	return nil
}

// compile validates p, then lowers it. A program that needs an op or case
// not lowered is a *driver.Unsupported naming the instruction: the split
// layer above (backend/split) runs that part on the host.
func (d *Driver) compile(p *ir.Program) (*executable, error) {
	if err := check(p); err != nil {
		return nil, err
	}
	e := &executable{prog: p, params: p.Params, results: p.ResultTypes()}
	if err := d.lower(p, e, nil); err != nil {
		e.release()
		if _, ok := driver.AsUnsupported(err); ok {
			return nil, err
		}
		return nil, fmt.Errorf("metal: compile: %w", err)
	}
	return e, nil
}

// Place implements driver.Placer: it lowers p without compiling it, and
// says which instructions cannot be lowered and why; each of those is
// replaced by a placeholder of its type, so that the rest is still tried.
func (d *Driver) Place(p *ir.Program) ([]*driver.Unsupported, error) {
	if err := check(p); err != nil {
		return nil, err
	}
	place := make([]*driver.Unsupported, len(p.Instrs))
	if err := d.lower(p, &executable{prog: p}, place); err != nil {
		return nil, err
	}
	return place, nil
}

// float64Reason is why a part that computes in float64 runs on the host.
const float64Reason = "float64: Apple GPUs have no float64 arithmetic, so this part runs on the CPU, in float64 (cast to float32 to keep it on the GPU)"

// computesF64 says whether in reads, makes or, in a region, computes a
// float64 value.
func computesF64(p *ir.Program, in ir.Instr) bool {
	if in.Type.DType == ir.F64 && in.Tuple == nil {
		return true
	}
	for _, t := range in.Tuple {
		if t.DType == ir.F64 {
			return true
		}
	}
	for _, a := range in.Args {
		if a := p.Instrs[a]; a.Type.DType == ir.F64 && a.Tuple == nil {
			return true
		}
	}
	for _, r := range in.Regions {
		for _, rin := range r.Instrs {
			if computesF64(r, rin) {
				return true
			}
		}
	}
	return false
}

// free says whether in is no part of its own: a parameter or a constant
// goes wherever its readers do.
func free(in ir.Instr) bool { return in.Op == ir.OpParameter || in.Op == ir.OpConstant }

// unsupported names instruction i of p and why it is not lowered.
func unsupported(p *ir.Program, i int, fb *fallbackError) *driver.Unsupported {
	op := ir.OpParameter
	if i >= 0 {
		op = p.Instrs[i].Op
	}
	return &driver.Unsupported{Instr: i, Op: op, Reason: fb.reason, Planned: hostHome[op]}
}

// lower builds the graph of p and, unless place is set, compiles it into
// e. An instruction outside MPSGraph's contract is unsupported, naming the
// instruction and the primitive (a lowering bug, which tests that require
// the GPU catch); a panic in a lowering is an error. With place set (one
// entry per instruction), an unsupported instruction is recorded there and
// stands in the graph as a placeholder; only the program's parameters and
// results, which every part of the program needs, still fail the whole.
func (d *Driver) lower(p *ir.Program, e *executable, place []*driver.Unsupported) (err error) {
	var l *lowering
	defer func() {
		if r := recover(); r != nil {
			// Ours, never the caller's: the program passed the verifier.
			// The instruction, its operands' and result's types say where.
			at := ""
			if l != nil && l.instr >= 0 && l.instr < len(p.Instrs) {
				at = " at " + describe(p, l.instr)
			}
			err = status.InternalError(fmt.Errorf("lowering panicked%s: %v", at, r))
		}
	}()
	g := gpu.NewGraph(d.dev.NewGraph(), d.dev.MacOS())
	defer g.Release()
	l = &lowering{d: d, p: p, g: g, vals: make([]val, len(p.Instrs))}

	placeholders := map[int]tensor{}
	var feeds []tensor
	for i, in := range p.Instrs {
		l.instr = i
		args := make([]val, len(in.Args))
		for j, a := range in.Args {
			args[j] = l.vals[a]
		}
		var v val
		var err error
		if computesF64(p, in) {
			// Apple GPUs have no float64: the part runs on the host, in
			// float64. A parameter or constant is no part of its own: what
			// reads it computes in float64 too, so it goes with that.
			if place == nil {
				return &driver.Unsupported{Instr: i, Op: in.Op, Reason: float64Reason, Planned: true, Tell: true}
			}
			l.vals[i] = val{typ: in.Type, empty: true} // read only by float64 work, on the host too
			if !free(in) {
				place[i] = &driver.Unsupported{Instr: i, Op: in.Op, Reason: float64Reason, Planned: true, Tell: true}
				if in.Type.DType != ir.F64 {
					// A comparison of float64s, a conversion from float64:
					// the rest may read it on the device.
					l.vals[i] = l.standIn(in)
				}
			}
			continue
		}
		if place != nil && in.Op == ir.OpGetResult && place[in.Args[0]] != nil {
			// A result of an instruction placed on the host goes with it.
			u := *place[in.Args[0]]
			u.Instr, u.Op = i, in.Op
			place[i] = &u
			l.vals[i] = l.standIn(in)
			continue
		}
		switch why := beyondLimits(in, args); {
		case why != "":
			err = fallback(in.Op, "%s", why)
		case in.Op == ir.OpParameter:
			v, err = l.parameter(in, placeholders, &feeds, &e.feeds)
		default:
			v, err = l.lowerInstr(in, args)
		}
		if err == nil && g.Err() != nil {
			err = fallback(in.Op, "the lowering broke MPSGraph's contract: %v", g.Err())
		}
		var fb *fallbackError
		switch {
		case err == nil:
		case !errors.As(err, &fb):
			return fmt.Errorf("%s: %w", describe(p, i), err)
		case place == nil:
			return unsupported(p, i, fb)
		case in.Op == ir.OpParameter:
			return unsupported(p, -1, fb)
		default:
			place[i] = unsupported(p, i, fb)
			g.ClearErr()
			v = l.standIn(in)
		}
		l.vals[i] = v
	}

	// One distinct target tensor per non-empty result, in storage form.
	var targets []tensor
	for r, v := range p.Results {
		rv := l.vals[v]
		if rv.empty || (place != nil && place[v] != nil) {
			continue // nothing to store, or stored by the host's part
		}
		t, err := l.store(rv.t, rv.typ.DType)
		if err == nil && g.Err() != nil {
			err = fallback(ir.OpParameter, "the lowering broke MPSGraph's contract: %v", g.Err())
		}
		var fb *fallbackError
		if errors.As(err, &fb) {
			return unsupported(p, -1, fb)
		}
		if err != nil {
			return fmt.Errorf("result %d (%v): %w", r, rv.typ, err)
		}
		st, _ := storageType(rv.typ.DType)
		targets = append(targets, t)
		e.targets = append(e.targets, binding{index: r, shape: physShape(rv.typ), dtype: st, bytes: rv.typ.Bytes()})
	}
	if len(targets) == 0 || place != nil {
		return nil // every result is empty (nothing to run), or only placing
	}
	exe, err := g.Compile(feeds, targets)
	if err != nil {
		return fmt.Errorf("MPSGraph did not compile the program: %w", err)
	}
	e.exe = exe
	return nil
}

// parameter declares a placeholder of the parameter's storage type (none for
// an empty one) and loads it into physical form.
func (l *lowering) parameter(in ir.Instr, placeholders map[int]tensor, feeds *[]tensor, bs *[]binding) (val, error) {
	v := val{typ: in.Type}
	if in.Type.Shape.Size() == 0 {
		v.empty = true
		return v, nil
	}
	if ph, ok := placeholders[in.Param]; ok { // the same input read twice
		t, err := l.load(ph, in.Type.DType)
		v.t = t
		return v, err
	}
	st, err := storageType(in.Type.DType)
	if err != nil {
		return v, err
	}
	shape := physShape(in.Type)
	ph := l.placeholder(shape, st)
	placeholders[in.Param] = ph
	*feeds = append(*feeds, ph)
	*bs = append(*bs, binding{index: in.Param, shape: shape, dtype: st, bytes: in.Type.Bytes()})
	t, err := l.load(ph, in.Type.DType)
	v.t = t
	return v, err
}

// beyondLimits says why an instruction's operands or results cannot be
// MPSGraph tensors (gpu.MaxRank, gpu.MaxElements), or "" when they can.
// Such an instruction runs on the host: the values are the caller's to
// have, only the GPU cannot hold them.
func beyondLimits(in ir.Instr, args []val) string {
	types := []ir.TensorType{in.Type}
	if in.Tuple != nil {
		types = in.Tuple
	}
	for _, a := range args {
		types = append(types, a.typ)
	}
	for _, t := range types {
		if why := tooLarge(t); why != "" {
			return why
		}
	}
	return ""
}

// tooLarge says why a value of type t cannot be an MPSGraph tensor, or "".
func tooLarge(t ir.TensorType) string {
	if t.Shape.Size() == 0 {
		return "" // an empty value has no tensor
	}
	s := physShape(t)
	if len(s) > gpu.MaxRank {
		return fmt.Sprintf("%v has %d dimensions; MPSGraph's tensors have at most %d", t, len(s), gpu.MaxRank)
	}
	if n := elementsOf(s); n > gpu.MaxElements {
		return fmt.Sprintf("%v has %d elements; MPSGraph's tensors hold at most 2^31-1", t, n)
	}
	return ""
}

func elementsOf(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// standIn is what an instruction placed on the host is in a graph only
// tried (Place): a placeholder of its type, for the rest to be tried on.
// A value no MPSGraph tensor can hold has none: what reads it is placed on
// the host too (beyondLimits).
func (l *lowering) standIn(in ir.Instr) val {
	v := val{typ: in.Type, empty: in.Type.Shape.Size() == 0}
	if in.Tuple == nil && !v.empty && tooLarge(in.Type) != "" {
		v.empty = true
		return v
	}
	if in.Tuple == nil && !v.empty {
		st, _ := physType(in.Type.DType)
		v.t = l.placeholder(physShape(in.Type), st)
	}
	return v
}

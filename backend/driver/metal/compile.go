package metal

import (
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

// executable is a compiled program: a graph executable, or a host-driver
// executable for programs that need something not lowered.
type executable struct {
	prog    *ir.Program
	params  []ir.TensorType
	results []ir.TensorType

	exe     gpu.Executable // nil when nothing runs on the GPU
	feeds   []binding      // in the order the executable was compiled with
	targets []binding

	cpu      driver.Executable // set when the program runs on the CPU
	fallback string            // why
}

var _ driver.Executable = (*executable)(nil)

// Program implements driver.Executable.
func (e *executable) Program() *ir.Program { return e.prog }

// OnCPU reports whether the program runs on the CPU, and why.
func (e *executable) OnCPU() (bool, string) { return e.cpu != nil, e.fallback }

func (e *executable) release() {
	if e.exe != nil {
		e.exe.Release()
		e.exe = nil
	}
}

// compile validates p, then lowers it; a program that needs an op or case
// not lowered runs on the CPU through the host driver unless the options
// forbid it.
func (d *Driver) compile(p *ir.Program) (*executable, error) {
	// The IR's verifier checks every operand count, type and attribute the
	// way the frontends' lowerings did, before anything reaches MPSGraph.
	if err := ir.Verify(p); err != nil {
		return nil, status.Invalid(fmt.Errorf("metal: compile: %w", err))
	}
	// Metal has no float64 at all, so neither does this driver (the CPU
	// fallback is for what MPSGraph lacks, not for a type the device lacks):
	// the caller's program asks for what the device does not have.
	for i, in := range p.Instrs {
		if in.Type.DType == ir.F64 {
			return nil, status.Invalidf("metal: compile: %s: float64 is not supported by Metal (cast to float32 first)", describe(p, i))
		}
	}
	for i, t := range p.Params {
		if t.DType == ir.F64 {
			return nil, status.Invalidf("metal: compile: parameter #%d is %v: float64 is not supported by Metal", i, t)
		}
	}
	e := &executable{prog: p, params: p.Params, results: p.ResultTypes()}
	err := d.lower(p, e)
	if err == nil {
		return e, nil
	}
	e.release()
	if isFallback(err) && !d.opts.NoCPUFallback {
		hostExe, herr := d.cpu.Compile(p)
		if herr != nil {
			return nil, fmt.Errorf("metal: compile: %v; and on the CPU: %w", err, herr)
		}
		return &executable{prog: p, params: p.Params, results: p.ResultTypes(), cpu: hostExe, fallback: err.Error()}, nil
	}
	if isFallback(err) {
		return nil, fmt.Errorf("metal: compile: %w (the program needs the CPU, and the CPU fallback is off)", err)
	}
	return nil, fmt.Errorf("metal: compile: %w", err)
}

// lower builds the graph of p and compiles it into e. A call outside
// MPSGraph's contract is a fallback to the CPU, naming the instruction and
// the primitive (a lowering bug, which tests with NoCPUFallback catch); a
// panic in a lowering is an error.
func (d *Driver) lower(p *ir.Program, e *executable) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("lowering panicked: %v", r)
		}
	}()
	g := gpu.NewGraph(d.dev.NewGraph(), d.dev.MacOS())
	defer g.Release()
	l := &lowering{d: d, p: p, g: g, vals: make([]val, len(p.Instrs))}

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
		if in.Op == ir.OpParameter {
			v, err = l.parameter(in, placeholders, &feeds, &e.feeds)
		} else {
			v, err = l.lowerInstr(in, args)
		}
		if err == nil && g.Err() != nil {
			err = fallback(in.Op, "the lowering broke MPSGraph's contract: %v", g.Err())
		}
		if err != nil {
			return fmt.Errorf("%s: %w", describe(p, i), err)
		}
		l.vals[i] = v
	}

	// One distinct target tensor per non-empty result, in storage form.
	var targets []tensor
	for r, v := range p.Results {
		rv := l.vals[v]
		if rv.empty {
			continue
		}
		t, err := l.store(rv.t, rv.typ.DType)
		if err == nil && g.Err() != nil {
			err = fallback(ir.OpParameter, "the lowering broke MPSGraph's contract: %v", g.Err())
		}
		if err != nil {
			return fmt.Errorf("result %d (%v): %w", r, rv.typ, err)
		}
		st, _ := storageType(rv.typ.DType)
		targets = append(targets, t)
		e.targets = append(e.targets, binding{index: r, shape: physShape(rv.typ), dtype: st, bytes: rv.typ.Bytes()})
	}
	if len(targets) == 0 {
		return nil // every result is empty: nothing to run
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

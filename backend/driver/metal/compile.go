//go:build darwin

package metal

import (
	"fmt"

	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/macos/mps"
	"github.com/progrium/darwinkit/macos/mpsgraph"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/ir"
)

// binding ties one tensor of the MPSGraph executable to a program parameter
// or result: which one, and the storage shape and type of its bytes.
type binding struct {
	index int
	shape []int
	dtype mps.DataType
	bytes int
}

// executable is a compiled program: an MPSGraphExecutable, or a host-driver
// executable for programs that need something not lowered.
type executable struct {
	prog    *ir.Program
	params  []ir.TensorType
	results []ir.TensorType

	graph   mpsgraph.Graph      // retained; the executable was compiled from it
	exe     mpsgraph.Executable // retained; nil-object when nothing runs on the GPU
	feeds   []binding           // in the executable's feedTensors order
	targets []binding           // in the executable's targetTensors order

	cpu      driver.Executable // set when the program runs on the CPU
	fallback string            // why
}

var _ driver.Executable = (*executable)(nil)

// Program implements driver.Executable.
func (e *executable) Program() *ir.Program { return e.prog }

// OnCPU reports whether the program runs on the CPU, and why.
func (e *executable) OnCPU() (bool, string) { return e.cpu != nil, e.fallback }

// objects are the Objective-C objects an executable retains; they hold no
// pointer to the executable, so a cleanup can release them after it is gone.
type objects struct {
	graph mpsgraph.Graph
	exe   mpsgraph.Executable
}

func (e *executable) objects() objects { return objects{graph: e.graph, exe: e.exe} }

func (e *executable) release() { e.objects().release() }

func (o objects) release() {
	withPool(func() error {
		if o.exe.Ptr() != nil {
			o.exe.Release()
		}
		if o.graph.Ptr() != nil {
			o.graph.Release()
		}
		return nil
	})
}

// compile validates p, then lowers it; a program that needs an op or case
// not lowered runs on the CPU through the host driver unless the options
// forbid it.
func (d *Driver) compile(p *ir.Program) (*executable, error) {
	// The IR's verifier checks every operand count, type and attribute the
	// way the frontends' lowerings did, before anything reaches MPSGraph
	// (whose Objective-C exceptions on a bad graph cannot be recovered).
	if err := ir.Verify(p); err != nil {
		return nil, fmt.Errorf("metal: compile: %w", err)
	}
	// Metal has no float64 at all, so neither does this driver (the CPU
	// fallback is for what MPSGraph lacks, not for a type the device lacks).
	for i, in := range p.Instrs {
		if in.Type.DType == ir.F64 {
			return nil, fmt.Errorf("metal: compile: %s: float64 is not supported by Metal (cast to float32 first)", describe(p, i))
		}
	}
	for i, t := range p.Params {
		if t.DType == ir.F64 {
			return nil, fmt.Errorf("metal: compile: parameter #%d is %v: float64 is not supported by Metal", i, t)
		}
	}
	e := &executable{prog: p, params: p.Params, results: p.ResultTypes()}
	err := withPool(func() error { return d.lower(p, e) })
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
	return nil, fmt.Errorf("metal: compile: %w", err)
}

// lower builds the graph of p and compiles it into e.
func (d *Driver) lower(p *ir.Program, e *executable) error {
	l := &lowering{d: d, p: p, feat: d.feat, vals: make([]val, len(p.Instrs))}
	l.g = mpsgraph.NewGraph()
	l.g.Retain()
	e.graph = l.g

	feeds := foundation.NewMutableDictionaryWithCapacity(uint(len(p.Params)))
	placeholders := map[int]tensor{}
	var feedBindings []binding
	for i, in := range p.Instrs {
		l.instr = i
		args := make([]val, len(in.Args))
		for j, a := range in.Args {
			args[j] = l.vals[a]
		}
		var v val
		var err error
		if in.Op == ir.OpParameter {
			v, err = l.parameter(in, placeholders, feeds, &feedBindings)
		} else {
			v, err = l.lowerInstr(in, args)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", describe(p, i), err)
		}
		l.vals[i] = v
	}

	// One distinct target tensor per non-empty result, in storage form.
	var targets []mpsgraph.ITensor
	var targetBindings []binding
	for r, v := range p.Results {
		rv := l.vals[v]
		if rv.empty {
			continue
		}
		t, err := l.store(rv.t, rv.typ.DType)
		if err != nil {
			return fmt.Errorf("result %d (%v): %w", r, rv.typ, err)
		}
		st, _ := storageType(rv.typ.DType)
		targets = append(targets, t)
		targetBindings = append(targetBindings, binding{index: r, shape: physShape(rv.typ), dtype: st, bytes: rv.typ.Bytes()})
	}
	if len(targets) == 0 {
		return nil // every result is empty: nothing to run
	}
	exe := msg[mpsgraph.Executable](l.g, "compileWithDevice:feeds:targetTensors:targetOperations:compilationDescriptor:",
		d.gdevice, feeds, targets, nil, nil)
	if exe.Ptr() == nil {
		return fmt.Errorf("MPSGraph did not compile the program")
	}
	exe.Retain()
	e.exe = exe

	// The executable orders its feeds and targets as it likes; match them
	// to parameters and results by identity.
	byPtr := map[uintptr]binding{}
	for _, b := range feedBindings {
		byPtr[uintptr(placeholders[b.index].Ptr())] = b
	}
	for _, t := range exe.FeedTensors() {
		b, ok := byPtr[uintptr(t.Ptr())]
		if !ok {
			return fmt.Errorf("MPSGraph executable feeds a tensor that is no parameter")
		}
		e.feeds = append(e.feeds, b)
	}
	tgt := map[uintptr]binding{}
	for i, t := range targets {
		tgt[uintptr(t.Ptr())] = targetBindings[i]
	}
	for _, t := range exe.TargetTensors() {
		b, ok := tgt[uintptr(t.Ptr())]
		if !ok {
			return fmt.Errorf("MPSGraph executable computes a tensor that is no result")
		}
		e.targets = append(e.targets, b)
	}
	if len(e.targets) != len(targets) {
		return fmt.Errorf("MPSGraph executable has %d targets, want %d", len(e.targets), len(targets))
	}
	return nil
}

// parameter declares a placeholder of the parameter's storage type (none for
// an empty one) and loads it into physical form.
func (l *lowering) parameter(in ir.Instr, placeholders map[int]tensor, feeds foundation.MutableDictionary, bs *[]binding) (val, error) {
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
	stype := msg[mpsgraph.ShapedType](mpsgraph.ShapedTypeClass.Alloc(), "initWithShape:dataType:", nsInts(shape), st)
	feeds.SetObjectForKeyObject(stype, ph)
	stype.Release() // the dictionary holds it
	*bs = append(*bs, binding{index: in.Param, shape: shape, dtype: st, bytes: in.Type.Bytes()})
	t, err := l.load(ph, in.Type.DType)
	v.t = t
	return v, err
}

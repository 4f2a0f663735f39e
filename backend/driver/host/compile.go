package host

import (
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/status"
)

// kernel computes one instruction: out has exactly the result's bytes, ins
// the operands' bytes, in the program's dtypes. Kernels never write to ins.
type kernel func(out []byte, ins [][]byte)

// multiKernel computes an instruction that yields a tuple without regions
// (the decompositions with several results): outs has each result's bytes.
type multiKernel func(outs [][]byte, ins [][]byte)

// kernelFailure is what a kernel panics with to fail its execution with an
// error that is not a bug of the driver's (a host function's own error).
type kernelFailure struct{ err error }

type stepKind uint8

const (
	stepKernel stepKind = iota
	stepParam
	stepConst
	stepAlias  // same bytes, new type (reshape): no copy unless bound to a result
	stepRegion // while, case, call: runs sub-executables, yields a tuple
	stepGet    // one result of a tuple: no copy unless bound to a result
	stepMulti  // a kernel of several results (qr, eigh, lu, svd), yielding a tuple
)

type step struct {
	kind    stepKind
	instr   int // index in the original program, for error messages
	op      ir.Op
	args    []int
	bytes   int
	param   int
	literal []byte
	k       kernel
	mk      multiKernel     // stepMulti
	regions []*executable   // stepRegion: the compiled regions
	types   []ir.TensorType // stepRegion: the operand types, then the result types; stepMulti: the result types
	in      ir.Instr        // stepRegion: the instruction, for its attributes
	result  int             // index of the program result this step writes in place, or -1
	release []int           // values whose last use is this step
	// recycle are the kernel steps whose buffers nothing reads after this
	// step (the value and every reshape of it used for the last time): the
	// run's later steps, and the next run, may reuse them (arena).
	recycle []int
	desc    string
}

// executable is a compiled program: a list of steps over numbered values.
type executable struct {
	prog    *ir.Program
	params  []ir.TensorType
	results []ir.TensorType
	steps   []step
	nvals   int
	// resultVals[i] is the value of result i; copied[i] is false when a step
	// already wrote it into the caller's buffer.
	resultVals []int
	copied     []bool
	// work estimates the element operations one run costs (multiply-adds
	// for contractions), to decide what is small enough to run inline.
	work int
	// peak is the most bytes of intermediates one run holds at once, which
	// the driver reserves from its capacity for the run (Driver.reserve).
	peak int64
	// arenas hold the intermediates' buffers between runs, one arena per
	// run in flight: a training step's program reuses them rather than
	// allocate (and have the collector free) its intermediates every time.
	arenas sync.Pool
}

// Program implements driver.Executable.
func (e *executable) Program() *ir.Program { return e.prog }

// signature names the program by its types, for errors of its runs.
func (e *executable) signature() string { return driver.Signature(e.params, e.results) }

// testHookStep, when set, runs before every kernel step; tests use it to force
// a panic inside execution.
var testHookStep atomic.Pointer[func(ir.Op)]

// compile checks p (ir.Normalize: the IR's own verifier, which rebuilds it
// with ir.Builder and fills attribute defaults) and plans the rebuilt
// instructions, naming p's own instructions in its errors.
func compile(p *ir.Program) (*executable, error) {
	q, origin, err := ir.Normalize(p)
	if err != nil {
		// A program the IR's verifier refuses is the caller's mistake, as
		// the Metal driver's check says too.
		return nil, status.Invalid(fmt.Errorf("host: compile: %w", err))
	}
	return plan(p, q, origin)
}

// plan turns the rebuilt program q into steps, choosing a kernel for each
// instruction and deciding which results are written in place.
func plan(p, q *ir.Program, origin []int) (*executable, error) {
	e := &executable{
		prog:       p,
		params:     slices.Clone(p.Params),
		results:    q.ResultTypes(),
		nvals:      len(q.Instrs),
		resultVals: make([]int, len(q.Results)),
		copied:     make([]bool, len(q.Results)),
	}
	// A computed value that is a result is written straight into the
	// caller's buffer (the first result naming it, if several do).
	bound := map[int]int{}
	for i, r := range q.Results {
		e.resultVals[i] = int(r)
		e.copied[i] = true
		k := q.Instrs[r].Op
		if _, dup := bound[int(r)]; !dup && k != ir.OpParameter && k != ir.OpConstant {
			bound[int(r)] = i
			e.copied[i] = false
		}
	}
	lastUse := make([]int, len(q.Instrs))
	for i, in := range q.Instrs {
		for _, a := range in.Args {
			lastUse[a] = i
		}
	}
	for _, r := range q.Results {
		lastUse[r] = len(q.Instrs) // results live to the end
	}
	for i, in := range q.Instrs {
		args := make([]int, len(in.Args))
		argTypes := make([]ir.TensorType, len(in.Args))
		for j, a := range in.Args {
			args[j] = int(a)
			argTypes[j] = q.Instrs[a].Type
		}
		s := step{instr: origin[i], op: in.Op, args: args, bytes: in.Type.Bytes(), result: -1}
		if r, ok := bound[i]; ok {
			s.result = r
		}
		s.desc = describe(in, argTypes)
		e.work += stepWork(in, argTypes)
		switch op := in.Op; {
		case op == ir.OpParameter:
			// The builder renumbered parameters in instruction order;
			// arguments arrive in the original program's order.
			s.kind, s.param = stepParam, p.Instrs[origin[i]].Param
		case op == ir.OpConstant:
			s.kind, s.literal = stepConst, in.Literal
		case op == ir.OpReshape:
			s.kind = stepAlias
		case op == ir.OpGetResult:
			s.kind, s.param = stepGet, in.Param
		case op.HasRegions():
			s.kind, s.in = stepRegion, in
			s.types = append(slices.Clone(argTypes), in.Tuple...)
			for r, region := range in.Regions {
				sub, err := compile(region)
				if err != nil {
					return nil, fmt.Errorf("host: compile: instruction %%%d: %s: region %d: %w", origin[i], s.desc, r, err)
				}
				s.regions = append(s.regions, sub)
			}
		case op.YieldsTuple():
			ok := opKernels[op]
			if ok.makeMulti == nil {
				return nil, fmt.Errorf("host: compile: instruction %%%d: %s: %w", origin[i], s.desc, errUnsupported(in, argTypes))
			}
			mk, err := ok.makeMulti(in, argTypes)
			if err != nil {
				return nil, fmt.Errorf("host: compile: instruction %%%d: %s: %w", origin[i], s.desc, err)
			}
			s.kind, s.mk, s.types = stepMulti, mk, slices.Clone(in.Tuple)
		default:
			k, err := kernelFor(in, argTypes)
			if err != nil {
				return nil, fmt.Errorf("host: compile: instruction %%%d: %s: %w", origin[i], s.desc, err)
			}
			s.kind, s.k = stepKernel, k
		}
		for _, a := range args {
			if lastUse[a] == i && !slices.Contains(s.release, a) {
				s.release = append(s.release, a)
			}
		}
		e.steps = append(e.steps, s)
	}
	e.planRecycling(lastUse)
	e.planPeak(lastUse)
	return e, nil
}

// planPeak sets e.peak. A step that writes buffers of its own (a kernel not
// writing a result in place, or the results of a region or of an op of
// several) holds them from that step to the last step that reads them or a
// reshape or get_result of them; a region's own peak is held while its
// step runs. Parameters, constants and results are memory the caller or
// the program already holds.
func (e *executable) planPeak(lastUse []int) {
	n := len(e.steps)
	root := make([]int, n)
	last := make([]int, n)
	owned := make([]int64, n)
	for i := range e.steps {
		s := &e.steps[i]
		root[i] = i
		if (s.kind == stepAlias || s.kind == stepGet) && s.result < 0 {
			root[i] = root[s.args[0]]
		}
		r := root[i]
		last[r] = max(last[r], min(lastUse[i], n-1), i)
		switch s.kind {
		case stepKernel:
			if s.result < 0 {
				owned[i] = int64(s.bytes)
			}
		case stepMulti:
			for _, t := range s.types {
				owned[i] += int64(t.Bytes())
			}
		case stepRegion:
			for _, t := range s.in.Tuple {
				owned[i] += int64(t.Bytes())
			}
		}
	}
	held := make([]int64, n+1) // held[i+1]-held[i]: the change at step i
	for r := range e.steps {
		if owned[r] > 0 {
			held[r] += owned[r]
			held[last[r]+1] -= owned[r]
		}
	}
	var live int64
	for i := range e.steps {
		live += held[i]
		during := live
		for _, sub := range e.steps[i].regions {
			during = max(during, live+sub.peak)
		}
		e.peak = max(e.peak, during)
	}
}

// planRecycling marks, for each kernel step writing a buffer of its own,
// the step after which nothing reads that buffer: its own last use and
// that of every reshape aliasing it (a reshape bound to a result copies).
// Results live to the end and are never recycled, nor is what a region
// reads: a while loop that runs no iteration yields its operands
// themselves.
func (e *executable) planRecycling(lastUse []int) {
	root := make([]int, len(e.steps))
	last := make([]int, len(e.steps))
	keep := make([]bool, len(e.steps))
	for i := range e.steps {
		s := &e.steps[i]
		root[i] = i
		if s.kind == stepAlias && s.result < 0 {
			root[i] = root[s.args[0]]
		}
		// A value nothing reads is done with at its own step.
		r := root[i]
		last[r] = max(last[r], lastUse[i], i)
		if s.kind == stepRegion {
			for _, a := range s.args {
				keep[root[a]] = true
			}
		}
	}
	for r := range e.steps {
		s := &e.steps[r]
		if s.kind == stepKernel && s.result < 0 && s.bytes > 0 && !keep[r] && last[r] < len(e.steps) {
			e.steps[last[r]].recycle = append(e.steps[last[r]].recycle, r)
		}
	}
}

// arena is one run's spare buffers, by size.
type arena map[int][][]byte

// take is a zeroed buffer of n bytes, reused when the arena has one.
func (a arena) take(n int) []byte {
	if free := a[n]; len(free) > 0 {
		b := free[len(free)-1]
		a[n] = free[:len(free)-1]
		clear(b) // as newBuffer's: kernels may count on zeros
		return b
	}
	return newBuffer(n)
}

// opKernel is the host driver's entry for one IR op, registered from the
// file of its op family (register, in an init function): how to make the
// kernel of an instruction, and, where the default (the largest operand or
// result) is wrong, what one run costs in element operations.
type opKernel struct {
	make func(in ir.Instr, argTypes []ir.TensorType) (kernel, error)
	work func(in ir.Instr, argTypes []ir.TensorType) int
	// makeMulti is make for the ops that yield a tuple without regions.
	makeMulti func(in ir.Instr, argTypes []ir.TensorType) (multiKernel, error)
}

// opKernels holds every registered op. Parameters, constants and reshapes
// are steps of their own (plan), not kernels.
var opKernels = ir.Kernels[opKernel]{}

// register adds the kernels of ops; it runs from init functions only.
func register(k opKernel, ops ...ir.Op) { opKernels.Register("host", k, ops...) }

// heavyWork is the cost of the ops whose kernels do much more than one
// operation per element (sorts, FFTs, indexing, windows).
func heavyWork(in ir.Instr, argTypes []ir.TensorType) int {
	n := in.Type.Shape.Size()
	for _, t := range argTypes {
		n += t.Shape.Size()
	}
	return 16 * n
}

// stepWork estimates one instruction's cost in element operations.
func stepWork(in ir.Instr, argTypes []ir.TensorType) int {
	switch op := in.Op; {
	case op == ir.OpParameter, op == ir.OpConstant, op == ir.OpReshape, op == ir.OpGetResult:
		return 0
	case op.HasRegions():
		return math.MaxInt32 // unknown (a loop): never small enough to run inline
	}
	if k, ok := opKernels[in.Op]; ok && k.work != nil {
		return k.work(in, argTypes)
	}
	n := in.Type.Shape.Size()
	for _, t := range argTypes {
		n = max(n, t.Shape.Size())
	}
	return n
}

func describe(in ir.Instr, argTypes []ir.TensorType) string {
	parts := make([]string, len(argTypes))
	for j, t := range argTypes {
		parts[j] = t.String()
	}
	if in.Tuple != nil {
		return fmt.Sprintf("%s(%s) -> %v", in.Op, strings.Join(parts, ", "), in.Tuple)
	}
	return fmt.Sprintf("%s(%s) -> %v", in.Op, strings.Join(parts, ", "), in.Type)
}

// errUnsupported says an op has no kernel for a dtype.
func errUnsupported(in ir.Instr, argTypes []ir.TensorType) error {
	d := in.Type.DType
	if len(argTypes) > 0 {
		d = argTypes[0].DType
	}
	return fmt.Errorf("op %s is not implemented for %v", in.Op, d)
}

// kernelFor picks the kernel of one instruction.
func kernelFor(in ir.Instr, argTypes []ir.TensorType) (kernel, error) {
	if k, ok := opKernels[in.Op]; ok && k.make != nil {
		return k.make(in, argTypes)
	}
	return nil, errUnsupported(in, argTypes)
}

// run executes the plan. Pointers lie in device memory or anywhere the
// caller vouches for; every view is bounded by the declared tensor sizes.
func (e *executable) run(args, results []unsafe.Pointer) (err error) {
	if len(args) != len(e.params) || len(results) != len(e.results) {
		return fmt.Errorf("host: execute: program takes %d arguments and %d results, got %d and %d",
			len(e.params), len(e.results), len(args), len(results))
	}
	for i, t := range e.params {
		if args[i] == nil && t.Bytes() > 0 {
			return fmt.Errorf("host: execute: argument %d (%v) is nil", i, t)
		}
	}
	outs := make([][]byte, len(results))
	for i, t := range e.results {
		if results[i] == nil && t.Bytes() > 0 {
			return fmt.Errorf("host: execute: result %d (%v) is nil", i, t)
		}
		outs[i] = ptrBytes(results[i], t.Bytes())
	}
	// Faults on bad frontend pointers become panics, recovered here (or per
	// step, with the op named); this matters for Run, which executes on the
	// caller's goroutine.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("host: execute: panic: %v", r)
		}
	}()
	vals := make([][]byte, e.nvals)
	bufs := make([][]byte, e.nvals) // the buffers kernel steps took, until recycled
	spare, _ := e.arenas.Get().(arena)
	if spare == nil {
		spare = arena{}
	}
	var tuples map[int][][]byte // the results of region steps
	for i := range e.steps {
		s := &e.steps[i]
		switch s.kind {
		case stepRegion:
			if tuples == nil {
				tuples = map[int][][]byte{}
			}
			rs, err := e.runRegion(s, vals)
			if err != nil {
				return err
			}
			tuples[i] = rs
		case stepMulti:
			if tuples == nil {
				tuples = map[int][][]byte{}
			}
			rs, err := e.runMulti(s, vals)
			if err != nil {
				return err
			}
			tuples[i] = rs
		case stepGet:
			vals[i] = tuples[s.args[0]][s.param]
			if s.result >= 0 {
				copy(outs[s.result], vals[i])
				vals[i] = outs[s.result]
			}
		default:
			if err := e.runStep(s, i, vals, args, outs, spare); err != nil {
				return err
			}
			if s.kind == stepKernel && s.result < 0 {
				bufs[i] = vals[i]
			}
		}
		for _, a := range s.release {
			vals[a] = nil // let the collector have intermediates early
			delete(tuples, a)
		}
		for _, r := range s.recycle {
			spare[len(bufs[r])] = append(spare[len(bufs[r])], bufs[r])
			bufs[r] = nil
		}
	}
	// Only a run that finished hands its buffers on: after a failure a
	// kernel may still hold one.
	e.arenas.Put(spare)
	for i, v := range e.resultVals {
		if e.copied[i] {
			copy(outs[i], vals[v])
		}
	}
	return nil
}

// runMulti runs a kernel of several results into fresh buffers.
func (e *executable) runMulti(s *step, vals [][]byte) (outs [][]byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			if f, ok := r.(kernelFailure); ok {
				err = fmt.Errorf("host: execute: instruction %%%d: %s: %w", s.instr, s.desc, f.err)
				return
			}
			err = fmt.Errorf("host: execute: instruction %%%d: %s: panic: %v", s.instr, s.desc, r)
		}
	}()
	if h := testHookStep.Load(); h != nil {
		(*h)(s.op)
	}
	outs = make([][]byte, len(s.types))
	for j, t := range s.types {
		outs[j] = newBuffer(t.Bytes())
	}
	ins := make([][]byte, len(s.args))
	for j, a := range s.args {
		ins[j] = vals[a]
	}
	s.mk(outs, ins)
	return outs, nil
}

func (e *executable) runStep(s *step, i int, vals [][]byte, args []unsafe.Pointer, outs [][]byte, spare arena) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("host: execute: instruction %%%d: %s: panic: %v", s.instr, s.desc, r)
		}
	}()
	var dst []byte
	if s.result >= 0 {
		dst = outs[s.result]
	}
	switch s.kind {
	case stepParam:
		vals[i] = ptrBytes(args[s.param], s.bytes)
	case stepConst:
		vals[i] = s.literal
	case stepAlias:
		if dst == nil {
			vals[i] = vals[s.args[0]]
		} else {
			copy(dst, vals[s.args[0]])
			vals[i] = dst
		}
	case stepKernel:
		if h := testHookStep.Load(); h != nil {
			(*h)(s.op)
		}
		if dst == nil {
			dst = spare.take(s.bytes)
		}
		ins := make([][]byte, len(s.args))
		for j, a := range s.args {
			ins[j] = vals[a]
		}
		if s.bytes > 0 {
			s.k(dst, ins)
		}
		vals[i] = dst
	}
	return nil
}

package host

import (
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/metalplug/metalplug/backend/ir"
)

// kernel computes one instruction: out has exactly the result's bytes, ins
// the operands' bytes, in the program's dtypes. Kernels never write to ins.
type kernel func(out []byte, ins [][]byte)

type stepKind uint8

const (
	stepKernel stepKind = iota
	stepParam
	stepConst
	stepAlias // same bytes, new type (reshape): no copy unless bound to a result
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
	result  int   // index of the program result this step writes in place, or -1
	release []int // values whose last use is this step
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
}

// Program implements driver.Executable.
func (e *executable) Program() *ir.Program { return e.prog }

// testHookStep, when set, runs before every kernel step; tests use it to force
// a panic inside execution.
var testHookStep atomic.Pointer[func(ir.Op)]

// compile checks p by rebuilding it with ir.Builder, which infers and checks
// every result type exactly as frontends' lowerings did, and fills attribute
// defaults; a hand-assembled program gets the same scrutiny as a built one.
// The kernels then run on the rebuilt instructions.
func compile(p *ir.Program) (*executable, error) {
	b := ir.NewBuilder()
	remap := make([]ir.Value, len(p.Instrs)) // original value -> rebuilt value
	for i, in := range p.Instrs {
		if err := checkArgs(p, i); err != nil {
			return nil, err
		}
		v, err := rebuild(b, p, in, remap)
		if err != nil {
			return nil, fmt.Errorf("host: compile: instruction %%%d (%s %s): %w", i, in.Op, operandTypes(p, in), err)
		}
		if got := b.Type(v); got.DType != in.Type.DType || !got.Shape.Equal(in.Type.Shape) {
			return nil, fmt.Errorf("host: compile: instruction %%%d (%s %s) declares result %v, but its operands give %v",
				i, in.Op, operandTypes(p, in), in.Type, got)
		}
		remap[i] = v
	}
	if len(p.Results) == 0 {
		return nil, fmt.Errorf("host: compile: program has no results")
	}
	results := make([]ir.Value, len(p.Results))
	for i, r := range p.Results {
		if int(r) < 0 || int(r) >= len(p.Instrs) {
			return nil, fmt.Errorf("host: compile: result %d names %%%d, which does not exist", i, r)
		}
		results[i] = remap[r]
	}
	q, err := b.Build(results...)
	if err != nil {
		return nil, fmt.Errorf("host: compile: %w", err)
	}
	// Map rebuilt instructions back to original indices for error messages.
	origin := make([]int, len(q.Instrs))
	for i := range origin {
		origin[i] = -1
	}
	for i := len(p.Instrs) - 1; i >= 0; i-- {
		origin[remap[i]] = i
	}
	return plan(p, q, origin)
}

// operandCounts are the fixed arities; unary, binary and concat are handled
// in checkArgs.
var operandCounts = map[ir.Op]int{ir.OpParameter: 0, ir.OpConstant: 0, ir.OpIota: 0, ir.OpCompare: 2, ir.OpSelect: 3,
	ir.OpConvert: 1, ir.OpBroadcastInDim: 1, ir.OpReshape: 1, ir.OpTranspose: 1, ir.OpSlice: 1, ir.OpPad: 2,
	ir.OpDotGeneral: 2, ir.OpConvolution: 2, ir.OpReduce: 1, ir.OpReduceWindow: 1,
	ir.OpReverse: 1, ir.OpGather: 2, ir.OpScatter: 3, ir.OpSort: 1, ir.OpArgSort: 1, ir.OpArgReduce: 1,
	ir.OpSelectAndScatter: 2, ir.OpRng: 2, ir.OpFFT: 1}

// checkArgs enforces SSA order (operands are earlier instructions, which
// remap has already seen) and each op's arity, before the builder runs.
func checkArgs(p *ir.Program, i int) error {
	in := p.Instrs[i]
	for _, a := range in.Args {
		if int(a) < 0 || int(a) >= i {
			return fmt.Errorf("host: compile: instruction %%%d (%s) uses %%%d, which is not an earlier instruction", i, in.Op, a)
		}
	}
	n, ok := operandCounts[in.Op]
	switch {
	case in.Op.IsUnary():
		n, ok = 1, true
	case in.Op.IsBinary():
		n, ok = 2, true
	case in.Op == ir.OpConcat:
		n, ok = len(in.Args), len(in.Args) > 0
	}
	if !ok {
		return fmt.Errorf("host: compile: instruction %%%d: op %s is not implemented by the host driver", i, in.Op)
	}
	if len(in.Args) != n {
		return fmt.Errorf("host: compile: instruction %%%d (%s) has %d operands, wants %d", i, in.Op, len(in.Args), n)
	}
	return nil
}

func operandTypes(p *ir.Program, in ir.Instr) string {
	parts := make([]string, len(in.Args))
	for j, a := range in.Args {
		if int(a) >= 0 && int(a) < len(p.Instrs) {
			parts[j] = p.Instrs[a].Type.String()
		} else {
			parts[j] = fmt.Sprintf("%%%d?", a)
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// rebuild replays one instruction through the builder.
func rebuild(b *ir.Builder, p *ir.Program, in ir.Instr, remap []ir.Value) (ir.Value, error) {
	args := make([]ir.Value, len(in.Args))
	for j, a := range in.Args {
		args[j] = remap[a]
	}
	axis := func() int {
		if len(in.Axes) != 1 {
			return -1
		}
		return in.Axes[0]
	}
	var v ir.Value
	switch op := in.Op; {
	case op == ir.OpParameter:
		if in.Param < 0 || in.Param >= len(p.Params) {
			return 0, fmt.Errorf("parameter #%d of a program with %d", in.Param, len(p.Params))
		}
		if pt := p.Params[in.Param]; pt.DType != in.Type.DType || !pt.Shape.Equal(in.Type.Shape) {
			return 0, fmt.Errorf("parameter #%d is declared %v but typed %v", in.Param, pt, in.Type)
		}
		v = b.Parameter(in.Type)
	case op == ir.OpConstant:
		v = b.Constant(in.Type, in.Literal)
	case op == ir.OpIota:
		v = b.Iota(in.Type, axis())
	case op.IsUnary():
		v = b.Unary(op, args[0])
	case op.IsBinary():
		v = b.Binary(op, args[0], args[1])
	case op == ir.OpCompare:
		v = b.Compare(in.Compare, args[0], args[1])
	case op == ir.OpSelect:
		v = b.Select(args[0], args[1], args[2])
	case op == ir.OpConvert:
		v = b.Convert(args[0], in.Type.DType)
	case op == ir.OpBroadcastInDim:
		dims := in.Axes
		if dims == nil {
			dims = []int{} // nil asks the builder for numpy alignment; an IR instruction means rank 0
		}
		v = b.BroadcastInDim(args[0], in.Type.Shape, dims)
	case op == ir.OpReshape:
		v = b.Reshape(args[0], in.Type.Shape)
	case op == ir.OpTranspose:
		v = b.Transpose(args[0], in.Axes)
	case op == ir.OpSlice:
		if in.Slice == nil {
			return 0, fmt.Errorf("missing slice attributes")
		}
		v = b.Slice(args[0], in.Slice.Start, in.Slice.Limit, in.Slice.Strides)
	case op == ir.OpConcat:
		v = b.Concat(axis(), args...)
	case op == ir.OpPad:
		if in.Pad == nil {
			return 0, fmt.Errorf("missing pad attributes")
		}
		v = b.Pad(args[0], args[1], in.Pad.Low, in.Pad.High, in.Pad.Interior)
	case op == ir.OpDotGeneral:
		if in.Dot == nil {
			return 0, fmt.Errorf("missing dot dimension numbers")
		}
		v = b.DotGeneral(args[0], args[1], *in.Dot)
	case op == ir.OpConvolution:
		if in.Conv == nil {
			return 0, fmt.Errorf("missing convolution attributes")
		}
		v = b.Convolution(args[0], args[1], *in.Conv)
	case op == ir.OpReduce:
		v = b.Reduce(args[0], in.Reduce, in.Axes)
	case op == ir.OpReduceWindow:
		if in.Window == nil {
			return 0, fmt.Errorf("missing window attributes")
		}
		v = b.ReduceWindow(args[0], in.Reduce, *in.Window)
	case op == ir.OpReverse:
		v = b.Reverse(args[0], in.Axes)
	case op == ir.OpGather:
		if in.Gather == nil {
			return 0, fmt.Errorf("missing gather dimension numbers")
		}
		v = b.Gather(args[0], args[1], *in.Gather)
	case op == ir.OpScatter:
		if in.Scatter == nil {
			return 0, fmt.Errorf("missing scatter dimension numbers")
		}
		v = b.Scatter(args[0], args[1], args[2], *in.Scatter)
	case op == ir.OpSort || op == ir.OpArgSort:
		if in.Sort == nil {
			return 0, fmt.Errorf("missing sort attributes")
		}
		if op == ir.OpSort {
			v = b.Sort(args[0], *in.Sort)
		} else {
			v = b.ArgSort(args[0], *in.Sort, in.Type.DType)
		}
	case op == ir.OpArgReduce:
		v = b.ArgReduce(args[0], in.Reduce, axis(), in.Type.DType)
	case op == ir.OpSelectAndScatter:
		if in.Window == nil {
			return 0, fmt.Errorf("missing window attributes")
		}
		v = b.SelectAndScatter(args[0], args[1], in.Compare, *in.Window)
	case op == ir.OpRng:
		if in.Rng == nil {
			return 0, fmt.Errorf("missing rng attributes")
		}
		v = b.Rng(args[0], args[1], in.Rng.Distribution, in.Type)
	case op == ir.OpFFT:
		if in.FFT == nil {
			return 0, fmt.Errorf("missing fft attributes")
		}
		v = b.FFT(args[0], in.FFT.Kind, in.FFT.Length)
	default:
		return 0, fmt.Errorf("op %s is not implemented by the host driver", op)
	}
	if err := b.Err(); err != nil {
		return 0, err
	}
	return v, nil
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
		switch in.Op {
		case ir.OpParameter:
			// The builder renumbered parameters in instruction order;
			// arguments arrive in the original program's order.
			s.kind, s.param = stepParam, p.Instrs[origin[i]].Param
		case ir.OpConstant:
			s.kind, s.literal = stepConst, in.Literal
		case ir.OpReshape:
			s.kind = stepAlias
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
	return e, nil
}

// stepWork estimates one instruction's cost in element operations.
func stepWork(in ir.Instr, argTypes []ir.TensorType) int {
	n := in.Type.Shape.Size()
	switch in.Op {
	case ir.OpParameter, ir.OpConstant, ir.OpReshape:
		return 0
	case ir.OpDotGeneral:
		k := 1
		for _, d := range in.Dot.LhsContract {
			k *= argTypes[0].Shape[d]
		}
		return n * k
	case ir.OpConvolution:
		ks := argTypes[1].Shape
		return n * max(1, ks.Size()/max(1, ks[len(ks)-1]))
	case ir.OpSort, ir.OpArgSort, ir.OpFFT, ir.OpScatter, ir.OpGather, ir.OpSelectAndScatter, ir.OpReduceWindow:
		for _, t := range argTypes {
			n += t.Shape.Size()
		}
		return 16 * n
	}
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
	switch op := in.Op; {
	case op == ir.OpIota:
		return iotaKernel(in)
	case op.IsUnary():
		return unaryKernel(in, argTypes)
	case op.IsBinary():
		return binaryKernel(in, argTypes)
	case op == ir.OpCompare:
		return compareKernel(in, argTypes)
	case op == ir.OpSelect:
		return selectKernel(in, argTypes)
	case op == ir.OpConvert:
		return convertKernel(in, argTypes)
	case op == ir.OpBroadcastInDim:
		return broadcastKernel(in, argTypes)
	case op == ir.OpTranspose:
		return transposeKernel(in, argTypes)
	case op == ir.OpSlice:
		return sliceKernel(in, argTypes)
	case op == ir.OpConcat:
		return concatKernel(in, argTypes)
	case op == ir.OpPad:
		return padKernel(in, argTypes)
	case op == ir.OpDotGeneral:
		return dotKernel(in, argTypes)
	case op == ir.OpConvolution:
		return convKernel(in, argTypes)
	case op == ir.OpReduce:
		return reduceKernel(in, argTypes)
	case op == ir.OpReduceWindow:
		return reduceWindowKernel(in, argTypes)
	case op == ir.OpReverse:
		return reverseKernel(in, argTypes)
	case op == ir.OpGather:
		return gatherKernel(in, argTypes)
	case op == ir.OpScatter:
		return scatterKernel(in, argTypes)
	case op == ir.OpSort, op == ir.OpArgSort:
		return sortKernel(in, argTypes)
	case op == ir.OpArgReduce:
		return argReduceKernel(in, argTypes)
	case op == ir.OpSelectAndScatter:
		return selectAndScatterKernel(in, argTypes)
	case op == ir.OpRng:
		return rngKernel(in)
	case op == ir.OpFFT:
		return fftKernel(in, argTypes)
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
	for i := range e.steps {
		s := &e.steps[i]
		if err := e.runStep(s, i, vals, args, outs); err != nil {
			return err
		}
		for _, a := range s.release {
			vals[a] = nil // let the collector have intermediates early
		}
	}
	for i, v := range e.resultVals {
		if e.copied[i] {
			copy(outs[i], vals[v])
		}
	}
	return nil
}

func (e *executable) runStep(s *step, i int, vals [][]byte, args []unsafe.Pointer, outs [][]byte) (err error) {
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
			dst = newBuffer(s.bytes)
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

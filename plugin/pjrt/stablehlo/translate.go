package stablehlo

import (
	"fmt"
	"slices"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/status"
	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// ErrUnsupported is wrapped by every error about something the translation
// does not support (an op, an attribute value, a dtype, a dynamic shape),
// as opposed to a module that is malformed: backend/status's Unsupported,
// whose class (Unimplemented) the PJRT layer reports as UNIMPLEMENTED.
var ErrUnsupported = status.Unsupported

// Translator reads format "mlir" (what jax sends) and translates it.
// plugin/pjrt's seam (pjrt.Translate) uses SignedTranslator, which also
// gives main's signature (which arguments and results are unsigned).
func Translator() func(code []byte, format string) (*ir.Program, error) {
	tr := SignedTranslator()
	return func(code []byte, format string) (*ir.Program, error) {
		p, _, err := tr(code, format)
		return p, err
	}
}

// SignedTranslator is Translator that also gives main's Signature.
func SignedTranslator() func(code []byte, format string) (*ir.Program, *Signature, error) {
	return func(code []byte, format string) (*ir.Program, *Signature, error) {
		if format != "mlir" {
			return nil, nil, fmt.Errorf("stablehlo: programs of format %q (only \"mlir\", a StableHLO portable artifact) (%w)", format, ErrUnsupported)
		}
		return Read(code)
	}
}

// Read reads a portable artifact (format "mlir", as jax passes it to
// PJRT_Client_Compile) and translates it.
func Read(code []byte) (*ir.Program, *Signature, error) {
	m, err := mlir.Read(code)
	if err != nil {
		return nil, nil, status.Invalid(fmt.Errorf("reading the StableHLO artifact: %w", err))
	}
	sig, err := MainSignature(m)
	if err != nil {
		return nil, nil, err
	}
	p, err := Translate(m)
	if err != nil {
		return nil, nil, err
	}
	return p, sig, nil
}

// Translate turns the module's public main function into one IR program:
// its parameters are main's arguments in order and its results main's
// results, and one more, a token, where main returns nothing but calls
// host functions. The program passes ir.Verify, except that a main with
// no results and no host calls is a program of its parameters alone.
func Translate(m *mlir.Module) (*ir.Program, error) { return translate(m, "main") }

// translate translates the function entry as if it were main.
func translate(m *mlir.Module, entry string) (p *ir.Program, err error) {
	t := &translator{}
	defer func() {
		if r := recover(); r != nil {
			where := "the module"
			if t.current != nil {
				where = fmt.Sprintf("%s at %s", t.current.Name, t.current.Loc)
			}
			p, err = nil, status.InternalError(fmt.Errorf("stablehlo: panic while translating %s: %v", where, r))
		}
	}()
	main, err := t.load(m, entry)
	if err != nil {
		return nil, err
	}
	p, err = t.function(main)
	if err != nil {
		return nil, err
	}
	if len(p.Results) == 0 {
		return p, nil // parameters alone: nothing to verify or run
	}
	if err := ir.Verify(p); err != nil {
		return nil, status.InternalError(fmt.Errorf("stablehlo: the translated program does not verify: %w", err))
	}
	return p, nil
}

// translator holds what the whole module shares.
type translator struct {
	hostCalls int // the host calls translated, regions' included
	funcs     map[string]*mlir.Operation
	inlined   []string        // the callees being inlined, innermost last
	current   *mlir.Operation // the op being translated, for panics
}

// load indexes the module's functions, checks the module is for one
// device and finds main.
func (t *translator) load(m *mlir.Module, entry string) (*mlir.Operation, error) {
	if m == nil || m.Body == nil {
		return nil, status.Invalidf("stablehlo: no module")
	}
	if m.Body.Name != "builtin.module" {
		return nil, status.Invalid(m.Body.Errorf("the top-level op is not builtin.module"))
	}
	for _, name := range []string{"mhlo.num_partitions", "mhlo.num_replicas"} {
		if a, ok := m.Body.Attr(name); ok {
			if n, ok := a.(*mlir.IntegerAttr); ok && n.Value != 1 {
				return nil, unsupported(m.Body, "%s = %d: metalplug runs a program on one device", name, n.Value)
			}
		}
	}
	t.funcs = map[string]*mlir.Operation{}
	if len(m.Body.Regions) != 1 || len(m.Body.Regions[0].Blocks) != 1 {
		return nil, status.Invalid(m.Body.Errorf("the module has %d regions, want one of one block", len(m.Body.Regions)))
	}
	for _, op := range m.Body.Regions[0].Blocks[0].Ops {
		switch op.Name {
		case "vhlo.func_v1":
			name, err := stringAttr(op, "sym_name")
			if err != nil {
				return nil, err
			}
			if _, dup := t.funcs[name]; dup {
				return nil, status.Invalid(op.Errorf("function %q is defined twice", name))
			}
			t.funcs[name] = op
		case "sdy.mesh":
			// A mesh declaration: what sdy.sharding_constraint refers to.
			// One device needs none.
		default:
			return nil, unsupported(op, "a top-level %s (a module holds functions)", op.Name)
		}
	}
	main, ok := t.funcs[entry]
	if !ok {
		return nil, status.Invalid(m.Body.Errorf("the module has no function %s (it has %s)", entry, funcNames(t.funcs)))
	}
	if vis, _ := optStringAttr(main, "sym_visibility"); vis == "private" && entry == "main" {
		return nil, status.Invalid(main.Errorf("main is private"))
	}
	return main, nil
}

func funcNames(funcs map[string]*mlir.Operation) string {
	if len(funcs) == 0 {
		return "none"
	}
	names := make([]string, 0, len(funcs))
	for n := range funcs {
		names = append(names, fmt.Sprintf("%q", n))
	}
	slices.Sort(names)
	return fmt.Sprint(names)
}

// function translates a function into a program of its own.
func (t *translator) function(fn *mlir.Operation) (*ir.Program, error) {
	blk, err := funcBlock(fn)
	if err != nil {
		return nil, err
	}
	ft, err := funcType(fn)
	if err != nil {
		return nil, err
	}
	if len(ft.Inputs) != len(blk.Args) {
		return nil, status.Invalid(fn.Errorf("function_type has %d inputs but the body %d arguments", len(ft.Inputs), len(blk.Args)))
	}
	e := newEnv(t, nil)
	var params []ir.TensorType
	for i, a := range blk.Args {
		tt, err := boundaryType(fn, a.Type, fmt.Sprintf("argument %d", i))
		if err != nil {
			return nil, err
		}
		v := e.b.Parameter(tt)
		if n, ok := narrowOf(a.Type); ok {
			v = n.fromBits(e.b, v)
		}
		e.vals[a] = v
		params = append(params, tt)
	}
	results, err := e.block(fn, blk)
	if err != nil {
		return nil, err
	}
	if len(results) != len(ft.Results) {
		return nil, status.Invalid(fn.Errorf("function_type has %d results but the body returns %d", len(ft.Results), len(results)))
	}
	if len(results) == 0 {
		if t.hostCalls == 0 {
			// Nothing it computes is seen: the program is its parameters
			// alone, which no driver compiles or runs. jax compiles these
			// when differentiation or remat leaves a jitted function
			// nothing to return.
			return &ir.Program{Params: params}, nil
		}
		// What it does is its host calls (jax.debug.print in a function
		// returning nothing): the program returns a token no caller
		// sees, so that drivers run it (Signature has no result for it).
		results = []ir.Value{e.b.Constant(tokenType, nil)}
	}
	for i, r := range ft.Results {
		if _, err := boundaryType(fn, r, fmt.Sprintf("result %d", i)); err != nil {
			return nil, err
		}
		if n, ok := narrowOf(r); ok {
			results[i] = n.toBits(e.b, results[i])
		}
	}
	p, err := e.b.Build(results...)
	if err != nil {
		return nil, status.InternalError(fn.Errorf("%v", err))
	}
	return p, nil
}

func funcBlock(fn *mlir.Operation) (*mlir.Block, error) {
	if len(fn.Regions) != 1 || len(fn.Regions[0].Blocks) != 1 {
		return nil, unsupported(fn, "a function body of other than one block")
	}
	return fn.Regions[0].Blocks[0], nil
}

func funcType(fn *mlir.Operation) (*mlir.FunctionType, error) {
	a, ok := fn.Attr("function_type")
	if !ok {
		return nil, status.Invalid(fn.Errorf("no function_type"))
	}
	ta, ok := a.(*mlir.TypeAttr)
	if !ok {
		return nil, status.Invalid(fn.Errorf("function_type is %s, not a type", a))
	}
	ft, ok := ta.Type.(*mlir.FunctionType)
	if !ok {
		return nil, status.Invalid(fn.Errorf("function_type is %s, not a function type", ta.Type))
	}
	return ft, nil
}

// env translates ops into one builder: a program, or one region's
// sub-program. vals maps the mlir values visible there to IR values.
type env struct {
	t      *translator
	b      *ir.Builder
	vals   map[*mlir.Value]ir.Value
	tuples map[*mlir.Value][]*mlir.Value // results of tuple_v1
	// futures are the values of async_start's results (async.go).
	futures map[*mlir.Value][]ir.Value
	// body is the op whose scalar body this env builds (reduce, sort,
	// ...), or nil: a body may capture constants only.
	body *mlir.Operation
}

func newEnv(t *translator, body *mlir.Operation) *env {
	return &env{t: t, b: ir.NewBuilder(), vals: map[*mlir.Value]ir.Value{}, tuples: map[*mlir.Value][]*mlir.Value{},
		futures: map[*mlir.Value][]ir.Value{}, body: body}
}

// block translates the ops of blk and returns the values its terminator
// (return_v1) returns.
func (e *env) block(owner *mlir.Operation, blk *mlir.Block) ([]ir.Value, error) {
	for i, op := range blk.Ops {
		if op.Name == "vhlo.return_v1" || op.Name == "func.return" || op.Name == "stablehlo.return" {
			if i != len(blk.Ops)-1 {
				return nil, status.Invalid(op.Errorf("a return before the end of its block"))
			}
			vs, err := e.operands(op)
			if err != nil {
				return nil, err
			}
			return vs, nil
		}
		if err := e.op(op); err != nil {
			return nil, err
		}
	}
	return nil, status.Invalid(owner.Errorf("a region block does not end in return_v1"))
}

// op translates one op and binds its results.
func (e *env) op(op *mlir.Operation) error {
	outer := e.t.current
	e.t.current = op // left set by a panic, for the message
	if op.Loc.File != "" || op.Loc.Name != "" {
		e.b.SetLoc(op.Loc.String())
	}
	if len(op.Successors) > 0 {
		return unsupported(op, "branches between blocks")
	}
	h, ok := handlers[op.Name]
	if !ok {
		return unsupported(op, "the op %s", op.Name)
	}
	outs, narrow, err := e.narrowOp(op)
	if !narrow && err == nil {
		outs, err = h.fn(e, op)
	}
	if err != nil {
		return err
	}
	if !h.binds {
		e.narrowResults(op, outs)
	}
	if err := e.b.Err(); err != nil {
		return status.Invalid(op.Errorf("%v", err))
	}
	if h.binds {
		e.t.current = outer
		return nil // the handler bound the results (tuples)
	}
	if len(outs) != len(op.Results) {
		return status.InternalError(op.Errorf("translated into %d values for %d results", len(outs), len(op.Results)))
	}
	for i, r := range op.Results {
		want, err := tensorType(op, r.Type, fmt.Sprintf("result %d", i))
		if err != nil {
			return err
		}
		got := e.b.Type(outs[i])
		if got.DType != want.DType || !got.Shape.Equal(want.Shape) {
			return status.Invalid(op.Errorf("result %d is declared %v but computes %v", i, want, got))
		}
		e.vals[r] = outs[i]
	}
	e.t.current = outer
	return nil
}

// built is the builder's error, when a call so far failed, as op's error.
// A handler checks it before it reads the shape of a value it built: a
// failed call returns a placeholder whose type is another value's.
func (e *env) built(op *mlir.Operation) error {
	if err := e.b.Err(); err != nil {
		return status.Invalid(op.Errorf("%v", err))
	}
	return nil
}

// value is the IR value of an operand.
func (e *env) value(op *mlir.Operation, v *mlir.Value) (ir.Value, error) {
	if x, ok := e.vals[v]; ok {
		return x, nil
	}
	if _, ok := e.tuples[v]; ok {
		return 0, unsupported(op, "a tuple as an operand (tuples are supported only as operands of get_tuple_element)")
	}
	if e.body != nil {
		return 0, unsupported(e.body, "its body uses a value computed outside it (%s); only constants can be captured by the body of %s", describeValue(v), e.body.Name)
	}
	return 0, status.Invalid(op.Errorf("operand %s is not defined where it is used", describeValue(v)))
}

func describeValue(v *mlir.Value) string {
	if v.Op != nil {
		return fmt.Sprintf("result %d of %s at %s", v.Index, v.Op.Name, v.Op.Loc)
	}
	return fmt.Sprintf("block argument %d", v.Index)
}

// operands are the IR values of all of op's operands.
func (e *env) operands(op *mlir.Operation) ([]ir.Value, error) {
	vs := make([]ir.Value, len(op.Operands))
	for i, o := range op.Operands {
		v, err := e.value(op, o)
		if err != nil {
			return nil, err
		}
		vs[i] = v
	}
	return vs, nil
}

// unsupported is the error for something the translation does not do.
func unsupported(op *mlir.Operation, format string, args ...any) error {
	return fmt.Errorf("%w (%w)", op.Errorf(format, args...), ErrUnsupported)
}

// invalid is the error for a module that contradicts itself.
func invalid(op *mlir.Operation, format string, args ...any) error {
	return status.Invalid(op.Errorf(format, args...))
}

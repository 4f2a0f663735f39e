package pjrt

/*
#include "shim.h"
*/
import "C"

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/status"
)

// ============================== THE SEAM ==============================
//
// Translator turns the program jax hands PJRT_Client_Compile into an IR
// program. code is the caller's bytes (for jax, format "mlir": the MLIR
// bytecode of a StableHLO portable artifact, VHLO at the version
// stablehlo_current_version asked for) and format names them. The program's
// parameters and results are the executable's, in order. Errors name the
// op that could not be read; wrap ErrUnsupported for what metalplug does
// not support, so that jax reports UNIMPLEMENTED. Marks say what the
// program alone does not of its parameters and results.
type Translator func(code []byte, format string) (*ir.Program, Marks, error)

// Marks mark parameters and results by index; nil or short slices mark
// none.
type Marks struct {
	// Params and Results give the PJRT element type of a parameter or
	// result where it is not its IR dtype's (0, PJRT_Buffer_Type_INVALID,
	// where it is): ui16 and ui64 held as the bits of int16 and int64, a
	// narrow float (f8, f6, f4) as its byte in uint8, a narrow integer (s4,
	// u4, s2, u2) as a byte. Their buffers have that type, of the IR
	// dtype's width.
	Params, Results []bufType
	// Donated are the parameters jax donated (jit's donate_argnums): an
	// execution consumes their buffers, which are deleted once it is
	// enqueued, as XLA's runtimes do, unless the call lists them as not
	// donatable.
	Donated []bool
	// Hidden counts the program's last results that are not the
	// executable's: a function returning nothing that calls host functions
	// (jax.debug.print) returns a token, so that drivers run it.
	Hidden int
}

func marked(m []bool, i int) bool { return i < len(m) && m[i] }

func markedType(m []bufType, i int) bufType {
	if i < len(m) {
		return m[i]
	}
	return 0
}

// Translate is the translation PJRT_Client_Compile uses: the StableHLO
// reader and translator (translate.go); tests may set another before jax
// compiles anything (it is read without a lock). Unset, Compile fails with
// UNIMPLEMENTED, saying so.
var Translate Translator

// seamMessage is what Compile says while Translate is unset.
const seamMessage = "this library has no StableHLO translator linked in (pjrt.Translate is unset), so it cannot compile programs yet; arrays can be created, copied and read back, but jax.jit cannot run on metalplug"

// ======================================================================

// program is a compiled program, shared by the PJRT_LoadedExecutable that
// compilation made and every PJRT_Executable describing it; the C arrays
// those hand out live until the last of them is destroyed.
type program struct {
	prog        *ir.Program
	exe         driver.Executable
	params      []ir.TensorType
	results     []ir.TensorType
	paramTypes  []bufType
	resultTypes []bufType
	donated     []bool // by parameter: see Marks.Donated
	hidden      int    // see Marks.Hidden: tokens, written nowhere
	options     []byte // as the caller serialized them
	fingerprint string

	arena       arena
	name, fp    cstr
	outTypes    *C.PJRT_Buffer_Type
	outDims     *C.int64_t
	outRanks    *C.size_t
	outKinds    **C.char
	outKindLens *C.size_t
	inKinds     **C.char
	inKindLens  *C.size_t

	refs atomic.Int32 // the C records that lead here
}

// compile reads, translates and compiles a program for client c.
func (c *client) compile(code []byte, format string, options []byte) (*program, error) {
	opts, err := parseCompileOptions(options)
	if err != nil {
		return nil, status.Invalidf("%v", err)
	}
	if err := opts.check(); err != nil {
		return nil, err
	}
	translate := Translate
	if translate == nil {
		return nil, status.Errorf(status.Unimplemented, "%s", seamMessage)
	}
	p, marks, err := translate(code, format)
	if err != nil {
		if status.CodeOf(err) == status.Internal {
			err = status.Invalid(err) // the program's fault unless said otherwise
		}
		return nil, fmt.Errorf("reading the %q program: %w", format, err)
	}
	if p == nil {
		return nil, status.Errorf(status.Internal, "the translator returned no program and no error")
	}
	// A program with no results computes nothing anyone sees: it is not
	// compiled, and running it is checking its arguments.
	var exe driver.Executable
	if len(p.Results) > 0 {
		if exe, err = c.drv.Compile(p); err != nil {
			return nil, fmt.Errorf("compiling for the %s driver: %w", c.drv.Name(), err)
		}
	}
	results := p.ResultTypes()
	if marks.Hidden < 0 || marks.Hidden > len(results) {
		return nil, status.Errorf(status.Internal, "the translator hides %d of the program's %d results", marks.Hidden, len(results))
	}
	for _, t := range results[len(results)-marks.Hidden:] {
		if t.Bytes() != 0 {
			return nil, status.Errorf(status.Internal, "the translator hides a result of %v, which is not a token", t)
		}
	}
	pr := &program{prog: p, exe: exe, params: p.Params, results: results[:len(results)-marks.Hidden], hidden: marks.Hidden,
		options: append([]byte(nil), options...)}
	for i := range pr.params {
		pr.donated = append(pr.donated, marked(marks.Donated, i))
	}
	for i, t := range pr.params {
		bt, err := boundaryType(t.DType, markedType(marks.Params, i))
		if err != nil {
			return nil, fmt.Errorf("parameter %d (%v): %w", i, t, err)
		}
		pr.paramTypes = append(pr.paramTypes, bt)
	}
	for i, t := range pr.results {
		bt, err := boundaryType(t.DType, markedType(marks.Results, i))
		if err != nil {
			return nil, fmt.Errorf("result %d (%v): %w", i, t, err)
		}
		pr.resultTypes = append(pr.resultTypes, bt)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00", format, len(code))
	h.Write(code)
	h.Write(options)
	pr.fingerprint = hex.EncodeToString(h.Sum(nil))
	pr.fillC()
	return pr, nil
}

// fillC lays out in C what the executable functions return. The arrays
// are written through Go types of the same width (a C enum is an int; on
// the LP64 targets a size_t is a uintptr): Go code must not index values of
// cgo's types for darwincheck, which sees them as opaque.
func (pr *program) fillC() {
	a := &pr.arena
	pr.name = a.cstr("metalplug_" + pr.fingerprint[:16])
	pr.fp = a.cstr(pr.fingerprint)
	n := len(pr.results)
	types := a.alloc(n * 4)
	ranks := a.alloc(n * int(unsafe.Sizeof(uintptr(0))))
	var flat []int64
	for i, t := range pr.results {
		unsafe.Slice((*int32)(types), n)[i] = int32(pr.resultTypes[i])
		unsafe.Slice((*uintptr)(ranks), n)[i] = uintptr(len(t.Shape))
		for _, d := range t.Shape {
			flat = append(flat, int64(d))
		}
	}
	pr.outTypes, pr.outRanks = (*C.PJRT_Buffer_Type)(types), (*C.size_t)(ranks)
	pr.outDims = a.int64s(flat)
	kind := a.alloc(len(memoryKind) + 1)
	copy(unsafe.Slice((*byte)(kind), len(memoryKind)), memoryKind)
	pr.outKinds, pr.outKindLens = kindList(a, n, kind)
	pr.inKinds, pr.inKindLens = kindList(a, len(pr.params), kind)
}

// kindList is n copies of the memory kind string at kind, as the ABI's
// parallel arrays of strings and lengths.
func kindList(a *arena, n int, kind unsafe.Pointer) (**C.char, *C.size_t) {
	kinds := a.alloc(n * int(unsafe.Sizeof(uintptr(0))))
	sizes := a.alloc(n * int(unsafe.Sizeof(uintptr(0))))
	for i := range n {
		unsafe.Slice((*unsafe.Pointer)(kinds), n)[i] = kind
		unsafe.Slice((*uintptr)(sizes), n)[i] = uintptr(len(memoryKind))
	}
	return (**C.char)(kinds), (*C.size_t)(sizes)
}

func (pr *program) acquire() *program {
	pr.refs.Add(1)
	return pr
}

// release drops a record's reference; the last frees the C arrays.
func (pr *program) release() {
	if pr.refs.Add(-1) == 0 {
		pr.arena.free()
	}
}

//export mp_PJRT_Client_Compile
func mp_PJRT_Client_Compile(args *C.PJRT_Client_Compile_Args) errT {
	return export("mp_PJRT_Client_Compile", args, C.PJRT_Client_Compile_Args_STRUCT_SIZE, clientCompile)
}

func clientCompile(args *C.PJRT_Client_Compile_Args) error {
	c, err := clientOf(args.client)
	if err != nil {
		return err
	}
	if args.program == nil {
		return status.Invalidf("program is NULL")
	}
	if err := need(args.program, C.PJRT_Program_STRUCT_SIZE); err != nil {
		return fmt.Errorf("program: %w", err)
	}
	code := C.GoBytes(unsafe.Pointer(args.program.code), C.int(args.program.code_size))
	format := C.GoStringN(args.program.format, C.int(args.program.format_size))
	options := C.GoBytes(unsafe.Pointer(args.compile_options), C.int(args.compile_options_size))
	pr, err := c.compile(code, format, options)
	if err != nil {
		return err
	}
	args.executable = newLoadedExecutable(c, pr).c
	return nil
}

package ir

import (
	"fmt"
	"slices"
)

// Calls of host functions.

// hostCallOps run a function of the host process.
var hostCallOps = opDefs{
	// OpHostCall runs a function of the host process (one of jax's Python
	// callbacks, registered with backend/hostcall) on Args[1:], and
	// yields Instr.Tuple: Tuple[0] a token (an empty bool tensor), then
	// the function's results. Args[0] is the token of what it must
	// follow. It has effects: a driver runs it once per execution of its
	// program, in program order, whether or not anything uses its
	// results, and on the host (the function reads and writes host
	// memory). Instr.Host names the function.
	{OpHostCall, OpInfo{Name: "host_call", Arity: Variadic, Attrs: []string{"Host", "Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		if in.Host == nil {
			return 0, missing("the host function's id")
		}
		if len(in.Tuple) == 0 {
			return 0, fmt.Errorf("no results: the first is the token after the call")
		}
		return b.HostCall(in.Host.ID, a[0], a[1:], in.Tuple[1:]), nil
	}}},
}

// HostCallAttrs name the host function an OpHostCall runs: an ID the
// frontend that built the program registered it under.
type HostCallAttrs struct {
	ID uint64
}

// TokenType is the type of OpHostCall's tokens: an empty bool tensor,
// which carries no data and orders what takes it after what made it.
var TokenType = TensorType{DType: Bool, Shape: Shape{0}}

// HostCall calls the host function id on args after token (the token of
// what it must follow, TokenType), the function giving results of the
// given types. It yields a tuple: the token after the call, then the
// results.
func (b *Builder) HostCall(id uint64, token Value, args []Value, results []TensorType) Value {
	if b.err != nil {
		return 0
	}
	if t := b.Type(token); t.DType != Bool || !t.Shape.Equal(TokenType.Shape) || b.isTuple(token) {
		return b.fail(OpHostCall, "operand 0 is %v: the token it follows must be %v", t, TokenType)
	}
	for i, a := range args {
		if b.isTuple(a) {
			return b.fail(OpHostCall, "operand %d is a tuple: take it apart with get_result", i+1)
		}
	}
	tuple := append([]TensorType{TokenType}, results...)
	for i := range tuple {
		tuple[i] = TensorType{tuple[i].DType, tuple[i].Shape.Clone()}
	}
	return b.emitTuple(Instr{Op: OpHostCall, Args: append([]Value{token}, args...), Host: &HostCallAttrs{ID: id},
		Tuple: slices.Clip(tuple)})
}

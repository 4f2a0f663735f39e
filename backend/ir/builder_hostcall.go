package ir

import "slices"

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

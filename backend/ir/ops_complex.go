package ir

// Complex numbers taken apart and put together.

// complexOps move complex64 parts; they never compute on them.
var complexOps = opDefs{
	{OpReal, OpInfo{Name: "real", Arity: 1, infer: func(b *Builder, _ *Program, _ Instr, a []Value) (Value, error) {
		return b.Real(a[0]), nil
	}}}, // the real parts of the complex64 Args[0]: float32 of its shape
	{OpImag, OpInfo{Name: "imag", Arity: 1, infer: func(b *Builder, _ *Program, _ Instr, a []Value) (Value, error) {
		return b.Imag(a[0]), nil
	}}}, // the imaginary parts of the complex64 Args[0]: float32 of its shape
	{OpComplex, OpInfo{Name: "complex", Arity: 2, infer: func(b *Builder, _ *Program, _ Instr, a []Value) (Value, error) {
		return b.Complex(a[0], a[1]), nil
	}}}, // complex64 with real parts Args[0] and imaginary parts Args[1], float32 of one shape
}

// Real is the real parts of the complex64 x, float32 of x's shape.
func (b *Builder) Real(x Value) Value { return b.part(OpReal, x) }

// Imag is the imaginary parts of the complex64 x, float32 of x's shape.
func (b *Builder) Imag(x Value) Value { return b.part(OpImag, x) }

// Complex is the complex64 of real parts re and imaginary parts im, float32
// of one shape.
func (b *Builder) Complex(re, im Value) Value {
	tr, ti := b.Type(re), b.Type(im)
	if tr.DType != F32 || ti.DType != F32 || !tr.Shape.Equal(ti.Shape) {
		return b.fail(OpComplex, "parts %v and %v must be float32 of one shape", tr, ti)
	}
	// A number put back together from the parts it was taken apart into
	// is that number, bit for bit.
	if z := b.argOf(re, OpReal); b.err == nil && z >= 0 && z == b.argOf(im, OpImag) {
		return z
	}
	return b.emit(Instr{Op: OpComplex, Args: []Value{re, im}, Type: TensorType{C64, tr.Shape.Clone()}})
}

func (b *Builder) part(op Op, x Value) Value {
	t := b.Type(x)
	if t.DType != C64 {
		return b.fail(op, "needs a complex64 operand, got %v", t)
	}
	// The part of a number just put together is the operand it was made
	// of, bit for bit: frontends that compose complex arithmetic of the
	// parts take apart what the previous op put together.
	if b.err == nil && b.isOp(x, OpComplex) {
		parts := b.prog.Instrs[x].Args
		if op == OpReal {
			return parts[0]
		}
		return parts[1]
	}
	return b.emit(Instr{Op: op, Args: []Value{x}, Type: TensorType{F32, t.Shape.Clone()}})
}

// argOf is the (first) operand of x when x is an instruction of op, else
// -1.
func (b *Builder) argOf(x Value, op Op) Value {
	if !b.isOp(x, op) {
		return -1
	}
	return b.prog.Instrs[x].Args[0]
}

// isOp reports whether x is an instruction of op built so far.
func (b *Builder) isOp(x Value, op Op) bool {
	return int(x) >= 0 && int(x) < len(b.prog.Instrs) && b.prog.Instrs[x].Op == op
}

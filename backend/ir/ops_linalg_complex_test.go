package ir

// complexLinalgInferenceCases are TestLinalgInference's complex64 cases:
// the ops that take complex64 keep it (eigh's eigenvalues are float32),
// the others refuse it.
func complexLinalgInferenceCases() []linalgCase {
	c := C64
	sq := []TensorType{tensorOf(c, 3, 4, 4)}
	return []linalgCase{
		{OpCholesky, "complex cholesky", sq, func(b *Builder, x []Value) Value { return b.Cholesky(x[0], false) }, []TensorType{tensorOf(c, 3, 4, 4)}, ""},
		{OpTriangularSolve, "complex adjoint solve", []TensorType{tensorOf(c, 2, 3, 3), tensorOf(c, 2, 5, 3)}, func(b *Builder, x []Value) Value {
			return b.TriangularSolve(x[0], x[1], LinalgAttrs{Transpose: Adjoint})
		}, []TensorType{tensorOf(c, 2, 5, 3)}, ""},
		{OpTriangularSolve, "complex a, real b", []TensorType{tensorOf(c, 3, 3), tensorOf(F32, 3, 2)}, func(b *Builder, x []Value) Value {
			return b.TriangularSolve(x[0], x[1], LinalgAttrs{LeftSide: true})
		}, nil, "one dtype"},
		{OpQr, "complex qr", []TensorType{tensorOf(c, 5, 3)}, func(b *Builder, x []Value) Value { return b.Qr(x[0]) },
			[]TensorType{tensorOf(c, 5, 3), tensorOf(c, 3)}, ""},
		{OpHouseholderProduct, "complex householder product", []TensorType{tensorOf(c, 5, 3), tensorOf(c, 3)}, func(b *Builder, x []Value) Value {
			return b.HouseholderProduct(x[0], x[1])
		}, []TensorType{tensorOf(c, 5, 3)}, ""},
		{OpHouseholderProduct, "real taus of a complex matrix", []TensorType{tensorOf(c, 5, 3), tensorOf(F32, 3)}, func(b *Builder, x []Value) Value {
			return b.HouseholderProduct(x[0], x[1])
		}, nil, "of its dtype"},
		{OpEigh, "complex eigh", sq, func(b *Builder, x []Value) Value { return b.Eigh(x[0], true) },
			[]TensorType{tensorOf(c, 3, 4, 4), tensorOf(F32, 3, 4)}, ""},
		{OpEig, "complex eig", sq, func(b *Builder, x []Value) Value { return b.Eig(x[0]) },
			[]TensorType{tensorOf(c, 3, 4), tensorOf(c, 3, 4, 4), tensorOf(c, 3, 4, 4)}, ""},
		{OpTridiagonal, "complex tridiagonal", sq, func(b *Builder, x []Value) Value { return b.Tridiagonal(x[0], false) },
			[]TensorType{tensorOf(c, 3, 4, 4), tensorOf(F32, 3, 4), tensorOf(F32, 3, 3), tensorOf(c, 3, 3)}, ""},
		{OpHessenberg, "complex hessenberg", sq, func(b *Builder, x []Value) Value { return b.Hessenberg(x[0]) }, nil, "float32 or float64 matrix (rank 2 or more)"},
		{OpLu, "complex lu", []TensorType{tensorOf(c, 3, 3)}, func(b *Builder, x []Value) Value { return b.Lu(x[0]) }, nil, "float32 or float64 matrix (rank 2 or more)"},
		{OpSvd, "complex svd", []TensorType{tensorOf(c, 3, 3)}, func(b *Builder, x []Value) Value { return b.Svd(x[0], false) }, nil, "float32 or float64 matrix (rank 2 or more)"},
		{OpCholesky, "cholesky of integers names complex64", []TensorType{tensorOf(I32, 2, 2)}, func(b *Builder, x []Value) Value { return b.Cholesky(x[0], true) }, nil, "or a complex64 one"},
	}
}

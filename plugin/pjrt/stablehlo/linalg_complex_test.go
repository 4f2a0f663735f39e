package stablehlo

// The complex64 linear algebra fixtures (generate.py's linalg_complex_*)
// take the real ones' tolerance: jax's CPU runs LAPACK's c* routines in
// complex64, the interpreter backend/ir/lapack's in complex128 rounded once.
func init() {
	for _, name := range []string{"linalg_complex_cholesky", "linalg_complex_triangular", "linalg_complex_qr", "linalg_complex_eigh",
		"linalg_complex_eig", "linalg_complex_tridiagonal"} {
		programTolerance[name] = linalgTolerance
	}
}

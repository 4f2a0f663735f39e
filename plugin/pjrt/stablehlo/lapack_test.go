package stablehlo

// The LAPACK calls the translation refuses (lapack.go), asserted by
// TestEveryArtifactTranslates with the other refusals. jax's float64 eig
// is refused before its call is reached, by the complex128 values around
// it; a complex64 matrix by the call, for the routines other than geev,
// hetrd and heevd (schur's gees and lu's getrf here).
//
// The fixtures of jax's CPU lu, svd and eigh (linalg_lu,
// linalg_svd_lapack, linalg_eigh_lapack) take the other linear algebra
// programs' tolerance.
func init() {
	expectedErrors["error_linalg_dgeev"] = []string{"at eig", "complex<f64>", "no dtype"}
	expectedErrors["error_linalg_cgees"] = []string{"vhlo.custom_call_v2 at schur", "lapack_cgees_ffi", "complex matrices"}
	expectedErrors["error_linalg_cgetrf"] = []string{"vhlo.custom_call_v2 at", "lapack_cgetrf_ffi", "complex matrices"}
	for _, name := range []string{"linalg_lu", "linalg_svd_lapack", "linalg_eigh_lapack"} {
		programTolerance[name] = linalgTolerance
	}
}

package stablehlo

import (
	"fmt"
	"sort"
	"strings"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// jax's CPU lowerings of the linear algebra primitives it lowers only for
// the CPU and GPUs (eig, hessenberg, tridiagonal, geqp3, schur), and of lu,
// svd and eigh, whose platform-independent lowerings compare dimensions in
// Python (so refuse shape polymorphism), which jax_plugins.metalplug
// registers for its platform too: LAPACK's routines as typed FFI custom
// calls, lapack_<letter><routine>_ffi, their arguments in the dictionary
// mhlo.backend_config (characters as ui8), the matrices in column-major
// layouts (operand_layouts, result_layouts: where the callee reads and
// writes them; the values are the same, so the IR's row-major ops compute
// them unchanged), and an int32 info per matrix that jax turns into NaN
// when nonzero (the IR's ops give NaN themselves, so info is zero). Each
// is one IR op, in the operand's dtype: s (float32) and d (float64) where
// the results are real; geev's complex eigenvectors are complex64 made of
// the IR's float32 parts, so dgeev (complex128) is refused. Of the
// complex routines, cgeev, chetrd and cheevd are the IR's eig, tridiagonal
// and eigh of complex64 (which jnp.roots of complex coefficients,
// jnp.linalg.eig, lax.linalg.tridiagonal and jnp.linalg.eigh reach); the
// other c routines are refused, as the IR decomposes complex matrices for
// those ops only (jax_plugins.metalplug keeps complex lu and svd on jax's
// own lowerings), and every z routine (complex128). jax's CPU lowering of
// householder_product (orgqr, which qr with pivoting and hessenberg's Q
// reach) is the IR's householder_product.

// lapackRoutines are the routines translated, with what each becomes,
// whether its results are complex for real operands (geev's are) and
// whether its c (complex64) form is translated too (geev's, to the IR's
// complex64 eig). The Hermitian routines, which have no real form, are
// lapackHermitian.
var lapackRoutines = map[string]struct {
	fn        func(e *env, op *mlir.Operation, x []ir.Value) ([]ir.Value, error)
	note      string
	complex   bool
	complex64 bool
}{
	"geev":  {geevCall, "IR eig, its parts made complex64; the info zero", true, true},
	"gehrd": {gehrdCall, "IR hessenberg (low 1, high n only)", false, false},
	"sytrd": {sytrdCall, "IR tridiagonal (uplo L or U)", false, false},
	"geqp3": {geqp3Call, "IR qr_pivoted, the permutation one-based", false, false},
	"gees":  {geesCall, "IR schur (without sorting; sdim and info zero)", false, false},
	"orgqr": {orgqrCall, "IR householder_product", false, false},
	"getrf": {getrfCall, "IR lu, the pivots one-based; the info zero (a singular matrix is factored)", false, false},
	"gesdd": {gesvdCall, "IR svd (mode A, S or N); the info zero", false, false},
	"gesvd": {gesvdCall, "IR svd (mode A, S or N); the info zero", false, false},
	"syevd": {syevdCall, "IR eigh (uplo L or U, mode V or N); the info zero", false, false},
}

// lapackHermitian are the complex routines that are the IR's ops of
// complex64, their c forms translated and their z forms (complex128)
// refused: hetrd is sytrd's call and heevd syevd's.
var lapackHermitian = map[string]struct {
	fn   func(e *env, op *mlir.Operation, x []ir.Value) ([]ir.Value, error)
	note string
}{
	"hetrd": {sytrdCall, "IR tridiagonal of complex64 (uplo L or U; d and e float32)"},
	"heevd": {syevdCall, "IR eigh of complex64 (uplo L or U, mode V or N; the eigenvalues float32)"},
}

func init() {
	type call = struct {
		fn   func(*env, *mlir.Operation) ([]ir.Value, error)
		note string
	}
	for routine, r := range lapackRoutines {
		for _, letter := range "sdcz" {
			target := fmt.Sprintf("lapack_%c%s_ffi", letter, routine)
			dtype := map[rune]ir.DType{'s': ir.F32, 'd': ir.F64}[letter]
			if letter == 'c' && r.complex64 {
				dtype = ir.C64
			}
			linalgCustomCalls[target] = call{lapackCall(routine, letter, dtype, r.complex, r.fn), r.note}
		}
	}
	for routine, r := range lapackHermitian {
		linalgCustomCalls["lapack_c"+routine+"_ffi"] = call{lapackCall(routine, 'c', ir.C64, false, r.fn), r.note}
		linalgCustomCalls["lapack_z"+routine+"_ffi"] = call{lapackCall(routine, 'z', 0, false, nil), "refused (complex128)"}
	}
}

// lapackNote is custom_call's note on the LAPACK targets.
func lapackNote() string {
	names := make([]string, 0, len(lapackRoutines))
	for routine, r := range lapackRoutines {
		letters := "s,d"
		if r.complex64 {
			letters = "s,d,c"
		}
		names = append(names, fmt.Sprintf("lapack_{%s}%s_ffi (%s)", letters, routine, r.note))
	}
	for routine, r := range lapackHermitian {
		names = append(names, fmt.Sprintf("lapack_c%s_ffi (%s)", routine, r.note))
	}
	sort.Strings(names)
	return "; jax's CPU LAPACK calls " + strings.Join(names, ", ") +
		"; the other complex routines (c, and every z one: complex128) and lapack_dgeev_ffi (complex128 results) are refused"
}

// lapackCall checks the operands of a routine's call for the dtype its
// letter names and hands them to fn.
func lapackCall(routine string, letter rune, dtype ir.DType, complexResults bool,
	fn func(e *env, op *mlir.Operation, x []ir.Value) ([]ir.Value, error)) func(*env, *mlir.Operation) ([]ir.Value, error) {
	return func(e *env, op *mlir.Operation) ([]ir.Value, error) {
		switch {
		case letter == 'z':
			return nil, unsupported(op, "lapack_z%s_ffi: complex128 matrices (the IR's complex type is complex64)", routine)
		case letter == 'c' && dtype != ir.C64:
			return nil, unsupported(op, "lapack_c%s_ffi: complex matrices (the IR decomposes complex64 ones for geev, hetrd and heevd only; float32 and float64 ones here)", routine)
		case complexResults && dtype == ir.F64:
			return nil, unsupported(op, "lapack_%c%s_ffi: its complex128 results (the IR's complex type is complex64; float32 matrices only)", letter, routine)
		}
		xs := make([]ir.Value, len(op.Operands))
		for i, o := range op.Operands {
			v, err := e.value(op, o)
			if err != nil {
				return nil, err
			}
			xs[i] = v
		}
		if len(xs) == 0 {
			return nil, invalid(op, "lapack_%c%s_ffi without operands", letter, routine)
		}
		if t := e.b.Type(xs[0]); t.DType != dtype {
			return nil, invalid(op, "lapack_%c%s_ffi of a %v operand, want %v", letter, routine, t, dtype)
		}
		return fn(e, op, xs)
	}
}

// ffiChar reads a character argument of mhlo.backend_config (a ui8) and
// checks it is one of allowed.
func ffiChar(op *mlir.Operation, name, allowed string) (byte, error) {
	v, err := ffiInt(op, name)
	if err != nil {
		return 0, err
	}
	if v < 0 || v > 255 || !strings.ContainsRune(allowed, rune(v)) {
		return 0, unsupported(op, "mhlo.backend_config %s = %d (want one of %q)", name, v, allowed)
	}
	return byte(v), nil
}

// ffiInt reads an integer argument of mhlo.backend_config.
func ffiInt(op *mlir.Operation, name string) (int64, error) {
	a, ok := op.Attr("mhlo.backend_config")
	if !ok {
		return 0, invalid(op, "no mhlo.backend_config (the FFI call's arguments, %s among them)", name)
	}
	d, ok := a.(*mlir.DictAttr)
	if !ok {
		return 0, invalid(op, "mhlo.backend_config %v is not a dictionary", a)
	}
	for _, en := range d.Entries {
		if en.Name == name {
			if i, ok := en.Value.(*mlir.IntegerAttr); ok && i.Big == nil {
				return i.Value, nil
			}
			return 0, invalid(op, "mhlo.backend_config %s = %v is not an integer", name, en.Value)
		}
	}
	return 0, invalid(op, "mhlo.backend_config %v has no %s", a, name)
}

// wantResults checks the call's result count.
func wantResults(op *mlir.Operation, n int) error {
	if len(op.Results) != n {
		return invalid(op, "has %d results, want %d", len(op.Results), n)
	}
	return nil
}

// infos are the zero int32 infos of a's matrices: the IR's ops answer a
// failure with NaN, which is what jax makes of a nonzero info.
func infos(e *env, a ir.Value) ir.Value {
	s := e.b.Type(a).Shape
	return intConst(e.b, ir.I32, s[:s.Rank()-2].Clone(), 0)
}

// geevCall: (a) -> (wr, wi, vl, vr, info), vl and vr complex64; cgeev's
// (a) -> (w, vl, vr, info), all complex64. The IR's eig computes both
// sides' vectors whatever compute_left and compute_right ask: jax drops
// those it did not ask for.
func geevCall(e *env, op *mlir.Operation, x []ir.Value) ([]ir.Value, error) {
	if len(x) != 1 {
		return nil, invalid(op, "has %d operands, want 1", len(x))
	}
	complex64 := e.b.Type(x[0]).DType == ir.C64
	want := 5
	if complex64 {
		want = 4
	}
	if err := wantResults(op, want); err != nil {
		return nil, err
	}
	for _, name := range []string{"compute_left", "compute_right"} {
		if _, err := ffiChar(op, name, "NV"); err != nil {
			return nil, err
		}
	}
	rs := e.b.Results(e.b.Eig(x[0]))
	if complex64 {
		if len(rs) != 3 {
			return nil, nil // the builder recorded why
		}
		return append(rs, infos(e, x[0])), nil
	}
	if len(rs) != 6 {
		return nil, nil // the builder recorded why
	}
	return []ir.Value{rs[0], rs[1], e.b.Complex(rs[2], rs[3]), e.b.Complex(rs[4], rs[5]), infos(e, x[0])}, nil
}

// gehrdCall: (a) -> (a, taus, info), with low 1 and high n (the whole
// matrix, as jax's hessenberg asks).
func gehrdCall(e *env, op *mlir.Operation, x []ir.Value) ([]ir.Value, error) {
	if len(x) != 1 {
		return nil, invalid(op, "has %d operands, want 1", len(x))
	}
	if err := wantResults(op, 3); err != nil {
		return nil, err
	}
	low, err := ffiInt(op, "low")
	if err != nil {
		return nil, err
	}
	high, err := ffiInt(op, "high")
	if err != nil {
		return nil, err
	}
	s := e.b.Type(x[0]).Shape
	if n := s[s.Rank()-1]; low != 1 || high != int64(n) {
		return nil, unsupported(op, "gehrd of rows and columns %d to %d of %d (only the whole matrix, 1 to n)", low, high, n)
	}
	rs := e.b.Results(e.b.Hessenberg(x[0]))
	if len(rs) != 2 {
		return nil, nil
	}
	return []ir.Value{rs[0], rs[1], infos(e, x[0])}, nil
}

// sytrdCall: (a) -> (a, d, e, taus, info); chetrd's too, d and e real.
func sytrdCall(e *env, op *mlir.Operation, x []ir.Value) ([]ir.Value, error) {
	if len(x) != 1 {
		return nil, invalid(op, "has %d operands, want 1", len(x))
	}
	if err := wantResults(op, 5); err != nil {
		return nil, err
	}
	uplo, err := ffiChar(op, "uplo", "LU")
	if err != nil {
		return nil, err
	}
	rs := e.b.Results(e.b.Tridiagonal(x[0], uplo == 'L'))
	if len(rs) != 4 {
		return nil, nil
	}
	return append(rs, infos(e, x[0])), nil
}

// geqp3Call: (a, jpvt) -> (a, jpvt, taus), jpvt one-based on return.
func geqp3Call(e *env, op *mlir.Operation, x []ir.Value) ([]ir.Value, error) {
	if len(x) != 2 {
		return nil, invalid(op, "has %d operands, want 2", len(x))
	}
	if err := wantResults(op, 3); err != nil {
		return nil, err
	}
	rs := e.b.Results(e.b.QrPivoted(x[0], x[1]))
	if len(rs) != 3 {
		return nil, nil
	}
	t := e.b.Type(rs[1])
	return []ir.Value{rs[0], e.b.Binary(ir.OpAdd, rs[1], intConst(e.b, ir.I32, t.Shape, 1)), rs[2]}, nil
}

// geesCall: (a) -> (t, z, wr, wi, sdim, info), without sorting.
func geesCall(e *env, op *mlir.Operation, x []ir.Value) ([]ir.Value, error) {
	if len(x) != 1 {
		return nil, invalid(op, "has %d operands, want 1", len(x))
	}
	if err := wantResults(op, 6); err != nil {
		return nil, err
	}
	if _, err := ffiChar(op, "mode", "NV"); err != nil {
		return nil, err
	}
	if _, err := ffiChar(op, "sort", "N"); err != nil {
		return nil, err
	}
	rs := e.b.Results(e.b.Schur(x[0]))
	if len(rs) != 4 {
		return nil, nil
	}
	return append(rs, infos(e, x[0]), infos(e, x[0])), nil
}

// orgqrCall: (a, taus) -> (q).
func orgqrCall(e *env, op *mlir.Operation, x []ir.Value) ([]ir.Value, error) {
	if len(x) != 2 {
		return nil, invalid(op, "has %d operands, want 2", len(x))
	}
	if err := wantResults(op, 1); err != nil {
		return nil, err
	}
	return one(e.b.HouseholderProduct(x[0], x[1])), nil
}

// getrfCall: (a) -> (lu, ipiv, info), ipiv one-based (row i was swapped
// with row ipiv[i]). LAPACK's info is positive for a singular matrix,
// which jax accepts (it turns only a negative one into NaN): the IR
// factors it all the same, so info is zero.
func getrfCall(e *env, op *mlir.Operation, x []ir.Value) ([]ir.Value, error) {
	if len(x) != 1 {
		return nil, invalid(op, "has %d operands, want 1", len(x))
	}
	if err := wantResults(op, 3); err != nil {
		return nil, err
	}
	rs := e.b.Results(e.b.Lu(x[0]))
	if len(rs) != 3 {
		return nil, nil
	}
	t := e.b.Type(rs[1])
	return []ir.Value{rs[0], e.b.Binary(ir.OpAdd, rs[1], intConst(e.b, ir.I32, t.Shape, 1)), infos(e, x[0])}, nil
}

// gesvdCall: gesdd's and gesvd's (a) -> (a, s, u, vt, info), the first
// a's scratch (jax drops it: a here). mode A asks for the square u and vt,
// S for the reduced ones and N for none, which jax still gives shapes to
// (square or reduced, as full_matrices was) and drops: the IR's svd of
// those shapes fills them.
func gesvdCall(e *env, op *mlir.Operation, x []ir.Value) ([]ir.Value, error) {
	if len(x) != 1 {
		return nil, invalid(op, "has %d operands, want 1", len(x))
	}
	if err := wantResults(op, 5); err != nil {
		return nil, err
	}
	mode, err := ffiChar(op, "mode", "ASN")
	if err != nil {
		return nil, err
	}
	s := e.b.Type(x[0]).Shape
	r := s.Rank()
	if r < 2 {
		return nil, invalid(op, "of a rank-%d operand", r)
	}
	m, n := s[r-2], s[r-1]
	full := mode == 'A'
	if mode == 'N' {
		ut, err := resultType(op, 2)
		if err != nil {
			return nil, err
		}
		vt, err := resultType(op, 3)
		if err != nil {
			return nil, err
		}
		full = ut.Shape.Rank() == r && vt.Shape.Rank() == r && ut.Shape[r-1] == m && vt.Shape[r-2] == n
	}
	rs := e.b.Results(e.b.Svd(x[0], full))
	if len(rs) != 3 {
		return nil, nil
	}
	return []ir.Value{x[0], rs[0], rs[1], rs[2], infos(e, x[0])}, nil
}

// syevdCall: (a) -> (v, w, info); cheevd's too, w real. Mode N asks for
// the eigenvalues only (jax always asks for V): the IR's eigh gives the
// vectors all the same.
func syevdCall(e *env, op *mlir.Operation, x []ir.Value) ([]ir.Value, error) {
	if len(x) != 1 {
		return nil, invalid(op, "has %d operands, want 1", len(x))
	}
	if err := wantResults(op, 3); err != nil {
		return nil, err
	}
	if _, err := ffiChar(op, "mode", "VN"); err != nil {
		return nil, err
	}
	uplo, err := ffiChar(op, "uplo", "LU")
	if err != nil {
		return nil, err
	}
	rs := e.b.Results(e.b.Eigh(x[0], uplo == 'L'))
	if len(rs) != 2 {
		return nil, nil
	}
	return append(rs, infos(e, x[0])), nil
}

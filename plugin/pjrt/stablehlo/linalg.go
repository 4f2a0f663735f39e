package stablehlo

import (
	"strconv"
	"strings"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// Linear algebra: stablehlo.cholesky and triangular_solve, and the
// custom_calls jax's default lowerings emit for a platform without LAPACK
// (geqrf as "Qr", householder_product as
// "ProductOfElementaryHouseholderReflectors", and eigh's Jacobi branch as
// "Eigh"), each one IR op, on float32, float64 or complex64; half types
// go through float32. On those lowerings jnp.linalg.svd needs no call of
// its own (jax lowers it through QDWH, which is Qr, the Householder
// product, Eigh and ordinary ops) and lu (solve, inv, det) is ordinary
// ops; jax_plugins.metalplug registers jax's CPU lowerings of svd, lu and
// eigh instead (complex lu and svd excepted), whose LAPACK calls lapack.go
// translates with the other CPU ones.

// linalgHandlers adds the ops (ops.go's table calls it).
func linalgHandlers(add func(string, func(*env, *mlir.Operation) ([]ir.Value, error), string)) {
	add("vhlo.cholesky_v1", cholesky, "IR cholesky (the other triangle zero; not positive definite: NaN; complex64 Hermitian); half types through f32")
	add("vhlo.triangular_solve_v1", triangularSolve, "IR triangular_solve (every transpose_a; ADJOINT conjugates complex64); half types through f32")
}

// linalgCustomCalls are the custom_call targets that are linear algebra
// (customCall looks them up), with what each becomes.
var linalgCustomCalls = map[string]struct {
	fn   func(*env, *mlir.Operation) ([]ir.Value, error)
	note string
}{
	"Qr": {qrCall, "IR qr (geqrf: packed R and Householder vectors, taus; complex64 as zgeqrf)"},
	"ProductOfElementaryHouseholderReflectors": {householderCall, "IR householder_product (orgqr; complex64 as zungqr)"},
	"Eigh": {eighCall, `IR eigh (backend_config "lower,sort_eigenvalues,max_iter,tol"; eigenvalues always ascending; complex64 Hermitian, real eigenvalues)`},
}

// linalgNote is custom_call's note on the linear algebra targets.
func linalgNote() string {
	names := make([]string, 0, len(linalgCustomCalls))
	for _, n := range []string{"Qr", "ProductOfElementaryHouseholderReflectors", "Eigh"} {
		names = append(names, n+" ("+linalgCustomCalls[n].note+")")
	}
	return "; linear algebra: " + strings.Join(names, ", ") + lapackNote()
}

// linalgOperand checks that x is a float or complex64 matrix batch the IR decomposes,
// widening a half type to float32; narrow puts a result back.
func linalgOperand(e *env, op *mlir.Operation, x ir.Value) (ir.Value, func(ir.Value) ir.Value, error) {
	t := e.b.Type(x)
	switch t.DType {
	case ir.F32, ir.F64, ir.C64: // complex64: Hermitian, adjoints conjugate (op.go)
		return x, func(v ir.Value) ir.Value { return v }, nil
	case ir.F16, ir.BF16:
		return e.b.Convert(x, ir.F32), func(v ir.Value) ir.Value { return e.b.Convert(v, t.DType) }, nil
	}
	return 0, nil, unsupported(op, "%v operands (float32, float64, complex64, and half types through float32)", t)
}

func cholesky(e *env, op *mlir.Operation) ([]ir.Value, error) {
	x, err := oneOperand(e, op)
	if err != nil {
		return nil, err
	}
	lower, err := optBoolAttr(op, "lower")
	if err != nil {
		return nil, err
	}
	x, narrow, err := linalgOperand(e, op, x)
	if err != nil {
		return nil, err
	}
	return one(narrow(e.b.Cholesky(x, lower))), nil
}

func triangularSolve(e *env, op *mlir.Operation) ([]ir.Value, error) {
	a, rhs, err := twoOperands(e, op)
	if err != nil {
		return nil, err
	}
	var attrs ir.LinalgAttrs
	for name, dst := range map[string]*bool{"left_side": &attrs.LeftSide, "lower": &attrs.Lower, "unit_diagonal": &attrs.UnitDiagonal} {
		if *dst, err = boolAttr(op, name); err != nil {
			return nil, err
		}
	}
	trans, err := enumAttr(op, "transpose_a")
	if err != nil {
		return nil, err
	}
	kind, ok := map[string]ir.TransposeKind{"NO_TRANSPOSE": ir.NoTranspose, "TRANSPOSE": ir.Transpose, "ADJOINT": ir.Adjoint}[trans]
	if !ok {
		return nil, invalid(op, "transpose_a %s", trans)
	}
	attrs.Transpose = kind
	a, narrow, err := linalgOperand(e, op, a)
	if err != nil {
		return nil, err
	}
	if rhs, _, err = linalgOperand(e, op, rhs); err != nil {
		return nil, err
	}
	return one(narrow(e.b.TriangularSolve(a, rhs, attrs))), nil
}

// linalgCall reads a linear algebra custom_call's n operands, checking
// that it is jax's api_version 1 (API_VERSION_ORIGINAL, or unspecified).
func linalgCall(e *env, op *mlir.Operation, n int) ([]ir.Value, error) {
	if a, ok := op.Attr("api_version"); ok {
		switch a := a.(type) {
		case *mlir.EnumAttr:
			if a.Name != "API_VERSION_ORIGINAL" && a.Name != "API_VERSION_UNSPECIFIED" {
				return nil, unsupported(op, "custom_call api_version %s (jax's linear algebra calls are API_VERSION_ORIGINAL)", a.Name)
			}
		case *mlir.IntegerAttr:
			if a.Value > 1 {
				return nil, unsupported(op, "custom_call api_version %d (jax's linear algebra calls are version 1)", a.Value)
			}
		}
	}
	return nOperands(e, op, n)
}

func qrCall(e *env, op *mlir.Operation) ([]ir.Value, error) {
	xs, err := linalgCall(e, op, 1)
	if err != nil {
		return nil, err
	}
	x, narrow, err := linalgOperand(e, op, xs[0])
	if err != nil {
		return nil, err
	}
	rs := e.b.Results(e.b.Qr(x))
	if len(rs) != 2 {
		return nil, nil // the builder recorded why
	}
	return []ir.Value{narrow(rs[0]), narrow(rs[1])}, nil
}

func householderCall(e *env, op *mlir.Operation) ([]ir.Value, error) {
	xs, err := linalgCall(e, op, 2)
	if err != nil {
		return nil, err
	}
	a, narrow, err := linalgOperand(e, op, xs[0])
	if err != nil {
		return nil, err
	}
	taus, _, err := linalgOperand(e, op, xs[1])
	if err != nil {
		return nil, err
	}
	return one(narrow(e.b.HouseholderProduct(a, taus))), nil
}

// eighCall reads jax's backend_config "lower,sort_eigenvalues,max_iter,tol"
// (_eigh_tpu_lowering's Jacobi branch): only lower matters, as the IR's
// eigh always sorts and runs LAPACK's own convergence test.
func eighCall(e *env, op *mlir.Operation) ([]ir.Value, error) {
	xs, err := linalgCall(e, op, 1)
	if err != nil {
		return nil, err
	}
	cfg, err := optStringAttr(op, "backend_config")
	if err != nil {
		return nil, err
	}
	fields := strings.Split(cfg, ",")
	if len(fields) != 4 {
		return nil, invalid(op, "Eigh backend_config %q, want lower,sort_eigenvalues,max_iter,tol", cfg)
	}
	lower, err := strconv.Atoi(fields[0])
	if err != nil || (lower != 0 && lower != 1) {
		return nil, invalid(op, "Eigh backend_config %q: lower must be 0 or 1", cfg)
	}
	if len(op.Results) == 2 {
		if rt, err := resultType(op, 1); err == nil && rt.Shape.Rank() > 0 {
			if at := e.b.Type(xs[0]); at.Shape.Rank() > 0 && rt.Shape[rt.Shape.Rank()-1] != at.Shape[at.Shape.Rank()-1] {
				return nil, unsupported(op, "Eigh of a subset of the eigenvalues (%v from %v)", rt, at)
			}
		}
	}
	x, narrow, err := linalgOperand(e, op, xs[0])
	if err != nil {
		return nil, err
	}
	rs := e.b.Results(e.b.Eigh(x, lower == 1))
	if len(rs) != 2 {
		return nil, nil
	}
	return []ir.Value{narrow(rs[0]), narrow(rs[1])}, nil
}

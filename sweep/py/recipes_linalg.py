"""Recipes of the linear algebra ops (plugin/tf/lower/linalg.go).

Inputs are well conditioned (m m^T + n I, or a random matrix with n added
to its diagonal), batched, 1x1, empty, and up to 64x64, with singular
inputs where the op defines the answer (determinants, a triangular solve
dividing by zero). Decompositions whose vectors are defined only up to
sign (SelfAdjointEigV2's, Svd's) are checked by the properties that
define them, in float64, against numpy's eigenvalues and singular values.
"""
import numpy as np

from recipes import V

RECIPES = {}


def _np(c):
    return c.T.as_numpy_dtype


def _rand(c, *shape):
    return c.rng.uniform(-1, 1, shape).astype(_np(c))


def _spd(c, *shape):
    m = c.rng.uniform(-1, 1, shape)
    n = shape[-1]
    return (m @ np.swapaxes(m, -1, -2) + n * np.eye(n)).astype(_np(c))


def _dominant(c, *shape):
    """A random matrix with n added to its diagonal: far from singular."""
    n = shape[-1]
    return (c.rng.uniform(-1, 1, shape) + n * np.eye(n)).astype(_np(c))


def cholesky(c):
    return [V("5x5", input=_spd(c, 5, 5)), V("batched", input=_spd(c, 3, 4, 4)), V("1x1", input=_spd(c, 1, 1)),
            V("64x64", tol=10, input=_spd(c, 64, 64)), V("empty", input=_spd(c, 2, 0, 0))]


def triangular_solve(c):
    vs = []
    for lower in (True, False):
        for adjoint in (False, True):
            vs.append(V("lower=%s adjoint=%s" % (lower, adjoint), matrix=_dominant(c, 2, 4, 4), rhs=_rand(c, 2, 4, 3),
                        lower=lower, adjoint=adjoint))
    vs += [V("batch dims broadcast", matrix=_dominant(c, 2, 1, 4, 4), rhs=_rand(c, 3, 4, 2), lower=True, adjoint=False),
           V("1x1", matrix=_dominant(c, 1, 1), rhs=_rand(c, 1, 5), lower=False, adjoint=False),
           V("64x64", tol=10, matrix=_dominant(c, 64, 64), rhs=_rand(c, 64, 3), lower=True, adjoint=True),
           V("no columns", matrix=_dominant(c, 3, 3), rhs=_rand(c, 3, 0), lower=True, adjoint=False),
           # A zero on the diagonal: 1/0 then 1 - inf.
           V("singular", matrix=np.array([[0, 0], [1, 1]], _np(c)), rhs=np.array([[1], [1]], _np(c)), lower=True, adjoint=False)]
    return vs


def qr(c):
    vs = []
    for full in (False, True):
        for shape in ((5, 3), (3, 5), (4, 4), (2, 6, 4), (1, 1)):
            vs.append(V("%s full_matrices=%s" % ("x".join(map(str, shape)), full), tol=4, input=_rand(c, *shape), full_matrices=full))
        vs.append(V("48x40 full_matrices=%s" % full, tol=20, input=_rand(c, 48, 40), full_matrices=full))
        vs.append(V("2x0 full_matrices=%s" % full, input=_rand(c, 2, 0), full_matrices=full))
    return vs


def _lower_symmetric(a):
    """The symmetric matrix TensorFlow reads from a's lower triangle."""
    low = np.tril(a)
    return low + np.swapaxes(np.tril(a, -1), -1, -2)


def _eig_prop(run1, run2, inputs):
    a = _lower_symmetric(inputs["input"].astype(np.float64))
    e, v = run1[0].astype(np.float64), run1[1].astype(np.float64)
    want = np.linalg.eigvalsh(a)
    n = a.shape[-1]
    scale = max(1.0, float(np.abs(a).max()) if a.size else 1.0)
    tol = 1e-5 * max(n, 1) * scale
    de = float(np.abs(e - want).max()) if e.size else 0.0
    resid = float(np.abs(a @ v - v * e[..., None, :]).max()) if v.size else 0.0
    orth = float(np.abs(np.swapaxes(v, -1, -2) @ v - np.eye(n)).max()) if v.size else 0.0
    detail = "eigenvalues off by %.2g, |A V - V diag(e)| %.2g, |V^T V - I| %.2g (tolerance %.2g)" % (de, resid, orth, tol)
    return de <= tol and resid <= tol and orth <= 1e-5 * max(n, 1), detail


def self_adjoint_eig(c):
    vs = []
    for shape in ((5, 5), (3, 4, 4), (1, 1), (40, 40), (0, 0)):
        name = "x".join(map(str, shape))
        # Not symmetric: only the lower triangle counts.
        a = _rand(c, *shape) * 2
        vs.append(V(name + ", vectors up to sign", input=a, compute_v=True, prop=("A V = V diag(e), V^T V = I, e = numpy's", _eig_prop)))
        vs.append(V(name + ", values only", tol=4, input=a, compute_v=False, out_check={"v": "skip"}))
    vs.append(V("repeated eigenvalues", input=np.eye(3, dtype=_np(c)) * 2, compute_v=True, prop=("A V = V diag(e), V^T V = I, e = numpy's", _eig_prop)))
    return vs


def _svd_prop(full):
    def prop(run1, run2, inputs):
        a = inputs["input"].astype(np.float64)
        s, u, v = (x.astype(np.float64) for x in run1)
        m, n = a.shape[-2:]
        k = min(m, n)
        want = np.linalg.svd(a, compute_uv=False) if a.size else np.zeros(a.shape[:-2] + (k,))
        scale = max(1.0, float(np.abs(a).max()) if a.size else 1.0)
        tol = 1e-5 * max(m, n, 1) * scale
        ds = float(np.abs(s - want).max()) if s.size else 0.0
        want_u, want_v = (m if full else k), (n if full else k)
        if u.shape[-2:] != (m, want_u) or v.shape[-2:] != (n, want_v):
            return False, "u %s and v %s, want [..., %d, %d] and [..., %d, %d]" % (u.shape, v.shape, m, want_u, n, want_v)
        uk, vk = u[..., :, :k], v[..., :, :k]
        rec = float(np.abs((uk * s[..., None, :]) @ np.swapaxes(vk, -1, -2) - a).max()) if a.size else 0.0
        ou = float(np.abs(np.swapaxes(u, -1, -2) @ u - np.eye(want_u)).max()) if u.size else 0.0
        ov = float(np.abs(np.swapaxes(v, -1, -2) @ v - np.eye(want_v)).max()) if v.size else 0.0
        detail = "singular values off by %.2g, |U diag(s) V^T - A| %.2g, |U^T U - I| %.2g, |V^T V - I| %.2g (tolerance %.2g)" % (ds, rec, ou, ov, tol)
        otol = 1e-5 * max(m, n, 1)
        return ds <= tol and rec <= tol and ou <= otol and ov <= otol, detail
    return prop


def svd(c):
    vs = []
    for shape in ((5, 3), (3, 5), (4, 4), (2, 6, 4), (1, 1), (40, 24)):
        name = "x".join(map(str, shape))
        a = _rand(c, *shape)
        for full in (False, True):
            vs.append(V("%s full_matrices=%s, vectors up to sign" % (name, full), input=a, compute_uv=True, full_matrices=full,
                        prop=("U diag(s) V^T = A, orthonormal U and V, s = numpy's", _svd_prop(full))))
        vs.append(V(name + ", values only", tol=4, input=a, compute_uv=False, full_matrices=False, out_check={"u": "skip", "v": "skip"}))
    rank1 = np.outer([1, 2, 3], [1, -1]).astype(_np(c))
    vs.append(V("rank 1", input=rank1, compute_uv=True, full_matrices=True, prop=("U diag(s) V^T = A, orthonormal U and V, s = numpy's", _svd_prop(True))))
    return vs


def matrix_inverse(c):
    vs = []
    for adjoint in (False, True):
        vs += [V("4x4 adjoint=%s" % adjoint, tol=4, input=_dominant(c, 4, 4), adjoint=adjoint),
               V("batched adjoint=%s" % adjoint, tol=4, input=_dominant(c, 2, 3, 5, 5), adjoint=adjoint)]
    vs += [V("1x1", input=_dominant(c, 1, 1), adjoint=False), V("64x64", tol=20, input=_dominant(c, 64, 64), adjoint=False),
           V("a permutation", input=np.eye(4, dtype=_np(c))[[2, 0, 3, 1]], adjoint=False),
           V("empty", input=_dominant(c, 2, 0, 0), adjoint=False)]
    return vs


def matrix_solve(c):
    vs = []
    for adjoint in (False, True):
        vs += [V("4x4 adjoint=%s" % adjoint, tol=4, matrix=_dominant(c, 4, 4), rhs=_rand(c, 4, 3), adjoint=adjoint),
               V("batched adjoint=%s" % adjoint, tol=4, matrix=_dominant(c, 3, 5, 5), rhs=_rand(c, 3, 5, 2), adjoint=adjoint)]
    vs += [V("1x1", matrix=_dominant(c, 1, 1), rhs=_rand(c, 1, 4), adjoint=False),
           V("64x64", tol=20, matrix=_dominant(c, 64, 64), rhs=_rand(c, 64, 3), adjoint=True),
           V("no columns", matrix=_dominant(c, 3, 3), rhs=_rand(c, 3, 0), adjoint=False)]
    return vs


def _det_inputs(c):
    t = _np(c)
    return [("4x4", _dominant(c, 4, 4) / 4), ("batched", _dominant(c, 2, 3, 3, 3) / 3), ("1x1", np.array([[-2.5]], t)),
            ("singular", np.array([[1, 2], [2, 4]], t)), ("zero column", np.array([[0, 1, 2], [0, 3, 4], [0, 5, 6]], t)),
            ("a permutation", np.eye(4, dtype=t)[[2, 0, 3, 1]]), ("20x20", _dominant(c, 20, 20) / 20),
            ("0x0", np.zeros((0, 0), t)), ("empty batch", np.zeros((0, 3, 3), t))]


def determinant(c):
    return [V(name, tol=4, input=x) for name, x in _det_inputs(c)]


def lu(c):
    t = _np(c)
    return [V("4x4", tol=4, input=_rand(c, 4, 4)), V("batched", tol=4, input=_rand(c, 2, 3, 5, 5)), V("1x1", input=_rand(c, 1, 1)),
            # TensorFlow's Lu refuses a singular matrix; a zero first pivot swaps.
            V("zero leading entry", input=np.array([[0, 1, 2], [3, 4, 5], [6, 7, 9]], t)), V("64x64", tol=20, input=_dominant(c, 64, 64)),
            V("empty", input=np.zeros((2, 0, 0), t))]


def _diags(c, batch, m):
    d = c.rng.uniform(-1, 1, batch + (3, m))
    d[..., 1, :] += 4  # diagonally dominant: every pivot far from zero
    return d.astype(_np(c))


def tridiagonal_solve(c):
    vs = []
    for pivoting in (True, False):
        vs += [V("5 partial_pivoting=%s" % pivoting, tol=4, diagonals=_diags(c, (), 5), rhs=_rand(c, 5, 3), partial_pivoting=pivoting),
               V("batched partial_pivoting=%s" % pivoting, tol=4, diagonals=_diags(c, (2, 3), 4), rhs=_rand(c, 2, 3, 4, 2),
                 partial_pivoting=pivoting)]
    vs += [V("1", diagonals=_diags(c, (), 1), rhs=_rand(c, 1, 2), partial_pivoting=True),
           V("64", tol=10, diagonals=_diags(c, (), 64), rhs=_rand(c, 64, 2), partial_pivoting=True)]
    return vs


def tridiagonal_matmul(c):
    def parts(batch, m):
        return {k: _rand(c, *(batch + (1, m))) for k in ("superdiag", "maindiag", "subdiag")}
    return [V("5x3", **parts((), 5), rhs=_rand(c, 5, 3)), V("batched", **parts((2,), 4), rhs=_rand(c, 2, 4, 6)),
            V("1x2", **parts((), 1), rhs=_rand(c, 1, 2)), V("64x3", **parts((), 64), rhs=_rand(c, 64, 3)),
            V("no columns", **parts((), 4), rhs=_rand(c, 4, 0))]


for _fn, _ops in ((cholesky, ["Cholesky"]), (triangular_solve, ["MatrixTriangularSolve"]), (qr, ["Qr"]),
                  (self_adjoint_eig, ["SelfAdjointEigV2"]), (svd, ["Svd"]), (matrix_inverse, ["MatrixInverse"]),
                  (matrix_solve, ["MatrixSolve"]), (determinant, ["MatrixDeterminant", "LogMatrixDeterminant"]), (lu, ["Lu"]),
                  (tridiagonal_solve, ["TridiagonalSolve"]), (tridiagonal_matmul, ["TridiagonalMatMul"])):
    for _op in _ops:
        RECIPES[_op] = _fn

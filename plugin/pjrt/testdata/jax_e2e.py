"""End-to-end check of metalplug's PJRT plugin in a real jax (e2e_test.go).

Run with the plugin registered (jax_plugins.metalplug on PYTHONPATH, or
PJRT_NAMES_AND_LIBRARY_PATHS), JAX_PLATFORMS=metalplug,cpu and
METALPLUG_HOST_DEVICE=1. Each check prints one line; the last line is
"ALL OK" when every check passed. Exit status 1 otherwise.

The jit check runs a small function through compile (the StableHLO
reader and translator) and execute; plugin/pjrt/stablehlo's own tests and
tests/integration cover the translation of many more programs.
"""

import os

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)  # so that int64 and float64 stay as they are

import ml_dtypes
import numpy as np

from checks import check, finish


dev = None


@check("jax.devices() shows the metalplug device and its kind")
def _():
    global dev
    devices = jax.devices()
    assert [d.platform for d in devices] == ["metalplug"], devices
    dev = devices[0]
    assert dev.device_kind == "host (reference driver)", dev.device_kind
    assert dev.id == 0 and dev.process_index == 0
    assert jax.devices("cpu"), "cpu is not reachable"
    assert jax.default_backend() == "metalplug", jax.default_backend()
    assert dev.driver == "host", dev.driver  # a device attribute
    print(f"     {dev!r} kind={dev.device_kind!r}")
    print(f"     platform_version={dev.client.platform_version!r}")


rng = np.random.default_rng(0)


def sample(dtype, shape=(3, 5)):
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    return rng.standard_normal(shape).astype(dtype)


DTYPES = [
    np.float32,
    np.float16,
    ml_dtypes.bfloat16,
    np.float64,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint32,
    np.bool_,
]

for dt in DTYPES:

    @check(f"device_put / np.asarray round-trips {np.dtype(dt).name}")
    def _(dt=dt):
        a = sample(dt)
        x = jax.device_put(a, dev)
        x.block_until_ready()
        assert x.devices() == {dev}, x.devices()
        assert x.dtype == np.dtype(dt) and x.shape == a.shape, (x.dtype, x.shape)
        b = np.asarray(x)
        assert b.dtype == a.dtype and np.array_equal(b, a), (a, b)


base = np.arange(48, dtype=np.float32).reshape(6, 8)
VIEWS = {
    "a.T": base.T,
    "a[:, ::2]": base[:, ::2],
    "a[::-1, ::-1]": base[::-1, ::-1],
    "a[::-2, 1::3]": base[::-2, 1::3],
    "a[2]": base[2],
    "scalar": np.float32(3.5),
    "empty": np.zeros((0, 4), np.int32),
}
for name, view in VIEWS.items():

    @check(f"a non-contiguous numpy view round-trips: {name}")
    def _(view=view):
        x = jax.device_put(view, dev)
        b = np.asarray(x)
        assert b.shape == np.shape(view) and np.array_equal(b, view), (view, b)


@check("block_until_ready, ready events and copies")
def _():
    xs = [jax.device_put(sample(np.float32, (64, 64)), dev) for _ in range(8)]
    jax.block_until_ready(xs)
    assert all(x.is_ready() for x in xs)
    y = jax.device_put(xs[0], dev)  # the same device: no copy needed
    assert np.array_equal(np.asarray(y), np.asarray(xs[0]))
    c = jax.device_put(np.asarray(xs[1]), jax.devices("cpu")[0])
    assert np.array_equal(np.asarray(c), np.asarray(xs[1]))


@check("deleting a buffer")
def _():
    x = jax.device_put(np.ones((4, 4), np.float32), dev)
    x.delete()
    assert x.is_deleted()
    try:
        np.asarray(x)
    except RuntimeError as e:
        assert "deleted" in str(e), e
    else:
        raise AssertionError("reading a deleted array did not fail")


@check("memory stats")
def _():
    before = dev.memory_stats()["bytes_in_use"]
    x = jax.device_put(np.zeros((1024, 256), np.float32), dev)
    x.block_until_ready()
    stats = dev.memory_stats()
    assert stats["bytes_in_use"] >= before + 1024 * 256 * 4, (before, stats)
    assert stats["peak_bytes_in_use"] >= stats["bytes_in_use"], stats
    assert stats.get("bytes_limit", 0) > 0, stats
    # Statistics we do not keep are unset: jax shows them as -1 or not at all.
    assert stats.get("bytes_reserved", -1) == -1 and "pool_bytes" not in stats, stats
    del x
    print(f"     {stats}")


@check("jax.jit compiles and executes")
def _():
    f = jax.jit(lambda a: a * 2 + 1)
    a = np.array([1.0, -2.0, 3.5], np.float32)
    x = jax.device_put(a, dev)
    y = f(x)
    y.block_until_ready()
    assert y.devices() == {dev} and y.dtype == np.float32 and y.shape == (3,), (y.devices(), y.dtype, y.shape)
    assert np.array_equal(np.asarray(y), a * 2 + 1), np.asarray(y)
    assert np.array_equal(np.asarray(x), a), "the input was written"
    z = f(y)  # a result as the next argument, and the cached executable
    assert np.array_equal(np.asarray(z), (a * 2 + 1) * 2 + 1), np.asarray(z)
    compiled = f.lower(x).compile()
    assert compiled.memory_analysis().argument_size_in_bytes == 12
    for _ in range(50):  # many in flight at once, then read in order
        z = f(z)
    assert np.isfinite(np.asarray(z)).all()


NARROW = [ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3b11fnuz, ml_dtypes.float8_e5m2fnuz,
          ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e4m3, ml_dtypes.float8_e3m4, ml_dtypes.float8_e8m0fnu,
          ml_dtypes.float6_e2m3fn, ml_dtypes.float6_e3m2fn, ml_dtypes.float4_e2m1fn,
          ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.int2, ml_dtypes.uint2]


def is_int(dt):
    return np.dtype(dt) in (np.dtype(ml_dtypes.int4), np.dtype(ml_dtypes.uint4), np.dtype(ml_dtypes.int2), np.dtype(ml_dtypes.uint2))


def narrow_codes(dt):
    """Every value of a narrow type, as ml_dtypes stores it (a byte each)."""
    if is_int(dt):
        info = ml_dtypes.iinfo(dt)
        return np.arange(int(info.min), int(info.max) + 1).astype(dt)
    n = 1 << ml_dtypes.finfo(dt).bits
    return np.arange(n, dtype=np.uint8).view(dt)


def same(a, b):
    if is_int(a.dtype):
        return np.array_equal(a.astype(np.int32), b.astype(np.int32))
    fa, fb = a.astype(np.float32), b.astype(np.float32)
    return np.array_equal(fa, fb, equal_nan=True)


for dt in NARROW:

    @check(f"narrow {np.dtype(dt).name}: device_put / np.asarray round trip, and jit (x + x, to and from float32)")
    def _(dt=dt):
        a = narrow_codes(dt)
        x = jax.device_put(a, dev)
        assert x.dtype == np.dtype(dt) and x.shape == a.shape, (x.dtype, x.shape)
        b = np.asarray(x)
        assert b.dtype == a.dtype and np.array_equal(b.view(np.uint8), a.view(np.uint8)), (a, b)
        y = np.asarray(jax.jit(lambda v: v + v)(x))
        if is_int(dt):  # wraps
            bits = ml_dtypes.iinfo(dt).bits
            lo = int(ml_dtypes.iinfo(dt).min)
            want = ((a.astype(np.int32) * 2 - lo) % (1 << bits) + lo).astype(dt)
        else:  # ml_dtypes' rounding (XLA's CPU compiles no f6 arithmetic)
            with np.errstate(over="ignore", invalid="ignore"):
                want = (a.astype(np.float32) * 2).astype(dt)
        assert y.dtype == a.dtype and same(y, want), (a, y, want)
        f = np.linspace(-20, 20, 41, dtype=np.float32)
        if is_int(dt):  # out of range, numpy's cast is undefined (XLA's saturates)
            f = a.astype(np.float32)
        with np.errstate(over="ignore", invalid="ignore"):
            want_from = f.astype(dt).astype(np.float32)
        got = np.asarray(jax.jit(lambda v: v.astype(dt).astype(jnp.float32))(jax.device_put(f, dev)))
        assert np.array_equal(got, want_from, equal_nan=True), (f, got, want_from)


@check("an op the translation does not support is a clear JaxRuntimeError, not an abort")
def _():
    try:
        # atan2 of float64: the device computes no float64 transcendentals
        x = jax.device_put(np.ones(4, np.float64), dev)
        jax.jit(lambda a: jax.numpy.arctan2(a, a))(x).block_until_ready()
    except jax.errors.JaxRuntimeError as e:
        msg = str(e)
        assert "UNIMPLEMENTED" in msg and "atan2" in msg, msg
        print(f"     {msg.splitlines()[0][:200]}")
    else:
        raise AssertionError("atan2 of float64 ran, but nothing translates it")


@check("rng_bit_generator: the rbg PRNG draws on the device")
def _():
    key = jax.random.key(7, impl="rbg")
    u = np.asarray(jax.jit(lambda k: jax.random.uniform(k, (2000,), dtype=np.float32))(key))
    assert ((0 <= u) & (u < 1)).all() and abs(u.mean() - 0.5) < 0.03, u.mean()
    again = np.asarray(jax.jit(lambda k: jax.random.uniform(k, (2000,), dtype=np.float32))(key))
    assert np.array_equal(u, again), "the same key drew other numbers"
    k1, k2 = jax.random.split(key)
    assert not np.array_equal(np.asarray(jax.random.bits(k1, (8,))), np.asarray(jax.random.bits(k2, (8,))))


@check("compiler options XLA would refuse are refused in XLA's words, and real ones compile")
def _():
    x = np.ones(2, np.float32)
    lowered = jax.jit(lambda a: a + 1).lower(x)
    # jax's api_test test_jit_lower_compile_with_compiler_options_invalid
    for options, words in [({"invalid_key": "invalid_value"}, "No such compile option: 'invalid_key'"),
                           ({"xla_embed_ir_in_executable": "invalid_value"}, "is not a valid bool value."),
                           ({"xla_gpu_autotune_level": 1.5}, "'1.5' is not a valid int32 value.")]:
        try:
            lowered.compile(compiler_options=options)
        except jax.errors.JaxRuntimeError as e:
            assert words in str(e), str(e)
        else:
            raise AssertionError(f"{options} was accepted")
    for options in [{"xla_embed_ir_in_executable": True}, {"xla_embed_ir_in_executable": "False"},
                    {"xla_cpu_enable_fast_math": False, "xla_gpu_autotune_level": 0, "xla_dump_hlo_as_text": False},
                    {"xla_gpu_enable_command_buffer": ""}]:
        np.testing.assert_array_equal(np.asarray(jax.jit(lambda a: a + 1, compiler_options=options)(x)), x + 1)
        np.testing.assert_array_equal(np.asarray(lowered.compile(compiler_options=options)(x)), x + 1)


@check("tokens in and out of a program (jax.lax.create_token)")
def _():
    from jax._src import core

    made = jax.jit(jax.lax.create_token)(1.0)
    assert isinstance(made, core.Token), type(made)
    arr, tok = jax.jit(lambda a, t: (a * 2, t))(jax.device_put(np.ones(3, np.float32), dev), jax.lax.create_token())
    assert isinstance(tok, core.Token), type(tok)
    assert np.array_equal(np.asarray(arr), [2, 2, 2]), np.asarray(arr)


@check("donated arguments (jit's donate_argnums) are consumed, with no warning from jax")
def _():
    import sys
    import warnings

    if "jax_plugins.metalplug" not in sys.modules:
        print("     not this run: the library alone (PJRT_NAMES_AND_LIBRARY_PATHS) does not put metalplug in jax's donation list")
        return
    x = jax.device_put(np.arange(4, dtype=np.float32), dev)
    keep = jax.device_put(np.ones(4, np.float32), dev)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Donation is not implemented for ('metalplug',)" would raise
        y = jax.jit(lambda a, b: a * 2 + b, donate_argnums=0)(x, keep)
    assert x.is_deleted() and not keep.is_deleted(), (x.is_deleted(), keep.is_deleted())
    assert np.array_equal(np.asarray(y), np.arange(4) * 2 + 1), np.asarray(y)
    try:
        jax.jit(lambda a, b: a + b, donate_argnums=0)(keep, keep).block_until_ready()
    except RuntimeError as e:
        assert "donate the same buffer twice" in str(e), str(e)
    else:
        raise AssertionError("f(donate(a), a) ran")
    assert not keep.is_deleted()


@check("linear algebra (cholesky, triangular solves, qr, solve, inv, det, svd, eigh) against numpy")
def _():
    import sys

    import jax.numpy as jnp
    import jax.scipy.linalg as jsl

    a = rng.normal(size=(5, 5)).astype(np.float32)
    spd = (a @ a.T + 5 * np.eye(5)).astype(np.float32)
    b = rng.normal(size=(5, 2)).astype(np.float32)
    on = lambda f, *xs: np.asarray(jax.jit(f)(*(jax.device_put(x, dev) for x in xs)))
    tol = dict(rtol=2e-4, atol=2e-4)
    np.testing.assert_allclose(on(jnp.linalg.cholesky, spd), np.linalg.cholesky(spd), **tol)
    low = np.tril(spd)
    np.testing.assert_allclose(on(lambda l, y: jsl.solve_triangular(l, y, lower=True), low, b), np.linalg.solve(low, b), **tol)
    q, r = on(lambda x: jnp.linalg.qr(x)[0], a), on(lambda x: jnp.linalg.qr(x)[1], a)
    np.testing.assert_allclose(q @ r, a, **tol)
    np.testing.assert_allclose(q.T @ q, np.eye(5), **tol)
    np.testing.assert_allclose(on(jnp.linalg.solve, a, b), np.linalg.solve(a, b), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(on(jnp.linalg.inv, spd), np.linalg.inv(spd), **tol)
    np.testing.assert_allclose(on(jnp.linalg.det, a), np.linalg.det(a), rtol=1e-4)
    if "jax_plugins.metalplug" not in sys.modules:
        print("     eigh and svd not this run: the library alone registers no lowerings")
        return
    np.testing.assert_allclose(on(lambda x: jnp.linalg.svd(x, compute_uv=False), a), np.linalg.svd(a, compute_uv=False), **tol)
    w, v = on(lambda x: jnp.linalg.eigh(x)[0], spd), on(lambda x: jnp.linalg.eigh(x)[1], spd)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(spd), **tol)
    np.testing.assert_allclose(v @ np.diag(w) @ v.T, spd, rtol=1e-3, atol=1e-3)
    from jax.lax import linalg as lax_linalg

    if hasattr(lax_linalg, "EighImplementation"):  # QR, which the TPU's lowering refuses: syevd's call, as the CPU's
        qr_w = on(lambda x: lax_linalg.eigh(x, implementation=lax_linalg.EighImplementation.QR)[1], spd)
        np.testing.assert_allclose(qr_w, np.linalg.eigvalsh(spd), **tol)


@check("tridiagonal_solve with perturb_singular, which jax lowers only for cpu, cuda and rocm, is registered for metalplug")
def _():
    import sys

    from jax.lax import linalg as lax_linalg

    if "jax_plugins.metalplug" not in sys.modules:
        print("     not this run: the library alone (PJRT_NAMES_AND_LIBRARY_PATHS) registers no lowerings")
        return
    n = 6
    # (T - lambda I) at T's smallest eigenvalue: singular; inverse iteration
    # (jax.scipy.linalg.eigh_tridiagonal) needs a finite solution along the
    # eigenvector.
    w, v = np.linalg.eigh(2 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1))
    dl = np.r_[0, -np.ones(n - 1)].astype(np.float32)
    du = np.r_[-np.ones(n - 1), 0].astype(np.float32)
    d = np.full(n, 2 - w[0], np.float32)
    b = np.ones((n, 1), np.float32)
    x = np.asarray(jax.jit(lambda *a: lax_linalg.tridiagonal_solve(*a, perturb_singular=True))(
        *(jax.device_put(a, dev) for a in (dl, d, du, b))))[:, 0]
    assert np.isfinite(x).all(), x
    cos = abs(x @ v[:, 0]) / np.linalg.norm(x)
    assert cos > 0.9999, cos
    # A regular system, pivoting (a zero diagonal), against numpy.
    d2 = np.zeros(n, np.float32)
    a = np.diag(d2) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)
    b2 = rng.normal(size=(n, 2)).astype(np.float32)
    x2 = np.asarray(jax.jit(lambda *a: lax_linalg.tridiagonal_solve(*a, perturb_singular=True))(
        *(jax.device_put(a, dev) for a in (dl, d2, du, b2))))
    np.testing.assert_allclose(x2, np.linalg.solve(a, b2), rtol=1e-5, atol=1e-5)


@check("eig, eigvals, roots, hessenberg, schur and qr with pivoting, which jax lowers only for cpu (LAPACK) and gpus, are registered for metalplug, against numpy")
def _():
    import sys

    import jax.numpy as jnp
    import jax.scipy.linalg as jsl

    if "jax_plugins.metalplug" not in sys.modules:
        print("     not this run: the library alone (PJRT_NAMES_AND_LIBRARY_PATHS) registers no lowerings")
        return
    on = lambda f, *xs: jax.device_get(jax.jit(f)(*(jax.device_put(x, dev) for x in xs)))
    tol = dict(rtol=2e-4, atol=2e-4)
    a = rng.normal(size=(6, 6)).astype(np.float32)
    w, v = on(jnp.linalg.eig, a)
    assert w.dtype == np.complex64 and v.dtype == np.complex64, (w.dtype, v.dtype)
    order = lambda z: np.sort_complex(np.round(z, 4))
    np.testing.assert_allclose(order(w), order(np.linalg.eigvals(a)), **tol)
    np.testing.assert_allclose(a @ v, v * w, **tol)
    np.testing.assert_allclose(np.linalg.norm(v, axis=0), np.ones(6), **tol)
    np.testing.assert_allclose(order(on(jnp.linalg.eigvals, a)), order(np.linalg.eigvals(a)), **tol)
    coeffs = np.array([1, -6, 11, -6, 2.5], np.float32)
    with jax.enable_x64(False):  # this file's x64 would make roots complex128, which the device has not
        roots = on(lambda c: jnp.roots(c, strip_zeros=False), coeffs)
    np.testing.assert_allclose(order(roots), order(np.roots(coeffs)), **tol)
    h, q = on(lambda x: jsl.hessenberg(x, calc_q=True), a)
    np.testing.assert_allclose(np.tril(h, -2), 0, atol=1e-6)
    np.testing.assert_allclose(q @ h @ q.T, a, **tol)
    t, z = on(jsl.schur, a)
    np.testing.assert_allclose(np.tril(t, -2), 0, atol=1e-6)
    np.testing.assert_allclose(z @ t @ z.T, a, **tol)
    np.testing.assert_allclose(z.T @ z, np.eye(6), **tol)
    tall = rng.normal(size=(7, 4)).astype(np.float32)
    q, r, p = on(lambda x: jsl.qr(x, pivoting=True, mode="economic"), tall)
    assert sorted(p) == list(range(4)), p
    np.testing.assert_allclose(q @ r, tall[:, p], **tol)
    assert np.all(np.abs(np.diag(r))[:-1] >= np.abs(np.diag(r))[1:]), np.diag(r)



@check("lu, svd and eigh through LAPACK's calls as jax's CPU lowers them: symbolic shapes (jax.export), half types through float32")
def _():
    import sys

    import jax.numpy as jnp
    from jax import export
    from jax.lax import linalg as lax_linalg

    if "jax_plugins.metalplug" not in sys.modules:
        print("     not this run: the library alone (PJRT_NAMES_AND_LIBRARY_PATHS) registers no lowerings")
        return
    tol = dict(rtol=2e-4, atol=2e-4)
    a = rng.normal(size=(2, 5, 4)).astype(np.float32)
    h = (a[:, :4] + np.swapaxes(a[:, :4], -1, -2)).astype(np.float32)
    put = lambda x: jax.device_put(x, dev)
    # jax's platform-independent lu and svd, and the TPU's eigh, compare
    # dimensions in Python: these take symbolic ones.
    for f, x, shapes in ((lax_linalg.lu, a, "b, m, n"), (lambda x: jnp.linalg.svd(x, compute_uv=False), a, "b, m, n"),
                         (jnp.linalg.eigh, h, "b, n, n")):
        exp = export.export(jax.jit(f), platforms=["metalplug"])(*export.symbolic_args_specs([x], shapes))
        for got, want in zip(jax.tree.leaves(exp.call(put(x))), jax.tree.leaves(jax.jit(f)(put(x)))):
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), **tol)
    lu, _, perm = (np.asarray(r) for r in jax.jit(lax_linalg.lu)(put(a)))
    l, u = np.tril(lu[..., :4], -1) + np.eye(5, 4), np.triu(lu[..., :4, :])
    np.testing.assert_allclose(l @ u, np.take_along_axis(a, perm[..., None], 1), **tol)
    np.testing.assert_allclose(jax.jit(lambda x: jnp.linalg.svd(x, compute_uv=False))(put(a)),
                               np.linalg.svd(a, compute_uv=False), **tol)
    # The CPU's LAPACK has no half types; the device computes them in
    # float32. jax 0.12's decompositions refuse them themselves.
    b = h.astype(ml_dtypes.bfloat16)
    try:
        jax.eval_shape(lax_linalg.eigh, b)
    except TypeError:
        print(f"     half types not this jax ({jax.__version__}): its decompositions take float32 and float64 only")
        return
    w, v = jax.jit(jnp.linalg.eigh)(put(b))
    assert w.dtype == ml_dtypes.bfloat16 and v.dtype == ml_dtypes.bfloat16, (w.dtype, v.dtype)
    np.testing.assert_allclose(np.asarray(w, np.float32), np.linalg.eigvalsh(b.astype(np.float32)), rtol=2e-2, atol=2e-2)
    ev = jax.jit(jnp.linalg.eigvals)(put(b))
    assert ev.dtype == np.complex64, ev.dtype
    np.testing.assert_allclose(np.sort(np.asarray(ev).real), np.sort(np.linalg.eigvalsh(b.astype(np.float32))), **tol)
    s16 = jax.jit(lambda x: jnp.linalg.svd(x, compute_uv=False))(put(a.astype(np.float16)))
    assert s16.dtype == np.float16, s16.dtype
    np.testing.assert_allclose(np.asarray(s16, np.float32), np.linalg.svd(a.astype(np.float16).astype(np.float32), compute_uv=False),
                               rtol=2e-3, atol=2e-3)

finish()

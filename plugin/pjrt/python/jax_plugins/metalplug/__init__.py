"""The metalplug PJRT plugin for JAX.

jax imports every module of the ``jax_plugins`` namespace package it finds
on ``sys.path`` and calls its ``initialize()``. Ours registers the platform
``metalplug`` backed by ``libmetalplug`` (one library serves TensorFlow and
JAX), at a priority below CPU's, so that CPU stays jax's default and
metalplug is used when asked for: ``JAX_PLATFORMS=metalplug,cpu``,
``jax.devices("metalplug")`` or ``jax.device_put(x, device)``.

It registers nothing, quietly, when no device would be offered (off macOS
the host reference driver is offered only with ``METALPLUG_HOST_DEVICE=1``)
or when the library cannot be found: jax must keep working without us.
This module imports nothing of jax until it registers, and is
self-contained: the installer copies it as it is.

Settings (environment variables):

=========================  =================================================
``METALPLUG_LIBRARY``      path of the library to load, instead of looking
``METALPLUG_DISABLE=1``    register nothing
``METALPLUG_HOST_DEVICE``  ``1``: use the host reference driver (the only
                           device off macOS); read by the library too
``METALPLUG_SKIP_VERSION_CHECK=1``  register even when the library was
                           built for another jaxlib release
=========================  =================================================

Installed from the universal wheel, metalplug holds one build of the library
per supported TensorFlow release and one for processes without TensorFlow,
under ``site-packages/metalplug/builds``; this module loads the one
TensorFlow's loader loaded, or would load, so that a process importing both
holds one Go runtime.

The library records the jaxlib it was built against; with a jaxlib of
another minor release running, this module declines with one line naming
both and registers nothing (jax aborts a process whose plugin cannot make
its client, so the check happens here, before jax loads the library).
"""

import logging
import os
import site
import sys

logger = logging.getLogger(__name__)

# The platform's name: the registration name (JAX_PLATFORMS,
# jax.devices(...)) and what the library reports as its platform, the same
# lowercase word, as lowering rules look platforms up by the latter.
PLATFORM = "metalplug"

# Below CPU's 0: with JAX_PLATFORMS unset, CPU stays the default backend.
PRIORITY = -1


def _library_name():
    return "libmetalplug.dylib" if sys.platform == "darwin" else "libmetalplug.so"


def _search_dirs():
    """Where the library may be when there are no builds (an install from
    the sdist or a per-release wheel): next to this file (a JAX-only
    install), then where the TensorFlow plugin installs it in each
    site-packages directory."""
    yield os.path.dirname(os.path.abspath(__file__))
    dirs = []
    try:
        dirs.extend(site.getsitepackages())
    except AttributeError:  # some virtualenvs' site module lacks it
        pass
    try:
        dirs.append(site.getusersitepackages())
    except AttributeError:
        pass
    dirs.extend(p for p in sys.path if p)
    seen = set()
    for d in dirs:
        if d in seen:
            continue
        seen.add(d)
        yield os.path.join(d, "tensorflow-plugins")
        yield os.path.join(d, "metalplug")


# The distributions that install the tensorflow package.
_TENSORFLOW_DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "tensorflow-macos", "tensorflow-intel", "tf-nightly", "tf-nightly-cpu")


def _builds_dir():
    """site-packages/metalplug/builds when this module came with the
    universal wheel (one build per TensorFlow release, and one for
    processes without TensorFlow), else None."""
    site_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    d = os.path.join(site_dir, "metalplug", "builds")
    # The JAX-only build is in every universal wheel; an empty directory an
    # uninstall left behind is not a wheel.
    return d if os.path.isfile(os.path.join(d, "jax", _library_name())) else None


def _installed_tensorflow():
    """The version of the installed TensorFlow, or None."""
    from importlib.metadata import PackageNotFoundError, version

    for dist in _TENSORFLOW_DISTRIBUTIONS:
        try:
            return version(dist)
        except PackageNotFoundError:
            continue
    return None


def _loaded_by_tensorflow(builds):
    """The build TensorFlow's loader loaded, when TensorFlow was imported
    first; None otherwise (or when the loader declined)."""
    if "tensorflow" not in sys.modules:
        return None
    name = "libmetalplug-loader.dylib" if sys.platform == "darwin" else "libmetalplug-loader.so"
    loader = os.path.join(os.path.dirname(os.path.dirname(builds)), "tensorflow-plugins", name)
    if not os.path.isfile(loader):
        return None
    import ctypes

    try:
        fn = ctypes.CDLL(loader).metalplug_loader_build  # TensorFlow loaded it: the same handle
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.c_char_p
    path = fn()
    return path.decode() if path else None


def _choose_build(builds):
    """The build for this process: the one TensorFlow's loader loaded or
    would load (the build for the installed TensorFlow's minor release, which
    holds the JAX frontend too), so that TensorFlow and jax share one Go
    runtime whichever is imported first; the JAX-only build when no
    TensorFlow is installed or none of the builds is for it."""
    loaded = _loaded_by_tensorflow(builds)
    if loaded:
        return loaded
    name = _library_name()
    tf = _installed_tensorflow()
    if tf:
        path = os.path.join(builds, "tf-" + _minor(tf), name)
        if os.path.isfile(path):
            return path
        if os.environ.get("METALPLUG_SKIP_VERSION_CHECK") == "1":
            # As the loader does: the newest TensorFlow build.
            tfs = [d for d in os.listdir(builds) if d.startswith("tf-") and os.path.isfile(os.path.join(builds, d, name))]
            if tfs:
                newest = max(tfs, key=lambda d: tuple(int(p) for p in d[3:].split(".") if p.isdigit()))
                return os.path.join(builds, newest, name)
    path = os.path.join(builds, "jax", name)
    return path if os.path.isfile(path) else None


def library_path():
    """The library to load, or None."""
    override = os.environ.get("METALPLUG_LIBRARY")
    if override:
        if os.path.isfile(override):
            return override
        logger.warning("METALPLUG_LIBRARY=%s is not a file; metalplug is not registered", override)
        return None
    builds = _builds_dir()
    if builds:
        return _choose_build(builds)
    name = _library_name()
    for d in _search_dirs():
        path = os.path.join(d, name)
        if os.path.isfile(path):
            return path
    return None


def _device_offered():
    if os.environ.get("METALPLUG_DISABLE") == "1":
        return False
    if sys.platform == "darwin":
        return True
    return os.environ.get("METALPLUG_HOST_DEVICE") == "1"


def _minor(version):
    return ".".join(version.split(".")[:2])


def _built_against(path):
    """The jaxlib release the library at path was built against, or "" when
    it does not say."""
    import ctypes

    try:
        fn = ctypes.CDLL(path).metalplug_jaxlib_built_against
    except (OSError, AttributeError):
        return ""
    fn.restype = ctypes.c_char_p
    v = fn()
    return v.decode() if v else ""


def _version_mismatch(path):
    """One line saying why the library does not fit the running jaxlib, or
    None when it does."""
    if os.environ.get("METALPLUG_SKIP_VERSION_CHECK") == "1":
        return None
    try:
        from importlib.metadata import version

        running = version("jaxlib")
    except Exception:  # no metadata: nothing to compare
        return None
    built = _built_against(path)
    if built and _minor(built) != _minor(running):
        return (
            "metalplug: %s was built for jaxlib %s but jaxlib %s is running: not registering "
            "(reinstall metalplug so it builds against this jaxlib, or set METALPLUG_SKIP_VERSION_CHECK=1 "
            "to load it anyway)" % (path, built, running)
        )
    return None


def initialize():
    if not _device_offered():
        logger.debug(
            "metalplug: no device here (off macOS, set METALPLUG_HOST_DEVICE=1 for the host "
            "reference driver); not registering"
        )
        return
    path = library_path()
    if path is None:
        logger.debug("metalplug: %s not found; not registering", _library_name())
        return
    why = _version_mismatch(path)
    if why:
        logger.warning(why)
        return
    try:
        from jax._src import xla_bridge
    except ImportError as e:  # a jax without the plugin interface
        logger.debug("metalplug: this jax cannot register plugins (%s)", e)
        return
    xla_bridge.register_plugin(PLATFORM, priority=PRIORITY, library_path=path)
    _register_lowerings()
    _register_host_callbacks(path)


def _register_lowerings():
    """Lowerings jax keeps for a hard-coded list of platforms, registered for
    ours too, so that jax does not refuse the primitive before the library
    sees a program:

    - tridiagonal_solve with perturb_singular (inverse iteration in
      jax.scipy.linalg.eigh_tridiagonal): jax's platform-independent lowering
      has no perturbation, so ours is Gaussian elimination with partial
      pivoting, as LAPACK's gtsv, whose pivots are kept off zero.

    - eig, hessenberg, tridiagonal, geqp3 (qr with pivoting), schur, lu,
      svd and eigh: jax's own CPU lowerings, LAPACK's typed FFI custom calls
      (lapack_sgeev_ffi, lapack_sgetrf_ffi, lapack_sgesdd_ffi,
      lapack_ssyevd_ffi and so on, column-major layouts), which the library
      translates into its own decompositions (gonum's LAPACK in float64 on
      the host); so jnp.linalg.eig and eigvals, jnp.roots,
      jax.scipy.linalg.hessenberg and schur, qr with pivoting, lu (solve,
      inv, det), svd and eigh run on the device. Unlike jax's
      platform-independent lu and svd and its TPU eigh, which compare
      dimensions in Python, these take symbolic dimensions (jax.export's
      shape polymorphism). See _register_linalg for what stays on jax's
      other lowerings.

    And donation: jax sets up donated arguments (jit's donate_argnums) only
    for the platforms of its list _platforms_with_donation, warning on any
    other; the library consumes donated buffers as XLA's runtimes do.

    A jax whose internals differ gets none of these (each is a debug line),
    and what jax does there is unchanged.
    """
    try:
        from jax._src.interpreters import mlir

        if PLATFORM not in mlir._platforms_with_donation:
            mlir._platforms_with_donation.append(PLATFORM)
    except Exception as e:  # noqa: BLE001
        logger.debug("metalplug: jax does not set up donation for metalplug (%s)", e)
    try:
        from jax._src.interpreters import mlir
        from jax._src.lax import linalg

        mlir.register_lowering(linalg.tridiagonal_solve_p, mlir.lower_fun(_tridiagonal_solve, multiple_results=False),
                               platform=PLATFORM)
    except Exception as e:  # noqa: BLE001
        logger.debug("metalplug: tridiagonal_solve keeps jax's own lowerings (%s)", e)
    _register_linalg()


def _register_linalg():
    """jax's CPU lowerings of the decompositions, for metalplug, each in a
    wrapper where the CPU's rule refuses what the device computes:

    - half types (float16, bfloat16; the CPU's LAPACK has none): eig, lu,
      svd and eigh compute in float32 and round the results back, as XLA's
      CPU does for half types elsewhere (eig's results are complex64
      already). jax 0.11's primitives take half types; 0.12's refuse them
      before any lowering.
    - eigh: the QDWH algorithm and a subset of the eigenvalues
      (subset_by_index) take jax's TPU lowering, which needs no TPU (QDWH
      spectral divide and conquer in jax, down to custom_call "Eigh"); QR
      and Jacobi, which the CPU's rule refuses, are syevd's answer, which is
      what the device computes for either.
    - lu and svd of complex matrices, and svd's POLAR algorithm and subsets,
      keep jax's platform-independent lowerings (the blocked lu in jax; the
      TPU's QDWH svd), as the library decomposes complex64 matrices for
      eig, eigh, tridiagonal, cholesky and qr only; Jacobi svd, which the
      CPU's rule refuses, is gesdd's answer.
    """
    try:
        import functools

        import numpy as np
        from jax._src import core, dtypes
        from jax._src.interpreters import mlir
        from jax._src.lax import linalg
    except Exception as e:  # noqa: BLE001 - jax's internals move between releases
        logger.debug("metalplug: the decompositions keep jax's own lowerings (%s)", e)
        return

    def cpu(name):
        """jax's CPU and GPUs' rule name, for the CPU."""
        return functools.partial(getattr(linalg, name), target_name_prefix="cpu")

    def complex_operand(ctx):
        return dtypes.issubdtype(ctx.avals_in[0].dtype, np.complexfloating)

    def through_float32(prim, rule):
        """rule, but a half-type operand is widened to float32, the
        primitive bound on that, and each result rounded back to its type."""
        def lowering(ctx, operand, **params):
            dtype = ctx.avals_in[0].dtype
            if not (dtypes.issubdtype(dtype, np.floating) and np.dtype(dtype).itemsize < 4):
                return rule(ctx, operand, **params)

            def wide(x):
                outs = prim.bind(x.astype(np.float32), **params)
                return [o.astype(a.dtype) for o, a in zip(outs, ctx.avals_out)]
            return mlir.lower_fun(wide, multiple_results=True)(ctx, operand)
        return lowering

    def lu_rule():
        on_cpu = cpu("_lu_cpu_gpu_lowering")
        generic = mlir.lower_fun(linalg._lu_python, multiple_results=True)

        def lowering(ctx, operand):
            return (generic if complex_operand(ctx) else on_cpu)(ctx, operand)
        return lowering

    def svd_rule():
        from jax._src.tpu.linalg import svd as tpu_svd

        on_cpu = cpu("_svd_cpu_gpu_lowering")
        algorithms = linalg.SvdAlgorithm

        def lowering(ctx, operand, *, full_matrices, compute_uv, subset_by_index, algorithm=None):
            m, n = ctx.avals_in[0].shape[-2:]
            whole = subset_by_index is None or subset_by_index == (0, core.min_dim(m, n))
            params = dict(full_matrices=full_matrices, compute_uv=compute_uv, subset_by_index=subset_by_index)
            if complex_operand(ctx) or not whole or algorithm == algorithms.POLAR:
                return tpu_svd._svd_tpu_lowering_rule(ctx, operand, algorithm=algorithm, **params)
            if algorithm == algorithms.JACOBI:
                algorithm = None
            return on_cpu(ctx, operand, algorithm=algorithm, **params)
        return lowering

    def eigh_rule():
        from jax._src.tpu.linalg import eigh as tpu_eigh

        on_cpu = cpu("_eigh_cpu_gpu_lowering")
        algorithms = linalg.EighImplementation

        def lowering(ctx, operand, *, lower, sort_eigenvalues, subset_by_index, algorithm=None):
            n = ctx.avals_in[0].shape[-1]
            whole = subset_by_index is None or subset_by_index == (0, n)
            if algorithm == algorithms.QDWH or not whole:
                return tpu_eigh._eigh_tpu_lowering(ctx, operand, lower=lower, sort_eigenvalues=sort_eigenvalues,
                                                   subset_by_index=subset_by_index, algorithm=algorithms.QDWH)
            return on_cpu(ctx, operand, lower=lower, sort_eigenvalues=sort_eigenvalues, subset_by_index=None,
                          algorithm=None)
        return lowering

    rules = (
        ("eig_p", lambda: linalg._eig_cpu_lowering, True),
        ("hessenberg_p", lambda: linalg._hessenberg_cpu_lowering, False),
        ("tridiagonal_p", lambda: cpu("_tridiagonal_cpu_gpu_lowering"), False),
        ("geqp3_p", lambda: cpu("_geqp3_cpu_gpu_lowering"), False),
        ("schur_p", lambda: linalg._schur_cpu_lowering, False),
        ("lu_p", lu_rule, True),
        ("svd_p", svd_rule, True),
        ("eigh_p", eigh_rule, True),
    )
    for name, make, half in rules:
        try:
            prim = getattr(linalg, name)
            rule = make()
            if half:
                rule = through_float32(prim, rule)
            mlir.register_lowering(prim, rule, platform=PLATFORM)
        except Exception as e:  # noqa: BLE001
            logger.debug("metalplug: %s keeps jax's own lowerings (%s)", name, e)


def _tridiagonal_solve(dl, d, du, b, *, perturb_singular):
    """Solves the tridiagonal systems (dl, d, du) x = b, batched over the
    leading dims as jax's tridiagonal_solve_p takes them (dl[..., 0] and
    du[..., -1] are unused), by Gaussian elimination with partial pivoting
    (LAPACK's gtsv), each row against the next. With perturb_singular a pivot
    of magnitude at most eps times the matrix's largest entry is replaced by
    that much, with its sign, so that a singular system (inverse iteration at
    an eigenvalue) gives a large finite solution instead of inf or NaN."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    def solve(dl, d, du, b):
        n = d.shape[0]
        dtype = b.dtype
        real = jnp.finfo(dtype).dtype if jnp.issubdtype(dtype, jnp.complexfloating) else dtype
        scale = jnp.maximum(jnp.max(jnp.abs(jnp.stack([dl, d, du]))), jnp.finfo(real).tiny)
        tiny = (jnp.finfo(real).eps * scale).astype(real)

        def keep_off_zero(p):
            if not perturb_singular:
                return p
            mag = jnp.abs(p)
            unit = jnp.where(mag == 0, jnp.ones_like(p), p / jnp.where(mag == 0, 1, mag).astype(dtype))
            return jnp.where(mag <= tiny, unit * tiny.astype(dtype), p)

        def eliminate(carry, nxt):
            dc, uc, bc = carry
            l, dn, un, bn = nxt
            dc = jnp.where(jnp.maximum(jnp.abs(dc), jnp.abs(l)) <= tiny, keep_off_zero(dc), dc)
            swap = jnp.abs(dc) < jnp.abs(l)
            # Not swapped: row i stays, row i+1 loses l * row i / dc.
            f = l / jnp.where(swap, 1, dc)
            keep_row = (dc, uc, jnp.zeros_like(uc), bc)
            keep_next = (dn - f * uc, un, bn - f * bc)
            # Swapped: row i+1 becomes row i, and loses dc * it / l from the old row i.
            g = dc / jnp.where(swap, l, 1)
            swap_row = (l, dn, un, bn)
            swap_next = (uc - g * dn, -g * un, bc - g * bn)
            row = tuple(jnp.where(swap, s, k) for s, k in zip(swap_row, keep_row))
            nxt_row = tuple(jnp.where(swap, s, k) for s, k in zip(swap_next, keep_next))
            return nxt_row, row

        last, rows = lax.scan(eliminate, (d[0], du[0], b[0]), (dl[1:], d[1:], du[1:], b[1:]))
        piv, u1, u2, rhs = rows
        dlast = keep_off_zero(last[0])
        xlast = last[2] / dlast
        if n == 1:
            return xlast[None]

        def substitute(carry, row):
            x1, x2 = carry
            p, a1, a2, r = row
            x = (r - a1 * x1 - a2 * x2) / keep_off_zero(p)
            return (x, x1), x

        _, xs = lax.scan(substitute, (xlast, jnp.zeros_like(xlast)), (piv, u1[:, None], u2[:, None], rhs), reverse=True)
        return jnp.concatenate([xs, xlast[None]], axis=0)

    for _ in range(dl.ndim - 1):
        solve = jax.vmap(solve)
    return solve(dl, d, du, b)


# ------------------------------------------------------------ host callbacks

# What jax's Python callbacks lower to on metalplug: a custom_call of this
# target whose backend_config is the callback's id in _callbacks. The
# library runs it through the entry point _register_host_callbacks hands
# it (metalplug_set_host_callback), with the operands' bytes.
HOST_CALLBACK_TARGET = "metalplug_host_callback"

_callbacks = {}  # id -> (callable, operand avals, result avals)
_next_id = [0]
_entry = []  # the ctypes entry point, kept alive while the library may call it


def _register_host_callbacks(path):
    """jax.debug.print, jax.debug.callback, pure_callback, io_callback and
    checkify's checks on the device.

    jax lowers each of them through jax._src.callback.emit_python_callback,
    which refuses any platform but cpu, cuda, rocm and tpu; and it
    registers the lowerings of debug_callback, debug_print and checkify's
    check for those platforms only. This wraps emit_python_callback so
    that a program lowered for metalplug alone gets a custom_call the
    library runs, and registers jax's own lowerings of those three
    primitives for metalplug. Every other platform's lowering is jax's,
    unchanged.

    The library calls back into Python on the thread that runs the
    program (ctypes takes the GIL there). A callback's table entry lives
    as long as the process, as a compiled program may run at any time.
    """
    try:
        import ctypes

        from jax._src import callback as jcb
        from jax._src import checkify, debugging
        from jax._src.interpreters import mlir
    except Exception as e:  # noqa: BLE001 - jax's internals move between releases
        logger.debug("metalplug: jax's callbacks stay off the device (%s)", e)
        return
    entry_type = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_uint64, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p),
                                  ctypes.POINTER(ctypes.c_int64), ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p),
                                  ctypes.POINTER(ctypes.c_int64), ctypes.c_void_p, ctypes.c_int64)
    try:
        setter = ctypes.CDLL(path).metalplug_set_host_callback
    except (OSError, AttributeError) as e:
        logger.debug("metalplug: %s takes no host callbacks (%s)", path, e)
        return
    entry = entry_type(_run_host_callback)
    setter.argtypes = [ctypes.c_void_p]
    setter.restype = ctypes.c_int32
    if setter(ctypes.cast(entry, ctypes.c_void_p)) != 1:
        logger.warning("metalplug: the library refused the host callbacks' entry point; "
                       "jax.debug.print and callbacks will fail on the device")
        return
    _entry.append(entry)

    original = jcb.emit_python_callback

    def emit_python_callback(ctx, callback, token, operands, operand_avals, result_avals, **kwargs):
        if tuple(ctx.module_context.platforms) != (PLATFORM,):
            return original(ctx, callback, token, operands, operand_avals, result_avals, **kwargs)
        return _emit_host_callback(ctx, callback, token, operands, operand_avals, result_avals, **kwargs)

    if not getattr(original, "_metalplug", False):
        emit_python_callback._metalplug = True
        jcb.emit_python_callback = emit_python_callback
    for module, prim, rule in ((debugging, "debug_callback_p", "debug_callback_lowering"),
                               (debugging, "debug_print_p", "debug_print_lowering_rule"),
                               (checkify, "check_p", "check_lowering_rule")):
        prim = getattr(module, prim, None)
        if prim is None or not hasattr(module, rule):
            logger.debug("metalplug: jax has no %s to register for metalplug", rule)
            continue
        mlir.register_lowering(prim, getattr(module, rule), platform=PLATFORM, cacheable=False)


def _emit_host_callback(ctx, callback, token, operands, operand_avals, result_avals, *, has_side_effect,
                        returns_token=True, partitioned=False, sharding=None):
    """emit_python_callback for a program on metalplug: the same checks of
    the callback's results as jax's, the same token threading; on one
    device a sharding or partitioning says nothing."""
    del returns_token, partitioned, sharding
    import numpy as np
    from jax._src import dtypes
    from jax._src.interpreters import mlir

    result_avals = list(result_avals)

    def checked(*args):
        out_vals = callback(*args)
        if len(out_vals) != len(result_avals):
            raise RuntimeError("Mismatched number of outputs from callback. Expected: {}, Actual: {}".format(
                len(result_avals), len(out_vals)))
        out_vals = tuple(dtypes.canonicalize_value(np.asarray(a)) for a in out_vals)
        for i, (out_val, out_aval) in enumerate(zip(out_vals, result_avals)):
            if out_val.shape != out_aval.shape:
                raise RuntimeError(f"Incorrect output shape for return value #{i}: "
                                   f"Expected: {out_aval.shape}, Actual: {out_val.shape}")
            if out_val.dtype != out_aval.dtype:
                raise RuntimeError(f"Incorrect output dtype for return value #{i}: "
                                   f"Expected: {out_aval.dtype}, Actual: {out_val.dtype}")
        return out_vals

    _next_id[0] += 1
    cid = _next_id[0]
    _callbacks[cid] = (checked, list(operand_avals), result_avals)
    types = [mlir.aval_to_ir_type(ctx.module_context, a) for a in result_avals]
    args = list(operands)
    if token is not None:
        args = [token, *args]
        types = [mlir.token_type(), *types]
    op = mlir.custom_call(HOST_CALLBACK_TARGET, result_types=types, operands=args, backend_config=str(cid),
                          has_side_effect=has_side_effect)
    results = list(op.results)
    if token is not None:
        token, *results = results
    return results, token, None


def _run_host_callback(cid, nargs, args, arg_sizes, nresults, results, result_sizes, err, errlen):
    """The library's entry point: runs callback cid on the operands' bytes
    and writes its results' bytes; on any failure writes what failed into
    err and returns 1, so that the execution fails with it."""
    import ctypes

    try:
        import numpy as np

        fn, in_avals, out_avals = _callbacks[cid]
        if nargs != len(in_avals) or nresults != len(out_avals):
            raise RuntimeError("metalplug: callback %d takes %d operands and gives %d results, the program passes %d and %d"
                               % (cid, len(in_avals), len(out_avals), nargs, nresults))
        vals = []
        for i, aval in enumerate(in_avals):
            dt = np.dtype(aval.dtype)
            n = int(np.prod(aval.shape, dtype=np.int64)) * dt.itemsize
            if arg_sizes[i] != n:
                raise RuntimeError("metalplug: callback %d's operand %d is %d bytes, not the %d of %s"
                                   % (cid, i, arg_sizes[i], n, aval.str_short()))
            raw = ctypes.string_at(args[i], n) if n else b""
            vals.append(np.frombuffer(raw, dtype=dt).reshape(aval.shape).copy())
        outs = fn(*vals)
        for i, out in enumerate(outs):
            a = np.ascontiguousarray(out)
            if a.nbytes != result_sizes[i]:
                raise RuntimeError("metalplug: callback %d's result %d is %d bytes, the program holds %d"
                                   % (cid, i, a.nbytes, result_sizes[i]))
            if a.nbytes:
                ctypes.memmove(results[i], a.ctypes.data, a.nbytes)
        return 0
    except BaseException as e:  # noqa: BLE001 - nothing may escape into the library
        import traceback

        text = "".join(traceback.format_exception_only(type(e), e)).strip()
        tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
        msg = ("%s\n%s" % (text, tb)).encode("utf-8", "replace")[: max(errlen - 1, 0)]
        ctypes.memmove(err, msg, len(msg))
        return 1

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


def _register_lowerings():
    """Lowerings jax keeps for a hard-coded list of platforms, registered for
    ours too, so that jax does not refuse the primitive before the library
    sees a program:

    - eigh: jax's own TPU lowering, which needs no TPU: QDWH spectral
      divide and conquer in jax, down to custom_call "Eigh" (a Jacobi
      eigendecomposition) for matrices of 256 or fewer rows, which the
      library computes.
    - tridiagonal_solve with perturb_singular (inverse iteration in
      jax.scipy.linalg.eigh_tridiagonal): jax's platform-independent lowering
      has no perturbation, so ours is Gaussian elimination with partial
      pivoting, as LAPACK's gtsv, whose pivots are kept off zero.

    - eig, hessenberg, tridiagonal, geqp3 (qr with pivoting) and schur:
      jax's own CPU lowerings, LAPACK's typed FFI custom calls
      (lapack_sgeev_ffi and so on, column-major layouts), which the library
      translates into its own decompositions (gonum's LAPACK in float64 on
      the host); so jnp.linalg.eig and eigvals, jnp.roots,
      jax.scipy.linalg.hessenberg and schur, and qr with pivoting run on the
      device.

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
        from jax._src.tpu.linalg import eigh as tpu_eigh

        def eigh_lowering(ctx, operand, *, algorithm=None, **params):
            # The TPU's lowering refuses the QR algorithm; ours computes
            # what Eigh asks for by Jacobi whatever the size, so QR maps to
            # it.
            if algorithm == linalg.EighImplementation.QR:
                algorithm = linalg.EighImplementation.JACOBI
            return tpu_eigh._eigh_tpu_lowering(ctx, operand, algorithm=algorithm, **params)

        mlir.register_lowering(linalg.eigh_p, eigh_lowering, platform=PLATFORM)
    except Exception as e:  # noqa: BLE001 - jax's internals move between releases
        logger.debug("metalplug: eigh keeps jax's own lowerings (%s)", e)
    try:
        from jax._src.interpreters import mlir
        from jax._src.lax import linalg

        mlir.register_lowering(linalg.tridiagonal_solve_p, mlir.lower_fun(_tridiagonal_solve, multiple_results=False),
                               platform=PLATFORM)
    except Exception as e:  # noqa: BLE001
        logger.debug("metalplug: tridiagonal_solve keeps jax's own lowerings (%s)", e)
    for prim, rule, cpu_gpu in (("eig_p", "_eig_cpu_lowering", False), ("hessenberg_p", "_hessenberg_cpu_lowering", False),
                                ("tridiagonal_p", "_tridiagonal_cpu_gpu_lowering", True),
                                ("geqp3_p", "_geqp3_cpu_gpu_lowering", True), ("schur_p", "_schur_cpu_lowering", False)):
        try:
            import functools

            from jax._src.interpreters import mlir
            from jax._src.lax import linalg

            lowering = getattr(linalg, rule)
            if cpu_gpu:  # the CPU's and GPUs' rule, told which by its target prefix
                lowering = functools.partial(lowering, target_name_prefix="cpu")
            mlir.register_lowering(getattr(linalg, prim), lowering, platform=PLATFORM)
        except Exception as e:  # noqa: BLE001
            logger.debug("metalplug: %s keeps jax's own lowerings (%s)", prim, e)


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

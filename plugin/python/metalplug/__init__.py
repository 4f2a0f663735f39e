"""What ran where: the figures of the metalplug library in this process.

One library serves TensorFlow and jax (TensorFlow loads it from
``site-packages/tensorflow-plugins``, directly or through the universal
wheel's loader, which loads a build under ``site-packages/metalplug/builds``;
jax through the ``jax_plugins.metalplug`` module), and it counts, per
frontend, what decides speed on a Mac. ``stats()`` reads those counts from
the copy already loaded, through ctypes; it never loads a library itself::

    import metalplug

    with metalplug.measure() as m:
        model.fit(x, y, epochs=1)
    print(m.delta["frontends"]["tensorflow"])

    before = metalplug.stats()
    step(params, batch)
    print(metalplug.stats_delta(before, metalplug.stats())["frontends"]["jax"])

``stats()`` returns ``{"driver": ..., "frontends": {name: figures}}``.
``driver`` is what backs the device: ``"metal"``, ``"metal-model"`` (the
Metal driver's lowering on the model of MPSGraph, on the CPU), ``"host"``
(the host reference driver), or ``""`` while no frontend has asked for a
device. The frontends are ``"tensorflow"``, ``"jax"`` and ``"other"`` (work
neither attributed), each with the counts since the process started:

=====================  ==================================================
``executions``         programs run
``compiles``           programs compiled for the device (0 after warm-up)
``device_executions``  runs on the device (one MPSGraph dispatch each on
                       Metal)
``host_segments``      parts of programs run on the host (the CPU)
``host_reasons``       ``host_segments`` by reason, ``{"op: why": count}``
``waits``              times the host waited for the device
``output_bytes``       bytes of program outputs allocated on the device
                       (TensorFlow: its kernels' outputs; a cluster keeps
                       its intermediates inside its program)
=====================  ==================================================

``process`` is what the library's own code has cost the process so far,
the per-kernel overhead a Mac pays as well:

=====================  ==================================================
``go_allocations``     Go heap allocations
``cgo_calls``          calls from the library's Go code into C
``handoffs``           tasks handed to a stream's thread (each a wake-up)
``inline``             tasks run on the caller's thread, the stream idle
``driver_waits``       times a caller blocked for a stream or the device
=====================  ==================================================

``memory`` is the driver's, what a long run watches for growth:

=======================  ================================================
``used_bytes``           device memory in use (on Metal, the GPU's)
``total_bytes``          the device memory the driver offers
``cached_executables``   compiled programs the driver keeps (an LRU of a
                         fixed capacity)
=======================  ================================================

The fields are read one after another, so a snapshot taken while work runs
may be a few counts apart between fields.

Pure Python, standard library only: the installer and the wheels copy this
file as it is.
"""

import contextlib
import ctypes
import json
import os
import sys

__all__ = ["stats", "stats_delta", "measure", "Measurement"]

# The first buffer stats() offers the library; a larger report is read again
# with a buffer of its size.
_CAPACITY = 16384

_NOT_LOADED = (
    "metalplug: no metalplug library is loaded in this process: import tensorflow or jax and use the device "
    "first (metalplug.stats() reads the figures of the library a framework loaded; it loads none itself)"
)

_read = None  # the loaded library's metalplug_stats, once found


def _mapped_libraries():
    """Paths of the libmetalplug* images loaded in this process (the loader,
    builds, a library next to the jax_plugins module), each once: from
    /proc/self/maps on Linux, dyld's image list on macOS."""
    paths = []
    if sys.platform == "darwin":
        try:
            dyld = ctypes.CDLL("/usr/lib/libSystem.B.dylib")
        except OSError:
            dyld = ctypes.CDLL(None)
        dyld._dyld_image_count.restype = ctypes.c_uint32
        dyld._dyld_get_image_name.argtypes = [ctypes.c_uint32]
        dyld._dyld_get_image_name.restype = ctypes.c_char_p
        for i in range(dyld._dyld_image_count()):
            name = dyld._dyld_get_image_name(i)  # NULL when an image went meanwhile
            if name:
                paths.append(os.fsdecode(name))
    else:
        try:
            with open("/proc/self/maps", "rb") as f:
                maps = f.read().decode("utf-8", "surrogateescape")
        except OSError:
            return []
        for line in maps.splitlines():
            fields = line.split(None, 5)  # address perms offset dev inode path
            if len(fields) == 6 and fields[5].startswith("/") and not fields[5].endswith(" (deleted)"):
                paths.append(fields[5])
    seen = []
    for p in paths:
        if os.path.basename(p).startswith("libmetalplug") and p not in seen:
            seen.append(p)
    return seen


def _find():
    """The metalplug_stats of the first loaded libmetalplug* that exports it.

    RTLD_NOLOAD makes dlopen hand back the image already loaded, or fail:
    a second copy of the library would start a second Go runtime."""
    mode = getattr(os, "RTLD_NOLOAD", 0) | getattr(os, "RTLD_NOW", 2) | ctypes.RTLD_LOCAL
    loader, without = False, []
    for path in _mapped_libraries():
        if os.path.basename(path).startswith("libmetalplug-loader"):
            loader = True  # the universal wheel's loader: plain C, it only loads a build
            continue
        try:
            fn = ctypes.CDLL(path, mode=mode).metalplug_stats
        except OSError:  # mapped, but not as a loaded library
            continue
        except AttributeError:  # a build from before metalplug_stats
            without.append(path)
            continue
        fn.argtypes = [ctypes.POINTER(ctypes.c_char), ctypes.c_int64]
        fn.restype = ctypes.c_int64
        return path, fn
    if without:
        raise RuntimeError(
            "metalplug: %s, loaded in this process, has no metalplug_stats (it was built before the library had it): "
            "reinstall metalplug" % " and ".join(without)
        )
    if loader:
        raise RuntimeError(_NOT_LOADED + "; TensorFlow's metalplug loader loaded no build (its line on stderr says why)")
    raise RuntimeError(_NOT_LOADED)


def stats():
    """The figures of the metalplug library loaded in this process, as a
    dict (see the module's documentation).

    Raises RuntimeError when no metalplug library is loaded yet (import
    tensorflow or jax and use the device first), or when the library fails
    to report (it says why on stderr)."""
    global _read
    if _read is None:
        _read = _find()  # a Go library is never unloaded: found once is found for good
    path, fn = _read
    capacity = _CAPACITY
    for _ in range(8):  # the report grows only with new reasons: a retry or two at most
        buf = ctypes.create_string_buffer(capacity)
        n = fn(buf, capacity)
        if n < 0:
            raise RuntimeError("metalplug: metalplug_stats failed in %s (the library said why on stderr)" % path)
        if n <= capacity:
            return json.loads(buf.raw[:n].decode("utf-8"))
        capacity = n + 4096  # room for what a concurrent step adds meanwhile
    raise RuntimeError("metalplug: the report of %s kept outgrowing its buffer" % path)


def stats_delta(before, after):
    """What happened between two snapshots of stats(): after minus before,
    per frontend and per field, host_reasons per reason (reasons whose count
    did not change are left out), and the process's figures. The driver is
    after's."""
    frontends = {}
    for name, now in after.get("frontends", {}).items():
        then = before.get("frontends", {}).get(name, {})
        d = {}
        for field, value in now.items():
            if isinstance(value, dict):  # host_reasons
                old = then.get(field) or {}
                diff = ((r, value.get(r, 0) - old.get(r, 0)) for r in dict.fromkeys([*value, *old]))
                d[field] = {r: n for r, n in diff if n}
            elif isinstance(value, int):
                d[field] = value - then.get(field, 0)
            else:
                d[field] = value
        frontends[name] = d
    then = before.get("process", {})
    process = {k: v - then.get(k, 0) for k, v in after.get("process", {}).items()}
    # memory is a level, not a count: after's, as it is.
    return {"driver": after.get("driver", ""), "frontends": frontends, "process": process, "memory": after.get("memory", {})}


class Measurement:
    """The figures of a ``with measure() as m:`` block: ``m.before`` when it
    began; ``m.after`` and ``m.delta`` (``stats_delta(before, after)``) once
    it has ended, None until then."""

    def __init__(self, before):
        self.before = before
        self.after = None
        self.delta = None

    def __repr__(self):
        return "Measurement(delta=%r)" % (self.delta,)


@contextlib.contextmanager
def measure():
    """A context manager yielding a Measurement, whose delta says what ran
    where during the block (also when the block raised)."""
    m = Measurement(stats())
    try:
        yield m
    finally:
        m.after = stats()
        m.delta = stats_delta(m.before, m.after)

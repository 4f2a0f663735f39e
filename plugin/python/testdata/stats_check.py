"""Checks the metalplug module against fake libraries (python_test.go).

argv: the site directory holding metalplug/, the fake library exporting
metalplug_stats (with fake_set, fake_calls, fake_last_capacity), a
libmetalplug* without that export, a copy of the fake that is mapped but
never loaded, and a libmetalplug-loader* (without the export). Prints OK when every check passed."""

import ast
import ctypes
import json
import mmap
import sys

site, fake_path, old_path, mapped_path, loader_path = sys.argv[1:6]
sys.path.insert(0, site)

import metalplug  # noqa: E402

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def raises(fn, *words):
    """fn() raises RuntimeError whose message holds every word; the message."""
    try:
        fn()
    except RuntimeError as e:
        for w in words:
            check(w in str(e), "the error %r does not say %r" % (str(e), w))
        return str(e)
    except Exception as e:  # noqa: BLE001
        failures.append("%s raised %r, not RuntimeError" % (fn.__name__, e))
        return ""
    failures.append("%s did not raise" % fn.__name__)
    return ""


check(metalplug.__file__.startswith(site), "imported metalplug from %s" % metalplug.__file__)
with open(metalplug.__file__, encoding="utf-8") as f:
    ast.parse(f.read(), feature_version=(3, 9))  # the module promises Python 3.9

# Nothing loaded: say so, and what to do.
raises(metalplug.stats, "no metalplug library is loaded", "import tensorflow or jax and use the device first")

# The universal wheel's loader alone (it declined, and loaded no build): nothing to read, and the loader says why.
ctypes.CDLL(loader_path)
raises(metalplug.stats, "no metalplug library is loaded", "import tensorflow or jax", "loader loaded no build")

# A build without the export (from before it) is passed over, and named when it is the only one.
ctypes.CDLL(old_path)
raises(metalplug.stats, old_path, "no metalplug_stats", "reinstall")

# A file mapped but not loaded as a library (on Linux it is in /proc/self/maps) is never loaded: a second copy of
# the library would start a second Go runtime.
with open(mapped_path, "rb") as f:
    mapped = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
raises(metalplug.stats, old_path, "no metalplug_stats")

fake = ctypes.CDLL(fake_path)
fake.fake_set.argtypes = [ctypes.c_char_p, ctypes.c_int]
fake.fake_calls.restype = ctypes.c_int64
fake.fake_last_capacity.restype = ctypes.c_int64
keep = []  # the reports the fake points into


def report(driver, tf_executions, reasons):
    figures = {"executions": 0, "compiles": 0, "device_executions": 0, "host_segments": 0, "waits": 0, "host_reasons": {}}
    r = {"driver": driver, "frontends": {
        "tensorflow": dict(figures, executions=tf_executions, compiles=2, device_executions=tf_executions,
                           host_segments=sum(reasons.values()), waits=1, host_reasons=reasons),
        "jax": dict(figures, host_reasons={}),
        "other": dict(figures, host_reasons={}),
    }, "process": {"go_allocations": 100 * tf_executions, "cgo_calls": 12 * tf_executions, "handoffs": 0,
                   "inline": tf_executions, "driver_waits": tf_executions},
        "memory": {"used_bytes": 4096 * tf_executions, "total_bytes": 1 << 30, "cached_executables": tf_executions}}
    return r


def serve(r, failing=0):
    b = json.dumps(r).encode()
    keep.append(b)
    fake.fake_set(b, failing)
    return len(b)


# A report that fits the first buffer: one call.
small = report("metal", 7, {"cholesky: a matrix decomposition": 2})
serve(small)
calls = fake.fake_calls()
got = metalplug.stats()
check(got == small, "stats() = %r, want %r" % (got, small))
check(fake.fake_calls() - calls == 1, "a small report took %d calls" % (fake.fake_calls() - calls))

# One larger than the first buffer: read again with a buffer that holds it.
big = report("metal-model", 9, {"sort %d: rows longer than 46340 " % i + "x" * 200: i + 1 for i in range(200)})
n = serve(big)
check(n > metalplug._CAPACITY, "the big report is %d bytes, not more than the first buffer's %d" % (n, metalplug._CAPACITY))
calls = fake.fake_calls()
got = metalplug.stats()
check(got == big, "stats() of the big report differs")
check(fake.fake_calls() - calls == 2, "the big report took %d calls, want 2" % (fake.fake_calls() - calls))
check(fake.fake_last_capacity() >= n, "the retry offered %d bytes for %d" % (fake.fake_last_capacity(), n))

# The library failing (-1): an error, not garbage.
serve(small, failing=1)
raises(metalplug.stats, "metalplug_stats failed", fake_path)

# measure(): the delta of the block, per frontend and per reason.
before = report("metal", 10, {"cholesky: a matrix decomposition": 2, "fft: lengths above 2048": 1})
after = report("metal", 15, {"cholesky: a matrix decomposition": 5, "fft: lengths above 2048": 1, "rng: normal numbers": 1})
serve(before)
with metalplug.measure() as m:
    check(m.delta is None and m.after is None, "the delta is there before the block ended")
    serve(after)
check(m.before == before and m.after == after, "measure() snapshots differ")
tf = m.delta["frontends"]["tensorflow"]
want = {"executions": 5, "compiles": 0, "device_executions": 5, "host_segments": 4, "waits": 0,
        "host_reasons": {"cholesky: a matrix decomposition": 3, "rng: normal numbers": 1}}
check(tf == want, "measure() delta %r, want %r" % (tf, want))
check(m.delta["driver"] == "metal", "delta driver %r" % m.delta["driver"])
check(m.delta["frontends"]["jax"]["executions"] == 0, "jax delta %r" % m.delta["frontends"]["jax"])
check(m.delta == metalplug.stats_delta(before, after), "measure() and stats_delta disagree")
want = {"go_allocations": 500, "cgo_calls": 60, "handoffs": 0, "inline": 5, "driver_waits": 5}
check(m.delta["process"] == want, "process delta %r, want %r" % (m.delta["process"], want))
# memory is a level: the delta carries after's, not a difference.
check(m.delta["memory"] == after["memory"], "memory in the delta %r, want after's %r" % (m.delta["memory"], after["memory"]))

# A block that raises still gets its delta.
serve(before)
try:
    with metalplug.measure() as m:
        serve(after)
        raise KeyError("in the block")
except KeyError:
    pass
check(m.delta is not None and m.delta["frontends"]["tensorflow"]["executions"] == 5, "no delta after a raise")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("OK")

"""Measures what one tiny op costs besides its arithmetic, on the metalplug
device and on the framework's own CPU, alternating within this one process,
and what the library did for it (metalplug.stats(): Go allocations, calls
into C, hand-offs to a stream's thread, waits), and prints one line per
case:

    BENCH {"kind": "dispatch", "id": ..., "device": [seconds per op...],
           "cpu": [...], "per_op": {...}, ...}

Run by package bench (bench/dispatch.go) with the driver chosen by the
environment (METALPLUG_HOST_DEVICE=1, METALPLUG_DRIVER=host or metal-model),
the metalplug module on PYTHONPATH and, for jax, the plugin registered
(PJRT_NAMES_AND_LIBRARY_PATHS, JAX_PLATFORMS=metalplug,cpu).
Arguments: --frontend tensorflow|jax, --ops N per timed repetition,
--reps R repetitions per case and device, --lib (TensorFlow: the library to
load).
"""
import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

PREFIX = "BENCH "

# The process figures divided per op; the frontend's too.
PROCESS = ("go_allocations", "cgo_calls", "handoffs", "inline", "driver_waits")
FRONTEND = ("executions", "device_executions", "waits", "host_segments")


def emit(obj):
    sys.stdout.write(PREFIX + json.dumps(obj) + "\n")
    sys.stdout.flush()


def tensorflow_cases(lib):
    import tensorflow as tf
    from tensorflow.python.framework import load_library

    load_library.load_pluggable_device_library(lib)
    devices = tf.config.list_physical_devices("METALPLUG_HOST")
    if not devices:
        raise SystemExit("no METALPLUG_HOST device: the library offered none")
    version = tf.__version__

    def setup(dev):
        with tf.device(dev):
            x = tf.constant(np.float32(1))
            y = tf.constant(np.float32(1e-3))

        def burst(n):
            with tf.device(dev):
                z = x
                for _ in range(n):
                    z = tf.raw_ops.AddV2(x=z, y=y)
                z.numpy()

        def roundtrip(n):
            with tf.device(dev):
                for _ in range(n):
                    tf.raw_ops.AddV2(x=x, y=y).numpy()

        return {"tiny_op": burst, "roundtrip": roundtrip}

    return "tensorflow", version, setup("/device:METALPLUG_HOST:0"), setup("/device:CPU:0")


def jax_cases():
    import jax

    dev = jax.devices("metalplug")[0]
    cpu = jax.devices("cpu")[0]
    add = jax.jit(lambda a, b: a + b)

    def setup(d):
        x = jax.device_put(np.float32(1), d)
        y = jax.device_put(np.float32(1e-3), d)

        def burst(n):
            z = x
            for _ in range(n):
                z = add(z, y)
            np.asarray(z)

        def roundtrip(n):
            for _ in range(n):
                np.asarray(add(x, y))

        return {"tiny_op": burst, "roundtrip": roundtrip}

    return "jax", jax.__version__, setup(dev), setup(cpu)


TITLES = {
    "tiny_op": "scalar add, per op in a burst of dependent ops, one read-back at the end",
    "roundtrip": "scalar add and its value back on the host, per op",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--frontend", choices=("tensorflow", "jax"), required=True)
    ap.add_argument("--ops", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--lib", default="")
    a = ap.parse_args()
    if a.frontend == "tensorflow":
        frontend, version, dev, cpu = tensorflow_cases(a.lib)
    else:
        frontend, version, dev, cpu = jax_cases()
    import metalplug

    emit({"kind": "ready", "frontend": frontend, "version": version})
    for cid in ("tiny_op", "roundtrip"):
        n = a.ops if cid == "tiny_op" else max(a.ops // 4, 1)
        dev[cid](200)  # warm-up: compiles and caches
        cpu[cid](200)
        times = {"device": [], "cpu": []}
        counts = []
        for _ in range(a.reps):
            before = metalplug.stats()
            t = time.perf_counter()
            dev[cid](n)
            times["device"].append((time.perf_counter() - t) / n)
            counts.append(metalplug.stats_delta(before, metalplug.stats()))
            t = time.perf_counter()
            cpu[cid](n)
            times["cpu"].append((time.perf_counter() - t) / n)
        per_op = {}
        for k in PROCESS:
            per_op[k] = statistics.median(c["process"][k] for c in counts) / n
        for k in FRONTEND:
            per_op[k] = statistics.median(c["frontends"][frontend][k] for c in counts) / n
        emit({"kind": "dispatch", "id": cid, "title": TITLES[cid], "ops": n, "driver": counts[-1]["driver"],
              "device": times["device"], "cpu": times["cpu"], "per_op": per_op})
    emit({"kind": "done"})


if __name__ == "__main__":
    main()

"""Times each benchmark case on the plugin device and on TensorFlow's CPU,
alternating within this one process (device, CPU, device, CPU, ...), and
prints one line per case:

    BENCH {"kind": "case", "id": ..., "device": [seconds...], "cpu": [...], ...}

The Go side (package bench) starts several of these processes, one per run
and synchronous mode, and turns the lines into the report.

Environment: METALPLUG_BENCH_LIB is the library to load; the runner sets
METALPLUG_HOST_DEVICE=1 and METALPLUG_SYNCHRONOUS as the run asks, and leaves
METALPLUG_CLUSTER unset: the worker sets it itself around the cases that
measure clustering off (see NOCLUSTER). The training steps also report what
the plugin counted per step (metalplug.stats()); --counts-only runs only
them, on the device alone, counted and not timed (for METALPLUG_DRIVER=
metal-model, whose times are the model's).
Arguments: case ids to run (all when none), --budget SECONDS per case and
device, --min-reps, --max-reps, --warmup.
"""
import argparse
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

DEVICE_TYPE = os.environ.get("METALPLUG_TEST_DEVICE_TYPE", "METALPLUG_HOST")
DEVICE = "/device:%s:0" % DEVICE_TYPE
CPU = "/device:CPU:0"
PREFIX = "BENCH "


def emit(obj):
    sys.stdout.write(PREFIX + json.dumps(obj) + "\n")
    sys.stdout.flush()


def load():
    lib = os.environ.get("METALPLUG_BENCH_LIB", "")
    if lib:
        from tensorflow.python.framework import load_library

        load_library.load_pluggable_device_library(lib)
    return [d.name for d in tf.config.list_physical_devices(DEVICE_TYPE)]


def op_counts():
    """Kernel executions per op on the device so far (metalplug_op_counts)."""
    import ctypes

    lib = os.environ.get("METALPLUG_BENCH_LIB", "")
    if not lib:
        return {}
    so = ctypes.CDLL(lib)
    so.metalplug_op_counts.restype = ctypes.c_void_p
    p = so.metalplug_op_counts()
    try:
        return json.loads(ctypes.string_at(p).decode())
    finally:
        ctypes.CDLL(None).free(ctypes.c_void_p(p))


def first(t):
    """Forces completion of everything t depends on by reading one element
    back to the host: TensorFlow's SyncDevice does not wait for a pluggable
    device's streams, but a device-to-host copy is ordered behind the work
    that wrote t. Both devices pay the same one-element read."""
    r = len(t.shape)
    if r == 0 or t.shape.num_elements() == 1:
        return t.numpy()
    return t[(0,) * r].numpy()


# Each case: setup(device) -> (step, check). step() runs the timed work once
# and returns once it has completed; check() returns arrays to compare
# between the devices (once, after warm-up). ops_per_step divides the step
# time for per-op cases.


def rand(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def small_cnn():
    return tf.keras.Sequential([
        tf.keras.Input((32, 32, 3)),
        tf.keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(10),
    ])


_weights = {}


TINY_BURST = 100


def case_tiny_burst(shape):
    """TINY_BURST dependent AddV2 ops on tiny tensors, then one read back:
    the per-op time is dispatch cost (TensorFlow's eager path, the plugin's
    C entry and the driver)."""
    def setup(dev):
        with tf.device(dev):
            x = tf.constant(np.ones(shape, np.float32))
            y = tf.constant(np.full(shape, 1e-3, np.float32))
            out = {}

            def step():
                z = x
                for _ in range(TINY_BURST):
                    z = tf.raw_ops.AddV2(x=z, y=y)
                out["z"] = z
                first(z)

            def check():
                return out["z"].numpy()

        return step, check

    return setup


def case_tiny_roundtrip():
    """One AddV2 of two scalars and its value back on the host: the latency
    a Python loop that looks at every result sees."""
    def setup(dev):
        with tf.device(dev):
            x = tf.constant(np.float32(1))
            y = tf.constant(np.float32(2))
            out = {}

            def step():
                out["z"] = tf.raw_ops.AddV2(x=x, y=y).numpy()

            def check():
                return np.asarray(out["z"])

        return step, check

    return setup


def mobilenet_v2():
    """keras.applications.MobileNetV2, nobody's model here: depthwise and
    pointwise convolutions, batch norm and ReLU6 in 17 inverted residual
    blocks, at 64x64 with 10 classes and no pretrained weights."""
    return tf.keras.applications.MobileNetV2(input_shape=(64, 64, 3), weights=None, classes=10)


def lstm():
    """A Keras LSTM(64) over 20 steps of 16 features and a dense head: a
    while loop forward and one backward, whose bodies are small ops."""
    return tf.keras.Sequential([tf.keras.Input((20, 16)), tf.keras.layers.LSTM(64), tf.keras.layers.Dense(10)])


def case_model_train(make, batch, shape, from_logits=False):
    """An SGD train_on_batch step of make()'s model on inputs of shape
    (batch,) + shape, from one set of initial weights shared by both
    devices."""
    def setup(dev):
        rng = np.random.default_rng(batch)
        a = rand(rng, (batch,) + shape)
        labels = rng.integers(0, 10, size=(batch,)).astype(np.int64)
        key = make.__name__
        if key not in _weights:
            tf.keras.utils.set_random_seed(1)
            with tf.device(CPU):
                _weights[key] = make().get_weights()
        with tf.device(dev):
            m = make()
            m.set_weights(_weights[key])
            m.compile(optimizer=tf.keras.optimizers.SGD(0.01),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=from_logits),
                      # XLA has no JIT device for a pluggable device; Keras would try it.
                      jit_compile=False)
            x, y = tf.constant(a), tf.constant(labels)
            out = {}

        def step():
            with tf.device(dev):
                # The loss comes back as a host value, so the step has completed.
                out["loss"] = m.train_on_batch(x, y)

        def check():
            return np.asarray(out["loss"])

        return step, check

    return setup


# The training steps run in tf.function, where the plugin's graph pass
# groups device subgraphs into clusters (one program each). Each runs twice,
# as <id> with clustering on (the default) and <id>_nocluster with it off:
# METALPLUG_CLUSTER=0, which the plugin reads (C getenv) each time it
# optimizes a graph, is set in this process before the _nocluster case's
# model and functions are made, and removed after it, so only that case's
# graphs, traced and optimized at their first call, are left unclustered.
NOCLUSTER = "_nocluster"
CLUSTER_OP = "_MetalplugCluster"

# id -> (title, setup, ops per step)
CASES = {
    "cnn_train_b128": ("CNN SGD train step, batch 128", case_model_train(small_cnn, 128, (32, 32, 3), from_logits=True), 1),
    "mobilenetv2_train_b16": ("MobileNetV2 (keras.applications) SGD train step, 64x64, batch 16", case_model_train(mobilenet_v2, 16, (64, 64, 3)), 1),
    "lstm_train_b32": ("Keras LSTM(64) SGD train step, 20 steps, batch 32", case_model_train(lstm, 32, (20, 16), from_logits=True), 1),
}
for _cid in list(CASES):
    _title, _setup, _per = CASES[_cid]
    CASES[_cid + NOCLUSTER] = (_title + ", clustering off", _setup, _per)
CASES.update({
    "tiny_add_scalar": ("AddV2 scalar, per op in a burst of %d" % TINY_BURST, case_tiny_burst(()), TINY_BURST),
    "tiny_add_1elem": ("AddV2 [1], per op in a burst of %d" % TINY_BURST, case_tiny_burst((1,)), TINY_BURST),
    "tiny_roundtrip": ("AddV2 scalar + .numpy(), per op", case_tiny_roundtrip(), 1),
})

# The training steps: id -> True (clustering on) or False (off). Each counts
# what a Mac pays per step (metalplug.stats()).
CLUSTERING = {cid: not cid.endswith(NOCLUSTER) for cid in CASES if "_train_" in cid}


def clustering_env(on):
    """Sets METALPLUG_CLUSTER for a case (unset: on; "0": off) and returns
    a function that puts back what was there."""
    prev = os.environ.get("METALPLUG_CLUSTER")
    if on:
        os.environ.pop("METALPLUG_CLUSTER", None)
    else:
        os.environ["METALPLUG_CLUSTER"] = "0"

    def restore():
        if prev is None:
            os.environ.pop("METALPLUG_CLUSTER", None)
        else:
            os.environ["METALPLUG_CLUSTER"] = prev

    return restore


def cluster_check(on, ran):
    """Why the kernels that ran on the device ({op: count}) do not show
    clustering on (clusters ran) or off (none did); "" when they do."""
    n = ran.get(CLUSTER_OP, 0)
    if on and not n:
        return "with clustering on, no cluster ran"
    if not on and n:
        return "with clustering off (METALPLUG_CLUSTER=0), %d clusters ran" % n
    return ""


def stats():
    """metalplug.stats() of the loaded library, through ctypes."""
    import ctypes

    so = ctypes.CDLL(os.environ["METALPLUG_BENCH_LIB"])
    so.metalplug_stats.restype = ctypes.c_int64
    n = so.metalplug_stats(None, 0)
    buf = ctypes.create_string_buffer(n + 1)
    so.metalplug_stats(buf, n + 1)
    return json.loads(buf.raw[:n])


# What a Mac pays, per step, from metalplug.stats() and the op counters.
STEP_FIELDS = ("executions", "device_executions", "waits", "compiles", "host_segments", "output_bytes")


def per_step(before, after, ops_before, ops_after, steps):
    """The TensorFlow frontend's counts between two snapshots, per step,
    with the kernel calls (every op counter)."""
    b, a = before["frontends"]["tensorflow"], after["frontends"]["tensorflow"]
    out = {f: (a[f] - b[f]) / steps for f in STEP_FIELDS}
    out["kernel_calls"] = sum(delta(ops_before, ops_after).values()) / steps
    return out


def delta(before, after):
    return {op: n - before.get(op, 0) for op, n in after.items() if n > before.get(op, 0)}


def compare(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        return None, "shapes %s and %s" % (a.shape, b.shape)
    scale = max(float(np.max(np.abs(b))) if b.size else 0.0, 1e-30)
    return float(np.max(np.abs(a - b))) / scale if a.size else 0.0, ""


def placed(dev, step, check):
    """Runs step and check under dev's scope: outside one, eager ops go to
    the device TensorFlow prefers, which is the plugin's."""
    def s():
        with tf.device(dev):
            step()

    def c():
        with tf.device(dev):
            return check()

    return s, c


class CaseFailed(Exception):
    pass


def run_case(cid, args):
    if cid not in CLUSTERING:
        return measure(cid, args)
    on = CLUSTERING[cid]
    restore = clustering_env(on)
    try:
        if args.counts_only:
            return count_steps(cid, args, on)
        return measure(cid, args, on)
    finally:
        restore()


def count_steps(cid, args, clustering):
    """The device alone: warm-up steps, then args.steps counted steps. For a
    driver whose times say nothing (the MPSGraph model), only the counts."""
    title, setup, _ = CASES[cid]
    before = op_counts()
    step, _ = placed(DEVICE, *setup(DEVICE))
    for _ in range(args.warmup):
        step()
    if cluster_check(clustering, delta(before, op_counts())):
        raise CaseFailed("%s: %s" % (cid, cluster_check(clustering, delta(before, op_counts()))))
    ops0, s0 = op_counts(), stats()
    for _ in range(args.steps):
        step()
    emit({"kind": "steps", "id": cid, "title": title, "clustering": clustering, "driver": s0["driver"],
          "per_step": per_step(s0, stats(), ops0, op_counts(), args.steps)})


def measure(cid, args, clustering=None):
    title, setup, per = CASES[cid]
    before = op_counts()
    dstep, dcheck = placed(DEVICE, *setup(DEVICE))
    cstep, ccheck = placed(CPU, *setup(CPU))
    # Warm-up: compiles, caches and allocator growth, on both devices.
    for _ in range(args.warmup):
        dstep()
        cstep()
    ran = delta(before, op_counts())
    if clustering is not None and cluster_check(clustering, ran):
        raise CaseFailed("%s: in the warm-up, %s (kernels on the device: %s)" % (cid, cluster_check(clustering, ran), ran))
    err, why = compare(dcheck(), ccheck())
    # One timed probe each decides how many repetitions fit the budget.
    t0 = time.perf_counter()
    dstep()
    t1 = time.perf_counter()
    cstep()
    t2 = time.perf_counter()
    slowest = max(t1 - t0, t2 - t1, 1e-9)
    reps = int(max(args.min_reps, min(args.max_reps, args.budget / slowest)))
    dev, cpu = [], []
    ops0, s0 = op_counts(), stats()
    for _ in range(reps):
        t = time.perf_counter()
        dstep()
        dev.append((time.perf_counter() - t) / per)
        t = time.perf_counter()
        cstep()
        cpu.append((time.perf_counter() - t) / per)
    line = {"kind": "case", "id": cid, "title": title, "device": dev, "cpu": cpu,
            "ops_per_step": per, "device_ops": ran, "max_rel_diff": err, "check": why}
    if clustering is not None:
        # The CPU's steps count nothing of the plugin's.
        line["per_step"] = per_step(s0, stats(), ops0, op_counts(), reps)
        # The timed calls too: a function traced or optimized again among
        # them would have been timed in the other state.
        whole = delta(before, op_counts())
        if cluster_check(clustering, whole):
            raise CaseFailed("%s: over the whole case, %s (kernels on the device: %s)" % (cid, cluster_check(clustering, whole), whole))
        line["clustering"] = clustering
        if not clustering:
            line["cluster_off_of"] = cid[:-len(NOCLUSTER)]
    emit(line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="*")
    ap.add_argument("--budget", type=float, default=3.0)
    ap.add_argument("--min-reps", type=int, default=3)
    ap.add_argument("--max-reps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--counts-only", action="store_true", help="training steps on the device only, counted, not timed")
    ap.add_argument("--steps", type=int, default=1, help="counted steps per case with --counts-only")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    if args.list:
        for cid, (title, *_) in CASES.items():
            print(cid + "\t" + title)
        return
    devices = load()
    emit({"kind": "ready", "tensorflow": tf.__version__, "devices": devices,
          "numpy": np.__version__, "python": sys.version.split()[0]})
    if not devices:
        emit({"kind": "error", "error": "no %s device: the library offered none" % DEVICE_TYPE})
        sys.exit(2)
    cases = args.cases or [cid for cid in CASES if not args.counts_only or cid in CLUSTERING]
    for cid in cases:
        if cid not in CASES:
            emit({"kind": "error", "error": "unknown case " + cid})
            sys.exit(2)
        emit({"kind": "start", "id": cid})
        try:
            run_case(cid, args)
        except CaseFailed as e:
            emit({"kind": "error", "error": "case " + str(e)})
            sys.exit(3)
    emit({"kind": "done"})


if __name__ == "__main__":
    main()

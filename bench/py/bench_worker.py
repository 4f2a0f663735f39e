"""Times each benchmark case on the plugin device and on TensorFlow's CPU,
alternating within this one process (device, CPU, device, CPU, ...), and
prints one line per case:

    BENCH {"kind": "case", "id": ..., "device": [seconds...], "cpu": [...], ...}

The Go side (package bench) starts several of these processes, one per run
and synchronous mode, and turns the lines into the report.

Environment: METALPLUG_BENCH_LIB is the library to load; the runner sets
METALPLUG_HOST_DEVICE=1 and METALPLUG_SYNCHRONOUS as the run asks, and leaves
METALPLUG_GRAPH_PASS unset: the worker sets it itself around the cases that
measure the plugin's graph pass off (see NOPASS).
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


def case_matmul(n):
    def setup(dev):
        rng = np.random.default_rng(n)
        a, b = rand(rng, (n, n)), rand(rng, (n, n))
        with tf.device(dev):
            x, y = tf.constant(a), tf.constant(b)
            out = {}

            def step():
                out["z"] = tf.linalg.matmul(x, y)
                first(out["z"])

            def check():
                return out["z"].numpy()

        return step, check

    return setup


def case_conv(batch):
    def setup(dev):
        rng = np.random.default_rng(batch)
        a, w = rand(rng, (batch, 64, 64, 32)), rand(rng, (3, 3, 32, 64), 0.1)
        with tf.device(dev):
            x, k = tf.constant(a), tf.constant(w)
            out = {}

            def step():
                out["z"] = tf.nn.conv2d(x, k, strides=1, padding="SAME")
                first(out["z"])

            def check():
                return out["z"].numpy()

        return step, check

    return setup


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


def cnn_weights():
    """One set of initial weights, shared by both devices' models."""
    if "w" not in _weights:
        tf.keras.utils.set_random_seed(1)
        with tf.device(CPU):
            _weights["w"] = small_cnn().get_weights()
    return _weights["w"]


def case_cnn_forward(batch):
    def setup(dev):
        rng = np.random.default_rng(batch)
        a = rand(rng, (batch, 32, 32, 3))
        with tf.device(dev):
            m = small_cnn()
            m.set_weights(cnn_weights())
            x = tf.constant(a)
            fwd = tf.function(lambda v: m(v, training=False), jit_compile=False)
            out = {}

            def step():
                with tf.device(dev):
                    out["z"] = fwd(x)
                first(out["z"])

            def check():
                return out["z"].numpy()

        return step, check

    return setup


def case_reduce(axis):
    def setup(dev):
        rng = np.random.default_rng(7)
        a = rand(rng, (4096, 4096))
        with tf.device(dev):
            x = tf.constant(a)
            out = {}

            def step():
                out["z"] = tf.reduce_sum(x, axis=axis)
                first(out["z"])

            def check():
                return out["z"].numpy()

        return step, check

    return setup


def case_chain():
    def setup(dev):
        rng = np.random.default_rng(9)
        a, b, c = (rand(rng, (4096, 4096)) for _ in range(3))
        with tf.device(dev):
            x, y, z = tf.constant(a), tf.constant(b), tf.constant(c)
            out = {}

            def step():
                out["z"] = tf.math.tanh(x * y + z)
                first(out["z"])

            def check():
                return out["z"].numpy()

        return step, check

    return setup


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


def case_model_train(make, batch, size, from_logits=False):
    """An SGD train_on_batch step of make()'s model, from one set of initial
    weights shared by both devices."""
    def setup(dev):
        rng = np.random.default_rng(batch)
        a = rand(rng, (batch, size, size, 3))
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


# The CNN cases run in tf.function, where the plugin's Grappler pass
# (plugin/tf/graphpass) rewrites Conv2D + BiasAdd [+ activation] and MatMul +
# BiasAdd on the device into _FusedConv2D and _FusedMatMul. Each runs twice,
# as <id> with the pass on (the default) and <id>_nopass with it off:
# METALPLUG_GRAPH_PASS=0, which the plugin reads (C getenv) each time it
# optimizes a graph, is set in this process before the _nopass case's model and
# functions are made, and removed after it, so only that case's graphs, traced
# and optimized at their first call, are left unfused.
NOPASS = "_nopass"
# The kernels the pass makes of this model, and the ones they replace: with
# the pass on the former must run and none of the latter; with it off no
# fused kernel may run and the unfused ones must.
FUSED_OPS = ("_FusedConv2D", "_FusedMatMul")
UNFUSED_OPS = ("Conv2D", "BiasAdd", "Relu")

# id -> (title, setup, ops per step)
CASES = {
    "matmul_512": ("MatMul 512x512 f32", case_matmul(512), 1),
    "matmul_1024": ("MatMul 1024x1024 f32", case_matmul(1024), 1),
    "matmul_2048": ("MatMul 2048x2048 f32", case_matmul(2048), 1),
    "conv_b16": ("Conv2D 16x64x64x32 -> 64, 3x3 SAME", case_conv(16), 1),
    "conv_b64": ("Conv2D 64x64x64x32 -> 64, 3x3 SAME", case_conv(64), 1),
    "cnn_fwd_b32": ("CNN forward, batch 32", case_cnn_forward(32), 1),
    "cnn_fwd_b32" + NOPASS: ("CNN forward, batch 32, graph pass off", case_cnn_forward(32), 1),
    "cnn_fwd_b128": ("CNN forward, batch 128", case_cnn_forward(128), 1),
    "cnn_fwd_b128" + NOPASS: ("CNN forward, batch 128, graph pass off", case_cnn_forward(128), 1),
    "cnn_train_b128": ("CNN SGD train step, batch 128", case_model_train(small_cnn, 128, 32, from_logits=True), 1),
    "cnn_train_b128" + NOPASS: ("CNN SGD train step, batch 128, graph pass off", case_model_train(small_cnn, 128, 32, from_logits=True), 1),
    "mobilenetv2_train_b16": ("MobileNetV2 (keras.applications) SGD train step, 64x64, batch 16", case_model_train(mobilenet_v2, 16, 64), 1),
    "reduce_sum_all": ("ReduceSum 4096x4096 -> scalar", case_reduce(None), 1),
    "reduce_sum_rows": ("ReduceSum 4096x4096 -> 4096 (axis 1)", case_reduce(1), 1),
    "chain_4096": ("tanh(a*b+c) 4096x4096 (3 ops)", case_chain(), 1),
    "tiny_add_scalar": ("AddV2 scalar, per op in a burst of %d" % TINY_BURST, case_tiny_burst(()), TINY_BURST),
    "tiny_add_1elem": ("AddV2 [1], per op in a burst of %d" % TINY_BURST, case_tiny_burst((1,)), TINY_BURST),
    "tiny_roundtrip": ("AddV2 scalar + .numpy(), per op", case_tiny_roundtrip(), 1),
}


# Cases the graph pass applies to: id -> True (pass on) or False (off).
GRAPH_PASS = {cid: not cid.endswith(NOPASS) for cid in CASES if cid.startswith("cnn_")}


def graph_pass_env(on):
    """Sets METALPLUG_GRAPH_PASS for a case (unset: on; "0": off) and returns
    a function that puts back what was there."""
    prev = os.environ.get("METALPLUG_GRAPH_PASS")
    if on:
        os.environ.pop("METALPLUG_GRAPH_PASS", None)
    else:
        os.environ["METALPLUG_GRAPH_PASS"] = "0"

    def restore():
        if prev is None:
            os.environ.pop("METALPLUG_GRAPH_PASS", None)
        else:
            os.environ["METALPLUG_GRAPH_PASS"] = prev

    return restore


def pass_check(on, ran):
    """Why the kernels that ran on the device ({op: count}) do not show the
    graph pass on (every chain fused) or off (nothing fused); "" when they do."""
    def counted(ops):
        return ", ".join("%s\u00d7%d" % (op, ran[op]) for op in ops)

    problems = []
    if on:
        missing = [op for op in FUSED_OPS if not ran.get(op)]
        unfused = [op for op in UNFUSED_OPS if ran.get(op)]
        state = "on"
    else:
        missing = [op for op in UNFUSED_OPS if not ran.get(op)]
        unfused = []
        state = "off (METALPLUG_GRAPH_PASS=0)"
    fused = [op for op in sorted(ran) if op.startswith("_Fused")] if not on else []
    if missing:
        problems.append(", ".join(missing) + " did not run")
    if unfused:
        problems.append(counted(unfused) + " ran unfused")
    if fused:
        problems.append(counted(fused) + " ran")
    if not problems:
        return ""
    return "with the graph pass %s, %s" % (state, " and ".join(problems))


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
    if cid not in GRAPH_PASS:
        return measure(cid, args)
    on = GRAPH_PASS[cid]
    restore = graph_pass_env(on)
    try:
        return measure(cid, args, on)
    finally:
        restore()


def measure(cid, args, graph_pass=None):
    title, setup, per = CASES[cid]
    before = op_counts()
    dstep, dcheck = placed(DEVICE, *setup(DEVICE))
    cstep, ccheck = placed(CPU, *setup(CPU))
    # Warm-up: compiles, caches and allocator growth, on both devices.
    for _ in range(args.warmup):
        dstep()
        cstep()
    ran = delta(before, op_counts())
    if graph_pass is not None and pass_check(graph_pass, ran):
        raise CaseFailed("%s: in the warm-up, %s (kernels on the device: %s)" % (cid, pass_check(graph_pass, ran), ran))
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
    for _ in range(reps):
        t = time.perf_counter()
        dstep()
        dev.append((time.perf_counter() - t) / per)
        t = time.perf_counter()
        cstep()
        cpu.append((time.perf_counter() - t) / per)
    line = {"kind": "case", "id": cid, "title": title, "device": dev, "cpu": cpu,
            "ops_per_step": per, "device_ops": ran, "max_rel_diff": err, "check": why}
    if graph_pass is not None:
        # The timed calls too: a function traced or optimized again among
        # them would have been timed in the other state.
        whole = delta(before, op_counts())
        if pass_check(graph_pass, whole):
            raise CaseFailed("%s: over the whole case, %s (kernels on the device: %s)" % (cid, pass_check(graph_pass, whole), whole))
        line["graph_pass"] = graph_pass
        if not graph_pass:
            line["pass_off_of"] = cid[:-len(NOPASS)]
    emit(line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="*")
    ap.add_argument("--budget", type=float, default=3.0)
    ap.add_argument("--min-reps", type=int, default=3)
    ap.add_argument("--max-reps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=2)
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
    for cid in args.cases or list(CASES):
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

"""The graph pass in a tf.compat.v1.Session: each pattern is built on the
device, run with full tracing, and the kernels that ran are read from the
RunMetadata's step_stats: which op types ran on the device, and whether any
Transpose ran anywhere. Each result is compared with the same graph on the
CPU.

With the pass on (METALPLUG_GRAPH_PASS unset) every chain must run as its
fused op, except where its convolution or product is itself fetched; with
METALPLUG_GRAPH_PASS=0 nothing is fused. With the pass on, a small Keras CNN
also trains from the same weights with the pass on and off (the setting is
read when its functions are traced) and must train the same. No Transpose may run, and every
result must be the CPU's to 1e-4. Each departure is one line of
"problems" (used by tests/integration/graph_test.go and the matrix)."""
import os

import numpy as np

from common import DEVICE, emit, load, op_counts, tf

load()
v1 = tf.compat.v1
rng = np.random.default_rng(0)
X = rng.standard_normal((4, 16, 16, 8)).astype(np.float32)
W = rng.standard_normal((3, 3, 8, 6)).astype(np.float32) * 0.2
B = rng.standard_normal((6,)).astype(np.float32)
XM = rng.standard_normal((5, 7)).astype(np.float32)
WM = rng.standard_normal((7, 3)).astype(np.float32)
BM = rng.standard_normal((3,)).astype(np.float32)

ACTIVATIONS = {
    "": lambda t: t,
    "Relu": tf.nn.relu,
    "Relu6": tf.nn.relu6,
    "Elu": tf.nn.elu,
    "LeakyRelu": lambda t: tf.nn.leaky_relu(t, alpha=0.3),
    "Tanh": tf.math.tanh,
    "Sigmoid": tf.math.sigmoid,
}


def build(kind, act, device, extra=None):
    """The pattern's graph on device; returns (graph, fetches)."""
    g = tf.Graph()
    with g.as_default(), tf.device(device):
        if kind == "conv":
            x, w, b = v1.placeholder(tf.float32, X.shape), tf.constant(W), tf.constant(B)
            y = tf.nn.conv2d(x, w, strides=1, padding="SAME")
        else:
            x, w, b = v1.placeholder(tf.float32, XM.shape), tf.constant(WM), tf.constant(BM)
            y = tf.linalg.matmul(x, w)
        z = tf.nn.bias_add(y, b)
        out = tf.identity(ACTIVATIONS[act](z)) * 1.0
        fetches = [out]
        if extra == "fetch_intermediate":
            fetches.append(y)
    return g, x, fetches


def run(kind, act, device, extra=None):
    g, x, fetches = build(kind, act, device, extra)
    feed = {x: X if kind == "conv" else XM}
    config = v1.ConfigProto(allow_soft_placement=False)
    with v1.Session(graph=g, config=config) as s:
        opts = v1.RunOptions(trace_level=v1.RunOptions.FULL_TRACE)
        meta = v1.RunMetadata()
        vals = s.run(fetches, feed_dict=feed, options=opts, run_metadata=meta)
    ran = {}
    for ds in meta.step_stats.dev_stats:
        for ns in ds.node_stats:
            # timeline_label is "name = Op(inputs)".
            label = ns.timeline_label
            op = label.split(" = ", 1)[1].split("(", 1)[0] if " = " in label else ""
            ran.setdefault(ds.device, []).append(op)
    return vals, ran


PASS_ON = os.environ.get("METALPLUG_GRAPH_PASS", "") != "0"
out = {}
problems = []
for kind in ("conv", "matmul"):
    for act in ACTIVATIONS:
        for extra in (None, "fetch_intermediate"):
            if extra and act != "Relu":
                continue
            name = f"{kind}_{act or 'bias'}" + (f"_{extra}" if extra else "")
            try:
                got, ran = run(kind, act, DEVICE, extra)
                want, _ = run(kind, act, "/CPU:0", extra)
                on_device = [op for d, ops in ran.items() if d.endswith(DEVICE.split("device:")[1]) for op in ops]
                c = out[name] = {
                    "device_ops": sorted(set(on_device)),
                    "transposes": sum(op == "Transpose" for ops in ran.values() for op in ops),
                    "max_abs_error": max(float(np.max(np.abs(a - b))) for a, b in zip(got, want)),
                }
            except Exception as e:  # noqa: BLE001 - reported as a problem
                problems.append(f"{name}: {type(e).__name__}: {str(e)[:400]}")
                continue
            fused_op, plain = ("_FusedConv2D", "Conv2D") if kind == "conv" else ("_FusedMatMul", "MatMul")
            ops = c["device_ops"]
            if PASS_ON and not extra:
                if fused_op not in ops or plain in ops or "BiasAdd" in ops:
                    problems.append(f"{name}: ran {ops} on the device, want {fused_op} in place of {plain} and BiasAdd")
            elif fused_op in ops or plain not in ops:
                problems.append(f"{name}: ran {ops} on the device, want {plain} left alone")
            if c["transposes"]:
                problems.append(f"{name}: {c['transposes']} Transpose ops ran")
            if c["max_abs_error"] > 1e-4:
                problems.append(f"{name}: max abs error {c['max_abs_error']:.3g} against the CPU")


def keras_fit(pass_on):
    """Trains a small CNN from fixed weights with the pass on or off (set
    before its functions are traced) and returns its losses, its weights and
    how many _FusedConv2D kernels ran on the device meanwhile."""
    before = os.environ.get("METALPLUG_GRAPH_PASS")
    os.environ["METALPLUG_GRAPH_PASS"] = "1" if pass_on else "0"
    try:
        tf.keras.utils.set_random_seed(0)
        with tf.device(DEVICE):
            m = tf.keras.Sequential([tf.keras.Input((8, 8, 2)), tf.keras.layers.Conv2D(4, 3, padding="same", activation="relu"),
                                     tf.keras.layers.Flatten(), tf.keras.layers.Dense(2)])
            m.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), jit_compile=False)
            r = np.random.default_rng(1)
            xs = r.standard_normal((64, 8, 8, 2)).astype(np.float32)
            ys = (xs.mean(axis=(1, 2, 3)) > 0).astype(np.int64)
            fused = op_counts().get("_FusedConv2D", 0)
            h = m.fit(xs, ys, epochs=3, batch_size=16, shuffle=False, verbose=0)
            fused = op_counts().get("_FusedConv2D", 0) - fused
        return h.history["loss"], [w.numpy() for w in m.weights], fused
    finally:
        if before is None:
            os.environ.pop("METALPLUG_GRAPH_PASS", None)
        else:
            os.environ["METALPLUG_GRAPH_PASS"] = before


if PASS_ON:
    loss_on, w_on, fused_on = keras_fit(True)
    loss_off, w_off, fused_off = keras_fit(False)
    diff = max(float(np.max(np.abs(a - b))) for a, b in zip(w_on, w_off))
    out["keras"] = {"loss_on": loss_on, "loss_off": loss_off, "max_weight_diff": diff, "fused_on": fused_on, "fused_off": fused_off}
    if fused_on == 0 or fused_off != 0:
        problems.append(f"keras: _FusedConv2D ran {fused_on} times with the pass, {fused_off} without")
    if diff > 1e-4 or max(abs(a - b) for a, b in zip(loss_on, loss_off)) > 1e-4:
        problems.append(f"keras: trains differently with the pass (losses {loss_on} and {loss_off}, weights {diff:.3g} apart)")
emit({"pass_on": PASS_ON, "cases": out, "problems": problems})

"""Clusters: the graph pass groups device subgraphs into _MetalplugCluster
nodes, each run as one program. Each case is a tf.function traced twice on
the device, once with clustering on and once with METALPLUG_CLUSTER=0 (the
plugin reads it, through C getenv, when it optimizes a graph, so setting it
here before tracing decides for that function), and once on the CPU.

Per case: the result with clustering on and off is the CPU's (to 1e-4 of
the largest value), on and off agree to float32 rounding, clusters ran with
it on and none with it off, and fewer device kernels ran per call with it
on. A small Keras model also trains three epochs both ways, and an LSTM, a
GRU with masking, attention and mixed_float16 two SGD steps, MobileNetV2
one: same losses and weights to float32 rounding. Each departure is one line of "problems" (tests/integration/
graph_test.go)."""
import os

import numpy as np

from common import DEVICE, emit, load, op_counts, tf

load()
rng = np.random.default_rng(0)
X = rng.standard_normal((8, 12)).astype(np.float32)
W1 = (rng.standard_normal((12, 16)) * 0.3).astype(np.float32)
W2 = (rng.standard_normal((16, 4)) * 0.3).astype(np.float32)
LABELS = rng.integers(0, 4, size=(8,)).astype(np.int32)
CLUSTER = "_MetalplugCluster"


def mlp_grad(x):
    w1, w2 = tf.constant(W1), tf.constant(W2)
    with tf.GradientTape() as tape:
        tape.watch([w1, w2])
        h = tf.nn.relu(tf.matmul(x, w1) + 0.1)
        logits = tf.matmul(h, w2)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant(LABELS), logits=logits))
    g1, g2 = tape.gradient(loss, [w1, w2])
    return loss, g1, g2


def dynamic_reshape(x):
    # The shape is computed on the host from x's (Shape, StridedSlice,
    # Pack): the cluster takes it as a host input and keys its program by it.
    y = tf.math.tanh(x * 2.0)
    y = tf.reshape(y, [tf.shape(x)[0] * 2, -1])
    return tf.reduce_sum(y * y + 1.0, axis=1)


def split_outputs(x):
    a, b, c = tf.split(tf.nn.sigmoid(x), 3, axis=1)
    return a * 2.0, tf.concat([b, c], axis=0) - 1.0


def fetched_intermediate(x):
    h = tf.exp(x * 0.1)
    return h, tf.reduce_max(h * h, axis=0)


def while_loop(x):
    def body(i, v):
        return i + 1, tf.math.tanh(v * 0.5 + 1.0) * 1.5

    _, v = tf.while_loop(lambda i, v: i < 5, body, (tf.constant(0), x))
    return v * 2.0


def cond(x):
    s = tf.reduce_sum(x)
    return tf.cond(s > 0, lambda: tf.nn.relu(x) * 3.0 + 1.0, lambda: tf.abs(x) - 2.0)


CASES = {
    "mlp_grad": mlp_grad,
    "dynamic_reshape": dynamic_reshape,
    "split_outputs": split_outputs,
    "fetched_intermediate": fetched_intermediate,
    "while_loop": while_loop,
    "cond": cond,
}


def with_clustering(on, fn):
    """Runs fn() with METALPLUG_CLUSTER set for on, then puts back what was there."""
    before = os.environ.get("METALPLUG_CLUSTER")
    os.environ["METALPLUG_CLUSTER"] = "1" if on else "0"
    try:
        return fn()
    finally:
        if before is None:
            os.environ.pop("METALPLUG_CLUSTER", None)
        else:
            os.environ["METALPLUG_CLUSTER"] = before


def device_calls(f, x):
    """f(x) on the device (traced on the first call), then one more call
    counted: its results and the kernels it ran, by op."""
    with tf.device(DEVICE):
        f(x)
        before = op_counts()
        out = f(x)
        after = op_counts()
        vals = [np.asarray(t) for t in tf.nest.flatten(out)]
    return vals, {op: n - before.get(op, 0) for op, n in after.items() if n > before.get(op, 0)}


def max_rel(a, b):
    scale = max(max(float(np.max(np.abs(y))) for y in b), 1e-30)
    return max(float(np.max(np.abs(x - y))) for x, y in zip(a, b)) / scale


out = {}
problems = []
for name, fn in CASES.items():
    try:
        with tf.device("/CPU:0"):
            want = [np.asarray(t) for t in tf.nest.flatten(tf.function(fn)(tf.constant(X)))]
        got_on, ran_on = with_clustering(True, lambda: device_calls(tf.function(fn), tf.constant(X)))
        got_off, ran_off = with_clustering(False, lambda: device_calls(tf.function(fn), tf.constant(X)))
    except Exception as e:  # noqa: BLE001 - reported as a problem
        problems.append(f"{name}: {type(e).__name__}: {str(e)[:400]}")
        continue
    c = out[name] = {
        "calls_on": sum(ran_on.values()), "calls_off": sum(ran_off.values()),
        "clusters_on": ran_on.get(CLUSTER, 0), "clusters_off": ran_off.get(CLUSTER, 0),
        "error_on": max_rel(got_on, want), "error_off": max_rel(got_off, want),
        "on_vs_off": max_rel(got_on, got_off), "ran_on": ran_on,
    }
    if c["clusters_on"] == 0:
        problems.append(f"{name}: no cluster ran with clustering on (ran {ran_on})")
    if c["clusters_off"]:
        problems.append(f"{name}: {c['clusters_off']} clusters ran with METALPLUG_CLUSTER=0")
    if c["calls_on"] >= c["calls_off"]:
        problems.append(f"{name}: {c['calls_on']} device kernels per call with clustering on, {c['calls_off']} off")
    for k in ("error_on", "error_off"):
        if c[k] > 1e-4:
            problems.append(f"{name}: {k} {c[k]:.3g} against the CPU")
    if c["on_vs_off"] > 1e-5:
        problems.append(f"{name}: clustered and unclustered differ by {c['on_vs_off']:.3g}")


def keras_fit():
    """Three epochs of a small model from fixed weights: its losses, its
    weights, and the clusters that ran."""
    tf.keras.utils.set_random_seed(0)
    with tf.device(DEVICE):
        m = tf.keras.Sequential([tf.keras.Input((12,)), tf.keras.layers.Dense(16, activation="relu"),
                                 tf.keras.layers.Dense(16, activation="tanh"), tf.keras.layers.Dense(4)])
        m.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), jit_compile=False)
        xs = np.tile(X, (8, 1))
        ys = np.tile(LABELS, 8).astype(np.int64)
        before = op_counts().get(CLUSTER, 0)
        h = m.fit(xs, ys, epochs=3, batch_size=16, shuffle=False, verbose=0)
        clusters = op_counts().get(CLUSTER, 0) - before
    return h.history["loss"], [w.numpy() for w in m.weights], clusters


try:
    loss_on, w_on, clusters_on = with_clustering(True, keras_fit)
    loss_off, w_off, clusters_off = with_clustering(False, keras_fit)
    diff = max(float(np.max(np.abs(a - b))) for a, b in zip(w_on, w_off))
    out["keras"] = {"loss_on": loss_on, "loss_off": loss_off, "max_weight_diff": diff,
                    "clusters_on": clusters_on, "clusters_off": clusters_off}
    if clusters_on == 0 or clusters_off != 0:
        problems.append(f"keras: {clusters_on} clusters ran with clustering on, {clusters_off} off")
    if not np.allclose(loss_on, loss_off, rtol=1e-5, atol=1e-6) or diff > 1e-5:
        problems.append(f"keras: losses {loss_on} (on) and {loss_off} (off), weights differ by {diff:.3g}")
except Exception as e:  # noqa: BLE001 - reported as a problem
    problems.append(f"keras: {type(e).__name__}: {str(e)[:400]}")

def gru_masking():
    return tf.keras.Sequential([tf.keras.Input((10, 6)), tf.keras.layers.Masking(0.0), tf.keras.layers.GRU(16), tf.keras.layers.Dense(4)]), (10, 6)


def lstm():
    return tf.keras.Sequential([tf.keras.Input((10, 6)), tf.keras.layers.LSTM(16), tf.keras.layers.Dense(4)]), (10, 6)


def attention():
    x = tf.keras.Input((8, 12))
    h = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=6)(x, x)
    h = tf.keras.layers.LayerNormalization()(h + x)
    return tf.keras.Model(x, tf.keras.layers.Dense(4)(tf.keras.layers.GlobalAveragePooling1D()(h))), (8, 12)


def mixed_float16():
    return tf.keras.Sequential([tf.keras.Input((12,)), tf.keras.layers.Dense(32, activation="relu", dtype="mixed_float16"),
                                tf.keras.layers.Dense(4, dtype="float32")]), (12,)


def mobilenet_v2():
    return tf.keras.applications.MobileNetV2(input_shape=(32, 32, 3), weights=None, classes=4), (32, 32, 3)


def train_steps(make, steps=2):
    """SGD steps of make()'s model from fixed weights: the losses and the
    weights after, and the clusters that ran."""
    tf.keras.utils.set_random_seed(0)
    with tf.device(DEVICE):
        m, shape = make()
        m.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=False)
        r = np.random.default_rng(2)
        xs = r.standard_normal((8,) + shape).astype(np.float32)
        if len(shape) == 2:
            xs[:, -3:, :] = 0.0  # masked time steps, for the Masking layer
        ys = r.integers(0, 4, size=(8,)).astype(np.int64)
        before = op_counts().get(CLUSTER, 0)
        losses = [float(m.train_on_batch(xs, ys)) for _ in range(steps)]
        clusters = op_counts().get(CLUSTER, 0) - before
    return losses, [w.numpy().astype(np.float32) for w in m.weights], clusters


# Keras models trained with clustering on and off give the same losses and
# weights, to float32 rounding: a cluster computes what its members do.
# MobileNetV2 takes one step: its batch norms over a batch of 8 at 1x1
# (the last blocks) amplify a rounding difference in one step's gradient
# into the next step's loss by orders of magnitude, as they amplify the
# CPU's own against float64.
for name, make, steps in (("lstm", lstm, 2), ("gru_masking", gru_masking, 2), ("attention", attention, 2),
                          ("mixed_float16", mixed_float16, 2), ("mobilenet_v2", mobilenet_v2, 1)):
    try:
        loss_on, w_on, clusters_on = with_clustering(True, lambda: train_steps(make, steps))
        loss_off, w_off, clusters_off = with_clustering(False, lambda: train_steps(make, steps))
    except Exception as e:  # noqa: BLE001 - reported as a problem
        problems.append(f"keras {name}: {type(e).__name__}: {str(e)[:400]}")
        continue
    scale = max(float(np.max(np.abs(w))) for w in w_off)
    diff = max(float(np.max(np.abs(a - b))) for a, b in zip(w_on, w_off)) / scale
    loss_diff = max(abs(a - b) / max(abs(b), 1e-30) for a, b in zip(loss_on, loss_off))
    out["keras_" + name] = {"loss_on": loss_on, "loss_off": loss_off, "loss_rel_diff": loss_diff,
                            "weight_rel_diff": diff, "clusters_on": clusters_on, "clusters_off": clusters_off}
    if clusters_on == 0 or clusters_off != 0:
        problems.append(f"keras {name}: {clusters_on} clusters ran with clustering on, {clusters_off} off")
    # float32 rounding: a program may round differently from its ops one by
    # one (a fused multiply-add, say), by a few ulps (measured: MobileNetV2's
    # weights 2.6e-8 of the largest apart after a step, the others equal).
    if loss_diff > 1e-5 or diff > 1e-5:
        problems.append(f"keras {name}: losses {loss_on} (on) and {loss_off} (off) differ by {loss_diff:.3g}, weights by {diff:.3g} of the largest")

emit({"cases": out, "problems": problems})

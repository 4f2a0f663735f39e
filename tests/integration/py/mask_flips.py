"""Where MobileNetV2's float32 gradients part from float64's: on the device
and on TensorFlow's CPU, per seed and input size, count the activations
whose ReLU6 mask (kept, cut at 0, cut at 6) differs from float64's, and
measure the gradient error twice: against float64 as it is, and against
float64 made to take the float32 run's own masks (so what is left is
arithmetic, not flips). Also, per ReLU6, the forward error of its input,
to find the layer where one side's error grows.

Arguments: SIZE:BATCH specs, then --seeds N. Result: one record per
(seed, spec)."""
import os
import sys

os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"  # the CPU's own kernels, as the sweep's reference

import numpy as np  # noqa: E402

from common import DEVICE, emit, load, tf  # noqa: E402

load()
tf.config.set_soft_device_placement(False)
import keras  # noqa: E402

args = sys.argv[1:]
seeds = 10
if "--seeds" in args:
    k = args.index("--seeds")
    seeds = int(args[k + 1])
    del args[k:k + 2]

# What the probes do on a run: record their inputs' masks and values, or
# apply masks given for each probe.
state = {"mode": "record", "masks": {}, "inputs": {}, "forced": {}}


class Probe(keras.layers.Layer):
    """ReLU6 as a select on its mask, so that a run can record the mask or
    be made to use another run's: where kept, x; cut above, 6; else 0."""

    def __init__(self, max_value, **kw):
        super().__init__(**kw)
        self.max_value = max_value

    def compute_output_shape(self, shape):
        return shape

    def call(self, x):
        top = tf.cast(self.max_value, x.dtype)
        if state["mode"] == "force":
            keep, above = (tf.constant(m) for m in state["forced"][self.name])
        else:
            keep, above = tf.logical_and(x > 0, x < top), x >= top
            state["masks"][self.name] = (keep.numpy(), above.numpy())
            state["inputs"][self.name] = x.numpy().astype(np.float64)
        return tf.where(keep, x, tf.where(above, top, tf.zeros_like(x)))


def build(size, dtype, seed):
    keras.config.set_floatx(dtype)
    keras.config.set_dtype_policy(dtype)
    keras.utils.set_random_seed(seed)
    try:
        base = keras.applications.MobileNetV2(weights=None, input_shape=(size, size, 3), classes=10, classifier_activation=None)

        def swap(layer):
            if isinstance(layer, keras.layers.ReLU):
                return Probe(float(layer.max_value), name=layer.name, dtype=dtype)
            return layer.__class__.from_config(layer.get_config())

        m = keras.models.clone_model(base, clone_function=swap)
        m.set_weights(base.get_weights())
        return m
    finally:
        keras.config.set_floatx("float32")
        keras.config.set_dtype_policy("float32")


def run(model, weights, device, x, y):
    model.set_weights(weights)  # training mode moves batch norm's statistics
    with tf.device(device):
        with tf.GradientTape() as tape:
            logits = model(tf.constant(x), training=True)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(tf.constant(y), logits))
        grads = tape.gradient(loss, model.trainable_variables)
    return np.concatenate([g.numpy().astype(np.float64).ravel() for g in grads])


def recorded(model, weights, device, x, y):
    state.update(mode="record", masks={}, inputs={})
    g = run(model, weights, device, x, y)
    return g, state["masks"], state["inputs"]


def forced(model, weights, x, y, masks):
    state.update(mode="force", forced=masks)
    try:
        return run(model, weights, "/CPU:0", x, y)
    finally:
        state["mode"] = "record"


def rel(a, ref):
    return float(np.linalg.norm(a - ref) / np.linalg.norm(ref))


def flips(masks, ref):
    return int(sum(np.count_nonzero((masks[n][0] != ref[n][0]) | (masks[n][1] != ref[n][1])) for n in ref))


out = []
for seed in range(seeds):
    for spec in args:
        size, batch = (int(v) for v in spec.split(":"))
        rng = np.random.default_rng(seed)
        x = rng.standard_normal((batch, size, size, 3)).astype(np.float32)
        y = rng.integers(0, 10, batch)
        rec = {"seed": seed, "size": size, "batch": batch}
        try:
            m32, m64 = build(size, "float32", seed), build(size, "float64", seed)
            w32 = m32.get_weights()
            w64 = [v.astype(np.float64) for v in w32]
            keras.config.set_floatx("float64")
            g64, masks64, in64 = recorded(m64, w64, "/CPU:0", x.astype(np.float64), y)
            keras.config.set_floatx("float32")
            gcpu, maskscpu, incpu = recorded(m32, w32, "/CPU:0", x, y)
            gdev, masksdev, indev = recorded(m32, w32, DEVICE, x, y)
            keras.config.set_floatx("float64")
            g64cpu = forced(m64, w64, x.astype(np.float64), y, maskscpu)
            g64dev = forced(m64, w64, x.astype(np.float64), y, masksdev)
            keras.config.set_floatx("float32")
            order = list(in64)
            rec.update({
                "activations": int(sum(v[0].size for v in masks64.values())),
                "flips_device": flips(masksdev, masks64), "flips_cpu": flips(maskscpu, masks64),
                "gradients_device": rel(gdev, g64), "gradients_cpu": rel(gcpu, g64),
                "gradients_device_own_masks": rel(gdev, g64dev), "gradients_cpu_own_masks": rel(gcpu, g64cpu),
                # per ReLU6, in network order: its input's error on each side
                "layers": [[n, rel(indev[n], in64[n]), rel(incpu[n], in64[n])] for n in order],
            })
        except Exception as e:  # noqa: BLE001 - the caller reports it
            rec["error"] = f"{type(e).__name__}: {str(e)[:500]}"
        out.append(rec)
emit(out)

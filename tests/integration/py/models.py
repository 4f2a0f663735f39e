"""Real architectures nobody here wrote (keras.applications, weights=None),
forward and gradients in training mode, on the device and on the CPU in
float32, each compared with the same model in float64 on the CPU: the
relative error of the logits and of all gradients (one vector), per seed
(the seed draws the weights and the input). Arguments: the architectures
to run, as NAME:SIZE:BATCH, then --seeds N (default 1)."""
import os
import sys

os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"  # the CPU's own kernels, as the sweep's reference

import numpy as np  # noqa: E402

from common import DEVICE, emit, load, tf  # noqa: E402

load()
tf.config.set_soft_device_placement(False)
import keras  # noqa: E402


def build(arch, size, dtype, seed):
    keras.config.set_floatx(dtype)
    keras.config.set_dtype_policy(dtype)
    keras.utils.set_random_seed(seed)
    try:
        return getattr(keras.applications, arch)(weights=None, input_shape=(size, size, 3), classes=10, classifier_activation=None)
    finally:
        keras.config.set_floatx("float32")
        keras.config.set_dtype_policy("float32")


def run(model, device, x, y):
    with tf.device(device):
        with tf.GradientTape() as tape:
            logits = model(tf.constant(x), training=True)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(tf.constant(y), logits))
        grads = tape.gradient(loss, model.trainable_variables)
    return logits.numpy().astype(np.float64), np.concatenate([g.numpy().astype(np.float64).ravel() for g in grads])


def rel(a, ref):
    return float(np.linalg.norm(a - ref) / np.linalg.norm(ref))


args = sys.argv[1:]
seeds = 1
if "--seeds" in args:
    k = args.index("--seeds")
    seeds = int(args[k + 1])
    del args[k:k + 2]

out = {}
for spec in args:
    arch, size, batch = spec.split(":")
    size, batch = int(size), int(batch)
    runs = []
    for seed in range(1, seeds + 1):
        rng = np.random.default_rng(seed - 1)
        x = rng.standard_normal((batch, size, size, 3)).astype(np.float32)
        y = rng.integers(0, 10, batch)
        try:
            m32 = build(arch, size, "float32", seed)
            w = m32.get_weights()
            m64 = build(arch, size, "float64", seed)
            m64.set_weights([v.astype(np.float64) for v in w])
            keras.config.set_floatx("float64")
            ref_logits, ref_grads = run(m64, "/CPU:0", x.astype(np.float64), y)
            keras.config.set_floatx("float32")
            cpu_logits, cpu_grads = run(m32, "/CPU:0", x, y)
            m32.set_weights(w)
            dev_logits, dev_grads = run(m32, DEVICE, x, y)
            runs.append({
                "seed": seed,
                "forward_device": rel(dev_logits, ref_logits), "forward_cpu": rel(cpu_logits, ref_logits),
                "gradients_device": rel(dev_grads, ref_grads), "gradients_cpu": rel(cpu_grads, ref_grads),
            })
        except Exception as e:  # noqa: BLE001 - the test reports it
            runs.append({"seed": seed, "error": f"{type(e).__name__}: {str(e)[:500]}"})
    out[spec] = runs
emit(out)

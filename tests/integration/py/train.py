"""Trains a small CNN and an MLP with Adam on the device and on the CPU from
the same seed and data, and reports the loss curves and how far the trained
weights are apart."""
import os
import sys

import numpy as np

from common import DEVICE, emit, load, op_counts, tf

load()
which = sys.argv[1] if len(sys.argv) > 1 else "mlp"
rng = np.random.default_rng(0)
if which == "cnn":
    x = rng.standard_normal((256, 12, 12, 1)).astype(np.float32)
    y = (x[:, :6].mean(axis=(1, 2, 3)) > x[:, 6:].mean(axis=(1, 2, 3))).astype(np.int64)
else:
    x = rng.standard_normal((512, 20)).astype(np.float32)
    y = (x[:, :10].sum(axis=1) > 0).astype(np.int64)


def model_for(kind):
    if kind == "cnn":
        layers = [
            tf.keras.Input((12, 12, 1)),
            tf.keras.layers.Conv2D(8, 3, padding="same", activation="relu"),
            tf.keras.layers.MaxPooling2D(),
            tf.keras.layers.Conv2D(8, 3, activation="relu"),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(2, activation="softmax"),
        ]
    else:
        layers = [
            tf.keras.Input((20,)),
            tf.keras.layers.Dense(32, activation="relu"),
            tf.keras.layers.Dense(16, activation="tanh"),
            tf.keras.layers.Dense(2, activation="softmax"),
        ]
    return tf.keras.Sequential(layers)


def train(device):
    tf.keras.utils.set_random_seed(1)
    with tf.device(device):
        m = model_for(which)
        # XLA has no JIT device for a pluggable device; Keras would try it.
        m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", jit_compile=False)
        h = m.fit(x, y, batch_size=64, epochs=4, shuffle=False, verbose=0)
        out = m(x[:2])
    return h.history["loss"], m.get_weights(), out.device


cpu_loss, cpu_w, _ = train("/device:CPU:0")
before = op_counts()
dev_loss, dev_w, dev_where = train(DEVICE)
after = op_counts()
ran = {op: n - before.get(op, 0) for op, n in after.items() if n > before.get(op, 0)}
diff = max(float(np.max(np.abs(a - b))) for a, b in zip(cpu_w, dev_w))
emit({
    "model": which,
    "device_loss": [float(v) for v in dev_loss],
    "cpu_loss": [float(v) for v in cpu_loss],
    "forward_device": dev_where,
    "max_weight_diff": diff,
    "device_ops": ran,
    "nan": bool(any(np.isnan(w).any() for w in dev_w)),
})

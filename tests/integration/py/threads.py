"""Trains two models on the device at once, from two Python threads: the
kernels, streams and program caches are entered concurrently."""
import threading

import numpy as np

from common import DEVICE, emit, load, tf

load()
results = {}


def train(name, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((512, 16)).astype(np.float32)
    y = (x[:, :8].sum(axis=1) > 0).astype(np.int64)
    with tf.device(DEVICE):
        m = tf.keras.Sequential([
            tf.keras.Input((16,)),
            tf.keras.layers.Dense(32, activation="relu"),
            tf.keras.layers.Dense(2, activation="softmax"),
        ])
        m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", jit_compile=False)
        h = m.fit(x, y, batch_size=32, epochs=3, verbose=0)
    results[name] = {"loss": [float(v) for v in h.history["loss"]],
                     "nan": bool(any(np.isnan(w).any() for w in m.get_weights()))}


threads = [threading.Thread(target=train, args=("model%d" % i, i)) for i in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
emit(results)

"""Memory pressure on a small device (TestMemoryPressure sets METALPLUG_HOST_MEMORY_MB):
a tensor larger than the device, then a Keras training step whose activations
do not fit, each must fail once with ResourceExhaustedError naming the size
and what is free, in bounded time; after each, ordinary work on the device
must succeed in the same process."""
import time

import numpy as np

from common import DEVICE, emit, load, tf

load()
out = {}


def attempt(name, fn):
    """Runs fn, recording what it raised (or its result) and how long it took."""
    t0 = time.monotonic()
    try:
        r = fn()
        out[name] = {"raised": False, "result": r}
    except Exception as e:  # noqa: BLE001 - the class is what is checked
        out[name] = {"raised": True, "type": type(e).__name__, "message": str(e)[:2000]}
    out[name]["seconds"] = round(time.monotonic() - t0, 2)


def small_matmul():
    with tf.device(DEVICE):
        a = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
        r = tf.linalg.matmul(a, a, transpose_b=True)
        return {"value": r.numpy().tolist(), "device": r.device}


def too_big():
    # 256 MiB of float32, twice the device.
    with tf.device(DEVICE):
        return tf.raw_ops.Fill(dims=[64, 1024, 1024], value=np.float32(1)).numpy().shape


def fit(batch, width, rows):
    tf.keras.utils.set_random_seed(1)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, 64)).astype(np.float32)
    y = (x[:, :32].sum(axis=1) > 0).astype(np.float32)
    with tf.device(DEVICE):
        m = tf.keras.Sequential([
            tf.keras.Input((64,)),
            tf.keras.layers.Dense(width, activation="relu"),
            tf.keras.layers.Dense(1),
        ])
        m.compile(optimizer="sgd", loss="mse", jit_compile=False)
        h = m.fit(x, y, batch_size=batch, epochs=1, shuffle=False, verbose=0)
    return {"loss": [float(v) for v in h.history["loss"]]}


attempt("matmul_before", small_matmul)
attempt("too_big", too_big)
attempt("matmul_after_too_big", small_matmul)
# One step of a batch of 8192 through a 16384-wide layer: 512 MiB of
# activations alone, on a device of 128 MiB; the weights (4 MiB) fit.
attempt("fit_too_big", lambda: fit(8192, 16384, 8192))
attempt("matmul_after_fit", small_matmul)
attempt("fit_small", lambda: fit(32, 16, 256))
emit(out)

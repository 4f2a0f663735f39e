"""With soft placement off, an op or dtype without a device kernel must raise;
with it on, TensorFlow must fall back to the CPU."""
import numpy as np

from common import DEVICE, emit, load, tf

load()
out = {}
m = np.eye(3, dtype=np.float32) * 2
tf.config.set_soft_device_placement(False)
for name, fn in {
    "Igamma": lambda: tf.math.igamma(m, m),  # no device kernel (docs/coverage.md: missing)
    "MatMul_float64": lambda: tf.linalg.matmul(m.astype(np.float64), m.astype(np.float64)),
}.items():
    try:
        with tf.device(DEVICE):
            fn()
        out[name] = "ran"
    except Exception as e:
        out[name] = "raised: " + type(e).__name__
tf.config.set_soft_device_placement(True)
with tf.device(DEVICE):
    d = tf.linalg.matmul(m.astype(np.float64), m.astype(np.float64))
out["soft_float64_device"] = d.device
emit(out)

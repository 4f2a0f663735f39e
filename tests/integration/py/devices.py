"""Prints the plugin devices TensorFlow lists, and runs one MatMul if any."""
import numpy as np

from common import DEVICE, emit, load, tf

devices = load()
out = {"devices": devices}
if devices:
    tf.config.set_soft_device_placement(False)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.arange(8, dtype=np.float32).reshape(4, 2)
    with tf.device(DEVICE):
        c = tf.matmul(a, b)
    out["matmul_device"] = c.device
    out["matmul_error"] = float(np.abs(c.numpy() - a @ b).max())
emit(out)

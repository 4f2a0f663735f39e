"""Prints the plugin devices TensorFlow lists, and runs one MatMul if any.

Arguments NAME=VALUE are set in os.environ before TensorFlow is imported, as
a notebook would set them."""
import os
import sys

for arg in sys.argv[1:]:
    name, _, value = arg.partition("=")
    os.environ[name] = value

import numpy as np  # noqa: E402

from common import DEVICE, emit, load, tf  # noqa: E402

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

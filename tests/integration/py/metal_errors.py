"""Errors the Metal driver raises, on the model of MPSGraph with no part of a
program allowed on the CPU (TestMetalErrorsReachTensorFlow sets
METALPLUG_DRIVER=metal-model METALPLUG_NO_CPU_FALLBACK=1): a program the
GPU cannot run whole must come back as a TensorFlow error of its class,
naming the op, the shapes and the dtypes, and the process must go on."""
import numpy as np

from common import DEVICE, emit, load, tf

load()
tf.config.set_soft_device_placement(False)
out = {}
try:
    with tf.device(DEVICE):
        # MPSGraph has no Cholesky factorization: its home is the CPU.
        tf.linalg.cholesky(np.eye(3, dtype=np.float32) * 4).numpy()
    out["cholesky"] = {"raised": False}
except Exception as e:  # noqa: BLE001 - the class is what is checked
    out["cholesky"] = {"raised": True, "type": type(e).__name__, "message": str(e)[:2000]}
with tf.device(DEVICE):
    r = tf.linalg.matmul(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32))
out["matmul_after"] = {"value": r.numpy().tolist(), "device": r.device}
emit(out)

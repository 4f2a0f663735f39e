"""Wrong input must come back as a TensorFlow error that names the op, the
shapes and the dtypes, and never crash the process."""
import numpy as np

from common import DEVICE, emit, load, tf

load()
tf.config.set_soft_device_placement(False)
f = lambda *s: np.ones(s, np.float32)
cases = {
    "matmul_shapes": lambda: tf.raw_ops.MatMul(a=f(2, 3), b=f(4, 5)),
    "add_broadcast": lambda: tf.raw_ops.AddV2(x=f(2, 3), y=f(4)),
    "reshape_size": lambda: tf.raw_ops.Reshape(tensor=f(3, 4), shape=[5, 5]),
    "sum_axis": lambda: tf.raw_ops.Sum(input=f(3, 4), axis=[2]),
    "conv_strides_attr": lambda: tf.raw_ops.Conv2D(input=f(1, 5, 5, 2), filter=f(3, 3, 2, 4), strides=[1, 1, 1], padding="SAME"),
    "conv_padding_attr": lambda: tf.raw_ops.Conv2D(input=f(1, 5, 5, 2), filter=f(3, 3, 2, 4), strides=[1, 1, 1, 1], padding="FULL"),
    "transpose_perm": lambda: tf.raw_ops.Transpose(x=f(2, 3), perm=[0, 0]),
    "too_big": lambda: tf.raw_ops.Fill(dims=[64, 1024, 1024], value=np.float32(1)),
}
out = {}
for name, fn in cases.items():
    try:
        with tf.device(DEVICE):
            r = fn()
            r.numpy()
        out[name] = {"raised": False}
    except Exception as e:
        out[name] = {"raised": True, "type": type(e).__name__, "message": str(e)[:600]}
# Empty tensors are valid input, not an error.
with tf.device(DEVICE):
    e = tf.raw_ops.MatMul(a=np.ones((0, 3), np.float32), b=f(3, 4))
    s = tf.raw_ops.Sum(input=np.ones((0, 4), np.float32), axis=[0])
out["empty"] = {"matmul_shape": list(e.shape), "sum": s.numpy().tolist(), "device": e.device}
emit(out)

"""Runs each op of the foundation set on the device and on the CPU with the
same inputs, soft placement off, and reports where it ran and the largest
difference."""
import numpy as np

from common import DEVICE, emit, load, tf

load()
tf.config.set_soft_device_placement(False)
rng = np.random.default_rng(0)


def r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


x4 = r(2, 9, 10, 3)
cases = {
    "MatMul": lambda: tf.linalg.matmul(r(5, 7), r(7, 3)),
    "MatMul_transposed": lambda: tf.linalg.matmul(r(7, 5), r(3, 7), transpose_a=True, transpose_b=True),
    "BatchMatMulV2": lambda: tf.linalg.matmul(r(2, 1, 4, 5), r(3, 5, 6)),
    "BatchMatMulV2_adjoint": lambda: tf.linalg.matmul(r(3, 5, 4), r(3, 6, 5), adjoint_a=True, adjoint_b=True),
    "AddV2": lambda: tf.add(r(4, 1, 3), r(5, 1)),
    "Sub": lambda: tf.subtract(r(4, 3), r(3)),
    "Mul": lambda: tf.multiply(r(2, 3, 4), r(1, 3, 1)),
    "RealDiv": lambda: tf.divide(r(3, 4), np.abs(r(3, 4)) + 0.5),
    "Relu": lambda: tf.nn.relu(r(4, 5)),
    "Sigmoid": lambda: tf.sigmoid(r(4, 5)),
    "Tanh": lambda: tf.tanh(r(4, 5)),
    "Softmax": lambda: tf.nn.softmax(r(3, 7) * 5),
    "BiasAdd": lambda: tf.nn.bias_add(r(2, 3, 4, 5), r(5)),
    "BiasAdd_NCHW": lambda: tf.nn.bias_add(r(2, 5, 3, 4), r(5), data_format="NCHW"),
    "Conv2D_SAME": lambda: tf.nn.conv2d(x4, r(3, 3, 3, 4), strides=1, padding="SAME"),
    "Conv2D_VALID_strided": lambda: tf.nn.conv2d(x4, r(3, 2, 3, 4), strides=[1, 2, 3, 1], padding="VALID"),
    "Conv2D_SAME_strided": lambda: tf.nn.conv2d(x4, r(4, 4, 3, 2), strides=2, padding="SAME"),
    "Conv2D_dilated": lambda: tf.nn.conv2d(x4, r(3, 3, 3, 4), strides=1, padding="SAME", dilations=2),
    "MaxPool_SAME": lambda: tf.nn.max_pool2d(x4, ksize=3, strides=2, padding="SAME"),
    "MaxPool_VALID": lambda: tf.nn.max_pool2d(x4, ksize=[2, 3], strides=[2, 1], padding="VALID"),
    "AvgPool_SAME": lambda: tf.nn.avg_pool2d(x4, ksize=3, strides=2, padding="SAME"),
    "AvgPool_VALID": lambda: tf.nn.avg_pool2d(x4, ksize=2, strides=2, padding="VALID"),
    "Sum": lambda: tf.reduce_sum(r(3, 4, 5), axis=[0, -1]),
    "Sum_keepdims": lambda: tf.reduce_sum(r(3, 4, 5), axis=1, keepdims=True),
    "Mean": lambda: tf.reduce_mean(r(3, 4, 5), axis=[1, 2]),
    "Max": lambda: tf.reduce_max(r(3, 4, 5), axis=-2),
    "Reshape": lambda: tf.reshape(r(3, 4, 5), [5, -1]),
    "Transpose": lambda: tf.transpose(r(2, 3, 4), [2, 0, 1]),
    "Cast_float_to_int": lambda: tf.cast(r(3, 4) * 10, tf.int32),
    "Cast_float_to_half": lambda: tf.cast(r(3, 4), tf.float16),
    "Identity": lambda: tf.identity(r(3, 4)),
}

results = {}
for name, make in cases.items():
    # Inputs come from the same generator state for both runs.
    state = rng.bit_generator.state
    with tf.device("/device:CPU:0"):
        want = make()
    rng.bit_generator.state = state
    try:
        with tf.device(DEVICE):
            got = make()
        err = float(np.max(np.abs(got.numpy().astype(np.float64) - want.numpy().astype(np.float64)), initial=0))
        results[name] = {"device": got.device, "max_abs_error": err, "shape": list(got.shape), "dtype": got.dtype.name}
    except Exception as e:  # reported per op, so one failure does not hide the rest
        results[name] = {"error": "%s: %s" % (type(e).__name__, e)}
emit(results)

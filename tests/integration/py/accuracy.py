"""Every reduction and contraction the device runs, at model sizes, on the
device and on the CPU in float32, each against the same op on float64 inputs
(numpy, or TensorFlow's CPU in float64 where numpy has no such op): the
error of each, relative to the largest magnitude of the reference. Data have
a mean far from 0 where it matters, as activations do, which is where a
running sum loses the most. Prints a RESULT line with one row per case."""
import os

os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"  # the CPU's own kernels, as the sweep's reference

import numpy as np  # noqa: E402

from common import DEVICE, emit, load, tf  # noqa: E402

load()
tf.config.set_soft_device_placement(False)
rng = np.random.default_rng(int(os.environ.get("METALPLUG_TEST_SEED", "3")))


def activations(shape, mean=3.0):
    return (mean + rng.standard_normal(shape)).astype(np.float32)


def weights(shape, fan_in):
    return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


def err(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    scale = max(float(np.max(np.abs(want))), 1e-30)
    return float(np.max(np.abs(got - want))) / scale


rows = []


def case(name, fn, *inputs, ref=None):
    """fn takes tensors and is run in float32 on the device and on the CPU;
    the reference is fn in float64 on the CPU, or ref (numpy, on float64
    arrays) where TensorFlow's CPU has no float64 kernel."""
    def on(device, dtype):
        with tf.device(device):
            args = [tf.constant(np.asarray(x, dtype)) for x in inputs]
            out = fn(*args)
            return [o.numpy() for o in (out if isinstance(out, (list, tuple)) else [out])]

    dev, cpu = on(DEVICE, np.float32), on("/CPU:0", np.float32)
    if ref is None:
        ref = on("/CPU:0", np.float64)
    else:
        ref = ref(*[np.asarray(x, np.float64) for x in inputs])
    rows.append({"case": name, "device": max(err(d, r) for d, r in zip(dev, ref)), "cpu": max(err(c, r) for c, r in zip(cpu, ref))})


# Reductions: each kind over the axis patterns models use. NHWC at a
# MobileNetV2 size (batch 16, 48x48, 64 channels).
nhwc = activations((16, 48, 48, 64))
patterns = {
    "inner": [3],  # softmax and layer-norm rows
    "outer": [0],  # a batch mean
    "all but channels": [0, 1, 2],  # batch-norm moments, bias gradients
    "spatial": [1, 2],  # global average pooling
    "middle": [1],
    "all": [0, 1, 2, 3],  # a loss
}
for kind, op in [("Sum", tf.reduce_sum), ("Mean", tf.reduce_mean), ("Max", tf.reduce_max), ("Min", tf.reduce_min),
                 ("EuclideanNorm", tf.norm)]:
    for pname, axes in patterns.items():
        if kind == "EuclideanNorm":
            case("%s over %s" % (kind, pname), lambda x, a=axes: tf.raw_ops.EuclideanNorm(input=x, axis=a), nhwc)
        else:
            case("%s over %s" % (kind, pname), lambda x, a=axes, f=op: f(x, axis=a), nhwc)
near_one = (1 + 0.01 * rng.standard_normal((64, 512))).astype(np.float32)
case("Prod over inner", lambda x: tf.reduce_prod(x, axis=1), near_one)
case("Prod over outer", lambda x: tf.reduce_prod(x, axis=0), near_one)
case("Cumsum over inner", lambda x: tf.cumsum(x, axis=1), activations((64, 2048)))
case("Cumsum over outer", lambda x: tf.cumsum(x, axis=0), activations((2048, 64)))
case("L2Loss", lambda x: tf.nn.l2_loss(x), nhwc)
logits = (4 * rng.standard_normal((256, 1000))).astype(np.float32)
case("Softmax", tf.nn.softmax, logits)
case("LogSoftmax", tf.nn.log_softmax, logits)
labels = rng.integers(0, 1000, size=(256,))
case("SparseSoftmaxCrossEntropyWithLogits", lambda x: tf.nn.sparse_softmax_cross_entropy_with_logits(labels, x), logits)
case("BiasAddGrad", lambda g: tf.raw_ops.BiasAddGrad(out_backprop=g), nhwc)
scale, offset = activations((64,), 1.0), activations((64,), 0.0)


def batch_norm(x, s, o, eps=1e-4):
    mean = x.mean(axis=(0, 1, 2))
    var = x.var(axis=(0, 1, 2))
    return [(x - mean) / np.sqrt(var + eps) * s + o, mean]


case("FusedBatchNormV3 training (y, batch mean)",
     lambda x, s, o: tf.raw_ops.FusedBatchNormV3(x=x, scale=s, offset=o, mean=tf.zeros([0]), variance=tf.zeros([0]), is_training=True)[:2],
     nhwc, scale, offset, ref=batch_norm)

# Contractions at model sizes: K past every blocking boundary.
for m, k, n in [(1, 4096, 512), (33, 2048, 512), (256, 1152, 256), (512, 512, 512)]:
    case("MatMul %dx%d x %dx%d" % (m, k, k, n), tf.matmul, activations((m, k), 1.0), weights((k, n), k))
case("MatMul transposed 256x1024 x (512x1024)^T", lambda a, b: tf.matmul(a, b, transpose_b=True), activations((256, 1024), 1.0), weights((512, 1024), 1024))
case("BatchMatMulV2 8x256x1024 x 8x1024x64", tf.matmul, activations((8, 256, 1024), 1.0), weights((8, 1024, 64), 1024))
x = activations((8, 24, 24, 256), 1.0)
w = weights((3, 3, 256, 128), 9 * 256)
conv = lambda a, b: tf.nn.conv2d(a, b, 1, "SAME")  # noqa: E731
case("Conv2D 8x24x24x256, 3x3 -> 128", conv, x, w)
dy = activations((8, 24, 24, 128), 0.0)
case("Conv2DBackpropInput", lambda f, g: tf.raw_ops.Conv2DBackpropInput(input_sizes=[8, 24, 24, 256], filter=f, out_backprop=g, strides=[1, 1, 1, 1], padding="SAME"), w, dy)
case("Conv2DBackpropFilter", lambda a, g: tf.raw_ops.Conv2DBackpropFilter(input=a, filter_sizes=[3, 3, 256, 128], out_backprop=g, strides=[1, 1, 1, 1], padding="SAME"), x, dy)
dw = weights((3, 3, 256, 1), 9)
case("DepthwiseConv2dNative 8x24x24x256", lambda a, f: tf.nn.depthwise_conv2d(a, f, [1, 1, 1, 1], "SAME"), x, dw)
case("DepthwiseConv2dNativeBackpropFilter", lambda a, g: tf.raw_ops.DepthwiseConv2dNativeBackpropFilter(input=a, filter_sizes=[3, 3, 256, 1], out_backprop=g, strides=[1, 1, 1, 1], padding="SAME"), x, activations((8, 24, 24, 256), 0.0))
case("AvgPool 3x3 stride 2", lambda a: tf.nn.avg_pool2d(a, 3, 2, "SAME"), nhwc)

emit({"cases": rows})

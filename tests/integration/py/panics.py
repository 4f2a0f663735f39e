"""Runs a workload that reaches every function the library exports to C,
catching each step's error, and reports what happened. With
METALPLUG_TEST_PANIC naming an export, that export panics on every call: the
process must live and TensorFlow must see the error."""
import ctypes
import os
import sys

from common import DEVICE, DEVICE_TYPE, emit, load, tf

out = {"steps": {}}


def step(name, fn):
    try:
        r = fn()
        out["steps"][name] = {"ok": True, "value": r}
    except Exception as e:  # noqa: BLE001: every error is the result
        out["steps"][name] = {"ok": False, "type": type(e).__name__, "error": str(e)[:2000]}


devices = []
step("load", lambda: devices.extend(load()))
out["devices"] = devices


def matmul():
    tf.config.set_soft_device_placement(False)
    with tf.device(DEVICE):
        a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        b = tf.matmul(a, a)
    return b.numpy().tolist()


def function():
    @tf.function
    def f(x):
        return tf.reduce_sum(tf.nn.relu(x * 2.0)) + 1.0

    with tf.device(DEVICE):
        return float(f(tf.ones([64, 64])).numpy())


def fill():
    with tf.device(DEVICE):
        z = tf.zeros([1000])
        o = tf.ones([300], dtype=tf.int32)
    return [float(z.numpy().sum()), int(o.numpy().sum())]


def copies():
    with tf.device(DEVICE):
        x = tf.constant([float(i) for i in range(256)])
        y = tf.identity(x)
    with tf.device("/CPU:0"):
        z = tf.identity(y) + 1.0
    return float(z.numpy().sum())


def memory():
    return tf.config.experimental.get_memory_info(DEVICE_TYPE + ":0")


def dataset():
    ds = tf.data.Dataset.range(8).map(lambda v: tf.cast(v, tf.float32)).batch(4)
    total = 0.0
    with tf.device(DEVICE):
        for b in ds:
            total += float(tf.reduce_sum(b * 3.0).numpy())
    return total


def op_counts():
    lib = os.environ["METALPLUG_TEST_LIB"]
    so = ctypes.CDLL(lib)
    so.metalplug_op_counts.restype = ctypes.c_void_p
    p = so.metalplug_op_counts()
    if not p:
        raise RuntimeError("metalplug_op_counts returned NULL")
    try:
        return len(ctypes.string_at(p))
    finally:
        ctypes.CDLL(None).free(ctypes.c_void_p(p))


# Arguments name the steps to run (all by default): a failing allocation
# costs TensorFlow's allocator ten seconds of retries.
only = set(sys.argv[1:])
for name, fn in [("matmul", matmul), ("function", function), ("fill", fill), ("copies", copies),
                 ("memory", memory), ("dataset", dataset), ("op_counts", op_counts)]:
    if (devices or name == "op_counts") and (not only or name in only):
        step(name, fn)

# The process lives, and TensorFlow still works on the CPU: in a process of
# its own when TensorFlow's context could not start (a device it could not
# create leaves this one unusable), else here.
def cpu():
    with tf.device("/CPU:0"):
        return float(tf.reduce_sum(tf.constant([1.0, 2.0, 3.0])).numpy())


try:
    out["cpu_after"] = cpu()
except Exception as e:  # noqa: BLE001
    out["steps"]["cpu"] = {"ok": False, "type": type(e).__name__, "error": str(e)[:2000]}
emit(out)
